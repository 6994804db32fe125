package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// These tests run the whole local stack (embedded DynamoDB, tables and functions from
// template.yaml) on a settable clock, drive real traffic through its HTTP API, and
// reconcile through the reconcile function or a Reconciler over the same tables.

// newStack starts the local stack with a limited "cup" (60 units), a 4-shard "teapot"
// (80) and a "saucer" (1,000), a 10-minute payment window, and reconcile configured by
// the template, a short confirmation delay and then tune (nil: nothing more).
func newStack(t *testing.T, tune func(*reconcile.Config), wrap ...local.Middleware) *stacktest.Stack {
	t.Helper()
	var mw local.Middleware
	if len(wrap) > 0 {
		mw = wrap[0]
	}
	return stacktest.New(t, stacktest.Options{
		Seed: `[
		{"skuId":"cup","delivery":"none","name":"cup","price":100,"stock":60,"limitPerUser":5},
		{"skuId":"teapot","delivery":"none","name":"teapot","price":900,"stock":80,"shards":4},
		{"skuId":"saucer","delivery":"none","name":"saucer","price":50,"stock":1000}]`,
		Stack: local.StackConfig{
			PaymentTimeout: 10 * time.Minute, DynamoDBWrap: mw,
			Reconcile: func(c *reconcile.Config) {
				c.ConfirmDelay = 10 * time.Millisecond
				if tune != nil {
					tune(c)
				}
			},
		},
	})
}

// runReconcile runs the reconcile function as its schedule does.
func runReconcile(t testing.TB, h *stacktest.Stack) reconcile.Report {
	t.Helper()
	var rep reconcile.Report
	h.RunScheduled(t, "reconcile", &rep)
	return rep
}

func allDay(c *reconcile.Config) {
	c.Repair = true
	c.Window = reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC}
}

// traffic runs a random mix of what users and WeChat Pay do, on the clock: orders
// (some keyed and resent), payments (some resent, some after a cancel), cancels, and
// timeouts released by the sweep.
func traffic(t *testing.T, h *stacktest.Stack, rng *rand.Rand, steps int) {
	t.Helper()
	skus := []string{"cup", "teapot", "saucer"}
	var open []string
	owner := map[string]string{}
	for i := range steps {
		switch k := rng.IntN(10); {
		case k < 4 || len(open) == 0:
			user := fmt.Sprintf("u%d", rng.IntN(12))
			body := fmt.Sprintf(`{"items":[{"skuId":%q,"qty":%d},{"skuId":"saucer","qty":1}]}`, skus[rng.IntN(3)], 1+rng.IntN(3))
			headers := map[string]string{"Idempotency-Key": fmt.Sprintf("k%d", i)}
			status, out := h.Call(t, "POST", "/orders", user, headers, body)
			if status == http.StatusCreated {
				id := out["orderId"].(string)
				open, owner[id] = append(open, id), user
				if rng.IntN(3) == 0 { // a resent request replays the order
					if status, _ := h.Call(t, "POST", "/orders", user, headers, body); status != http.StatusOK {
						t.Fatalf("replay: %d", status)
					}
				}
			}
		case k < 7:
			id := open[rng.IntN(len(open))]
			status, out := h.Call(t, "POST", "/_local/pay/"+id, "", nil, "")
			switch {
			case status == http.StatusConflict: // paid already: WeChat Pay takes no second payment
			case status != http.StatusNoContent:
				t.Fatalf("pay %s: %d %v", id, status, out)
			case rng.IntN(2) == 0: // its notification sometimes resent
				if d, err := h.PayServer.Resend(context.Background(), id); err != nil || d.StatusCode != http.StatusNoContent {
					t.Fatalf("resend %s: %+v %v", id, d, err)
				}
			}
		case k < 9:
			id := open[rng.IntN(len(open))]
			if status, out := h.Call(t, "POST", "/orders/"+id+"/cancel", owner[id], nil, ""); status != http.StatusOK && status != http.StatusConflict {
				t.Fatalf("cancel %s: %d %v", id, status, out)
			}
		default:
			h.Clock.Advance(time.Duration(1+rng.IntN(12)) * time.Minute)
			if status, out := h.Call(t, "POST", "/_local/invoke/closeOrder", "", nil, ""); status != http.StatusOK {
				t.Fatalf("sweep: %d %v", status, out)
			}
		}
	}
}

