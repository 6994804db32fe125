package local_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// bottomless is a SKU that cannot sell out during a benchmark.
const bottomless = `[{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":100000000}]`

// benchStack starts the local stack with the bottomless SKU and counts the DynamoDB
// requests its client sends (retries included).
func benchStack(b *testing.B) (*stacktest.Stack, *atomic.Int64) {
	b.Helper()
	var sent atomic.Int64
	stack := stacktest.New(b, stacktest.Options{Seed: bottomless, RealTime: true, Stack: local.StackConfig{
		DynamoDBOptions: []func(*dynamodb.Options){local.CountRequests(func(string) { sent.Add(1) })},
	}})
	return stack, &sent
}

// postOrder returns a function that places a one-line order for cup-01 as user
// through the HTTP API at url and fails b unless it is created.
func postOrder(b *testing.B, client *http.Client, url string) func(user string) {
	body := `{"items":[{"skuId":"cup-01","qty":1}]}`
	return func(user string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/orders", strings.NewReader(body))
		req.Header.Set("X-User-Id", user)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b.Errorf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkCreateOrder_LocalHTTP places one-line orders through the whole local path:
// HTTP → gateway → API Gateway event JSON → createOrder handler → DynamoDB API.
// ddb-requests/order is the number of DynamoDB requests per order.
func BenchmarkCreateOrder_LocalHTTP(b *testing.B) {
	stack, sent := benchStack(b)
	api := httptest.NewServer(stack.API)
	defer api.Close()
	post := postOrder(b, api.Client(), api.URL)
	// One order to warm the SKU cache, as a warm Lambda container has.
	post("warm-up")
	sent.Store(0)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		post("buyer-" + strconv.Itoa(i))
	}
	b.ReportMetric(float64(sent.Load())/float64(b.N), "ddb-requests/order")
}

// BenchmarkCreateOrder_Blocks places b.N one-line orders (run it with -benchtime
// 20000x) through the local HTTP API from 32 buyers at once, and reports for the first
// and the last block of 1,000 orders their throughput (orders/s of wall time) and their
// cost (CPU ms per order of this process, which serves and sends them: on a shared
// machine other processes move the wall time, not the CPU time), and the ratios last /
// first. A store whose cost per order grows with the orders before it shows a
// throughput ratio well under 1 and a cost ratio well over 1. Every block is logged (-v).
func BenchmarkCreateOrder_Blocks(b *testing.B) {
	const block, buyers = 1000, 32
	stack, _ := benchStack(b)
	api := httptest.NewServer(stack.API)
	defer api.Close()
	client := api.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = buyers
	post := postOrder(b, client, api.URL)
	post("warm-up")
	type mark struct{ at, cpu time.Duration }
	now := func() mark {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return mark{time.Duration(time.Now().UnixNano()), time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	}
	marks := make([]mark, b.N/block+1) // marks[k]: when the k-th block was done
	var next, done atomic.Int64
	b.ResetTimer()
	marks[0] = now()
	testkit.Parallel(buyers, func(int) {
		for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
			post("buyer-" + strconv.FormatInt(i, 10))
			if n := done.Add(1); n%block == 0 {
				marks[n/block] = now()
			}
		}
	})
	b.StopTimer()
	if b.N < block {
		return
	}
	rate := func(k int) (float64, float64) { // orders/s and CPU ms/order of block k
		d := marks[k].at - marks[k-1].at
		return block / d.Seconds(), float64((marks[k].cpu - marks[k-1].cpu).Milliseconds()) / block
	}
	for k := 1; k < len(marks); k++ {
		r, c := rate(k)
		b.Logf("block %2d: %6.0f orders/s %6.2f CPU ms/order", k, r, c)
	}
	r1, c1 := rate(1)
	rn, cn := rate(len(marks) - 1)
	b.ReportMetric(r1, "first-block-orders/s")
	b.ReportMetric(rn, "last-block-orders/s")
	b.ReportMetric(rn/r1, "last/first-orders/s")
	b.ReportMetric(cn/c1, "last/first-cpu/order")
}

// BenchmarkTransactWriteItems_Bare sends the same three writes a one-line order makes
// (shard update with its condition, order put, ledger put) straight through the SDK to
// the same embedded server: the floor under BenchmarkCreateOrder_LocalHTTP.
func BenchmarkTransactWriteItems_Bare(b *testing.B) {
	stack, _ := benchStack(b)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("bare%028d", i)
		_, err := stack.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(stack.Tables.Orders), Item: map[string]types.AttributeValue{"pk": s(id), "kind": s("ORDER"), "status": s("PENDING")}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			{Update: &types.Update{TableName: aws.String(stack.Tables.SKUs), Key: map[string]types.AttributeValue{"pk": s("cup-01#shard#0")},
				UpdateExpression: aws.String("SET available = available - :q"), ConditionExpression: aws.String("available >= :q"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":q": n(1)}}},
			{Put: &types.Put{TableName: aws.String(stack.Tables.StockLog), Item: map[string]types.AttributeValue{"pk": s(id + "#RESERVE#cup-01"), "qty": n(1)}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReleaseLag measures how long after its expiry an unpaid order's stock is
// available again (the order's cancelledAt − expiresAt, the same transaction that
// gives the stock back), with the payment timeout at 1 s:
//   - queue: createOrder's delayed close message, the local SQS event source mapping
//     and closeOrder; SQS delays are whole seconds, so up to 1 s of the lag is the
//     delay rounding up;
//   - sweep: no queue at all; the scheduled sweep, here every 2 s instead of the
//     template's minute, finds the order through the PendingByExpiry index. Its lag
//     is bounded by the sweep period.
//
// It reports mean-lag-ms and max-lag-ms over the b.N orders (run with -benchtime Nx).
func BenchmarkReleaseLag(b *testing.B) {
	for _, path := range []struct {
		name string
		opts stacktest.Options
	}{
		{"queue", stacktest.Options{SQS: true}},
		{"sweep", stacktest.Options{Stack: local.StackConfig{SchedulePeriod: 2 * time.Second}}},
	} {
		b.Run(path.name, func(b *testing.B) {
			opts := path.opts
			opts.Seed, opts.RealTime, opts.Stack.PaymentTimeout = bottomless, true, time.Second
			stack := stacktest.New(b, opts)
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan error, 1)
			go func() { ran <- stack.Run(ctx) }()
			defer func() { cancel(); <-ran }()
			c, _ := inventory.NewCart([]inventory.Line{{SKU: "cup-01", Qty: 1}})
			var ids []string
			for i := 0; b.Loop(); i++ {
				order, _, err := stack.Store.Reserve(ctx, dynamo.ReserveRequest{UserID: "u" + strconv.Itoa(i), Cart: c})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, order.ID)
				if stack.SQS != nil {
					// createOrder's handler sends this after Reserve; call it directly
					// so the benchmark measures the release path only.
					queue := closeq.New(local.NewSQSClient(stack.SQS.URL()), stack.Queues["CloseOrderQueue"], nil)
					if _, err := queue.Schedule(ctx, closeq.Message{OrderID: order.ID, ExpiresAt: order.ExpiresAt}); err != nil {
						b.Fatal(err)
					}
				}
				time.Sleep(100 * time.Millisecond) // spread the expiries over the sweep period
			}
			var total, worst time.Duration
			for _, id := range ids {
				var order *inventory.Order
				for order == nil || order.Status == inventory.StatusPending {
					time.Sleep(20 * time.Millisecond)
					order = stack.Lookup(b, id)
				}
				lag := order.CancelledAt.Sub(order.ExpiresAt)
				total += lag
				worst = max(worst, lag)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(len(ids)), "mean-lag-ms")
			b.ReportMetric(float64(worst.Milliseconds()), "max-lag-ms")
		})
	}
}
