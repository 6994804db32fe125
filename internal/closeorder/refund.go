package closeorder

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// RouteRefundOrder is the route key of a buyer's refund (API Gateway RouteKey, see
// template.yaml). closeOrder serves it with the buyer's other order routes (cancel,
// pay).
const RouteRefundOrder = "POST /orders/{orderId}/refund"

var errNoRefunds = errors.New("closeOrder: no refund starter configured")

// refundOrder serves POST /orders/{orderId}/refund (CONTRACT.md): the owner's PAID
// order, within UserRefundWindow after paidAt, goes PAID → REFUNDING with its units
// back in stock (RETURN entries) and its purchase counters given back, then the
// refund is put on the refund queue; the answer is 202 with the order. An order
// already REFUNDING answers 202 and one REFUNDED 200, nothing done twice; outside the
// window, or with the window 0, or for an order never paid (PENDING, CANCELLED) or
// refunded automatically (REFUND_PENDING): 409 REFUND_NOT_ALLOWED. Not the owner or
// unknown: 404 ORDER_NOT_FOUND.
func (c *Closer) refundOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	order, err := c.ownOrder(ctx, req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if c.opts.Refunds == nil {
		return events.APIGatewayV2HTTPResponse{}, errNoRefunds
	}
	order, err = c.opts.Refunds.Order(ctx, order, inventory.RefundRequest{Restock: true, By: order.UserID, Reason: "buyer's request"}, c.opts.UserRefundWindow)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := http.StatusAccepted
	if order.Status == inventory.StatusRefunded {
		status = http.StatusOK
	}
	return httpapi.JSON(status, httpapi.Order(order)), nil
}

// ownOrder reads the order the request's path names, as its owner (the caller's
// identity): httpapi.ErrUnauthorized without one, inventory.ErrOrderNotFound for
// anyone else's or an unknown order.
func (c *Closer) ownOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (*inventory.Order, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return nil, err
	}
	return c.store.Order(ctx, user, req.PathParameters["orderId"])
}
