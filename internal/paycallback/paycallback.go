// Package paycallback is the payCallback function: it takes WeChat Pay APIv3 payment
// notifications on POST /payments/wechatpay/notify (CONTRACT.md), verifies and
// decrypts them (package wechatpay) and records the payment exactly once
// (dynamo.Store.Pay): a PENDING order becomes PAID and its units leave on-hand; a
// payment after the order was released takes the late-payment rule.
//
// Answers follow CONTRACT.md and the WeChat Pay APIv3 notification rules (回调通知应答):
// 204 with no body when the notification was handled, so WeChat Pay stops resending it;
// otherwise {"code":"FAIL","message":…} with 401 (not verified), 400 (malformed, another
// merchant's, or amount/currency not the order's), 404 (no such order) or 500 (store
// failure: WeChat Pay resends later, and recording is idempotent).
package paycallback

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// RouteNotify is the API Gateway route key of the notify route (no JWT authorizer).
const RouteNotify = "POST /payments/wechatpay/notify"

// FunctionName is the Function dimension of payCallback's metrics.
const FunctionName = "payCallback"

// Config is payCallback's configuration, read from its environment by LoadConfig.
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// SecretARN is WECHATPAY_SECRET_ARN: the AWS Secrets Manager secret holding the
	// merchant configuration (see wechatpay.ConfigFromSecret).
	SecretARN string
}

// LoadConfig reads payCallback's variables (template.yaml, PayCallbackFunction). It
// returns an *envvar.Error naming the first one missing or invalid (and a Config not
// to be used).
func LoadConfig(get envvar.Lookup) (c Config, err error) {
	if c.Tables, err = envvar.Tables(get); err == nil {
		c.SecretARN, err = envvar.Required(get, "WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret")
	}
	return c, err
}

// Handler serves the notify route.
type Handler struct {
	verifier *wechatpay.Verifier
	store    *dynamo.Store
	log      *slog.Logger
}

// New returns a Handler that trusts what verifier accepts, records payments in store
// and logs JSON lines (and EMF metrics) to log.
func New(verifier *wechatpay.Verifier, store *dynamo.Store, log *slog.Logger) *Handler {
	return &Handler{verifier: verifier, store: store, log: log}
}

// failure is a FAIL answer: the HTTP status, a message for WeChat Pay, and the log
// level the event deserves.
type failure struct {
	status  int
	message string
	level   slog.Level
	err     error
}

func (f *failure) Error() string { return f.err.Error() }

// Handle serves one API Gateway HTTP API request (payload format 2.0) on the notify
// route. Any other route (including the empty one of an SQS or scheduled event read as
// a request) is refused with a *lambdaevent.NotServedError, and nothing is changed.
// Otherwise it never returns an error and never panics to its caller.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, _ error) {
	if req.RouteKey != RouteNotify {
		err := &lambdaevent.NotServedError{Function: FunctionName, Kind: lambdaevent.HTTP, Route: req.RouteKey}
		h.log.LogAttrs(ctx, slog.LevelError, "event refused", slog.String("error", err.Error()))
		return events.APIGatewayV2HTTPResponse{}, err
	}
	start := time.Now()
	var (
		result inventory.PayResult
		order  string
		twice  bool // a second transaction paid an already paid order
		err    error
	)
	defer func() {
		if p := recover(); p != nil {
			err = &failure{status: http.StatusInternalServerError, message: "internal error", level: slog.LevelError, err: fmt.Errorf("panic: %v", p)}
		}
		resp = h.answer(ctx, req, order, result, twice, err, time.Since(start))
	}()
	order, result, err = h.notify(ctx, req)
	if errors.Is(err, inventory.ErrPaidTwice) {
		// Answering FAIL would only make WeChat Pay resend for a day; the money needs a
		// refund by hand, which the error-level log line and the RefundDue metric ask for.
		h.log.LogAttrs(ctx, slog.LevelError, "second payment for a paid order: refund it", slog.String("outTradeNo", order), slog.String("error", err.Error()))
		twice, err = true, nil
	}
	return
}

