package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// The money side (docs/design.md, "Refunds: goods before money"): per order refunded ≤
// paid, RETURN entries exactly when a refund restocked, and no refund left REFUNDING
// past RefundStuck. Its cost follows refunds, not history: the orders checked are
// those with a RETURN entry read this run (since the watermark) and those the
// RefundingBySince index lists as REFUNDING now.

// money checks the refunds of this run into rep.
func (r *Reconciler) money(ctx context.Context, snap *snapshot, rep *Report) error {
	ids := map[string]bool{}
	for _, e := range snap.entries {
		if e.Op == inventory.OpReturn {
			ids[e.Ref] = true
		}
	}
	stuckBefore := snap.now.Add(-r.cfg.RefundStuck)
	for no, err := range r.store.RefundingBefore(ctx, snap.now.Add(clockAhead)) {
		if err != nil {
			return err
		}
		if id, _, ok := inventory.RefundOf(no); ok { // its own refunds and its second payments'
			ids[id] = true
		}
	}
	for no, err := range r.store.RefundingBefore(ctx, stuckBefore) {
		if err != nil {
			return err
		}
		rep.StuckRefunds = append(rep.StuckRefunds, no)
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		order, err := r.store.Lookup(ctx, id)
		if err != nil {
			return fmt.Errorf("refund check of order %s: %w", id, err)
		}
		returned, err := r.store.Returned(ctx, order)
		if err != nil {
			return err
		}
		rep.RefundProblems = append(rep.RefundProblems, order.RefundProblems(returned)...)
	}
	return nil
}

// alertOnMoney logs refund problems and stuck refunds at error level, counts them in
// the RefundProblems and RefundsOverdue metrics and publishes one SNS message.
func (r *Reconciler) alertOnMoney(ctx context.Context, rep *Report) (failed bool) {
	metric.Emit(ctx, r.log, MetricFunction, metric.RefundProblems.Of(float64(len(rep.RefundProblems))),
		metric.RefundsOverdue.Of(float64(len(rep.StuckRefunds))))
	if len(rep.RefundProblems) == 0 && len(rep.StuckRefunds) == 0 {
		return false
	}
	r.log.LogAttrs(ctx, slog.LevelError, "refunds need a look", slog.Any("refundProblems", rep.RefundProblems),
		slog.Any("stuckRefunds", rep.StuckRefunds), slog.Duration("refundStuckAfter", r.cfg.RefundStuck))
	if r.alert == nil || r.cfg.Topic == "" {
		return false
	}
	body, _ := json.MarshalIndent(map[string]any{
		"refundProblems": rep.RefundProblems[:min(len(rep.RefundProblems), maxAlertLines)],
		"stuckRefunds":   rep.StuckRefunds[:min(len(rep.StuckRefunds), maxAlertLines)],
	}, "", "  ")
	if _, err := r.alert.Publish(ctx, &sns.PublishInput{
		TopicArn: aws.String(r.cfg.Topic),
		Subject:  aws.String(fmt.Sprintf("stockguard: %d refund problem(s), %d refund(s) stuck", len(rep.RefundProblems), len(rep.StuckRefunds))),
		Message:  aws.String(string(body)),
	}); err != nil {
		r.log.LogAttrs(ctx, slog.LevelError, "alert not published", slog.String("error", err.Error()))
		metric.Emit(ctx, r.log, MetricFunction, metric.AlertNotPublished.Of(1))
		return true
	}
	return false
}
