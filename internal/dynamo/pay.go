package dynamo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Payment is a verified, successful payment of an order: the fields of a WeChat Pay
// APIv3 transaction that stockguard records (WeChat Pay APIv3 docs, 支付成功回调通知).
type Payment struct {
	OrderID       string    // out_trade_no: the order id
	TransactionID string    // WeChat Pay transaction_id
	Amount        int64     // amount.total, fen
	Currency      string    // amount.currency, e.g. CNY
	PaidAt        time.Time // success_time; zero means now
}

// PayResult says what Pay did with a payment.
type PayResult int

// Pay results.
const (
	// PaidNow: PENDING → PAID; the reserved units were committed (on-hand −q).
	PaidNow PayResult = iota + 1
	// PaidLate: the order had been CANCELLED (timeout or user) and its stock released;
	// the units were available again, so they were reserved and committed at once, and
	// the order is PAID.
	PaidLate
	// RefundDue: the order had been CANCELLED and its units are no longer available;
	// it is REFUND_PENDING (money to give back), stock untouched.
	RefundDue
	// Replayed: this very payment (same transaction id) was recorded before; nothing
	// changed.
	Replayed
)

func (r PayResult) String() string {
	switch r {
	case PaidNow:
		return "PAID"
	case PaidLate:
		return "PAID_LATE"
	case RefundDue:
		return "REFUND_PENDING"
	case Replayed:
		return "REPLAYED"
	}
	return "UNKNOWN"
}

// Pay records a successful payment of p.OrderID exactly once (DESIGN.md, state
// machine; "money and goods: goods first"):
//   - PENDING → PAID in one TransactWriteItems: the order (conditioned on PENDING,
//     paidAt and transactionId set), on-hand −q and reserved −q on exactly the shards
//     the order reserved (conditioned on reserved >= q), one COMMIT ledger entry per line;
//   - CANCELLED → PAID when every line's units are available again: one transaction
//     takes them (available −q and on-hand −q, conditioned on available >= q, on
//     whichever shards hold them), counts them on the purchase counters again, and
//     writes RESERVE and COMMIT entries distinct from the order's first RESERVE
//     (ref <orderId>.late);
//   - CANCELLED → REFUND_PENDING otherwise, stock untouched;
//   - a payment already recorded (same transaction id) is Replayed.
//
// A payment racing a release on the same order either pays it (the release then does
// nothing) or finds it CANCELLED and takes the late path: never both.
//
// Errors: inventory.ErrOrderNotFound (no such order); inventory.ErrPaymentMismatch
// (amount or currency differ: nothing changed); inventory.ErrPaidTwice (the order was
// paid by another transaction: nothing changed, the money must be refunded by hand);
// inventory.ErrBusy (throttled, conflicted or unavailable: nothing changed, retry); or
// another store error.
func (s *Store) Pay(ctx context.Context, p Payment) (*inventory.Order, PayResult, error) {
	now := s.now()
	if p.PaidAt.IsZero() {
		p.PaidAt = now
	}
	p.PaidAt = p.PaidAt.UTC()
	if !inventory.ValidOrderID(p.OrderID) {
		return nil, 0, fmt.Errorf("pay order %q: %w", p.OrderID, inventory.ErrOrderNotFound)
	}
	order, err := s.order(ctx, p.OrderID)
	if err != nil {
		return nil, 0, err
	}
	if order == nil {
		return nil, 0, fmt.Errorf("pay order %s: %w", p.OrderID, inventory.ErrOrderNotFound)
	}
	if p.Amount != order.Amount || p.Currency != order.Currency {
		return order, 0, fmt.Errorf("pay order %s: paid %d fen %s, order is %d fen %s: %w", order.ID, p.Amount, p.Currency, order.Amount, order.Currency, inventory.ErrPaymentMismatch)
	}
	mine := func(o *inventory.Order) bool { return o.TransactionID == p.TransactionID }
	overLimit := false // a late payment found the user's purchase limit reached
	for range maxTransitionRounds {
		var (
			res    sendResult
			failed []action
			result PayResult
		)
		switch order.Status {
		case inventory.StatusPending:
			res, failed, err = s.send(ctx, s.commitTx(order, p, now), mine)
			result = PaidNow
		case inventory.StatusCancelled:
			var t *transition
			if t, result, err = s.lateTx(ctx, order, p, now, overLimit); err != nil {
				return nil, 0, err
			}
			res, failed, err = s.send(ctx, t, mine)
		default: // PAID, REFUND_PENDING, REFUNDED
			if mine(order) {
				return order, Replayed, nil
			}
			return order, 0, fmt.Errorf("pay order %s with %s: %s by %s: %w", order.ID, p.TransactionID, order.Status, order.TransactionID, inventory.ErrPaidTwice)
		}
		switch {
		case err != nil:
			return nil, 0, err
		case res == applied:
			order, err = s.mustOrder(ctx, order.ID)
			return order, result, err
		case res == refused && (order.Status == inventory.StatusPending || result == RefundDue):
			return nil, 0, booksOff("pay", order.ID, failed)
		case res == refused && slices.ContainsFunc(failed, func(a action) bool { return a.kind == roleLimit }):
			overLimit = true
		case res == refused && slices.ContainsFunc(failed, func(a action) bool { return a.kind == roleLedger }):
			return nil, 0, booksOff("pay", order.ID, failed)
		}
		// The order changed meanwhile, or a late path's shard was emptied by a buyer
		// since it was read: read again and take the path it now calls for.
		if order, err = s.mustOrder(ctx, order.ID); err != nil {
			return nil, 0, err
		}
	}
	return nil, 0, fmt.Errorf("pay order %s: %d rounds without an answer: %w", p.OrderID, maxTransitionRounds, inventory.ErrBusy)
}

