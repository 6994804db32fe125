// Package httpapi holds the mechanics every contract route of the API Gateway HTTP
// API (payload format 2.0) shares, whichever function serves it (docs/contract.md,
// "Conventions"): the route table that refuses foreign routes, the caller's identity
// from the JWT authorizer's sub claim, strict body decoding, panic recovery, one log
// line per request, the contract's order representation, and the one place that maps
// errors to contract answers and {"code","message","skuId"} error bodies, whose text
// never carries AWS error text.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/lambdaevent"
)

// Route serves one route key. An error it returns is answered by Answer.
type Route func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Handler serves the routes of one function.
type Handler struct {
	function string
	log      *slog.Logger
	routes   map[string]Route
	answer   func(error) events.APIGatewayV2HTTPResponse
}

// New returns a Handler for the Lambda function named function (e.g. createOrder)
// serving routes, keyed by API Gateway RouteKey ("POST /orders"; see template.yaml),
// answering their errors with Answer and logging one JSON line per request to log.
func New(function string, log *slog.Logger, routes map[string]Route) *Handler {
	return &Handler{function: function, log: log, routes: routes, answer: Answer}
}

// AnswerWith makes h answer route errors and recovered panics with answer instead of
// Answer: for a route whose caller is not the contract's client, such as WeChat Pay
// on the notify route, which wants {"code":"FAIL"} for every failure. It returns h.
func (h *Handler) AnswerWith(answer func(error) events.APIGatewayV2HTTPResponse) *Handler {
	h.answer = answer
	return h
}

// annotations collects the attributes a route adds to its request's log line.
type annotations struct{ attrs []slog.Attr }

type annotationsKey struct{}

// Annotate adds attrs (e.g. the out_trade_no a notification names) to the one log line
// Handler writes for the request served with ctx; outside a Handler it does nothing.
func Annotate(ctx context.Context, attrs ...slog.Attr) {
	if a, ok := ctx.Value(annotationsKey{}).(*annotations); ok {
		a.attrs = append(a.attrs, attrs...)
	}
}

// Handle serves one API Gateway HTTP API request. A route key the function does not
// serve (including the empty one of an SQS or scheduled event read as a request) is
// refused with a *lambdaevent.NotServedError and nothing else happens; API Gateway
// sends a function only its own routes, so this is a wiring mistake. Otherwise Handle
// never returns an error and never panics to its caller: failures become contract
// error responses (500 INTERNAL for the unexpected, with details only in the log). A
// path parameter that is no valid id of its kind is answered 400 INVALID_REQUEST before
// the route runs (CheckPath).
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, _ error) {
	route, ok := h.routes[req.RouteKey]
	if !ok {
		err := &lambdaevent.NotServedError{Function: h.function, Kind: lambdaevent.HTTP, Route: req.RouteKey}
		h.log.LogAttrs(ctx, slog.LevelError, "event refused", slog.String("error", err.Error()))
		return events.APIGatewayV2HTTPResponse{}, err
	}
	start := time.Now()
	notes := &annotations{}
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			resp = h.answer(err)
		}
		h.logRequest(ctx, req, resp, err, time.Since(start), notes.attrs)
	}()
	if err = CheckPath(req.PathParameters); err == nil {
		resp, err = route(context.WithValue(ctx, annotationsKey{}, notes), req)
	}
	if err != nil {
		resp = h.answer(err)
	}
	return resp, nil
}

// logRequest writes one structured line per request, with the route's annotations: at
// the level of a *Failure, else 5xx other than BUSY at error level with the underlying
// error, BUSY at warn, the rest at info.
func (h *Handler) logRequest(ctx context.Context, req events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse, err error, took time.Duration, notes []slog.Attr) {
	level := slog.LevelInfo
	var failure *Failure
	switch {
	case errors.As(err, &failure):
		level = failure.Level
	case resp.StatusCode == http.StatusServiceUnavailable:
		level = slog.LevelWarn
	case resp.StatusCode >= 500:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("route", req.RouteKey),
		slog.String("apiRequestId", req.RequestContext.RequestID),
		slog.Int("status", resp.StatusCode),
		slog.Float64("ms", float64(took.Microseconds())/1000),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	attrs = append(attrs, notes...)
	h.log.LogAttrs(ctx, level, "request", attrs...)
}

// ErrUnauthorized is answered 401 UNAUTHORIZED: the request carries no usable identity
// (or, on POST /auth/wechat, a login code WeChat refused).
var ErrUnauthorized = errors.New("unauthorized")
