package payments

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/notify"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// RouteNotify is the route key of WeChat Pay's payment notifications (API Gateway
// RouteKey; no JWT authorizer).
const RouteNotify = "POST /payments/wechatpay/notify"

// Notify serves RouteNotify (docs/contract.md, "POST /payments/wechatpay/notify"):
// WeChat Pay APIv3 payment notifications, verified and decrypted (package notify),
// recorded by the Recorder. Its answers follow WeChat Pay's notification rules: 204
// with no body when handled, so WeChat Pay stops resending; otherwise
// {"code":"FAIL","message":…} with 401 (not verified), 400 (malformed, another
// merchant's, or amount/currency not the order's), 404 (no such order) or 500 (store
// failure: WeChat Pay resends later, and recording is idempotent). A function serving
// it answers with notify.Answer.
type Notify struct {
	verifier Verifier
	rec      *Recorder
	log      *slog.Logger
	function string
}

// NewNotify returns the notify route's handler: notifications verified by verifier,
// payments recorded by rec, one EMF metrics line per request with function (the
// serving function's short name) as its Function dimension, logged to log.
func NewNotify(verifier Verifier, rec *Recorder, log *slog.Logger, function string) *Notify {
	return &Notify{verifier: verifier, rec: rec, log: log, function: function}
}

// Route serves one notification: 204 when it is handled, else a FAIL
// *httpapi.Failure. It adds the out_trade_no and the payment's result to the request's
// log line and emits the request's metrics, a panic counting as a failure.
func (n *Notify) Route(ctx context.Context, req events.APIGatewayV2HTTPRequest) (_ events.APIGatewayV2HTTPResponse, err error) {
	var rec Recorded
	status := http.StatusInternalServerError
	defer func() { n.count(ctx, rec, status) }()
	orderID, rec, err := n.record(ctx, req)
	httpapi.Annotate(ctx, slog.String("outTradeNo", orderID))
	if rec.Result != 0 {
		httpapi.Annotate(ctx, slog.String("result", rec.Result.String()))
	}
	if err != nil {
		status = notify.Answer(err).StatusCode
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status = http.StatusNoContent
	return events.APIGatewayV2HTTPResponse{StatusCode: status}, nil
}

// record verifies a notification and records the payment it announces, mapping what
// fails to its FAIL answer.
func (n *Notify) record(ctx context.Context, req events.APIGatewayV2HTTPRequest) (string, Recorded, error) {
	note, err := notify.Verified(ctx, req, n.verifier.Parse)
	if err != nil {
		return "", Recorded{}, err
	}
	tx := note.Transaction
	if note.EventType != wechatpay.EventTransactionSuccess || tx.TradeState != wechatpay.TradeStateSuccess {
		// Nothing to record for other events; acknowledge so they are not resent.
		n.log.LogAttrs(ctx, slog.LevelInfo, "notification ignored", slog.String("eventType", note.EventType), slog.String("outTradeNo", tx.OutTradeNo))
		return tx.OutTradeNo, Recorded{}, nil
	}
	rec, err := n.rec.Record(ctx, paymentOf(tx))
	switch {
	case err == nil:
		return tx.OutTradeNo, rec, nil
	case errors.Is(err, inventory.ErrOrderNotFound):
		err = notify.Fail(http.StatusNotFound, "order not found", slog.LevelError, err)
	case errors.Is(err, inventory.ErrPaymentMismatch):
		err = notify.Fail(http.StatusBadRequest, "amount or currency does not match the order", slog.LevelError, err)
	case errors.Is(err, ErrSecondNotRecorded):
		err = notify.Fail(http.StatusInternalServerError, "temporarily unable to record the second payment", slog.LevelError, err)
	case errors.Is(err, ErrRefundNotStarted):
		err = notify.Fail(http.StatusInternalServerError, "temporarily unable to start the refund", slog.LevelError, err)
	default:
		err = notify.Fail(http.StatusInternalServerError, "temporarily unable to record the payment", slog.LevelError, err)
	}
	return tx.OutTradeNo, rec, err
}

// count emits the request's metrics, one EMF line: the payment's result and whether
// the answer (status) was a rejection (4xx), a failed verification (401) or a failure
// WeChat Pay retries (5xx).
func (n *Notify) count(ctx context.Context, rec Recorded, status int) {
	count := func(name metric.Name, ok bool) metric.Value {
		if ok {
			return name.Of(1)
		}
		return name.Of(0)
	}
	metric.Emit(ctx, n.log, n.function,
		count(metric.Paid, rec.Result == inventory.PaidNow), count(metric.PaidLate, rec.Result == inventory.PaidLate),
		count(metric.RefundDue, rec.Result == inventory.RefundDue || rec.Twice), count(metric.PaidTwice, rec.Twice),
		count(metric.NotificationRejected, status >= 400 && status < 500),
		count(metric.NotificationUnverified, status == http.StatusUnauthorized),
		count(metric.NotificationFailed, status >= 500))
}
