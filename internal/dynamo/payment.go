package dynamo

import (
	"context"
	"fmt"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Pay records a successful payment of p.OrderID exactly once (DESIGN.md, state
// machine; "money and goods: goods first"); inventory.Order.PayStep picks the way:
//   - PENDING → PAID in one TransactWriteItems: the order (conditioned on PENDING,
//     paidAt and transactionId set), on-hand −q and reserved −q on exactly the shards
//     the order reserved (conditioned on reserved >= q), one COMMIT ledger entry per line;
//   - CANCELLED → PAID when every line's units are available again
//     (inventory.Order.LatePayment): one transaction takes them (available −q and
//     on-hand −q, conditioned on available >= q, on whichever shards hold them), counts
//     them on the purchase counters again, and writes RESERVE and COMMIT entries
//     distinct from the order's first RESERVE (ref <orderId>.late);
//   - CANCELLED → REFUND_PENDING otherwise, stock untouched;
//   - a payment already recorded (same transaction id) is inventory.Replayed.
//
// A payment racing a release on the same order either pays it (the release then does
// nothing) or finds it CANCELLED and takes the late path: never both.
//
// Errors: inventory.ErrOrderNotFound (no such order); inventory.ErrPaymentMismatch
// (amount or currency differ: nothing changed); inventory.ErrPaidTwice (the order was
// paid by another transaction: nothing changed, the money must be refunded by hand);
// inventory.ErrBusy (throttled, conflicted or unavailable: nothing changed, retry); or
// another store error.
func (s *Store) Pay(ctx context.Context, p inventory.Payment) (*inventory.Order, inventory.PayResult, error) {
	order, err := s.payable(ctx, &p)
	if err != nil {
		return order, 0, err
	}
	o, c, err := transact(ctx, s, s.orderSubject(order.ID), order, func(ctx context.Context, o *inventory.Order, r inventory.Retry) (inventory.Change, error) {
		var stock map[string]inventory.StockNow
		if o.NeedsStock(p, r) {
			var err error
			if stock, err = s.stockNow(ctx, o); err != nil {
				return inventory.Change{}, err
			}
		}
		return o.Pay(p, stock, s.now(), r)
	})
	if err != nil {
		return o, 0, err
	}
	return o, c.PayResult(), nil
}

// payable fills p's PaidAt (now when zero, UTC) and reads the order it pays.
func (s *Store) payable(ctx context.Context, p *inventory.Payment) (*inventory.Order, error) {
	if p.PaidAt.IsZero() {
		p.PaidAt = s.now()
	}
	p.PaidAt = p.PaidAt.UTC()
	if !inventory.ValidOrderID(p.OrderID) {
		return nil, fmt.Errorf("pay order %q: %w", p.OrderID, inventory.ErrOrderNotFound)
	}
	order, err := s.order(ctx, p.OrderID)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, fmt.Errorf("pay order %s: %w", p.OrderID, inventory.ErrOrderNotFound)
	}
	return order, nil
}

// stockNow reads, strongly consistent, the SKUs of order's lines as a late payment
// needs them, with their per-user limits (absent SKUs are gone).
func (s *Store) stockNow(ctx context.Context, order *inventory.Order) (map[string]inventory.StockNow, error) {
	ids := make([]string, len(order.Items))
	for i, it := range order.Items {
		ids[i] = it.SKU
	}
	recs, err := s.skuRecords(ctx, ids, true)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for id, e := range recs {
		counts[id] = e.rec.Shards
	}
	shards, err := s.shardRecords(ctx, counts)
	if err != nil {
		return nil, err
	}
	stock := make(map[string]inventory.StockNow, len(recs))
	for id, e := range recs {
		avail := make(inventory.ShardStock, counts[id])
		for _, sh := range shards[id] {
			if sh.Shard >= 0 && sh.Shard < len(avail) && sh.OnSale {
				avail[sh.Shard] = sh.Available
			}
		}
		stock[id] = inventory.StockNow{OnSale: e.rec.OnSale, LimitPerUser: e.rec.LimitPerUser, Shards: avail}
	}
	return stock, nil
}
