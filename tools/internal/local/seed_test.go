package local_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
)

// A seed entry's peakOrdersPerSecond sizes its shards when it gives none
// (inventory.ShardsForPeak); explicit shards win; a negative peak is refused.
func TestSeed_PeakOrdersPerSecondSizesTheShards(t *testing.T) {
	ctx := context.Background()
	stack, err := local.Start(ctx, local.StackConfig{Template: "../../../template.yaml", APIWrap: openapitest.New(t).Wrap})
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	err = stack.Seed(ctx, strings.NewReader(`[
		{"skuId":"hot","name":"hot","price":100,"stock":400,"peakOrdersPerSecond":10000},
		{"skuId":"set","name":"set","price":100,"stock":400,"peakOrdersPerSecond":10000,"shards":3},
		{"skuId":"calm","name":"calm","price":100,"stock":400}]`))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"hot": 50, "set": 3, "calm": 1} {
		sku, err := stack.Store.SKU(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sku.Shards != want || sku.Available != 400 {
			t.Errorf("%s: %d shards, %d available; want %d shards, 400", id, sku.Shards, sku.Available, want)
		}
	}
	err = stack.Seed(openapitest.OutsideContract(ctx, "a negative peak"), strings.NewReader(`[{"skuId":"bad","name":"bad","price":100,"stock":1,"peakOrdersPerSecond":-1}]`))
	if err == nil {
		t.Error("a negative peak was seeded")
	}
	if _, err := stack.Store.SKU(ctx, "bad"); !errors.Is(err, inventory.ErrSKUNotFound) {
		t.Errorf("after a refused seed entry, SKU bad: %v, want ErrSKUNotFound", err)
	}
}
