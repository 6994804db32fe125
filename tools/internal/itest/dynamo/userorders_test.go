package dynamo_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// A buyer's list is exactly their orders, newest first, a page at a time, with the
// statuses as they are now; another buyer's orders never appear, not even through
// a cursor given to someone else.
func TestUserOrders_PagesTheOwnersOrdersNewestFirst(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, dynamo.Options{Now: func() time.Time { return now }}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 100})
	ctx := context.Background()
	var mine []string // oldest first
	for i := range dynamo.UserPageSize + 5 {
		now = now.Add(time.Millisecond * time.Duration(1+i%3)) // some orders a millisecond apart, none at the same instant
		o, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "ann", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, o.ID)
		if i == 3 {
			other, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "bob", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := e.store.Release(ctx, other, inventory.CancelUser); err != nil {
				t.Fatal(err)
			}
		}
	}
	first, _, err := e.store.Release(ctx, mustOrder(t, e, "ann", mine[0]), inventory.CancelUser)
	if err != nil || first.Status != inventory.StatusCancelled {
		t.Fatalf("cancel: %v %v", first, err)
	}
	var got []string
	var firstCursor string
	pages := 0
	for after := ""; ; pages++ {
		orders, next, err := e.store.UserOrders(ctx, "ann", after)
		if err != nil {
			t.Fatal(err)
		}
		if len(orders) > dynamo.UserPageSize {
			t.Errorf("page of %d orders, over %d", len(orders), dynamo.UserPageSize)
		}
		for _, o := range orders {
			if o.UserID != "ann" {
				t.Errorf("ann's list holds %s of %s", o.ID, o.UserID)
			}
			if o.ID == mine[0] && o.Status != inventory.StatusCancelled {
				t.Errorf("cancelled order listed as %s", o.Status)
			}
			got = append(got, o.ID)
		}
		if firstCursor == "" {
			firstCursor = next
		}
		if after = next; after == "" {
			break
		}
	}
	want := slices.Clone(mine)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("ann's list %v, want %v", got, want)
	}
	if pages != 1 {
		t.Errorf("%d further pages, want 1", pages)
	}
	// A cursor works only for the user it was issued to (docs/contract.md): ann's, or
	// one made up with ann's order id and time, is refused to bob.
	raw, _ := base64.RawURLEncoding.DecodeString(firstCursor)
	var c map[string]any
	json.Unmarshal(raw, &c)
	delete(c, "u")
	madeUp, _ := json.Marshal(c)
	for _, cursor := range []string{firstCursor, base64.RawURLEncoding.EncodeToString(madeUp)} {
		if bobs, _, err := e.store.UserOrders(ctx, "bob", cursor); !errors.Is(err, inventory.ErrInvalidRequest) || len(bobs) != 0 {
			t.Errorf("bob with cursor %s: %d orders, %v; want ErrInvalidRequest", raw, len(bobs), err)
		}
	}
	for _, bad := range []string{"x", "eyJpZCI6IiIsImF0IjowfQ", "%%%"} {
		if _, _, err := e.store.UserOrders(ctx, "ann", bad); !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("after=%q: %v, want ErrInvalidRequest", bad, err)
		}
	}
	if orders, next, err := e.store.UserOrders(ctx, "carl", ""); err != nil || len(orders) != 0 || next != "" {
		t.Errorf("a buyer without orders: %d orders, next %q, %v", len(orders), next, err)
	}
}

func mustOrder(t *testing.T, e *env, user, id string) *inventory.Order {
	t.Helper()
	o, err := e.store.Order(context.Background(), user, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The buyer's SKU list is the SKUs on sale (upcoming and sold out included), without
// those put off sale.
func TestSKUsOnSale_LeavesOutWhatIsOffSale(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, dynamo.Options{Now: func() time.Time { return now }}, nil,
		inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 3, Shards: 2}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "pot", Stock: 0},
		inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "jar", Stock: 1, OffSale: true}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "vase", Stock: 1, SaleStartsAt: now.Add(time.Hour)})
	skus, next, unreadable, err := e.store.SKUsOnSale(context.Background(), "")
	if err != nil || next != "" || unreadable != nil {
		t.Fatalf("next %q, %v", next, err)
	}
	got := map[string]int{}
	for _, s := range skus {
		got[s.ID] = s.Available
	}
	if want := map[string]int{"cup": 3, "pot": 0, "vase": 1}; !maps.Equal(got, want) {
		t.Errorf("on sale %v, want %v", got, want)
	}
}
