// Package metric writes CloudWatch metrics as log lines in the Embedded Metric Format
// (Amazon CloudWatch User Guide, "Specification: Embedded metric format"): one JSON
// object whose "_aws" member declares the metrics and whose top-level members carry
// their values and dimensions. Lambda sends stdout to CloudWatch Logs, which extracts
// the metrics; no PutMetricData call, no extra permission, no latency.
package metric

import (
	"context"
	"log/slog"
	"time"
)

// Namespace is the CloudWatch namespace of every stockguard metric.
const Namespace = "stockguard"

// Units used by stockguard (CloudWatch MetricDatum Unit values).
const (
	Count        = "Count"
	Milliseconds = "Milliseconds"
)

// MaxValues is the most observations EMF takes for one metric in one line (Amazon
// CloudWatch User Guide, "Specification: Embedded metric format": a values array
// holds at most 100).
const MaxValues = 100

// Value is one metric's data for one line (see Name.Of). Values holds the
// observations; each becomes a sample of the metric. Emit keeps the first MaxValues
// and drops the rest.
type Value struct {
	Metric Name      // a Name declared in names.go, e.g. Released
	Values []float64 // observations; a metric with none is left out of the line
}

type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type emfMetadata struct {
	Timestamp         int64          `json:"Timestamp"` // Unix milliseconds
	CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
}

// Emit writes one info-level line on log (which must write JSON, as slog's
// JSONHandler does) carrying values under the dimension Function=function. Values
// without observations are left out; with none left, nothing is written.
func Emit(ctx context.Context, log *slog.Logger, function string, values ...Value) {
	EmitFor(ctx, log, function, "", "", values...)
}

// EmitFor is Emit with one more dimension, name=value (e.g. SkuId=cup-01), when name
// is not empty: each distinct value is its own CloudWatch metric, so keep such lines
// to what needs watching one by one.
func EmitFor(ctx context.Context, log *slog.Logger, function, name, value string, values ...Value) {
	dims := []string{"Function"}
	attrs := []slog.Attr{slog.String("Function", function)}
	if name != "" {
		dims = append(dims, name)
		attrs = append(attrs, slog.String(name, value))
	}
	directive := emfDirective{Namespace: Namespace, Dimensions: [][]string{dims}}
	for _, v := range values {
		if len(v.Values) == 0 {
			continue
		}
		if len(v.Values) > MaxValues {
			v.Values = v.Values[:MaxValues]
		}
		name := v.Metric.name
		directive.Metrics = append(directive.Metrics, emfMetric{Name: name, Unit: v.Metric.unit})
		if len(v.Values) == 1 {
			attrs = append(attrs, slog.Float64(name, v.Values[0]))
		} else {
			attrs = append(attrs, slog.Any(name, v.Values))
		}
	}
	if len(directive.Metrics) == 0 {
		return
	}
	meta := emfMetadata{Timestamp: time.Now().UnixMilli(), CloudWatchMetrics: []emfDirective{directive}}
	attrs = append(attrs, slog.Any("_aws", meta))
	log.LogAttrs(ctx, slog.LevelInfo, "metrics", attrs...)
}

// Outcomes returns a function that counts each call on log under Function=function:
// ok.Of(1) when its error is nil, else failed.Of(1) after an error-level line msg
// with the error (e.g. for wechatpay.RotateOptions.OnReload).
func Outcomes(log *slog.Logger, function string, ok, failed Name, msg string) func(context.Context, error) {
	return func(ctx context.Context, err error) {
		if err != nil {
			log.LogAttrs(ctx, slog.LevelError, msg, slog.String("error", err.Error()))
			Emit(ctx, log, function, failed.Of(1))
			return
		}
		Emit(ctx, log, function, ok.Of(1))
	}
}
