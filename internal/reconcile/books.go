package reconcile

import (
	"context"
	"maps"
	"slices"

	"github.com/stockguard/stockguard/internal/inventory"
)

// books is one SKU's ledger totals, in units.
type books struct {
	available, onHand             int
	adjusted, committed, returned int
}

// ledgerSums are one SKU's ledger sums through the cut of each of its shards: per
// shard, and for the SKU as a whole. short lists the shards whose entries read fall
// short of (or exceed) the number their seq counts since the checkpoint.
type ledgerSums struct {
	shards map[int]inventory.ShardBooks
	total  books
	short  []int
}

// sums adds to sku's checkpoint (none on a full re-check) each shard's entries
// stamped after the checkpoint's epoch and up to its cut's.
func sums(sku inventory.SKUState, cuts map[int]inventory.ShardCut, entries []inventory.LedgerEntry, read check) ledgerSums {
	out := ledgerSums{shards: map[int]inventory.ShardBooks{}}
	for _, n := range slices.Sorted(maps.Keys(cuts)) {
		c := cuts[n]
		b := inventory.ShardBooks{Epoch: -1}
		if cp := sku.Checkpoint; cp != nil && read == sinceCheckpoints {
			if prev, ok := cp.Shards[n]; ok {
				b = prev
			}
		}
		from, want := b.Epoch, c.Seq-b.Seq
		for _, e := range entries {
			d, ok := e.ShardDeltas()[n]
			if e.SKU != sku.SKU || !ok || e.Epochs[n] <= from || e.Epochs[n] > c.Epoch {
				continue
			}
			want--
			b.Available += d.Available
			b.OnHand += d.OnHand
			switch e.Op {
			case inventory.OpAdjust:
				b.Adjusted += d.OnHand
			case inventory.OpCommit:
				b.Committed += e.Shards[n]
			case inventory.OpReturn:
				b.Returned += e.Shards[n]
			}
		}
		if want != 0 {
			out.short = append(out.short, n)
		}
		b.Epoch, b.Seq = c.Epoch, c.Seq
		out.shards[n] = b
		out.total.available += b.Available
		out.total.onHand += b.OnHand
		out.total.adjusted += b.Adjusted
		out.total.committed += b.Committed
		out.total.returned += b.Returned
	}
	return out
}

// oversold reports whether the SKU's books show stock sold that does not exist.
func (l ledgerSums) oversold() bool {
	return l.total.committed-l.total.returned > l.total.adjusted || l.total.available < 0
}

// differ collects one SKU's broken rules.
type differ struct {
	sku   string
	diffs []Difference
}

// add records rule as broken when expected and actual differ.
func (d *differ) add(rule Rule, expected, actual int) {
	if expected != actual {
		d.diffs = append(d.diffs, Difference{SKU: d.sku, Rule: rule, Expected: expected, Actual: actual})
	}
}

// check compares one SKU's counters at its cuts with its ledger sums through the same
// cuts, and records its differences and whether a repair explains them. A SKU that
// differs has its live waitlist holds read (Books.HeldUnits): held units are reserved
// like an open order's, so the repair takes them into its reference.
func (r *Reconciler) check(ctx context.Context, snap *snapshot, sku inventory.SKUState, read func(int)) error {
	d, fixes, fixable := r.judge(snap, sku, nil)
	if len(d.diffs) == 0 {
		return nil
	}
	held, complete, err := r.store.HeldUnits(ctx, sku.SKU, read)
	if err != nil {
		return err
	}
	if len(held) > 0 {
		d, fixes, fixable = r.judge(snap, sku, held)
	}
	snap.diffs[sku.SKU] = d.diffs
	ledger, c := snap.ledger[sku.SKU], totalOf(snap.cuts[sku.SKU])
	// Never write an oversell into the books as a repair: it is reported, not
	// explained. Nor repair against holds not all read.
	if fixable && complete && !ledger.oversold() && c.Available >= 0 && len(fixes) > 0 && len(sku.Shards) == sku.ShardCount {
		snap.fixes[sku.SKU] = fixes
	} else {
		snap.unfixable = append(snap.unfixable, sku.SKU)
	}
	return nil
}

// totalOf sums the counters of a SKU's shards at their cuts.
func totalOf(cuts map[int]inventory.ShardCut) inventory.ShardCounters {
	var c inventory.ShardCounters
	for _, sc := range cuts {
		c.Available += sc.Counters.Available
		c.OnHand += sc.Counters.OnHand
		c.Reserved += sc.Counters.Reserved
	}
	return c
}

