package inventory_test

import (
	"errors"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

// oneUnitShards is a SKU's stock spread one unit per shard over n shards.
func oneUnitShards(n int) inventory.ShardStock {
	s := make(inventory.ShardStock, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func TestCheckCartSize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stock   []inventory.ShardStock // per line
		qty     []int
		limited bool
		actions int
		tooBig  bool
	}{
		// 1 order + 2 × (1 ledger entry + 49 shards) = 101.
		{"two SKUs of 64 one-unit shards, 49 of each", []inventory.ShardStock{oneUnitShards(64), oneUnitShards(64)}, []int{49, 49}, false, 101, true},
		{"48 and 49 fit exactly", []inventory.ShardStock{oneUnitShards(64), oneUnitShards(64)}, []int{48, 49}, false, 100, false},
		{"purchase counters are actions too", []inventory.ShardStock{oneUnitShards(64), oneUnitShards(64)}, []int{48, 47}, true, 100, false},
		// Fullest shards first: 64 units on 3 shards rather than 64 one-unit shards.
		{"a line split over the fewest shards", []inventory.ShardStock{append(oneUnitShards(61), 30, 20, 14)}, []int{64}, false, 5, false},
		{"one shard that covers the line", []inventory.ShardStock{{3, 9999, 3}}, []int{9999}, false, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := make([]inventory.OrderItem, len(tc.stock))
			for i, s := range tc.stock {
				alloc, ok := s.Allocate(tc.qty[i])
				if !ok {
					t.Fatalf("line %d: %v cannot cover %d", i, s, tc.qty[i])
				}
				items[i] = inventory.OrderItem{Qty: tc.qty[i], Shards: alloc, Limited: tc.limited}
			}
			if got := inventory.ReservationActions(items); got != tc.actions {
				t.Fatalf("ReservationActions = %d, want %d", got, tc.actions)
			}
			err := inventory.CheckCartSize(items)
			if errors.Is(err, inventory.ErrCartTooLarge) != tc.tooBig || !tc.tooBig && err != nil {
				t.Fatalf("CheckCartSize = %v, want too large %v", err, tc.tooBig)
			}
		})
	}
}