func (h *Handler) notify(ctx context.Context, req events.APIGatewayV2HTTPRequest) (string, inventory.PayResult, error) {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return "", 0, &failure{http.StatusBadRequest, "body is not valid base64", slog.LevelWarn, err}
		}
	}
	n, err := h.verifier.Parse(wechatpay.HeadersFrom(req.Headers), body)
	switch {
	case errors.Is(err, wechatpay.ErrVerification):
		return "", 0, &failure{http.StatusUnauthorized, "signature verification failed", slog.LevelWarn, err}
	case errors.Is(err, wechatpay.ErrMerchantMismatch):
		return "", 0, &failure{http.StatusBadRequest, "notification is for another merchant", slog.LevelError, err}
	case err != nil:
		return "", 0, &failure{http.StatusBadRequest, "malformed notification", slog.LevelWarn, err}
	}
	tx := n.Transaction
	if n.EventType != wechatpay.EventTransactionSuccess || tx.TradeState != wechatpay.TradeStateSuccess {
		// Nothing to record for other events; acknowledge so they are not resent.
		h.log.LogAttrs(ctx, slog.LevelInfo, "notification ignored", slog.String("eventType", n.EventType), slog.String("outTradeNo", tx.OutTradeNo))
		return tx.OutTradeNo, 0, nil
	}
	_, result, err := h.store.Pay(ctx, inventory.Payment{
		OrderID: tx.OutTradeNo, TransactionID: tx.TransactionID,
		Amount: tx.Amount.Total, Currency: tx.Amount.Currency, PaidAt: tx.SuccessTime,
	})
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		return tx.OutTradeNo, 0, &failure{http.StatusNotFound, "order not found", slog.LevelError, err}
	case errors.Is(err, inventory.ErrPaymentMismatch):
		return tx.OutTradeNo, 0, &failure{http.StatusBadRequest, "amount or currency does not match the order", slog.LevelError, err}
	case errors.Is(err, inventory.ErrPaidTwice):
		return tx.OutTradeNo, 0, err
	case err != nil:
		return tx.OutTradeNo, 0, &failure{http.StatusInternalServerError, "temporarily unable to record the payment", slog.LevelError, err}
	}
	if result == inventory.RefundDue {
		h.log.LogAttrs(ctx, slog.LevelError, "paid after cancellation with no stock left: refund due", slog.String("outTradeNo", tx.OutTradeNo),
			slog.String("transactionId", tx.TransactionID), slog.Int64("amount", tx.Amount.Total))
	}
	return tx.OutTradeNo, result, nil
}

// answer builds the response and writes the request's log line and metrics.
func (h *Handler) answer(ctx context.Context, req events.APIGatewayV2HTTPRequest, order string, result inventory.PayResult, twice bool, err error, took time.Duration) events.APIGatewayV2HTTPResponse {
	resp := events.APIGatewayV2HTTPResponse{StatusCode: http.StatusNoContent}
	level := slog.LevelInfo
	attrs := []slog.Attr{
		slog.String("route", req.RouteKey), slog.String("requestId", req.RequestContext.RequestID),
		slog.String("outTradeNo", order), slog.Float64("ms", float64(took.Microseconds())/1000),
	}
	if result != 0 {
		attrs = append(attrs, slog.String("result", result.String()))
	}
	var f *failure
	if err != nil {
		if !errors.As(err, &f) {
			f = &failure{http.StatusInternalServerError, "internal error", slog.LevelError, err}
		}
		resp = httpapi.ErrorResponse(f.status, "FAIL", f.message, "")
		level = f.level
		attrs = append(attrs, slog.String("error", f.err.Error()))
	}
	attrs = append(attrs, slog.Int("status", resp.StatusCode))
	h.log.LogAttrs(ctx, level, "notification", attrs...)
	count := func(name string, ok bool) metric.Value {
		v := 0.0
		if ok {
			v = 1
		}
		return metric.Of(name, metric.Count, v)
	}
	metric.Emit(ctx, h.log, FunctionName,
		count("Paid", result == inventory.PaidNow), count("PaidLate", result == inventory.PaidLate),
		count("RefundDue", result == inventory.RefundDue || twice), count("PaidTwice", twice),
		count("NotificationRejected", f != nil && f.status < 500),
		count("NotificationFailed", f != nil && f.status >= 500))
	return resp
}
