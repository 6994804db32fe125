package dynamo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// requestLog records, in order, each DynamoDB request's operation and body.
type requestLog struct {
	mu   sync.Mutex
	reqs []string // "GetItem {…body…}"
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		l.mu.Lock()
		l.reqs = append(l.reqs, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")+" "+string(body))
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// since returns the requests after the first n.
func (l *requestLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs[n:]...)
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// soldOutMarked reports whether sku's summary item carries soldOut.
func (e *env) soldOutMarked(t testing.TB, sku string) bool {
	t.Helper()
	for _, it := range e.Scan(t, e.Tables.SKUs) {
		if it["pk"] == sku+"#sum" {
			_, ok := it["soldOut"]
			return ok
		}
	}
	return false
}

// Once a SKU is sold out, a buyer is refused from one strongly consistent GetItem of
// the SKU's summary item (1 read unit) and no write. The first buyer whose read of
// every shard found them all empty set soldOut on the summary; the release of a unit
// removes it in its own transaction, and the next buyer gets the unit.
func TestReserve_AfterSellOutRefusesWithReadsAndNoWrite(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			var log requestLog
			e := newEnv(t, dynamo.Options{}, log.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: shards, Shards: shards})
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
			if e.soldOutMarked(t, "cup") {
				t.Fatal("soldOut set before anyone was refused")
			}
			for _, user := range []string{"first-refused", "second-refused"} {
				if _, err := buy(user); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("%s after the sell-out: %v, want STOCK_OUT", user, err)
				}
			}
			if !e.soldOutMarked(t, "cup") {
				t.Fatal("after refusals from empty shards, the summary has no soldOut")
			}
			mark := log.len()
			const refused = 5
			for i := range refused {
				if _, err := buy(fmt.Sprint("late", i)); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("late buyer %d: %v, want STOCK_OUT", i, err)
				}
			}
			reqs := log.since(mark)
			if len(reqs) != refused {
				t.Errorf("%d refused buyers sent %d requests, want one each: %v", refused, len(reqs), reqs)
			}
			for _, r := range reqs {
				if !strings.HasPrefix(r, "GetItem ") || !strings.Contains(r, `"cup#sum"`) || !strings.Contains(r, `"ConsistentRead":true`) {
					t.Errorf("a refused buyer sent %.120s, want a strongly consistent GetItem of the summary", r)
				}
			}
			if _, _, err := e.store.Release(ctx, last, inventory.CancelUser); err != nil {
				t.Fatal(err)
			}
			if e.soldOutMarked(t, "cup") {
				t.Error("a unit released, soldOut still set")
			}
			if _, err := buy("after-release"); err != nil {
				t.Errorf("a unit released, the next buyer: %v, want the unit", err)
			}
			e.checkAvailable(t, "cup", 0)
			e.Check(t)
		})
	}
}

// A keyed request refused after a sell-out reads the summary, then its key's order
// (both strongly consistent GetItems: 2 read units, no write); a copy of a request
// that got the last unit is answered that order, replayed, from the same two reads.
func TestReserve_AfterSellOutAKeyedBuyerIsRefusedOrReplayedWithTwoReads(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			var log requestLog
			e := newEnv(t, dynamo.Options{}, log.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: shards, Shards: shards})
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
			for _, user := range []string{"first-refused", "second-refused"} {
				if _, _, err := buy(user, "key-"+user); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("%s after the sell-out: %v, want STOCK_OUT", user, err)
				}
			}
			mark := log.len()
			const refused = 5
			for i := range refused {
				if _, _, err := buy(fmt.Sprint("late", i), fmt.Sprint("key-late", i)); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("late buyer %d: %v, want STOCK_OUT", i, err)
				}
			}
			reqs := log.since(mark)
			if len(reqs) != 2*refused {
				t.Fatalf("%d refused keyed buyers sent %d requests, want two each: %v", refused, len(reqs), reqs)
			}
			for i := 0; i < len(reqs); i += 2 {
				if !strings.HasPrefix(reqs[i], "GetItem ") || !strings.Contains(reqs[i], `"cup#sum"`) {
					t.Errorf("request %d: %.120s, want the GetItem of the summary", i, reqs[i])
				}
				if !strings.HasPrefix(reqs[i+1], "GetItem ") || !strings.Contains(reqs[i+1], e.Tables.Orders) {
					t.Errorf("request %d: %.120s, want the GetItem of the key's order, after the summary", i+1, reqs[i+1])
				}
			}
			mark = log.len()
			got, replayed, err := buy(fmt.Sprint("early", shards-1), fmt.Sprint("key-early", shards-1))
			if err != nil || got.ID != last.ID || !replayed {
				t.Errorf("a copy of the request that got the last unit: %v replayed %v, %v; want order %s replayed", got, replayed, err, last.ID)
			}
			if reqs := log.since(mark); len(reqs) != 2 {
				t.Errorf("the copy sent %d requests, want the summary's and the order's reads: %v", len(reqs), reqs)
			}
			e.checkAvailable(t, "cup", 0)
		})
	}
}