// judge finds one SKU's differences and the repairs that would explain them, with
// the open orders' and held units (shard → units) as the reference for what is
// reserved.
func (r *Reconciler) judge(snap *snapshot, sku inventory.SKUState, held map[int]int) (*differ, []inventory.ShardFix, bool) {
	ledger, cuts := snap.ledger[sku.SKU], snap.cuts[sku.SKU]
	d := &differ{sku: sku.SKU}
	c := totalOf(cuts)
	total := ledger.total
	d.add(SKURule(CheckShards), sku.ShardCount, len(sku.Shards))
	d.add(SKURule(CheckAvailable), total.available, c.Available)
	d.add(SKURule(CheckOnHand), total.onHand, c.OnHand)
	d.add(SKURule(CheckReserved), total.onHand-total.available, c.OnHand-c.Available)
	if sold := total.committed - total.returned; sold > total.adjusted {
		d.add(SKURule(CheckSoldWithinStocked), total.adjusted, sold)
	}
	reserved := maps.Clone(snap.pending[sku.SKU])
	if reserved == nil {
		reserved = map[int]int{}
	}
	for n, q := range held {
		reserved[n] += q
	}
	fixes, fixable := d.shards(cuts, ledger, reserved)
	return d, fixes, fixable
}

// shards checks every shard at its cut, and returns the repairs that would explain
// the differences, and false when some shard's cannot be explained. The reserved
// units a shard's counters should hold are the ledger's (RESERVE − RELEASE − COMMIT
// + HOLD − UNHOLD through the cut); the open orders and live holds (pending) only pick
// which side a repair trusts.
func (d *differ) shards(cuts map[int]inventory.ShardCut, ledger ledgerSums, pending map[int]int) ([]inventory.ShardFix, bool) {
	var fixes []inventory.ShardFix
	fixable := true
	for _, n := range slices.Sorted(maps.Keys(cuts)) {
		sc, l, p := cuts[n].Counters, ledger.shards[n], pending[n]
		reserved := l.OnHand - l.Available
		if sc.Available == l.Available && sc.OnHand == l.OnHand && sc.Reserved == reserved &&
			sc.Available >= 0 && sc.Available <= sc.OnHand {
			continue
		}
		if len(cuts) > 1 { // with one shard, the SKU's rules already say it
			d.add(ShardRule(n, CheckAvailable), l.Available, sc.Available)
			d.add(ShardRule(n, CheckOnHand), l.OnHand, sc.OnHand)
			d.add(ShardRule(n, CheckReserved), reserved, sc.OnHand-sc.Available)
		}
		d.add(ShardRule(n, CheckReservedCounter), reserved, sc.Reserved)
		if sc.Available < 0 {
			d.add(ShardRule(n, CheckAvailableNonNegative), 0, sc.Available)
		}
		if sc.Available > sc.OnHand {
			d.add(ShardRule(n, CheckAvailableWithinOnHand), sc.OnHand, sc.Available)
		}
		fix, ok := shardFix(n, sc, l, p)
		if !ok {
			fixable = false
			continue
		}
		fix.Seq = cuts[n].Seq
		fixes = append(fixes, fix)
	}
	return fixes, fixable
}

// shardFix is the repair that explains shard n's difference, with the open orders
// and live holds (p reserved units) as the reference; false when none does.
func shardFix(n int, sc inventory.ShardCounters, l inventory.ShardBooks, p int) (inventory.ShardFix, bool) {
	ledgerFits := l.OnHand-l.Available == p && l.Available >= 0 && l.Available <= l.OnHand
	countersFit := sc.OnHand-sc.Available == p && sc.Available >= 0 && sc.Available <= sc.OnHand
	switch {
	case ledgerFits && !countersFit:
		// The ledger agrees with the open orders: the counters drifted.
		return inventory.ShardFix{Shard: n, Seen: sc, Available: l.Available, OnHand: l.OnHand}, true
	case countersFit && !ledgerFits:
		// The counters agree with the open orders: the ledger lost or gained entries.
		return inventory.ShardFix{Shard: n, Seen: sc, Available: sc.Available, OnHand: sc.OnHand,
			LedgerAvailable: sc.Available - l.Available, LedgerOnHand: sc.OnHand - l.OnHand}, true
	case countersFit && ledgerFits && sc.Reserved != p && sc.Available == l.Available && sc.OnHand == l.OnHand:
		// Only the reserved counter drifted.
		return inventory.ShardFix{Shard: n, Seen: sc, Available: sc.Available, OnHand: sc.OnHand}, true
	}
	// Neither side, or both, agree with the orders and holds (e.g. available and on-hand off by
	// the same amount: a lost or doubled ADJUST, or a counter edit): which is right is
	// a fact about the warehouse, for a person to establish.
	return inventory.ShardFix{}, false
}
