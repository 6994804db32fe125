package reconcile

import (
	"context"
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
)

// fold moves the checkpoints of the SKUs with entries older than now − Lag, then the
// watermark, each conditioned on what was read.
func (r *Reconciler) fold(ctx context.Context, snap *snapshot) {
	cutoff := snap.now.Add(-r.cfg.Lag).Truncate(time.Minute)
	if !cutoff.After(snap.watermark) {
		return
	}
	touched := map[string]bool{}
	for _, e := range snap.entries {
		if !e.At.After(cutoff) {
			touched[e.SKU] = true
		}
	}
	for _, sku := range snap.skus {
		if !touched[sku.SKU] && (sku.Checkpoint != nil || !snap.watermark.IsZero()) {
			continue // nothing new: its checkpoint stays valid up to the new watermark
		}
		sums := r.sums(sku, snap.watermark, snap.bySKU[sku.SKU], cutoff)
		cp := dynamo.Checkpoint{SKU: sku.SKU, Through: cutoff, Shards: map[int]dynamo.Sums{},
			Adjusted: sums.total.adjusted, Committed: sums.total.committed, Returned: sums.total.returned}
		for n, b := range sums.shards {
			cp.Shards[n] = dynamo.Sums{Available: b.available, OnHand: b.onHand}
		}
		var prev time.Time
		if sku.Checkpoint != nil {
			prev = sku.Checkpoint.Through
			if !prev.Before(cutoff) {
				continue // already folded this far (a run with a clock ahead): never move back
			}
		}
		if err := r.store.SaveCheckpoint(ctx, cp, prev); err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "checkpoint not saved; the watermark stays", slog.String("skuId", sku.SKU), slog.String("error", err.Error()))
			return
		}
	}
	if err := r.store.SaveWatermark(ctx, cutoff, snap.watermark); err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "watermark not saved", slog.String("error", err.Error()))
	}
}
