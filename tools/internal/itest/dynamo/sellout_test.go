package dynamo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// soldOutState reads what the skus table says of sku's sold-out state: whether its
// record says soldOut, and how many of its shards carry the mark.
func (e *env) soldOutState(t testing.TB, sku string) (soldOut bool, marked int) {
	t.Helper()
	for _, it := range e.Scan(t, e.Tables.SKUs) {
		if it["skuId"] != sku {
			continue
		}
		switch it["kind"] {
		case "SKU":
			soldOut = it["soldOut"] != nil
		case "SHARD":
			if it["soldOut"] == true {
				marked++
			}
		}
	}
	return soldOut, marked
}

// Once a SKU is sold out, a buyer is refused from one read and no write. The first
// refused buyer reads the SKU record, then every shard, all strongly consistent; it
// finds them empty and enters the sold-out state (the record says soldOut, every
// shard is marked). Every later buyer is refused from one strongly consistent
// GetItem of the record: no transaction, no read of a shard. The state refuses
// nobody once a unit comes back: the release that puts it back first takes the SKU
// out of the state, and the next buyer gets the unit.
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
			if sold, marked := e.soldOutState(t, "cup"); sold || marked != 0 {
				t.Fatalf("before any refusal: soldOut %v, %d shards marked; want neither", sold, marked)
			}
			if _, err := buy("first-refused"); !errors.Is(err, inventory.ErrStockOut) {
				t.Fatalf("first buyer after the sell-out: %v, want STOCK_OUT", err)
			}
			if sold, marked := e.soldOutState(t, "cup"); !sold || marked != shards {
				t.Fatalf("after the first refusal: soldOut %v, %d shards marked; want sold out, all %d marked", sold, marked, shards)
			}
			before := e.counts()
			const refused = 5
			for i := range refused {
				if _, err := buy(fmt.Sprint("late", i)); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("late buyer %d: %v, want STOCK_OUT", i, err)
				}
			}
			e.checkSent(t, before, map[string]int{"GetItem": refused})
			if _, _, err := e.store.Release(ctx, last, inventory.CancelUser); err != nil {
				t.Fatal(err)
			}
			if sold, marked := e.soldOutState(t, "cup"); sold || marked != shards-1 {
				t.Errorf("after a release: soldOut %v, %d shards marked; want not sold out, the released shard unmarked", sold, marked)
			}
			if _, err := buy("after-release"); err != nil {
				t.Errorf("a unit released, the next buyer: %v, want the unit", err)
			}
			e.checkAvailable(t, "cup", 0)
		})
	}
}

// counts is how many requests of each operation were sent so far.
func (e *env) counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.ops)
}

// checkSent fails t unless the requests sent since before are want, operation by
// operation (any other operation: none).
func (e *env) checkSent(t testing.TB, before map[string]int, want map[string]int) {
	t.Helper()
	for op, n := range e.counts() {
		if got := n - before[op]; got != want[op] {
			t.Errorf("%s sent %d times, want %d", op, got, want[op])
		}
	}
	for op, n := range want {
		if _, ok := e.counts()[op]; !ok && n > 0 {
			t.Errorf("%s never sent, want %d", op, n)
		}
	}
}

// A keyed request refused after a sell-out reads the SKU record, then its key's
// order (a copy may have opened it): two strongly consistent GetItems and no write.
// A copy of the request that got the last unit is answered that order, replayed,
// from the same two reads.
func TestReserve_AfterSellOutAKeyedBuyerIsRefusedOrReplayedWithTwoReads(t *testing.T) {
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
			before := e.counts()
			const refused = 5
			for i := range refused {
				if _, _, err := buy(fmt.Sprint("late", i), fmt.Sprint("key-late", i)); !errors.Is(err, inventory.ErrStockOut) {
					t.Fatalf("late buyer %d: %v, want STOCK_OUT", i, err)
				}
			}
			e.checkSent(t, before, map[string]int{"GetItem": 2 * refused})
			before = e.counts()
			lastKey := fmt.Sprint("key-early", shards-1)
			got, replayed, err := buy(fmt.Sprint("early", shards-1), lastKey)
			if err != nil || got.ID != last.ID || !replayed {
				t.Errorf("a copy of the request that got the last unit: %v replayed %v, %v; want order %s replayed", got, replayed, err, last.ID)
			}
			e.checkSent(t, before, map[string]int{"GetItem": 2})
			e.checkAvailable(t, "cup", 0)
		})
	}
}

