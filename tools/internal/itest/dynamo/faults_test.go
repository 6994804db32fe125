package dynamo_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// faults makes the next `left` TransactWriteItems requests meet fault instead of
// (or around) the embedded server; arm it after seeding.
type faults struct {
	left  atomic.Int64
	fault func(next http.Handler, w http.ResponseWriter, r *http.Request)
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") && f.left.Add(-1) >= 0 {
			f.fault(next, w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// dropAnswers lets the server apply the next requests of operation op (a suffix of
// X-Amz-Target, e.g. ".UpdateItem") while left counts down from above 0, losing each
// answer (applyThenDrop); left goes on down, counting the op's later requests below 0.
func dropAnswers(op string, left *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.Header.Get("X-Amz-Target"), op) && left.Add(-1) >= 0 {
				applyThenDrop(next, w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// applyThenDrop lets the server apply the request, then loses its answer: the client
// sees a 500 as if the connection broke after the write.
func applyThenDrop(next http.Handler, w http.ResponseWriter, r *http.Request) {
	next.ServeHTTP(httptest.NewRecorder(), r)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusInternalServerError)
	io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"response lost"}`)
}

// conflict answers like DynamoDB when another transaction holds an item: nothing applied.
func conflict(_ http.Handler, w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]","CancellationReasons":[{"Code":"None"},{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"}]}`)
}

func TestReserve_LostResponseAfterAppliedWriteConvergesOnOneOrder(t *testing.T) {
	for _, key := range []string{"", "retry-key"} {
		t.Run("idempotency key "+key, func(t *testing.T) {
			f := &faults{fault: applyThenDrop}
			e := newEnv(t, dynamo.Options{}, f.wrap)
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
			f.left.Store(1)
			order, replayed, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", IdempotencyKey: key, Cart: cart(t, inventory.Line{SKU: "cup", Qty: 2})})
			if err != nil || replayed {
				t.Fatalf("replayed=%v err=%v; want the order, created", replayed, err)
			}
			if order.Status != inventory.StatusPending || order.Amount != 2*39900 {
				t.Errorf("order %+v", order)
			}
			b := e.books(t, "cup")
			if b.available != 3 || b.reserveEntries != 1 || b.pendingOrders != 1 {
				t.Errorf("available %d, RESERVE entries %d, orders %d; want 3, 1, 1", b.available, b.reserveEntries, b.pendingOrders)
			}
			b.checkBalanced(t, 5)
		})
	}
}

func TestReserve_RetriesTransactionConflictsThenSucceeds(t *testing.T) {
	f := &faults{fault: conflict}
	e := newEnv(t, dynamo.Options{}, f.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	f.left.Store(dynamo.MaxAttempts - 1)
	if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); err != nil {
		t.Fatalf("after %d conflicts: %v, want the order", dynamo.MaxAttempts-1, err)
	}
	b := e.books(t, "cup")
	if b.available != 4 || b.reserveEntries != 1 {
		t.Errorf("available %d, RESERVE entries %d; want 4 and 1", b.available, b.reserveEntries)
	}
}

// throttled answers like DynamoDB over a partition's throughput: nothing applied.
func throttled(_ http.Handler, w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Throughput exceeds the current capacity for one or more partitions"}`)
}

// A store that stays throttled is BUSY (503 with Retry-After), never an internal error.
func TestReserve_AnswersBusyAndReservesNothingWhenThrottlingPersists(t *testing.T) {
	f := &faults{fault: throttled}
	e := newEnv(t, dynamo.Options{}, f.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	f.left.Store(1 << 30)
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	if !errors.Is(err, inventory.ErrBusy) {
		t.Fatalf("persistent throttling: %v, want BUSY", err)
	}
	if b := e.books(t, "cup"); b.available != 5 || b.reserveEntries != 0 || b.pendingOrders != 0 {
		t.Errorf("BUSY left traces: %+v", b)
	}
}

// A keyed request answered BUSY reads its key's order once, to learn whether an
// earlier attempt of its own transaction applied (readBack); it is not read again for
// a copy's order: BUSY asks for the request again, and the try that is not busy finds
// it. Each read is a strongly consistent GetItem, paid by every busy answer.
func TestReserve_AKeyedRequestAnsweredBusyReadsItsOrderOnce(t *testing.T) {
	f := &faults{fault: throttled}
	e := newEnv(t, dynamo.Options{}, f.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	f.left.Store(1 << 30)
	gets := e.sent("GetItem")
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", IdempotencyKey: "k1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	if !errors.Is(err, inventory.ErrBusy) {
		t.Fatalf("persistent throttling: %v, want BUSY", err)
	}
	if n := e.sent("GetItem") - gets; n != 1 {
		t.Errorf("a busy keyed request sent %d GetItem, want 1 (its own write's read-back)", n)
	}
}

func TestReserve_AnswersBusyAndReservesNothingWhenConflictsPersist(t *testing.T) {
	f := &faults{fault: conflict}
	e := newEnv(t, dynamo.Options{}, f.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	f.left.Store(1 << 30)
	sent := e.sent("TransactWriteItems")
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	if !errors.Is(err, inventory.ErrBusy) {
		t.Fatalf("persistent conflicts: %v, want BUSY", err)
	}
	if n := e.sent("TransactWriteItems") - sent; n != dynamo.MaxAttempts {
		t.Errorf("sent %d transaction attempts, want the bound %d", n, dynamo.MaxAttempts)
	}
	b := e.books(t, "cup")
	if b.available != 5 || b.reserveEntries != 0 || b.pendingOrders != 0 {
		t.Errorf("BUSY left traces: %+v", b)
	}
}

// down answers every request, of any operation, with DynamoDB's InternalServerError
// while it is set: nothing applied.
type down struct{ on atomic.Bool }

func (d *down) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.on.Load() {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error"}`)
	})
}

// A store answering every request 500 leaves the order write's outcome unknown (a 5xx
// may follow an applied write): the answer is not BUSY, which promises nothing changed,
// though here nothing was.
func TestReserve_StoreFailureAnswersOutcomeUnknownAndReservesNothing(t *testing.T) {
	d := &down{}
	e := newEnv(t, dynamo.Options{}, d.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "warm", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); err != nil {
		t.Fatal(err)
	}
	d.on.Store(true)
	_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	d.on.Store(false)
	if err == nil || errors.Is(err, inventory.ErrBusy) {
		t.Fatalf("store down: %v, want an outcome-unknown error, not BUSY", err)
	}
	b := e.books(t, "cup")
	if b.available != 4 || b.reserveEntries != 1 {
		t.Errorf("available %d, RESERVE entries %d; want 4 and 1 (the failed order reserved nothing)", b.available, b.reserveEntries)
	}
	b.checkBalanced(t, 5)
}

func TestReserve_ChargesTheCurrentPriceWhenTheCachedOneIsStale(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5, Price: 100, Shards: 2})
	ctx := context.Background()
	if _, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "a", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); err != nil {
		t.Fatal(err) // caches the price 100
	}
	for _, pk := range []string{"cup", "cup#shard#0", "cup#shard#1"} { // an operator's price change
		e.Set(t, e.Tables.SKUs, pk, "price", 150)
	}
	order, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "b", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 2})})
	if err != nil {
		t.Fatal(err)
	}
	if order.Items[0].UnitPrice != 150 || order.Amount != 300 {
		t.Errorf("unit price %d, amount %d; want 150 and 300", order.Items[0].UnitPrice, order.Amount)
	}
	e.books(t, "cup").checkBalanced(t, 5)
}

