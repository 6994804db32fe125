package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

func cart(t testing.TB, lines ...inventory.Line) inventory.Cart {
	t.Helper()
	c, err := inventory.NewCart(lines)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// outcome tallies concurrent Reserve results by answer.
type outcome struct {
	mu       sync.Mutex
	created  int
	replayed int
	orders   map[string]bool
	errs     map[string]int
}

func (o *outcome) record(order *inventory.Order, replayed bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.orders == nil {
		o.orders, o.errs = map[string]bool{}, map[string]int{}
	}
	switch {
	case err != nil:
		o.errs[errName(err)]++
	case replayed:
		o.replayed++
		o.orders[order.ID] = true
	default:
		o.created++
		o.orders[order.ID] = true
	}
}

func errName(err error) string {
	for _, s := range []error{inventory.ErrStockOut, inventory.ErrLimitExceeded, inventory.ErrOffSale,
		inventory.ErrSKUNotFound, inventory.ErrIdempotencyKeyReused, inventory.ErrBusy} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "other: " + err.Error()
}

var parallel = testkit.Parallel

func TestReserve_ConcurrentBuyersNeverOversellNorFalselyReject(t *testing.T) {
	for _, tc := range []struct {
		buyers, stock, shards int
	}{
		{buyers: 50, stock: 10, shards: 1},
		{buyers: 300, stock: 30, shards: 1},
		{buyers: 300, stock: 30, shards: 4},
	} {
		t.Run(fmt.Sprintf("%d buyers on %d units in %d shards", tc.buyers, tc.stock, tc.shards), func(t *testing.T) {
			e := newEnv(t, dynamo.Options{}, nil)
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup-01", Stock: tc.stock, Shards: tc.shards})
			var got outcome
			parallel(tc.buyers, func(i int) {
				got.record(e.store.Reserve(context.Background(), inventory.ReserveRequest{
					UserID: fmt.Sprintf("buyer-%d", i), Cart: cart(t, inventory.Line{SKU: "cup-01", Qty: 1}),
				}))
			})
			if got.created != tc.stock || len(got.orders) != tc.stock {
				t.Errorf("created %d orders (%d distinct), want exactly %d", got.created, len(got.orders), tc.stock)
			}
			if n := got.errs[inventory.ErrStockOut.Error()]; n != tc.buyers-tc.stock || len(got.errs) != 1 {
				t.Errorf("rejections %v, want only %d STOCK_OUT", got.errs, tc.buyers-tc.stock)
			}
			b := e.books(t, "cup-01")
			if b.available != 0 || b.reserveEntries != tc.stock {
				t.Errorf("available %d, RESERVE entries %d; want 0 and %d", b.available, b.reserveEntries, tc.stock)
			}
			b.checkBalanced(t, tc.stock)
		})
	}
}

// With stock that only goes down, a STOCK_OUT for q units is false if, at the end,
// q units are still available: they were available when it was answered too.
func TestReserve_ShardedStockNeverAnswersStockOutWhileShardsCanServe(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "mug", Stock: 60, Shards: 4})
	const buyers = 120
	qty := make([]int, buyers)
	errs := make([]error, buyers)
	for i := range qty {
		qty[i] = 1 + rand.IntN(5)
	}
	parallel(buyers, func(i int) {
		_, _, errs[i] = e.store.Reserve(context.Background(), inventory.ReserveRequest{
			UserID: fmt.Sprintf("u%d", i), Cart: cart(t, inventory.Line{SKU: "mug", Qty: qty[i]}),
		})
	})
	b := e.books(t, "mug")
	b.checkBalanced(t, 60)
	reserved := 0
	for i, err := range errs {
		switch {
		case err == nil:
			reserved += qty[i]
		case errors.Is(err, inventory.ErrStockOut):
			if qty[i] <= b.available {
				t.Errorf("buyer %d got STOCK_OUT for %d while %d units remain", i, qty[i], b.available)
			}
		default:
			t.Errorf("buyer %d: unexpected %v", i, err)
		}
	}
	if reserved != b.reservedInLedger || reserved != 60-b.available {
		t.Errorf("reserved %d units, ledger says %d, stock says %d", reserved, b.reservedInLedger, 60-b.available)
	}
}

