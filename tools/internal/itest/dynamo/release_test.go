package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

var newClock = testkit.NewClock

func (e *env) reserve(t testing.TB, user string, lines ...inventory.Line) *inventory.Order {
	t.Helper()
	order, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: user, Cart: cart(t, lines...)})
	if err != nil {
		t.Fatal(err)
	}
	return order
}

func TestExpire_LeavesAnOrderAloneUntilItsWindowEnds(t *testing.T) {
	c := newClock()
	e := newEnv(t, dynamo.Options{Now: c.Now, PaymentTimeout: 15 * time.Minute}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
	before := e.Scan(t, e.Tables.Orders)

	c.Advance(15*time.Minute - time.Millisecond)
	got, released, err := e.store.Expire(context.Background(), order.ID)
	if err != nil || released || got.Status != inventory.StatusPending {
		t.Fatalf("before expiry: %+v released=%v err=%v; want PENDING, nothing released", got, released, err)
	}
	if after := e.Scan(t, e.Tables.Orders); !slices.EqualFunc(before, after, func(a, b map[string]any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Error("Expire before the order was due changed the orders table")
	}

	c.Advance(time.Millisecond)
	got, released, err = e.store.Expire(context.Background(), order.ID)
	if err != nil || !released || got.Status != inventory.StatusCancelled || got.CancelReason != inventory.CancelTimeout {
		t.Fatalf("at expiry: %+v released=%v err=%v; want CANCELLED (TIMEOUT), released", got, released, err)
	}
	e.checkAvailable(t, "cup", 5)
	read, err := e.store.Order(context.Background(), "u1", order.ID)
	if err != nil || read.Status != inventory.StatusCancelled || read.CancelledAt == nil || !read.CancelledAt.Equal(c.Now()) {
		t.Errorf("stored order %+v (%v), want CANCELLED at %v", read, err, c.Now())
	}
	e.Check(t)
}

func TestExpire_UnknownOrderIsNotFound(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	if _, _, err := e.store.Expire(context.Background(), "0123456789abcdef"); !errors.Is(err, inventory.ErrOrderNotFound) {
		t.Errorf("err = %v, want ErrOrderNotFound", err)
	}
}

// Every trigger at once, many times over, on sharded stock and limited SKUs: each
// order is released exactly once and the books balance.
func TestRelease_ConcurrentExpiresAndCancelsReleaseEachOrderOnce(t *testing.T) {
	c := newClock()
	e := newEnv(t, dynamo.Options{Now: c.Now, PaymentTimeout: time.Minute}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 40, Shards: 4, LimitPerUser: 3}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "saucer", Stock: 40})
	var orders []*inventory.Order
	for i := range 8 {
		orders = append(orders, e.reserve(t, fmt.Sprintf("u%d", i), inventory.Line{SKU: "cup", Qty: 3}, inventory.Line{SKU: "saucer", Qty: 2}))
	}
	c.Advance(time.Minute)
	var released atomic.Int32
	parallel(len(orders)*10, func(i int) {
		o := orders[i%len(orders)]
		var rel bool
		var err error
		if i%3 == 0 {
			_, rel, err = e.store.Cancel(context.Background(), o.UserID, o.ID)
		} else {
			_, rel, err = e.store.Expire(context.Background(), o.ID)
		}
		if err != nil {
			t.Errorf("order %s: %v", o.ID, err)
		}
		if rel {
			released.Add(1)
		}
	})
	if got := released.Load(); got != int32(len(orders)) {
		t.Errorf("%d calls said they released, want exactly %d (one per order)", got, len(orders))
	}
	for _, o := range orders {
		if n := e.Ops(t, o.ID)[string(inventory.OpRelease)]; n != 2 {
			t.Errorf("order %s has %d RELEASE entries, want 2 (one per line)", o.ID, n)
		}
	}
	e.checkAvailable(t, "cup", 40)
	e.Check(t)
}