func TestReserve_ReadsBackAnOrderWhoseEveryResponseWasLost(t *testing.T) {
	f := &faults{fault: applyThenDrop}
	e := newEnv(t, dynamo.Options{}, f.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	f.left.Store(dynamo.MaxAttempts) // the SDK gives up: the outcome is unknown to it
	order, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	if err != nil {
		t.Fatalf("%v, want the order that was written", err)
	}
	b := e.books(t, "cup")
	if b.available != 4 || b.reserveEntries != 1 || b.pendingOrders != 1 || order.Items[0].Qty != 1 {
		t.Errorf("available %d, RESERVE entries %d, orders %d; want 4, 1, 1", b.available, b.reserveEntries, b.pendingOrders)
	}
}

// A copy of a keyed request whose own transaction stays throttled reads the order
// back: it is the key's order, opened by the first request, so the copy is answered
// as a replay, not as the order's creation.
func TestReserve_ACopyReadingTheKeysOrderBackIsAReplay(t *testing.T) {
	f := &faults{fault: throttled}
	e := newEnv(t, dynamo.Options{}, f.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	req := inventory.ReserveRequest{UserID: "u", IdempotencyKey: "tap-1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 2})}
	first, replayed, err := e.store.Reserve(context.Background(), req)
	if err != nil || replayed {
		t.Fatalf("first: replayed=%v err=%v", replayed, err)
	}
	f.left.Store(1 << 30)
	again, replayed, err := e.store.Reserve(context.Background(), req)
	if err != nil || !replayed || again.ID != first.ID {
		t.Errorf("copy under throttling: %v replayed=%v err=%v; want %s replayed", again, replayed, err, first.ID)
	}
	if b := e.books(t, "cup"); b.available != 3 || b.reserveEntries != 1 {
		t.Errorf("available %d, RESERVE entries %d; want 3 and 1", b.available, b.reserveEntries)
	}
}
