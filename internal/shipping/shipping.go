// Package shipping tells WeChat how paid orders are delivered (小程序发货信息管理服务):
// the merchant route POST /admin/orders/{orderId}/shipments records a shipment on its
// order (inventory.Order.Ship, through the store's one transition path) and queues its
// upload on the WeChat queue (package wxqueue); the wechat function uploads it with
// upload_shipping_info ("发货信息录入", package wxapi) and records WeChat's answer
// (inventory.Order.ShippingResult), retrying with backoff what may succeed later —
// in particular errcode 10060001 支付单不存在, which WeChat answers until it has stored
// a payment made moments before. docs/design.md, "Shipping", says why it is built so.
//
// Pages relied on (WeChat Open Documentation and its developer community):
//   - "发货信息录入" (upload_shipping_info: request fields, errcodes, 注意事项 5 "一笔支付单最多分拆成
//     15 个包裹"): https://developers.weixin.qq.com/miniprogram/dev/platform-capabilities/business-capabilities/order-shipping/order-shipping.html
//     and https://developers.weixin.qq.com/miniprogram/dev/server/API/order_shipping/api_uploadshippinginfo.html;
//   - errcode 10060001 "支付单不存在" right after a payment, and WeChat's staff's advice to
//     retry a minute later ("支付后订单需要入库，如果查不到可以等待1分钟后再试"):
//     https://developers.weixin.qq.com/community/develop/doc/000228a29bcd50501001954d06b000;
//   - "特殊发货报备" (opspecialorder, the presale window of 15 to 330 days after payment):
//     https://developers.weixin.qq.com/miniprogram/dev/server/API/order_shipping/api_opspecialorder.html.
package shipping

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Route keys of the merchant's shipping routes (AWS_IAM).
const (
	RouteShip    = "POST /admin/orders/{orderId}/shipments" // a shipment
	RoutePresale = "POST /admin/orders/{orderId}/presale"   // a presale declaration
)

// MaxBodyBytes bounds a shipment request's body (docs/contract.md).
const MaxBodyBytes = 8 << 10

// MetricFunction is the Function dimension of the upload metrics, whichever function
// emits them: the one the ShippingUploadFailedAlarm watches.
const MetricFunction = "wechat"

// Orders is what shipping needs of the store (dynamo.Store).
type Orders interface {
	Lookup(ctx context.Context, id string) (*inventory.Order, error)
	Ship(ctx context.Context, id string, s inventory.Shipment) (*inventory.Order, bool, error)
	RecordShipping(ctx context.Context, id string, n int, errText string, final bool) (*inventory.Order, error)
	DeclarePresale(ctx context.Context, id string, shipAt time.Time) (*inventory.Order, bool, error)
	RecordPresale(ctx context.Context, id, errText string, final bool) (*inventory.Order, error)
}

// Sender queues work for the wechat function (*wxqueue.Queue).
type Sender interface {
	Send(ctx context.Context, m wxqueue.Message, delay time.Duration) error
}

// WeChat is the part of WeChat's server API uploads use (*wxapi.Client).
type WeChat interface {
	UploadShippingInfo(ctx context.Context, s wxapi.Shipment) error
	DeclareSpecialOrder(ctx context.Context, o wxapi.SpecialOrder) error
}

// Routes serves RouteShip.
type Routes struct {
	orders Orders
	queue  Sender
	log    *slog.Logger
}

// NewRoutes returns the shipment route over orders, queueing uploads on queue (nil:
// shipments are recorded but answered 503, their upload not queued).
func NewRoutes(orders Orders, queue Sender, log *slog.Logger) *Routes {
	return &Routes{orders: orders, queue: queue, log: log}
}

// shipExample is the body error messages show. It has no contact: a message reaches the
// request's log line, and a log holds nothing that reads as a phone number, masked
// or not.
const shipExample = `{"shipmentId":"parcel-1","type":"express","carrier":"SF","tracking":"SF1234567890","items":[{"skuId":"cup-01","qty":1}]}`

