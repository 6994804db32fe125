package wxapi

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stockguard/stockguard/internal/wechatpay"
)

// OrderNumberType says how an OrderKey names the payment ("发货信息录入": order_key.order_number_type).
type OrderNumberType int

const (
	// OrderByOutTradeNo names the payment by mchid and out_trade_no (枚举值1).
	OrderByOutTradeNo OrderNumberType = 1
	// OrderByTransactionID names it by WeChat Pay's transaction_id (枚举值2).
	OrderByTransactionID OrderNumberType = 2
)

// LogisticsType is how the goods travel ("发货信息录入": logistics_type).
type LogisticsType int

const (
	LogisticsExpress    LogisticsType = 1 // 实体物流配送: an express company, with tracking number
	LogisticsSameCity   LogisticsType = 2 // 同城配送: same-city delivery
	LogisticsVirtual    LogisticsType = 3 // 虚拟商品: no physical delivery
	LogisticsSelfPickup LogisticsType = 4 // 用户自提: the buyer collects
)

// DeliveryMode is whether an order ships as one parcel or several ("发货信息录入":
// delivery_mode).
type DeliveryMode int

const (
	DeliveryUnified DeliveryMode = 1 // UNIFIED_DELIVERY: one shipping_list entry
	DeliverySplit   DeliveryMode = 2 // SPLIT_DELIVERY: 1..MaxPackages entries, express only
)

// Limits of "发货信息录入" (请求参数 and 注意事项 5: "一笔支付单最多分拆成 15 个包裹").
const (
	MaxPackages            = 15   // shipping_list entries per payment (多重性 [1, 15])
	MaxItemDescChars       = 120  // item_desc, characters ("限120个字以内")
	MaxTrackingNoBytes     = 128  // tracking_no (字符字节限制 [1, 128])
	MaxExpressCompanyBytes = 128  // express_company (字符字节限制 [1, 128])
	MaxContactBytes        = 1024 // consignor_contact / receiver_contact (值限制 0..1024)
	MaxOpenIDBytes         = 128  // payer.openid (字符字节限制 [1, 128]); also touser
	MaxTransactionIDLen    = 32   // transaction_id (WeChat Pay "查询订单": string(32))
)

// ExpressCompanySF is the delivery id of 顺丰, whose parcels need a contact ("发货信息录入":
// contact "当发货的物流公司为顺丰时，联系方式为必填").
const ExpressCompanySF = "SF"

// UploadTimeLayout formats upload_time: RFC 3339 with milliseconds, like the documented
// example 2022-12-15T13:29:35.120+08:00.
const UploadTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// DetailPathPlaceholder must appear in the order detail path; WeChat replaces it with the
// order's out_trade_no ("小程序购物订单" 3.1: "path必须包含字符串“${商品订单号}”").
const DetailPathPlaceholder = "${商品订单号}"

// beijing is the +08:00 offset of the documented upload_time example.
var beijing = time.FixedZone("CST", 8*60*60)

// OrderKey names the payment a shipment belongs to ("发货信息录入": order_key). With
// OrderByOutTradeNo, MchID and OutTradeNo are sent; with OrderByTransactionID,
// TransactionID is.
type OrderKey struct {
	Type          OrderNumberType
	TransactionID string // WeChat Pay's transaction_id: 1..32 ASCII letters and digits
	MchID         string // the merchant id the payment was made to (WeChat Pay mchid): 1..32 digits
	OutTradeNo    string // the order's out_trade_no (see wechatpay.CheckOutTradeNo)
}

// Package is one parcel ("发货信息录入": shipping_list[]).
type Package struct {
	// TrackingNo is tracking_no, 1..MaxTrackingNoBytes bytes; required for
	// LogisticsExpress, optional (and then within the same limit) otherwise.
	TrackingNo string
	// ExpressCompany is express_company, the delivery id of the express company from
	// get_delivery_list (e.g. "SF", "YTO"), 1..MaxExpressCompanyBytes bytes; required for
	// LogisticsExpress.
	ExpressCompany string
	// ItemDesc is item_desc, what the parcel holds (e.g. "微信红包抱枕*1个"): 1..120 characters
	// without control characters; required.
	ItemDesc string
	// ConsignorContact and ReceiverContact are contact.consignor_contact and
	// contact.receiver_contact: masked phone numbers whose last 4 digits are not masked
	// (e.g. "189****1234", "021-****1234"), at most MaxContactBytes. One of them is required
	// when ExpressCompany is ExpressCompanySF; both may be empty otherwise.
	ConsignorContact string
	ReceiverContact  string
}

