// Package paycallback is the payCallback function: it takes WeChat Pay APIv3 payment
// notifications on POST /payments/wechatpay/notify (CONTRACT.md), verifies and
// decrypts them (package wechatpay) and records the payment exactly once
// (dynamo.Store.Pay): a PENDING order becomes PAID and its units leave on-hand; a
// payment after the order was released takes the late-payment rule. Money owed back
// is refunded with no person involved (package refunds): a late payment that found no
// stock (REFUND_PENDING → REFUNDING) and a second payment of a paid order (recorded
// under its own out_refund_no). Refund notifications on POST
// /payments/wechatpay/refund-notify go through the same verification and decryption
// and turn a refund REFUNDED once (or record why WeChat Pay could not refund).
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
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Route keys of the notify routes (API Gateway RouteKey; no JWT authorizer).
const (
	RouteNotify       = "POST /payments/wechatpay/notify"
	RouteRefundNotify = "POST /payments/wechatpay/refund-notify"
)

// FunctionName is the Function dimension of payCallback's metrics.
const FunctionName = "payCallback"

// Config is payCallback's configuration, read from its environment by LoadConfig.
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// SecretARN is WECHATPAY_SECRET_ARN: the AWS Secrets Manager secret holding the
	// merchant configuration (see wechatpay.ConfigFromSecret).
	SecretARN string
	// RefundQueueURL is REFUND_QUEUE_URL: where refunds owed are sent for the money step.
	RefundQueueURL string
}

// LoadConfig reads payCallback's variables (template.yaml, PayCallbackFunction). It
// returns an *envvar.Error naming the first one missing or invalid (and a Config not
// to be used).
func LoadConfig(get envvar.Lookup) (c Config, err error) {
	if c.Tables, err = envvar.Tables(get); err != nil {
		return c, err
	}
	if c.SecretARN, err = envvar.Required(get, "WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret"); err != nil {
		return c, err
	}
	c.RefundQueueURL, err = envvar.Required(get, "REFUND_QUEUE_URL", "the refund queue URL")
	return c, err
}

// MaxBodyBytes bounds a notification's body; WeChat Pay's are about 1 KiB (APIv3,
// 支付通知).
const MaxBodyBytes = 64 << 10

// Handler serves the notify routes.
type Handler struct {
	verifier *wechatpay.RotatingVerifier
	store    *dynamo.Store
	refunds  *refunds.Starter
	log      *slog.Logger
	api      *httpapi.Handler
}

// New returns a Handler that trusts what verifier accepts, records payments and
// refunds in store, begins the refunds owed with refunds, and logs JSON lines (and EMF
// metrics) to log.
func New(verifier *wechatpay.RotatingVerifier, store *dynamo.Store, refunds *refunds.Starter, log *slog.Logger) *Handler {
	h := &Handler{verifier: verifier, store: store, refunds: refunds, log: log}
	h.api = httpapi.New(FunctionName, log, map[string]httpapi.Route{
		RouteNotify: h.notify, RouteRefundNotify: h.refundNotify,
	}).AnswerWith(answer)
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
		// The second transaction is refunded on its own out_refund_no, never the first.
		twice = true
		err = h.refundSecond(ctx, order, err)
	}
	if err != nil {
		status = answer(err).StatusCode
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status = http.StatusNoContent
	return events.APIGatewayV2HTTPResponse{StatusCode: status}, nil
}

// verified verifies and parses a notification with parse (wechatpay.Verifier.Parse or
// ParseRefund, one verification path), mapping its refusals to FAIL answers: 401 not
// verified, 400 malformed or another merchant's.
func verified[N any](ctx context.Context, req events.APIGatewayV2HTTPRequest, parse func(context.Context, wechatpay.Headers, []byte) (N, error)) (N, error) {
	var zero N
	body, err := httpapi.Body(req, MaxBodyBytes)
	var invalid *inventory.InvalidRequestError
	if errors.As(err, &invalid) {
		return zero, fail(http.StatusBadRequest, invalid.Reason, slog.LevelWarn, err)
	}
	n, err := parse(ctx, wechatpay.HeadersFrom(req.Headers), body)
	switch {
	case errors.Is(err, wechatpay.ErrVerification):
		return zero, fail(http.StatusUnauthorized, "signature verification failed", slog.LevelWarn, err)
	case errors.Is(err, wechatpay.ErrMerchantMismatch):
		return zero, fail(http.StatusBadRequest, "notification is for another merchant", slog.LevelError, err)
	case err != nil:
		return zero, fail(http.StatusBadRequest, "malformed notification", slog.LevelWarn, err)
	}
	return n, nil
}