// Ship serves RouteShip (docs/contract.md, "POST /admin/orders/{orderId}/shipments"):
// 202 with the order's shipment and shipping once recorded and its upload queued;
// the same shipmentId with the same body again: the same answer, nothing recorded
// or uploaded twice; the id with another body: 422 IDEMPOTENCY_KEY_REUSED; an order
// not PAID (unpaid, released, refunding, refunded) or shipped whole already: 409
// ORDER_NOT_SHIPPABLE with nothing recorded or sent. When the upload cannot be queued
// the shipment stays recorded and the answer is 503 BUSY: sending the same request
// again queues it.
func (r *Routes) Ship(ctx context.Context, req events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	id := req.PathParameters["orderId"]
	s, err := decodeShipment(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	o, _, err := r.orders.Ship(ctx, id, s)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if o.Shipping.Status == inventory.ShippingQueued {
		if r.queue == nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("no WeChat queue to upload %s: %w", o.ID, inventory.ErrBusy)
		}
		if err := r.queue.Send(ctx, wxqueue.Message{Kind: wxqueue.KindUpload, OrderID: o.ID}, 0); err != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "shipment recorded but its upload not queued", slog.String("orderId", o.ID), slog.String("error", err.Error()))
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("queue upload of %s: %w", o.ID, inventory.ErrBusy)
		}
	}
	var recorded httpapi.ShipmentJSON
	for _, v := range httpapi.ShipmentsView(o.Shipping) {
		if v.ShipmentID == s.ID {
			recorded = v
		}
	}
	return httpapi.JSON(http.StatusAccepted, shipmentAnswer{OrderID: o.ID, Shipment: recorded, Shipping: httpapi.ShippingView(o.Shipping)}), nil
}

// Presale serves RoutePresale (docs/contract.md, "POST /admin/orders/{orderId}/presale"):
// body {"shipAt": RFC 3339}, 15 to 330 days after the payment; 202 with the order's
// presale once recorded and its declaration to WeChat (opspecialorder) queued; the same
// ship time again changes nothing; an order not PAID or already (partly) shipped: 409
// ORDER_NOT_SHIPPABLE, nothing sent.
func (r *Routes) Presale(ctx context.Context, req events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	var b struct {
		ShipAt *time.Time `json:"shipAt"`
	}
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, `{"shipAt":"2026-12-20T10:00:00Z"}`, "shipAt"); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if b.ShipAt == nil {
		return events.APIGatewayV2HTTPResponse{}, inventory.InvalidError("shipAt is required: an RFC 3339 time 15 to 330 days after the payment")
	}
	o, _, err := r.orders.DeclarePresale(ctx, req.PathParameters["orderId"], *b.ShipAt)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if o.Presale.Status == inventory.ShippingQueued {
		if r.queue == nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("no WeChat queue to declare %s: %w", o.ID, inventory.ErrBusy)
		}
		if err := r.queue.Send(ctx, wxqueue.Message{Kind: wxqueue.KindPresale, OrderID: o.ID}, 0); err != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "presale recorded but its declaration not queued", slog.String("orderId", o.ID), slog.String("error", err.Error()))
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("queue presale of %s: %w", o.ID, inventory.ErrBusy)
		}
	}
	return httpapi.JSON(http.StatusAccepted, presaleAnswer{OrderID: o.ID, Presale: httpapi.PresaleView(o.Presale)}), nil
}

// presaleAnswer is RoutePresale's 202 body.
type presaleAnswer struct {
	OrderID string               `json:"orderId"`
	Presale *httpapi.PresaleJSON `json:"presale"`
}

// shipmentAnswer is RouteShip's 202 body.
type shipmentAnswer struct {
	OrderID  string                `json:"orderId"`
	Shipment httpapi.ShipmentJSON  `json:"shipment"` // with its own uploadedAt: absent until WeChat accepted it
	Shipping *httpapi.ShippingJSON `json:"shipping"` // the order's: its uploadedAt is the last upload's, of any shipment
}

