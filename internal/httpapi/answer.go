package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
)

// BusyRetryAfterSeconds is the Retry-After, in seconds, sent with 503 BUSY.
const BusyRetryAfterSeconds = 1

// RateLimitedRetryAfterSeconds is the Retry-After, in seconds, sent with 429 RATE_LIMITED.
const RateLimitedRetryAfterSeconds = 60

// OrderJSON is the contract's order representation (docs/contract.md, "POST /orders"
// and "GET /orders/{orderId}"); times are RFC 3339 UTC, money fen. Build it with Order.
type OrderJSON struct {
	OrderID       string     `json:"orderId"`
	Status        string     `json:"status"`
	Items         []itemJSON `json:"items"`
	Amount        int64      `json:"amount"`
	Currency      string     `json:"currency"`
	CreatedAt     string     `json:"createdAt"`
	ExpiresAt     string     `json:"expiresAt"`
	PaidAt        string     `json:"paidAt,omitempty"`
	CancelledAt   string     `json:"cancelledAt,omitempty"`
	CancelReason  string     `json:"cancelReason,omitempty"`
	TransactionID string     `json:"transactionId,omitempty"`
	RefundedAt    string     `json:"refundedAt,omitempty"`   // once REFUNDED: when its last refund was done
	RefundAmount  int64      `json:"refundAmount,omitempty"` // fen, once REFUNDED: all that was refunded
	// Refunds are the order's refunds, oldest first; RefundedAmount is what WeChat Pay
	// reported refunded of them (fen).
	Refunds        []RefundJSON  `json:"refunds,omitempty"`
	RefundedAmount int64         `json:"refundedAmount,omitempty"`
	Shipping       *ShippingJSON `json:"shipping,omitempty"`
	Presale        *PresaleJSON  `json:"presale,omitempty"`
	// Address is where the parcel goes: whole in one order's view (the owner's, the
	// merchant's), masked in lists (ListedOrder); absent when the order has none.
	Address *inventory.Address `json:"address,omitempty"`
	// Aftersales are the buyer's after-sales, oldest first; absent when none.
	Aftersales []AftersaleJSON `json:"aftersales,omitempty"`
	// Shipments are the parcels shipped, oldest first (the parcel's path); Receipt is
	// where the buyer's receipt stands, absent before any shipment.
	Shipments []ShipmentJSON `json:"shipments,omitempty"`
	Receipt   *ReceiptJSON   `json:"receipt,omitempty"`
}

// AftersaleJSON is one after-sale of an order (docs/contract.md, "POST
// /orders/{orderId}/aftersales"): what was asked, where it stands (REQUESTED,
// APPROVED, REJECTED, REFUNDING), when, and the out_refund_no of the refund it
// started (listed in refunds).
type AftersaleJSON struct {
	AftersaleID  string                 `json:"aftersaleId"`
	Kind         string                 `json:"kind"`
	Lines        []inventory.RefundLine `json:"lines"`
	Reason       string                 `json:"reason"`
	Images       []string               `json:"images,omitempty"`
	Status       string                 `json:"status"`
	RequestedAt  string                 `json:"requestedAt"`
	DecidedAt    string                 `json:"decidedAt,omitempty"`
	RejectReason string                 `json:"rejectReason,omitempty"`
	ReceivedAt   string                 `json:"receivedAt,omitempty"`
	OutRefundNo  string                 `json:"outRefundNo,omitempty"`
}

// ShipmentJSON is one shipment of an order as the contract shows it (docs/contract.md,
// "GET /orders/{orderId}": shipments): how it travels (type express, same-city,
// virtual or self-pickup), the carrier's code and tracking number, what it holds, the
// masked phone numbers uploaded with it, and when WeChat accepted the upload holding
// it (absent while queued).
type ShipmentJSON struct {
	ShipmentID      string                  `json:"shipmentId"`
	Type            string                  `json:"type"`
	Carrier         string                  `json:"carrier,omitempty"`
	Tracking        string                  `json:"tracking,omitempty"`
	Items           []inventory.ShippedItem `json:"items"`
	Contact         string                  `json:"contact,omitempty"`
	ReceiverContact string                  `json:"receiverContact,omitempty"`
	UploadedAt      string                  `json:"uploadedAt,omitempty"`
}

