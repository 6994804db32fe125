package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// replica stands in for the copy of the skus table an eventually consistent read may
// be answered from: such a read "might not reflect the results of a recently completed
// write operation" (DynamoDB Developer Guide, "DynamoDB read consistency"). While it
// follows, eventually consistent BatchGetItem requests pass through and it copies the
// items they answer; once frozen it answers them from those copies (a key it never
// copied is not there), as a replica that has not yet seen the writes since. Strongly
// consistent requests always pass through. It counts both kinds.
type replica struct {
	mu               sync.Mutex
	frozen           bool
	items            map[string]json.RawMessage // pk → item as last copied
	eventual, strong int                        // BatchGetItem requests served
}

type batchGetBody struct {
	RequestItems map[string]struct {
		Keys           []map[string]struct{ S string }
		ConsistentRead bool
	}
}

func (p *replica) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

func (p *replica) counts() (eventual, strong int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eventual, p.strong
}

func (p *replica) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.BatchGetItem" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in batchGetBody
		_ = json.Unmarshal(body, &in)
		var table string
		consistent := true
		for name, req := range in.RequestItems {
			table, consistent = name, req.ConsistentRead
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if consistent {
			p.strong++
			next.ServeHTTP(w, r)
			return
		}
		p.eventual++
		if p.frozen {
			var items []json.RawMessage
			for _, k := range in.RequestItems[table].Keys {
				if item, ok := p.items[k["pk"].S]; ok {
					items = append(items, item)
				}
			}
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			_ = json.NewEncoder(w).Encode(map[string]any{"Responses": map[string]any{table: items}, "UnprocessedKeys": map[string]any{}})
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var out struct{ Responses map[string][]json.RawMessage }
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		for _, item := range out.Responses[table] {
			var key struct {
				PK struct{ S string } `json:"pk"`
			}
			_ = json.Unmarshal(item, &key)
			p.items[key.PK.S] = item
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// newReplicaEnv is an env whose DynamoDB server sits behind a replica.
func newReplicaEnv(t *testing.T) (*env, *replica) {
	p := &replica{items: map[string]json.RawMessage{}}
	return newEnv(t, dynamo.Options{}, p.wrap), p
}

// freshStore is a store over e's tables with an empty catalog: a new createOrder
// environment's.
func freshStore(e *env) store { return store{dynamo.New(e.DB, e.Tables, dynamo.Options{})} }

// The first order of a new environment reads the SKU record eventually consistent
// (half a read unit: a hot SKU's partition serves twice as many new environments),
// and nothing else of the order reads the record strongly.
func TestReserve_AnEmptyCatalogReadsTheSKURecordEventuallyConsistent(t *testing.T) {
	e, p := newReplicaEnv(t)
	e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "mug", Stock: 10})
	eventual0, strong0 := p.counts()
	if _, _, err := freshStore(e).Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "mug", Qty: 1})}); err != nil {
		t.Fatal(err)
	}
	if eventual, strong := p.counts(); eventual-eventual0 != 1 || strong-strong0 != 0 {
		t.Errorf("the first order read the record %d times eventually consistent and %d strongly; want 1 and 0", eventual-eventual0, strong-strong0)
	}
}

// A SKU created a moment ago may not show yet to an eventually consistent read; an
// order for it is not answered SKU_NOT_FOUND from that read but from a strongly
// consistent one, which finds it.
func TestReserve_ASKUAnEventuallyConsistentReadMissesIsReadAgainStrongly(t *testing.T) {
	e, p := newReplicaEnv(t)
	p.freeze() // the replica has seen no SKU
	e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "mug", Stock: 10})
	order, _, err := freshStore(e).Reserve(context.Background(), inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "mug", Qty: 1})})
	if err != nil || order == nil {
		t.Fatalf("an order for a SKU the replica has not seen yet: %v", err)
	}
	if eventual, strong := p.counts(); eventual != 1 || strong < 1 {
		t.Errorf("%d eventually consistent and %d strong reads; want the record read eventually consistent once, then strongly", eventual, strong)
	}
	if _, _, err := freshStore(e).Reserve(context.Background(), inventory.ReserveRequest{UserID: "v", Cart: cart(t, inventory.Line{SKU: "nothing", Qty: 1})}); !errors.Is(err, inventory.ErrSKUNotFound) {
		t.Errorf("a SKU that does not exist: %v, want SKU_NOT_FOUND", err)
	}
}

// A record read eventually consistent is kept as a cached one is: a limit raised a
// moment ago that it does not show yet refuses nobody (the refusal is read again
// strongly), as a stale cached limit does not.
func TestReserve_AStaleLimitFromAnEventuallyConsistentReadRefusesNobody(t *testing.T) {
	e, p := newReplicaEnv(t)
	e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "mug", Stock: 10, LimitPerUser: 1})
	ctx := context.Background()
	if _, _, err := freshStore(e).Reserve(ctx, inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "mug", Qty: 1})}); err != nil {
		t.Fatal(err) // the replica copies the record, limit 1
	}
	p.freeze()
	five := 5
	if _, err := e.store.PatchSKU(ctx, "mug", inventory.SKUPatch{LimitPerUser: &five}, ""); err != nil {
		t.Fatal(err)
	}
	order, _, err := freshStore(e).Reserve(ctx, inventory.ReserveRequest{UserID: "v", Cart: cart(t, inventory.Line{SKU: "mug", Qty: 3})})
	if err != nil || order == nil {
		t.Fatalf("3 units under a limit raised to 5, the replica still saying 1: %v", err)
	}
}