func TestReserve_SplitsALineAcrossShardsWhenNoSingleShardSuffices(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "vase", Stock: 12, Shards: 4}) // 3 units per shard
	order, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "vase", Qty: 12})})
	if err != nil {
		t.Fatalf("12 of 12 units over 4 shards: %v", err)
	}
	if len(order.Items[0].Shards) != 4 {
		t.Errorf("reserved on shards %v, want all 4", order.Items[0].Shards)
	}
	_, _, err = e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "v", Cart: cart(t, inventory.Line{SKU: "vase", Qty: 1})})
	if !errors.Is(err, inventory.ErrStockOut) {
		t.Errorf("after selling out: %v, want STOCK_OUT", err)
	}
	e.books(t, "vase").checkBalanced(t, 12)
}

func TestReserve_MultiSKUCartIsAllOrNothing(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "saucer", Stock: 3, Shards: 2})
	ctx := context.Background()

	_, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "u", Cart: cart(t,
		inventory.Line{SKU: "cup", Qty: 2}, inventory.Line{SKU: "saucer", Qty: 4})})
	var skuErr *inventory.SKUError
	if !errors.As(err, &skuErr) || !errors.Is(err, inventory.ErrStockOut) || skuErr.SKU != "saucer" {
		t.Fatalf("got %v, want STOCK_OUT naming saucer", err)
	}
	if b := e.books(t, "cup"); b.available != 10 || b.reserveEntries != 0 {
		t.Errorf("cup touched by a rejected cart: %+v", b)
	}

	// Concurrent carts: every order takes one cup and one saucer; saucers run out first.
	var got outcome
	parallel(40, func(i int) {
		got.record(e.store.Reserve(ctx, inventory.ReserveRequest{UserID: fmt.Sprint(i), Cart: cart(t,
			inventory.Line{SKU: "cup", Qty: 1}, inventory.Line{SKU: "saucer", Qty: 1})}))
	})
	if got.created != 3 || got.errs[inventory.ErrStockOut.Error()] != 37 {
		t.Errorf("created %d, rejections %v; want 3 and 37 STOCK_OUT", got.created, got.errs)
	}
	cup, saucer := e.books(t, "cup"), e.books(t, "saucer")
	cup.checkBalanced(t, 10)
	saucer.checkBalanced(t, 3)
	if cup.available != 7 || saucer.available != 0 {
		t.Errorf("cup available %d, saucer %d; want 7 and 0", cup.available, saucer.available)
	}
}

func TestReserve_PerUserLimitHoldsUnderParallelRequests(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 100, LimitPerUser: 2, Shards: 2})
	var got outcome
	parallel(20, func(int) {
		got.record(e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "greedy", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}))
	})
	if got.created != 2 || got.errs[inventory.ErrLimitExceeded.Error()] != 18 {
		t.Errorf("created %d, rejections %v; want 2 and 18 LIMIT_EXCEEDED", got.created, got.errs)
	}
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "other", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 3})})
	if !errors.Is(err, inventory.ErrLimitExceeded) {
		t.Errorf("3 units at a limit of 2: %v, want LIMIT_EXCEEDED", err)
	}
	e.books(t, "cup").checkBalanced(t, 100)
}

