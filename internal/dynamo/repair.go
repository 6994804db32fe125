package dynamo

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/stockguard/stockguard/internal/inventory"
)

// ShardFix is one shard's repair: the counters as read (the condition), the counters
// to set, and the ledger deltas of its REPAIR entry.
type ShardFix struct {
	Shard int           // shard number
	Seen  ShardCounters // counters as read; the repair applies only if they still hold
	// Available and OnHand are the counters to set (reserved becomes OnHand −
	// Available); equal to Seen when only the ledger is fixed.
	Available, OnHand int
	// LedgerAvailable and LedgerOnHand are the REPAIR entry's deltas, which count in
	// the ledger sums (non-zero when the ledger, not the counters, was wrong).
	LedgerAvailable, LedgerOnHand int
}

// Repair applies fixes to one SKU's shards in one TransactWriteItems: per shard a
// REPAIR ledger entry (ref run, keyed run#REPAIR#sku#shard, recording the counter
// change in fixAvailable/fixOnHand and its ledger deltas in dAvailable/dOnHand), and
// an update setting the counters, conditioned on available, onHand and reserved still
// holding the values read — never a blind SET. Errors: ErrMoved when a counter moved
// (nothing written), ErrBusy, or another store error.
func (s *Store) Repair(ctx context.Context, run, sku, reason string, fixes []ShardFix) error {
	t := s.newTxn("repair " + sku)
	at := s.now().UnixMilli()
	avail, onHand, reserved := expression.Name("available"), expression.Name("onHand"), expression.Name("reserved")
	for _, f := range fixes {
		seen := avail.Equal(expression.Value(f.Seen.Available)).
			And(onHand.Equal(expression.Value(f.Seen.OnHand))).
			And(reserved.Equal(expression.Value(f.Seen.Reserved)))
		// Conditioned on the exact counters read, adding the change sets the values.
		fix := inventory.Delta{
			Available: f.Available - f.Seen.Available, OnHand: f.OnHand - f.Seen.OnHand,
			Reserved: f.OnHand - f.Available - f.Seen.Reserved,
		}
		t.shard(0, sku, f.Shard, fix, seen)
		shard := f.Shard
		t.ledger(0, ledgerRecord{
			PK: ledgerKey(run, string(inventory.OpRepair), sku+"#"+strconv.Itoa(f.Shard)), Ref: run, Op: string(inventory.OpRepair), SKU: sku,
			DAvailable: f.LedgerAvailable, DOnHand: f.LedgerOnHand, Shard: &shard,
			FixAvailable: fix.Available, FixOnHand: fix.OnHand, At: at, Reason: reason,
		})
	}
	return s.apply(ctx, t, ErrMoved)
}