// ReceiptJSON is an order's receipt as the contract shows it: status WAITING (shipped,
// not confirmed yet) or CONFIRMED, with when it was confirmed and how (method buyer or
// auto; absent when WeChat named no method it documents).
type ReceiptJSON struct {
	Status      string `json:"status"`
	ConfirmedAt string `json:"confirmedAt,omitempty"`
	Method      string `json:"method,omitempty"`
}

// ShipmentsView is s's shipments as the contract shows them; nil for none. A shipment
// uploaded before shipments carried their own time shows the shipping's last upload.
func ShipmentsView(s *inventory.Shipping) []ShipmentJSON {
	if s == nil {
		return nil
	}
	var out []ShipmentJSON
	for i, sh := range s.Shipments {
		at := sh.UploadedAt
		if at == nil && i < s.Uploaded {
			at = s.UploadedAt
		}
		out = append(out, ShipmentJSON{ShipmentID: sh.ID, Type: string(sh.Logistics), Carrier: sh.Carrier, Tracking: sh.TrackingNo,
			Items: sh.Items, Contact: sh.Contact, ReceiverContact: sh.ReceiverContact, UploadedAt: optional(at)})
	}
	return out
}

// ReceiptView is o's receipt as the contract shows it; nil before any shipment.
func ReceiptView(o *inventory.Order) *ReceiptJSON {
	state := o.ReceiptState()
	if state == "" {
		return nil
	}
	v := &ReceiptJSON{Status: string(state)}
	if o.Receipt != nil {
		v.ConfirmedAt, v.Method = rfc3339(o.Receipt.ConfirmedAt), string(o.Receipt.Method)
	}
	return v
}

// RefundJSON is one refund of an order (docs/contract.md, "Merchant API": refunds).
type RefundJSON struct {
	RefundID    string                 `json:"refundId"`
	OutRefundNo string                 `json:"outRefundNo"`
	Lines       []inventory.RefundLine `json:"lines"`
	Amount      int64                  `json:"amount"` // fen
	Status      string                 `json:"status"` // REFUNDING or REFUNDED
	RequestedAt string                 `json:"requestedAt"`
	Restocked   bool                   `json:"restocked"`
	RefundedAt  string                 `json:"refundedAt,omitempty"`
	Error       string                 `json:"error,omitempty"`
	Resolution  string                 `json:"resolution,omitempty"` // an operator's retry or settlement
}

// PresaleJSON is an order's presale declaration as the contract shows it: the expected
// ship time, status QUEUED, DECLARED, FAILED or CANCELLED, when WeChat accepted it, and why the
// last declaration failed.
type PresaleJSON struct {
	ShipAt     string `json:"shipAt"`
	Status     string `json:"status"`
	DeclaredAt string `json:"declaredAt,omitempty"`
	Error      string `json:"error,omitempty"`
}

// PresaleView is p as the contract shows it; nil for nil.
func PresaleView(p *inventory.Presale) *PresaleJSON {
	if p == nil {
		return nil
	}
	return &PresaleJSON{ShipAt: rfc3339(p.ShipAt), Status: string(p.Status), DeclaredAt: optional(p.DeclaredAt), Error: p.Error}
}

// ShippingJSON is an order's shipping as the contract shows it (docs/contract.md,
// "GET /orders/{orderId}"): status QUEUED, UPLOADED, FAILED or CANCELLED, when WeChat
// last accepted an upload, and why the last one failed.
type ShippingJSON struct {
	Status     string `json:"status"`
	UploadedAt string `json:"uploadedAt,omitempty"`
	Error      string `json:"error,omitempty"`
}

// ShippingView is s as the contract shows it; nil for nil.
func ShippingView(s *inventory.Shipping) *ShippingJSON {
	if s == nil {
		return nil
	}
	return &ShippingJSON{Status: string(s.Status), UploadedAt: optional(s.UploadedAt), Error: s.Error}
}

type itemJSON struct {
	SKU       string `json:"skuId"`
	Qty       int    `json:"qty"`
	UnitPrice int64  `json:"unitPrice"`
}

type errorJSON struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	SKU          string `json:"skuId,omitempty"`
	SaleStartsAt string `json:"saleStartsAt,omitempty"` // SALE_NOT_STARTED only
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optional(t *time.Time) string {
	if t == nil {
		return ""
	}
	return rfc3339(*t)
}