func TestReserve_SameIdempotencyKeyInParallelReservesOnce(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 50})
	var got outcome
	parallel(20, func(int) {
		got.record(e.store.Reserve(context.Background(), inventory.ReserveRequest{
			UserID: "u", IdempotencyKey: "k-1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 2}),
		}))
	})
	if got.created != 1 || got.replayed != 19 || len(got.orders) != 1 || len(got.errs) != 0 {
		t.Errorf("created %d, replayed %d, distinct orders %d, errors %v; want 1, 19, 1, none", got.created, got.replayed, len(got.orders), got.errs)
	}
	b := e.books(t, "cup")
	if b.reserveEntries != 1 || b.available != 48 {
		t.Errorf("RESERVE entries %d, available %d; want 1 and 48", b.reserveEntries, b.available)
	}
	b.checkBalanced(t, 50)

	before := e.Scan(t, e.Tables.Orders)
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{
		UserID: "u", IdempotencyKey: "k-1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 3}),
	})
	if !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("same key, other cart: %v, want IDEMPOTENCY_KEY_REUSED", err)
	}
	if after := e.Scan(t, e.Tables.Orders); len(after) != len(before) {
		t.Errorf("a reused key wrote orders: %d items before, %d after", len(before), len(after))
	}
	// Another user's identical key is a different key.
	if _, replayed, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{
		UserID: "v", IdempotencyKey: "k-1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 2}),
	}); err != nil || replayed {
		t.Errorf("other user, same key: replayed=%v err=%v; want a new order", replayed, err)
	}
}

// Two stores stand for two warm Lambda containers: one caches the SKU as on sale,
// the other takes it off sale; the first must not sell from its stale cache.
func TestReserve_OffSaleWinsOverAStaleCache(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5, Shards: 2})
	ctx := context.Background()
	if _, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "a", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); err != nil {
		t.Fatal(err)
	}
	operator := store{dynamo.New(e.DB, e.Tables, dynamo.Options{})}
	if err := operator.SetOnSale(ctx, "cup", false); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "b", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	if !errors.Is(err, inventory.ErrOffSale) {
		t.Errorf("got %v, want SKU_OFF_SALE", err)
	}
	e.books(t, "cup").checkBalanced(t, 5)
}

// A key's order id is derived from the user and the key, so the key answers with its
// order for as long as the order is kept: past the contract's 24 h too.
func TestReserve_IdempotencyKeyHoldsAsLongAsItsOrder(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, dynamo.Options{Now: func() time.Time { return now }}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	req := inventory.ReserveRequest{UserID: "u", IdempotencyKey: "k", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}
	first, _, err := e.store.Reserve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != inventory.KeyedOrderID("u", "k") {
		t.Errorf("order id %s, want the key's %s", first.ID, inventory.KeyedOrderID("u", "k"))
	}
	for _, after := range []time.Duration{23 * time.Hour, 2 * time.Hour, 30 * 24 * time.Hour} {
		now = now.Add(after)
		if again, replayed, err := e.store.Reserve(context.Background(), req); err != nil || !replayed || again.ID != first.ID {
			t.Errorf("%v later: replayed=%v err=%v; want the first order", after, replayed, err)
		}
	}
	other := req
	other.Cart = cart(t, inventory.Line{SKU: "cup", Qty: 2})
	if _, _, err := e.store.Reserve(context.Background(), other); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("the key with another cart a month later: %v, want ErrIdempotencyKeyReused", err)
	}
	if b := e.books(t, "cup"); b.reserveEntries != 1 || b.available != 4 {
		t.Errorf("RESERVE entries %d, available %d; want 1 and 4", b.reserveEntries, b.available)
	}
}

func TestReserve_ReplaysAKeyedOrderAfterItsSKUSoldOut(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) {
			e := newEnv(t, dynamo.Options{}, nil)
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 4, Shards: shards})
			req := inventory.ReserveRequest{UserID: "u", IdempotencyKey: "last-units", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 4})}
			first, _, err := e.store.Reserve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			// Another buyer learns the shards are empty, warming the shard hints.
			if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "v", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); !errors.Is(err, inventory.ErrStockOut) {
				t.Fatalf("sold out: %v", err)
			}
			again, replayed, err := e.store.Reserve(context.Background(), req)
			if err != nil || !replayed || again.ID != first.ID {
				t.Errorf("retry after sell-out: replayed=%v err=%v; want the first order", replayed, err)
			}
			req.Cart = cart(t, inventory.Line{SKU: "cup", Qty: 1})
			if _, _, err := e.store.Reserve(context.Background(), req); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
				t.Errorf("same key, other cart, sold out: %v, want IDEMPOTENCY_KEY_REUSED", err)
			}
		})
	}
}

