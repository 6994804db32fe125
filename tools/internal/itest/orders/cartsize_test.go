package orders_test

import (
	"log/slog"
	"net/http"
	"reflect"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// A cart that one transaction cannot hold, with the stock spread one unit per shard as
// it is now, is refused as CART_TOO_LARGE (not BUSY, so no Retry-After: retrying the
// same cart does not help) and changes nothing; one action fewer fits.
func TestCreateOrder_CartTooLargeForOneTransactionIsRefusedAndChangesNothing(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: `[
		{"skuId":"thin-a","delivery":"none","name":"a","price":100,"stock":64,"shards":64},
		{"skuId":"thin-b","delivery":"none","name":"b","price":100,"stock":64,"shards":64}]`})
	h := &harness{stack: stack, handler: createOrder(t, stack.Store, nil, slog.New(slog.DiscardHandler))}
	req := fixture(t, "create-order.json")
	before := h.snapshot(t)
	// 1 order + 2 × (1 ledger entry + 49 one-unit shards) = 101 actions.
	resp, body := h.do(t, withBody(req, `{"items":[{"skuId":"thin-a","qty":49},{"skuId":"thin-b","qty":49}]}`))
	if resp.StatusCode != http.StatusConflict || body["code"] != "CART_TOO_LARGE" {
		t.Fatalf("49 + 49 units on one-unit shards: %d %v, want 409 CART_TOO_LARGE", resp.StatusCode, body)
	}
	if ra, ok := resp.Headers["Retry-After"]; ok {
		t.Errorf("CART_TOO_LARGE carries Retry-After %q", ra)
	}
	if after := h.snapshot(t); !reflect.DeepEqual(before, after) {
		t.Error("a cart refused as too large changed the tables")
	}
	// 100 actions: served.
	if resp, body := h.do(t, withBody(req, `{"items":[{"skuId":"thin-a","qty":48},{"skuId":"thin-b","qty":49}]}`)); resp.StatusCode != http.StatusCreated {
		t.Fatalf("48 + 49 units (100 actions): %d %v, want 201", resp.StatusCode, body)
	}
}
