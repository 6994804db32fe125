package orders

import (
	"context"
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// scheduleTimeout bounds the close-message send: a slow queue must not hold the
// buyer's answer for long, since a lost message only delays a release until the sweep.
const scheduleTimeout = 2 * time.Second

// scheduleClose starts sending the close message of the order slot names, delayed to
// its expiry, at the same time as the reservation runs, so that an order waits for
// one round trip (the longer of the transaction and the send) instead of two. It
// returns a function that waits for the send and returns its error; call it before
// answering, so that nothing runs on after the invocation ends. With a nil queue
// nothing is sent.
//
// Sending before the outcome is known is safe: an order the reservation never opens
// (the cart was refused) does not exist, and the release drops a message for an order
// it cannot find, releasing nothing (Releaser.HandleSQS counts it as closed). A copy
// of a keyed request names the key's order, but with its own slot's expiry: the
// release drops it when it comes before the order's expiry, and finds the order
// closed when it comes after. A message
// that arrives before a slow reservation has written its order is dropped the same
// way; the sweep then releases that order, up to a sweep period late.
func (r *Checkout) scheduleClose(ctx context.Context, slot inventory.OrderSlot) func() error {
	if r.queue == nil {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, scheduleTimeout)
		defer cancel()
		_, err := r.queue.Schedule(ctx, closeq.Message{OrderID: slot.OrderID, ExpiresAt: slot.ExpiresAt})
		done <- err
	}()
	return func() error { return <-done }
}

// closeNotScheduled reports a failed close-message send for a new order. It never
// fails the order (the sweep releases it, up to a sweep period late): it is logged at
// warn level and counted in the CloseScheduleFailed metric. A failed send for an
// order that was refused is not reported: there is nothing to release.
func (r *Checkout) closeNotScheduled(ctx context.Context, orderID string, err error) {
	r.log.LogAttrs(ctx, slog.LevelWarn, "close message not sent; the sweep will release the order",
		slog.String("orderId", orderID), slog.String("error", err.Error()))
	metric.Emit(ctx, r.log, r.function, metric.CloseScheduleFailed.Of(1))
}