// A raised per-user limit applies at once, even in a container that cached the old one.
func TestReserve_RaisedLimitIsNotRefusedFromAStaleCache(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, LimitPerUser: 1})
	ctx := context.Background()
	buy := func(user string, qty int) error {
		_, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: qty})})
		return err
	}
	if err := buy("u", 1); err != nil { // caches limit 1
		t.Fatal(err)
	}
	e.Set(t, e.Tables.SKUs, "cup", "limitPerUser", 3) // an operator raises the limit
	if err := buy("u", 1); err != nil {
		t.Errorf("second unit under the raised limit: %v", err)
	}
	if err := buy("v", 3); err != nil {
		t.Errorf("3 units under the raised limit: %v", err)
	}
	if err := buy("u", 2); !errors.Is(err, inventory.ErrLimitExceeded) {
		t.Errorf("past the raised limit: %v, want LIMIT_EXCEEDED", err)
	}
	e.books(t, "cup").checkBalanced(t, 10)
}

// Every sharded line's first shard is a guess; one wrong guess must not cost a round
// per line, or a wide cart runs out of rounds with stock on the shelf.
func TestReserve_WideCartOfShardedSKUsSucceedsOnAColdCache(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	var lines []inventory.Line
	for i := range 20 {
		id := fmt.Sprintf("t%02d", i)
		e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: id, Stock: 64, Shards: 16, LimitPerUser: 100}) // 4 units per shard
		lines = append(lines, inventory.Line{SKU: id, Qty: 8})
	}
	for _, n := range []int{6, 20} {
		fresh := dynamo.New(e.DB, e.Tables, dynamo.Options{}) // a cold container
		if _, _, err := fresh.Reserve(context.Background(), inventory.ReserveRequest{UserID: fmt.Sprint("u", n), Cart: cart(t, lines[:n]...)}); err != nil {
			t.Errorf("%d lines of 8 units over 4-unit shards: %v", n, err)
		}
	}
	for _, l := range lines {
		e.books(t, l.SKU).checkBalanced(t, 64)
	}
}

// Two lines each spread thin over 64 one-unit shards cannot fit in one transaction:
// the cart is refused whole (CART_TOO_LARGE), and nothing moves.
func TestReserve_RefusesACartTooWideForOneTransactionAndChangesNothing(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "p1", Stock: 64, Shards: 64}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "p2", Stock: 64, Shards: 64})
	before := e.Scan(t, e.Tables.SKUs)
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t,
		inventory.Line{SKU: "p1", Qty: 64}, inventory.Line{SKU: "p2", Qty: 64})})
	if !errors.Is(err, inventory.ErrCartTooLarge) {
		t.Fatalf("131 actions: %v, want CART_TOO_LARGE", err)
	}
	if after := e.Scan(t, e.Tables.SKUs); !reflect.DeepEqual(before, after) {
		t.Error("a refused cart changed shard items")
	}
	if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "p1", Qty: 64})}); err != nil {
		t.Errorf("one line of 64 shards fits: %v", err)
	}
	e.books(t, "p1").checkBalanced(t, 64)
}