// After random traffic, interleaved with reconciliations on a moving clock (so
// checkpoints fold while traffic goes on), every report is clean and agrees with a
// brute-force check of the whole tables.
func TestReconcile_CleanAfterRandomTraffic(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel() // each seed on its own stack
			h := newStack(t, nil)
			rng := rand.New(rand.NewPCG(seed, 7))
			for round := range 4 {
				traffic(t, h, rng, 40)
				h.Check(t)
				rep := runReconcile(t, h)
				if len(rep.Differences) != 0 || rep.SKUsChecked != 3 {
					t.Fatalf("round %d: report %+v, want 3 SKUs checked and no difference", round, rep)
				}
				h.Clock.Advance(time.Duration(1+rng.IntN(4)) * time.Minute)
			}
		})
	}
}

// drift is one way the books can go wrong behind the store's back.
type drift struct {
	name   string
	inject func(t *testing.T, h *stacktest.Stack) // changes the tables
	want   []reconcile.Difference                 // the SKU-level differences reported
	// full: the drift is in entries already folded into checkpoints, which only the
	// full re-check reads again (run a minute later, FullCheckEvery being a minute).
	full bool
}

func TestReconcile_ReportsEachInjectedDriftAndRepairsItOnce(t *testing.T) {
	for _, d := range []drift{
		{"available bumped", func(t *testing.T, h *stacktest.Stack) {
			h.Add(t, h.Tables.SKUs, "teapot#shard#1", "available", 3)
		}, []reconcile.Difference{{SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckAvailable), Expected: 74, Actual: 77}, {SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 6, Actual: 3}}, false},
		{"on-hand lowered", func(t *testing.T, h *stacktest.Stack) {
			h.Add(t, h.Tables.SKUs, "cup#shard#0", "onHand", -4)
		}, []reconcile.Difference{{SKU: "cup", Rule: reconcile.SKURule(reconcile.CheckOnHand), Expected: 58, Actual: 54}, {SKU: "cup", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 0, Actual: -4}}, false},
		{"ledger entry deleted", func(t *testing.T, h *stacktest.Stack) {
			var key string
			for _, it := range h.Scan(t, h.Tables.StockLog) {
				if it["op"] == string(inventory.OpReserve) && it["skuId"] == "teapot" {
					key = it["pk"].(string)
				}
			}
			h.Delete(t, h.Tables.StockLog, key)
		}, []reconcile.Difference{{SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckAvailable), Expected: 76, Actual: 74},
			{SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 4, Actual: 6}}, true},
	} {
		t.Run(d.name, func(t *testing.T) {
			h := newStack(t, func(c *reconcile.Config) {
				c.Repair = true
				c.Window = reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC}
				c.FullCheckEvery = time.Minute
			})
			settled(t, h)
			if rep := runReconcile(t, h); len(rep.Differences) != 0 {
				t.Fatalf("before the drift: %+v", rep.Differences)
			}
			d.inject(t, h)
			if d.full {
				h.Clock.Advance(time.Minute)
			}
			rep := runReconcile(t, h)
			var got []reconcile.Difference
			for _, diff := range rep.Differences {
				if !diff.Rule.OnShard {
					got = append(got, diff)
				}
			}
			if !slices.Equal(got, d.want) {
				t.Errorf("differences %+v (all: %+v), want %+v", got, rep.Differences, d.want)
			}
			if len(rep.Repaired) == 0 {
				t.Fatalf("repair enabled inside its window repaired nothing: %+v", rep)
			}
			for i := range 2 {
				if again := runReconcile(t, h); len(again.Differences) != 0 || len(again.Repaired) != 0 {
					t.Errorf("run %d after the repair: differences %+v, repaired %+v; want clean, nothing repaired again", i+1, again.Differences, again.Repaired)
				}
				h.Clock.Advance(3 * time.Minute) // fold the REPAIR entries into checkpoints
			}
			repairs := 0
			for _, it := range h.Scan(t, h.Tables.StockLog) {
				if it["op"] == string(inventory.OpRepair) {
					repairs++
				}
			}
			if repairs != 1 {
				t.Errorf("%d REPAIR entries, want 1 (one shard, once)", repairs)
			}
		})
	}
}

