// Package admin is the admin function's HTTP API routes, the merchant API under
// /admin/ (CONTRACT.md, "Merchant API"): create, change and list SKUs, restock and
// write off stock, reshard, read ledgers and orders, refund orders, run reconcile. The routes use
// AWS_IAM authorization; the caller's IAM principal ARN is recorded with every change
// (the ledger entry's "by", the SKU record's updatedBy). Every write is idempotent.
// Identity, logging and error answers are package httpapi's.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
)

// FunctionName is the admin function's short name, in logs and refusals.
const FunctionName = "admin"

// Route keys served (API Gateway RouteKey values, see template.yaml).
const (
	RouteCreateSKU       = "POST /admin/skus"
	RouteListSKUs        = "GET /admin/skus"
	RouteGetSKU          = "GET /admin/skus/{skuId}"
	RoutePatchSKU        = "PATCH /admin/skus/{skuId}"
	RouteAdjust          = "POST /admin/skus/{skuId}/adjustments"
	RouteReshard         = "PUT /admin/skus/{skuId}/shards"
	RouteLedger          = "GET /admin/skus/{skuId}/ledger"
	RouteListOrders      = "GET /admin/orders"
	RouteGetOrder        = "GET /admin/orders/{orderId}"
	RouteRefundOrder     = "POST /admin/orders/{orderId}/refund"
	RouteReconcile       = "POST /admin/reconcile"
	RouteLatestReconcile = "GET /admin/reconcile/latest"
)

// MaxBodyBytes is the largest request body the admin routes accept.
const MaxBodyBytes = 16 << 10

// Config is the admin function's configuration: the tables and reconcile's settings
// (POST /admin/reconcile runs the same reconciliation as the reconcile function), and
// the refund queue.
type Config struct {
	reconcile.FunctionConfig
	// RefundQueueURL is REFUND_QUEUE_URL: where operators' refunds are sent for the
	// money step.
	RefundQueueURL string
}

// LoadConfig reads the admin function's variables (template.yaml, AdminFunction):
// reconcile's (reconcile.LoadFunctionConfig) and REFUND_QUEUE_URL, naming the first
// one missing or invalid.
func LoadConfig(get envvar.Lookup) (Config, error) {
	rc, err := reconcile.LoadFunctionConfig(get)
	if err != nil {
		return Config{}, err
	}
	url, err := envvar.Required(get, "REFUND_QUEUE_URL", "the refund queue URL")
	return Config{FunctionConfig: rc, RefundQueueURL: url}, err
}

// Reconciler runs one reconciliation (reconcile.Reconciler).
type Reconciler interface {
	Run(ctx context.Context) (*reconcile.Report, error)
}

type routes struct {
	store   *dynamo.Store
	recon   Reconciler
	refunds *refunds.Starter
}

// New returns the admin function's handler over store, running reconciliations with
// recon, beginning refunds with refunds and logging one JSON line per request to log.
// Any other route is refused (httpapi.Handler.Handle).
func New(store *dynamo.Store, recon Reconciler, refunds *refunds.Starter, log *slog.Logger) *httpapi.Handler {
	r := &routes{store: store, recon: recon, refunds: refunds}
	return httpapi.New(FunctionName, log, map[string]httpapi.Route{
		RouteCreateSKU:       r.withPrincipal(r.createSKU),
		RouteListSKUs:        r.withPrincipal(r.listSKUs),
		RouteGetSKU:          r.withPrincipal(withSKU(r.getSKU)),
		RoutePatchSKU:        r.withPrincipal(withSKU(r.patchSKU)),
		RouteAdjust:          r.withPrincipal(withSKU(r.adjust)),
		RouteReshard:         r.withPrincipal(withSKU(r.reshard)),
		RouteLedger:          r.withPrincipal(withSKU(r.ledger)),
		RouteListOrders:      r.withPrincipal(r.listOrders),
		RouteGetOrder:        r.withPrincipal(r.getOrder),
		RouteRefundOrder:     r.withPrincipal(r.refundOrder),
		RouteReconcile:       r.withPrincipal(r.runReconcile),
		RouteLatestReconcile: r.withPrincipal(r.latestReconcile),
	})
}

// call is one admin request: its event and the caller's principal ARN.
type call struct {
	events.APIGatewayV2HTTPRequest
	by string
}

type adminRoute func(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error)

// withPrincipal answers 401 to a request without an IAM principal, and passes the
// principal on otherwise.
func (r *routes) withPrincipal(fn adminRoute) httpapi.Route {
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		by, err := httpapi.Principal(req)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return fn(ctx, call{APIGatewayV2HTTPRequest: req, by: by})
	}
}

// withSKU passes fn the {skuId} path parameter of a SKU's route; one outside the
// contract's pattern names no SKU (404 SKU_NOT_FOUND).
func withSKU(fn func(ctx context.Context, c call, id string) (events.APIGatewayV2HTTPResponse, error)) adminRoute {
	return func(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error) {
		id := c.PathParameters["skuId"]
		if !inventory.ValidSKUID(id) {
			return events.APIGatewayV2HTTPResponse{}, &inventory.SKUError{Err: inventory.ErrSKUNotFound}
		}
		return fn(ctx, c, id)
	}
}

func (r *routes) createSKU(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error) {
	in, err := decodeNewSKU(c.APIGatewayV2HTTPRequest)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	in.By = c.by
	created, err := r.store.EnsureSKU(ctx, in)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.skuAnswer(ctx, in.ID, map[bool]int{true: http.StatusCreated, false: http.StatusOK}[created])
}

