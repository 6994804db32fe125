package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// repair applies the repairs snap found and releases its overdue orders.
func (r *Reconciler) repair(ctx context.Context, snap *snapshot) []Repaired {
	// Runs that read the same watermark and state repair under the same key, so
	// overlapping runs cannot both write a REPAIR entry for one shard.
	run := "repair-" + strconv.FormatInt(snap.mark.Through.UnixMilli(), 10)
	done := []Repaired{} // the report's "repaired" is a list, [] when nothing was repaired
	for _, sku := range slices.Sorted(maps.Keys(snap.fixes)) {
		fixes := snap.fixes[sku]
		if err := r.store.Repair(ctx, run, sku, "reconcile", fixes); err != nil {
			level := inventory.FailureLevel(ctx, err)
			if errors.Is(err, inventory.ErrMoved) {
				level = slog.LevelWarn // live traffic moved the counters: next run
			}
			r.log.LogAttrs(ctx, level, "repair not applied", slog.String("skuId", sku), slog.String("error", err.Error()))
			continue
		}
		for _, f := range fixes {
			for _, c := range []struct {
				rule  string
				delta int
			}{
				{"available", f.Available - f.Seen.Available}, {"onHand", f.OnHand - f.Seen.OnHand},
				{"reserved counter", f.OnHand - f.Available - f.Seen.Reserved},
				{"ledger available", f.LedgerAvailable}, {"ledger onHand", f.LedgerOnHand},
			} {
				if c.delta != 0 {
					done = append(done, Repaired{SKU: sku, Rule: c.rule, Delta: c.delta})
				}
			}
		}
	}
	return append(done, r.releaseAllOverdue(ctx, snap)...)
}

// releaseAllOverdue releases the snapshot's overdue orders (see releaseOverdue) and
// emits each release's lag (cancelledAt − expiresAt, ms) in the ReleaseLag metric.
func (r *Reconciler) releaseAllOverdue(ctx context.Context, snap *snapshot) []Repaired {
	var (
		done  []Repaired
		lagMs []float64
	)
	for _, o := range snap.overdue {
		order, released, err := r.releaseOverdue(ctx, o.ID)
		if err != nil {
			r.log.LogAttrs(ctx, inventory.FailureLevel(ctx, err), "overdue order not released", slog.String("orderId", o.ID), slog.String("error", err.Error()))
			continue
		}
		if !released {
			continue
		}
		for _, it := range order.Items {
			done = append(done, Repaired{SKU: it.SKU, Rule: "overdue " + o.ID, Delta: it.Qty})
		}
		if order.CancelledAt != nil {
			lagMs = append(lagMs, float64(order.CancelledAt.Sub(order.ExpiresAt).Milliseconds()))
		}
	}
	metric.Emit(ctx, r.log, MetricFunction, metric.ReleaseLag.Of(lagMs...))
	return done
}

// releaseOverdue releases an overdue order through the store's timeout path, unless it
// has a WeChat Pay order: that one is left to closeOrder, which asks WeChat Pay before
// it releases (reconcile holds no merchant client), and reported as an error.
func (r *Reconciler) releaseOverdue(ctx context.Context, id string) (*inventory.Order, bool, error) {
	order, err := r.store.Lookup(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if order.PrepayID != "" {
		return nil, false, fmt.Errorf("order %s has a WeChat Pay order: closeOrder must ask WeChat Pay before releasing it", id)
	}
	return r.store.Release(ctx, order, inventory.CancelTimeout)
}
