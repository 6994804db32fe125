package orders_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	pub "github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// reconcileClean runs reconcile through the local stack and fails t unless its report
// shows no difference.
func reconcileClean(t *testing.T, stack *stacktest.Stack) {
	t.Helper()
	code, report := stack.Call(t, "POST", "/_local/invoke/reconcile", "", nil, "")
	if code != http.StatusOK {
		t.Fatalf("reconcile: %d %v", code, report)
	}
	if diffs, _ := report["differences"].([]any); len(diffs) != 0 {
		t.Errorf("reconcile differences: %v", diffs)
	}
}

// Buyers racing a sale's start: before saleStartsAt every order is refused with
// SALE_NOT_STARTED (naming the SKU and the start) and nothing changes; an order placed
// at or after it is served; once it has passed, every buyer is served while stock
// lasts. The store's clock is injected, and the start is part of the reservation's
// condition.
func TestSaleStart_NobodyBuysBeforeItAndEveryoneAfter(t *testing.T) {
	const stock, buyers = 30, 40
	stack := stacktest.New(t, stacktest.Options{Seed: "[]"})
	clock := stack.Clock
	start := clock.Now().Add(time.Minute)
	if created, err := stack.Store.EnsureSKU(context.Background(), inventory.NewSKU{Delivery: inventory.DeliveryNone,
		ID: "flash", Name: "flash", Price: 100, Stock: stock, Shards: 4, SaleStartsAt: start,
	}); err != nil || !created {
		t.Fatalf("create flash: %v (created %v)", err, created)
	}
	order := func(i int) (int, map[string]any) {
		return stack.Call(t, "POST", "/orders", "buyer-"+string(rune('A'+i%26))+string(rune('a'+i/26)), nil, `{"items":[{"skuId":"flash","qty":1}]}`)
	}
	clock.Advance(time.Minute - time.Millisecond)
	_, sku := stack.Call(t, "GET", "/skus/flash", "", nil, "")
	if sku["status"] != "UPCOMING" || sku["available"] != 0.0 || sku["saleStartsAt"] != "2026-11-11T00:01:00Z" {
		t.Errorf("before the start: %v, want UPCOMING, available 0, saleStartsAt 2026-11-11T00:01:00Z", sku)
	}
	before := booktest.Snapshot(t, stack.DB, stack.Tables)
	testkit.Parallel(buyers, func(i int) {
		code, body := order(i)
		if code != http.StatusConflict || body["code"] != "SALE_NOT_STARTED" || body["skuId"] != "flash" || body["saleStartsAt"] != "2026-11-11T00:01:00Z" {
			t.Errorf("buyer %d a millisecond early: %d %v", i, code, body)
		}
	})
	if after := booktest.Snapshot(t, stack.DB, stack.Tables); after != before {
		t.Errorf("refused orders changed the tables:\nbefore %s\nafter  %s", before, after)
	}
	// The clock reaches the start while the buyers are on their way.
	var mu sync.Mutex
	served, stockOut, early := 0, 0, []int{}
	testkit.Parallel(buyers+1, func(i int) {
		if i == buyers {
			clock.Advance(time.Millisecond)
			return
		}
		code, body := order(i)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case code == http.StatusCreated:
			served++
			if at, err := time.Parse(time.RFC3339Nano, body["createdAt"].(string)); err != nil || at.Before(start) {
				t.Errorf("buyer %d served with createdAt %v, before the start %v", i, body["createdAt"], start)
			}
		case code == http.StatusConflict && body["code"] == "SALE_NOT_STARTED":
			early = append(early, i)
		case code == http.StatusConflict && body["code"] == "STOCK_OUT":
			stockOut++
		default:
			t.Errorf("buyer %d at the start: %d %v", i, code, body)
		}
	})
	for _, i := range early { // now past the start: every one of them is eligible
		code, body := order(i)
		switch {
		case code == http.StatusCreated:
			served++
		case code == http.StatusConflict && body["code"] == "STOCK_OUT":
			stockOut++
		default:
			t.Errorf("buyer %d after the start: %d %v", i, code, body)
		}
	}
	if served != stock || stockOut != buyers-stock {
		t.Errorf("%d orders served and %d STOCK_OUT, want %d and %d", served, stockOut, stock, buyers-stock)
	}
	clock.Advance(pub.MaxStale) // the page's answer is at most that old
	_, sku = stack.Call(t, "GET", "/skus/flash", "", nil, "")
	if sku["status"] != "SOLD_OUT" {
		t.Errorf("after the sale: %v, want SOLD_OUT", sku)
	}
	booktest.Check(t, stack.DB, stack.Tables)
	reconcileClean(t, stack)
}
