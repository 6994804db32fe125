package wxapitest

import (
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stockguard/stockguard/internal/wxapi"
)

// Payment is a WeChat Pay payment the stand-in knows, as WeChat's shipping service would
// once it has stored it.
type Payment struct {
	TransactionID string // WeChat Pay's transaction_id
	MchID         string // the merchant paid
	OutTradeNo    string // the merchant's out_trade_no
	OpenID        string // the payer
	PaidAt        time.Time
	Refunded      bool // refunded in full: no longer shippable (10060004)
}

// OrderKey is order_key as received ("发货信息录入").
type OrderKey struct {
	OrderNumberType int    `json:"order_number_type"`
	TransactionID   string `json:"transaction_id"`
	MchID           string `json:"mchid"`
	OutTradeNo      string `json:"out_trade_no"`
}

// Contact is shipping_list[].contact as received.
type Contact struct {
	ConsignorContact string `json:"consignor_contact"`
	ReceiverContact  string `json:"receiver_contact"`
}

// Package is one shipping_list entry as received.
type Package struct {
	TrackingNo     string   `json:"tracking_no"`
	ExpressCompany string   `json:"express_company"`
	ItemDesc       string   `json:"item_desc"`
	Contact        *Contact `json:"contact"`
}

// Payer is payer as received.
type Payer struct {
	OpenID string `json:"openid"`
}

// ShippingInfo is an upload_shipping_info body as received; the documented fields only.
type ShippingInfo struct {
	OrderKey       OrderKey  `json:"order_key"`
	LogisticsType  int       `json:"logistics_type"`
	DeliveryMode   int       `json:"delivery_mode"`
	IsAllDelivered *bool     `json:"is_all_delivered"`
	ShippingList   []Package `json:"shipping_list"`
	UploadTime     string    `json:"upload_time"`
	Payer          Payer     `json:"payer"`
}

// SpecialOrder is an opspecialorder body as received ("特殊发货报备").
type SpecialOrder struct {
	OrderID string `json:"order_id"`
	Type    int    `json:"type"`
	DelayTo int64  `json:"delay_to"` // Unix seconds; 0 when absent
}

// payment is a Payment with what was shipped and declared for it.
type payment struct {
	Payment
	uploads   []ShippingInfo
	lastAt    time.Time
	finished  bool // shipped in full (unified, or split with is_all_delivered)
	reshipped bool // the one re-shipment has been used
	special   []SpecialOrder
	settled   *wxapi.Push // the settlement push, once its receipt is confirmed (ConfirmReceipt)
}

// AddPayment makes p known (replacing a payment with the same transaction_id), as
// WeChat's shipping service knows a payment some time after it was made.
func (s *Server) AddPayment(p Payment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.payments {
		if q.TransactionID == p.TransactionID {
			q.Payment = p
			return
		}
	}
	s.payments = append(s.payments, &payment{Payment: p})
}

// FailPaymentNotFound makes the next n uploads (and special-order declarations) for the
// order whose transaction_id or out_trade_no is orderID answer as if WeChat had not stored
// the payment yet: upload_shipping_info with 10060001, opspecialorder with 268546002.
func (s *Server) FailPaymentNotFound(orderID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notFound[orderID] = n
}

// Shipments returns the uploads accepted for the payment whose transaction_id or
// out_trade_no is orderID, oldest first.
func (s *Server) Shipments(orderID string) []ShippingInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.byID(orderID); p != nil {
		return append([]ShippingInfo(nil), p.uploads...)
	}
	return nil
}

// SpecialOrders returns the declarations accepted for the payment whose transaction_id or
// out_trade_no is orderID, oldest first.
func (s *Server) SpecialOrders(orderID string) []SpecialOrder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.byID(orderID); p != nil {
		return append([]SpecialOrder(nil), p.special...)
	}
	return nil
}

// OrderDetailPath is the path last set through update_order_detail_path ("" before).
func (s *Server) OrderDetailPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detailPath
}

// byID finds a payment by transaction_id or out_trade_no; s.mu is held.
func (s *Server) byID(id string) *payment {
	for _, p := range s.payments {
		if id != "" && (p.TransactionID == id || p.OutTradeNo == id) {
			return p
		}
	}
	return nil
}

// byKey finds the payment an order_key names; s.mu is held.
func (s *Server) byKey(k OrderKey) *payment {
	for _, p := range s.payments {
		if k.OrderNumberType == int(wxapi.OrderByTransactionID) && p.TransactionID == k.TransactionID ||
			k.OrderNumberType == int(wxapi.OrderByOutTradeNo) && p.MchID == k.MchID && p.OutTradeNo == k.OutTradeNo {
			return p
		}
	}
	return nil
}