// decodeShipment parses a shipment body strictly: shipmentId and type required,
// carrier, tracking, contact and items optional, no other field (items' objects
// exactly skuId and qty), then inventory.Shipment.Check.
func decodeShipment(req events.APIGatewayV2HTTPRequest) (inventory.Shipment, error) {
	var b struct {
		ID *string `json:"shipmentId"`
		T  *string `json:"type"`
	}
	fields, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, shipExample, "shipmentId", "type", "carrier", "tracking", "contact", "items")
	if err != nil {
		return inventory.Shipment{}, err
	}
	if b.ID == nil || b.T == nil {
		return inventory.Shipment{}, inventory.InvalidError("shipmentId and type are required; example: %s", shipExample)
	}
	if raw, ok := fields["items"]; ok && string(raw) != "null" {
		if _, err := httpapi.DecodeLines(raw, "items"); err != nil {
			return inventory.Shipment{}, err // names the item and field at fault
		}
	}
	body, _ := httpapi.Body(req, MaxBodyBytes)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var s inventory.Shipment
	if err := dec.Decode(&s); err != nil {
		return inventory.Shipment{}, inventory.InvalidError("body must be a JSON object like %s", shipExample)
	}
	if raw, ok := fields["items"]; ok && (string(raw) == "null" || string(raw) == "[]") {
		return inventory.Shipment{}, inventory.InvalidError("items, when given, lists at least one {\"skuId\",\"qty\"}")
	}
	return s, s.Check()
}

// Uploader uploads orders' shipping information to WeChat (the wechat function's
// KindUpload work).
type Uploader struct {
	orders Orders
	wechat WeChat
	log    *slog.Logger
	now    func() time.Time
}

// NewUploader returns an Uploader over orders calling wechat, logging (and counting
// metrics) on log, on the clock now (nil: time.Now).
func NewUploader(orders Orders, wechat WeChat, log *slog.Logger, now func() time.Time) *Uploader {
	if now == nil {
		now = time.Now
	}
	return &Uploader{orders: orders, wechat: wechat, log: log, now: now}
}

// Upload uploads the shipments of the order m names, when its shipping is QUEUED and
// it is still PAID (else nothing: a duplicate message, a refund that cancelled it),
// and records WeChat's answer: accepted (also errcode 10060023, WeChat holding the
// same already) → UPLOADED; an answer worth retrying (wxapi.Retryable: 10060001
// 支付单不存在 right after the payment, busy, rate limits, WeChat unreachable) → the
// error shown on the order and returned, so the message comes back with backoff; any
// other refusal → FAILED with the errcode, not retried. Every failure counts in
// ShippingUploadFailed. Errors: the retryable ones, and the store's.
func (u *Uploader) Upload(ctx context.Context, m wxqueue.Message) error {
	o, err := u.orders.Lookup(ctx, m.OrderID)
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		u.log.LogAttrs(ctx, slog.LevelError, "upload message for no order; dropped", slog.String("orderId", m.OrderID))
		return nil
	case err != nil:
		return err
	case o.Status != inventory.StatusPaid || o.Shipping == nil || o.Shipping.Status != inventory.ShippingQueued:
		return nil
	}
	n := len(o.Shipping.Shipments)
	err = u.wechat.UploadShippingInfo(ctx, Upload(o, u.now()))
	switch {
	case err == nil || errors.Is(err, wxapi.ErrAlreadyApplied):
		metric.Emit(ctx, u.log, MetricFunction, metric.ShippingUploaded.Of(1))
		_, err = u.orders.RecordShipping(ctx, o.ID, n, "", false)
		return err
	case wxapi.Retryable(err):
		metric.Emit(ctx, u.log, MetricFunction, metric.ShippingUploadFailed.Of(1))
		if _, rerr := u.orders.RecordShipping(ctx, o.ID, n, describe(err)+"; retrying", false); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	metric.Emit(ctx, u.log, MetricFunction, metric.ShippingUploadFailed.Of(1))
	u.log.LogAttrs(ctx, slog.LevelError, "WeChat refused the shipping upload", slog.String("orderId", o.ID), slog.String("error", err.Error()))
	_, err = u.orders.RecordShipping(ctx, o.ID, n, describe(err), true)
	return err
}

