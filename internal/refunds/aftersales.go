package refunds

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys of the after-sale routes (docs/contract.md, "POST
// /orders/{orderId}/aftersales" and "Merchant API"; template.yaml).
const (
	// RouteAftersale is the buyer's after-sale request on their own order (JWT).
	RouteAftersale = "POST /orders/{orderId}/aftersales"
	// RouteAftersaleApprove, RouteAftersaleReject and RouteAftersaleReceived are the
	// merchant's decision and receipt of the goods (AWS_IAM, or staff operators).
	RouteAftersaleApprove  = "POST /admin/orders/{orderId}/aftersales/{aftersaleId}/approve"
	RouteAftersaleReject   = "POST /admin/orders/{orderId}/aftersales/{aftersaleId}/reject"
	RouteAftersaleReceived = "POST /admin/orders/{orderId}/aftersales/{aftersaleId}/received"
)

// Aftersales is what the after-sale routes need of the store (dynamo.Store).
type Aftersales interface {
	RequestAftersale(ctx context.Context, userID, id string, r inventory.AftersaleRequest) (*inventory.Order, bool, error)
	DecideAftersale(ctx context.Context, id, aftersaleID string, approve bool, by, reason string) (*inventory.Order, string, error)
	ReceiveAftersale(ctx context.Context, id, aftersaleID, by string) (*inventory.Order, string, error)
}

// Notifier queues the buyer's subscribe message about an after-sale decided
// (notices.Decisions); it never fails the decision.
type Notifier interface {
	AftersaleDecided(ctx context.Context, orderID, aftersaleID string)
}

// AftersaleRoutes serves the after-sale routes: the buyer's request, the merchant's
// approval, rejection and receipt of the goods.
type AftersaleRoutes struct {
	store   Aftersales
	starter *Starter
	notify  Notifier
}

// NewAftersaleRoutes returns the after-sale routes over store, sending the refunds
// decisions start with starter and telling buyers of decisions through notify (nil:
// no message).
func NewAftersaleRoutes(store Aftersales, starter *Starter, notify Notifier) *AftersaleRoutes {
	return &AftersaleRoutes{store: store, starter: starter, notify: notify}
}

const aftersaleExample = `{"aftersaleId":"as-1","kind":"return-refund","lines":[{"skuId":"cup-01","qty":1}],"reason":"arrived broken","images":["https://img.example.com/1.jpg"]}`

// Request serves RouteAftersale (docs/contract.md): the owner's PAID order takes the
// after-sale the body asks, {"aftersaleId","kind":"refund"|"return-refund","lines"?,
// "reason","images"?} (lines absent: every unit paid and neither refunded nor asked
// for by another open after-sale): 202 with the order, the after-sale REQUESTED.
// The same aftersaleId and body again: 202, nothing twice; another body under it: 422
// IDEMPOTENCY_KEY_REUSED; more than is left: 409 REFUND_EXCEEDS_PAID; not PAID, or
// the order's MaxAftersalesPerOrder-th after-sale made: 409 REFUND_NOT_ALLOWED; a
// field null, unknown or invalid: 400; anyone else's order: 404 ORDER_NOT_FOUND.
func (r *AftersaleRoutes) Request(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	a, err := decodeAftersale(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	o, _, err := r.store.RequestAftersale(ctx, user, req.PathParameters["orderId"], a)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusAccepted, httpapi.Order(o)), nil
}

// decodeAftersale parses and validates an after-sale request body.
func decodeAftersale(req events.APIGatewayV2HTTPRequest) (inventory.AftersaleRequest, error) {
	var b struct {
		ID     *string         `json:"aftersaleId"`
		Kind   *string         `json:"kind"`
		Lines  json.RawMessage `json:"lines"`
		Reason *string         `json:"reason"`
		Images []string        `json:"images"`
	}
	fields, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, aftersaleExample, "aftersaleId", "kind", "lines", "reason", "images")
	if err != nil {
		return inventory.AftersaleRequest{}, err
	}
	if err := httpapi.NotNull(fields); err != nil {
		return inventory.AftersaleRequest{}, err // {"lines": null} is not "all of it": leave the field out for that
	}
	if b.ID == nil || b.Kind == nil || b.Reason == nil {
		return inventory.AftersaleRequest{}, inventory.InvalidError("aftersaleId, kind and reason are required; example: %s", aftersaleExample)
	}
	a := inventory.AftersaleRequest{ID: *b.ID, Kind: inventory.AftersaleKind(*b.Kind), Reason: *b.Reason, Images: b.Images}
	if len(b.Lines) > 0 {
		lines, err := httpapi.DecodeLines(b.Lines, "lines")
		if err != nil {
			return a, err
		}
		if len(lines) == 0 {
			return a, inventory.InvalidError("lines must be a non-empty array like %s, or left out for every unit left", `[{"skuId":"cup-01","qty":1}]`)
		}
		for _, l := range lines {
			a.Lines = append(a.Lines, inventory.RefundLine(l))
		}
	}
	return a, a.Validate()
}

