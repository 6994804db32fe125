package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// tornBatchGet returns a DynamoDB server middleware that, once armed, serves the next
// BatchGetItem naming both shard keys one key at a time, in order, and runs between
// the two reads: BatchGetItem reads its items independently (DynamoDB API Reference,
// BatchGetItem), so a reshard's units can be read on neither shard.
func tornBatchGet(armed *atomic.Bool, firstKey, secondKey *string, between func()) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			first, second := *firstKey, *secondKey
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.BatchGetItem" || !bytes.Contains(body, []byte(first)) ||
				!bytes.Contains(body, []byte(second)) || !armed.CompareAndSwap(true, false) {
				next.ServeHTTP(w, r)
				return
			}
			var in struct {
				RequestItems map[string]json.RawMessage
			}
			json.Unmarshal(body, &in)
			var table string
			for table = range in.RequestItems {
			}
			var items []json.RawMessage
			for i, key := range []string{first, second} {
				if i == 1 {
					between()
				}
				sub, _ := json.Marshal(map[string]any{"RequestItems": map[string]any{table: map[string]any{
					"ConsistentRead": true, "Keys": []any{map[string]any{"pk": map[string]string{"S": key}}}}}})
				req := r.Clone(r.Context())
				req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(sub)), int64(len(sub))
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, req)
				var out struct{ Responses map[string][]json.RawMessage }
				json.Unmarshal(rec.Body.Bytes(), &out)
				items = append(items, out.Responses[table]...)
			}
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			json.NewEncoder(w).Encode(map[string]any{"Responses": map[string]any{table: items}, "UnprocessedKeys": map[string]any{}})
		})
	}
}

// A buyer whose shard read is torn by a reshard would count moved units nowhere and
// answer a false STOCK_OUT: here shard 0 (3 units) is read, then a reshard to 1 moves
// shard 1's 2 units to shard 0 and drops shard 1, then shard 1 is read (gone): 3 of 5
// units seen, 4 asked. STOCK_OUT is only answered from reads the SKU's move counter
// brackets unchanged, so the buyer reads again and is served.
func TestReserve_AReshardBetweenShardReadsIsNoStockOut(t *testing.T) {
	var armed atomic.Bool
	var store *dynamo.Store
	ctx := context.Background()
	first, second := "torn#shard#0", "torn#shard#1"
	e := newEnv(t, dynamo.Options{}, tornBatchGet(&armed, &first, &second, func() {
		if res, err := store.Reshard(ctx, "torn", 1, "arn:aws:iam::000000000000:user/test"); err != nil || !res.Complete {
			t.Errorf("reshard between the reads: %+v %v", res, err)
		}
	}))
	store = e.store.Store
	e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "torn", Stock: 5, Shards: 2}) // 3 + 2 units
	armed.Store(true)
	cart, _ := inventory.NewCart([]inventory.Line{{SKU: "torn", Qty: 4}}) // no one shard holds 4
	order, _, err := e.store.Reserve(ctx, dynamo.ReserveRequest{UserID: "alice", Cart: cart})
	if armed.Load() {
		t.Fatal("the buyer never read both shards at once; the test did not tear anything")
	}
	if err != nil {
		t.Fatalf("reserve 4 of 5 units across a reshard: %v", err)
	}
	if got := slices.Collect(func(yield func(int) bool) {
		for n := range order.Items[0].Shards {
			yield(n)
		}
	}); len(got) != 1 || got[0] != 0 {
		t.Errorf("reserved on shards %v, want shard 0 (the only one left)", got)
	}
	e.Check(t)
}

// A reshard that keeps the shard count moves units too. Here one shard is empty and
// the other holds 10, while the buyer's last counts (from a refusal, before a release)
// say 9; the buyer reads the empty shard, a rebalance moves 5 units onto it, then the
// buyer reads the other (5 left): 5 of 10 units seen, 10 asked. Every shard read shows
// the layout the buyer planned on, so only the MOVE's number stamped on the shard read
// second tells that units were in transit; the buyer reads again and is served, where
// trusting the counts would answer a false STOCK_OUT.
func TestReserve_ARebalanceBetweenShardReadsIsNoStockOut(t *testing.T) {
	var armed atomic.Bool
	var store *dynamo.Store
	ctx := context.Background()
	var first, second string
	e := newEnv(t, dynamo.Options{}, tornBatchGet(&armed, &first, &second, func() {
		if res, err := store.Reshard(ctx, "even", 2, "arn:aws:iam::000000000000:user/test"); err != nil || res.Moved != 5 {
			t.Errorf("rebalance between the reads: %+v %v", res, err)
		}
	}))
	store = e.store.Store
	e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "even", Stock: 20, Shards: 2}) // 10 + 10 units
	buy := func(user string, qty int) (*inventory.Order, error) {
		o, _, err := e.store.Reserve(ctx, dynamo.ReserveRequest{UserID: user, Cart: cart(t, inventory.Line{SKU: "even", Qty: qty})})
		return o, err
	}
	early, err := buy("early", 10)
	if err != nil || len(early.Items[0].Shards) != 1 {
		t.Fatalf("the first buyer should empty one shard: %+v %v", early, err)
	}
	mid, err := buy("mid", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buy("refused", 10); !errors.Is(err, inventory.ErrStockOut) {
		t.Fatalf("10 of 9 units: %v, want STOCK_OUT", err)
	}
	if _, _, err := e.store.Release(ctx, mid, inventory.CancelUser); err != nil {
		t.Fatal(err)
	}
	for n := range early.Items[0].Shards {
		first, second = fmt.Sprintf("even#shard#%d", n), fmt.Sprintf("even#shard#%d", 1-n)
	}
	armed.Store(true)
	order, err := buy("alice", 10)
	if armed.Load() {
		t.Fatal("the buyer never read both shards at once; the test did not tear anything")
	}
	if err != nil {
		t.Fatalf("reserve the 10 units left across a rebalance: %v", err)
	}
	if n := order.Items[0].Qty; n != 10 {
		t.Errorf("reserved %d units, want 10", n)
	}
	e.checkAvailable(t, "even", 0)
	e.Check(t)
}
