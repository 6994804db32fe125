package dynamo_test

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// Reservations and releases racing cuts: every cut's counters equal the sums of
// exactly the ledger entries stamped with its epoch or an earlier one, and each
// shard's seq counts its entries.
func TestCut_CountersAtACutAreTheEntriesStampedUpToIt(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "jar", Stock: 200, Shards: 2})
	cutter := dynamo.New(e.DB, e.Tables, dynamo.Options{}) // reconcile's own store
	var mu sync.Mutex
	var cuts []struct {
		shard int
		cut   dynamo.ShardCut
	}
	testkit.Parallel(24, func(i int) {
		if i%3 == 2 { // a third of the goroutines cut, the others buy and cancel
			for range 4 {
				n := i % 2
				c, err := cutter.Cut(context.Background(), "jar", n)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				cuts = append(cuts, struct {
					shard int
					cut   dynamo.ShardCut
				}{n, c})
				mu.Unlock()
			}
			return
		}
		user := fmt.Sprintf("u%d", i)
		order, _, err := e.store.Reserve(context.Background(), dynamo.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "jar", Qty: 1 + i%3})})
		if err != nil {
			t.Error(err)
			return
		}
		if i%2 == 0 {
			if _, _, err := e.store.Cancel(context.Background(), user, order.ID); err != nil {
				t.Error(err)
			}
		}
	})
	for n := range 2 { // and one more of each shard once the traffic is over
		c, err := cutter.Cut(context.Background(), "jar", n)
		if err != nil {
			t.Fatal(err)
		}
		cuts = append(cuts, struct {
			shard int
			cut   dynamo.ShardCut
		}{n, c})
	}
	entries := e.Scan(t, e.Tables.StockLog)
	for _, c := range cuts {
		var avail, onHand, seen int
		for _, en := range entries {
			units, ok := en["shards"].(map[string]any)[fmt.Sprint(c.shard)]
			epoch, _ := en["epochs"].(map[string]any)[fmt.Sprint(c.shard)].(float64)
			if !ok || int(epoch) > c.cut.Epoch {
				continue
			}
			seen++
			u := int(units.(float64))
			avail += u * cmp.Compare(en["dAvailable"].(float64), 0)
			onHand += u * cmp.Compare(en["dOnHand"].(float64), 0)
		}
		if got := c.cut.Counters; got.Available != avail || got.OnHand != onHand || c.cut.Seq != seen {
			t.Errorf("cut of shard %d at epoch %d: counters %+v seq %d, entries up to it sum to available %d, on-hand %d over %d entries",
				c.shard, c.cut.Epoch, got, c.cut.Seq, avail, onHand, seen)
		}
	}
	if len(cuts) != 34 {
		t.Errorf("%d cuts, want 34", len(cuts))
	}
}