func TestCancel_AnswersPerOwnerAndStatus(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	order := e.reserve(t, "owner", inventory.Line{SKU: "cup", Qty: 1})
	for _, tc := range []struct {
		name, user, id string
		want           error
	}{
		{"another user", "intruder", order.ID, inventory.ErrOrderNotFound},
		{"unknown id", "owner", "0123456789abcdef0123456789abcdef", inventory.ErrOrderNotFound},
		{"malformed id", "owner", "../../etc", inventory.ErrOrderNotFound},
		{"a purchase counter's key", "owner", "limit#cup#owner", inventory.ErrOrderNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := e.store.Cancel(context.Background(), tc.user, tc.id); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	first, released, err := e.store.Cancel(context.Background(), "owner", order.ID)
	if err != nil || !released || first.CancelReason != inventory.CancelUser {
		t.Fatalf("first cancel: %+v released=%v err=%v", first, released, err)
	}
	again, released, err := e.store.Cancel(context.Background(), "owner", order.ID)
	if err != nil || released || !again.CancelledAt.Equal(*first.CancelledAt) {
		t.Errorf("second cancel: %+v released=%v err=%v; want the same CANCELLED order, nothing released", again, released, err)
	}
	e.checkAvailable(t, "cup", 5)
	e.Check(t)
}

func TestCancel_PaidOrderIsNotCancellable(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	order := e.reserve(t, "owner", inventory.Line{SKU: "cup", Qty: 1})
	e.Set(t, e.Tables.Orders, order.ID, "status", "PAID")
	before := e.Scan(t, e.Tables.SKUs)
	if _, _, err := e.store.Cancel(context.Background(), "owner", order.ID); !errors.Is(err, inventory.ErrNotCancellable) {
		t.Errorf("err = %v, want ErrNotCancellable", err)
	}
	if after := e.Scan(t, e.Tables.SKUs); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Error("cancelling a PAID order changed stock")
	}
}

func TestRelease_GivesThePurchaseLimitBack(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, LimitPerUser: 2})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
	if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); !errors.Is(err, inventory.ErrLimitExceeded) {
		t.Fatalf("third unit: err = %v, want LIMIT_EXCEEDED", err)
	}
	if _, _, err := e.store.Cancel(context.Background(), "u1", order.ID); err != nil {
		t.Fatal(err)
	}
	e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
	e.Check(t)
}

// A purchase counter lowered by hand below what the order counted must not block the
// release of its stock: the stock comes back, the counter is left alone.
func TestRelease_ReleasesStockWhenThePurchaseCounterDrifted(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, LimitPerUser: 5})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 3})
	e.Set(t, e.Tables.Orders, "limit#cup#u1", "bought", 1)
	_, released, err := e.store.Cancel(context.Background(), "u1", order.ID)
	if err != nil || !released {
		t.Fatalf("released=%v err=%v, want released", released, err)
	}
	e.checkAvailable(t, "cup", 10)
	for _, it := range e.Scan(t, e.Tables.Orders) {
		if it["pk"] == "limit#cup#u1" && it["bought"] != 1.0 {
			t.Errorf("counter %v, want left at 1", it["bought"])
		}
	}
}

// A shard whose reserved counter holds less than the order reserved means the books
// are already off: the release refuses, changes nothing, and says so.
func TestRelease_RefusesWhenAShardHoldsLessReservedThanTheOrder(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 3})
	e.Set(t, e.Tables.SKUs, "cup#shard#0", "reserved", 2)
	skus, orders, ledger := e.Scan(t, e.Tables.SKUs), e.Scan(t, e.Tables.Orders), e.Scan(t, e.Tables.StockLog)
	if _, _, err := e.store.Cancel(context.Background(), "u1", order.ID); err == nil {
		t.Fatal("release succeeded over a drifted reserved counter")
	}
	if fmt.Sprint(skus, orders, ledger) != fmt.Sprint(e.Scan(t, e.Tables.SKUs), e.Scan(t, e.Tables.Orders), e.Scan(t, e.Tables.StockLog)) {
		t.Error("a refused release changed the tables")
	}
}