// paidUpdate is the order update shared by the payment transitions.
func paidUpdate(status inventory.Status, p Payment) expression.UpdateBuilder {
	return expression.Set(expression.Name("status"), expression.Value(string(status))).
		Set(expression.Name("paidAt"), expression.Value(formatTime(p.PaidAt))).
		Set(expression.Name("transactionId"), expression.Value(p.TransactionID))
}

// commitTx builds PENDING → PAID: the reserved units leave on-hand.
func (s *Store) commitTx(order *inventory.Order, p Payment, now time.Time) *transition {
	upd := paidUpdate(inventory.StatusPaid, p).Remove(expression.Name("pendingBucket")).Remove(expression.Name("pendingExpiresAt"))
	t := s.newTransition("commit", order, inventory.StatusPending, upd)
	onHand, reserved := expression.Name("onHand"), expression.Name("reserved")
	for _, line := range order.Items {
		for _, n := range slices.Sorted(maps.Keys(line.Shards)) {
			q := line.Shards[n]
			t.shard(s, line.SKU, n, expression.Set(onHand, onHand.Minus(expression.Value(q))).Add(reserved, expression.Value(-q)),
				reserved.GreaterThanEqual(expression.Value(q)))
		}
		t.ledger(s, ledgerRecord{
			PK: ledgerKey(order.ID, OpCommit, line.SKU), Ref: order.ID, Op: OpCommit, SKU: line.SKU,
			Qty: line.Qty, DOnHand: -line.Qty, Shards: shardsToRecord(line.Shards), At: now.UnixMilli(),
			Reason: "paid " + p.TransactionID,
		})
	}
	return t
}