// settled places the orders the drift table counts on: teapot 6 units reserved over
// its shards (PENDING), cup 2 units paid.
func settled(t *testing.T, h *stacktest.Stack) {
	t.Helper()
	for i := range 3 {
		h.Order(t, fmt.Sprintf("t%d", i), `{"items":[{"skuId":"teapot","qty":2}]}`)
	}
	id := h.Order(t, "c", `{"items":[{"skuId":"cup","qty":2}]}`)
	if status, _ := h.Call(t, "POST", "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
		t.Fatal("pay refused")
	}
}

// A real drift on a SKU with live traffic is reported exactly: an order on it that
// lands after the stock was read (while another SKU's shard is cut) is in neither its
// counters nor its ledger sums at the cut.
func TestReconcile_TrafficDuringARunDoesNotHideADrift(t *testing.T) {
	var cuts atomic.Int32
	var hook atomic.Value // func()
	wrap := testkit.FailDynamoDB(func(op string, body []byte) bool {
		if strings.HasSuffix(op, ".UpdateItem") && bytes.Contains(body, []byte("SkusTable")) && bytes.Contains(body, []byte("ALL_OLD")) && cuts.Add(1) == 1 {
			if f, ok := hook.Load().(func()); ok {
				f() // one order during the run, as live traffic does
			}
		}
		return false
	})
	h := newStack(t, nil, wrap)
	if rep := runReconcile(t, h); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	h.Add(t, h.Tables.SKUs, "saucer#shard#0", "available", 40)
	h.Order(t, "other", `{"items":[{"skuId":"cup","qty":1}]}`) // cup's shard is cut next run
	cuts.Store(0)
	var ordered atomic.Bool
	hook.Store(func() {
		h.Call(t, "POST", "/orders", "buyer", nil, `{"items":[{"skuId":"saucer","qty":1}]}`)
		ordered.Store(true)
	})
	rep := runReconcile(t, h)
	if !ordered.Load() {
		t.Fatal("no order landed during the run")
	}
	want := []reconcile.Difference{{SKU: "saucer", Rule: reconcile.SKURule(reconcile.CheckAvailable), Expected: 1000, Actual: 1040},
		{SKU: "saucer", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 0, Actual: -40},
		{SKU: "saucer", Rule: reconcile.ShardRule(0, reconcile.CheckAvailableWithinOnHand), Expected: 1000, Actual: 1040}}
	if !slices.Equal(rep.Differences, want) {
		t.Errorf("with one order during the run: %+v, want %+v", rep.Differences, want)
	}
}

func TestReconcile_OverdueOrderIsReportedAndReleasedThroughCloseOrdersPath(t *testing.T) {
	h := newStack(t, func(c *reconcile.Config) {
		c.Repair = true
		c.Window = reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC}
	})
	id := h.Order(t, "late", `{"items":[{"skuId":"teapot","qty":3}]}`)
	h.Clock.Advance(10*time.Minute + 4*time.Minute) // past expiry, within the 5-minute grace
	if rep := runReconcile(t, h); len(rep.OverdueOrders) != 0 {
		t.Fatalf("within grace: overdue %v", rep.OverdueOrders)
	}
	h.Clock.Advance(2 * time.Minute)
	rep := runReconcile(t, h)
	if !slices.Equal(rep.OverdueOrders, []string{id}) || len(rep.Differences) != 0 {
		t.Fatalf("report %+v, want order %s overdue and no difference", rep, id)
	}
	if want := []reconcile.Repaired{{SKU: "teapot", Rule: "overdue " + id, Delta: 3}}; !slices.Equal(rep.Repaired, want) {
		t.Errorf("repaired %+v, want %+v", rep.Repaired, want)
	}
	// Released 16 minutes after ordering, 6 minutes after its expiry.
	lines, _ := h.Log.Lines()
	var lags []any
	for _, l := range lines {
		if v, ok := l["ReleaseLag"]; ok && l["Function"] == reconcile.MetricFunction {
			lags = append(lags, v)
		}
	}
	if len(lags) != 1 || lags[0] != float64(6*time.Minute/time.Millisecond) {
		t.Errorf("ReleaseLag samples %v, want one of %d ms", lags, 6*time.Minute/time.Millisecond)
	}
	_, out := h.Call(t, "GET", "/orders/"+id, "late", nil, "")
	if out["status"] != "CANCELLED" || out["cancelReason"] != "TIMEOUT" {
		t.Errorf("overdue order after repair: %v, want CANCELLED (TIMEOUT)", out)
	}
	if again := runReconcile(t, h); len(again.OverdueOrders) != 0 || len(again.Repaired) != 0 {
		t.Errorf("next run %+v, want nothing overdue, nothing repaired", again)
	}
	h.Check(t)
}

