package dynamo

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stockguard/stockguard/internal/inventory"
)

// The one path by which an order, or a refund, changes (docs/design.md, "One path for
// every change"): transact reads the record, asks the domain for the decision
// (an inventory.Change), builds the conditional TransactWriteItems from that value
// with the one transaction builder (txn.go), sends it under a fresh idempotency token,
// reads back when the outcome is unknown, reads again and asks again when the record
// moved on or a counter refused, and returns the record as the same value says.
// Release, payment, refund start and refund result are its only callers' decisions.

// maxTransitionRounds bounds the transactions one change sends; rounds after the
// first only run when the record changed meanwhile or a counter had drifted.
const maxTransitionRounds = 4

// subject is one kind of record transact changes: how to read it, where it is kept,
// which of its attributes a change may write, and which record a change leaves.
type subject[T any] struct {
	read  func(context.Context) (T, error)
	key   func(T) string
	attrs func(T) map[string]types.AttributeValue
	after func(inventory.Change) T
}

// orderSubject is the order id.
func (s *store) orderSubject(id string) subject[*inventory.Order] {
	return subject[*inventory.Order]{
		read:  func(ctx context.Context) (*inventory.Order, error) { return s.mustOrder(ctx, id) },
		key:   func(o *inventory.Order) string { return o.ID },
		attrs: func(o *inventory.Order) map[string]types.AttributeValue { return mustMarshal(newOrderRecord(o)) },
		after: func(c inventory.Change) *inventory.Order { return c.Order },
	}
}

// refundSubject is the refund of a second payment outRefundNo, on its own record (an
// order's own refunds change with their order: orderSubject).
func (s *store) refundSubject(outRefundNo string) subject[*inventory.Refund] {
	return subject[*inventory.Refund]{
		read:  func(ctx context.Context) (*inventory.Refund, error) { return s.RefundByNo(ctx, outRefundNo) },
		key:   func(r *inventory.Refund) string { return extraKey(r.OutRefundNo) },
		attrs: func(r *inventory.Refund) map[string]types.AttributeValue { return mustMarshal(newRefundState(r)) },
		after: func(c inventory.Change) *inventory.Refund { return c.Refund },
	}
}

// mustMarshal encodes one of this package's records, which always encode.
func mustMarshal(rec any) map[string]types.AttributeValue {
	m, err := attributevalue.MarshalMap(rec)
	if err != nil {
		panic(fmt.Sprintf("encode %T: %v", rec, err))
	}
	return m
}

// decision is a domain decision on a record read just before (see inventory.Change).
type decision[T any] func(ctx context.Context, record T, r inventory.Retry) (inventory.Change, error)

// transact changes the record of sub as decide decides, starting from cur (read just
// before by the caller). It returns the record as the change leaves it (applied in
// memory: no read after a write that answered), the change, and nil; or, when decide
// answers NoChange or an error, the record as read, the change and decide's error.
// Store errors return a zero record: inventory.ErrBusy (throttled, conflicted or
// unavailable, or no answer within maxTransitionRounds), or a plain error when a
// condition fails that only fails when the books disagree with the record.
func transact[T any](ctx context.Context, s *store, sub subject[T], cur T, decide decision[T]) (T, inventory.Change, error) {
	var zero T
	var retry inventory.Retry
	var c inventory.Change
	for range maxTransitionRounds {
		var err error
		if c, err = decide(ctx, cur, retry); err != nil || c.None() {
			return cur, c, err
		}
		w := diff(sub.attrs(cur), sub.attrs(sub.after(c)))
		t := s.changeTxn(sub.key(cur), sub.attrs(cur), w, c)
		res, failed, err := s.sendTransition(ctx, t, func(ctx context.Context) (bool, error) {
			now, err := sub.read(ctx)
			return err == nil && w.shownBy(sub.attrs(now)), err
		})
		switch {
		case err != nil:
			return zero, c, err
		case res == applied:
			return sub.after(c), c, nil
		case res == refused:
			if retry, err = nextRetry(c, t.what, failed, retry); err != nil {
				return zero, c, err
			}
		}
		// The record changed meanwhile, a counter had drifted or a shard was emptied by
		// a buyer since it was read: read again and decide again.
		if cur, err = sub.read(ctx); err != nil {
			return zero, c, err
		}
	}
	return zero, c, fmt.Errorf("%v: %d rounds without an answer: %w", c, maxTransitionRounds, inventory.ErrBusy)
}

