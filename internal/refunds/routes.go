package refunds

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys of the refund routes (API Gateway RouteKey values, see template.yaml).
const (
	// RouteBuyer is the buyer's refund of their own order (JWT).
	RouteBuyer = "POST /orders/{orderId}/refund"
	// RouteMerchant is the merchant's refund of any order (AWS_IAM).
	RouteMerchant = "POST /admin/orders/{orderId}/refund"
)

// MaxBodyBytes is the largest body the merchant's refund route accepts.
const MaxBodyBytes = 16 << 10

// Orders reads the orders the refund routes name (dynamo.Store): the buyer's own
// (Order), or any (Lookup, for the merchant).
type Orders interface {
	Order(ctx context.Context, userID, id string) (*inventory.Order, error)
	Lookup(ctx context.Context, id string) (*inventory.Order, error)
}

// Routes serves the refund routes: the buyer's and the merchant's, and an operator's
// resolution of a refund WeChat Pay did not make.
type Routes struct {
	orders   Orders
	resolver Resolving
	starter  *Starter
	window   time.Duration
}

// NewRoutes returns the refund routes over orders (resolutions recorded in resolver),
// starting refunds with starter; buyers may refund a PAID order within window after
// paidAt (0: never; docs/contract.md, 409 REFUND_NOT_ALLOWED).
func NewRoutes(orders Orders, resolver Resolving, starter *Starter, window time.Duration) *Routes {
	return &Routes{orders: orders, resolver: resolver, starter: starter, window: window}
}

// Buyer serves RouteBuyer (docs/contract.md, "POST /orders/{orderId}/refund"): the
// owner's PAID order, within the window after paidAt, is refunded — the lines the
// optional body names ({"refundId"?, "lines"?}; absent: all that is left) — with their
// units back in stock (RETURN entries) and their purchase counters given back, then
// the refund is put on the refund queue; the answer is 202 with the order (still PAID
// while part is refunded, REFUNDING once all is). The same refundId and body again
// answers as the order stands (202, or 200 once REFUNDED), nothing done twice; another
// body under it is 422 IDEMPOTENCY_KEY_REUSED; more than is left is 409
// REFUND_EXCEEDS_PAID; outside the window, or with the window 0, or for an order
// never paid (PENDING, CANCELLED) or refunded automatically (REFUND_PENDING): 409
// REFUND_NOT_ALLOWED. Not the owner or unknown: 404 ORDER_NOT_FOUND.
func (r *Routes) Buyer(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err := r.orders.Order(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	refund := inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods, By: order.UserID, Reason: "buyer's request"}
	if req.Body != "" {
		if err := decodeParts(req, &refund, buyerExample); err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
	}
	if order, err = r.starter.Order(ctx, order, refund, r.window); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(refundStatus(order), httpapi.Order(order)), nil
}

// Merchant serves RouteMerchant (docs/contract.md, "Merchant API"): a PAID order, or
// the lines of it the body names (absent: all that is left), or a REFUND_PENDING
// order whole, is refunded — with RETURN entries of exactly the refunded units when
// restock is true and the order held stock — recorded with the caller's principal and
// reason, and the refund is put on the refund queue: 202 with the order. The same
// refundId and body again: 202 (200 once REFUNDED), nothing twice; another body under
// it: 422 IDEMPOTENCY_KEY_REUSED; more than is left: 409 REFUND_EXCEEDS_PAID; PENDING
// or CANCELLED, the 50th refund done, or a payment over a year old: 409
// REFUND_NOT_ALLOWED with the reason.
func (r *Routes) Merchant(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	o, err := r.orders.Lookup(ctx, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	refund, err := decodeRefund(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	refund.By = by
	if o, err = r.starter.Order(ctx, o, refund, 0); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(refundStatus(o), httpapi.MerchantOrder(o)), nil
}

// refundStatus is the answer's status for an order a refund request leaves: 200 once
// REFUNDED, 202 while a money step runs.
func refundStatus(o *inventory.Order) int {
	if o.Status == inventory.StatusRefunded {
		return http.StatusOK
	}
	return http.StatusAccepted
}

const (
	refundExample = `{"restock":true,"reason":"damaged in transit","refundId":"rf-1","lines":[{"skuId":"cup-01","qty":1}]}`
	buyerExample  = `{"refundId":"rf-1","lines":[{"skuId":"cup-01","qty":1}]}`
)

// refundBody is a refund route's body; the buyer's takes only RefundID and Lines.
type refundBody struct {
	Restock  *bool           `json:"restock"`
	Reason   *string         `json:"reason"`
	RefundID *string         `json:"refundId"`
	Lines    json.RawMessage `json:"lines"`
}

// decodeRefund parses a merchant refund body: {"restock": bool, "reason":
// 1..MaxReasonLength characters} required, "refundId" and "lines" optional (see
// decodeParts).
func decodeRefund(req events.APIGatewayV2HTTPRequest) (inventory.RefundRequest, error) {
	var b refundBody
	fields, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, refundExample, "restock", "reason", "refundId", "lines")
	if err != nil {
		return inventory.RefundRequest{}, err
	}
	if err := httpapi.NotNull(fields); err != nil {
		return inventory.RefundRequest{}, err
	}
	if b.Restock == nil || b.Reason == nil {
		return inventory.RefundRequest{}, inventory.InvalidError("restock and reason are required; example: %s", refundExample)
	}
	r := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.KeepGoods, Reason: *b.Reason}
	if *b.Restock {
		r.Goods = inventory.ReturnGoods
	}
	if err := r.ValidateReason(); err != nil {
		return r, err
	}
	return r, parts(b, &r, refundExample)
}

