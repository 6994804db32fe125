package inventory_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestNewCart_MergesDuplicateLinesBeforeChecking(t *testing.T) {
	c, err := inventory.NewCart([]inventory.Line{{SKU: "b", Qty: 1}, {SKU: "a", Qty: 2}, {SKU: "b", Qty: 3}})
	if err != nil {
		t.Fatal(err)
	}
	want := inventory.Cart{{SKU: "a", Qty: 2}, {SKU: "b", Qty: 4}}
	if len(c) != 2 || c[0] != want[0] || c[1] != want[1] {
		t.Errorf("got %v, want %v", c, want)
	}
	// 25 raw lines naming 20 SKUs are fine: the limit counts merged lines.
	var lines []inventory.Line
	for i := range 25 {
		lines = append(lines, inventory.Line{SKU: string(rune('a' + i%20)), Qty: 1})
	}
	if _, err := inventory.NewCart(lines); err != nil {
		t.Errorf("25 lines over 20 SKUs: %v", err)
	}
}

func TestNewCart_RejectsLinesOutsideTheContract(t *testing.T) {
	many := func(n int) []inventory.Line {
		var out []inventory.Line
		for i := range n {
			out = append(out, inventory.Line{SKU: strings.Repeat("x", i+1), Qty: 1})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		lines []inventory.Line
	}{
		{"no lines", nil},
		{"21 distinct SKUs", many(21)},
		{"zero qty", []inventory.Line{{SKU: "a", Qty: 0}}},
		{"negative qty", []inventory.Line{{SKU: "a", Qty: -3}}},
		{"qty 10000", []inventory.Line{{SKU: "a", Qty: 10000}}},
		{"merged qty 10000", []inventory.Line{{SKU: "a", Qty: 9999}, {SKU: "a", Qty: 1}}},
		{"empty SKU", []inventory.Line{{SKU: "", Qty: 1}}},
		{"65-char SKU", []inventory.Line{{SKU: strings.Repeat("a", 65), Qty: 1}}},
		{"SKU with #", []inventory.Line{{SKU: "a#b", Qty: 1}}},
		{"SKU with slash", []inventory.Line{{SKU: "a/b", Qty: 1}}},
		{"non-ASCII SKU", []inventory.Line{{SKU: "杯", Qty: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := inventory.NewCart(tc.lines); !errors.Is(err, inventory.ErrInvalidRequest) {
				t.Errorf("got %v, want ErrInvalidRequest", err)
			}
		})
	}
}

func TestCartHash_IgnoresLineOrderAndSplitting(t *testing.T) {
	a, _ := inventory.NewCart([]inventory.Line{{SKU: "x", Qty: 2}, {SKU: "y", Qty: 1}})
	b, _ := inventory.NewCart([]inventory.Line{{SKU: "y", Qty: 1}, {SKU: "x", Qty: 1}, {SKU: "x", Qty: 1}})
	c, _ := inventory.NewCart([]inventory.Line{{SKU: "x", Qty: 21}})
	d, _ := inventory.NewCart([]inventory.Line{{SKU: "x", Qty: 2}, {SKU: "1y", Qty: 1}})
	if a.Hash() != b.Hash() {
		t.Error("same cart, different hashes")
	}
	if a.Hash() == c.Hash() || a.Hash() == d.Hash() {
		t.Error("different carts, same hash")
	}
}

func TestNewOrderID_IsAValidOutTradeNo(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id, err := inventory.NewOrderID()
		if err != nil {
			t.Fatal(err)
		}
		if !inventory.ValidOrderID(id) || len(id) != 32 || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "abc12", strings.Repeat("a", 33), "a#bcdef", "../../x", "abc def"} {
		if inventory.ValidOrderID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSKUStatus_FollowsAvailability(t *testing.T) {
	now := time.Date(2026, 11, 11, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		sku      inventory.SKU
		status   inventory.SaleStatus
		sellable int
	}{
		{inventory.SKU{OnSale: true, OnHand: 100, Available: 50}, inventory.SaleOnSale, 50},
		{inventory.SKU{OnSale: true, OnHand: 100, Available: 10}, inventory.SaleLowStock, 10},
		{inventory.SKU{OnSale: true, OnHand: 30, Available: 5}, inventory.SaleLowStock, 5},
		{inventory.SKU{OnSale: true, OnHand: 30, Available: 6}, inventory.SaleOnSale, 6},
		{inventory.SKU{OnSale: true, OnHand: 30, Available: 0}, inventory.SaleSoldOut, 0},
		{inventory.SKU{OnSale: false, OnHand: 30, Available: 30}, inventory.SaleOffSale, 0},
		{inventory.SKU{OnSale: true, OnHand: 30, Available: 30, SaleStartsAt: now.Add(time.Second)}, inventory.SaleUpcoming, 0},
		{inventory.SKU{OnSale: true, OnHand: 30, Available: 30, SaleStartsAt: now}, inventory.SaleOnSale, 30},
		{inventory.SKU{OnSale: false, OnHand: 30, Available: 30, SaleStartsAt: now.Add(time.Hour)}, inventory.SaleOffSale, 0},
	} {
		if got := tc.sku.Status(now); got != tc.status || tc.sku.Sellable(now) != tc.sellable {
			t.Errorf("%+v: %s sellable %d, want %s and %d", tc.sku, got, tc.sku.Sellable(now), tc.status, tc.sellable)
		}
	}
}
