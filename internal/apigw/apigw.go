// Package apigw maps API Gateway HTTP API requests (payload format 2.0) to the
// store and back, following CONTRACT.md: routes, identity from the JWT
// authorizer's sub claim, strict input validation, and {"code","message","skuId"}
// errors whose text never carries AWS error text.
package apigw

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// Route keys served by Handler (API Gateway RouteKey values, see template.yaml).
const (
	RouteCreateOrder = "POST /orders"
	RouteGetOrder    = "GET /orders/{orderId}"
	RouteGetSKU      = "GET /skus/{skuId}"
	RouteCancelOrder = "POST /orders/{orderId}/cancel"
)

// scheduleTimeout bounds the close-message send after a reservation: the order is
// already committed, so a slow queue must not hold the buyer's answer for long.
const scheduleTimeout = 2 * time.Second

// MaxBodyBytes is the largest POST /orders body accepted (CONTRACT.md: 16 KiB).
const MaxBodyBytes = 16 << 10

// maxUserIDBytes bounds the sub claim stored in keys: OpenID Connect Core 1.0 §2 says
// sub "MUST NOT exceed 255 ASCII characters in length".
const maxUserIDBytes = 255

// BusyRetryAfterSeconds is the Retry-After, in seconds, sent with 503 BUSY.
const BusyRetryAfterSeconds = 1

// errUnauthorized: the request carries no usable identity.
var errUnauthorized = errors.New("unauthorized")

// Handler serves the HTTP routes of createOrder (POST /orders, GET /orders/{orderId},
// GET /skus/{skuId}) and of closeOrder (POST /orders/{orderId}/cancel); API Gateway
// sends each function only its own routes (template.yaml).
type Handler struct {
	store    *dynamo.Store
	queue    *closeq.Queue
	log      *slog.Logger
	function string
}

// New returns a Handler over store for the Lambda function named function (the
// Function dimension of its metrics), logging one JSON line per request to log. Each
// new order gets a close message on queue, delayed to its expiry; a nil queue sends
// none (the scheduled sweep still releases unpaid orders, up to a sweep period late).
func New(store *dynamo.Store, queue *closeq.Queue, log *slog.Logger, function string) *Handler {
	return &Handler{store: store, queue: queue, log: log, function: function}
}

// Handle serves one API Gateway HTTP API request. It never returns an error and never
// panics to its caller: failures become contract error responses (500 INTERNAL for the
// unexpected, with details only in the log).
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, _ error) {
	start := time.Now()
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			resp = h.fail(err)
		}
		h.logRequest(ctx, req, resp, err, time.Since(start))
	}()
	switch req.RouteKey {
	case RouteCreateOrder:
		resp, err = h.createOrder(ctx, req)
	case RouteGetOrder:
		resp, err = h.getOrder(ctx, req)
	case RouteGetSKU:
		resp, err = h.getSKU(ctx, req)
	case RouteCancelOrder:
		resp, err = h.cancelOrder(ctx, req)
	default:
		resp = errorResponse(http.StatusNotFound, "NOT_FOUND", "no such route", "")
	}
	if err != nil {
		resp = h.fail(err)
	}
	return resp, nil
}

func (h *Handler) createOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := userID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	key, err := idempotencyKey(req.Headers)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	body, err := requestBody(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	cart, err := decodeCart(body)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, replayed, err := h.store.Reserve(ctx, dynamo.ReserveRequest{UserID: user, Cart: cart, IdempotencyKey: key})
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := http.StatusCreated
	if replayed {
		status = http.StatusOK
	} else {
		h.scheduleClose(ctx, order)
	}
	resp := jsonResponse(status, orderView(order))
	resp.Headers["Location"] = "/orders/" + order.ID
	if replayed {
		resp.Headers["Idempotent-Replayed"] = "true"
	}
	return resp, nil
}

// scheduleClose sends the new order's close message. A failed send never fails the
// order (the sweep releases it, up to a sweep period late): it is logged at warn level
// and counted in the CloseScheduleFailed metric.
func (h *Handler) scheduleClose(ctx context.Context, order *inventory.Order) {
	if h.queue == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, scheduleTimeout)
	defer cancel()
	if _, err := h.queue.Schedule(ctx, closeq.Message{OrderID: order.ID, ExpiresAt: order.ExpiresAt}); err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "close message not sent; the sweep will release the order",
			slog.String("orderId", order.ID), slog.String("error", err.Error()))
		metric.Emit(ctx, h.log, h.function, metric.Of("CloseScheduleFailed", metric.Count, 1))
	}
}

func (h *Handler) cancelOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := userID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, _, err := h.store.Cancel(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return jsonResponse(http.StatusOK, orderView(order)), nil
}

func (h *Handler) getOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := userID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err := h.store.Order(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return jsonResponse(http.StatusOK, orderView(order)), nil
}

func (h *Handler) getSKU(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	id := req.PathParameters["skuId"]
	if !inventory.ValidSKUID(id) {
		return events.APIGatewayV2HTTPResponse{}, &inventory.SKUError{Err: inventory.ErrSKUNotFound}
	}
	sku, err := h.store.SKU(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return jsonResponse(http.StatusOK, skuView{
		SKU: sku.ID, Name: sku.Name, Price: sku.Price, Currency: sku.Currency,
		Status: string(sku.Status()), Available: sku.Sellable(),
	}), nil
}

// userID reads the caller from the JWT authorizer's sub claim (CONTRACT.md, Identity).
func userID(req events.APIGatewayV2HTTPRequest) (string, error) {
	auth := req.RequestContext.Authorizer
	if auth == nil || auth.JWT == nil {
		return "", errUnauthorized
	}
	sub := auth.JWT.Claims["sub"]
	if sub == "" || len(sub) > maxUserIDBytes || !utf8.ValidString(sub) {
		return "", errUnauthorized
	}
	for _, r := range sub {
		if unicode.IsControl(r) {
			return "", errUnauthorized
		}
	}
	return sub, nil
}

// idempotencyKey reads the optional Idempotency-Key header: 1-64 printable ASCII.
// API Gateway HTTP APIs deliver header names in lower case.
func idempotencyKey(headers map[string]string) (string, error) {
	key, ok := headers["idempotency-key"]
	if !ok {
		return "", nil
	}
	if len(key) < 1 || len(key) > 64 {
		return "", inventory.InvalidError("Idempotency-Key must be 1-64 printable ASCII characters")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", inventory.InvalidError("Idempotency-Key must be 1-64 printable ASCII characters")
		}
	}
	return key, nil
}

// requestBody returns the raw body, decoding API Gateway's base64 form, and enforces
// MaxBodyBytes.
func requestBody(req events.APIGatewayV2HTTPRequest) ([]byte, error) {
	if len(req.Body) > base64.StdEncoding.EncodedLen(MaxBodyBytes) {
		return nil, inventory.InvalidError("body must not exceed %d bytes", MaxBodyBytes)
	}
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return nil, inventory.InvalidError("body is not valid base64")
		}
	}
	if len(body) > MaxBodyBytes {
		return nil, inventory.InvalidError("body must not exceed %d bytes", MaxBodyBytes)
	}
	return body, nil
}
