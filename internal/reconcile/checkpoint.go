package reconcile

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// fold saves, for every SKU whose shards moved since its checkpoint, the ledger sums
// through this run's cuts, each conditioned on the checkpoint read; then, when every
// one was saved, moves the watermark to now − Lag: every entry not yet folded was
// applied after a cut of this run, so written (its `at`) after now − Lag.
func (r *Reconciler) fold(ctx context.Context, snap *snapshot) {
	saved := true
	for _, sku := range snap.skus {
		sums := snap.ledger[sku.SKU]
		if len(sums.shards) == 0 || snap.check == sinceCheckpoints && sku.Checkpoint != nil && maps.Equal(sku.Checkpoint.Shards, sums.shards) {
			continue // nothing new: its checkpoint stands
		}
		prev := 0
		if sku.Checkpoint != nil {
			prev = sku.Checkpoint.Version
		}
		if err := r.store.SaveCheckpoint(ctx, inventory.Checkpoint{SKU: sku.SKU, Shards: sums.shards}, prev); err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "checkpoint not saved; the watermark stays", slog.String("skuId", sku.SKU), slog.String("error", err.Error()))
			saved = false
		}
	}
	if !saved {
		return
	}
	mark := snap.mark
	if cutoff := snap.now.Add(-r.cfg.Lag).Truncate(time.Minute); cutoff.After(mark.Through) {
		mark.Through = cutoff
	}
	if snap.check == fullCheck {
		mark.FullCheck = snap.now
	}
	if mark == snap.mark {
		return
	}
	if err := r.store.SaveWatermark(ctx, mark, snap.mark.Through); err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "watermark not saved", slog.String("error", err.Error()))
	}
}
