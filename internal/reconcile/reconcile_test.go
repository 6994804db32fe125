package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/booktest"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/local"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testkit"
)

// These tests run the whole local stack (embedded DynamoDB, tables and functions from
// template.yaml) on a settable clock, drive real traffic through its HTTP API, and
// reconcile through the reconcile function or a Reconciler over the same tables.

type harness struct {
	*local.Stack
	clock *testkit.Clock
	log   *testkit.Log
}

// newHarness starts the stack; tune adjusts reconcile's configuration (nil: the
// template's, with a short confirmation delay).
func newHarness(t *testing.T, tune func(*reconcile.Config), wrap ...local.Middleware) *harness {
	t.Helper()
	h := &harness{clock: testkit.NewClock(), log: &testkit.Log{}}
	var mw local.Middleware
	if len(wrap) > 0 {
		mw = wrap[0]
	}
	stack, err := local.Start(context.Background(), local.StackConfig{
		Template: "../../template.yaml", Now: h.clock.Now, PaymentTimeout: 10 * time.Minute, DynamoDBWrap: mw,
		Logger: slog.New(slog.NewJSONHandler(h.log, nil)),
		Reconcile: func(c *reconcile.Config) {
			c.ConfirmDelay = 10 * time.Millisecond
			if tune != nil {
				tune(c)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stack.Close() })
	h.Stack = stack
	if err := stack.Seed(context.Background(), strings.NewReader(`[
		{"skuId":"cup","name":"cup","price":100,"stock":60,"limitPerUser":5},
		{"skuId":"teapot","name":"teapot","price":900,"stock":80,"shards":4},
		{"skuId":"saucer","name":"saucer","price":50,"stock":1000}]`)); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) call(t testing.TB, method, path, user string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	return testkit.Call(h.API, method, path, user, headers, body)
}

// reconcile runs the reconcile function as its schedule does.
func (h *harness) reconcile(t testing.TB) reconcile.Report {
	t.Helper()
	rec := httptest.NewRecorder()
	h.API.ServeHTTP(rec, httptest.NewRequest("POST", "/_local/invoke/reconcile", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("reconcile: %d %s", rec.Code, rec.Body.String())
	}
	var rep reconcile.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("reconcile result %s: %v", rec.Body.String(), err)
	}
	return rep
}

func (h *harness) order(t testing.TB, user, body string) (string, bool) {
	t.Helper()
	status, out := h.call(t, "POST", "/orders", user, nil, body)
	if status != http.StatusCreated {
		return "", false
	}
	return out["orderId"].(string), true
}

// update sets attributes of a stock item behind the store's back, as an operator
// with console access might.
func (h *harness) update(t testing.TB, table, pk, expr string, values map[string]types.AttributeValue) {
	t.Helper()
	if _, err := h.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
		UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
	}); err != nil {
		t.Fatal(err)
	}
}

func n(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }

// traffic runs a random mix of what users and WeChat Pay do, on the clock: orders
// (some keyed and resent), payments (some resent, some after a cancel), cancels, and
// timeouts released by the sweep.
func (h *harness) traffic(t *testing.T, rng *rand.Rand, steps int) {
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
			status, out := h.call(t, "POST", "/orders", user, headers, body)
			if status == http.StatusCreated {
				id := out["orderId"].(string)
				open, owner[id] = append(open, id), user
				if rng.IntN(3) == 0 { // a resent request replays the order
					if status, _ := h.call(t, "POST", "/orders", user, headers, body); status != http.StatusOK {
						t.Fatalf("replay: %d", status)
					}
				}
			}
		case k < 7:
			id := open[rng.IntN(len(open))]
			for range 1 + rng.IntN(2) { // sometimes resent
				if status, out := h.call(t, "POST", "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
					t.Fatalf("pay %s: %d %v", id, status, out)
				}
			}
		case k < 9:
			id := open[rng.IntN(len(open))]
			if status, out := h.call(t, "POST", "/orders/"+id+"/cancel", owner[id], nil, ""); status != http.StatusOK && status != http.StatusConflict {
				t.Fatalf("cancel %s: %d %v", id, status, out)
			}
		default:
			h.clock.Advance(time.Duration(1+rng.IntN(12)) * time.Minute)
			if status, out := h.call(t, "POST", "/_local/invoke/closeOrder", "", nil, ""); status != http.StatusOK {
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
			h := newHarness(t, nil)
			rng := rand.New(rand.NewPCG(seed, 7))
			for round := range 6 {
				h.traffic(t, rng, 40)
				booktest.Check(t, h.DB, h.Tables)
				rep := h.reconcile(t)
				if len(rep.Differences) != 0 || rep.SKUsChecked != 3 {
					t.Fatalf("round %d: report %+v, want 3 SKUs checked and no difference", round, rep)
				}
				h.clock.Advance(time.Duration(1+rng.IntN(4)) * time.Minute)
			}
		})
	}
}

