package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Errors of the steps that follow a recorded payment, checked with errors.Is: the
// payment itself was recorded (or found recorded), and recording it again does the step.
var (
	// ErrRefundNotStarted: the order owes its money back (REFUND_PENDING) and the
	// refund could not be started.
	ErrRefundNotStarted = errors.New("refund of the payment not started")
	// ErrSecondNotRecorded: the payment was a second one of a paid order and could not
	// be recorded as a refund owed.
	ErrSecondNotRecorded = errors.New("second payment not recorded")
)

// Recorder records successful payments one way, whoever learnt of them (WeChat Pay's
// notification, or a query before a release): the store records the payment exactly
// once (Payments.Pay: PENDING → PAID, the late way after a release, or
// REFUND_PENDING), then what the payment owes is started with no person involved: the
// refund of an order paid with no stock left, and the refund of a second payment of an
// order already paid, under its own out_refund_no.
type Recorder struct {
	store   Payments
	refunds Refunds
	log     *slog.Logger
}

// NewRecorder returns a Recorder over store that begins the refunds owed with refunds
// and logs to log.
func NewRecorder(store Payments, refunds Refunds, log *slog.Logger) *Recorder {
	return &Recorder{store: store, refunds: refunds, log: log}
}

// Recorded is what recording one payment came to.
type Recorded struct {
	Result inventory.PayResult // 0 when the payment was not recorded on its order
	Twice  bool                // a second payment of a paid order, owed back whole
}

// Record records p and starts what it owes (see Recorder). A payment already
// recorded (a resent notification) changes nothing, but starts a refund still owed.
//
// Errors: inventory.ErrOrderNotFound, inventory.ErrPaymentMismatch (nothing changed:
// the payment is not this order's), ErrRefundNotStarted or ErrSecondNotRecorded (the
// payment was recorded; the step that follows failed), or a store error (nothing
// changed; inventory.ErrBusy when worth retrying).
func (r *Recorder) Record(ctx context.Context, p inventory.Payment) (Recorded, error) {
	order, result, err := r.store.Pay(ctx, p)
	switch {
	case errors.Is(err, inventory.ErrPaidTwice):
		// The second transaction is refunded on its own out_refund_no, never the first.
		refund, rerr := r.refunds.SecondPayment(ctx, p)
		if rerr != nil {
			return Recorded{Twice: true}, fmt.Errorf("%w: %w", ErrSecondNotRecorded, rerr)
		}
		r.log.LogAttrs(ctx, slog.LevelError, "second payment for a paid order: refunding it", slog.String("outTradeNo", p.OrderID),
			slog.String("transactionId", p.TransactionID), slog.String("outRefundNo", refund.OutRefundNo))
		return Recorded{Twice: true}, nil
	case err != nil:
		return Recorded{}, err
	}
	if result == inventory.RefundDue {
		// A shop's rule (off sale, not started, the limit) is no fault; no stock left
		// after a release, or a transaction too large, is worth an operator's look.
		level := slog.LevelWarn
		if order.DueCause == inventory.DueNoStock || order.DueCause == inventory.DueTooLarge {
			level = slog.LevelError
		}
		r.log.LogAttrs(ctx, level, "paid after cancellation, cannot be honoured ("+order.DueCause+"): refunding", slog.String("outTradeNo", p.OrderID),
			slog.String("transactionId", p.TransactionID), slog.Int64("amount", p.Amount), slog.String("cause", order.DueCause))
	}
	if order.Status == inventory.StatusRefundPending { // now, or on a resend after a failed step
		if _, err := r.refunds.Order(ctx, order, automatic("paid after cancellation: "+order.DueCause), 0); err != nil {
			return Recorded{Result: result}, fmt.Errorf("%w: %w", ErrRefundNotStarted, err)
		}
	}
	return Recorded{Result: result}, nil
}

// automatic is the request of a refund stockguard owes, made with no person involved.
func automatic(reason string) inventory.RefundRequest {
	return inventory.RefundRequest{Requester: inventory.System, Goods: inventory.KeepGoods, By: "stockguard", Reason: reason}
}
