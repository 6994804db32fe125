package reconcile_test

import (
	"encoding/json"
	"testing"

	"github.com/stockguard/stockguard/internal/reconcile"
)

// The report's rule strings are the contract's (docs/contract.md, "Merchant API").
func TestRule_WritesAndReadsTheContractNames(t *testing.T) {
	for _, tc := range []struct {
		rule reconcile.Rule
		name string
	}{
		{reconcile.SKURule(reconcile.CheckShards), "shards"},
		{reconcile.SKURule(reconcile.CheckAvailable), "available"},
		{reconcile.SKURule(reconcile.CheckOnHand), "onHand"},
		{reconcile.SKURule(reconcile.CheckReserved), "reserved"},
		{reconcile.SKURule(reconcile.CheckSoldWithinStocked), "committed <= stocked"},
		{reconcile.ShardRule(0, reconcile.CheckReservedCounter), "shard 0 reserved counter"},
		{reconcile.ShardRule(3, reconcile.CheckAvailableNonNegative), "shard 3 available >= 0"},
		{reconcile.ShardRule(12, reconcile.CheckAvailableWithinOnHand), "shard 12 available <= onHand"},
		{reconcile.ShardRule(1, reconcile.CheckOnHand), "shard 1 onHand"},
	} {
		d := reconcile.Difference{SKU: "cup", Rule: tc.rule, Expected: 1, Actual: 2}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%v: %v", tc.rule, err)
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil || fields["rule"] != tc.name {
			t.Errorf("%v: rule written as %v in %s, want %q", tc.rule, fields["rule"], b, tc.name)
		}
		var back reconcile.Difference
		if err := json.Unmarshal(b, &back); err != nil || back != d {
			t.Errorf("%s read back as %+v (%v), want %+v", b, back, err, d)
		}
	}
}

func TestRule_RefusesUnknownNames(t *testing.T) {
	for _, name := range []string{`""`, `"avail"`, `"shard x available"`, `"shard 1 nothing"`} {
		var r reconcile.Rule
		if err := json.Unmarshal([]byte(name), &r); err == nil {
			t.Errorf("%s read as %+v, want an error", name, r)
		}
	}
	if _, err := json.Marshal(reconcile.Rule{}); err == nil {
		t.Error("the zero Rule was written, want an error")
	}
}

func TestCheckBound(t *testing.T) {
	bounds := map[reconcile.Check]bool{
		reconcile.CheckAvailableNonNegative: true, reconcile.CheckAvailableWithinOnHand: true, reconcile.CheckSoldWithinStocked: true,
	}
	for c := reconcile.CheckShards; c <= reconcile.CheckSoldWithinStocked; c++ {
		if got := c.Bound(); got != bounds[c] {
			t.Errorf("%v: bound %v, want %v", c, got, bounds[c])
		}
	}
}