// decodeParts parses the buyer's optional refund body {"refundId"?, "lines"?} into r;
// a field given as null is refused (400), as POST /orders refuses items: null.
func decodeParts(req events.APIGatewayV2HTTPRequest, r *inventory.RefundRequest, example string) error {
	var b refundBody
	fields, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, example, "refundId", "lines")
	if err != nil {
		return err
	}
	if err := httpapi.NotNull(fields); err != nil {
		return err // {"lines": null} is not "all of it": leave the field out for that
	}
	return parts(b, r, example)
}

// parts sets r's refundId and lines from b: refundId 1..64 printable ASCII, lines
// [{"skuId","qty"}] of 1..20 SKUs (merged by SKU), each field required and no other.
func parts(b refundBody, r *inventory.RefundRequest, example string) error {
	if b.RefundID != nil {
		if *b.RefundID == "" {
			return inventory.InvalidError("refundId must be 1 to %d printable ASCII characters", inventory.MaxRefundIDLength)
		}
		r.RefundID = *b.RefundID
	}
	if len(b.Lines) > 0 {
		lines, err := httpapi.DecodeLines(b.Lines, "lines")
		if err != nil {
			return err
		}
		if len(lines) == 0 {
			return inventory.InvalidError("lines must be a non-empty array like %s", example)
		}
		r.Lines = make([]inventory.RefundLine, len(lines))
		for i, l := range lines {
			r.Lines[i] = inventory.RefundLine(l)
		}
	}
	return r.ValidateLines()
}

// Route keys of an operator's resolution of a refund WeChat Pay did not make
// (docs/contract.md, "Merchant API").
const (
	// RouteRetry asks WeChat Pay again for a refund its refund API refused for good,
	// once the cause is fixed.
	RouteRetry = "POST /admin/orders/{orderId}/refunds/{outRefundNo}/retry"
	// RouteSettle records a refund settled outside WeChat Pay (by hand).
	RouteSettle = "POST /admin/orders/{orderId}/refunds/{outRefundNo}/settle"
)

// Resolving is what an operator's resolution of a refund needs of the store
// (dynamo.Store).
type Resolving interface {
	ResolveRefund(ctx context.Context, orderID, outRefundNo string, how inventory.Resolution, by, reason string) (*inventory.Order, error)
}

const resolveExample = `{"reason":"buyer's account unfrozen"}`

// Retry serves RouteRetry: a refund WeChat Pay's refund API refused for good (its
// error REFUSED …) gets its error cleared, recorded with the caller's principal and
// reason, and goes back on the refund queue: 202 with the order. A refund with no
// refusal to retry (REFUNDED, under way, or CLOSED/ABNORMAL, which WeChat Pay takes no
// second request for): 409 REFUND_NOT_ALLOWED with the reason; unknown: 404.
func (r *Routes) Retry(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	o, err := r.resolve(ctx, req, inventory.RetryRefund, by)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	r.starter.send(ctx, req.PathParameters["outRefundNo"])
	return httpapi.JSON(http.StatusAccepted, httpapi.MerchantOrder(o)), nil
}

// Settle serves RouteSettle: a refund WeChat Pay refused, closed or marked abnormal,
// whose money the merchant returned by hand, is recorded REFUNDED (settled outside
// WeChat Pay, with the caller's principal and reason): 200 with the order (REFUNDED
// with the last of its refunds). A refund without such an error: 409
// REFUND_NOT_ALLOWED; unknown: 404.
func (r *Routes) Settle(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	o, err := r.resolve(ctx, req, inventory.SettleRefund, by)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, httpapi.MerchantOrder(o)), nil
}

// resolve decodes {"reason"} and records how the caller resolves the refund the path
// names.
func (r *Routes) resolve(ctx context.Context, req events.APIGatewayV2HTTPRequest, how inventory.Resolution, by string) (*inventory.Order, error) {
	var b struct {
		Reason *string `json:"reason"`
	}
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, resolveExample, "reason"); err != nil {
		return nil, err
	}
	if b.Reason == nil {
		return nil, inventory.InvalidError("reason is required; example: %s", resolveExample)
	}
	if err := (inventory.RefundRequest{Reason: *b.Reason}).ValidateReason(); err != nil {
		return nil, err
	}
	id, no := req.PathParameters["orderId"], req.PathParameters["outRefundNo"]
	if orderID, _, ok := inventory.RefundOf(no); !ok || orderID != id { // the order's own, or a second payment's
		return nil, fmt.Errorf("refund %q of order %s: %w", no, id, inventory.ErrRefundNotFound)
	}
	return r.resolver.ResolveRefund(ctx, id, no, how, by, *b.Reason)
}
