package reconcile_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// Repair changes the books only when it is safe: inside its window, when exactly one side
// agrees with the open orders, once per difference, never into phantom stock, a false
// STOCK_OUT or a booked oversell.

func TestReconcile_RepairsNeverOutsideItsWindowNorWhileDisabled(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	// The test clock starts at 2026-11-11T00:00Z, 08:00 in Shanghai.
	for _, tc := range []struct {
		name    string
		enabled bool
		window  string
		repairs bool
	}{
		{"disabled, inside the window", false, "07:00-09:00", false},
		{"enabled, before the window", true, "08:30-09:00", false},
		{"enabled, after the window", true, "02:00-05:00", false},
		{"enabled, window ending now", true, "07:00-08:00", false},
		{"enabled, inside the window", true, "07:59-08:01", true},
		{"enabled, inside a window past midnight", true, "23:00-08:30", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := reconcile.ParseWindow(tc.window, shanghai)
			if err != nil {
				t.Fatal(err)
			}
			h := newStack(t, func(c *reconcile.Config) { c.Repair, c.Window = tc.enabled, w })
			h.Add(t, h.Tables.SKUs, "saucer#shard#0", "available", 7)
			counters := func() string { // the shard items but their epoch (every run cuts): checkpoints may move
				items := slices.DeleteFunc(h.Scan(t, h.Tables.SKUs), func(it map[string]any) bool { return it["kind"] != "SHARD" })
				for _, it := range items {
					delete(it, "epoch")
				}
				return fmt.Sprint(items)
			}
			skus := counters()
			rep := runReconcile(t, h)
			if len(rep.Differences) == 0 {
				t.Fatal("the drift was not reported")
			}
			if got := len(rep.Repaired) > 0; got != tc.repairs {
				t.Errorf("repaired %+v, want repairs %v", rep.Repaired, tc.repairs)
			}
			if !tc.repairs && counters() != skus {
				t.Error("a run that must not repair changed the counters")
			}
		})
	}
}

// A duplicated ADJUST entry (ledger gained stock that never arrived) is "repaired" by
// raising the counters: phantom stock that will be sold.
func TestReconcile_DoesNotRepairADoubledAdjustIntoPhantomStock(t *testing.T) {
	h := newStack(t, allDay)
	if rep := runReconcile(t, h); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	h.Clock.Advance(time.Minute)
	copyLedger(t, h, "init#ADJUST#saucer", "bogus#ADJUST#saucer")
	rep := runReconcile(t, h)
	t.Logf("differences %+v repaired %+v", rep.Differences, rep.Repaired)
	sh := h.Item(t, h.Tables.SKUs, "saucer#shard#0")
	t.Logf("saucer shard after repair: available=%v onHand=%v", sh["available"], sh["onHand"])
	_, out := h.Call(t, "GET", "/skus/saucer", "", nil, "")
	t.Logf("GET /skus/saucer: %v", out)
	if sh["available"] != float64(1000) {
		t.Errorf("repair changed the real counters from 1000 to %v on the word of a duplicated ledger entry", sh["available"])
	}
}

// copyLedger copies the ledger entry oldPK under newPK, written "now".
func copyLedger(t *testing.T, h *stacktest.Stack, oldPK, newPK string) {
	t.Helper()
	out, err := h.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(h.Tables.StockLog),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: oldPK}}})
	if err != nil || len(out.Item) == 0 {
		t.Fatalf("get %s: %v", oldPK, err)
	}
	now := h.Clock.Now()
	out.Item["pk"] = &types.AttributeValueMemberS{Value: newPK}
	out.Item["at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)}
	if _, err := h.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(h.Tables.StockLog), Item: out.Item}); err != nil {
		t.Fatal(err)
	}
}

