package dynamo

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stockguard/stockguard/internal/inventory"
)

// moveHolds moves every live waitlist hold with units on shards target.. of rec (a
// shrinking reshard) onto the shards that stay, shard n's units to shard n mod target,
// one transaction per hold (moveHold), and reports whether it moved any. A hold the
// index does not show yet keeps its shard's on-hand above 0, so the shrink stays
// incomplete until a later call moves it. Reads: as waitingEntries. Errors: errGone
// when the SKU record, a shard or an entry changed meanwhile (read again), ErrBusy.
func (s *StockStore) moveHolds(ctx context.Context, rec *skuRecord, target int, by string) (bool, error) {
	entries, err := (&WaitlistStore{s.store}).waitingEntries(ctx, rec.SKU)
	if err != nil {
		return false, err
	}
	at, cur, moved := s.now().UnixMilli(), *rec, false
	for _, e := range entries {
		to := map[int]int{}
		for n, q := range e.Shards {
			to[n%target] += q
		}
		if e.State != inventory.WaitHeld || maps.Equal(to, e.Shards) {
			continue
		}
		why := "reshard to " + strconv.Itoa(target) + " shards: a waitlist hold moves with its units"
		if err := s.moveHold(ctx, &cur, e, to, entryRef{reason: why, at: at, by: by}); err != nil {
			return moved, err
		}
		cur.Moves++
		moved = true
	}
	return moved, nil
}

// moveHold moves held entry e's units from e.Shards to the shards to (shard → units)
// in one TransactWriteItems: the entry's shards set to to and its moved count up by
// one (conditioned on the hold as read: heldAsRead, so a write of the hold read
// before fails), and, under a reference of its own (the hold's ref and the move's
// number), UNHOLD on the shards it leaves and HOLD on those it reaches, with a MOVE
// entry per shard whose on-hand changes, so each shard's counters change by its net
// effect: on-hand and reserved down where held units leave (conditioned on them still
// being reserved), up where they arrive, available nowhere. The hold keeps its ref,
// end and message; its later UNHOLD (order, pass, leaving) gives back to the shards
// it holds on then. The SKU record's move counter moves on (layoutUpdate). Errors:
// errGone when a condition failed, ErrBusy.
func (s *StockStore) moveHold(ctx context.Context, rec *skuRecord, e inventory.WaitlistEntry, to map[int]int, why entryRef) error {
	mref := "move." + strconv.Itoa(rec.Moves+1)
	move, hold := why, why
	move.key, move.ref = mref, mref
	hold.key, hold.ref = e.Ref+"."+mref, e.Ref+"."+mref
	t := s.newTxn("reshard " + rec.SKU + ": move a waitlist hold, " + mref)
	t.moves = rec.Moves + 1
	s.layoutUpdate(t, rec, why.by, expression.UpdateBuilder{}, expression.AttributeExists(expression.Name("pk")))
	t.update(part{kind: partWait, sku: e.SKU}, s.tables.Orders, waitKey(e.ID),
		expression.Set(expression.Name("shards"), expression.Value(shardsToRecord(to))).
			Set(expression.Name("moved"), expression.Value(e.Moved+1)), heldAsRead(e))
	all := maps.Clone(e.Shards)
	maps.Copy(all, to)
	for _, n := range slices.Sorted(maps.Keys(all)) {
		// Every shard an entry moves is written (its seq counts the entries), if only
		// by nothing.
		q := to[n] - e.Shards[n]
		cond := expression.AttributeExists(expression.Name("pk")).And(sameShardCount(rec.Shards))
		if q < 0 {
			cond = cond.And(reservedAtLeast(-q))
		}
		t.shard(0, rec.SKU, n, inventory.Delta{OnHand: q, Reserved: q}, cond)
		if q != 0 {
			m := newEntry(move, inventory.OpMove, rec.SKU, q, map[int]int{n: abs(q)})
			m.PK += "#" + strconv.Itoa(n)
			t.ledger(0, m)
		}
	}
	t.ledger(0, newEntry(hold, inventory.OpUnhold, e.SKU, e.Units, e.Shards))
	t.ledger(0, newEntry(hold, inventory.OpHold, e.SKU, e.Units, to))
	return s.apply(ctx, t, errGone)
}
