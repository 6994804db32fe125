package refunds

import (
	"context"
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Starter begins refunds for the functions that decide them (the buyer's and the
// operator's refund routes, payCallback's automatic refunds): the goods step in the
// store, then, once it has committed, a message on the refund queue for the money
// step. A message that cannot be sent is logged at error level and not retried here:
// the refund stays REFUNDING and the stuck pass (Refunder.Stuck) requests it later, so
// nothing is lost silently.
type Starter struct {
	store Starting
	queue *Queue
	log   *slog.Logger
}

// NewStarter returns a Starter over store that sends refund messages to queue (nil:
// none are sent; the stuck pass requests every refund) and logs to log.
func NewStarter(store Starting, queue *Queue, log *slog.Logger) *Starter {
	return &Starter{store: store, queue: queue, log: log}
}

// Order refunds order (read just before) as r asks — its lines, or all that is left —
// buyers within window of its payment (the store's StartRefund), and asks for the
// money back when this call made the goods step of a refund. It returns the order as it stands. Errors are
// StartRefund's: nothing was changed.
func (s *Starter) Order(ctx context.Context, order *inventory.Order, r inventory.RefundRequest, window time.Duration) (*inventory.Order, error) {
	order, started, err := s.store.StartRefund(ctx, order, r, window)
	if err != nil {
		return nil, err
	}
	if started != "" {
		s.send(ctx, started)
	}
	return order, nil
}

// SecondPayment records p, a second successful payment of an order already paid, as
// a refund owed (the store's SecondPayment) and asks for it when this call recorded
// it. Errors are SecondPayment's.
func (s *Starter) SecondPayment(ctx context.Context, p inventory.Payment) (*inventory.Refund, error) {
	refund, created, err := s.store.SecondPayment(ctx, p)
	if err != nil {
		return nil, err
	}
	if created {
		s.send(ctx, refund.OutRefundNo)
	}
	return refund, nil
}

// send puts outRefundNo on the queue, logging a failure.
func (s *Starter) send(ctx context.Context, outRefundNo string) {
	if s.queue == nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "no refund queue: the stuck pass will request the refund", slog.String("outRefundNo", outRefundNo))
		return
	}
	if err := s.queue.Send(ctx, outRefundNo); err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "refund not enqueued: the stuck pass will request it",
			slog.String("outRefundNo", outRefundNo), slog.String("error", err.Error()))
	}
}
