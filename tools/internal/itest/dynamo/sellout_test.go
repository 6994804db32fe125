package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Once a SKU is sold out, a buyer is refused from one read and no write: no
// transaction is sent, and the one read is a BatchGetItem of the shards, which show
// that no reshard moved units between them since the SKU record the buyer planned on.
// The hints that skip the transaction refuse nobody on their own: when a release
// puts a unit back, the next buyer's read finds it and gets it.
func TestReserve_AfterSellOutRefusesWithReadsAndNoWrite(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: shards, Shards: shards})
			ctx := context.Background()
			buy := func(user string) (*inventory.Order, error) {
				o, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
				return o, err
			}
			var last *inventory.Order
			for i := range shards {
				o, err := buy(fmt.Sprint("early", i))
				if err != nil {
					t.Fatal(err)
				}
				last = o
			}
			if _, err := buy("first-refused"); !errors.Is(err, inventory.ErrStockOut) {
				t.Fatalf("first buyer after the sell-out: %v, want STOCK_OUT", err)
			}
			txns, gets, batches := e.sent("TransactWriteItems"), e.sent("GetItem"), e.sent("BatchGetItem")
			const refused = 5
			for i := range refused {
				if _, err := buy(fmt.Sprint("late", i)); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("late buyer %d: %v, want STOCK_OUT", i, err)
				}
			}
			if got := e.sent("TransactWriteItems") - txns; got != 0 {
				t.Errorf("%d refused buyers sent %d transactions, want none", refused, got)
			}
			if g, b := e.sent("GetItem")-gets, e.sent("BatchGetItem")-batches; g != 0 || b != refused {
				t.Errorf("%d refused buyers read with %d GetItem and %d BatchGetItem, want one BatchGetItem per buyer", refused, g, b)
			}
			if _, _, err := e.store.Release(ctx, last, inventory.CancelUser); err != nil {
				t.Fatal(err)
			}
			if _, err := buy("after-release"); err != nil {
				t.Errorf("a unit released, the next buyer: %v, want the unit", err)
			}
			e.checkAvailable(t, "cup", 0)
		})
	}
}

// A keyed request refused after a sell-out reads its key's order in the same read as
// the shards (one TransactGetItems: the shards and the order as of one instant), so
// it too is refused with one read and no write; a copy of a request that got the
// last unit is answered that order, replayed, from the same one read.
func TestReserve_AfterSellOutAKeyedBuyerIsRefusedOrReplayedWithOneRead(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: shards, Shards: shards})
			ctx := context.Background()
			buy := func(user, key string) (*inventory.Order, bool, error) {
				return e.store.Reserve(ctx, inventory.ReserveRequest{UserID: user, IdempotencyKey: key, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
			}
			var last *inventory.Order
			for i := range shards {
				o, _, err := buy(fmt.Sprint("early", i), fmt.Sprint("key-early", i))
				if err != nil {
					t.Fatal(err)
				}
				last = o
			}
			if _, _, err := buy("first-refused", "key-first"); !errors.Is(err, inventory.ErrStockOut) {
				t.Fatalf("first buyer after the sell-out: %v, want STOCK_OUT", err)
			}
			reads := func() map[string]int {
				m := map[string]int{}
				for _, op := range []string{"TransactWriteItems", "TransactGetItems", "GetItem", "BatchGetItem", "Query", "UpdateItem", "PutItem"} {
					m[op] = e.sent(op)
				}
				return m
			}
			before := reads()
			const refused = 5
			for i := range refused {
				if _, _, err := buy(fmt.Sprint("late", i), fmt.Sprint("key-late", i)); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("late buyer %d: %v, want STOCK_OUT", i, err)
				}
			}
			after := reads()
			for op, n := range after {
				want := 0
				if op == "TransactGetItems" {
					want = refused
				}
				if n-before[op] != want {
					t.Errorf("%d refused keyed buyers sent %d %s, want %d", refused, n-before[op], op, want)
				}
			}
			lastKey := fmt.Sprint("key-early", shards-1)
			got, replayed, err := buy(fmt.Sprint("early", shards-1), lastKey)
			if err != nil || got.ID != last.ID || !replayed {
				t.Errorf("a copy of the request that got the last unit: %v replayed %v, %v; want order %s replayed", got, replayed, err, last.ID)
			}
			if n := e.sent("TransactGetItems") + e.sent("GetItem") + e.sent("BatchGetItem") - after["TransactGetItems"] - after["GetItem"] - after["BatchGetItem"]; n != 1 {
				t.Errorf("the copy read %d times, want 1", n)
			}
			e.checkAvailable(t, "cup", 0)
		})
	}
}
