package hotsku_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/hotsku"
)

// The sweep's picture is a PNG with both strategies, whatever shard counts ran.
func TestPlot_WritesAPNGOfBothStrategies(t *testing.T) {
	var results []hotsku.Result
	for _, s := range []hotsku.Strategy{hotsku.Transaction, hotsku.Conditional} {
		for _, n := range []int{1, 4, 16} {
			results = append(results, hotsku.Result{
				Point:     hotsku.Point{Strategy: s, Shards: n, Model: ddblimits.Config{WriteUnits: ddblimits.PartitionWriteUnits}},
				PerSecond: float64(n) * 400,
			})
		}
	}
	path := filepath.Join(t.TempDir(), "sweep.png")
	if err := hotsku.Plot(results, 10000, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 10000 {
		t.Fatalf("plot: %d bytes, %v; want a PNG", len(data), err)
	}
}