// Declare declares the order m names a presale to WeChat (opspecialorder, its
// transaction_id, type presale, delay_to its ship time) when its presale is QUEUED and
// it is still PAID, and records the answer: accepted → DECLARED; retryable (including
// 268546002, which WeChat answers until it has stored a new payment) → the error shown
// and returned for a retry with backoff; any other → FAILED. Failures count in
// ShippingUploadFailed (one alarm for WeChat's shipping APIs).
func (u *Uploader) Declare(ctx context.Context, m wxqueue.Message) error {
	o, err := u.orders.Lookup(ctx, m.OrderID)
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		return nil
	case err != nil:
		return err
	case o.Status != inventory.StatusPaid || o.Presale == nil || o.Presale.Status != inventory.ShippingQueued:
		return nil
	}
	err = u.wechat.DeclareSpecialOrder(ctx, wxapi.SpecialOrder{OrderID: o.TransactionID, Type: wxapi.SpecialOrderPresale, DelayTo: o.Presale.ShipAt, PaidAt: *o.PaidAt})
	if err == nil {
		_, err = u.orders.RecordPresale(ctx, o.ID, "", false)
		return err
	}
	metric.Emit(ctx, u.log, MetricFunction, metric.ShippingUploadFailed.Of(1))
	if wxapi.Retryable(err) {
		if _, rerr := u.orders.RecordPresale(ctx, o.ID, describe(err)+"; retrying", false); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	u.log.LogAttrs(ctx, slog.LevelError, "WeChat refused the presale declaration", slog.String("orderId", o.ID), slog.String("error", err.Error()))
	_, err = u.orders.RecordPresale(ctx, o.ID, describe(err), true)
	return err
}

// describe is the text an order shows for a failed upload: written here, naming
// WeChat's errcode, never WeChat's errmsg.
func describe(err error) string {
	var we *wxapi.Error
	switch {
	case errors.As(err, &we) && we.Code == wxapi.CodePaymentNotFound:
		return "WeChat has not stored the payment yet (errcode 10060001)"
	case errors.As(err, &we):
		return "WeChat refused it (errcode " + strconv.Itoa(we.Code) + ")"
	case errors.Is(err, wxapi.ErrInvalidArgument):
		return "it breaks WeChat's rules for the request"
	}
	return "WeChat could not be reached"
}

// logistics maps the contract's types to WeChat's logistics_type.
var logistics = map[inventory.Logistics]wxapi.LogisticsType{
	inventory.LogisticsExpress: wxapi.LogisticsExpress, inventory.LogisticsSameCity: wxapi.LogisticsSameCity,
	inventory.LogisticsVirtual: wxapi.LogisticsVirtual, inventory.LogisticsSelfPickup: wxapi.LogisticsSelfPickup,
}

// Upload is the upload_shipping_info request for every shipment of o at now: the
// payment named by its transaction_id; one shipment shipping the whole order is a
// unified delivery, anything else a split delivery listing every parcel so far,
// is_all_delivered once nothing is left unshipped ("发货信息录入": delivery_mode,
// is_all_delivered). The payer is the order's user id: the buyer's openid when the
// login tokens' sub is the openid (template.yaml OpenIdClaim, default sub).
func Upload(o *inventory.Order, now time.Time) wxapi.Shipment {
	shipments := o.Shipping.Shipments
	complete := len(o.Unshipped()) == 0
	u := wxapi.Shipment{
		Order:     wxapi.OrderKey{Type: wxapi.OrderByTransactionID, TransactionID: o.TransactionID},
		Logistics: logistics[shipments[0].Logistics], Mode: wxapi.DeliveryUnified,
		UploadTime: now, PayerOpenID: o.UserID,
	}
	if len(shipments) > 1 || !complete {
		u.Mode, u.AllDelivered = wxapi.DeliverySplit, complete
	}
	for _, s := range shipments {
		u.Packages = append(u.Packages, wxapi.Package{TrackingNo: s.TrackingNo, ExpressCompany: s.Carrier, ItemDesc: itemDesc(s.Items), ConsignorContact: s.Contact, ReceiverContact: s.ReceiverContact})
	}
	return u
}

// itemDesc is a parcel's item_desc: "cup-01*2, saucer-02*1", cut to
// wxapi.MaxItemDescChars characters.
func itemDesc(items []inventory.ShippedItem) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.SKU + "*" + strconv.Itoa(it.Qty)
	}
	d := []rune(strings.Join(parts, ", "))
	if len(d) > wxapi.MaxItemDescChars {
		d = append(d[:wxapi.MaxItemDescChars-1], '…')
	}
	return string(d)
}
