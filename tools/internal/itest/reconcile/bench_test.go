package reconcile_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// BenchmarkReconcile measures a reconciliation of 1,000 SKUs over a 100,000-entry
// ledger: the first run (no checkpoint yet: it scans the whole ledger) and an
// incremental run after 1,000 more orders (it reads only what they wrote). It reports
// each run's duration (first-ms, incremental-ms) and DynamoDB items read
// (first-items, incremental-items, incremental-ledger-entries).
//
// The history is written with BatchWriteItem as RESERVE/RELEASE pairs 30 days old
// (net zero, so counters and ledger agree), because minidyn copies whole tables in
// every transaction and 50,000 real orders would take hours; the 1,000 new orders go
// through the real reservation. Durations are the embedded server's, which scans every
// index item on each Query: they say how the work grows, not what DynamoDB takes.
//
// Run: go test -run '^$' -bench Reconcile -benchtime 1x ./tools/internal/itest/reconcile/
func BenchmarkReconcile(b *testing.B) {
	skus, history, orders := *benchSKUs, *benchHistory, *benchOrders
	ctx := context.Background()
	phase := time.Now()
	lap := func(what string) {
		b.Logf("%s: %v", what, time.Since(phase).Round(time.Millisecond))
		phase = time.Now()
	}
	var seed []string
	for i := range skus {
		seed = append(seed, fmt.Sprintf(`{"skuId":"sku-%04d","delivery":"none","name":"n","price":100,"stock":1000}`, i))
	}
	stack := stacktest.New(b, stacktest.Options{Seed: "[" + strings.Join(seed, ",") + "]"})
	clock := stack.Clock
	lap("seed SKUs")
	writeHistory(b, stack, skus, history-skus, clock.Now().Add(-30*24*time.Hour))
	lap("write history")
	clock.Advance(3 * time.Minute) // past the checkpoint lag: the first run folds everything
	r := reconcile.New(dynamo.New(stack.DB, stack.Tables, dynamo.Options{Now: clock.Now}), nil, slog.New(slog.DiscardHandler),
		reconcile.Config{ConfirmDelay: time.Millisecond, Now: clock.Now})
	run := func(name string) *reconcile.Report {
		start := time.Now()
		rep, err := r.Run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Differences) != 0 || rep.SKUsChecked != skus {
			b.Fatalf("%s run: %d SKUs, differences %v", name, rep.SKUsChecked, rep.Differences)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), name+"-ms")
		b.ReportMetric(float64(rep.ItemsRead), name+"-items")
		return rep
	}
	for b.Loop() {
		run("first")
		lap("first run")
		clock.Advance(3 * time.Minute)
		store := dynamo.New(stack.DB, stack.Tables, dynamo.Options{Now: clock.Now, PaymentTimeout: time.Hour})
		for i := range orders {
			c, _ := inventory.NewCart([]inventory.Line{{SKU: fmt.Sprintf("sku-%04d", i%skus), Qty: 1}})
			if _, _, err := store.Reserve(ctx, dynamo.ReserveRequest{UserID: "u" + strconv.Itoa(i), Cart: c}); err != nil {
				b.Fatal(err)
			}
		}
		lap("orders")
		clock.Advance(time.Minute)
		rep := run("incremental")
		lap("incremental run")
		b.ReportMetric(float64(rep.LedgerEntriesRead), "incremental-ledger-entries")
	}
}

// Sizes of BenchmarkReconcile, settable to see how the work grows.
var (
	benchSKUs    = flag.Int("reconcile.skus", 1000, "BenchmarkReconcile: SKUs")
	benchHistory = flag.Int("reconcile.history", 100_000, "BenchmarkReconcile: ledger entries before the first run")
	benchOrders  = flag.Int("reconcile.orders", 1000, "BenchmarkReconcile: orders between the runs")
)

// writeHistory writes n ledger entries, RESERVE/RELEASE pairs spread over the SKUs,
// at old times, in the stock_log item shape the store writes, and counts them in
// their shard's seq.
func writeHistory(b *testing.B, stack *stacktest.Stack, skus, n int, at time.Time) {
	b.Helper()
	var batch []types.WriteRequest
	flush := func() {
		for len(batch) > 0 {
			out, err := stack.DB.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{
				RequestItems: map[string][]types.WriteRequest{stack.Tables.StockLog: batch},
			})
			if err != nil {
				b.Fatal(err)
			}
			batch = out.UnprocessedItems[stack.Tables.StockLog]
		}
	}
	perSKU := map[string]int{}
	for i := range n {
		sku := fmt.Sprintf("sku-%04d", (i/2)%skus)
		perSKU[sku]++
		op, d := string(inventory.OpReserve), -1
		if i%2 == 1 {
			op, d = string(inventory.OpRelease), 1
		}
		ref := fmt.Sprintf("hist%08d", i/2)
		pk := ref + "#" + op + "#" + sku
		when := at.Add(time.Duration(i) * time.Second)
		item := map[string]types.AttributeValue{
			"pk": s(pk), "ref": s(ref), "op": s(op), "skuId": s(sku), "qty": num(1), "dAvailable": num(d), "dOnHand": num(0),
			"shards":      &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"0": num(1)}},
			"at":          num(int(when.UnixMilli())),
			"ledgerShard": s(sku + "#0"),
		}
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		if len(batch) == 25 {
			flush()
		}
	}
	flush()
	for sku, k := range perSKU { // the shard's seq counts its entries, as the store's writes do
		if _, err := stack.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: aws.String(stack.Tables.SKUs), Key: map[string]types.AttributeValue{"pk": s(sku + "#shard#0")},
			UpdateExpression: aws.String("ADD seq :k"), ExpressionAttributeValues: map[string]types.AttributeValue{":k": num(k)},
		}); err != nil {
			b.Fatal(err)
		}
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