// An environment that never read the SKU learns the sell-out from the record it
// reads first (eventually consistent, with no read more), and refuses from the
// record's strongly consistent read: no transaction. Units put back by an
// adjustment, and a reshard, each take the SKU out of the state, and the next buyer
// gets a unit.
func TestReserve_ANewEnvironmentRefusesASoldOutSKUWithoutATransaction(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 2, Shards: 2})
	ctx := context.Background()
	buy := func(s store, user string) error {
		_, _, err := s.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		return err
	}
	for i := range 3 {
		if err := buy(e.store, fmt.Sprint("early", i)); (i < 2) != (err == nil) {
			t.Fatalf("buyer %d: %v", i, err)
		}
	}
	before := e.counts()
	fresh := store{dynamo.New(e.DB, e.Tables, dynamo.Options{})}
	if err := buy(fresh, "new-environment"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("a new environment's buyer: %v, want STOCK_OUT", err)
	}
	e.checkSent(t, before, map[string]int{"BatchGetItem": 1, "GetItem": 1})

	if _, err := e.store.Adjust(ctx, "cup", inventory.Adjustment{ID: "found-1", Delta: 1, Reason: "found one", By: "arn:aws:iam::000000000000:user/op"}); err != nil {
		t.Fatal(err)
	}
	if sold, _ := e.soldOutState(t, "cup"); sold {
		t.Error("an adjustment put a unit back and the record still says soldOut")
	}
	if err := buy(fresh, "after-adjust"); err != nil {
		t.Errorf("a unit added, the next buyer: %v, want the unit", err)
	}
	if err := buy(fresh, "sold-out-again"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("%v, want STOCK_OUT", err)
	}
	if sold, marked := e.soldOutState(t, "cup"); !sold || marked != 2 {
		t.Fatalf("sold out again: soldOut %v, %d of 2 shards marked", sold, marked)
	}
	if res, err := e.store.Reshard(ctx, "cup", 3, "arn:aws:iam::000000000000:user/op"); err != nil || !res.Complete {
		t.Fatalf("reshard: %+v, %v", res, err)
	}
	if sold, _ := e.soldOutState(t, "cup"); sold {
		t.Error("a reshard grew a shard without a mark and the record still says soldOut")
	}
	e.checkAvailable(t, "cup", 0)
}

