package local_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/tools/internal/local"
)

// readCounter counts the DynamoDB requests the embedded server receives.
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		next.ServeHTTP(w, r)
	})
}

// pageStack starts a stack on a clock that stands still, with one SKU, and returns it
// with its DynamoDB request counter.
func pageStack(tb testing.TB) (*local.Stack, *readCounter) {
	tb.Helper()
	var c readCounter
	at := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	stack, err := local.Start(ctx, local.StackConfig{Template: template, DynamoDBWrap: c.wrap, Now: func() time.Time { return at }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stack.Close() })
	if err := stack.Seed(ctx, strings.NewReader(`[{"skuId":"cup","name":"cup","price":100,"stock":40,"shards":4}]`)); err != nil {
		tb.Fatal(err)
	}
	return stack, &c
}

// viewPage invokes h with GET /skus/cup as API Gateway sends it and returns the
// DynamoDB requests it made.
func viewPage(tb testing.TB, h lambda.Handler, c *readCounter) int64 {
	tb.Helper()
	payload, err := json.Marshal(events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "GET /skus/{skuId}", RawPath: "/skus/cup", PathParameters: map[string]string{"skuId": "cup"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet, Path: "/skus/cup"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	before := c.n.Load()
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		tb.Fatal(err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /skus/cup: %s (%v)", out, err)
	}
	return c.n.Load() - before
}

// Each instance of a function (one per modeled Lambda environment) keeps its own
// caches, as each deployed environment does: within the public answer's second, a
// second view on one instance reads nothing, and a view on another instance reads
// the SKU again, as much as the first did.
func TestStack_InstancesKeepCachesOfTheirOwn(t *testing.T) {
	stack, c := pageStack(t)
	first, err := stack.Instance("CreateOrderFunction")
	if err != nil {
		t.Fatal(err)
	}
	second, err := stack.Instance("CreateOrderFunction")
	if err != nil {
		t.Fatal(err)
	}
	reads := viewPage(t, first, c)
	if reads == 0 {
		t.Fatal("the first view read nothing")
	}
	if n := viewPage(t, first, c); n != 0 {
		t.Errorf("the same instance again within the second: %d DynamoDB requests, want 0", n)
	}
	if n := viewPage(t, second, c); n != reads {
		t.Errorf("another instance: %d DynamoDB requests, want %d as the first instance's first view", n, reads)
	}
	if n := viewPage(t, stack.Handlers["CreateOrderFunction"], c); n != reads {
		t.Errorf("the stack's own handler: %d DynamoDB requests, want %d", n, reads)
	}
	if _, err := stack.Instance("NoSuchFunction"); err == nil {
		t.Error("an instance of a function the template lacks: no error")
	}
}

// BenchmarkStack_Instance reports the heap one createOrder instance keeps (its
// store, caches and handler) once it has served a page view: what each modeled
// Lambda environment costs the rehearsal.
func BenchmarkStack_Instance(b *testing.B) {
	stack, c := pageStack(b)
	keep := make([]lambda.Handler, 0, b.N)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		h, err := stack.Instance("CreateOrderFunction")
		if err != nil {
			b.Fatal(err)
		}
		viewPage(b, h, c)
		keep = append(keep, h)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep)), "heap-bytes/instance")
	runtime.KeepAlive(keep)
}
