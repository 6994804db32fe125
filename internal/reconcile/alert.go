package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/stockguard/stockguard/internal/metric"
)

// ErrAlertNotPublished is returned by Handle when a run found differences past the
// alert threshold but could not publish them to the alerts topic: the invocation fails,
// so the Lambda Errors alarm fires and the scheduled invocation is retried (which
// publishes again). The run itself completed (repairs, checkpoints, report).
var ErrAlertNotPublished = errors.New("reconcile: alert not published to the alerts topic")

// alertOn logs every difference (error level past the alert threshold, warn below) and
// publishes one SNS message listing the alerts. It reports whether a publish failed;
// the failure is logged at error level and counted in the AlertNotPublished metric.
func (r *Reconciler) alertOn(ctx context.Context, snap *snapshot) (failed bool) {
	var alerts []Difference
	for _, sku := range slices.Sorted(maps.Keys(snap.diffs)) {
		onHand := snap.ledger[sku].total.onHand
		threshold := max(float64(r.cfg.AlertUnits), r.cfg.AlertPercent/100*float64(onHand))
		worst := 0
		for _, d := range snap.diffs[sku] {
			worst = max(worst, abs(d.Expected-d.Actual))
		}
		level := slog.LevelWarn
		if float64(worst) > threshold || slices.ContainsFunc(snap.diffs[sku], oversell) {
			level = slog.LevelError
			alerts = append(alerts, snap.diffs[sku]...)
		}
		r.log.LogAttrs(ctx, level, "books differ", slog.String("skuId", sku), slog.Int("units", worst),
			slog.Float64("alertThreshold", threshold), slog.Any("differences", snap.diffs[sku]))
		metric.EmitFor(ctx, r.log, MetricFunction, "SkuId", sku, metric.Difference.Of(float64(worst)))
	}
	if len(alerts) == 0 || r.alert == nil || r.cfg.Topic == "" {
		return false
	}
	listed := alerts[:min(len(alerts), maxAlertLines)] // SNS messages stop at 256 KB
	body, _ := json.MarshalIndent(map[string]any{"differences": listed, "total": len(alerts), "at": snap.now}, "", "  ")
	skus := map[string]bool{}
	for _, d := range alerts {
		skus[d.SKU] = true
	}
	if _, err := r.alert.Publish(ctx, &sns.PublishInput{
		TopicArn: aws.String(r.cfg.Topic),
		Subject:  aws.String(fmt.Sprintf("stockguard: books differ for %d SKU(s)", len(skus))),
		Message:  aws.String(string(body)),
	}); err != nil {
		r.log.LogAttrs(ctx, slog.LevelError, "alert not published", slog.Int("alerts", len(alerts)), slog.String("error", err.Error()))
		metric.Emit(ctx, r.log, MetricFunction, metric.AlertNotPublished.Of(1))
		return true
	}
	return false
}

// maxAlertLines bounds the differences listed in one SNS message.
const maxAlertLines = 200

// oversell reports a difference that shows stock sold that does not exist: always an
// alert, whatever its size.
func oversell(d Difference) bool {
	switch d.Rule.Check {
	case CheckSoldWithinStocked, CheckAvailableNonNegative:
		return true
	case CheckAvailable:
		return !d.Rule.OnShard && d.Actual < 0
	}
	return false
}

func abs(n int) int { return max(n, -n) }