// A release that lands between a buyer's read of the empty shards and the write
// that would set soldOut refuses that write (the release moved the summary's credits
// on from what the buyer read): the buyer's STOCK_OUT stands on its read, soldOut is
// not set, and the next buyer gets the released unit.
func TestReserve_SellOutEntryRacingAReleaseIsCancelled(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			var armed, fired atomic.Bool
			var between func()
			race := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.UpdateItem" && bytes.Contains(body, []byte(`"cup#sum"`)) &&
						armed.CompareAndSwap(true, false) {
						between()
						fired.Store(true)
					}
					next.ServeHTTP(w, r)
				})
			}
			e := newEnv(t, dynamo.Options{}, race, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: shards, Shards: shards})
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
			between = func() {
				if _, _, err := e.store.Release(ctx, last, inventory.CancelUser); err != nil {
					t.Errorf("release between the read and the entry: %v", err)
				}
			}
			armed.Store(true)
			// The first refused buyer enters the state after a shard's refusal (several
			// shards) or, with one shard, the one after it whose noted counts are short.
			for _, user := range []string{"first-refused", "second-refused"} {
				if fired.Load() {
					break
				}
				if _, err := buy(user); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("%s, whose read came before the release: %v, want STOCK_OUT", user, err)
				}
			}
			if !fired.Load() {
				t.Fatal("no write of the summary after the buyer's read of empty shards")
			}
			if e.soldOutMarked(t, "cup") {
				t.Fatal("soldOut set although a unit came back before it")
			}
			if _, err := buy("next"); err != nil {
				t.Errorf("the buyer after the release: %v, want the released unit", err)
			}
			e.checkAvailable(t, "cup", 0)
			e.Check(t)
		})
	}
}

// Buyers far beyond the stock race cancels of the orders that sold it out, while the
// SKU is marked sold out. Every cancel removes soldOut with its credit, so once the
// race is over: soldOut set ⇒ no unit available; every unit is in a PENDING order or
// available (units the race's buyers took = units it put back − units left); buyers
// after the race are served while a unit is left, exactly as many as are left, and
// refused after; and the books balance.
func TestReserve_SellOutUnderCancelsRefusesNobodyWhileAUnitIsLeft(t *testing.T) {
	const stock, shards, buyers = 12, 4, 60
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: stock, Shards: shards})
	ctx := context.Background()
	buy := func(user string) (*inventory.Order, error) {
		o, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		return o, err
	}
	var early []*inventory.Order
	for i := range stock {
		o, err := buy(fmt.Sprint("early", i))
		if err != nil {
			t.Fatal(err)
		}
		early = append(early, o)
	}
	for _, user := range []string{"first-refused", "second-refused"} {
		if _, err := buy(user); !errors.Is(err, inventory.ErrStockOut) {
			t.Fatalf("%s: %v, want STOCK_OUT", user, err)
		}
	}
	if !e.soldOutMarked(t, "cup") {
		t.Fatal("soldOut not set before the race")
	}
	const cancels = stock / 2
	var served, refused, busy, cancelled atomic.Int64
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := buy(fmt.Sprint("racer", i))
			switch {
			case err == nil:
				served.Add(1)
			case errors.Is(err, inventory.ErrStockOut):
				refused.Add(1)
			case errors.Is(err, inventory.ErrBusy):
				busy.Add(1)
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		}()
	}
	for _, o := range early[:cancels] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := e.store.Cancel(ctx, o.UserID, o.ID); err != nil {
				t.Errorf("cancel %s: %v", o.ID, err)
				return
			}
			cancelled.Add(1)
		}()
	}
	wg.Wait()
	if got := served.Load() + refused.Load() + busy.Load(); got != buyers {
		t.Fatalf("%d buyers answered of %d", got, buyers)
	}
	b := e.books(t, "cup")
	if int64(b.available) != cancelled.Load()-served.Load() {
		t.Errorf("available %d, want %d cancelled − %d served in the race", b.available, cancelled.Load(), served.Load())
	}
	if b.reservedInOrders+b.available != stock {
		t.Errorf("%d units in PENDING orders + %d available, want %d", b.reservedInOrders, b.available, stock)
	}
	if e.soldOutMarked(t, "cup") && b.available != 0 {
		t.Errorf("soldOut set with %d units available", b.available)
	}
	left := b.available
	for i := range left {
		if _, err := buy(fmt.Sprint("after", i)); err != nil {
			t.Errorf("buyer %d after the race, %d units left: %v, want a unit", i, left, err)
		}
	}
	if _, err := buy("last"); !errors.Is(err, inventory.ErrStockOut) {
		t.Errorf("the buyer after every unit was taken: %v, want STOCK_OUT", err)
	}
	t.Logf("race: %d served, %d refused, %d busy, %d cancelled; %d left after it", served.Load(), refused.Load(), busy.Load(), cancelled.Load(), left)
	e.checkAvailable(t, "cup", 0)
	e.Check(t)
}
