// Package notify is what WeChat Pay's two notification routes share (docs/contract.md,
// "POST /payments/wechatpay/notify" and ".../refund-notify"): the body read, verified
// and decrypted with one wechatpay verifier (Verified), and every failure answered the
// way WeChat Pay APIv3 expects (回调通知应答): {"code":"FAIL","message":…} with 401
// (not verified), 400 (malformed, another merchant's), a route's own 4xx, or 500 for
// anything else, so that WeChat Pay sends the notification again later.
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// MaxBodyBytes bounds a notification's body; WeChat Pay's are about 1 KiB (APIv3,
// 支付通知).
const MaxBodyBytes = 64 << 10

// Fail is a FAIL answer with status and a message for WeChat Pay, logged at level.
func Fail(status int, message string, level slog.Level, err error) *httpapi.Failure {
	return &httpapi.Failure{Status: status, Code: "FAIL", Message: message, Level: level, Err: err}
}

// Answer maps a failure of a notification route (or a panic) to its FAIL answer:
// anything not already a FAIL is 500, so that WeChat Pay resends later. Give it to
// httpapi.Handler.AnswerWith for a function serving the notification routes.
func Answer(err error) events.APIGatewayV2HTTPResponse {
	var f *httpapi.Failure
	if !errors.As(err, &f) {
		f = Fail(http.StatusInternalServerError, "internal error", slog.LevelError, err)
	}
	return httpapi.Answer(f)
}

// Verified verifies and parses a notification with parse (wechatpay.Verifier.Parse or
// ParseRefund: one verification path), mapping its refusals to FAIL answers: 401 not
// verified, 400 malformed or another merchant's, 413 over MaxBodyBytes.
func Verified[N any](ctx context.Context, req events.APIGatewayV2HTTPRequest, parse func(context.Context, wechatpay.Headers, []byte) (N, error)) (N, error) {
	var zero N
	body, err := httpapi.Body(req, MaxBodyBytes)
	var invalid *inventory.InvalidRequestError
	switch {
	case errors.As(err, &invalid):
		return zero, Fail(http.StatusBadRequest, invalid.Reason, slog.LevelWarn, err)
	case errors.Is(err, httpapi.ErrBodyTooLarge):
		return zero, Fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("body must not exceed %d bytes", MaxBodyBytes), slog.LevelWarn, err)
	}
	n, err := parse(ctx, wechatpay.HeadersFrom(req.Headers), body)
	switch {
	case errors.Is(err, wechatpay.ErrVerification):
		return zero, Fail(http.StatusUnauthorized, "signature verification failed", slog.LevelWarn, err)
	case errors.Is(err, wechatpay.ErrMerchantMismatch):
		return zero, Fail(http.StatusBadRequest, "notification is for another merchant", slog.LevelError, err)
	case err != nil:
		return zero, Fail(http.StatusBadRequest, "malformed notification", slog.LevelWarn, err)
	}
	return n, nil
}
