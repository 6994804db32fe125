package reconcile

import (
	"maps"
	"slices"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
)

// books is one SKU's (or shard's) ledger sums, in units.
type books struct {
	available, onHand             int
	adjusted, committed, returned int
}

// ledgerSums are one SKU's ledger sums: per shard (available and on-hand), and for
// the SKU as a whole (available and on-hand summed over the shards, and the ADJUST,
// COMMIT and RETURN sums).
type ledgerSums struct {
	shards map[int]books
	total  books
}

// sums adds to sku's checkpoint its entries written after it (and, when until is not
// zero, at or before until).
func (r *Reconciler) sums(sku dynamo.SKUState, watermark time.Time, entries []dynamo.LedgerEntry, until time.Time) ledgerSums {
	out := ledgerSums{shards: map[int]books{}}
	through := watermark
	if cp := sku.Checkpoint; cp != nil {
		through = cp.Through
		for n, s := range cp.Shards {
			out.shards[n] = books{available: s.Available, onHand: s.OnHand}
		}
		out.total = books{adjusted: cp.Adjusted, committed: cp.Committed, returned: cp.Returned}
	}
	for _, e := range entries {
		if e.SKU != sku.SKU || !e.At.After(through) || !until.IsZero() && e.At.After(until) {
			continue
		}
		for n, d := range e.ShardDeltas() {
			b := out.shards[n]
			b.available += d.Available
			b.onHand += d.OnHand
			out.shards[n] = b
		}
		switch e.Op {
		case dynamo.OpAdjust:
			out.total.adjusted += e.DOnHand
		case dynamo.OpCommit:
			out.total.committed += e.Qty
		case dynamo.OpReturn:
			out.total.returned += e.Qty
		}
	}
	for _, b := range out.shards {
		out.total.available += b.available
		out.total.onHand += b.onHand
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

// check compares one SKU's counters with its ledger sums and open orders, and records
// its differences and whether a repair explains them.
func (r *Reconciler) check(snap *snapshot, sku dynamo.SKUState) {
	ledger, pending := snap.ledger[sku.SKU], snap.pending[sku.SKU]
	d := &differ{sku: sku.SKU}
	var c dynamo.ShardCounters
	for _, sc := range sku.Shards {
		c.Available += sc.Available
		c.OnHand += sc.OnHand
		c.Reserved += sc.Reserved
	}
	reservedUnits := 0
	for _, u := range pending {
		reservedUnits += u
	}
	total := ledger.total
	d.add(SKURule(CheckShards), sku.ShardCount, len(sku.Shards))
	d.add(SKURule(CheckAvailable), total.available, c.Available)
	d.add(SKURule(CheckOnHand), total.onHand, c.OnHand)
	d.add(SKURule(CheckReserved), reservedUnits, c.OnHand-c.Available)
	if sold := total.committed - total.returned; sold > total.adjusted {
		d.add(SKURule(CheckSoldWithinStocked), total.adjusted, sold)
	}
	fixes, fixable := d.shards(sku, ledger, pending)
	if len(d.diffs) == 0 {
		return
	}
	snap.diffs[sku.SKU] = d.diffs
	// Never write an oversell into the books as a repair: it is reported, not explained.
	if fixable && !ledger.oversold() && c.Available >= 0 && len(fixes) > 0 && len(sku.Shards) == sku.ShardCount {
		snap.fixes[sku.SKU] = fixes
	} else {
		snap.unfixable = append(snap.unfixable, sku.SKU)
	}
}

// shards checks every shard the counters or the ledger know of, and returns the
// repairs that would explain the differences, and false when some shard's cannot be
// explained.
func (d *differ) shards(sku dynamo.SKUState, ledger ledgerSums, pending map[int]int) ([]dynamo.ShardFix, bool) {
	var fixes []dynamo.ShardFix
	fixable := true
	numbers := shardNumbers(sku, ledger)
	for _, n := range numbers {
		sc, l, p := sku.Shards[n], ledger.shards[n], pending[n]
		if sc.Available == l.available && sc.OnHand == l.onHand && sc.OnHand-sc.Available == p && sc.Reserved == p &&
			sc.Available >= 0 && sc.Available <= sc.OnHand {
			continue
		}
		if len(numbers) > 1 { // with one shard, the SKU's rules already say it
			d.add(ShardRule(n, CheckAvailable), l.available, sc.Available)
			d.add(ShardRule(n, CheckOnHand), l.onHand, sc.OnHand)
			d.add(ShardRule(n, CheckReserved), p, sc.OnHand-sc.Available)
		}
		d.add(ShardRule(n, CheckReservedCounter), p, sc.Reserved)
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
		fixes = append(fixes, fix)
	}
	return fixes, fixable
}

// shardFix is the repair that explains shard n's difference, with the open orders
// (p reserved units) as the reference; false when none does.
func shardFix(n int, sc dynamo.ShardCounters, l books, p int) (dynamo.ShardFix, bool) {
	ledgerFits := l.onHand-l.available == p && l.available >= 0 && l.available <= l.onHand
	countersFit := sc.OnHand-sc.Available == p && sc.Available >= 0 && sc.Available <= sc.OnHand
	switch {
	case ledgerFits && !countersFit:
		// The ledger agrees with the open orders: the counters drifted.
		return dynamo.ShardFix{Shard: n, Seen: sc, Available: l.available, OnHand: l.onHand}, true
	case countersFit && !ledgerFits:
		// The counters agree with the open orders: the ledger lost or gained entries.
		return dynamo.ShardFix{Shard: n, Seen: sc, Available: sc.Available, OnHand: sc.OnHand,
			LedgerAvailable: sc.Available - l.available, LedgerOnHand: sc.OnHand - l.onHand}, true
	case countersFit && ledgerFits && sc.Reserved != p && sc.Available == l.available && sc.OnHand == l.onHand:
		// Only the reserved counter drifted.
		return dynamo.ShardFix{Shard: n, Seen: sc, Available: sc.Available, OnHand: sc.OnHand}, true
	}
	// Neither side, or both, agree with the orders (e.g. available and on-hand off by
	// the same amount: a lost or doubled ADJUST, or a counter edit): which is right is
	// a fact about the warehouse, for a person to establish.
	return dynamo.ShardFix{}, false
}

// shardNumbers lists the shards the counters or the ledger know of, in order.
func shardNumbers(sku dynamo.SKUState, ledger ledgerSums) []int {
	seen := map[int]bool{}
	for n := range sku.Shards {
		seen[n] = true
	}
	for n := range ledger.shards {
		seen[n] = true
	}
	return slices.Sorted(maps.Keys(seen))
}