func TestDuePending_ListsOnlyDuePendingOrdersAcrossBuckets(t *testing.T) {
	c := newClock()
	e := newEnv(t, dynamo.Options{Now: c.Now, PaymentTimeout: time.Minute}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 100})
	due := map[string]bool{}
	for i := range 40 {
		due[e.reserve(t, fmt.Sprintf("u%d", i), inventory.Line{SKU: "cup", Qty: 1}).ID] = true
	}
	c.Advance(30 * time.Second)
	later := e.reserve(t, "late", inventory.Line{SKU: "cup", Qty: 1})
	c.Advance(30 * time.Second)
	got := map[string]bool{}
	for id, err := range e.store.DuePending(context.Background(), c.Now()) {
		if err != nil {
			t.Fatal(err)
		}
		got[id] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(due) {
		t.Errorf("listed %d orders, want the %d due ones (not %s)", len(got), len(due), later.ID)
	}
	// Released orders leave the listing.
	for id := range due {
		if _, _, err := e.store.Expire(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(time.Minute)
	for id, err := range e.store.DuePending(context.Background(), c.Now()) {
		if err != nil || id != later.ID {
			t.Errorf("after the releases: listed %s (%v), want only %s", id, err, later.ID)
		}
	}
}

// Leaving PENDING must drop an order from the sparse PendingByExpiry index, which
// DynamoDB does when the index keys are removed. The embedded server ignores REMOVE
// (minidyn v0.8.2 writes back only the attributes an update sets), so this test reads
// the update expressions the store sends instead of the index.
func TestLeavingPending_RemovesTheIndexKeys(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	capture := onRequests("TransactWriteItems", func(body []byte) {
		mu.Lock()
		sent = append(sent, string(body))
		mu.Unlock()
	})
	e := newEnv(t, dynamo.Options{}, capture, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	for _, leave := range []func(o *inventory.Order) error{
		func(o *inventory.Order) error {
			_, _, err := e.store.Cancel(context.Background(), o.UserID, o.ID)
			return err
		},
		func(o *inventory.Order) error {
			_, _, err := e.store.Pay(context.Background(), payment(o, "tx"))
			return err
		},
	} {
		order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 1})
		mu.Lock()
		sent = nil
		mu.Unlock()
		if err := leave(order); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		var in struct {
			TransactItems []struct {
				Update *struct {
					Key                      map[string]map[string]string
					UpdateExpression         string
					ExpressionAttributeNames map[string]string
				}
			}
		}
		if len(sent) != 1 || json.Unmarshal([]byte(sent[0]), &in) != nil || in.TransactItems[0].Update == nil {
			t.Fatalf("sent %d transactions, want 1 starting with the order's update", len(sent))
		}
		mu.Unlock()
		upd := in.TransactItems[0].Update
		removed := map[string]bool{}
		if _, clause, ok := strings.Cut(upd.UpdateExpression, "REMOVE "); ok {
			clause, _, _ = strings.Cut(clause, "\n")
			for _, name := range strings.Split(clause, ",") {
				removed[upd.ExpressionAttributeNames[strings.TrimSpace(name)]] = true
			}
		}
		if upd.Key["pk"]["S"] != order.ID || !removed["pendingBucket"] || !removed["pendingExpiresAt"] {
			t.Errorf("order update %q (names %v) does not remove pendingBucket and pendingExpiresAt", upd.UpdateExpression, upd.ExpressionAttributeNames)
		}
		for _, it := range e.Scan(t, e.Tables.Orders) {
			if it["pk"] == order.ID && (it["pendingBucket"] != nil || it["pendingExpiresAt"] != nil) {
				t.Errorf("order %s left PENDING (%v) and kept its index keys", order.ID, it["status"])
			}
		}
	}
}
