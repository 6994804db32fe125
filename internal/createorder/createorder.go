// Package createorder is the createOrder function's HTTP API routes (CONTRACT.md):
// POST /orders reserves stock for a cart and opens a PENDING order, GET
// /orders/{orderId} reads the caller's order, GET /skus/{skuId} shows a SKU. Identity,
// decoding, logging and error answers are package httpapi's.
package createorder

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// Route keys served (API Gateway RouteKey values, see template.yaml).
const (
	RouteCreateOrder = "POST /orders"
	RouteGetOrder    = "GET /orders/{orderId}"
	RouteGetSKU      = "GET /skus/{skuId}"
)

// FunctionName is the Function dimension of createOrder's metrics.
const FunctionName = "createOrder"

// MaxBodyBytes is the largest POST /orders body accepted (CONTRACT.md: 16 KiB).
const MaxBodyBytes = 16 << 10

// maxIdempotencyKeyBytes bounds the Idempotency-Key header (CONTRACT.md: 1-64
// printable ASCII).
const maxIdempotencyKeyBytes = 64

// Config is createOrder's configuration, read from its environment by LoadConfig.
type Config struct {
	Tables         dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	PaymentTimeout time.Duration // PAYMENT_TIMEOUT_SECONDS: how long an order stays PENDING
	CloseQueueURL  string        // CLOSE_QUEUE_URL: the close-order queue
	// Shaping is ORDERS_PER_USER_SKU_PER_MINUTE: order requests one user may send for
	// one SKU per minute window, 0 (off) to inventory.MaxShapingPerMinute.
	Shaping inventory.Shaping
}

// LoadConfig reads createOrder's variables (template.yaml, CreateOrderFunction). It
// returns an *envvar.Error naming the first one missing or invalid.
func LoadConfig(get envvar.Lookup) (Config, error) {
	var c Config
	var err error
	if c.Tables, err = envvar.Tables(get); err != nil {
		return Config{}, err
	}
	if c.PaymentTimeout, err = envvar.Seconds(get, "PAYMENT_TIMEOUT_SECONDS"); err != nil {
		return Config{}, err
	}
	if c.CloseQueueURL, err = envvar.Required(get, "CLOSE_QUEUE_URL", "the close-order queue URL"); err != nil {
		return Config{}, err
	}
	if c.Shaping.PerMinute, err = envvar.Count(get, "ORDERS_PER_USER_SKU_PER_MINUTE", inventory.MaxShapingPerMinute); err != nil {
		return Config{}, err
	}
	return c, nil
}

type routes struct {
	store *dynamo.Store
	queue *closeq.Queue
	log   *slog.Logger
}

// New returns createOrder's handler over store, logging one JSON line per request to
// log. Each order request sends its order's close message on queue, delayed to the
// order's expiry, while the reservation runs (see scheduleClose); a nil queue sends
// none (the scheduled sweep still releases unpaid orders, up to a sweep period
// late). Any other route is refused (httpapi.Handler.Handle).
func New(store *dynamo.Store, queue *closeq.Queue, log *slog.Logger) *httpapi.Handler {
	r := &routes{store: store, queue: queue, log: log}
	return httpapi.New(FunctionName, log, map[string]httpapi.Route{
		RouteCreateOrder: r.createOrder,
		RouteGetOrder:    r.getOrder,
		RouteGetSKU:      r.getSKU,
	})
}

func (r *routes) createOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
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
	cart, err := decodeCart(body)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	slot, err := r.store.NewSlot()
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	scheduled := r.scheduleClose(ctx, slot)
	order, replayed, err := r.store.Reserve(ctx, dynamo.ReserveRequest{UserID: user, Cart: cart, IdempotencyKey: key, Slot: slot})
	sendErr := scheduled()
	busy := 0.0
	if errors.Is(err, inventory.ErrBusy) {
		busy = 1
	}
	metric.Emit(ctx, r.log, FunctionName, metric.Busy.Of(busy))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := http.StatusCreated
	if replayed {
		status = http.StatusOK
	} else if sendErr != nil {
		r.closeNotScheduled(ctx, order.ID, sendErr)
	}
	resp := httpapi.JSON(status, httpapi.Order(order))
	resp.Headers["Location"] = "/orders/" + order.ID
	if replayed {
		resp.Headers["Idempotent-Replayed"] = "true"
	}
	return resp, nil
}

func (r *routes) getOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
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

// skuJSON is the contract's SKU representation (CONTRACT.md, GET /skus/{skuId}).
type skuJSON struct {
	SKU       string `json:"skuId"`
	Name      string `json:"name"`
	Price     int64  `json:"price"` // fen
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	Available int    `json:"available"`
	// SaleStartsAt is when orders open (RFC 3339 UTC), when the SKU has a start time.
	SaleStartsAt string `json:"saleStartsAt,omitempty"`
}

func (r *routes) getSKU(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	id := req.PathParameters["skuId"]
	if !inventory.ValidSKUID(id) {
		return events.APIGatewayV2HTTPResponse{}, &inventory.SKUError{Err: inventory.ErrSKUNotFound}
	}
	sku, err := r.store.SKU(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	now := r.store.Now()
	v := skuJSON{
		SKU: sku.ID, Name: sku.Name, Price: sku.Price, Currency: sku.Currency,
		Status: string(sku.Status(now)), Available: sku.Sellable(now),
	}
	if !sku.SaleStartsAt.IsZero() {
		v.SaleStartsAt = sku.SaleStartsAt.UTC().Format(time.RFC3339Nano)
	}
	return httpapi.JSON(http.StatusOK, v), nil
}

// idempotencyKey reads the optional Idempotency-Key header: 1-64 printable ASCII.
// API Gateway HTTP APIs deliver header names in lower case.
func idempotencyKey(headers map[string]string) (string, error) {
	key, ok := headers["idempotency-key"]
	if !ok {
		return "", nil
	}
	if len(key) < 1 || len(key) > maxIdempotencyKeyBytes {
		return "", inventory.InvalidError("Idempotency-Key must be 1-%d printable ASCII characters", maxIdempotencyKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", inventory.InvalidError("Idempotency-Key must be 1-%d printable ASCII characters", maxIdempotencyKeyBytes)
		}
	}
	return key, nil
}