func (h *Handler) record(ctx context.Context, req events.APIGatewayV2HTTPRequest) (string, inventory.PayResult, error) {
	n, err := verified(ctx, req, h.verifier.Parse)
	if err != nil {
		return "", 0, err
	}
	tx := n.Transaction
	if n.EventType != wechatpay.EventTransactionSuccess || tx.TradeState != wechatpay.TradeStateSuccess {
		// Nothing to record for other events; acknowledge so they are not resent.
		h.log.LogAttrs(ctx, slog.LevelInfo, "notification ignored", slog.String("eventType", n.EventType), slog.String("outTradeNo", tx.OutTradeNo))
		return tx.OutTradeNo, 0, nil
	}
	order, result, err := h.store.Pay(ctx, inventory.Payment{
		OrderID: tx.OutTradeNo, TransactionID: tx.TransactionID,
		Amount: tx.Amount.Total, Currency: tx.Amount.Currency, PaidAt: tx.SuccessTime,
	})
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		return tx.OutTradeNo, 0, fail(http.StatusNotFound, "order not found", slog.LevelError, err)
	case errors.Is(err, inventory.ErrPaymentMismatch):
		return tx.OutTradeNo, 0, fail(http.StatusBadRequest, "amount or currency does not match the order", slog.LevelError, err)
	case errors.Is(err, inventory.ErrPaidTwice):
		return tx.OutTradeNo, 0, &paidTwiceError{err: err, payment: inventory.Payment{
			OrderID: tx.OutTradeNo, TransactionID: tx.TransactionID, Amount: tx.Amount.Total, Currency: tx.Amount.Currency, PaidAt: tx.SuccessTime,
		}}
	case err != nil:
		return tx.OutTradeNo, 0, fail(http.StatusInternalServerError, "temporarily unable to record the payment", slog.LevelError, err)
	}
	if result == inventory.RefundDue {
		h.log.LogAttrs(ctx, slog.LevelError, "paid after cancellation with no stock left: refunding", slog.String("outTradeNo", tx.OutTradeNo),
			slog.String("transactionId", tx.TransactionID), slog.Int64("amount", tx.Amount.Total))
	}
	if order.Status == inventory.StatusRefundPending { // now, or on a resend after a failed step
		if _, err := h.refunds.Order(ctx, order, automatic("paid after cancellation, no stock left"), 0); err != nil {
			return tx.OutTradeNo, result, fail(http.StatusInternalServerError, "temporarily unable to start the refund", slog.LevelError, err)
		}
	}
	return tx.OutTradeNo, result, nil
}

// automatic is the request of a refund stockguard owes, made with no person involved.
func automatic(reason string) inventory.RefundRequest {
	return inventory.RefundRequest{Merchant: true, By: "stockguard", Reason: reason}
}

// paidTwiceError is inventory.ErrPaidTwice with the second payment it refused.
type paidTwiceError struct {
	err     error
	payment inventory.Payment
}

func (e *paidTwiceError) Error() string { return e.err.Error() }
func (e *paidTwiceError) Unwrap() error { return e.err }

// refundSecond records a second payment of a paid order (err, a *paidTwiceError) as a
// refund owed and sends it for the money step; the answer is then 204. A failure to
// record it answers 500, so that WeChat Pay resends and recording is tried again.
func (h *Handler) refundSecond(ctx context.Context, orderID string, err error) error {
	var twice *paidTwiceError
	if !errors.As(err, &twice) {
		return err
	}
	r, rerr := h.refunds.SecondPayment(ctx, twice.payment)
	if rerr != nil {
		return fail(http.StatusInternalServerError, "temporarily unable to record the second payment", slog.LevelError, rerr)
	}
	h.log.LogAttrs(ctx, slog.LevelError, "second payment for a paid order: refunding it", slog.String("outTradeNo", orderID),
		slog.String("transactionId", twice.payment.TransactionID), slog.String("outRefundNo", r.OutRefundNo))
	return nil
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

// refundNotify serves the refund-notify route (CONTRACT.md): a refund notification is
// verified and decrypted exactly as payment notifications are (verified), then what
// it says is recorded by refunds.Apply: REFUND.SUCCESS for the out_refund_no, payment
// and amount owed turns the refund REFUNDED once; REFUND.CLOSED and REFUND.ABNORMAL keep
// it REFUNDING with refundError set (RefundAbnormal metric, error log). A replay is
// answered the same and changes nothing. 204 when handled; 404 for an out_refund_no
// stockguard does not owe, 400 for another payment or amount, 500 on a store failure
// (WeChat Pay resends).
func (h *Handler) refundNotify(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	n, err := verified(ctx, req, h.verifier.ParseRefund)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	res := refunds.Result(*n.Refund)
	httpapi.Annotate(ctx, slog.String("outRefundNo", res.OutRefundNo), slog.String("refundStatus", res.State))
	_, _, err = refunds.Apply(ctx, h.store, h.log, res)
	switch {
	case errors.Is(err, inventory.ErrRefundNotFound):
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusNotFound, "refund not found", slog.LevelError, err)
	case errors.Is(err, inventory.ErrRefundMismatch):
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusBadRequest, "refund does not match the refund requested", slog.LevelError, err)
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusInternalServerError, "temporarily unable to record the refund", slog.LevelError, err)
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusNoContent}, nil
}
