// Package apigw maps API Gateway HTTP API requests (payload format 2.0) to the
// reservation store and back, following CONTRACT.md: routes, identity from the JWT
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

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys served by Handler (API Gateway RouteKey values, see template.yaml).
const (
	RouteCreateOrder = "POST /orders"
	RouteGetOrder    = "GET /orders/{orderId}"
	RouteGetSKU      = "GET /skus/{skuId}"
)

// MaxBodyBytes is the largest POST /orders body accepted (CONTRACT.md: 16 KiB).
const MaxBodyBytes = 16 << 10

// maxUserIDBytes bounds the sub claim stored in keys: OpenID Connect Core 1.0 §2 says
// sub "MUST NOT exceed 255 ASCII characters in length".
const maxUserIDBytes = 255

// BusyRetryAfterSeconds is the Retry-After, in seconds, sent with 503 BUSY.
const BusyRetryAfterSeconds = 1

// errUnauthorized: the request carries no usable identity.
var errUnauthorized = errors.New("unauthorized")

// Handler serves the createOrder function's routes.
type Handler struct {
	store *dynamo.Store
	log   *slog.Logger
}

// New returns a Handler over store, logging one JSON line per request to log.
func New(store *dynamo.Store, log *slog.Logger) *Handler {
	return &Handler{store: store, log: log}
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
	}
	resp := jsonResponse(status, orderView(order))
	resp.Headers["Location"] = "/orders/" + order.ID
	if replayed {
		resp.Headers["Idempotent-Replayed"] = "true"
	}
	return resp, nil
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