// The herd: buyers whose environment planned on a record from before the sell-out.
// Environment A caches the record while units remain; environment B sells out and
// enters the sold-out state. A's next buyer sends its transaction (A has seen no shard
// empty), is refused, and learns the sell-out from one eventually consistent read of
// the record and one strongly consistent read, not a read of every shard; A's later
// buyers read the record only. A release into a marked shard takes the SKU out of the
// state and A's next buyer gets the unit. Once A has seen a shard empty, a buyer
// whose cached record and shard counts say a unit remains reads the record before its
// transaction: after B enters the state again, it is refused with two reads and no
// write.
func TestReserve_TheHerdLearnsTheSellOutFromTheRecord(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 4, Shards: 4})
	ctx := context.Background()
	b := store{dynamo.New(e.DB, e.Tables, dynamo.Options{})}
	buy := func(s store, user string) (*inventory.Order, error) {
		o, _, err := s.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		return o, err
	}
	early, err := buy(e.store, "a-early")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := buy(b, fmt.Sprint("b", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := buy(b, "b-refused"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("B's buyer after the sell-out: %v, want STOCK_OUT", err)
	}
	if sold, marked := e.soldOutState(t, "cup"); !sold || marked != 4 {
		t.Fatalf("after B's refusal: soldOut %v, %d of 4 shards marked", sold, marked)
	}
	before := e.counts()
	if _, err := buy(e.store, "a-in-flight"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("A's buyer on a record from before the sell-out: %v, want STOCK_OUT", err)
	}
	e.checkSent(t, before, map[string]int{"TransactWriteItems": 1, "BatchGetItem": 1, "GetItem": 1})
	before = e.counts()
	for i := range 3 {
		if _, err := buy(e.store, fmt.Sprint("a-late", i)); !errors.Is(err, inventory.ErrStockOut) {
			t.Fatalf("A's late buyer %d: %v, want STOCK_OUT", i, err)
		}
	}
	e.checkSent(t, before, map[string]int{"GetItem": 3})

	if _, _, err := e.store.Release(ctx, early, inventory.CancelUser); err != nil {
		t.Fatal(err)
	}
	if _, err := buy(e.store, "a-after-release"); err != nil {
		t.Fatalf("a unit released into a marked shard, A's next buyer: %v, want the unit", err)
	}
	if _, err := buy(b, "b-refused-again"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("B's buyer after the unit went again: %v, want STOCK_OUT", err)
	}
	if sold, marked := e.soldOutState(t, "cup"); !sold || marked != 4 {
		t.Fatalf("sold out again: soldOut %v, %d of 4 shards marked", sold, marked)
	}
	before = e.counts()
	if _, err := buy(e.store, "a-stale-counts"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("A's buyer on counts from before the second sell-out: %v, want STOCK_OUT", err)
	}
	e.checkSent(t, before, map[string]int{"BatchGetItem": 1, "GetItem": 1})
	e.checkAvailable(t, "cup", 0)
}

// Releases into marked shards, each followed by a buyer in an environment that
// learned the sell-out: every buyer arrives after its own release, and the buyers
// before it after theirs, so a unit is there throughout each buyer's request and each
// is served (a STOCK_OUT would be false): the environments' records saying soldOut,
// their counts of 0 and the marks send them to the record's strong read, never to a
// refusal.
func TestReserve_ABuyerAfterAReleaseIntoAMarkedShardIsServed(t *testing.T) {
	const n = 4
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: n, Shards: n})
	ctx := context.Background()
	buy := func(s store, user string) (*inventory.Order, error) {
		o, _, err := s.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		return o, err
	}
	orders := buyAll(t, e.store, n)
	envs := make([]store, n)
	for i := range envs {
		envs[i] = store{dynamo.New(e.DB, e.Tables, dynamo.Options{})}
		if _, err := buy(envs[i], fmt.Sprint("refused", i)); !errors.Is(err, inventory.ErrStockOut) {
			t.Fatalf("environment %d's buyer after the sell-out: %v, want STOCK_OUT", i, err)
		}
	}
	if sold, marked := e.soldOutState(t, "cup"); !sold || marked != n {
		t.Fatalf("after the sell-out: soldOut %v, %d of %d shards marked", sold, marked, n)
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			if _, _, err := e.store.Release(ctx, orders[i], inventory.CancelUser); err != nil {
				errs <- fmt.Errorf("release %d: %w", i, err)
				return
			}
			_, err := buy(envs[i], fmt.Sprint("after-release", i))
			errs <- err
		}()
	}
	served := 0
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("a buyer after a release: %v, want a unit", err)
			continue
		}
		served++
	}
	if served != n {
		t.Errorf("%d of %d buyers served after %d releases", served, n, n)
	}
	e.checkAvailable(t, "cup", 0)
}

// conflictMarks answers the next `left` UpdateItem requests that mark a shard sold
// out as DynamoDB answers a plain write to an item a transaction holds
// (TransactionConflictException, nothing applied), as the refused transactions of the
// buyers in flight do to a SKU's empty shards while it sells out.
func conflictMarks(left *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			mark := strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") &&
				bytes.Contains(body, []byte("#shard#")) && bytes.Contains(body, []byte(`"soldOut"`))
			if mark && left.Add(-1) >= 0 {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionConflictException","message":"Transaction is ongoing for the item"}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// The first buyer refused after a sell-out enters the sold-out state though a
// transaction holds a shard as it marks it: the mark is sent again. When the marks
// stay refused, the entry fails and drops its claim, so the next buyer refused enters
// (instead of every refusal reading every shard until the claim expired, 2 s later).
func TestReserve_SellOutIsEnteredThroughTransactionConflicts(t *testing.T) {
	for _, c := range []struct {
		name      string
		conflicts int64
		// soldOut is whether the first refusal enters the state.
		soldOut bool
	}{
		{"a conflict on each of two marks", 2, true},
		{"conflicts past every round", 4 * 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			const shards = 4
			var left atomic.Int64
			e := newEnv(t, dynamo.Options{}, conflictMarks(&left), inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: shards, Shards: shards})
			ctx := context.Background()
			buy := func(user string) error {
				_, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
				return err
			}
			for i := range shards {
				if err := buy(fmt.Sprint("early", i)); err != nil {
					t.Fatal(err)
				}
			}
			left.Store(c.conflicts)
			if err := buy("first-refused"); !errors.Is(err, inventory.ErrStockOut) {
				t.Fatalf("first buyer after the sell-out: %v, want STOCK_OUT", err)
			}
			if sold, marked := e.soldOutState(t, "cup"); sold != c.soldOut || c.soldOut && marked != shards {
				t.Fatalf("after the first refusal: soldOut %v, %d shards marked; want sold out %v", sold, marked, c.soldOut)
			}
			if c.soldOut {
				return
			}
			left.Store(0)
			if err := buy("second-refused"); !errors.Is(err, inventory.ErrStockOut) {
				t.Fatalf("second buyer: %v, want STOCK_OUT", err)
			}
			if sold, marked := e.soldOutState(t, "cup"); !sold || marked != shards {
				t.Errorf("after the second refusal: soldOut %v, %d shards marked; want sold out, all %d marked (the failed entry's claim dropped)", sold, marked, shards)
			}
		})
	}
}

