package inventory_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

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

// A queued SKU whose sale is on refuses a patch that raises the units one admission
// may buy (max(limitPerUser, 1)) or turns the queue off; lowering the limit, any
// change before the sale starts or off sale, and SKUs without a queue are allowed.
func TestSKUPatchMidSale_RefusesRaisingWhatAnAdmissionBuys(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	on := inventory.SKU{ID: "drop", OnSale: true, LimitPerUser: 2, SaleStartsAt: now.Add(-time.Minute), Queue: inventory.QueueSettings{Queue: true}}
	limit := func(n int) inventory.SKUPatch { return inventory.SKUPatch{LimitPerUser: &n} }
	queue := func(q bool) inventory.SKUPatch { return inventory.SKUPatch{Queue: &q} }
	with := func(f func(*inventory.SKU)) inventory.SKU { s := on; f(&s); return s }
	noLimit := with(func(s *inventory.SKU) { s.LimitPerUser = 0 })
	for _, tc := range []struct {
		name    string
		p       inventory.SKUPatch
		s       inventory.SKU
		refused bool
	}{
		{"raise", limit(3), on, true},
		{"raise from none", limit(2), noLimit, true},
		{"no limit from 2", limit(0), on, false},
		{"none to 1: one unit either way", limit(1), noLimit, false},
		{"lower", limit(1), on, false},
		{"same", limit(2), on, false},
		{"queue off", queue(false), on, true},
		{"queue on again", queue(true), on, false},
		{"no start time", limit(3), with(func(s *inventory.SKU) { s.SaleStartsAt = time.Time{} }), true},
		{"starts now", limit(3), with(func(s *inventory.SKU) { s.SaleStartsAt = now }), true},
		{"upcoming", limit(3), with(func(s *inventory.SKU) { s.SaleStartsAt = now.Add(time.Nanosecond) }), false},
		{"off sale", queue(false), with(func(s *inventory.SKU) { s.OnSale = false }), false},
		{"no queue", limit(3), with(func(s *inventory.SKU) { s.Queue.Queue = false }), false},
		{"other fields", inventory.SKUPatch{Name: new("Drop")}, on, false},
	} {
		err := tc.p.MidSale(tc.s, now)
		var refusal *inventory.RefusalError
		var skuErr *inventory.SKUError
		if tc.refused != (err != nil) || err != nil && (!errors.Is(err, inventory.ErrSaleInProgress) || !errors.As(err, &refusal) || !errors.As(err, &skuErr) || skuErr.SKU != "drop") {
			t.Errorf("%s: %v, want refused=%v", tc.name, err, tc.refused)
		}
		// The advice fits the change: lowering the limit does not help turning the queue off.
		if err != nil && strings.Contains(err.Error(), "Lower the limit") != (tc.p.LimitPerUser != nil) {
			t.Errorf("%s: %v: advice for another change", tc.name, err)
		}
	}
}