// Shipment is one upload_shipping_info request ("发货信息录入").
type Shipment struct {
	Order     OrderKey
	Logistics LogisticsType
	Mode      DeliveryMode
	// AllDelivered is is_all_delivered, sent in split mode only (where it is required):
	// true when this upload completes the order; WeChat tells the buyer only then.
	AllDelivered bool
	Packages     []Package // DeliveryUnified: exactly 1; DeliverySplit: 1..MaxPackages, all the order's parcels so far
	// UploadTime is upload_time, sent as RFC 3339 at +08:00 with milliseconds; it orders
	// uploads: an update must be later than the upload it replaces (注意事项 4). Required.
	UploadTime  time.Time
	PayerOpenID string // payer.openid: the buyer who paid, 1..MaxOpenIDBytes printable ASCII
}

// Wire forms ("发货信息录入" 请求参数), as sent.
type (
	orderKeyWire struct {
		OrderNumberType OrderNumberType `json:"order_number_type"`
		TransactionID   string          `json:"transaction_id,omitempty"`
		MchID           string          `json:"mchid,omitempty"`
		OutTradeNo      string          `json:"out_trade_no,omitempty"`
	}
	contactWire struct {
		ConsignorContact string `json:"consignor_contact,omitempty"`
		ReceiverContact  string `json:"receiver_contact,omitempty"`
	}
	packageWire struct {
		TrackingNo     string       `json:"tracking_no,omitempty"`
		ExpressCompany string       `json:"express_company,omitempty"`
		ItemDesc       string       `json:"item_desc"`
		Contact        *contactWire `json:"contact,omitempty"`
	}
	shipmentWire struct {
		OrderKey       orderKeyWire  `json:"order_key"`
		LogisticsType  LogisticsType `json:"logistics_type"`
		DeliveryMode   DeliveryMode  `json:"delivery_mode"`
		IsAllDelivered *bool         `json:"is_all_delivered,omitempty"`
		ShippingList   []packageWire `json:"shipping_list"`
		UploadTime     string        `json:"upload_time"`
		Payer          struct {
			OpenID string `json:"openid"`
		} `json:"payer"`
	}
)

// UploadShippingInfo tells WeChat how a paid order ships ("发货信息录入": POST
// /wxa/sec/order/upload_shipping_info). Until it is uploaded and the buyer confirms
// receipt, WeChat holds the payment. An upload to an order already shipped is a
// re-shipment, allowed once per payment (注意事项 6).
//
// Errors: ErrInvalidArgument (nothing sent; see Shipment, Package and OrderKey for the
// rules); ErrUnavailable (retry later), including *Error 10060001 right after the payment;
// ErrAlreadyApplied (*Error 10060023: WeChat already holds this shipment); other *Error
// values are final, e.g. CodeShippingFinished, CodeReshipUsed, CodeNotShippable,
// CodePayerMismatch.
func (c *Client) UploadShippingInfo(ctx context.Context, s Shipment) error {
	w, err := s.wire()
	if err != nil {
		return err
	}
	return c.call(ctx, OpUploadShippingInfo, PathUploadShippingInfo, w)
}

// wire validates s and returns the request body; every error wraps ErrInvalidArgument.
func (s Shipment) wire() (*shipmentWire, error) {
	const op = OpUploadShippingInfo
	w := &shipmentWire{LogisticsType: s.Logistics, DeliveryMode: s.Mode}
	var err error
	if w.OrderKey, err = s.Order.wire(op); err != nil {
		return nil, err
	}
	switch {
	case s.Logistics < LogisticsExpress || s.Logistics > LogisticsSelfPickup:
		return nil, invalid(op, "logistics_type %d is not 1..4", s.Logistics)
	case s.Mode != DeliveryUnified && s.Mode != DeliverySplit:
		return nil, invalid(op, "delivery_mode %d is not 1 or 2", s.Mode)
	case s.Mode == DeliveryUnified && len(s.Packages) != 1:
		return nil, invalid(op, "unified delivery takes exactly 1 package, got %d", len(s.Packages))
	case s.Mode == DeliverySplit && s.Logistics != LogisticsExpress:
		return nil, invalid(op, "split delivery is for express shipments only")
	case len(s.Packages) == 0 || len(s.Packages) > MaxPackages:
		return nil, invalid(op, "shipping_list takes 1..%d packages, got %d", MaxPackages, len(s.Packages))
	case s.UploadTime.IsZero():
		return nil, invalid(op, "upload_time is required")
	case s.PayerOpenID == "" || len(s.PayerOpenID) > MaxOpenIDBytes || !printable(s.PayerOpenID):
		return nil, invalid(op, "payer.openid must be 1..%d printable ASCII characters", MaxOpenIDBytes)
	}
	if s.Mode == DeliverySplit {
		all := s.AllDelivered
		w.IsAllDelivered = &all
	}
	for i, p := range s.Packages {
		pw, err := p.wire(s.Logistics)
		if err != nil {
			return nil, invalid(op, "shipping_list[%d]: %v", i, err)
		}
		w.ShippingList = append(w.ShippingList, pw)
	}
	w.UploadTime = s.UploadTime.In(beijing).Format(UploadTimeLayout)
	w.Payer.OpenID = s.PayerOpenID
	return w, nil
}

