package hotsku_test

import (
	"context"
	"testing"
	"time"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/hotsku"
)

// TestRun_SellsOutExactly plays a short sale on 4 shards for both strategies through
// the model, with less stock than buyers: every unit is sold, none twice, no buyer is
// told STOCK_OUT while a unit is left, and nothing is written for a refused buyer. (The
// sweep itself is tools/cmd/hotsku and BenchmarkHotSKU; this keeps Run honest in CI.)
func TestRun_SellsOutExactly(t *testing.T) {
	env, err := hotsku.NewEnv(context.Background(), "../../../template.yaml", false)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	for _, s := range []hotsku.Strategy{hotsku.Transaction, hotsku.Conditional} {
		t.Run(string(s), func(t *testing.T) {
			r, err := hotsku.Run(context.Background(), env, hotsku.Point{
				Strategy: s, Shards: 4, Offered: 500, Duration: 200 * time.Millisecond, Stock: 40,
				Model: ddblimits.Config{Slowdown: 5}, Seed: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", r)
			// Stock only falls during a run: once a buyer is told STOCK_OUT, every unit
			// must have been sold.
			if r.Orders > 40 || r.StockOut > 0 && r.Orders != 40 {
				t.Errorf("%d orders on a stock of 40 with %d buyers (%d STOCK_OUT, %d busy)", r.Orders, r.Arrivals, r.StockOut, r.Busy)
			}
			if r.Orders+r.StockOut+r.Busy+r.Failed != r.Arrivals || r.Failed != 0 {
				t.Errorf("answers do not add up or some failed: %+v", r)
			}
			if r.Oversold != 0 || r.FalseStockOut != 0 || r.Unbacked != 0 || r.Orphans != 0 || r.Leaked != 0 {
				t.Errorf("oversold %d, false STOCK_OUT %d, unbacked %d, orphans %d, leaked %d; want all 0",
					r.Oversold, r.FalseStockOut, r.Unbacked, r.Orphans, r.Leaked)
			}
			if r.StockOut == 0 && r.Busy == 0 {
				t.Errorf("%d buyers for 40 units and neither STOCK_OUT nor BUSY", r.Arrivals)
			}
		})
	}
}

// TestRun_LostAnswers loses the answer of every 7th (then of every) DynamoDB write
// after the server applied it, and the SDK retries. createOrder's one transaction still sells every
// unit exactly once: its retry finds its own order and answers it, so nothing is
// reserved twice. The conditional update has no such key: a retried UpdateItem takes
// a second unit that no order holds, which the run counts as leaked.
func TestRun_LostAnswers(t *testing.T) {
	env, err := hotsku.NewEnv(context.Background(), "../../../template.yaml", false)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	run := func(s hotsku.Strategy, every int) hotsku.Result {
		r, err := hotsku.Run(context.Background(), env, hotsku.Point{
			Strategy: s, Shards: 2, Offered: 400, Duration: 250 * time.Millisecond,
			Model: ddblimits.Config{Slowdown: 5, LoseAnswerEvery: every}, Seed: 3,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d orders of %d buyers, %d lost answers, %d busy, %d failed, leaked %d", s, r.Orders, r.Arrivals, r.Lost, r.Busy, r.Failed, r.Leaked)
		if r.Lost == 0 {
			t.Fatalf("%s: no answer was lost", s)
		}
		return r
	}
	// Every 7th answer lost, and then every one: each retry's answer is lost too, or
	// the retry conflicts, and createOrder must read its order before answering BUSY.
	for _, every := range []int{7, 1} {
		if r := run(hotsku.Transaction, every); r.Oversold+r.FalseStockOut+r.Unbacked+r.Orphans+r.Leaked+r.Failed != 0 {
			t.Errorf("transaction, every %d lost: oversold %d, false STOCK_OUT %d, unbacked %d, orphans %d, leaked %d, failed %d; want all 0",
				every, r.Oversold, r.FalseStockOut, r.Unbacked, r.Orphans, r.Leaked, r.Failed)
		}
	}
	if r := run(hotsku.Conditional, 7); r.Leaked == 0 {
		t.Errorf("conditional update: no unit leaked over %d lost answers", r.Lost)
	}
}
