package orders

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// Route keys of placing and reading a buyer's orders (API Gateway RouteKey values, see
// template.yaml).
const (
	RoutePlace = "POST /orders"
	RouteGet   = "GET /orders/{orderId}"
	RouteMine  = "GET /orders"
	// RouteAddress is the owner's change of an order's address.
	RouteAddress = "PATCH /orders/{orderId}/address"
	// RouteAddressPut is RouteAddress for the mini-program, whose wx.request sends no
	// PATCH (its method takes OPTIONS, GET, HEAD, POST, PUT, DELETE, TRACE and CONNECT:
	// "wx.request", object.method,
	// https://developers.weixin.qq.com/miniprogram/dev/api/network/request/wx.request.html).
	// The body is the whole address either way, so PUT's replace is what PATCH does;
	// ChangeAddress serves both.
	RouteAddressPut = "PUT /orders/{orderId}/address"
)

// MaxBodyBytes is the largest POST /orders body accepted (docs/contract.md, "POST
// /orders": 16 KiB).
const MaxBodyBytes = 16 << 10

// maxIdempotencyKeyBytes bounds the Idempotency-Key header (docs/contract.md, "POST
// /orders": 1-64 printable ASCII).
const maxIdempotencyKeyBytes = 64

// Placing is what placing and reading a buyer's orders needs of the store
// (dynamo.Store): an order's slot (id and times; a keyed request's id is its key's),
// the reservation, the owner's read,
// and a page of the owner's orders, newest first.
type Placing interface {
	NewSlot(user, key string) (inventory.OrderSlot, error)
	Reserve(ctx context.Context, req inventory.ReserveRequest) (*inventory.Order, bool, error)
	KeyedOrder(ctx context.Context, req inventory.ReserveRequest) (*inventory.Order, bool, error)
	Order(ctx context.Context, userID, id string) (*inventory.Order, error)
	UserOrders(ctx context.Context, userID, after string) ([]*inventory.Order, string, error)
	SetAddress(ctx context.Context, userID, id string, a inventory.Address) (*inventory.Order, error)
}

// Checkout serves RoutePlace, RouteGet and RouteMine.
type Checkout struct {
	store    Placing
	queue    *closeq.Queue
	log      *slog.Logger
	function string
	// templates are the subscribe-message template ids an order may carry; placed is
	// called with each newly placed order (see WithSubscriptions).
	templates []string
	placed    func(context.Context, *inventory.Order)
	// admissions check the Admission-Token header (see WithAdmissions).
	admissions *admission.Keys
	// risk is the scalper check (WithRiskCheck); nil checks nobody.
	risk *RiskCheck
}

// WithAdmissions makes r read POST /orders' Admission-Token header, checked with
// keys, into the reservation's admission (an order of a SKU with a waiting room needs
// one). Without it such orders are refused ADMISSION_REQUIRED.
func (r *Checkout) WithAdmissions(keys *admission.Keys) *Checkout {
	r.admissions = keys
	return r
}

// WithSubscriptions makes r accept the optional "subscriptions" of POST /orders,
// template ids among templates, kept on the order, and call placed (when not nil)
// with every order newly placed (not a replay), after the reservation: the pay
// reminder is scheduled there (notices.Schedule). placed must not fail the order.
func (r *Checkout) WithSubscriptions(templates []string, placed func(context.Context, *inventory.Order)) *Checkout {
	r.templates, r.placed = templates, placed
	return r
}

// NewCheckout returns the routes placing and reading orders over store. Each order
// request sends its order's close message on queue, delayed to the order's expiry,
// while the reservation runs (see scheduleClose); a nil queue sends none (the
// scheduled sweep still releases unpaid orders, up to a sweep period late). Requests
// are logged to log, with metrics whose Function dimension is function (the serving
// function's short name).
func NewCheckout(store Placing, queue *closeq.Queue, log *slog.Logger, function string) *Checkout {
	return &Checkout{store: store, queue: queue, log: log, function: function}
}

// Place serves RoutePlace (docs/contract.md, "POST /orders"): the cart reserved whole
// in one transaction and a PENDING order opened (201), or the order of an idempotent
// replay (200, Idempotent-Replayed: true), or the contract's refusal with nothing
// reserved.
func (r *Checkout) Place(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	key, err := idempotencyKey(req.Headers)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	body, err := httpapi.Body(req, MaxBodyBytes)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	in, err := decodeOrder(body, r.templates)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	slot, err := r.store.NewSlot(user, key)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	// After the slot, so that a SKU record the check reads is no older than the order
	// (the reservation re-reads a cached record older than its order before refusing).
	if r.risk != nil {
		if err := r.risk.Check(ctx, req, user, skusOf(in.cart)...); err != nil {
			return r.refusedKeyed(ctx, inventory.ReserveRequest{UserID: user, Cart: in.cart, IdempotencyKey: key}, err)
		}
	}
	scheduled := r.scheduleClose(ctx, slot)
	order, replayed, err := r.store.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: in.cart, IdempotencyKey: key, Slot: slot, Subscriptions: in.subs, Address: in.address,
		Admission: r.admissions.FromHeader(req.Headers, slot.CreatedAt)})
	sendErr := scheduled()
	busy := 0.0
	if errors.Is(err, inventory.ErrBusy) {
		busy = 1
	}
	metric.Emit(ctx, r.log, r.function, metric.Busy.Of(busy))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if !replayed && sendErr != nil {
		r.closeNotScheduled(ctx, order.ID, sendErr)
	}
	if !replayed && r.placed != nil {
		r.placed(ctx, order)
	}
	return placedAnswer(order, replayed), nil
}

