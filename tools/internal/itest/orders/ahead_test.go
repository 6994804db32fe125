package orders_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// createOrder sends each request's close message while its reservation runs, before
// the outcome is known. The created order is still released through the queue at
// expiry; the message of a refused cart names an order that never existed, and the
// message of an idempotent replay comes after the order was released: both are
// dropped, nothing released twice, nothing failed, nothing logged at error level.
func TestCloseOrder_MessagesSentAheadOfTheOutcomeReleaseOnlyOrdersThatExist(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true, Stack: local.StackConfig{PaymentTimeout: 2 * time.Second}})
	h.RunInBackground(t)

	keyed := map[string]string{"Idempotency-Key": "tap-1"}
	status, created := h.Call(t, "POST", "/orders", "buyer", keyed, cupAndSaucer)
	if status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, created)
	}
	id := created["orderId"].(string)
	if status, out := h.Call(t, "POST", "/orders", "buyer", keyed, cupAndSaucer); status != http.StatusOK || out["orderId"] != id {
		t.Fatalf("replay: %d %v, want 200 with order %s", status, out, id)
	}
	if status, out := h.Call(t, "POST", "/orders", "other", nil, `{"items":[{"skuId":"saucer","qty":101}]}`); status != http.StatusConflict || out["code"] != "STOCK_OUT" {
		t.Fatalf("refused cart: %d %v, want 409 STOCK_OUT", status, out)
	}

	// Three messages were sent; wait until closeOrder has handled all three.
	handled := func() (records, released, closed, failed float64) {
		for _, l := range h.Logged(t, "msg", "close messages") {
			records += l["records"].(float64)
			released += l["released"].(float64)
			closed += l["closed"].(float64)
			failed += l["failed"].(float64)
		}
		return
	}
	eventually(t, 20*time.Second, "three close messages handled", func() bool {
		records, _, _, _ := handled()
		return records >= 3
	})
	if records, released, closed, failed := handled(); records != 3 || released != 1 || closed != 2 || failed != 0 {
		t.Errorf("close messages: %v records, %v released, %v closed, %v failed; want 3, 1, 2, 0", records, released, closed, failed)
	}
	if o := h.Lookup(t, id); o.Status != inventory.StatusCancelled || o.CancelReason != inventory.CancelTimeout {
		t.Errorf("order %s %s, want CANCELLED TIMEOUT", o.Status, o.CancelReason)
	}
	if cup, saucer := h.Available(t, "cup"), h.Available(t, "saucer"); cup != 100 || saucer != 100 {
		t.Errorf("available cup %d saucer %d, want 100 and 100", cup, saucer)
	}
	released := 0
	for _, e := range h.Scan(t, h.Tables.StockLog) {
		if e["op"] == string(inventory.OpRelease) {
			released++
		}
	}
	if n := h.Ops(t, id)[string(inventory.OpRelease)]; n != 2 || released != 2 {
		t.Errorf("RELEASE entries: %d for %s, %d in all; want 2 and 2", n, id, released)
	}
	lines, err := h.Log.Lines()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l["level"] == "ERROR" || l["level"] == "WARN" {
			t.Errorf("logged %v", l)
		}
	}
	h.Check(t)
}