// Order is the contract's view of an order. A PAID order shows no cancellation: one
// paid after its release was cancelled once, which the ledger keeps.
func Order(o *inventory.Order) OrderJSON {
	if o.Status == inventory.StatusPaid {
		paid := *o
		paid.CancelledAt, paid.CancelReason = nil, ""
		o = &paid
	}
	v := OrderJSON{
		OrderID: o.ID, Status: string(o.Status), Amount: o.Amount, Currency: o.Currency,
		CreatedAt: rfc3339(o.CreatedAt), ExpiresAt: rfc3339(o.ExpiresAt),
		PaidAt: optional(o.PaidAt), CancelledAt: optional(o.CancelledAt),
		CancelReason: string(o.CancelReason), TransactionID: o.TransactionID,
		RefundedAmount: o.RefundedAmount(), Items: make([]itemJSON, len(o.Items)),
		Shipping: ShippingView(o.Shipping), Presale: PresaleView(o.Presale), Address: o.Address,
		Shipments: ShipmentsView(o.Shipping), Receipt: ReceiptView(o),
	}
	for i, it := range o.Items {
		v.Items[i] = itemJSON{SKU: it.SKU, Qty: it.Qty, UnitPrice: it.UnitPrice}
	}
	for _, r := range o.Refunds {
		v.Refunds = append(v.Refunds, RefundJSON{
			RefundID: r.RefundID, OutRefundNo: r.OutRefundNo, Lines: r.Lines, Amount: r.Amount, Status: string(r.Status),
			RequestedAt: rfc3339(r.Since), Restocked: r.Restocked, RefundedAt: optional(r.RefundedAt), Error: r.Error,
			Resolution: r.Resolution,
		})
		if o.Status == inventory.StatusRefunded && r.RefundedAt != nil && optional(r.RefundedAt) > v.RefundedAt {
			v.RefundedAt = optional(r.RefundedAt)
		}
	}
	if o.Status == inventory.StatusRefunded {
		v.RefundAmount = v.RefundedAmount
	}
	for _, a := range o.Aftersales {
		v.Aftersales = append(v.Aftersales, AftersaleJSON{
			AftersaleID: a.ID, Kind: string(a.Kind), Lines: a.Lines, Reason: a.Reason, Images: a.Images, Status: string(o.AftersaleShown(a)),
			RequestedAt: rfc3339(a.RequestedAt), DecidedAt: optional(a.DecidedAt), RejectReason: a.RejectReason,
			ReceivedAt: optional(a.ReceivedAt), OutRefundNo: a.OutRefundNo,
		})
	}
	for _, r := range o.Second { // second payments', owed back whole: no lines, no goods
		v.Refunds = append(v.Refunds, RefundJSON{
			RefundID: SecondPaymentRefundID, OutRefundNo: r.OutRefundNo, Lines: []inventory.RefundLine{}, Amount: r.Amount, Status: string(r.Status),
			RequestedAt: rfc3339(r.Since), RefundedAt: optional(r.RefundedAt), Error: r.Error, Resolution: r.Resolution,
		})
	}
	return v
}

// SecondPaymentRefundID is the refundId shown for the refund of a second payment of an
// order (docs/contract.md): its own out_refund_no (order id, "_T", 16 hex), its
// amount the whole second payment (fen), no lines.
const SecondPaymentRefundID = "second-payment"

// ListedOrder is Order as lists show it: the address masked (inventory.Address.Masked:
// no street, the phone as 189****1234).
func ListedOrder(o *inventory.Order) OrderJSON {
	v := Order(o)
	if o.Address != nil {
		m := o.Address.Masked()
		v.Address = &m
	}
	return v
}

// MerchantOrderJSON is the contract's order with its owner, for the merchant API.
type MerchantOrderJSON struct {
	OrderJSON
	UserID string `json:"userId"`
}

// MerchantOrder is the merchant API's view of an order (docs/contract.md, "Merchant
// API"): Order (its shipments and receipt included) and the owner's user id.
func MerchantOrder(o *inventory.Order) MerchantOrderJSON {
	return MerchantOrderJSON{OrderJSON: Order(o), UserID: o.UserID}
}

// ListedMerchantOrder is MerchantOrder as lists show it: the address masked, as in
// ListedOrder.
func ListedMerchantOrder(o *inventory.Order) MerchantOrderJSON {
	v := MerchantOrder(o)
	v.OrderJSON = ListedOrder(o)
	return v
}

// PublicCacheControl is the Cache-Control header of the public answers (GET
// /skus/{skuId}, GET /skus, GET /skus/{skuId}/line): any cache, CloudFront's
// included, may keep them 1 s (RFC 9111, 5.2.2.1 max-age, 5.2.2.9 public;
// docs/design.md, "The public page").
const PublicCacheControl = "public, max-age=1"