// The ADJUST entry lost: the repair zeroes the real stock (false STOCK_OUT).
func TestReconcile_DoesNotRepairALostAdjustIntoAStockOut(t *testing.T) {
	h := newStack(t, allDay)
	h.Delete(t, h.Tables.StockLog, "init#ADJUST#cup")
	rep := runReconcile(t, h) // first run: full scan of the ledger
	t.Logf("differences %+v repaired %+v", rep.Differences, rep.Repaired)
	sh := h.Item(t, h.Tables.SKUs, "cup#shard#0")
	status, out := h.Call(t, "POST", "/orders", "buyer", nil, `{"items":[{"skuId":"cup","qty":1}]}`)
	t.Logf("cup shard after repair: available=%v onHand=%v; new order: %d %v", sh["available"], sh["onHand"], status, out["code"])
	if sh["available"] != float64(60) {
		t.Errorf("repair wiped 60 real units (available now %v); buyers get %v", sh["available"], out["code"])
	}
}

// Two overlapping runs (e.g. an EventBridge duplicate delivery or a retry) each write a
// REPAIR entry for the same ledger-side difference: the ledger is then off the other way.
func TestReconcile_OverlappingRunsRepairTheLedgerOnce(t *testing.T) {
	h := newStack(t, allDay)
	id := h.Order(t, "u1", `{"items":[{"skuId":"saucer","qty":4}]}`)
	if status, _ := h.Call(t, "POST", "/orders/"+id+"/cancel", "u1", nil, ""); status != http.StatusOK {
		t.Fatal("cancel refused")
	}
	if rep := runReconcile(t, h); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	// Lose the RELEASE entry (the counters, which agree with the orders, are right).
	h.Delete(t, h.Tables.StockLog, id+"#RELEASE#saucer")
	mk := func(skew time.Duration) *reconcile.Reconciler {
		now := func() time.Time { return h.Clock.Now().Add(skew) }
		return reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: now}), nil, slog.New(slog.DiscardHandler),
			reconcile.Config{Repair: true, Window: reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC},
				ConfirmDelay: 300 * time.Millisecond, Now: now, FullCheckEvery: time.Minute})
	}
	h.Clock.Advance(time.Minute)          // the entry was folded: the full re-check finds it
	a, b := mk(0), mk(7*time.Millisecond) // two Lambda hosts: clocks a few ms apart
	var mu sync.Mutex
	var reps []*reconcile.Report
	testkit.Parallel(2, func(i int) {
		r := a
		if i == 1 {
			r = b
		}
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		reps = append(reps, rep)
		mu.Unlock()
	})
	for _, rep := range reps {
		t.Logf("run: differences %+v repaired %+v", rep.Differences, rep.Repaired)
	}
	repairs := 0
	for _, it := range h.Scan(t, h.Tables.StockLog) {
		if it["op"] == string(inventory.OpRepair) {
			repairs++
		}
	}
	next := runReconcile(t, h)
	t.Logf("REPAIR entries %d; next run: differences %+v repaired %+v", repairs, next.Differences, next.Repaired)
	if repairs != 1 {
		t.Errorf("%d REPAIR entries for one lost RELEASE", repairs)
	}
}

// Phantom stock (counters raised by hand) sold and paid: the ledger goes negative and
// the repair books the phantom units into the ledger as "lost entries".
func TestReconcile_DoesNotBookAnOversellAsARepair(t *testing.T) {
	h := newStack(t, allDay)
	if rep := runReconcile(t, h); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	h.Add(t, h.Tables.SKUs, "cup#shard#0", "available", 10)
	h.Add(t, h.Tables.SKUs, "cup#shard#0", "onHand", 10)
	for i := range 14 {
		id := h.Order(t, "buyer"+strconv.Itoa(i), `{"items":[{"skuId":"cup","qty":5}]}`)
		if status, _ := h.Call(t, "POST", "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
			t.Fatal("pay refused")
		}
	}
	rep := runReconcile(t, h)
	t.Logf("70 units sold of 60 stocked: differences %+v repaired %+v", rep.Differences, rep.Repaired)
	next := runReconcile(t, h)
	t.Logf("next run: differences %+v", next.Differences)
	for _, r := range rep.Repaired {
		if r.Rule == "ledger available" || r.Rule == "ledger onHand" {
			t.Errorf("repair wrote a REPAIR entry %+v for a SKU that is oversold (committed > stocked)", r)
		}
	}
}
