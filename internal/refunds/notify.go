package refunds

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/notify"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// RouteNotify is the route key of WeChat Pay's refund notifications (API Gateway
// RouteKey; no JWT authorizer).
const RouteNotify = "POST /payments/wechatpay/refund-notify"

// Verifier verifies and decrypts refund notifications (wechatpay.RotatingVerifier).
type Verifier interface {
	ParseRefund(ctx context.Context, h wechatpay.Headers, body []byte) (*wechatpay.RefundNotification, error)
}

// Notify serves RouteNotify (docs/contract.md, "POST
// /payments/wechatpay/refund-notify"). A function serving it answers with
// notify.Answer.
type Notify struct {
	verifier Verifier
	store    Results
	log      *slog.Logger
}

// NewNotify returns the refund-notify route's handler: notifications verified by
// verifier, results recorded in store, logged to log.
func NewNotify(verifier Verifier, store Results, log *slog.Logger) *Notify {
	return &Notify{verifier: verifier, store: store, log: log}
}

// Route serves one refund notification: verified and decrypted exactly as payment
// notifications are (notify.Verified), then what it says is recorded by Apply:
// REFUND.SUCCESS for the out_refund_no, payment and amount owed turns the refund
// REFUNDED once; REFUND.CLOSED and REFUND.ABNORMAL keep it REFUNDING with its error
// set (RefundAbnormal metric, error log). A replay is answered the same and changes
// nothing. 204 when handled; 404 for an out_refund_no stockguard does not owe, 400 for
// another payment or amount, 500 on a store failure (WeChat Pay resends).
func (n *Notify) Route(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	note, err := notify.Verified(ctx, req, n.verifier.ParseRefund)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	res := Result(*note.Refund)
	httpapi.Annotate(ctx, slog.String("outRefundNo", res.OutRefundNo), slog.String("refundStatus", res.State))
	_, _, err = Apply(ctx, n.store, n.log, res)
	switch {
	case errors.Is(err, inventory.ErrRefundNotFound):
		return events.APIGatewayV2HTTPResponse{}, notify.Fail(http.StatusNotFound, "refund not found", slog.LevelError, err)
	case errors.Is(err, inventory.ErrRefundMismatch):
		return events.APIGatewayV2HTTPResponse{}, notify.Fail(http.StatusBadRequest, "refund does not match the refund requested", slog.LevelError, err)
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, notify.Fail(http.StatusInternalServerError, "temporarily unable to record the refund", slog.LevelError, err)
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusNoContent}, nil
}