// drift is one way the books can go wrong behind the store's back.
type drift struct {
	name   string
	inject func(t *testing.T, h *harness) // changes the tables
	want   []reconcile.Difference         // the SKU-level differences reported
	// full: the drift is in entries already folded into checkpoints, which only the
	// full re-check reads again (run a minute later, FullCheckEvery being a minute).
	full bool
}

func TestReconcile_ReportsEachInjectedDriftAndRepairsItOnce(t *testing.T) {
	for _, d := range []drift{
		{"available bumped", func(t *testing.T, h *harness) {
			h.update(t, h.Tables.SKUs, "teapot#shard#1", "SET available = available + :d", map[string]types.AttributeValue{":d": n(3)})
		}, []reconcile.Difference{{SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckAvailable), Expected: 74, Actual: 77}, {SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 6, Actual: 3}}, false},
		{"on-hand lowered", func(t *testing.T, h *harness) {
			h.update(t, h.Tables.SKUs, "cup#shard#0", "SET onHand = onHand - :d", map[string]types.AttributeValue{":d": n(4)})
		}, []reconcile.Difference{{SKU: "cup", Rule: reconcile.SKURule(reconcile.CheckOnHand), Expected: 58, Actual: 54}, {SKU: "cup", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 0, Actual: -4}}, false},
		{"ledger entry deleted", func(t *testing.T, h *harness) {
			var key string
			for _, it := range scan(t, h, h.Tables.StockLog) {
				if it["op"] == dynamo.OpReserve && it["skuId"] == "teapot" {
					key = it["pk"].(string)
				}
			}
			if _, err := h.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
				TableName: aws.String(h.Tables.StockLog), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
			}); err != nil {
				t.Fatal(err)
			}
		}, []reconcile.Difference{{SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckAvailable), Expected: 76, Actual: 74},
			{SKU: "teapot", Rule: reconcile.SKURule(reconcile.CheckReserved), Expected: 4, Actual: 6}}, true},
	} {
		t.Run(d.name, func(t *testing.T) {
			h := newHarness(t, func(c *reconcile.Config) {
				c.Repair = true
				c.Window = reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC}
				c.FullCheckEvery = time.Minute
			})
			h.settled(t)
			if rep := h.reconcile(t); len(rep.Differences) != 0 {
				t.Fatalf("before the drift: %+v", rep.Differences)
			}
			d.inject(t, h)
			if d.full {
				h.clock.Advance(time.Minute)
			}
			rep := h.reconcile(t)
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
				if again := h.reconcile(t); len(again.Differences) != 0 || len(again.Repaired) != 0 {
					t.Errorf("run %d after the repair: differences %+v, repaired %+v; want clean, nothing repaired again", i+1, again.Differences, again.Repaired)
				}
				h.clock.Advance(3 * time.Minute) // fold the REPAIR entries into checkpoints
			}
			repairs := 0
			for _, it := range scan(t, h, h.Tables.StockLog) {
				if it["op"] == dynamo.OpRepair {
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
func (h *harness) settled(t *testing.T) {
	t.Helper()
	for i := range 3 {
		if _, ok := h.order(t, fmt.Sprintf("t%d", i), `{"items":[{"skuId":"teapot","qty":2}]}`); !ok {
			t.Fatal("teapot order refused")
		}
	}
	id, ok := h.order(t, "c", `{"items":[{"skuId":"cup","qty":2}]}`)
	if !ok {
		t.Fatal("cup order refused")
	}
	if status, _ := h.call(t, "POST", "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
		t.Fatal("pay refused")
	}
}

func scan(t testing.TB, h *harness, table string) []map[string]any {
	t.Helper()
	items, err := booktest.Scan(context.Background(), h.DB, table)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func TestReconcile_OverdueOrderIsReportedAndReleasedThroughCloseOrdersPath(t *testing.T) {
	h := newHarness(t, func(c *reconcile.Config) {
		c.Repair = true
		c.Window = reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC}
	})
	id, _ := h.order(t, "late", `{"items":[{"skuId":"teapot","qty":3}]}`)
	h.clock.Advance(10*time.Minute + 4*time.Minute) // past expiry, within the 5-minute grace
	if rep := h.reconcile(t); len(rep.OverdueOrders) != 0 {
		t.Fatalf("within grace: overdue %v", rep.OverdueOrders)
	}
	h.clock.Advance(2 * time.Minute)
	rep := h.reconcile(t)
	if !slices.Equal(rep.OverdueOrders, []string{id}) || len(rep.Differences) != 0 {
		t.Fatalf("report %+v, want order %s overdue and no difference", rep, id)
	}
	if want := []reconcile.Repaired{{SKU: "teapot", Rule: "overdue " + id, Delta: 3}}; !slices.Equal(rep.Repaired, want) {
		t.Errorf("repaired %+v, want %+v", rep.Repaired, want)
	}
	_, out := h.call(t, "GET", "/orders/"+id, "late", nil, "")
	if out["status"] != "CANCELLED" || out["cancelReason"] != "TIMEOUT" {
		t.Errorf("overdue order after repair: %v, want CANCELLED (TIMEOUT)", out)
	}
	if again := h.reconcile(t); len(again.OverdueOrders) != 0 || len(again.Repaired) != 0 {
		t.Errorf("next run %+v, want nothing overdue, nothing repaired", again)
	}
	booktest.Check(t, h.DB, h.Tables)
}

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
			h := newHarness(t, func(c *reconcile.Config) { c.Repair, c.Window = tc.enabled, w })
			h.update(t, h.Tables.SKUs, "saucer#shard#0", "SET available = available + :d", map[string]types.AttributeValue{":d": n(7)})
			counters := func() string { // the shard items but their epoch (every run cuts): checkpoints may move
				items := slices.DeleteFunc(scan(t, h, h.Tables.SKUs), func(it map[string]any) bool { return it["kind"] != "SHARD" })
				for _, it := range items {
					delete(it, "epoch")
				}
				return fmt.Sprint(items)
			}
			skus := counters()
			rep := h.reconcile(t)
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
			h := newHarness(t, nil)
			h.update(t, h.Tables.SKUs, tc.sku+"#shard#0", "SET available = available - :d", map[string]types.AttributeValue{":d": n(tc.units)})
			sent := &publisher{}
			r := reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.clock.Now}), sent, slog.New(slog.NewJSONHandler(h.log, nil)),
				reconcile.Config{Topic: "arn:aws:sns:us-east-1:000000000000:AlertsTopic", ConfirmDelay: time.Millisecond, Now: h.clock.Now})
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
			lines, _ := h.log.Lines()
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

