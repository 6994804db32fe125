package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

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
	overLimit := false // a late payment found the user's purchase limit reached
	for range maxTransitionRounds {
		step, err := order.PayStep(p)
		if err != nil {
			return order, 0, err
		}
		if step == inventory.PayReplayed {
			return order, inventory.Replayed, nil
		}
		t, result, err := s.payTx(ctx, order, p, step, overLimit)
		if err != nil {
			return nil, 0, err
		}
		res, failed, err := s.sendTransition(ctx, t, order.ID, func(o *inventory.Order) bool { return o.Recorded(p) })
		switch {
		case err != nil:
			return nil, 0, err
		case res == applied:
			order, err = s.mustOrder(ctx, order.ID)
			return order, result, err
		case res == refused && (step == inventory.PayCommit || result == inventory.RefundDue):
			return nil, 0, booksOff(t.what, failed)
		case res == refused && failed.has(partLimit):
			overLimit = true
		case res == refused && failed.has(partLedger):
			return nil, 0, booksOff(t.what, failed)
		}
		// The order changed meanwhile, or a late path's shard was emptied by a buyer
		// since it was read: read again and take the path it now calls for.
		if order, err = s.mustOrder(ctx, order.ID); err != nil {
			return nil, 0, err
		}
	}
	return nil, 0, fmt.Errorf("pay order %s: %d rounds without an answer: %w", p.OrderID, maxTransitionRounds, inventory.ErrBusy)
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

// payTx builds the transaction of step and says what it will have done.
func (s *Store) payTx(ctx context.Context, order *inventory.Order, p inventory.Payment, step inventory.PayStep, overLimit bool) (*txn, inventory.PayResult, error) {
	now := s.now()
	if step == inventory.PayCommit {
		return s.commitTx(order, p, now), inventory.PaidNow, nil
	}
	var stock map[string]inventory.StockNow
	var limits map[string]int
	if !overLimit { // the answer is known: spare the reads
		var err error
		if stock, limits, err = s.stockNow(ctx, order); err != nil {
			return nil, 0, err
		}
	}
	items, result := order.LatePayment(stock, overLimit)
	if result == inventory.RefundDue {
		return s.refundDueTx(order, p), inventory.RefundDue, nil
	}
	t := s.lateTx(order, items, limits, p, now)
	if len(t.items) > inventory.MaxTransactionActions {
		return s.refundDueTx(order, p), inventory.RefundDue, nil // DynamoDB API Reference, TransactWriteItems: up to 100 actions
	}
	return t, inventory.PaidLate, nil
}

// paidUpdate is the order update shared by the payment transitions.
func paidUpdate(status inventory.Status, p inventory.Payment) expression.UpdateBuilder {
	return expression.Set(expression.Name("status"), expression.Value(string(status))).
		Set(expression.Name("paidAt"), expression.Value(formatTime(p.PaidAt))).
		Set(expression.Name("transactionId"), expression.Value(p.TransactionID))
}

// commitTx builds PENDING → PAID: the reserved units leave on-hand (COMMIT).
func (s *Store) commitTx(order *inventory.Order, p inventory.Payment, now time.Time) *txn {
	t := s.newTxn("commit order " + order.ID)
	t.transition(order, inventory.StatusPending, paidUpdate(inventory.StatusPaid, p).
		Remove(expression.Name("pendingBucket")).Remove(expression.Name("pendingExpiresAt")))
	ref := entryRef{key: order.ID, ref: order.ID, reason: "paid " + p.TransactionID, at: now.UnixMilli()}
	for i, line := range order.Items {
		t.lineStock(i, line, ref, reservedAtLeast, inventory.OpCommit)
	}
	return t
}

// refundDueTx builds CANCELLED → REFUND_PENDING, stock untouched.
func (s *Store) refundDueTx(order *inventory.Order, p inventory.Payment) *txn {
	t := s.newTxn("refund-pending order " + order.ID)
	t.transition(order, inventory.StatusCancelled, paidUpdate(inventory.StatusRefundPending, p))
	return t
}

// stockNow reads, strongly consistent, the SKUs of order's lines as a late payment
// needs them, and their per-user limits (SKU id → units; absent SKUs are gone).
func (s *Store) stockNow(ctx context.Context, order *inventory.Order) (map[string]inventory.StockNow, map[string]int, error) {
	ids := make([]string, len(order.Items))
	for i, it := range order.Items {
		ids[i] = it.SKU
	}
	recs, err := s.skuRecords(ctx, ids, true)
	if err != nil {
		return nil, nil, err
	}
	counts := map[string]int{}
	for id, e := range recs {
		counts[id] = e.rec.Shards
	}
	shards, err := s.shardRecords(ctx, counts)
	if err != nil {
		return nil, nil, err
	}
	stock := make(map[string]inventory.StockNow, len(recs))
	limits := make(map[string]int, len(recs))
	for id, e := range recs {
		avail := make(inventory.ShardStock, counts[id])
		for _, sh := range shards[id] {
			if sh.Shard >= 0 && sh.Shard < len(avail) && sh.OnSale {
				avail[sh.Shard] = sh.Available
			}
		}
		stock[id] = inventory.StockNow{OnSale: e.rec.OnSale, LimitPerUser: e.rec.LimitPerUser, Shards: avail}
		limits[id] = e.rec.LimitPerUser
	}
	return stock, limits, nil
}

// lateTx builds CANCELLED → PAID for a paid order whose units LatePayment placed
// again (items): per line the units taken from the shards that hold them now
// (RESERVE and COMMIT in one update per shard, conditioned on available >= q and on
// sale) and counted on the user's purchase limit again (conditioned on the limit).
func (s *Store) lateTx(order *inventory.Order, items []inventory.OrderItem, limits map[string]int, p inventory.Payment, now time.Time) *txn {
	rec := newOrderRecord(&inventory.Order{Status: order.Status, Items: items})
	t := s.newTxn("pay late order " + order.ID)
	// The order is PAID now: its cancellation is history (kept in the ledger).
	t.transition(order, inventory.StatusCancelled, paidUpdate(inventory.StatusPaid, p).
		Set(expression.Name("items"), expression.Value(rec.Items)).
		Remove(expression.Name("cancelReason")).Remove(expression.Name("cancelledAt")))
	ref := entryRef{key: order.ID + ".late", ref: order.ID, reason: "paid after cancel " + p.TransactionID, at: now.UnixMilli()}
	for i, it := range items {
		if it.Limited {
			t.counter(i, it.SKU, order.UserID, countUpdate(order.UserID, it.SKU, it.Qty), limitCondition(it.Qty, limits[it.SKU]))
		}
		t.lineStock(i, it, ref, availableOnSale, inventory.OpReserve, inventory.OpCommit)
	}
	return t
}

// availableOnSale is the condition of a shard update that takes q available units
// without a price check: available >= q and on sale.
func availableOnSale(q int) expression.ConditionBuilder {
	return expression.Name("available").GreaterThanEqual(expression.Value(q)).
		And(expression.Name("onSale").Equal(expression.Value(true)))
}
