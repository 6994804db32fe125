package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
)

// orderJSON is the contract's order representation; times are RFC 3339 UTC, money fen.
type orderJSON struct {
	OrderID       string     `json:"orderId"`
	Status        string     `json:"status"`
	Items         []itemJSON `json:"items"`
	Amount        int64      `json:"amount"`
	Currency      string     `json:"currency"`
	CreatedAt     string     `json:"createdAt"`
	ExpiresAt     string     `json:"expiresAt"`
	PaidAt        string     `json:"paidAt,omitempty"`
	CancelledAt   string     `json:"cancelledAt,omitempty"`
	CancelReason  string     `json:"cancelReason,omitempty"`
	TransactionID string     `json:"transactionId,omitempty"`
}

type itemJSON struct {
	SKU       string `json:"skuId"`
	Qty       int    `json:"qty"`
	UnitPrice int64  `json:"unitPrice"`
}

type skuView struct {
	SKU       string `json:"skuId"`
	Name      string `json:"name"`
	Price     int64  `json:"price"`
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	Available int    `json:"available"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	SKU     string `json:"skuId,omitempty"`
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optional(t *time.Time) string {
	if t == nil {
		return ""
	}
	return rfc3339(*t)
}

// orderView is the contract's view of an order. A PAID order shows no cancellation:
// one paid after its release was cancelled once, which the ledger keeps.
func orderView(o *inventory.Order) orderJSON {
	if o.Status == inventory.StatusPaid {
		paid := *o
		paid.CancelledAt, paid.CancelReason = nil, ""
		o = &paid
	}
	v := orderJSON{
		OrderID: o.ID, Status: string(o.Status), Amount: o.Amount, Currency: o.Currency,
		CreatedAt: rfc3339(o.CreatedAt), ExpiresAt: rfc3339(o.ExpiresAt),
		PaidAt: optional(o.PaidAt), CancelledAt: optional(o.CancelledAt),
		CancelReason: string(o.CancelReason), TransactionID: o.TransactionID,
		Items: make([]itemJSON, len(o.Items)),
	}
	for i, it := range o.Items {
		v.Items[i] = itemJSON{SKU: it.SKU, Qty: it.Qty, UnitPrice: it.UnitPrice}
	}
	return v
}

func jsonResponse(status int, v any) events.APIGatewayV2HTTPResponse {
	body, err := json.Marshal(v)
	if err != nil { // only our own plain structs are marshalled
		status, body = http.StatusInternalServerError, []byte(`{"code":"INTERNAL","message":"internal error"}`)
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json"},
		Body:       string(body),
	}
}

func errorResponse(status int, code, message, sku string) events.APIGatewayV2HTTPResponse {
	return jsonResponse(status, errorJSON{Code: code, Message: message, SKU: sku})
}

// fail maps an error to its contract response. Only messages written by this project
// reach the client; anything else becomes 500 INTERNAL.
func (h *Handler) fail(err error) events.APIGatewayV2HTTPResponse {
	var skuErr *inventory.SKUError
	sku := ""
	if errors.As(err, &skuErr) {
		sku = skuErr.SKU
	}
	switch {
	case errors.Is(err, errUnauthorized):
		return errorResponse(http.StatusUnauthorized, "UNAUTHORIZED", "sign in first: the request carries no valid caller identity", "")
	case errors.Is(err, inventory.ErrInvalidRequest):
		return errorResponse(http.StatusBadRequest, "INVALID_REQUEST", strings.TrimPrefix(err.Error(), inventory.ErrInvalidRequest.Error()+": "), "")
	case errors.Is(err, inventory.ErrSKUNotFound):
		return errorResponse(http.StatusNotFound, "SKU_NOT_FOUND", "no such SKU", sku)
	case errors.Is(err, inventory.ErrStockOut):
		return errorResponse(http.StatusConflict, "STOCK_OUT", "not enough stock available", sku)
	case errors.Is(err, inventory.ErrOffSale):
		return errorResponse(http.StatusConflict, "SKU_OFF_SALE", "this SKU is not on sale", sku)
	case errors.Is(err, inventory.ErrLimitExceeded):
		return errorResponse(http.StatusConflict, "LIMIT_EXCEEDED", "per-user purchase limit reached for this SKU", sku)
	case errors.Is(err, inventory.ErrIdempotencyKeyReused):
		return errorResponse(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used with a different request", "")
	case errors.Is(err, inventory.ErrNotCancellable):
		return errorResponse(http.StatusConflict, "ORDER_NOT_CANCELLABLE", "this order is paid and can no longer be cancelled", "")
	case errors.Is(err, inventory.ErrOrderNotFound):
		return errorResponse(http.StatusNotFound, "ORDER_NOT_FOUND", "no such order", "")
	case errors.Is(err, inventory.ErrBusy):
		resp := errorResponse(http.StatusServiceUnavailable, "BUSY", "the store is busy; nothing was changed, please retry", "")
		resp.Headers["Retry-After"] = strconv.Itoa(BusyRetryAfterSeconds)
		return resp
	default:
		return errorResponse(http.StatusInternalServerError, "INTERNAL", "internal error", "")
	}
}

// logRequest writes one structured line per request: 5xx other than BUSY at error
// level with the underlying error, BUSY at warn, the rest at info.
func (h *Handler) logRequest(ctx context.Context, req events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse, err error, took time.Duration) {
	level := slog.LevelInfo
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		level = slog.LevelWarn
	case resp.StatusCode >= 500:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("route", req.RouteKey),
		slog.String("requestId", req.RequestContext.RequestID),
		slog.Int("status", resp.StatusCode),
		slog.Float64("ms", float64(took.Microseconds())/1000),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	h.log.LogAttrs(ctx, level, "request", attrs...)
}