// nextRetry reads the failed conditions of a refused change: purchase counters that
// held less than a give-back needs (changed by hand) are skipped next time, a counter
// that refused units counted again makes a late payment over its limit, and a shard
// that no longer holds the available units a move takes sends the decision round
// again, and so does a shard a refund's RETURN finds deleted by a reshard (its units
// go back on shard 0 next round). Any other failure means the books disagree with the record: an error.
func nextRetry(c inventory.Change, what string, failed parts, r inventory.Retry) (inventory.Retry, error) {
	retired := maps.Clone(r.Retired) // as this round decided: shard 0 refusing too is news
	for _, f := range failed {
		switch {
		case f.kind == partLimit && limitUnits(c, f) < 0:
			r.Drift(f.sku)
		case f.kind == partLimit:
			r.OverLimit = true
		case f.kind == partShard && stockMove(c, f.line).TakesAvailable():
		case f.kind == partShard && stockMove(c, f.line).Returns() && !retired[f.sku]:
			r.Retire(f.sku) // a shrinking reshard deleted the shard: return on shard 0
		default:
			return r, booksOff(what, failed)
		}
	}
	return r, nil
}

// limitUnits are the units c's counter move of p's line and SKU counts (< 0: gives back).
func limitUnits(c inventory.Change, p part) int {
	for _, m := range c.Limits {
		if m.Line == p.line && m.SKU == p.sku {
			return m.Units
		}
	}
	return 0
}

// stockMove is c's stock move of line.
func stockMove(c inventory.Change, line int) inventory.StockMove {
	for _, m := range c.Stock {
		if m.Line == line {
			return m
		}
	}
	return inventory.StockMove{}
}

// write is what a change writes on its record: the attributes it sets (with their new
// values) and those it removes.
type write struct {
	set     map[string]types.AttributeValue
	removed []string
}

// diff is the write that turns a record with attributes before into one with after.
func diff(before, after map[string]types.AttributeValue) write {
	w := write{set: map[string]types.AttributeValue{}}
	for name, v := range after {
		if !reflect.DeepEqual(before[name], v) {
			w.set[name] = v
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			w.removed = append(w.removed, name)
		}
	}
	slices.Sort(w.removed)
	return w
}

// update is w as an update expression.
func (w write) update() expression.UpdateBuilder {
	var u expression.UpdateBuilder
	for _, name := range slices.Sorted(maps.Keys(w.set)) {
		u = u.Set(expression.Name(name), expression.Value(w.set[name]))
	}
	for _, name := range w.removed {
		u = u.Remove(expression.Name(name))
	}
	return u
}

// shownBy reports whether a record with attrs shows w applied.
func (w write) shownBy(attrs map[string]types.AttributeValue) bool {
	for name, v := range w.set {
		if !reflect.DeepEqual(attrs[name], v) {
			return false
		}
	}
	for _, name := range w.removed {
		if _, ok := attrs[name]; ok {
			return false
		}
	}
	return true
}

// guardAttributes are the attributes each inventory.Guard keeps as read.
var guardAttributes = []struct {
	guard inventory.Guard
	name  string
}{{inventory.GuardPrepay, "prepayId"}, {inventory.GuardRefundNo, "outRefundNo"}, {inventory.GuardRefunds, "refundRev"}, {inventory.GuardShipping, "shipping"}, {inventory.GuardPresale, "presale"}, {inventory.GuardAftersales, "aftersales"},
	{inventory.GuardReceipt, "receipt"}}

// changeTxn builds the transaction of c on the record pk (attributes before as read,
// w what c writes on it): the record's update conditioned on its status (and c's
// guards) as read, the refund marker, the purchase counters, and per stock move the
// update of each shard (see stockCondition) with its ledger entries.
func (s *store) changeTxn(pk string, before map[string]types.AttributeValue, w write, c inventory.Change) *txn {
	t := s.newTxn(c.String())
	cond := expression.Name("status").Equal(expression.Value(string(c.From)))
	for _, g := range guardAttributes {
		if c.Guards.Has(g.guard) {
			cond = cond.And(asRead(g.name, before))
		}
	}
	t.update(part{kind: partOrder}, s.tables.Orders, pk, w.update(), cond)
	if m := c.Marker; m != nil && m.Remove {
		t.remove(part{kind: partOrder}, s.tables.Orders, markKey(m.OutRefundNo))
	} else if m != nil {
		t.mark(m.OutRefundNo, m.Since)
	}
	if c.Order == nil {
		return t
	}
	for _, m := range c.Limits {
		t.counter(m.Line, m.SKU, c.Order.UserID, limitUpdate(m, c.Order.UserID), limitMoveCondition(m))
	}
	ref := entryRef{key: c.Entry.Ref, ref: c.Order.ID, reason: c.Entry.Reason, at: c.Entry.At.UnixMilli(), by: c.Entry.By}
	for _, m := range c.Stock {
		t.lineStock(m.Line, m.Item, ref, stockCondition(m), m.Ops...)
	}
	return t
}