// After an unsell a refusal reads the SKU record strongly and only the shards it does
// not list as marked. A SKU of 4 shards sells out and enters the state (its record
// lists all 4 marked); a release into one shard takes it out (3 listed) and a buyer
// takes that unit. Environment B learned the sell-out before: its next buyer reads the
// record (not sold out, 3 marked), then the one unmarked shard, finds it empty and
// enters the state again, marking that shard alone: 1 shard read, not 4, and no
// transaction. On a record that lists no marks it would read all 4.
func TestReserve_AfterAnUnsellARefusalReadsOnlyTheUnmarkedShards(t *testing.T) {
	const n = 4
	var mu sync.Mutex
	shardKeys := 0
	capture := onRequests("BatchGetItem", func(body []byte) {
		mu.Lock()
		shardKeys += strings.Count(string(body), "#shard#")
		mu.Unlock()
	})
	keysRead := func() int {
		mu.Lock()
		defer mu.Unlock()
		return shardKeys
	}
	e := newEnv(t, dynamo.Options{}, capture, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: n, Shards: n})
	ctx := context.Background()
	b := store{dynamo.New(e.DB, e.Tables, dynamo.Options{})}
	buy := func(s store, user string) (*inventory.Order, error) {
		o, _, err := s.Reserve(ctx, inventory.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		return o, err
	}
	orders := buyAll(t, e.store, n)
	if _, err := buy(b, "b-refused"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("B's buyer after the sell-out: %v, want STOCK_OUT", err)
	}
	if got := e.markedListed(t, "cup"); got != n {
		t.Fatalf("after the sell-out the record lists %d shards marked, want %d", got, n)
	}
	if _, _, err := e.store.Release(ctx, orders[0], inventory.CancelUser); err != nil {
		t.Fatal(err)
	}
	if sold, marked := e.soldOutState(t, "cup"); sold || marked != n-1 || e.markedListed(t, "cup") != n-1 {
		t.Fatalf("after a release: soldOut %v, %d shards marked, %d listed; want not sold out, %d and %d", sold, marked, e.markedListed(t, "cup"), n-1, n-1)
	}
	if _, err := buy(e.store, "after-release"); err != nil {
		t.Fatalf("the released unit: %v, want it", err)
	}
	before, keys := e.counts(), keysRead()
	if _, err := buy(b, "b-refused-again"); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("B's buyer after the unit went again: %v, want STOCK_OUT", err)
	}
	if got := keysRead() - keys; got != 1 {
		t.Errorf("the refusal read %d shards, want 1 (the one the record does not list as marked)", got)
	}
	// The record's strong read, the shard's, and the entry: its claim, the shard's
	// mark and the state.
	e.checkSent(t, before, map[string]int{"GetItem": 1, "BatchGetItem": 1, "UpdateItem": 3})
	if sold, marked := e.soldOutState(t, "cup"); !sold || marked != n || e.markedListed(t, "cup") != n {
		t.Errorf("sold out again: soldOut %v, %d shards marked, %d listed; want all %d", sold, marked, e.markedListed(t, "cup"), n)
	}
	e.checkAvailable(t, "cup", 0)
}

// markedListed is how many shards sku's record lists as marked (its mk<k>
// attributes).
func (e *env) markedListed(t testing.TB, sku string) int {
	t.Helper()
	n := 0
	for _, it := range e.Scan(t, e.Tables.SKUs) {
		if it["skuId"] == sku && it["kind"] == "SKU" {
			for name, v := range it {
				if strings.HasPrefix(name, "mk") && v == true {
					n++
				}
			}
		}
	}
	return n
}

// buyAll buys the n units of the SKU cup through s, one buyer ("early<i>") each, and
// returns the orders.
func buyAll(t testing.TB, s store, n int) []*inventory.Order {
	t.Helper()
	orders := make([]*inventory.Order, n)
	for i := range orders {
		o, _, err := s.Reserve(context.Background(), inventory.ReserveRequest{UserID: fmt.Sprint("early", i), Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
		if err != nil {
			t.Fatal(err)
		}
		orders[i] = o
	}
	return orders
}
