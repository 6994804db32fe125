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
			e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{ID: "cup", Stock: shards, Shards: shards})
			ctx := context.Background()
			buy := func(user string) (*inventory.Order, error) {
				o, _, err := e.store.Reserve(ctx, dynamo.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
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