// Alerts go to the topic only past max(AlertUnits, AlertPercent % of on-hand).
func TestReconcile_AlertsOnlyBeyondTheThreshold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sku   string
		units int
		alert bool
	}{
		{"5 units on 60 (threshold 5)", "cup", 5, false},
		{"6 units on 60 (threshold 5)", "cup", 6, true},
		{"9 units on 1000 (threshold 10)", "saucer", 9, false},
		{"11 units on 1000 (threshold 10)", "saucer", 11, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newStack(t, nil)
			h.Add(t, h.Tables.SKUs, tc.sku+"#shard#0", "available", -tc.units)
			sent := &publisher{}
			r := reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.Clock.Now}), sent, slog.New(slog.NewJSONHandler(h.Log, nil)),
				reconcile.Config{Topic: "arn:aws:sns:us-east-1:000000000000:AlertsTopic", ConfirmDelay: time.Millisecond, Now: h.Clock.Now})
			rep, err := r.Run(context.Background())
			if err != nil || len(rep.Differences) == 0 {
				t.Fatalf("run: %+v %v", rep, err)
			}
			if got := len(sent.messages) > 0; got != tc.alert {
				t.Fatalf("published %v, want an alert: %v", sent.messages, tc.alert)
			}
			if tc.alert && (!strings.Contains(sent.messages[0], `"skuId": "`+tc.sku+`"`) || !strings.Contains(sent.messages[0], `"rule": "available"`)) {
				t.Errorf("alert message %s does not name %s and the rule", sent.messages[0], tc.sku)
			}
			lines, _ := h.Log.Lines()
			level := ""
			for _, l := range lines {
				if l["msg"] == "books differ" && l["skuId"] == tc.sku {
					level = l["level"].(string)
				}
			}
			if want := map[bool]string{true: "ERROR", false: "WARN"}[tc.alert]; level != want {
				t.Errorf("log level %q, want %s", level, want)
			}
		})
	}
}

// publisher records what would go to SNS; with err set, every Publish fails with it.
type publisher struct {
	mu       sync.Mutex
	messages []string
	err      error
}

func (p *publisher) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	p.messages = append(p.messages, aws.ToString(in.Message))
	return &sns.PublishOutput{}, nil
}

