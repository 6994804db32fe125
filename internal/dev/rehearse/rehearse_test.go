package rehearse_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dev/ddblimits"
	"github.com/stockguard/stockguard/internal/dev/plan"
	"github.com/stockguard/stockguard/internal/dev/quotas"
	"github.com/stockguard/stockguard/internal/dev/rehearse"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// small is a whole sale small enough for CI, on a model scaled down 50×: every
// partition (a shard item, an index key) serves 20 write units a second and banks
// 10, as DynamoDB's 1,000 a second bank 10 in the default 10 ms, so the indexes'
// ceilings are 50× lower too: 16 LedgerByTime keys take 320 entries a second. The
// quotas in front are raised out of the way, so that the indexes are what binds.
func small(t *testing.T, buyers int) rehearse.Config {
	return rehearse.Config{
		Template: filepath.Join(testkit.ModuleRoot(t), "template.yaml"),
		SKUs:     2, Stock: 200, Shards: 64, LimitPerUser: 1,
		Buyers: buyers, Over: 200 * time.Millisecond, Spike: 0.1,
		PageViews: 0, Think: 100 * time.Millisecond,
		PayRatio: 0.6, CancelRatio: 0.2, LateRatio: 0.05,
		PayAfter: 300 * time.Millisecond, PaymentTimeout: 2 * time.Second,
		Retries: 2, Seed: 7,
		Slowdown:  2,
		Model:     ddblimits.Config{WriteUnits: 2, Burst: 5 * time.Second},
		Gateway:   quotas.GatewayConfig{Rate: 1e6, Burst: 1e6},
		StageRate: 1e6, StageBurst: 1e6,
		Lambda: quotas.LambdaConfig{AccountConcurrency: 100000},
	}
}

// indexThrottles counts the refusals of the two system-wide time-ordered indexes'
// keys, by index.
func indexThrottles(r *rehearse.Report) map[string]int {
	out := map[string]int{}
	for name, n := range r.Throttles {
		for _, ix := range []string{"index StockLogTable.LedgerByTime ", "index OrdersTable.PendingByExpiry "} {
			if strings.HasPrefix(name, ix) {
				out[strings.TrimSpace(ix)] += n
			}
		}
	}
	return out
}

// TestRehearsal_IndexKeysThrottleOnlyPastTheirCeiling plays the same small sale twice:
// 40 buyers over 0.3 s (about 130 orders a second, under half the 320 entries a second
// LedgerByTime's keys take, and fewer entries per key over the whole sale than a key
// banks) and 600 (2,000 a second, six times past it). Past the ceiling,
// LedgerByTime's and PendingByExpiry's keys refuse writes by name; under it, none
// does; both sales sell nothing twice, tell no buyer STOCK_OUT while a unit was
// there, back every 201 with its order, and leave balanced books that a final
// reconcile finds clean. Payments, cancels, late payments and expiries all happen.
func TestRehearsal_IndexKeysThrottleOnlyPastTheirCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole sale")
	}
	for _, tc := range []struct {
		name   string
		buyers int
		past   bool
	}{
		{"under the index ceiling", 30, false},
		{"past the index ceiling", 250, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rehearse.Run(context.Background(), small(t, tc.buyers))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s; %d orders, peak %.0f/s; by status %v; index throttles %v; wall %.0f s",
				r.Verdict(), r.Orders.Created, r.Orders.PerSecondPeak, r.Orders.ByStatus, indexThrottles(r), r.WallSeconds)
			if r.Oversold != 0 || r.FalseStockOut != 0 || r.Unbacked != 0 || r.Unsettled != 0 {
				t.Errorf("oversold %d, false STOCK_OUT %d, unbacked %d, unsettled %d; want 0 (final sweep %s)", r.Oversold, r.FalseStockOut, r.Unbacked, r.Unsettled, r.FinalSweep)
			}
			for _, p := range r.BooksProblems {
				t.Errorf("books: %s", p)
			}
			if !r.ReconcileClean {
				t.Errorf("the final reconcile was not clean: %+v", r.Reconcile)
			}
			if r.Orders.Created < tc.buyers/2 {
				t.Errorf("%d orders for %d buyers, want at least half of them served", r.Orders.Created, tc.buyers)
			}
			for _, status := range []string{"PAID", "CANCELLED"} {
				if r.Orders.ByStatus[status] == 0 {
					t.Errorf("no order ended %s: %v", status, r.Orders.ByStatus)
				}
			}
			if !tc.past {
				// What the planner counts per operation is what most requests of
				// that operation that wrote took (the first write on a shard after a
				// reconcile cut is refused and resent, a cancel racing the queue's
				// release writes less: such requests are the exceptions the planner
				// leaves out, and a loaded machine makes them more common, so the
				// least is no measure). A kind with fewer than 3 requests that wrote
				// says too little and is skipped; orders created never is.
				x := plan.Today()
				for kind, want := range map[string]float64{"orders created": x.CreateWrites, "prepay": x.PrepayWrites, "payment": x.PaymentWrites, "cancel": x.ReleaseWrites} {
					u := r.Units[kind]
					if u.Wrote < 3 {
						t.Logf("%s: %d requests wrote, too few to compare with the planner", kind, u.Wrote)
						continue
					}
					if u.TypicalWriteUnits != want {
						t.Errorf("%s: %.2f write units for most requests (least %.2f, mean %.2f), the planner counts %.0f", kind, u.TypicalWriteUnits, u.MinWriteUnits, u.WriteUnits, want)
					}
				}
			}
			got := indexThrottles(r)
			switch {
			case tc.past && (got["index StockLogTable.LedgerByTime"] == 0 || got["index OrdersTable.PendingByExpiry"] == 0):
				t.Errorf("past the ceiling, index throttles %v: want LedgerByTime's and PendingByExpiry's keys named", got)
			case !tc.past && len(got) > 0:
				t.Errorf("under the ceiling, index throttles %v: want none", got)
			}
		})
	}
}