// Copies of one keyed request racing each other for a sharded SKU: every copy gets
// the one order, none a STOCK_OUT caused by the order it is a copy of.
func TestReserve_ParallelCopiesOfAKeyedRequestAllGetTheOrderOnShardedStock(t *testing.T) {
	for _, shards := range []int{4, 64} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) {
			e := newEnv(t, dynamo.Options{}, nil)
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "k", Stock: 10 * shards / 4, Shards: shards})
			qty := 7 * shards / 4
			var got outcome
			parallel(20, func(int) {
				got.record(e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "alice", IdempotencyKey: "tap-1", Cart: cart(t, inventory.Line{SKU: "k", Qty: qty})}))
			})
			if got.created != 1 || got.replayed != 19 || len(got.orders) != 1 || len(got.errs) != 0 {
				t.Errorf("created %d, replayed %d, orders %d, errors %v; want 1, 19, 1, none", got.created, got.replayed, len(got.orders), got.errs)
			}
			e.books(t, "k").checkBalanced(t, 10*shards/4)
		})
	}
}

// Wide carts of sharded SKUs from concurrent buyers, with half the stock to spare:
// every one takes whole shards of every SKU, so nearly every round collides, yet with
// fewer racing buyers than rounds (Options.MaxRounds) every buyer is served.
func TestReserve_ConcurrentWideShardedCartsAreAllServedWhenStockSuffices(t *testing.T) {
	if stacktest.OnMoto() {
		t.Skip("contention is not exercised on moto_server: the stack sends it one request at a time, as it does not isolate " +
			"concurrent transactions (README, \"On moto\"), and this test's 100-action transactions take minutes there")
	}
	e := newEnv(t, dynamo.Options{}, nil)
	var lines []inventory.Line
	for i := range 8 {
		id := fmt.Sprintf("w%02d", i)
		e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: id, Stock: 2000, Shards: 64})
		lines = append(lines, inventory.Line{SKU: id, Qty: 100})
	}
	var got outcome
	parallel(10, func(i int) {
		got.record(e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: fmt.Sprint("b", i), Cart: cart(t, lines...)}))
	})
	if got.created != 10 || len(got.errs) != 0 {
		t.Errorf("created %d, errors %v; want all 10 served", got.created, got.errs)
	}
	for _, l := range lines {
		e.books(t, l.SKU).checkBalanced(t, 2000)
	}
}

// Split lines planned from stale hints are planned again from a strongly consistent
// read of the shards, over the fullest ones, when they would overflow one transaction.
func TestReserve_PlansSplitLinesOverTheFullestShardsWhenStaleHintsDoNotFit(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	var lines []inventory.Line
	for i := range 8 { // 8 lines over random shards would need ~260 updates
		id := fmt.Sprint("s", i)
		e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: id, Stock: 64, Shards: 64}) // one unit per shard
		e.Set(t, e.Tables.SKUs, id+"#shard#0", "available", 60)                                           // then a restock lands on shard 0
		e.Set(t, e.Tables.SKUs, id+"#shard#0", "onHand", 60)
		lines = append(lines, inventory.Line{SKU: id, Qty: 61}) // no shard covers a line alone
	}
	order, _, err := dynamo.New(e.DB, e.Tables, dynamo.Options{}).Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, lines...)})
	if err != nil {
		t.Fatalf("8 lines of 61 over a 60-unit shard and 63 one-unit shards: %v", err)
	}
	for _, it := range order.Items {
		if len(it.Shards) != 2 {
			t.Errorf("%s reserved on %d shards, want the 2 fullest", it.SKU, len(it.Shards))
		}
	}
	// What is left (62 one-unit shards per SKU) could serve the cart again, but only
	// with 8 × 61 shard updates: refused whole, nothing changed.
	before := e.Scan(t, e.Tables.SKUs)
	if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "v", Cart: cart(t, lines...)}); !errors.Is(err, inventory.ErrCartTooLarge) {
		t.Errorf("a cart needing 497 actions: %v, want CART_TOO_LARGE", err)
	}
	if after := e.Scan(t, e.Tables.SKUs); !reflect.DeepEqual(before, after) {
		t.Error("a refused cart changed shard items")
	}
}