// skuAnswer answers status with the SKU as it is now.
func (r *routes) skuAnswer(ctx context.Context, id string, status int) (events.APIGatewayV2HTTPResponse, error) {
	d, err := r.store.SKUDetail(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(status, skuView(d, r.store.Now())), nil
}

func (r *routes) getSKU(ctx context.Context, _ call, id string) (events.APIGatewayV2HTTPResponse, error) {
	return r.skuAnswer(ctx, id, http.StatusOK)
}

func (r *routes) listSKUs(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error) {
	skus, next, err := r.store.SKUs(ctx, c.QueryStringParameters["after"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	now := r.store.Now()
	out := skuPage{SKUs: make([]skuJSON, len(skus)), Next: next}
	for i, d := range skus {
		out.SKUs[i] = skuView(d, now)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

func (r *routes) patchSKU(ctx context.Context, c call, id string) (events.APIGatewayV2HTTPResponse, error) {
	p, err := decodePatch(c.APIGatewayV2HTTPRequest)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if _, err := r.store.PatchSKU(ctx, id, p, c.by); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.skuAnswer(ctx, id, http.StatusOK)
}

func (r *routes) adjust(ctx context.Context, c call, id string) (events.APIGatewayV2HTTPResponse, error) {
	a, err := decodeAdjustment(c.APIGatewayV2HTTPRequest)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	a.By = c.by
	applied, err := r.store.Adjust(ctx, id, a)
	if errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		// The route has no Idempotency-Key header: the answer names the adjustmentId.
		return events.APIGatewayV2HTTPResponse{}, &httpapi.Failure{Status: http.StatusUnprocessableEntity, Code: "IDEMPOTENCY_KEY_REUSED",
			Message: fmt.Sprintf("adjustment id %s was used with a different request", a.ID), Err: err}
	}
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	d, err := r.store.SKUDetail(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := map[bool]int{true: http.StatusCreated, false: http.StatusOK}[applied]
	return httpapi.JSON(status, adjustmentJSON{
		AdjustmentID: a.ID, Delta: a.Delta, Reason: a.Reason, Replayed: !applied, SKU: skuView(d, r.store.Now()),
	}), nil
}

func (r *routes) reshard(ctx context.Context, c call, id string) (events.APIGatewayV2HTTPResponse, error) {
	n, err := decodeShards(c.APIGatewayV2HTTPRequest)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	res, err := r.store.Reshard(ctx, id, n, c.by)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, res), nil
}

func (r *routes) ledger(ctx context.Context, c call, id string) (events.APIGatewayV2HTTPResponse, error) {
	if _, err := r.store.SKU(ctx, id); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	entries, next, err := r.store.Ledger(ctx, id, c.QueryStringParameters["after"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	out := ledgerPage{Entries: make([]entryJSON, len(entries)), Next: next}
	for i, e := range entries {
		out.Entries[i] = entryView(e)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

// Order statuses GET /admin/orders lists (CONTRACT.md).
const (
	listPendingOverdue = "PENDING_OVERDUE"
	listRefundPending  = string(inventory.StatusRefundPending)
	listRefunding      = string(inventory.StatusRefunding)
)

func (r *routes) listOrders(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error) {
	var orders []*inventory.Order
	var next string
	var err error
	switch status := c.QueryStringParameters["status"]; status {
	case listPendingOverdue:
		orders, err = r.store.Overdue(ctx, r.store.Now())
	case listRefundPending, listRefunding:
		orders, next, err = r.store.Orders(ctx, inventory.Status(status), c.QueryStringParameters["after"])
	default:
		err = inventory.InvalidError("status must be PENDING_OVERDUE, REFUND_PENDING or REFUNDING")
	}
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	out := orderPage{Orders: make([]orderJSON, len(orders)), Next: next}
	for i, o := range orders {
		out.Orders[i] = orderView(o)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

func (r *routes) getOrder(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error) {
	o, err := r.store.Lookup(ctx, c.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, orderView(o)), nil
}

// refundOrder serves POST /admin/orders/{orderId}/refund (CONTRACT.md): any PAID or
// REFUND_PENDING order goes REFUNDING — with RETURN entries when restock is true and
// the order held stock — recorded with the caller's principal and reason, and its
// refund is put on the refund queue: 202 with the order. Already REFUNDING: 202,
// nothing twice; REFUNDED: 200. PENDING or CANCELLED: 409 REFUND_NOT_ALLOWED.
func (r *routes) refundOrder(ctx context.Context, c call) (events.APIGatewayV2HTTPResponse, error) {
	o, err := r.store.Lookup(ctx, c.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	req, err := decodeRefund(c.APIGatewayV2HTTPRequest)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	req.By = c.by
	if o, err = r.refunds.Order(ctx, o, req, 0); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := http.StatusAccepted
	if o.Status == inventory.StatusRefunded {
		status = http.StatusOK
	}
	return httpapi.JSON(status, orderView(o)), nil
}

func (r *routes) runReconcile(ctx context.Context, _ call) (events.APIGatewayV2HTTPResponse, error) {
	rep, err := r.recon.Run(ctx)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, rep), nil
}

func (r *routes) latestReconcile(ctx context.Context, _ call) (events.APIGatewayV2HTTPResponse, error) {
	data, err := r.store.LatestReport(ctx)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if data == nil {
		return httpapi.ErrorResponse(http.StatusNotFound, "NOT_FOUND", "reconcile has not run yet", ""), nil
	}
	return httpapi.JSON(http.StatusOK, json.RawMessage(data)), nil
}
