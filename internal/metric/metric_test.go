package metric_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/stockguard/stockguard/internal/metric"
)

func TestEmit_WritesEmbeddedMetricFormat(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	metric.Emit(context.Background(), log, "closeOrder",
		metric.Released.Of(3),
		metric.ReleaseLag.Of(12, 40),
		metric.SweepDue.Of())
	var line struct {
		Function   string
		Released   float64
		ReleaseLag []float64
		SweepDue   any
		AWS        struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%s: %v", buf.Bytes(), err)
	}
	if line.Function != "closeOrder" || line.Released != 3 || !reflect.DeepEqual(line.ReleaseLag, []float64{12, 40}) || line.SweepDue != nil {
		t.Errorf("values: %s", buf.Bytes())
	}
	d := line.AWS.CloudWatchMetrics
	if line.AWS.Timestamp == 0 || len(d) != 1 || d[0].Namespace != metric.Namespace || !reflect.DeepEqual(d[0].Dimensions, [][]string{{"Function"}}) {
		t.Fatalf("directive: %s", buf.Bytes())
	}
	want := []struct{ Name, Unit string }{{"Released", "Count"}, {"ReleaseLag", "Milliseconds"}}
	if !reflect.DeepEqual(d[0].Metrics, want) {
		t.Errorf("metrics %+v, want %+v", d[0].Metrics, want)
	}
}

func TestEmit_WritesNothingWithoutObservations(t *testing.T) {
	var buf bytes.Buffer
	metric.Emit(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), "x", metric.Released.Of())
	if buf.Len() != 0 {
		t.Errorf("wrote %s", buf.Bytes())
	}
}
