package booktest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// Each drift an operator, a bug or a lost write could cause is named; untouched
// books have no problem.
func TestProblems_NamesEveryInjectedDrift(t *testing.T) {
	skus := func(t dynamo.Tables) string { return t.SKUs }
	orders := func(t dynamo.Tables) string { return t.Orders }
	stockLog := func(t dynamo.Tables) string { return t.StockLog }
	for _, tc := range []struct {
		name  string
		table func(dynamo.Tables) string // of the drifted item; nil: no drift
		key   string                     // the item's pk; {order} stands for the order's id
		attr  string                     // set to value; "" deletes the item
		value any
		want  string // a problem line containing this
	}{
		{"none", nil, "", "", nil, ""},
		{"available bumped", skus, "cup#shard#1", "available", 99, "shard cup#1: available"},
		{"on-hand lowered", skus, "cup#shard#0", "onHand", 1, "SKU cup: onHand"},
		{"ledger entry deleted", stockLog, "{order}#RESERVE#cup", "", nil, "no RESERVE entry for cup"},
		{"order cancelled without release", orders, "{order}", "status", "CANCELLED", "no RELEASE entry for cup"},
		{"purchase counter changed", orders, "limit#cup#u1", "bought", 0, "counter limit#cup#u1: bought 0, orders count 2"},
		{"reserved counter changed", skus, "cup#shard#0", "reserved", 7, "reserved counter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup","delivery":"none","name":"cup","price":100,"stock":20,"shards":2,"limitPerUser":5}]`})
			c, _ := inventory.NewCart([]inventory.Line{{SKU: "cup", Qty: 2}})
			order, _, err := h.Store.Reserve(ctx, dynamo.ReserveRequest{UserID: "u1", Cart: c})
			if err != nil {
				t.Fatal(err)
			}
			if tc.table != nil {
				table, key := tc.table(h.Tables), strings.ReplaceAll(tc.key, "{order}", order.ID)
				if tc.attr == "" {
					h.Delete(t, table, key)
				} else {
					h.Set(t, table, key, tc.attr, tc.value)
				}
			}
			problems, err := booktest.Problems(ctx, h.DB, h.Tables)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range problems {
				found = found || tc.want != "" && strings.Contains(p, tc.want)
			}
			if tc.want == "" && len(problems) > 0 || tc.want != "" && !found {
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
}
