package inventory_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestShardStockAllocate(t *testing.T) {
	const unknown = inventory.UnknownStock
	for _, tc := range []struct {
		name  string
		stock inventory.ShardStock
		qty   int
		ok    bool
		// whole: the shards one of which must take the whole line; nil when it is split.
		whole []int
		// split: the exact split expected (no ties); nil when not checked.
		split map[int]int
	}{
		{"one shard covers the line", inventory.ShardStock{0, 5, 1}, 3, true, []int{1}, nil},
		{"any shard that covers may be picked", inventory.ShardStock{4, 2, 9}, 3, true, []int{0, 2}, nil},
		{"unknown counts as able", inventory.ShardStock{unknown, 0}, 7, true, []int{0}, nil},
		{"split over the fullest first", inventory.ShardStock{1, 3, 2}, 5, true, nil, map[int]int{1: 3, 2: 2}},
		{"split takes every unit when it must", inventory.ShardStock{1, 3, 2}, 6, true, nil, map[int]int{0: 1, 1: 3, 2: 2}},
		{"split over the fewest shards: 2 of 4, never 3", inventory.ShardStock{1, 4, 1, 2}, 6, true, nil, map[int]int{1: 4, 3: 2}},
		{"too few units together", inventory.ShardStock{1, 1, 1}, 4, false, nil, nil},
		{"too few units, two shards", inventory.ShardStock{2, 1}, 4, false, nil, nil},
		{"no shards", inventory.ShardStock{}, 1, false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // the pick is random: every draw must keep the rules
				alloc, ok := tc.stock.Allocate(tc.qty)
				if ok != tc.ok {
					t.Fatalf("Allocate(%d) = %v, %v; want ok %v", tc.qty, alloc, ok, tc.ok)
				}
				if !ok {
					return
				}
				total := 0
				for n, units := range alloc {
					total += units
					if units <= 0 || tc.stock[n] >= 0 && units > tc.stock[n] {
						t.Fatalf("shard %d given %d units, it has %d", n, units, tc.stock[n])
					}
				}
				if total != tc.qty {
					t.Fatalf("allocation %v covers %d units, want %d", alloc, total, tc.qty)
				}
				if tc.whole != nil {
					n := slices.Collect(maps.Keys(alloc))
					if len(n) != 1 || !slices.Contains(tc.whole, n[0]) {
						t.Fatalf("allocation %v, want the whole line on one of %v", alloc, tc.whole)
					}
				}
				if tc.split != nil && !maps.Equal(alloc, tc.split) {
					t.Fatalf("allocation %v, want %v", alloc, tc.split)
				}
			}
		})
	}
}