// Approve serves RouteAftersaleApprove: the REQUESTED after-sale is APPROVED by the
// caller; a "refund" starts its refund at once (its lines, no goods: issue 25's
// partial refund under refundId AftersaleRefundID) and is REFUNDING, a
// "return-refund" waits for its goods (RouteAftersaleReceived). 200 with the order
// (Lookup's view); approved again: the same, nothing twice. Errors: 404
// AFTERSALE_NOT_FOUND or ORDER_NOT_FOUND; 409 REFUND_NOT_ALLOWED (rejected already),
// REFUND_EXCEEDS_PAID (another refund took its units meanwhile).
func (r *AftersaleRoutes) Approve(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	if _, err := httpapi.DecodeFields(withEmptyObject(req), MaxBodyBytes, &struct{}{}, "{}"); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.decide(ctx, req, func(id, aftersaleID string) (*inventory.Order, string, error) {
		return r.store.DecideAftersale(ctx, id, aftersaleID, true, by, "")
	}, true)
}

// Reject serves RouteAftersaleReject with {"reason"} (1..MaxReasonLength characters,
// told to the buyer): the REQUESTED after-sale, or an APPROVED return-refund whose
// goods were not received (they never came, or a refund since took its units), is
// REJECTED, its units free to ask for again. 200 with the order; rejected again: the
// same. Errors: 400 without a reason; 404 AFTERSALE_NOT_FOUND or ORDER_NOT_FOUND; 409
// REFUND_NOT_ALLOWED (an approved refund, or a return-refund received or refunding).
func (r *AftersaleRoutes) Reject(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	var b struct {
		Reason *string `json:"reason"`
	}
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, `{"reason":"used, not faulty"}`, "reason"); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if b.Reason == nil {
		return events.APIGatewayV2HTTPResponse{}, inventory.InvalidError(`reason is required; example: {"reason":"used, not faulty"}`)
	}
	if err := (inventory.RefundRequest{Reason: *b.Reason}).ValidateReason(); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.decide(ctx, req, func(id, aftersaleID string) (*inventory.Order, string, error) {
		return r.store.DecideAftersale(ctx, id, aftersaleID, false, by, *b.Reason)
	}, true)
}

// Received serves RouteAftersaleReceived: the goods of the APPROVED return-refund are
// back; its units return to stock (on the shards they left, or a live one after a
// shrinking reshard) and its refund starts, in one transaction: 200 with the order,
// the after-sale REFUNDING. Received again: the same, nothing restocked or refunded
// twice. Errors: 404 AFTERSALE_NOT_FOUND or ORDER_NOT_FOUND; 409 REFUND_NOT_ALLOWED
// (a "refund" after-sale, or one not approved) or REFUND_EXCEEDS_PAID (a refund since
// the approval took its units: the message says to reject it).
func (r *AftersaleRoutes) Received(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	if _, err := httpapi.DecodeFields(withEmptyObject(req), MaxBodyBytes, &struct{}{}, "{}"); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.decide(ctx, req, func(id, aftersaleID string) (*inventory.Order, string, error) {
		return r.store.ReceiveAftersale(ctx, id, aftersaleID, by)
	}, false)
}

// decide runs a merchant's step on the after-sale the path names, puts the refund it
// started on the refund queue, and, for a decision, queues the buyer's message.
func (r *AftersaleRoutes) decide(ctx context.Context, req events.APIGatewayV2HTTPRequest, step func(id, aftersaleID string) (*inventory.Order, string, error), decision bool) (events.APIGatewayV2HTTPResponse, error) {
	id, aftersaleID := req.PathParameters["orderId"], req.PathParameters["aftersaleId"]
	o, started, err := step(id, aftersaleID)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if started != "" {
		r.starter.send(ctx, started)
	}
	if decision && r.notify != nil {
		r.notify.AftersaleDecided(ctx, o.ID, aftersaleID)
	}
	return httpapi.JSON(http.StatusOK, httpapi.MerchantOrder(o)), nil
}

// withEmptyObject is req with "{}" for an empty body: approve and received take none.
func withEmptyObject(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	if req.Body == "" {
		req.Body, req.IsBase64Encoded = "{}", false
	}
	return req
}