// publisher records what would go to SNS.
type publisher struct {
	mu       sync.Mutex
	messages []string
}

func (p *publisher) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.messages = append(p.messages, aws.ToString(in.Message))
	return &sns.PublishOutput{}, nil
}

// A run reads the catalogue, the open orders and only the ledger entries written since
// its checkpoint: with no traffic, none; after k one-line orders, k.
func TestReconcile_ReadsOnlyTheLedgerEntriesWrittenSinceItsCheckpoint(t *testing.T) {
	h := newHarness(t, nil)
	r := reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.clock.Now}), nil, slog.New(slog.DiscardHandler),
		reconcile.Config{ConfirmDelay: time.Millisecond, Now: h.clock.Now})
	run := func() *reconcile.Report {
		t.Helper()
		rep, err := r.Run(context.Background())
		if err != nil || len(rep.Differences) != 0 {
			t.Fatalf("run: %+v %v", rep, err)
		}
		return rep
	}
	first := run() // no watermark yet: reads the whole ledger once (3 ADJUST entries)
	if first.LedgerEntriesRead != 3 {
		t.Errorf("first run read %d ledger entries, want all 3", first.LedgerEntriesRead)
	}
	h.clock.Advance(3 * time.Minute)
	run() // folds the ADJUST entries into checkpoints
	h.clock.Advance(3 * time.Minute)
	if idle := run(); idle.LedgerEntriesRead != 0 {
		t.Errorf("idle run read %d ledger entries, want 0", idle.LedgerEntriesRead)
	}
	for i := range 5 {
		h.order(t, fmt.Sprintf("b%d", i), `{"items":[{"skuId":"saucer","qty":1}]}`)
	}
	if busy := run(); busy.LedgerEntriesRead != 5 {
		t.Errorf("run after 5 orders read %d ledger entries, want 5", busy.LedgerEntriesRead)
	}
}