// consumeNotFound reports whether an injected "not stored yet" answer is due for any of
// ids, using it up; s.mu is held.
func (s *Server) consumeNotFound(ids ...string) bool {
	for _, id := range ids {
		if id != "" && s.notFound[id] > 0 {
			s.notFound[id]--
			return true
		}
	}
	return false
}

// uploadShippingInfo serves "发货信息录入".
func (s *Server) uploadShippingInfo(body []byte) (int, string) {
	var req ShippingInfo
	if !decode(body, &req) {
		return wxapi.CodeDataFormat, "data format error"
	}
	at, code, msg := checkShipment(req)
	if code != 0 {
		return code, msg
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byKey(req.OrderKey)
	ids := []string{req.OrderKey.TransactionID, req.OrderKey.OutTradeNo}
	if p != nil {
		ids = []string{p.TransactionID, p.OutTradeNo}
	}
	switch {
	case s.consumeNotFound(ids...) || p == nil:
		return wxapi.CodePaymentNotFound, "支付单不存在"
	case p.Refunded:
		return wxapi.CodeNotShippable, "支付单处于不可发货的状态"
	case req.Payer.OpenID != p.OpenID:
		return wxapi.CodePayerMismatch, "该笔支付单不属于 openid 所指定的用户"
	}
	return p.ship(req, at)
}

// checkShipment checks an upload's shape in the order the errcode table lists the rules,
// returning the parsed upload_time.
func checkShipment(req ShippingInfo) (time.Time, int, string) {
	k := req.OrderKey
	split := req.DeliveryMode == int(wxapi.DeliverySplit)
	switch {
	case k.OrderNumberType != int(wxapi.OrderByOutTradeNo) && k.OrderNumberType != int(wxapi.OrderByTransactionID):
		return time.Time{}, wxapi.CodeInvalidOrderNumberType, "订单单号类型非法"
	case k.OrderNumberType == int(wxapi.OrderByTransactionID) && k.TransactionID == "":
		return time.Time{}, wxapi.CodeTransactionIDMissing, "transaction_id 字段不能为空"
	case k.OrderNumberType == int(wxapi.OrderByOutTradeNo) && k.MchID == "":
		return time.Time{}, wxapi.CodeMchIDMissing, "mchid 字段不能为空"
	case k.OrderNumberType == int(wxapi.OrderByOutTradeNo) && k.OutTradeNo == "":
		return time.Time{}, wxapi.CodeOutTradeNoMissing, "out_trade_no 字段不能为空"
	case req.LogisticsType < int(wxapi.LogisticsExpress) || req.LogisticsType > int(wxapi.LogisticsSelfPickup):
		return time.Time{}, wxapi.CodeInvalidLogisticsType, "物流类型有误"
	case req.DeliveryMode != int(wxapi.DeliveryUnified) && !split:
		return time.Time{}, wxapi.CodeInvalidDeliveryMode, "发货模式非法"
	}
	at, err := time.Parse(time.RFC3339Nano, req.UploadTime)
	switch {
	case err != nil:
		return at, wxapi.CodeInvalidUploadTime, "上传时间非法，请按照 RFC 3339 格式填写"
	case !split && len(req.ShippingList) != 1:
		return at, wxapi.CodeUnifiedNeedsOnePackage, "统一发货模式下，物流信息列表长度必须为 1"
	case len(req.ShippingList) > wxapi.MaxPackages:
		return at, wxapi.CodeShippingListTooLong, "物流信息列表太长"
	case split && req.LogisticsType != int(wxapi.LogisticsExpress):
		return at, wxapi.CodeSplitNeedsExpress, "非快递发货时不允许分拆发货"
	case split && req.IsAllDelivered == nil:
		return at, wxapi.CodeAllDeliveredMissing, "分拆发货模式下必须填写 is_all_delivered 字段"
	case split && len(req.ShippingList) == 0:
		return at, wxapi.CodeInvalidParam, "参数错误: shipping_list is empty"
	case req.Payer.OpenID == "":
		return at, wxapi.CodeInvalidParam, "参数错误: payer.openid is empty"
	}
	for _, p := range req.ShippingList {
		if code, msg := checkPackage(p, req.LogisticsType); code != 0 {
			return at, code, msg
		}
	}
	return at, 0, ""
}

// checkPackage checks one shipping_list entry of a shipment of logistics type lt.
func checkPackage(p Package, lt int) (int, string) {
	express := lt == int(wxapi.LogisticsExpress)
	switch n := utf8.RuneCountInString(p.ItemDesc); {
	case n == 0:
		return wxapi.CodeItemDescEmpty, "商品描述 item_desc 字段不能为空"
	case n > wxapi.MaxItemDescChars:
		return wxapi.CodeItemDescTooLong, "商品描述 item_desc 字段太长"
	case express && p.TrackingNo == "":
		return wxapi.CodeTrackingNoMissing, "物流单号不能为空"
	case express && p.ExpressCompany == "":
		return wxapi.CodeExpressCompanyMissing, "物流公司编码不能为空"
	case len(p.TrackingNo) > wxapi.MaxTrackingNoBytes:
		return wxapi.CodeTrackingNoTooLong, "物流单号太长"
	case len(p.ExpressCompany) > wxapi.MaxExpressCompanyBytes:
		return wxapi.CodeExpressCompanyTooLong, "物流公司编码太长"
	}
	var c Contact
	if p.Contact != nil {
		c = *p.Contact
	}
	switch {
	case p.ExpressCompany == wxapi.ExpressCompanySF && c.ConsignorContact == "" && c.ReceiverContact == "":
		return wxapi.CodeInvalidParam, "参数错误: contact is required for SF"
	case c.ConsignorContact != "" && !wxapi.MaskedContact(c.ConsignorContact),
		c.ReceiverContact != "" && !wxapi.MaskedContact(c.ReceiverContact):
		return wxapi.CodeInvalidParam, "参数错误: contact must be masked, its last 4 digits unmasked"
	}
	return 0, ""
}

// ship applies an accepted upload to p: the same shipment again changes nothing (10060023);
// uploads must come in upload_time order; an upload to a payment shipped in full is the
// one re-shipment ("注意事项" 6), which must itself complete the shipment.
func (p *payment) ship(req ShippingInfo, at time.Time) (int, string) {
	if n := len(p.uploads); n > 0 && sameShipment(p.uploads[n-1], req) {
		return wxapi.CodeShippingNotUpdated, "发货信息未更新"
	}
	if !p.lastAt.IsZero() && !at.After(p.lastAt) {
		return wxapi.CodeInvalidParam, "参数错误: upload_time must be later than the previous upload's"
	}
	complete := req.DeliveryMode == int(wxapi.DeliveryUnified) || *req.IsAllDelivered
	if p.finished {
		switch {
		case p.reshipped:
			return wxapi.CodeReshipUsed, "支付单已使用重新发货机会"
		case !complete:
			return wxapi.CodeShippingFinished, "支付单已完成发货，无法继续发货"
		}
		p.reshipped = true
	}
	p.finished = p.finished || complete
	p.uploads = append(p.uploads, req)
	p.lastAt = at
	return 0, ""
}

// sameShipment reports whether a and b carry the same shipment, upload_time aside.
func sameShipment(a, b ShippingInfo) bool {
	a.UploadTime, b.UploadTime = "", ""
	return reflect.DeepEqual(a, b)
}

// opSpecialOrder serves "特殊发货报备".
func (s *Server) opSpecialOrder(body []byte) (int, string) {
	var req SpecialOrder
	if !decode(body, &req) || req.OrderID == "" {
		return wxapi.CodeDataFormat, "data format error"
	}
	if req.Type != int(wxapi.SpecialOrderPresale) && req.Type != int(wxapi.SpecialOrderTest) {
		return wxapi.CodeInvalidSpecialType, "type非法"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID(req.OrderID)
	if p == nil || s.consumeNotFound(p.TransactionID, p.OutTradeNo) || p.Refunded || p.finished {
		return wxapi.CodeSpecialOrderNotFound, "账户不存在这个待发货单号"
	}
	if req.Type == int(wxapi.SpecialOrderPresale) {
		delay := time.Unix(req.DelayTo, 0)
		if req.DelayTo <= 0 || delay.Before(p.PaidAt.Add(wxapi.MinPresaleDelay)) || delay.After(p.PaidAt.Add(wxapi.MaxPresaleDelay)) {
			return wxapi.CodeInvalidDelayTo, "delay_to非法"
		}
	}
	p.special = append(p.special, req)
	return 0, ""
}

// updateOrderDetailPath serves "小程序购物订单" 3.1 配置订单详情路径.
func (s *Server) updateOrderDetailPath(body []byte) (int, string) {
	var req struct {
		Path string `json:"path"`
	}
	if !decode(body, &req) {
		return wxapi.CodeDataFormat, "data format error"
	}
	if !strings.Contains(req.Path, wxapi.DetailPathPlaceholder) || !s.pageOK(req.Path) {
		return wxapi.CodeInvalidDetailPath, "无效的路径"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detailPath = req.Path
	return 0, ""
}
