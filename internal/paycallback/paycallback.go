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
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
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

// MaxBodyBytes bounds a notification's body; WeChat Pay's are about 1 KiB (APIv3,
// 支付通知).
const MaxBodyBytes = 64 << 10

// Handler serves the notify route.
type Handler struct {
	verifier *wechatpay.RotatingVerifier
	store    *dynamo.Store
	log      *slog.Logger
	api      *httpapi.Handler
}

// New returns a Handler that trusts what verifier accepts, records payments in store
// and logs JSON lines (and EMF metrics) to log.
func New(verifier *wechatpay.RotatingVerifier, store *dynamo.Store, log *slog.Logger) *Handler {
	h := &Handler{verifier: verifier, store: store, log: log}
	h.api = httpapi.New(FunctionName, log, map[string]httpapi.Route{RouteNotify: h.notify}).AnswerWith(answer)
	return h
}

// fail is a FAIL answer with status and a message for WeChat Pay, logged at level.
func fail(status int, message string, level slog.Level, err error) *httpapi.Failure {
	return &httpapi.Failure{Status: status, Code: "FAIL", Message: message, Level: level, Err: err}
}

// answer maps a failure of the notify route (or a panic) to its FAIL answer: anything
// not already a FAIL is 500, so that WeChat Pay resends later.
func answer(err error) events.APIGatewayV2HTTPResponse {
	var f *httpapi.Failure
	if !errors.As(err, &f) {
		f = fail(http.StatusInternalServerError, "internal error", slog.LevelError, err)
	}
	return httpapi.Answer(f)
}

// Handle serves one API Gateway HTTP API request (payload format 2.0) on the notify
// route through httpapi.Handler: any other route (including the empty one of an SQS
// or scheduled event read as a request) is refused with a *lambdaevent.NotServedError,
// and nothing is changed. Otherwise it never returns an error and never panics to its
// caller.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return h.api.Handle(ctx, req)
}

// notify serves the route: 204 when the notification is handled, else a *Failure. It
// adds the out_trade_no and the payment's result to the request's log line and emits
// the request's metrics, a panic counting as a failure.
func (h *Handler) notify(ctx context.Context, req events.APIGatewayV2HTTPRequest) (_ events.APIGatewayV2HTTPResponse, err error) {
	var (
		result inventory.PayResult
		twice  bool // a second transaction paid an already paid order
		status = http.StatusInternalServerError
	)
	defer func() { h.count(ctx, result, twice, status) }()
	order, result, err := h.record(ctx, req)
	httpapi.Annotate(ctx, slog.String("outTradeNo", order))
	if result != 0 {
		httpapi.Annotate(ctx, slog.String("result", result.String()))
	}
	if errors.Is(err, inventory.ErrPaidTwice) {
		// Answering FAIL would only make WeChat Pay resend for a day; the money needs a
		// refund by hand, which the error-level log line and the RefundDue metric ask for.
		h.log.LogAttrs(ctx, slog.LevelError, "second payment for a paid order: refund it", slog.String("outTradeNo", order), slog.String("error", err.Error()))
		twice, err = true, nil
	}
	if err != nil {
		status = answer(err).StatusCode
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status = http.StatusNoContent
	return events.APIGatewayV2HTTPResponse{StatusCode: status}, nil
}

func (h *Handler) record(ctx context.Context, req events.APIGatewayV2HTTPRequest) (string, inventory.PayResult, error) {
	body, err := httpapi.Body(req, MaxBodyBytes)
	var invalid *inventory.InvalidRequestError
	if errors.As(err, &invalid) {
		return "", 0, fail(http.StatusBadRequest, invalid.Reason, slog.LevelWarn, err)
	}
	n, err := h.verifier.Parse(ctx, wechatpay.HeadersFrom(req.Headers), body)
	switch {
	case errors.Is(err, wechatpay.ErrVerification):
		return "", 0, fail(http.StatusUnauthorized, "signature verification failed", slog.LevelWarn, err)
	case errors.Is(err, wechatpay.ErrMerchantMismatch):
		return "", 0, fail(http.StatusBadRequest, "notification is for another merchant", slog.LevelError, err)
	case err != nil:
		return "", 0, fail(http.StatusBadRequest, "malformed notification", slog.LevelWarn, err)
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
		return tx.OutTradeNo, 0, fail(http.StatusNotFound, "order not found", slog.LevelError, err)
	case errors.Is(err, inventory.ErrPaymentMismatch):
		return tx.OutTradeNo, 0, fail(http.StatusBadRequest, "amount or currency does not match the order", slog.LevelError, err)
	case errors.Is(err, inventory.ErrPaidTwice):
		return tx.OutTradeNo, 0, err
	case err != nil:
		return tx.OutTradeNo, 0, fail(http.StatusInternalServerError, "temporarily unable to record the payment", slog.LevelError, err)
	}
	if result == inventory.RefundDue {
		h.log.LogAttrs(ctx, slog.LevelError, "paid after cancellation with no stock left: refund due", slog.String("outTradeNo", tx.OutTradeNo),
			slog.String("transactionId", tx.TransactionID), slog.Int64("amount", tx.Amount.Total))
	}
	return tx.OutTradeNo, result, nil
}

// count emits the request's metrics, one EMF line: the payment's result and whether
// the answer (status) was a rejection (4xx), a failed verification (401) or a failure
// WeChat Pay retries (5xx).
func (h *Handler) count(ctx context.Context, result inventory.PayResult, twice bool, status int) {
	count := func(name metric.Name, ok bool) metric.Value {
		if ok {
			return name.Of(1)
		}
		return name.Of(0)
	}
	metric.Emit(ctx, h.log, FunctionName,
		count(metric.Paid, result == inventory.PaidNow), count(metric.PaidLate, result == inventory.PaidLate),
		count(metric.RefundDue, result == inventory.RefundDue || twice), count(metric.PaidTwice, twice),
		count(metric.NotificationRejected, status >= 400 && status < 500),
		count(metric.NotificationUnverified, status == http.StatusUnauthorized),
		count(metric.NotificationFailed, status >= 500))
}

// SecretReloads reports payCallback's re-reads of the merchant secret
// (wechatpay.RotateOptions.OnReload): a SecretReloaded or SecretReloadFailed count,
// and a failure at error level (the old keys stay in use).
func SecretReloads(log *slog.Logger) func(context.Context, error) {
	return metric.Outcomes(log, FunctionName, metric.SecretReloaded, metric.SecretReloadFailed, "merchant secret not re-read; the old keys stay in use")
}