// JSON is a response with status and v marshalled as its JSON body, <, > and & as
// they are (no \u003c escapes: the body is JSON for API clients, never HTML). v must
// be one of this project's plain structs; if it cannot be marshalled the answer is 500
// INTERNAL.
func JSON(status int, v any) events.APIGatewayV2HTTPResponse {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil { // only our own plain structs are marshalled
		status, body = http.StatusInternalServerError, []byte(`{"code":"INTERNAL","message":"internal error"}`)
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json"},
		Body:       string(body),
	}
}

// ErrorResponse is a contract error answer: status with the body
// {"code","message","skuId"?} (skuId left out when sku is ""). message is shown to
// the caller, so it must be text written by this project.
func ErrorResponse(status int, code, message, sku string) events.APIGatewayV2HTTPResponse {
	return JSON(status, errorJSON{Code: code, Message: message, SKU: sku})
}

// Failure is an error answer a route chooses itself, for callers with their own error
// codes (WeChat Pay's {"code":"FAIL"} on the notify route): Answer makes it Status with
// the body {"code":Code,"message":Message}, and Handler logs the request at Level
// (zero is info). Message is shown to the caller, so it must be text written by this
// project; Err, the cause, goes only to the log.
type Failure struct {
	Status  int // HTTP status, 4xx or 5xx
	Code    string
	Message string
	Level   slog.Level
	Err     error
}

func (f *Failure) Error() string { return f.Err.Error() }

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

// sentinelAnswer is the contract answer to an error that wraps err.
type sentinelAnswer struct {
	err           error
	status        int
	code, message string
	namesSKU      bool // the body's skuId is the SKU of the error's *inventory.SKUError
	retryAfter    int  // the Retry-After header, in seconds; 0 for none
}

