package reconcile

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/stockguard/stockguard/internal/inventory"
)

// cut takes the cut of every shard (see dynamo.Cut): a shard whose seq has not moved
// since its checkpoint (and that is not being re-checked in full) is cut where the
// strongly consistent Scan just read it — no entry was applied to it since the
// checkpoint's cut, and one applied after the Scan carries a later epoch; any other is
// cut by dynamo.Store.Cut, one UpdateItem that returns its counters at the cut. A
// shard a reshard deleted (and not grown again) is cut where it was deleted: empty,
// at its retired seq and epoch.
func (r *Reconciler) cut(ctx context.Context, snap *snapshot, read func(int)) error {
	for _, sku := range snap.skus {
		cuts := map[int]inventory.ShardCut{}
		for _, n := range slices.Sorted(maps.Keys(sku.Shards)) {
			mark := sku.Marks[n]
			if cp, ok := checkpointed(sku, n); ok && snap.check == sinceCheckpoints && cp.Seq == mark.Seq {
				cuts[n] = inventory.ShardCut{Counters: sku.Shards[n], Epoch: cp.Epoch, Seq: cp.Seq}
				continue
			}
			c, err := r.store.Cut(ctx, sku.SKU, n)
			if errors.Is(err, inventory.ErrMoved) {
				continue // deleted since the Scan: the shard count rule reports it
			}
			if err != nil {
				return err
			}
			read(1)
			cuts[n] = c
		}
		for n, m := range sku.Retired {
			if _, live := sku.Shards[n]; !live {
				cuts[n] = inventory.ShardCut{Epoch: m.Epoch, Seq: m.Seq}
			}
		}
		snap.cuts[sku.SKU] = cuts
	}
	return nil
}

// moved names, per SKU, the shards whose seq moved since their checkpoint (or that
// have none): the only shards with ledger entries not yet in a checkpoint, so the only
// ones whose entries since the watermark a run reads (dynamo.Store.LedgerSince). A
// live shard is judged by the seq the Scan read, a deleted one by its retired seq.
func moved(skus []inventory.SKUState) map[string][]int {
	out := map[string][]int{}
	for _, sku := range skus {
		seqs := map[int]int{}
		for n, m := range sku.Retired {
			seqs[n] = m.Seq
		}
		for n, m := range sku.Marks {
			seqs[n] = m.Seq
		}
		for _, n := range slices.Sorted(maps.Keys(seqs)) {
			if cp, ok := checkpointed(sku, n); !ok || cp.Seq != seqs[n] {
				out[sku.SKU] = append(out[sku.SKU], n)
			}
		}
	}
	return out
}

// checkpointed is shard n's checkpoint, if it has one.
func checkpointed(sku inventory.SKUState, n int) (inventory.ShardBooks, bool) {
	if sku.Checkpoint == nil {
		return inventory.ShardBooks{}, false
	}
	b, ok := sku.Checkpoint.Shards[n]
	return b, ok
}

// check is what a run trusts: the checkpoints, or nothing (a full re-check: the whole
// ledger read, every shard cut).
type check int

const (
	sinceCheckpoints check = iota // the checkpoints' sums, and the entries since
	fullCheck                     // the checkpoints ignored, the whole ledger read
)

// checkDue is the check this run makes: fullCheck when FullCheckEvery is set, the run
// falls inside the repair window, and the last full re-check is that old.
func (r *Reconciler) checkDue(snap *snapshot) check {
	if r.cfg.FullCheckEvery > 0 && r.cfg.Window.Contains(snap.now) &&
		(snap.mark.FullCheck.IsZero() || snap.now.Sub(snap.mark.FullCheck) >= r.cfg.FullCheckEvery) {
		return fullCheck
	}
	return sinceCheckpoints
}
