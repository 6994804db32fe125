package inventory

import (
	"errors"
	"time"
)

// The books as reconcile reads them: each shard's counters, its place in the ledger
// (seq and epoch), ledger entries and their sums, per-SKU checkpoints and the run's
// watermark, the repairs reconcile may apply, and the open orders it counts.

// ErrMoved is returned by the store's SaveCheckpoint, SaveWatermark and Repair
// (reconcile's Books) when what they were conditioned on changed since it was read
// (another run, or live traffic): nothing was written.
var ErrMoved = errors.New("changed since read")

// ShardCounters are one shard item's counters, in units.
type ShardCounters struct {
	Available, Reserved, OnHand int
}

// ShardMark is where a shard stands in the ledger (see ShardCut): the ledger entries that
// ever moved it (Seq) and its current epoch.
type ShardMark struct {
	Seq   int
	Epoch int
}

// SKUState is one SKU as a reconcile run finds it.
type SKUState struct {
	SKU    string                // SKU id
	Shards map[int]ShardCounters // shard number → counters; missing shards are absent
	Marks  map[int]ShardMark     // shard number → its seq and epoch, read with the counters
	// Retired are shards a reshard deleted (shard number → its seq and epoch at the
	// deletion, when it held no unit); a shard grown again carries on from them.
	Retired    map[int]ShardMark
	ShardCount int         // shards the SKU record declares
	Checkpoint *Checkpoint // nil before the SKU's first checkpoint
}

// Watermark is reconcile's progress: every ledger entry not yet summed in a checkpoint
// was written after Through (zero before the first run), and the last full re-check
// of the ledger ran at FullCheck (zero: never).
type Watermark struct {
	Through, FullCheck time.Time
}

// Sums are ledger sums for one shard, in units.
type Sums struct {
	Available, OnHand int
}

// ShardBooks are one shard's ledger sums over the entries of a cut (see ShardCut), in units.
type ShardBooks struct {
	Available, OnHand int // Σ available and on-hand deltas
	Adjusted          int // Σ ADJUST on-hand deltas on the shard (units stocked, net)
	Committed         int // Σ COMMIT units on the shard
	Returned          int // Σ RETURN units on the shard
	Epoch             int // entries stamped with this epoch or an earlier one are summed in
	Seq               int // how many entries that is: the shard's seq at the cut
}

// Checkpoint holds one SKU's ledger sums, per shard, through a cut of each shard.
type Checkpoint struct {
	SKU     string             // SKU id
	Version int                // saves are conditioned on it; each save adds one
	Shards  map[int]ShardBooks // shard number → sums through its cut
}

// ShardFix is one shard's repair: the counters as read (the condition), the counters
// to set, and the ledger deltas of its REPAIR entry.
type ShardFix struct {
	Shard int           // shard number
	Seen  ShardCounters // counters as read; the repair applies only if they still hold
	// Seq is the shard's seq at the cut the repair was decided on: the repair applies
	// only if no ledger entry moved the shard since (an order, a hold taken, used or
	// given back), so the open orders and holds it took as reference still stand.
	Seq int
	// Available and OnHand are the counters to set (reserved becomes OnHand −
	// Available); equal to Seen when only the ledger is fixed.
	Available, OnHand int
	// LedgerAvailable and LedgerOnHand are the REPAIR entry's deltas, which count in
	// the ledger sums (non-zero when the ledger, not the counters, was wrong).
	LedgerAvailable, LedgerOnHand int
}

// ShardCut is a shard as it was at the instant of a cut: the store moves the shard to
// its next epoch in one write and returns its counters just before (reconcile's Books.Cut).
type ShardCut struct {
	Counters ShardCounters
	Epoch    int // the epoch the cut closed: entries stamped with it or earlier applied before the cut
	Seq      int // ledger entries that ever moved the shard, up to the cut
}

// LedgerEntry is one stock_log entry as reconcile reads it. Quantities are units.
type LedgerEntry struct {
	Key        string      // the entry's key: ref#op#skuId (REPAIR: ref#REPAIR#skuId#shard)
	Ref        string      // order id, adjustment id or repair run id
	Op         Op          // the ledger operation (Op: its effect on the counters)
	SKU        string      // SKU id
	Qty        int         // units of the line (REPAIR: 0)
	DAvailable int         // change to the SKU's available units
	DOnHand    int         // change to the SKU's on-hand units
	Shards     map[int]int // shard → units of Qty on it (REPAIR: nil, see Shard)
	Shard      int         // REPAIR only: the one shard DAvailable and DOnHand apply to
	At         time.Time   // when the entry was written (writer's clock, ms)
	Reason     string      // ADJUST, MOVE and REPAIR entries: why
	By         string      // operator entries: the caller's IAM principal ARN
	// Epochs are the epochs of the shards the entry moved when it was written
	// (shard → epoch; see ShardCut). An entry without one counts as epoch 0.
	Epochs map[int]int
}

// ShardDeltas returns the entry's change to each shard's available and on-hand
// units: a REPAIR entry's signed deltas on its one shard, any other entry's units on
// each of its shards in the direction of its deltas.
func (e LedgerEntry) ShardDeltas() map[int]Sums {
	if e.Op == OpRepair {
		return map[int]Sums{e.Shard: {Available: e.DAvailable, OnHand: e.DOnHand}}
	}
	out := make(map[int]Sums, len(e.Shards))
	for n, units := range e.Shards {
		out[n] = Sums{Available: units * sign(e.DAvailable), OnHand: units * sign(e.DOnHand)}
	}
	return out
}

// OpenOrder is a PENDING order as the PendingByExpiry index shows it.
type OpenOrder struct {
	ID        string      // order id
	UserID    string      // owner
	ExpiresAt time.Time   // end of its payment window
	Items     []OrderItem // SKU, Qty and Shards (no prices)
}

// sign is 1, −1 or 0 as n is positive, negative or zero.
func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}
