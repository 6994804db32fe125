package refunds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// StuckResult is a stuck pass's JSON result.
type StuckResult struct {
	Found      int   `json:"found"`      // refunds REFUNDING longer than the bound
	Refunded   int   `json:"refunded"`   // of those, found done at WeChat Pay and marked REFUNDED
	Requeued   int   `json:"requeued"`   // never requested (a lost message): sent to the queue again
	Stuck      int   `json:"stuck"`      // still REFUNDING after the pass: the RefundingStuck metric
	Failed     int   `json:"failed"`     // could not be asked or recorded; the next pass tries again
	DurationMs int64 `json:"durationMs"` // wall time, milliseconds
}

// Stuck asks WeChat Pay about every refund REFUNDING for longer than
// Options.StuckAfter (the store's RefundingBefore), one at a time: SUCCESS (or
// CLOSED/ABNORMAL) is recorded with Apply; a refund WeChat Pay never received is sent
// to the refund queue again, unless the refund API refused it for good (it waits for
// an operator, counted as stuck). It emits the RefundingStuck metric: how many are still
// REFUNDING past the bound after the pass (the alarm's input). The error result is
// for a failed index query; single refunds that fail are counted and left for the
// next pass.
func (r *Refunder) Stuck(ctx context.Context) (StuckResult, error) {
	start := time.Now()
	var res StuckResult
	var qerr error
	for no, err := range r.store.RefundingBefore(ctx, r.opts.Now().Add(-r.opts.StuckAfter)) {
		if err != nil {
			qerr = err
			break
		}
		res.Found++
		done, requeued, err := r.unstick(ctx, no)
		switch {
		case err != nil:
			res.Failed++
			r.log.LogAttrs(ctx, inventory.FailureLevel(ctx, err), "stuck refund not settled", slog.String("outRefundNo", no), slog.String("error", err.Error()))
		case done:
			res.Refunded++
		case requeued:
			res.Requeued++
		}
	}
	res.Stuck = res.Found - res.Refunded
	res.DurationMs = time.Since(start).Milliseconds()
	level := slog.LevelInfo
	if res.Stuck > 0 || qerr != nil {
		level = slog.LevelWarn
	}
	r.log.LogAttrs(ctx, level, "stuck refunds", slog.Int("found", res.Found), slog.Int("refunded", res.Refunded),
		slog.Int("requeued", res.Requeued), slog.Int("stuck", res.Stuck), slog.Int("failed", res.Failed))
	metric.Emit(ctx, r.log, MetricFunction, metric.RefundingStuck.Of(float64(res.Stuck)))
	if qerr != nil {
		return res, fmt.Errorf("stuck refunds: %w", qerr)
	}
	return res, nil
}

// unstick asks WeChat Pay about one refund: done when it is REFUNDED now, requeued
// when WeChat Pay never received it and it went back on the queue.
func (r *Refunder) unstick(ctx context.Context, no string) (done, requeued bool, err error) {
	if refund, err := r.store.RefundByNo(ctx, no); err == nil && refund.Refused() {
		return false, false, nil // refused for good: alarmed once, left to an operator
	}
	answer, err := r.pay.QueryRefund(ctx, no)
	switch {
	case errors.Is(err, wechatpay.ErrNotFound):
		if r.queue == nil {
			return false, false, fmt.Errorf("refund %s was never requested and there is no queue", no)
		}
		return false, true, r.queue.Send(ctx, no)
	case err != nil:
		return false, false, err
	}
	refund, _, err := Apply(ctx, r.store, r.log, Result(answer))
	if errors.Is(err, inventory.ErrRefundNotFound) {
		return false, false, nil // REFUNDED meanwhile, or the index lags
	}
	return err == nil && refund.Status == inventory.StatusRefunded, false, err
}
