package inventory_test

import (
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

// The ledger table (docs/design.md, "The ledger"), one row per op, as the units it moves change the counters.
func TestOpEffect_FollowsTheLedgerTable(t *testing.T) {
	for _, tc := range []struct {
		op   inventory.Op
		q    int
		want inventory.Delta
	}{
		{inventory.OpReserve, 3, inventory.Delta{Available: -3, Reserved: 3}},
		{inventory.OpRelease, 3, inventory.Delta{Available: 3, Reserved: -3}},
		{inventory.OpCommit, 3, inventory.Delta{OnHand: -3, Reserved: -3}},
		{inventory.OpReturn, 3, inventory.Delta{Available: 3, OnHand: 3}},
		{inventory.OpAdjust, 7, inventory.Delta{Available: 7, OnHand: 7}},    // restock
		{inventory.OpAdjust, -2, inventory.Delta{Available: -2, OnHand: -2}}, // write-off
		{inventory.OpMove, -4, inventory.Delta{Available: -4, OnHand: -4}},   // leaving a shard
		{inventory.OpMove, 4, inventory.Delta{Available: 4, OnHand: 4}},      // arriving
	} {
		got, ok := tc.op.Effect(tc.q)
		if !ok || got != tc.want {
			t.Errorf("%s of %d: %+v (%v), want %+v", tc.op, tc.q, got, ok, tc.want)
		}
		if got.Reserved != got.OnHand-got.Available {
			t.Errorf("%s of %d: reserved %+d, but on-hand − available moved %+d", tc.op, tc.q, got.Reserved, got.OnHand-got.Available)
		}
	}
}

func TestOpEffect_RepairAndUnknownOpsHaveNoFixedEffect(t *testing.T) {
	for _, op := range []inventory.Op{inventory.OpRepair, "RESERVED", ""} {
		if d, ok := op.Effect(5); ok {
			t.Errorf("%q: effect %+v, want none", op, d)
		}
	}
}

// A MOVE changes a shard but never the SKU: its two halves cancel out.
func TestOpEffect_MoveConservesTheSKU(t *testing.T) {
	out, _ := inventory.OpMove.Effect(-6)
	in, _ := inventory.OpMove.Effect(6)
	if sum := out.Plus(in); sum != (inventory.Delta{}) {
		t.Errorf("MOVE −6 then +6: %+v, want no change", sum)
	}
}

// A late payment's one shard update is its RESERVE and COMMIT together.
func TestDeltaPlus_ReserveAndCommitTakeUnitsOffAvailableAndOnHand(t *testing.T) {
	r, _ := inventory.OpReserve.Effect(2)
	c, _ := inventory.OpCommit.Effect(2)
	if got, want := r.Plus(c), (inventory.Delta{Available: -2, OnHand: -2}); got != want {
		t.Errorf("RESERVE+COMMIT of 2: %+v, want %+v", got, want)
	}
}