// sentinelAnswers are the answers to the sentinel errors (docs/contract.md, the
// error tables of each route); the first whose err the error wraps is given.
var sentinelAnswers = []sentinelAnswer{
	{inventory.ErrSKUExists, http.StatusConflict, "SKU_EXISTS", "a different SKU with this id exists", true, 0},
	{ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED", "sign in first: the request carries no valid caller identity", false, 0},
	{inventory.ErrInvalidRequest, http.StatusBadRequest, "INVALID_REQUEST", "invalid request", false, 0},
	{inventory.ErrSKUNotFound, http.StatusNotFound, "SKU_NOT_FOUND", "no such SKU", true, 0},
	{inventory.ErrStockOut, http.StatusConflict, "STOCK_OUT", "not enough stock available", true, 0},
	{inventory.ErrOffSale, http.StatusConflict, "SKU_OFF_SALE", "this SKU is not on sale", true, 0},
	{inventory.ErrLimitExceeded, http.StatusConflict, "LIMIT_EXCEEDED", "per-user purchase limit reached for this SKU", true, 0},
	{inventory.ErrSaleInProgress, http.StatusConflict, "SALE_IN_PROGRESS", "this SKU's queued sale is on: its limit cannot be raised nor its queue turned off now; nothing was changed", true, 0},
	{inventory.ErrQueueNotEnabled, http.StatusConflict, "QUEUE_NOT_ENABLED", "this SKU has no waiting room: order it directly", true, 0},
	{inventory.ErrAdmissionRequired, http.StatusForbidden, "ADMISSION_REQUIRED", "this SKU sells through its waiting room: order with the admission its ticket gives (the Admission-Token header), once, before it expires; nothing was reserved", true, 0},
	{inventory.ErrTicketNotFound, http.StatusNotFound, "TICKET_NOT_FOUND", "you have no ticket with that id", false, 0},
	{inventory.ErrWaitlistNotFound, http.StatusNotFound, "WAITLIST_NOT_FOUND", "you are not on this SKU's waitlist", false, 0},
	{inventory.ErrRiskRejected, http.StatusForbidden, "RISK_REJECTED", "WeChat's security rating of this account does not allow buying this SKU; nothing was reserved, queued or waitlisted", true, 0},
	{inventory.ErrCartTooLarge, http.StatusConflict, "CART_TOO_LARGE", "this cart needs more stock shards than one order can reserve at once; order fewer items per cart", false, 0},
	{inventory.ErrIdempotencyKeyReused, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED", "this idempotency key (the Idempotency-Key header, or the adjustmentId, refundId, shipmentId or aftersaleId) was used with a different request", false, 0},
	{inventory.ErrNotCancellable, http.StatusConflict, "ORDER_NOT_CANCELLABLE", "this order is paid and can no longer be cancelled", false, 0},
	{inventory.ErrNotPayable, http.StatusConflict, "ORDER_NOT_PAYABLE", "this order is no longer waiting for payment", false, 0},
	{inventory.ErrAddressLocked, http.StatusConflict, "ADDRESS_LOCKED", "the order has shipped (or is closed): its address can no longer be changed", false, 0},
	{inventory.ErrNotShippable, http.StatusConflict, "ORDER_NOT_SHIPPABLE", "only a PAID order with units not shipped yet can be shipped; nothing was sent", false, 0},
	{inventory.ErrRefundNotAllowed, http.StatusConflict, "REFUND_NOT_ALLOWED", "this order cannot be refunded by you now", false, 0},
	{inventory.ErrRefundExceedsPaid, http.StatusConflict, "REFUND_EXCEEDS_PAID", "the refund asks for more than is left to refund", false, 0},
	{inventory.ErrPaymentRefused, http.StatusBadGateway, "PAYMENT_REFUSED", "WeChat Pay refused to start this payment; nothing was changed", false, 0},
	{inventory.ErrRateLimited, http.StatusTooManyRequests, "RATE_LIMITED", "too many requests; please retry later", false, RateLimitedRetryAfterSeconds},
	{inventory.ErrOrderNotFound, http.StatusNotFound, "ORDER_NOT_FOUND", "no such order", false, 0},
	{inventory.ErrRefundNotFound, http.StatusNotFound, "REFUND_NOT_FOUND", "the order has no refund with that out_refund_no", false, 0},
	{inventory.ErrAftersaleNotFound, http.StatusNotFound, "AFTERSALE_NOT_FOUND", "the order has no after-sale with that aftersaleId", false, 0},
	{inventory.ErrBusy, http.StatusServiceUnavailable, "BUSY", "the store is busy; nothing was changed, please retry", false, BusyRetryAfterSeconds},
}

// withRetryAfter is resp with a Retry-After header of seconds.
func withRetryAfter(resp events.APIGatewayV2HTTPResponse, seconds int) events.APIGatewayV2HTTPResponse {
	resp.Headers["Retry-After"] = strconv.Itoa(seconds)
	return resp
}

// Answer maps an error to its contract response (docs/contract.md, the error tables
// of each route). Only messages written by this project reach the client: a *Failure's
// Message, an *inventory.InvalidRequestError's Reason, or the fixed text of each code;
// anything unknown becomes 500 INTERNAL.
func Answer(err error) events.APIGatewayV2HTTPResponse {
	var invalid *inventory.InvalidRequestError
	var notStarted *inventory.SaleNotStartedError
	var rateLimited *inventory.RateLimitedError
	var failure *Failure
	switch {
	case errors.As(err, &failure):
		return ErrorResponse(failure.Status, failure.Code, failure.Message, "")
	case errors.As(err, &notStarted):
		return JSON(http.StatusConflict, errorJSON{Code: "SALE_NOT_STARTED", Message: "the sale of this SKU has not started yet",
			SKU: notStarted.SKU, SaleStartsAt: notStarted.StartsAt.UTC().Format(time.RFC3339Nano)})
	case errors.As(err, &invalid):
		return ErrorResponse(http.StatusBadRequest, "INVALID_REQUEST", invalid.Reason, "")
	case errors.As(err, &rateLimited):
		return withRetryAfter(ErrorResponse(http.StatusTooManyRequests, "RATE_LIMITED", "too many orders for this SKU in a short time; nothing was reserved, retry later", rateLimited.SKU),
			int((rateLimited.RetryAfter+time.Second-1)/time.Second))
	}
	var refusal *inventory.RefusalError
	for _, a := range sentinelAnswers {
		if !errors.Is(err, a.err) {
			continue
		}
		if errors.As(err, &refusal) && errors.Is(refusal, a.err) {
			a.message = refusal.Reason
		}
		sku := ""
		var skuErr *inventory.SKUError
		if a.namesSKU && errors.As(err, &skuErr) {
			sku = skuErr.SKU
		}
		resp := ErrorResponse(a.status, a.code, a.message, sku)
		if a.retryAfter > 0 {
			resp = withRetryAfter(resp, a.retryAfter)
		}
		return resp
	}
	return ErrorResponse(http.StatusInternalServerError, "INTERNAL", "internal error", "")
}