// wire validates k for op.
func (k OrderKey) wire(op string) (orderKeyWire, error) {
	w := orderKeyWire{OrderNumberType: k.Type}
	switch k.Type {
	case OrderByTransactionID:
		if k.TransactionID == "" || len(k.TransactionID) > MaxTransactionIDLen || !alnum(k.TransactionID) {
			return w, invalid(op, "transaction_id must be 1..%d ASCII letters and digits", MaxTransactionIDLen)
		}
		w.TransactionID = k.TransactionID
	case OrderByOutTradeNo:
		if k.MchID == "" || len(k.MchID) > 32 || strings.Trim(k.MchID, "0123456789") != "" {
			return w, invalid(op, "mchid must be 1..32 digits")
		}
		if err := wechatpay.CheckOutTradeNo(k.OutTradeNo); err != nil {
			return w, invalid(op, "%v", err)
		}
		w.MchID, w.OutTradeNo = k.MchID, k.OutTradeNo
	default:
		return w, invalid(op, "order_number_type %d is not 1 or 2", k.Type)
	}
	return w, nil
}

// wire validates p for a shipment of logistics type lt; errors are plain (the caller wraps).
func (p Package) wire(lt LogisticsType) (packageWire, error) {
	w := packageWire{TrackingNo: p.TrackingNo, ExpressCompany: p.ExpressCompany, ItemDesc: p.ItemDesc}
	switch n := utf8.RuneCountInString(p.ItemDesc); {
	case n == 0 || n > MaxItemDescChars || !text(p.ItemDesc):
		return w, fmt.Errorf("item_desc must be 1..%d characters without control characters", MaxItemDescChars)
	case lt == LogisticsExpress && (p.TrackingNo == "" || p.ExpressCompany == ""):
		return w, fmt.Errorf("express shipments need tracking_no and express_company")
	case len(p.TrackingNo) > MaxTrackingNoBytes || (p.TrackingNo != "" && !printable(p.TrackingNo)):
		return w, fmt.Errorf("tracking_no must be at most %d printable ASCII characters", MaxTrackingNoBytes)
	case len(p.ExpressCompany) > MaxExpressCompanyBytes || (p.ExpressCompany != "" && !printable(p.ExpressCompany)):
		return w, fmt.Errorf("express_company must be at most %d printable ASCII characters", MaxExpressCompanyBytes)
	case p.ExpressCompany == ExpressCompanySF && p.ConsignorContact == "" && p.ReceiverContact == "":
		return w, fmt.Errorf("SF (顺丰) parcels need consignor_contact or receiver_contact")
	}
	for _, c := range []string{p.ConsignorContact, p.ReceiverContact} {
		if c != "" && !MaskedContact(c) {
			return w, fmt.Errorf("contacts must be masked phone numbers ending in 4 unmasked digits, at most %d bytes", MaxContactBytes)
		}
	}
	if p.ConsignorContact != "" || p.ReceiverContact != "" {
		w.Contact = &contactWire{ConsignorContact: p.ConsignorContact, ReceiverContact: p.ReceiverContact}
	}
	return w, nil
}