// asRead holds when attribute name is as it was in before: equal, or still absent.
func asRead(name string, before map[string]types.AttributeValue) expression.ConditionBuilder {
	v, ok := before[name]
	if !ok {
		return expression.AttributeNotExists(expression.Name(name))
	}
	return expression.Name(name).Equal(expression.Value(v))
}

// limitUpdate counts m's units on user's purchase counter, or gives them back.
func limitUpdate(m inventory.LimitMove, user string) expression.UpdateBuilder {
	if m.Units < 0 {
		return expression.Add(expression.Name("bought"), expression.Value(m.Units))
	}
	return countUpdate(user, m.SKU, m.Units)
}

// limitMoveCondition keeps a counter from going below zero when m gives units back,
// and within m's cap when it counts them.
func limitMoveCondition(m inventory.LimitMove) expression.ConditionBuilder {
	if m.Units < 0 {
		return expression.Name("bought").GreaterThanEqual(expression.Value(-m.Units))
	}
	return limitCondition(m.Units, m.Cap)
}

// stockCondition is what a shard update by m's ops requires of the shard for q units:
// the units the update takes — the reserved ones when reserved falls (RELEASE,
// COMMIT), else the available ones when available falls (a late payment's RESERVE
// and COMMIT), on sale when they are reserved anew — and otherwise that the shard is
// still there (RETURN: a reshard may have deleted an emptied shard). So available
// never passes on-hand, and no counter goes below zero.
func stockCondition(m inventory.StockMove) func(q int) expression.ConditionBuilder {
	return func(q int) expression.ConditionBuilder {
		d := m.Delta(q)
		switch {
		case d.Reserved < 0:
			return expression.Name("reserved").GreaterThanEqual(expression.Value(-d.Reserved))
		case d.Available < 0 && m.Reserves():
			return availableOnSale(-d.Available)
		case d.Available < 0:
			return expression.Name("available").GreaterThanEqual(expression.Value(-d.Available))
		}
		return expression.AttributeExists(expression.Name("pk"))
	}
}

// availableOnSale is the condition of a shard update that takes q available units
// without a price check: available >= q and on sale.
func availableOnSale(q int) expression.ConditionBuilder {
	return expression.Name("available").GreaterThanEqual(expression.Value(q)).
		And(expression.Name("onSale").Equal(expression.Value(true)))
}

// sendResult is what sending a transition came to.
type sendResult int

const (
	applied sendResult = iota // the transition was applied (maybe by an earlier send)
	lost                      // the record had left the from status: nothing changed
	refused                   // another condition failed (see the failed parts): nothing changed
)

// sendTransition sends t, a change's transaction (its record's update first), with a
// fresh ClientRequestToken: a random UUID, within DynamoDB's 36 characters (DynamoDB
// API Reference, TransactWriteItems). The SDK's retries resend the same input, token
// included, so they are idempotent for 10 minutes; any other send, even of an
// equal-looking transaction by a concurrent caller, has its own token, since DynamoDB
// answers IdempotentParameterMismatchException to a token reused with other
// parameters. When the outcome is unknown the record is read back, on a short deadline
// of its own: shown reports whether it shows this very change applied. Errors wrap
// inventory.ErrBusy when DynamoDB was throttled, conflicted or unavailable; an
// outcome still unknown after store.resend and the read-back is outcomeUnknown.
func (s *store) sendTransition(ctx context.Context, t *txn, shown func(context.Context) (bool, error)) (sendResult, parts, error) {
	t.token = uuid.NewString()
	out, err := s.send(ctx, t)
	switch {
	case err != nil:
		return 0, nil, err
	case out.applied:
		return applied, nil, nil
	case out.unknown != nil:
		cctx, cancel := convergeContext(ctx)
		defer cancel()
		ok, err := shown(cctx)
		switch {
		case err != nil:
			return 0, nil, outcomeUnknown(t.what, out.unknown)
		case ok:
			return applied, nil, nil
		}
		return lost, nil, nil // read again by transact: if unchanged, it will try again
	case out.has(partOrder):
		return lost, nil, nil
	}
	return refused, out.parts(), nil
}

// booksOff is the error for a transition refused by a condition that only fails when
// the counters or the ledger disagree with the order.
func booksOff(what string, failed parts) error {
	return fmt.Errorf("%s: %v failed its condition: the books need reconciling", what, failed)
}
