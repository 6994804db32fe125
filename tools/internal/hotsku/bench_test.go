package hotsku_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/hotsku"
)

// realRate is how many buyers per real second the benchmarks start: the slowdown of
// each point is its offered load over this (at least 20, so that a busy machine's
// stalls shrink 20 times at 1×). The sweep gave the same orders/s from 40 to 120
// buyers per real second on two cores.
const realRate = 100

func report(b *testing.B, r hotsku.Result) {
	b.ReportMetric(r.PerSecond, "orders/s@1x")
	b.ReportMetric(hotsku.Ideal(r.Strategy, r.Shards, r.Model.WriteUnits), "ideal/s")
	b.ReportMetric(r.P50.Seconds()*1000, "p50-ms")
	b.ReportMetric(r.P99.Seconds()*1000, "p99-ms")
	b.ReportMetric(float64(r.Busy)/float64(max(r.Arrivals, 1)), "busy/order")
	b.ReportMetric(float64(r.Conflicts)/float64(max(r.Requests, 1)), "conflicts/req")
	b.ReportMetric(float64(r.Throttles)/float64(max(r.Requests, 1)), "throttles/req")
	if r.Oversold+r.FalseStockOut+r.Unbacked+r.Orphans > 0 {
		b.Errorf("oversold %d, false STOCK_OUT %d, unbacked %d, orphans %d", r.Oversold, r.FalseStockOut, r.Unbacked, r.Orphans)
	}
}

// BenchmarkHotSKU runs sweep points: both strategies, shards × 1,000 buyers/s offered
// (twice the transaction's ideal, equal to the conditional update's). Each iteration
// is a whole point (about 15 s to 2 min of real time); run it with -benchtime 1x.
// tools/cmd/hotsku runs the full sweep and draws the plot.
func BenchmarkHotSKU(b *testing.B) {
	env, err := hotsku.NewEnv(context.Background(), "../../../template.yaml", true)
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	for _, shards := range []int{1, 4, 16, 64} {
		for _, s := range []hotsku.Strategy{hotsku.Transaction, hotsku.Conditional} {
			b.Run(fmt.Sprintf("%s/shards=%d", s, shards), func(b *testing.B) {
				offered := float64(shards) * ddblimits.PartitionWriteUnits
				var r hotsku.Result
				for b.Loop() {
					r, err = hotsku.Run(context.Background(), env, hotsku.Point{
						Strategy: s, Shards: shards, Offered: offered,
						Duration: max(200*time.Millisecond, time.Duration(1500/offered*float64(time.Second))),
						Model:    ddblimits.Config{Slowdown: max(20, offered/realRate)},
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				report(b, r)
			})
		}
	}
}

// BenchmarkCreateOrder_Latency measures createOrder's latency at 1× under a light
// load (8 shards, 500 buyers/s, a tenth of the transaction's ideal) with the model's
// round trips: DynamoDB 5 ms plus the transaction's 2 ms hold, then the close-order
// send to SQS, 8 ms, one after the other as createOrder does today. The no-sqs case
// sends no close message: the difference is what the send adds to p50.
func BenchmarkCreateOrder_Latency(b *testing.B) {
	for _, withSQS := range []bool{true, false} {
		name := "sqs"
		if !withSQS {
			name = "no-sqs"
		}
		b.Run(name, func(b *testing.B) {
			env, err := hotsku.NewEnv(context.Background(), "../../../template.yaml", withSQS)
			if err != nil {
				b.Fatal(err)
			}
			defer env.Close()
			var r hotsku.Result
			for b.Loop() {
				r, err = hotsku.Run(context.Background(), env, hotsku.Point{
					Strategy: hotsku.Transaction, Shards: 8, Offered: 500, Duration: time.Second,
					Model: ddblimits.Config{Slowdown: 20},
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, r)
		})
	}
}