// lateTx builds the transition of a CANCELLED order that was paid: PAID with its
// units taken again from the shards that hold them now (strongly consistent reads,
// fullest shards first; conditioned on available >= q and on sale) and counted on the
// user's purchase limit again (conditioned on the limit), or REFUND_PENDING when that
// cannot be: a line the shards cannot cover, a SKU gone or off sale, the limit reached
// (overLimit, or a line above it), or more actions than one transaction may hold.
func (s *Store) lateTx(ctx context.Context, order *inventory.Order, p Payment, now time.Time, overLimit bool) (*transition, PayResult, error) {
	refund := func() (*transition, PayResult, error) {
		return s.newTransition("refund-pending", order, inventory.StatusCancelled, paidUpdate(inventory.StatusRefundPending, p)), RefundDue, nil
	}
	if overLimit {
		return refund()
	}
	ids := make([]string, len(order.Items))
	for i, it := range order.Items {
		ids[i] = it.SKU
	}
	recs, err := s.skuRecords(ctx, ids, true)
	if err != nil {
		return nil, 0, err
	}
	counts := map[string]int{}
	for _, id := range ids {
		if e, ok := recs[id]; ok {
			counts[id] = e.rec.Shards
		}
	}
	shards, err := s.shardRecords(ctx, counts)
	if err != nil {
		return nil, 0, err
	}
	items := make([]inventory.OrderItem, len(order.Items))
	for i, it := range order.Items {
		e, ok := recs[it.SKU]
		if !ok || !e.rec.OnSale || e.rec.LimitPerUser > 0 && it.Qty > e.rec.LimitPerUser {
			return refund()
		}
		avail := make([]int, counts[it.SKU])
		for _, sh := range shards[it.SKU] {
			if sh.Shard >= 0 && sh.Shard < len(avail) && sh.OnSale {
				avail[sh.Shard] = sh.Available
			}
		}
		alloc, ok := allocate(it.Qty, avail, true)
		if !ok || len(avail) == 0 {
			return refund()
		}
		items[i] = it
		items[i].Shards = alloc
	}
	rec := newOrderRecord(&inventory.Order{Status: order.Status, Items: items})
	// The order is PAID now: its cancellation is history (kept in the ledger).
	t := s.newTransition("pay late", order, inventory.StatusCancelled,
		paidUpdate(inventory.StatusPaid, p).Set(expression.Name("items"), expression.Value(rec.Items)).
			Remove(expression.Name("cancelReason")).Remove(expression.Name("cancelledAt")))
	avail, onHand := expression.Name("available"), expression.Name("onHand")
	at := now.UnixMilli()
	ref := order.ID + ".late"
	for _, it := range items {
		for _, n := range slices.Sorted(maps.Keys(it.Shards)) {
			q := it.Shards[n]
			t.shard(s, it.SKU, n, expression.Set(avail, avail.Minus(expression.Value(q))).Set(onHand, onHand.Minus(expression.Value(q))),
				avail.GreaterThanEqual(expression.Value(q)).And(expression.Name("onSale").Equal(expression.Value(true))))
		}
		if it.Limited {
			if limit := recs[it.SKU].rec.LimitPerUser; limit > 0 {
				t.add(s.limitUpdate(order.UserID, it.SKU, it.Qty, limit))(action{kind: roleLimit, sku: it.SKU})
			} else { // the limit was lifted: count the units all the same
				t.counter(s, it.SKU, order.UserID, expression.Add(expression.Name("bought"), expression.Value(it.Qty)).
					Set(expression.Name("kind"), expression.Value(kindLimit)).
					Set(expression.Name("skuId"), expression.Value(it.SKU)).
					Set(expression.Name("userId"), expression.Value(order.UserID)), expression.ConditionBuilder{})
			}
		}
		shards := shardsToRecord(it.Shards)
		for _, e := range []ledgerRecord{
			{Op: OpReserve, DAvailable: -it.Qty},
			{Op: OpCommit, DOnHand: -it.Qty},
		} {
			e.PK, e.Ref, e.SKU, e.Qty, e.Shards, e.At, e.Reason = ledgerKey(ref, e.Op, it.SKU), order.ID, it.SKU, it.Qty, shards, at, "paid after cancel "+p.TransactionID
			t.ledger(s, e)
		}
	}
	if len(t.items) > maxTransactItems {
		return refund() // DynamoDB API Reference, TransactWriteItems: up to 100 actions
	}
	return t, PaidLate, nil
}
