package inventory_test

import (
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
		{250, 1},  // 250 × 2 = 500: exactly one shard's ceiling
		{251, 2},  // one order/s more needs a second shard
		{1000, 4}, // 2,000 / 500
		{10000, 40},
		{16000, 64},
		{16001, 64}, // capped at MaxShards
		{1000000, 64},
	} {
		if got := inventory.ShardsForPeak(tc.peak); got != tc.shards {
			t.Errorf("ShardsForPeak(%d) = %d, want %d", tc.peak, got, tc.shards)
		}
	}
}