// MaskedContact reports whether s is a contact as "发货信息录入" wants it: at most
// MaxContactBytes of printable ASCII, masked with at least one '*', with at least 4 digits
// after the last '*' ("采用掩码传输，最后4位数字不能打掩码"; the documented examples
// "189****1234", "021-****1234", "****1234", "0**2-******23-10", "****123-8008" all are).
func MaskedContact(s string) bool {
	star := strings.LastIndexByte(s, '*')
	if star < 0 || len(s) > MaxContactBytes || !printable(s) {
		return false
	}
	digits := 0
	for _, r := range s[star+1:] {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return digits >= 4
}

// SpecialOrderType is the kind of a special-order declaration ("特殊发货报备": type).
type SpecialOrderType int

const (
	SpecialOrderPresale SpecialOrderType = 1 // 预售商品订单: ships later than 15 days after payment
	SpecialOrderTest    SpecialOrderType = 2 // 测试订单: needs no shipment
)

// Presale window of "特殊发货报备" (注意事项): "预售商品订单预计发货时间必须在订单支付时间的15天后，
// 不得超过330天"; an order shipping later than 15 days after payment must be declared
// ("发货时效超过15天的订单需报备为预售商品订单").
const (
	MinPresaleDelay = 15 * 24 * time.Hour
	MaxPresaleDelay = 330 * 24 * time.Hour
)

// SpecialOrder is one opspecialorder declaration ("特殊发货报备").
type SpecialOrder struct {
	// OrderID is order_id: the payment's transaction_id or out_trade_no (either passes
	// wechatpay.CheckOutTradeNo: 6..32 of [0-9A-Za-z_-|*]).
	OrderID string
	Type    SpecialOrderType
	// DelayTo is delay_to, the expected ship time, sent as Unix seconds: required for a
	// presale, omitted for a test order when zero.
	DelayTo time.Time
	// PaidAt, when set, is when the order was paid; it is not sent: a presale's DelayTo is
	// then checked against the window MinPresaleDelay..MaxPresaleDelay after it before
	// anything is sent.
	PaidAt time.Time
}

type specialOrderWire struct {
	OrderID string           `json:"order_id"`
	Type    SpecialOrderType `json:"type"`
	DelayTo int64            `json:"delay_to,omitempty"`
}

// DeclareSpecialOrder declares an unshipped order as a presale with its expected ship time,
// or as a test order ("特殊发货报备": POST /wxa/sec/order/opspecialorder); WeChat tells the
// buyer a presale's ship time. Errors: ErrInvalidArgument (nothing sent); ErrUnavailable
// (retry later), including *Error 268546002 (no such order awaiting shipment, which right
// after a payment may only mean WeChat has not stored it yet); *Error 268546000 or 268546001
// (final: type or delay_to refused).
func (c *Client) DeclareSpecialOrder(ctx context.Context, o SpecialOrder) error {
	const op = OpSpecialOrder
	// transaction_ids (28..32 digits) pass the out_trade_no rule too.
	if err := wechatpay.CheckOutTradeNo(o.OrderID); err != nil {
		return invalid(op, "order_id: %v", err)
	}
	w := specialOrderWire{OrderID: o.OrderID, Type: o.Type}
	switch o.Type {
	case SpecialOrderPresale:
		if o.DelayTo.IsZero() {
			return invalid(op, "a presale needs delay_to")
		}
		if !o.PaidAt.IsZero() && (o.DelayTo.Before(o.PaidAt.Add(MinPresaleDelay)) || o.DelayTo.After(o.PaidAt.Add(MaxPresaleDelay))) {
			return invalid(op, "delay_to must be 15 to 330 days after the payment")
		}
	case SpecialOrderTest:
	default:
		return invalid(op, "type %d is not 1 or 2", o.Type)
	}
	if !o.DelayTo.IsZero() {
		w.DelayTo = o.DelayTo.Unix()
	}
	return c.call(ctx, op, PathOpSpecialOrder, w)
}

// UpdateOrderDetailPath sets the mini-program page WeChat's order center ("我-订单与卡包-
// 小程序购物订单") opens for an order ("小程序购物订单" 3.1 配置订单详情路径: POST
// /wxa/sec/order/update_order_detail_path, body {"path"}). path must be a page of the
// mini-program containing DetailPathPlaceholder, which WeChat replaces with the order's
// out_trade_no, e.g. "pages/order/detail?id=${商品订单号}"; the app must have signed the
// order center agreement. Errors: ErrInvalidArgument (nothing sent); ErrUnavailable;
// *Error CodeInvalidDetailPath (final).
func (c *Client) UpdateOrderDetailPath(ctx context.Context, path string) error {
	const op = OpUpdateOrderDetailPath
	if !strings.Contains(path, DetailPathPlaceholder) || !text(path) || strings.ContainsAny(path, " ") {
		return invalid(op, "path must contain %s, without spaces or control characters", DetailPathPlaceholder)
	}
	return c.call(ctx, op, PathUpdateOrderDetailPath, struct {
		Path string `json:"path"`
	}{path})
}

// alnum reports whether s is ASCII letters and digits only.
func alnum(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) < 0
}
