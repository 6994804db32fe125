package inventory_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestNewSKUValidate(t *testing.T) {
	ok := inventory.NewSKU{ID: "cup", Name: "cup", Price: 100, Stock: 5}.WithDefaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid SKU: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*inventory.NewSKU)
	}{
		{"bad id", func(s *inventory.NewSKU) { s.ID = "cup#1" }},
		{"no name", func(s *inventory.NewSKU) { s.Name = "" }},
		{"free", func(s *inventory.NewSKU) { s.Price = 0 }},
		{"price that could overflow an order", func(s *inventory.NewSKU) { s.Price = inventory.MaxPrice + 1 }},
		{"negative stock", func(s *inventory.NewSKU) { s.Stock = -1 }},
		{"negative limit", func(s *inventory.NewSKU) { s.LimitPerUser = -1 }},
		{"negative peak", func(s *inventory.NewSKU) { s.PeakOrdersPerSecond = -1 }},
		{"too many shards", func(s *inventory.NewSKU) { s.Shards = inventory.MaxShards + 1 }},
		{"no shards", func(s *inventory.NewSKU) { s.Shards = -1 }},
	} {
		s := ok
		tc.change(&s)
		if err := s.Validate(); !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", tc.name, err)
		}
	}
}

func TestNewSKUWithDefaults(t *testing.T) {
	got := inventory.NewSKU{ID: "cup"}.WithDefaults()
	if got.Shards != 1 || got.Ref != "init" {
		t.Errorf("defaults: shards %d, ref %q; want 1, init", got.Shards, got.Ref)
	}
	if sized := (inventory.NewSKU{PeakOrdersPerSecond: 10000}).WithDefaults(); sized.Shards != 50 {
		t.Errorf("a peak of 10,000 orders/s: %d shards, want 50 (ShardsForPeak)", sized.Shards)
	}
	kept := inventory.NewSKU{Shards: 3, Ref: "adj-1", PeakOrdersPerSecond: 10000}.WithDefaults()
	if kept.Shards != 3 || kept.Ref != "adj-1" {
		t.Errorf("set fields changed: %+v", kept)
	}
}

func TestNewSKUSplit_SpreadsTheRemainderOverTheLowestShards(t *testing.T) {
	for _, tc := range []struct {
		stock, shards int
		want          map[int]int
	}{
		{10, 1, map[int]int{0: 10}},
		{10, 4, map[int]int{0: 3, 1: 3, 2: 2, 3: 2}},
		{2, 4, map[int]int{0: 1, 1: 1, 2: 0, 3: 0}},
		{0, 2, map[int]int{0: 0, 1: 0}},
	} {
		if got := (inventory.NewSKU{Stock: tc.stock, Shards: tc.shards}).Split(); !maps.Equal(got, tc.want) {
			t.Errorf("%d over %d shards: %v, want %v", tc.stock, tc.shards, got, tc.want)
		}
	}
}

// A SKU id is 1-64 of [0-9A-Za-z_.:-], but never a URL dot segment: "/admin/skus/.."
// reaches no SKU, so a SKU named so could be sold and never managed.
func TestValidSKUID_RefusesDotSegments(t *testing.T) {
	for id, want := range map[string]bool{"cup-01": true, "a.b": true, "...": true, ":": true, ".": false, "..": false, "": false, "a#b": false} {
		if got := inventory.ValidSKUID(id); got != want {
			t.Errorf("ValidSKUID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestSKUPatchValidate_RiskThreshold(t *testing.T) {
	for _, tc := range []struct {
		threshold int
		ok        bool
	}{{0, true}, {1, true}, {inventory.MaxRiskRank, true}, {-1, false}, {inventory.MaxRiskRank + 1, false}} {
		err := inventory.SKUPatch{RiskThreshold: &tc.threshold}.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, inventory.ErrInvalidRequest)) {
			t.Errorf("riskThreshold %d alone: %v, want ok=%v", tc.threshold, err, tc.ok)
		}
	}
}