// An alert that cannot be published is not only a log line: the run completes and
// keeps its report, counts one AlertNotPublished, and the Lambda handler fails with
// ErrAlertNotPublished so that the invocation is an error (and is retried). A run with
// differences below the threshold publishes nothing and does not fail.
func TestReconcile_UnpublishedAlertFailsTheInvocation(t *testing.T) {
	for _, tc := range []struct {
		units int
		fail  bool
	}{{3, false}, {9, true}} {
		h := newStack(t, nil)
		h.Add(t, h.Tables.SKUs, "cup#shard#0", "available", -tc.units)
		sent := &publisher{err: errors.New("AuthorizationError: not allowed to publish")}
		r := reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.Clock.Now}), sent, slog.New(slog.NewJSONHandler(h.Log, nil)),
			reconcile.Config{Topic: "arn:aws:sns:us-east-1:000000000000:AlertsTopic", ConfirmDelay: time.Millisecond, Now: h.Clock.Now})
		rep, err := r.Handle(context.Background(), nil)
		if got := errors.Is(err, reconcile.ErrAlertNotPublished); got != tc.fail || rep == nil || len(rep.Differences) == 0 {
			t.Fatalf("%d units: report %+v, error %v; want differences and ErrAlertNotPublished %v", tc.units, rep, err, tc.fail)
		}
		lines, _ := h.Log.Lines()
		counted := 0
		for _, l := range lines {
			if l["AlertNotPublished"] == float64(1) {
				counted++
			}
		}
		if want := map[bool]int{true: 1}[tc.fail]; counted != want || rep.AlertNotPublished != tc.fail {
			t.Errorf("%d units: AlertNotPublished counted %d, report %v; want %d", tc.units, counted, rep.AlertNotPublished, want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	for _, tc := range []struct {
		in        string
		ok        bool
		inside    []string // HH:MM UTC
		notInside []string
	}{
		{"02:00-05:00", true, []string{"02:00", "04:59"}, []string{"01:59", "05:00", "12:00"}},
		{"23:00-01:30", true, []string{"23:00", "00:10", "01:29"}, []string{"01:30", "22:59", "12:00"}},
		{"02:00-02:00", false, nil, nil},
		{"2-5", false, nil, nil},
		{"25:00-05:00", false, nil, nil},
		{"02:00", false, nil, nil},
		{"", false, nil, nil},
	} {
		w, err := reconcile.ParseWindow(tc.in, time.UTC)
		if (err == nil) != tc.ok {
			t.Errorf("ParseWindow(%q) err = %v, want ok %v", tc.in, err, tc.ok)
			continue
		}
		at := func(hhmm string) time.Time {
			t, _ := time.Parse("15:04", hhmm)
			return time.Date(2026, 11, 11, t.Hour(), t.Minute(), 0, 0, time.UTC)
		}
		for _, s := range tc.inside {
			if !w.Contains(at(s)) {
				t.Errorf("%s should contain %s", tc.in, s)
			}
		}
		for _, s := range tc.notInside {
			if w.Contains(at(s)) {
				t.Errorf("%s should not contain %s", tc.in, s)
			}
		}
	}
	if (reconcile.Window{}).Contains(time.Now()) {
		t.Error("the zero window contains a time")
	}
}

func TestSettings_RejectsBadValuesByName(t *testing.T) {
	good := reconcile.Settings{RepairEnabled: "false", RepairWindow: "02:00-05:00", RepairTimezone: "Asia/Shanghai",
		AlertMinUnits: "5", AlertPercent: "1", OverdueGraceSeconds: "300", AlertsTopicARN: "arn:aws:sns:us-east-1:1:t", FullCheckDays: "7", RefundStuckSeconds: "1800"}
	cfg, err := good.Config()
	if err != nil || cfg.Repair || cfg.AlertUnits != 5 || cfg.AlertPercent != 1 || cfg.Grace != 5*time.Minute || cfg.Window.Loc.String() != "Asia/Shanghai" ||
		cfg.FullCheckEvery != 7*24*time.Hour || cfg.RefundStuck != 30*time.Minute {
		t.Fatalf("good settings: %+v %v", cfg, err)
	}
	for name, bad := range map[string]func(*reconcile.Settings){
		"REPAIR_ENABLED":        func(s *reconcile.Settings) { s.RepairEnabled = "yes please" },
		"REPAIR_WINDOW":         func(s *reconcile.Settings) { s.RepairWindow = "night" },
		"REPAIR_TIMEZONE":       func(s *reconcile.Settings) { s.RepairTimezone = "Mars/Olympus" },
		"ALERT_MIN_UNITS":       func(s *reconcile.Settings) { s.AlertMinUnits = "0" },
		"ALERT_PERCENT":         func(s *reconcile.Settings) { s.AlertPercent = "NaN" },
		"OVERDUE_GRACE_SECONDS": func(s *reconcile.Settings) { s.OverdueGraceSeconds = "-1" },
		"FULL_CHECK_DAYS":       func(s *reconcile.Settings) { s.FullCheckDays = "0" },
		"REFUND_STUCK_SECONDS":  func(s *reconcile.Settings) { s.RefundStuckSeconds = "soon" },
	} {
		s := good
		bad(&s)
		if _, err := s.Config(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("bad %s: %v, want an error naming it", name, err)
		}
	}
}

// Reshards move units with MOVE entries, delete shards and grow them again, and
// adjustments land on the grown shards: reconcile finds nothing at every step, nor
// does a full re-check of the whole ledger, and every shard's seq counts the ledger
// entries that moved it, those of its earlier life included.
func TestReconcile_CleanThroughReshardsAndAdjustments(t *testing.T) {
	h := newStack(t, func(c *reconcile.Config) { allDay(c); c.FullCheckEvery = time.Minute })
	clean := func(step string) {
		t.Helper()
		if rep := runReconcile(t, h); len(rep.Differences) != 0 || len(rep.Repaired) != 0 || len(rep.Unrepaired) != 0 {
			t.Fatalf("%s: %+v", step, rep)
		}
	}
	admin := func(method, path, body string, want int) {
		t.Helper()
		if status, out := h.Call(t, method, path, "", nil, body); status != want || method == http.MethodPut && out["complete"] != true {
			t.Fatalf("%s %s %s: %d %v", method, path, body, status, out)
		}
	}
	buy := func(user string, qty int, pay bool) string {
		t.Helper()
		id := h.Order(t, user, fmt.Sprintf(`{"items":[{"skuId":"teapot","qty":%d}]}`, qty))
		if pay {
			if status, _ := h.Call(t, "POST", "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
				t.Fatal("pay refused")
			}
		}
		return id
	}
	clean("start")
	buy("a", 5, true)
	admin("PUT", "/admin/skus/teapot/shards", `{"shards":8}`, http.StatusOK)
	clean("4 → 8")
	admin("POST", "/admin/skus/teapot/adjustments", `{"adjustmentId":"restock-1","delta":16,"reason":"delivery"}`, http.StatusCreated)
	pending := buy("b", 7, false)
	buy("c", 3, true)
	clean("adjusted and sold on 8 shards")
	if status, _ := h.Call(t, "POST", "/orders/"+pending+"/cancel", "b", nil, ""); status != http.StatusOK {
		t.Fatal("cancel refused")
	}
	admin("PUT", "/admin/skus/teapot/shards", `{"shards":2}`, http.StatusOK)
	clean("8 → 2: six shards deleted")
	buy("e", 60, true) // more sold from shards 0 and 1 than was ever stocked on them
	clean("sold from the two shards left")
	admin("PUT", "/admin/skus/teapot/shards", `{"shards":6}`, http.StatusOK)
	buy("d", 9, true)
	admin("POST", "/admin/skus/teapot/adjustments", `{"adjustmentId":"loss-1","delta":-4,"reason":"broken"}`, http.StatusCreated)
	clean("2 → 6: four shards grown again")
	admin("PUT", "/admin/skus/teapot/shards", `{"shards":3}`, http.StatusOK)
	clean("6 → 3")
	h.Clock.Advance(time.Minute)
	clean("full re-check")
	entries := map[string]int{} // shard item key → ledger entries on it
	for _, e := range h.Scan(t, h.Tables.StockLog) {
		shards, _ := e["shards"].(map[string]any)
		for n := range shards {
			entries[e["skuId"].(string)+"#shard#"+n]++
		}
	}
	for _, it := range h.Scan(t, h.Tables.SKUs) {
		if it["kind"] == "SHARD" && it["skuId"] == "teapot" {
			if seq, _ := it["seq"].(float64); int(seq) != entries[it["pk"].(string)] {
				t.Errorf("%s: seq %v, %d ledger entries", it["pk"], it["seq"], entries[it["pk"].(string)])
			}
		}
	}
}

// The money side: refunds with their RETURN entries are clean; one left REFUNDING past
// the bound is reported; a RETURN entry gone missing is a refund problem.
func TestReconcile_MoneySideOfRefunds(t *testing.T) {
	h := newStack(t, nil)
	orders := make([]string, 3)
	for i := range orders {
		orders[i] = h.Order(t, fmt.Sprint("buyer-", i), `{"items":[{"skuId":"cup","qty":1},{"skuId":"teapot","qty":2}]}`)
		if code, out := h.Call(t, "POST", "/_local/pay/"+orders[i], "", nil, ""); code != http.StatusNoContent {
			t.Fatalf("pay: %d %v", code, out)
		}
	}
	refund := func(id string, restock bool) {
		t.Helper()
		if code, out := h.Call(t, "POST", "/admin/orders/"+id+"/refund", "", nil, fmt.Sprintf(`{"restock":%v,"reason":"test"}`, restock)); code != http.StatusAccepted {
			t.Fatalf("refund: %d %v", code, out)
		}
	}
	refund(orders[0], true)
	refund(orders[1], false)
	o := h.Lookup(t, orders[0])
	if _, _, err := h.Store.MarkRefunded(t.Context(), inventory.RefundResult{OutRefundNo: o.Refunds[0].OutRefundNo, OutTradeNo: o.ID, Amount: o.Amount, State: "SUCCESS"}); err != nil {
		t.Fatal(err)
	}
	if rep := runReconcile(t, h); len(rep.Differences)+len(rep.RefundProblems)+len(rep.StuckRefunds) != 0 {
		t.Fatalf("after refunds: %+v", rep)
	}
	h.Clock.Advance(31 * time.Minute)
	if rep := runReconcile(t, h); len(rep.StuckRefunds) != 1 || rep.StuckRefunds[0] != inventory.OutRefundNo(orders[1], 1) || len(rep.RefundProblems) != 0 {
		t.Errorf("31 minutes on: stuck %v, problems %v; want the REFUNDING one stuck", rep.StuckRefunds, rep.RefundProblems)
	}
	refund(orders[2], true)
	h.Delete(t, h.Tables.StockLog, orders[2]+"#RETURN#teapot")
	rep := runReconcile(t, h)
	if len(rep.RefundProblems) != 1 || !strings.Contains(rep.RefundProblems[0], orders[2]) || !strings.Contains(rep.RefundProblems[0], "teapot") {
		t.Errorf("a RETURN entry deleted: problems %v", rep.RefundProblems)
	}
	if len(h.Logged(t, "msg", "refunds need a look")) == 0 {
		t.Error("no error log line for refunds needing a look")
	}
}

// Refunds racing a reconcile that repairs: the refunds' shard updates are conditioned
// on the epoch a run's cut moves on, so they are sent again; the books stay balanced.
func TestReconcile_RefundsRacingARepairingRun(t *testing.T) {
	h := newStack(t, allDay)
	var ids []string
	for i := range 12 {
		id := h.Order(t, fmt.Sprint("buyer-", i), `{"items":[{"skuId":"teapot","qty":3}]}`)
		if code, _ := h.Call(t, "POST", "/_local/pay/"+id, "", nil, ""); code != http.StatusNoContent {
			t.Fatal("pay")
		}
		ids = append(ids, id)
	}
	h.Add(t, h.Tables.SKUs, "teapot#shard#1", "available", -1) // a drifted counter for the run to repair
	h.Add(t, h.Tables.SKUs, "teapot#shard#1", "reserved", 1)
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if code, out := h.Call(t, "POST", "/admin/orders/"+id+"/refund", "", nil, `{"restock":true,"reason":"race"}`); code != http.StatusAccepted {
				t.Errorf("refund: %d %v", code, out)
			}
		})
	}
	wg.Go(func() { runReconcile(t, h) })
	wg.Wait()
	for range 3 { // whatever the first run saw, later runs settle clean
		if rep := runReconcile(t, h); len(rep.Differences) == 0 && len(rep.RefundProblems) == 0 {
			break
		}
	}
	if rep := runReconcile(t, h); len(rep.Differences) != 0 || len(rep.RefundProblems) != 0 {
		t.Errorf("after the race: %+v", rep)
	}
	if got := h.OnHand(t, "teapot"); got != 80 {
		t.Errorf("teapot on-hand %d, want 80 (every unit returned)", got)
	}
	h.Check(t)
}
