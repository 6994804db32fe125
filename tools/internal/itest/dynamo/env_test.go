package dynamo_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// env is the local stack's DynamoDB API (minidyn, tables from template.yaml, no SKUs)
// with a store configured by the test, driven through the real SDK client.
type env struct {
	*stacktest.Stack
	store store
	mu    sync.Mutex
	ops   map[string]int // requests sent per operation name
}

// sent returns how many requests of operation op were sent so far.
func (e *env) sent(op string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ops[op]
}

// newEnv starts the local stack's DynamoDB server behind wrap (nil: none), with the
// tables of template.yaml, and a store over it with opts that creates skus.
func newEnv(t testing.TB, opts dynamo.Options, wrap func(http.Handler) http.Handler, skus ...inventory.NewSKU) *env {
	t.Helper()
	e := &env{ops: map[string]int{}}
	e.Stack = stacktest.New(t, stacktest.Options{Seed: "[]", Stack: local.StackConfig{
		DynamoDBWrap: wrap,
		DynamoDBOptions: []func(*dynamodb.Options){local.CountRequests(func(op string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.ops[op]++
		})},
	}})
	e.store = store{dynamo.New(e.DB, e.Tables, opts)}
	for _, sku := range skus {
		e.createSKU(t, sku)
	}
	return e
}

func (e *env) createSKU(t testing.TB, sku inventory.NewSKU) {
	t.Helper()
	if sku.Name == "" {
		sku.Name = "test " + sku.ID
	}
	if sku.Price == 0 {
		sku.Price = 39900
	}
	if err := e.store.CreateSKU(context.Background(), sku); err != nil {
		t.Fatal(err)
	}
}

// onRequests wraps the DynamoDB API so that each request of operation op hands its
// body to seen before it is served.
func onRequests(op string, seen func(body []byte)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				seen(body)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// books sums what the tables say about one SKU.
type books struct {
	available, onHand    int
	reserveEntries       int
	reservedInLedger     int // Σ qty of RESERVE entries
	pendingOrders        int // PENDING orders holding the SKU
	reservedInOrders     int // Σ qty of the SKU over PENDING orders
	shardNegative        bool
	shardAvailableOnHand bool // some shard has available > onHand
}

func (e *env) books(t testing.TB, sku string) books {
	t.Helper()
	var b books
	for _, it := range e.Scan(t, e.Tables.SKUs) {
		if it["kind"] == "SHARD" && it["skuId"] == sku {
			a, h := int(it["available"].(float64)), int(it["onHand"].(float64))
			b.available += a
			b.onHand += h
			b.shardNegative = b.shardNegative || a < 0
			b.shardAvailableOnHand = b.shardAvailableOnHand || a > h
		}
	}
	for _, it := range e.Scan(t, e.Tables.StockLog) {
		if it["op"] == string(inventory.OpReserve) && it["skuId"] == sku {
			b.reserveEntries++
			b.reservedInLedger += int(it["qty"].(float64))
		}
	}
	for _, it := range e.Scan(t, e.Tables.Orders) {
		if it["kind"] != "ORDER" || it["status"] != "PENDING" {
			continue
		}
		for _, line := range it["items"].([]any) {
			l := line.(map[string]any)
			if l["skuId"] == sku {
				b.pendingOrders++
				b.reservedInOrders += int(l["qty"].(float64))
			}
		}
	}
	return b
}

// checkAvailable fails t unless the SKU's shards hold want available units in all.
func (e *env) checkAvailable(t testing.TB, sku string, want int) {
	t.Helper()
	if got := e.books(t, sku).available; got != want {
		t.Errorf("%s available %d, want %d", sku, got, want)
	}
}

// checkBalanced asserts the conservation rules for a SKU that has only seen
// reservations since it was stocked with initial units.
func (b books) checkBalanced(t testing.TB, initial int) {
	t.Helper()
	if b.shardNegative || b.shardAvailableOnHand {
		t.Errorf("a shard left 0 ≤ available ≤ onHand: %+v", b)
	}
	if b.onHand != initial {
		t.Errorf("onHand = %d, want %d (reservations never touch on-hand)", b.onHand, initial)
	}
	if b.available != initial-b.reservedInLedger {
		t.Errorf("available = %d, want initial %d − Σ RESERVE %d", b.available, initial, b.reservedInLedger)
	}
	if b.onHand-b.available != b.reservedInOrders {
		t.Errorf("reserved = %d, want Σ qty of PENDING orders %d", b.onHand-b.available, b.reservedInOrders)
	}
}
