package orders

import (
	"context"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys of the merchant's order reads (API Gateway RouteKey values, see
// template.yaml).
const (
	RouteList   = "GET /admin/orders"
	RouteLookup = "GET /admin/orders/{orderId}"
)

// Listing is what the merchant's order reads need of the store (dynamo.Store): any
// order by id, a page of orders in a status, the PENDING orders overdue, and a page of a
// buyer's orders.
type Listing interface {
	Lookup(ctx context.Context, id string) (*inventory.Order, error)
	Orders(ctx context.Context, status inventory.Status, after string) ([]*inventory.Order, string, error)
	Overdue(ctx context.Context, before time.Time, after string) ([]*inventory.Order, string, error)
	UserOrders(ctx context.Context, userID, after string) ([]*inventory.Order, string, error)
}

// Merchant serves the merchant's order reads (docs/contract.md, "Merchant API").
type Merchant struct {
	store Listing
	now   func() time.Time
}

// NewMerchant returns the merchant's order reads over store, on the clock now (the
// store's: what is overdue is judged by it).
func NewMerchant(store Listing, now func() time.Time) *Merchant {
	return &Merchant{store: store, now: now}
}

// Order statuses RouteList lists (docs/contract.md, "Merchant API").
const (
	listPendingOverdue = "PENDING_OVERDUE"
	listRefundPending  = string(inventory.StatusRefundPending)
	listRefunding      = string(inventory.StatusRefunding)
)

// maxUserIDBytes bounds ?userId=: a buyer's id is a token's sub, which OpenID Connect
// Core 1.0 §2 keeps within 255 ASCII characters.
const maxUserIDBytes = 255

type orderPage struct {
	Orders []httpapi.MerchantOrderJSON `json:"orders"`
	Next   string                      `json:"next,omitempty"`
}

// List serves RouteList: ?status=PENDING_OVERDUE, REFUND_PENDING or REFUNDING, or
// ?userId= a buyer's orders (the user id the orders carry, newest first, 20 a page),
// their addresses masked (httpapi.ListedMerchantOrder), a page at a time (?after= the previous page's next; a cursor this route did not give:
// 400).
func (m *Merchant) List(ctx context.Context, req events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	var orders []*inventory.Order
	var next string
	var err error
	user, byUser := req.QueryStringParameters["userId"]
	switch status := req.QueryStringParameters["status"]; {
	case byUser && (status != "" || user == "" || len(user) > maxUserIDBytes || !utf8.ValidString(user)):
		err = inventory.InvalidError("give status or a userId of 1 to %d bytes, not both", maxUserIDBytes)
	case byUser:
		orders, next, err = m.store.UserOrders(ctx, user, req.QueryStringParameters["after"])
	case status == listPendingOverdue:
		orders, next, err = m.store.Overdue(ctx, m.now(), req.QueryStringParameters["after"])
	case status == listRefundPending, status == listRefunding:
		orders, next, err = m.store.Orders(ctx, inventory.Status(status), req.QueryStringParameters["after"])
	default:
		err = inventory.InvalidError("status must be PENDING_OVERDUE, REFUND_PENDING or REFUNDING, or give userId")
	}
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	out := orderPage{Orders: make([]httpapi.MerchantOrderJSON, len(orders)), Next: next}
	for i, o := range orders {
		out.Orders[i] = httpapi.ListedMerchantOrder(o)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

// Lookup serves RouteLookup: any order, with its owner and its whole address.
func (m *Merchant) Lookup(ctx context.Context, req events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	o, err := m.store.Lookup(ctx, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, httpapi.MerchantOrder(o)), nil
}
