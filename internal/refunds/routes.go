package refunds

import (
	"context"
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

// Routes serves the refund routes: the buyer's and the merchant's.
type Routes struct {
	orders  Orders
	starter *Starter
	window  time.Duration
}

// NewRoutes returns the refund routes over orders, starting refunds with starter;
// buyers may refund a PAID order within window after paidAt (0: never; docs/contract.md,
// 409 REFUND_NOT_ALLOWED).
func NewRoutes(orders Orders, starter *Starter, window time.Duration) *Routes {
	return &Routes{orders: orders, starter: starter, window: window}
}

// Buyer serves RouteBuyer (docs/contract.md, "POST /orders/{orderId}/refund"): the
// owner's PAID order, within the window after paidAt, goes PAID → REFUNDING with its
// units back in stock (RETURN entries) and its purchase counters given back, then the
// refund is put on the refund queue; the answer is 202 with the order. An order
// already REFUNDING answers 202 and one REFUNDED 200, nothing done twice; outside the
// window, or with the window 0, or for an order never paid (PENDING, CANCELLED) or
// refunded automatically (REFUND_PENDING): 409 REFUND_NOT_ALLOWED. Not the owner or
// unknown: 404 ORDER_NOT_FOUND.
func (r *Routes) Buyer(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err := r.orders.Order(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err = r.starter.Order(ctx, order, inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods, By: order.UserID, Reason: "buyer's request"}, r.window)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(refundStatus(order), httpapi.Order(order)), nil
}

// Merchant serves RouteMerchant (docs/contract.md, "Merchant API"): any PAID or
// REFUND_PENDING order goes REFUNDING — with RETURN entries when restock is true and
// the order held stock — recorded with the caller's principal and reason, and its
// refund is put on the refund queue: 202 with the order. Already REFUNDING: 202,
// nothing twice; REFUNDED: 200. PENDING or CANCELLED: 409 REFUND_NOT_ALLOWED.
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
// REFUNDED, 202 while the money step runs.
func refundStatus(o *inventory.Order) int {
	if o.Status == inventory.StatusRefunded {
		return http.StatusOK
	}
	return http.StatusAccepted
}

const refundExample = `{"restock":true,"reason":"damaged in transit"}`

// decodeRefund parses a merchant refund body: {"restock": bool, "reason":
// 1..MaxReasonLength characters}, both required.
func decodeRefund(req events.APIGatewayV2HTTPRequest) (inventory.RefundRequest, error) {
	var b struct {
		Restock *bool   `json:"restock"`
		Reason  *string `json:"reason"`
	}
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, refundExample, "restock", "reason"); err != nil {
		return inventory.RefundRequest{}, err
	}
	if b.Restock == nil || b.Reason == nil {
		return inventory.RefundRequest{}, inventory.InvalidError("restock and reason are required; example: %s", refundExample)
	}
	r := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.KeepGoods, Reason: *b.Reason}
	if *b.Restock {
		r.Goods = inventory.ReturnGoods
	}
	return r, r.ValidateReason()
}