// Two runs at once cannot fold the same entries twice: the checkpoints are
// conditioned on what each read.
func TestReconcile_ConcurrentRunsKeepTheCheckpointsRight(t *testing.T) {
	h := newHarness(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		h.traffic(t, rng, 30)
		h.clock.Advance(3 * time.Minute)
		testkit.Parallel(4, func(int) {
			rec := httptest.NewRecorder()
			h.API.ServeHTTP(rec, httptest.NewRequest("POST", "/_local/invoke/reconcile", bytes.NewReader(nil)))
			if rec.Code != http.StatusOK {
				t.Errorf("reconcile: %d %s", rec.Code, rec.Body.String())
			}
		})
	}
	h.clock.Advance(3 * time.Minute)
	for range 2 {
		if rep := h.reconcile(t); len(rep.Differences) != 0 {
			t.Errorf("after concurrent runs: %+v", rep.Differences)
		}
	}
}

// A run that saved checkpoints but not the watermark (it failed, or another run moved
// it) leaves checkpoints ahead of the watermark; the next runs must not count the
// entries between them twice.
func TestReconcile_CheckpointsAheadOfTheWatermarkAreNotCountedTwice(t *testing.T) {
	var failWatermark atomic.Bool
	wrap := testkit.FailDynamoDB(func(op string, body []byte) bool {
		return failWatermark.Load() && strings.HasSuffix(op, ".PutItem") && bytes.Contains(body, []byte("reconcile#watermark"))
	})
	h := newHarness(t, nil, wrap)
	rng := rand.New(rand.NewPCG(3, 4))
	h.reconcile(t) // the first run sets the watermark
	for round := range 4 {
		h.traffic(t, rng, 25)
		h.clock.Advance(5 * time.Minute)
		failWatermark.Store(round%2 == 0)
		if rep := h.reconcile(t); len(rep.Differences) != 0 {
			t.Fatalf("round %d: %+v", round, rep.Differences)
		}
	}
	failWatermark.Store(false)
	h.clock.Advance(5 * time.Minute)
	if rep := h.reconcile(t); len(rep.Differences) != 0 {
		t.Errorf("after watermark failures: %+v", rep.Differences)
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
		AlertMinUnits: "5", AlertPercent: "1", OverdueGraceSeconds: "300", AlertsTopicARN: "arn:aws:sns:us-east-1:1:t", FullCheckDays: "7"}
	cfg, err := good.Config()
	if err != nil || cfg.Repair || cfg.AlertUnits != 5 || cfg.AlertPercent != 1 || cfg.Grace != 5*time.Minute || cfg.Window.Loc.String() != "Asia/Shanghai" ||
		cfg.FullCheckEvery != 7*24*time.Hour {
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
	} {
		s := good
		bad(&s)
		if _, err := s.Config(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("bad %s: %v, want an error naming it", name, err)
		}
	}
}
