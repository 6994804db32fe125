package inventory_test

import (
	"math"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestShardsForPeak(t *testing.T) {
	for _, tc := range []struct {
		peak, shards int
	}{
		{-5, 1},
		{0, 1},
		{1, 1},
		{200, 1},  // 200 × 2 = 400: exactly one shard's ceiling
		{201, 2},  // one order/s more needs a second shard
		{1000, 5}, // 2,000 / 400
		{10000, 50},
		{12800, 64},
		{12801, 64}, // capped at MaxShards
		{1000000, 64},
		{4611686018427387705, 64}, // peak × 2 overflows int
		{math.MaxInt, 64},
	} {
		if got := inventory.ShardsForPeak(tc.peak); got != tc.shards {
			t.Errorf("ShardsForPeak(%d) = %d, want %d", tc.peak, got, tc.shards)
		}
	}
}
