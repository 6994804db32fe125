package stock_test

import (
	"net/http"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// The buyer's SKU view shows the merchant's per-user limit, so that a cart can show it
// before checkout, and leaves it out when there is none; the list shows each SKU so.
func TestPublicSKU_ShowsThePerUserLimitWhenThereIsOne(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: `[
		{"skuId":"cup","name":"cup","price":100,"stock":10,"limitPerUser":2},
		{"skuId":"mug","name":"mug","price":100,"stock":10}]`})
	for sku, want := range map[string]any{"cup": 2.0, "mug": nil} {
		if status, out := stack.Call(t, http.MethodGet, "/skus/"+sku, "", nil, ""); status != http.StatusOK || out["limitPerUser"] != want {
			t.Errorf("GET /skus/%s: %d limitPerUser %v, want %v", sku, status, out["limitPerUser"], want)
		}
	}
	_, out := stack.Call(t, http.MethodGet, "/skus", "", nil, "")
	skus, _ := out["skus"].([]any)
	if len(skus) != 2 {
		t.Fatalf("GET /skus: %v", out)
	}
	for _, s := range skus {
		s := s.(map[string]any)
		if want := map[string]any{"cup": 2.0, "mug": nil}[s["skuId"].(string)]; s["limitPerUser"] != want {
			t.Errorf("GET /skus: %s limitPerUser %v, want %v", s["skuId"], s["limitPerUser"], want)
		}
	}
}