// refusedKeyed answers a request the scalper check refused with refusal, unless it is
// a copy of a keyed request that already got its order (placed before the buyer was
// rated, or before the threshold was set): that copy gets the order back, as the
// reservation answers a refused copy (Placing.KeyedOrder).
func (r *Checkout) refusedKeyed(ctx context.Context, req inventory.ReserveRequest, refusal error) (events.APIGatewayV2HTTPResponse, error) {
	if req.IdempotencyKey == "" || !errors.Is(refusal, inventory.ErrRiskRejected) {
		return events.APIGatewayV2HTTPResponse{}, refusal
	}
	order, replayed, err := r.store.KeyedOrder(ctx, req)
	switch {
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, err
	case order == nil:
		return events.APIGatewayV2HTTPResponse{}, refusal
	}
	return placedAnswer(order, replayed), nil
}

// placedAnswer is POST /orders' answer with order: 201, or 200 with
// Idempotent-Replayed: true when replayed.
func placedAnswer(order *inventory.Order, replayed bool) events.APIGatewayV2HTTPResponse {
	status := http.StatusCreated
	if replayed {
		status = http.StatusOK
	}
	resp := httpapi.JSON(status, httpapi.Order(order))
	resp.Headers["Location"] = "/orders/" + order.ID
	if replayed {
		resp.Headers["Idempotent-Replayed"] = "true"
	}
	return resp
}

// Get serves RouteGet (docs/contract.md, "GET /orders/{orderId}"): the caller's own
// order, 404 ORDER_NOT_FOUND for anyone else's or an unknown one.
func (r *Checkout) Get(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err := r.store.Order(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, httpapi.Order(order)), nil
}

// maxAddressBodyBytes bounds a PATCH or PUT /orders/{orderId}/address body.
const maxAddressBodyBytes = 4 << 10

// ChangeAddress serves RouteAddress and RouteAddressPut alike (docs/contract.md,
// "PATCH /orders/{orderId}/address"):
// the body is an address as POST /orders takes it (DecodeAddress); the caller's own
// order gets it while it is PENDING or PAID and nothing of it has shipped (200 with the
// order; the same address again is 200 too, whenever); 409 ADDRESS_LOCKED after the
// first shipment or once closed; 404 ORDER_NOT_FOUND for anyone else's order.
func (r *Checkout) ChangeAddress(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	body, err := httpapi.Body(req, maxAddressBodyBytes)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if err := httpapi.NoDuplicateKeys(body); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	var wrapped struct {
		Address json.RawMessage `json:"address"`
	}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Address != nil {
		return events.APIGatewayV2HTTPResponse{}, inventory.InvalidError(`the body is the address itself, not {"address": …}: %s`, AddressShape)
	}
	a, err := DecodeAddress(body)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err := r.store.SetAddress(ctx, user, req.PathParameters["orderId"], *a)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, httpapi.Order(order)), nil
}

// buyerPage is one page of RouteMine.
type buyerPage struct {
	Orders []httpapi.OrderJSON `json:"orders"`
	Next   string              `json:"next,omitempty"` // the after= of the next page; absent on the last
}

// Mine serves RouteMine (docs/contract.md, "GET /orders"): a page of the caller's own
// orders (their addresses masked, httpapi.ListedOrder), newest first (?after= the previous page's next); 400 INVALID_REQUEST for a
// cursor that is not one.
func (r *Checkout) Mine(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	orders, next, err := r.store.UserOrders(ctx, user, req.QueryStringParameters["after"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	out := buyerPage{Orders: make([]httpapi.OrderJSON, len(orders)), Next: next}
	for i, o := range orders {
		out.Orders[i] = httpapi.ListedOrder(o)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

// idempotencyKey reads the optional Idempotency-Key header: 1-64 printable ASCII
// characters other than a comma. API Gateway HTTP APIs deliver header names in lower
// case and join a header sent twice with commas (payload format 2.0: "Duplicate
// headers are combined with commas", "Working with AWS Lambda proxy integrations for
// HTTP APIs"), so a comma means two keys, and which one the client meant is unknown.
func idempotencyKey(headers map[string]string) (string, error) {
	key, ok := headers["idempotency-key"]
	if !ok {
		return "", nil
	}
	valid := len(key) >= 1 && len(key) <= maxIdempotencyKeyBytes
	for i := 0; valid && i < len(key); i++ {
		valid = key[i] >= 0x20 && key[i] <= 0x7e && key[i] != ','
	}
	if !valid {
		return "", inventory.InvalidError("Idempotency-Key must be one header of 1-%d printable ASCII characters without a comma", maxIdempotencyKeyBytes)
	}
	return key, nil
}
