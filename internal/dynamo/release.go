package dynamo

import (
	"context"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Release releases order (read just before and, when it has a WeChat Pay order,
// asked about there) for reason, as inventory.Order.Release decides, through the one
// transition path (transact): in one TransactWriteItems the order PENDING → CANCELLED
// (conditioned on PENDING and on the prepay_id as read), per reserved shard
// available += q and reserved −= q (conditioned on reserved >= q, so available never
// passes on-hand), the purchase counters given back, and one RELEASE ledger entry per
// line (attribute_not_exists). A timeout releases only an order whose window has ended.
// It returns the order as it stands and whether this call released its stock; an
// order not releasable (paid, released already, not yet due) is returned as it is.
// Any number of calls on one order, sequential or concurrent, release its stock at
// most once.
//
// Errors: inventory.ErrBusy (throttled, conflicted or unavailable; or a WeChat Pay
// order was opened since the read: ask WeChat Pay again; nothing released), or
// another store error.
func (s *Store) Release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error) {
	seen, now := order.PrepayID, s.now()
	o, c, err := transact(ctx, s, s.orderSubject(order.ID), order, func(_ context.Context, o *inventory.Order, r inventory.Retry) (inventory.Change, error) {
		return o.Release(reason, seen, now, r)
	})
	if err != nil {
		return nil, false, err
	}
	return o, !c.None(), nil
}
