package orders_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// Network round trips injected by BenchmarkCreateOrder_InjectedRoundTrips: the
// embedded servers answer in well under a millisecond, AWS from inside a region in
// a few.
const (
	dynamoRoundTrip = 5 * time.Millisecond
	sqsRoundTrip    = 8 * time.Millisecond
)

// roundTrip is an HTTP transport that waits delay before each request, as a network
// round trip would.
type roundTrip struct {
	delay time.Duration
	next  http.RoundTripper
}

func (t roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(t.delay)
	return t.next.RoundTrip(r)
}

func delayed(d time.Duration) *http.Client {
	return &http.Client{Transport: roundTrip{delay: d, next: http.DefaultTransport}}
}

// BenchmarkCreateOrder_InjectedRoundTrips places one-line orders through createOrder's
// handler with every DynamoDB request delayed 5 ms and every SQS request 8 ms,
// against the embedded servers, each order from a new user. p50-ms is the median time
// per order, ddb-requests/order the DynamoDB requests an order makes. Without
// shaping an order makes one DynamoDB request (the transaction; the SKU is cached)
// and one SQS request (its close message), so p50-ms tells whether they run one
// after the other (≈ 13 ms plus the servers' own time) or overlap (≈ 8 ms plus).
// With shaping on, the shaping write comes before the transaction: one more
// DynamoDB request, still overlapping the SQS send.
func BenchmarkCreateOrder_InjectedRoundTrips(b *testing.B) {
	for _, perMinute := range []string{"0", "100"} {
		name := "shaping=off"
		if perMinute != "0" {
			name = "shaping=on"
		}
		b.Run(name, func(b *testing.B) { benchInjected(b, perMinute) })
	}
}

func benchInjected(b *testing.B, perMinute string) {
	ctx := context.Background()
	var sent atomic.Int64
	stack, err := local.Start(ctx, local.StackConfig{
		Template: "../../../../template.yaml", SQSAddr: "127.0.0.1:0",
		DynamoDBOptions: []func(*dynamodb.Options){
			func(o *dynamodb.Options) { o.HTTPClient = delayed(dynamoRoundTrip) },
			local.CountRequests(func(string) { sent.Add(1) }),
		},
		Environment: func(_ string, env map[string]string) {
			if _, ok := env["ORDERS_PER_USER_SKU_PER_MINUTE"]; ok {
				env["ORDERS_PER_USER_SKU_PER_MINUTE"] = perMinute
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stack.Close() })
	if err := stack.Seed(ctx, strings.NewReader(`[{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":100000000}]`)); err != nil {
		b.Fatal(err)
	}
	sqsClient := local.NewSQSClient(stack.SQS.URL(), func(o *sqs.Options) { o.HTTPClient = delayed(sqsRoundTrip) })
	h := createOrder(b, stack.Store, closeq.New(sqsClient, stack.Queues["CloseOrderQueue"], nil), slog.New(slog.DiscardHandler))
	req := fixture(b, "create-order.json")
	req.Body = `{"items":[{"skuId":"cup-01","qty":1}]}`
	user := 0
	order := func() time.Duration {
		user++
		req.RequestContext.Authorizer.JWT.Claims["sub"] = "buyer-" + strconv.Itoa(user)
		start := time.Now()
		resp, err := h(ctx, req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatalf("order: %d %v %s", resp.StatusCode, err, resp.Body)
		}
		return time.Since(start)
	}
	order() // warm the SKU cache and the connections, as a warm container has them
	sent.Store(0)
	var took []time.Duration
	for b.Loop() {
		took = append(took, order())
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(sent.Load())/float64(len(took)), "ddb-requests/order")
}
