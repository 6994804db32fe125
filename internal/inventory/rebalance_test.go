package inventory_test

import (
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

// apply moves the planned units and fails t when a transfer takes units a shard does
// not have.
func apply(t *testing.T, s inventory.ShardStock, plan []inventory.Transfer) inventory.ShardStock {
	t.Helper()
	out := append(inventory.ShardStock(nil), s...)
	for _, tr := range plan {
		if tr.Units <= 0 || out[tr.From] < tr.Units {
			t.Fatalf("transfer %+v from %v", tr, out)
		}
		out[tr.From] -= tr.Units
		out[tr.To] += tr.Units
	}
	return out
}

func TestRebalance_SpreadsEvenlyAndEmptiesShardsPastTheTarget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stock  inventory.ShardStock
		target int
		want   inventory.ShardStock
	}{
		{"grow 1 → 4", inventory.ShardStock{10, 0, 0, 0}, 4, inventory.ShardStock{3, 3, 2, 2}},
		{"shrink 4 → 2", inventory.ShardStock{3, 3, 2, 2}, 2, inventory.ShardStock{5, 5, 0, 0}},
		{"shrink with nothing short", inventory.ShardStock{5, 5, 1, 0}, 2, inventory.ShardStock{6, 5, 0, 0}},
		{"balanced enough stays", inventory.ShardStock{100, 95}, 2, inventory.ShardStock{100, 95}},
		{"empty", inventory.ShardStock{0, 0, 0}, 1, inventory.ShardStock{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := tc.stock.Rebalance(tc.target)
			got := apply(t, tc.stock, plan)
			if len(got) != len(tc.want) {
				t.Fatalf("%v", got)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("%v after %+v, want %v", got, plan, tc.want)
				}
			}
			if again := got.Rebalance(tc.target); len(again) != 0 {
				t.Errorf("a second plan moves again: %+v", again)
			}
		})
	}
}
