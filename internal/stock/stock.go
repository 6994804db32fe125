// Package stock is SKUs and their stock (docs/design.md, "Quantities", "Hot SKUs"):
// what buyers see of a SKU (GET /skus/{skuId}), and the merchant's SKU routes under
// /admin/skus (create, change, list and read with the stock per shard, restock and
// write off, reshard, read the ledger), each recording the caller's IAM principal
// (the ledger entry's "by", the SKU record's updatedBy). Every write is idempotent.
// Its adapters are HTTP routes: Public.Show, and Merchant's routes (httpapi.AsMerchant
// gives them the principal). What it needs of the store is declared here, small.
package stock

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys served (API Gateway RouteKey values, see template.yaml).
const (
	RouteShow       = "GET /skus/{skuId}"
	RoutePublicList = "GET /skus"
	RouteCreate     = "POST /admin/skus"
	RouteList       = "GET /admin/skus"
	RouteGet        = "GET /admin/skus/{skuId}"
	RoutePatch      = "PATCH /admin/skus/{skuId}"
	RouteAdjust     = "POST /admin/skus/{skuId}/adjustments"
	RouteReshard    = "PUT /admin/skus/{skuId}/shards"
	RouteLedger     = "GET /admin/skus/{skuId}/ledger"
)

// MaxBodyBytes is the largest request body the merchant's SKU routes accept.
const MaxBodyBytes = 16 << 10

// Catalog is what the merchant's SKU routes need of the store (dynamo.Store).
type Catalog interface {
	SKU(ctx context.Context, id string) (*inventory.SKU, error)
	EnsureSKU(ctx context.Context, in inventory.NewSKU) (bool, error)
	PatchSKU(ctx context.Context, sku string, p inventory.SKUPatch, by string) (*inventory.SKU, error)
	Adjust(ctx context.Context, sku string, a inventory.Adjustment) (bool, error)
	Reshard(ctx context.Context, sku string, target int, by string) (*inventory.ReshardResult, error)
	SKUDetail(ctx context.Context, sku string) (*inventory.SKUDetail, error)
	SKUs(ctx context.Context, after string) (skus []*inventory.SKUDetail, next string, unreadable []string, err error)
	Ledger(ctx context.Context, sku, after string) ([]inventory.LedgerEntry, string, error)
}

// Merchant serves the merchant's SKU routes (docs/contract.md, "Merchant API").
type Merchant struct {
	store Catalog
	now   func() time.Time
}

// NewMerchant returns the merchant's SKU routes over store on the clock now (the
// store's).
func NewMerchant(store Catalog, now func() time.Time) *Merchant {
	return &Merchant{store: store, now: now}
}

// WithSKU passes route the {skuId} path parameter of a SKU's route (one outside the
// contract's pattern is answered 400 INVALID_REQUEST by httpapi before the route runs).
func WithSKU(route func(ctx context.Context, req events.APIGatewayV2HTTPRequest, by, id string) (events.APIGatewayV2HTTPResponse, error)) httpapi.MerchantRoute {
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
		return route(ctx, req, by, req.PathParameters["skuId"])
	}
}

// Create serves RouteCreate: 201 with the SKU created, 200 when the same request
// created it before, 409 SKU_EXISTS for another SKU of that id.
func (m *Merchant) Create(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
	in, err := decodeNewSKU(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	in.By = by
	created, err := m.store.EnsureSKU(ctx, in)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return m.answer(ctx, in.ID, map[bool]int{true: http.StatusCreated, false: http.StatusOK}[created])
}

// answer answers status with the SKU as it is now.
func (m *Merchant) answer(ctx context.Context, id string, status int) (events.APIGatewayV2HTTPResponse, error) {
	d, err := m.store.SKUDetail(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(status, skuView(d, m.now())), nil
}

// Get serves RouteGet (with WithSKU): the SKU with its stock per shard.
func (m *Merchant) Get(ctx context.Context, _ events.APIGatewayV2HTTPRequest, _, id string) (events.APIGatewayV2HTTPResponse, error) {
	return m.answer(ctx, id, http.StatusOK)
}

// List serves RouteList: a page of SKUs (?after= the previous page's next).
func (m *Merchant) List(ctx context.Context, req events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	skus, next, unreadable, err := m.store.SKUs(ctx, req.QueryStringParameters["after"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	noteUnreadable(ctx, unreadable)
	now := m.now()
	out := skuPage{SKUs: make([]skuJSON, len(skus)), Next: next}
	for i, d := range skus {
		out.SKUs[i] = skuView(d, now)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

// Patch serves RoutePatch (with WithSKU): the fields given changed; prices never touch
// orders already placed.
func (m *Merchant) Patch(ctx context.Context, req events.APIGatewayV2HTTPRequest, by, id string) (events.APIGatewayV2HTTPResponse, error) {
	p, err := decodePatch(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if _, err := m.store.PatchSKU(ctx, id, p, by); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return m.answer(ctx, id, http.StatusOK)
}

// Adjust serves RouteAdjust (with WithSKU): a restock or write-off applied once per
// adjustment id (201, then 200), 422 IDEMPOTENCY_KEY_REUSED for the id with another
// body, 409 STOCK_OUT for a write-off of more than is available.
func (m *Merchant) Adjust(ctx context.Context, req events.APIGatewayV2HTTPRequest, by, id string) (events.APIGatewayV2HTTPResponse, error) {
	a, err := decodeAdjustment(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	a.By = by
	applied, err := m.store.Adjust(ctx, id, a)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	d, err := m.store.SKUDetail(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := map[bool]int{true: http.StatusCreated, false: http.StatusOK}[applied]
	return httpapi.JSON(status, adjustmentJSON{
		AdjustmentID: a.ID, Delta: a.Delta, Reason: a.Reason, Replayed: !applied, SKU: skuView(d, m.now()),
	}), nil
}

// Reshard serves RouteReshard (with WithSKU): the units redistributed over the new
// number of shards in MOVE transactions.
func (m *Merchant) Reshard(ctx context.Context, req events.APIGatewayV2HTTPRequest, by, id string) (events.APIGatewayV2HTTPResponse, error) {
	n, err := decodeShards(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	res, err := m.store.Reshard(ctx, id, n, by)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, res), nil
}

// Ledger serves RouteLedger (with WithSKU): a page of the SKU's ledger entries.
func (m *Merchant) Ledger(ctx context.Context, req events.APIGatewayV2HTTPRequest, _, id string) (events.APIGatewayV2HTTPResponse, error) {
	if _, err := m.store.SKU(ctx, id); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	entries, next, err := m.store.Ledger(ctx, id, req.QueryStringParameters["after"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	out := ledgerPage{Entries: make([]entryJSON, len(entries)), Next: next}
	for i, e := range entries {
		out.Entries[i] = entryView(e)
	}
	return httpapi.JSON(http.StatusOK, out), nil
}

// noteUnreadable adds the SKU items a page skipped as unreadable to the request's log
// line: how many (unreadableSkus, the number an alarm counts) and their keys (SKU ids,
// never an attribute's value), for an operator to repair them.
func noteUnreadable(ctx context.Context, keys []string) {
	if len(keys) > 0 {
		httpapi.Annotate(ctx, slog.Int("unreadableSkus", len(keys)), slog.String("unreadableKeys", strings.Join(keys, " ")))
	}
}
