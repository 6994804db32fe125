package history_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

var (
	seedFlag = flag.Uint64("seed", 0, "replay the history of this seed only (0: the default seeds)")
	opsFlag  = flag.Int("history.ops", 16, "operations each of a history's three workers runs (30: the long histories)")
	forFlag  = flag.Duration("history.for", 0, "how long each of three soak histories runs (default: 1.5s each, two histories; 7s gives the 21 s soak)")
)

// seeds are the histories a test runs: -seed's alone, else defaults.
func seeds(defaults ...uint64) []uint64 {
	if *seedFlag != 0 {
		return []uint64{*seedFlag}
	}
	return defaults
}

// Fault kinds on the close-order queue's side.
const (
	queueDelayed   = "delayed delivery"
	queueDuplicate = "duplicate delivery"
	queueReordered = "reordered batch"
	queueRetried   = "close invocation retried"
)

// history is one seeded run over a fresh local stack.
type history struct {
	t      testing.TB
	seed   uint64
	stack  *stacktest.Stack
	clock  *testkit.Clock
	faults *faults
	rec    *reconcile.Reconciler
	alerts *publisher

	mu     sync.Mutex
	orders map[string]string // acknowledged order id → its user
	ids    []string          // the same, in order
	queue  []closeq.Message  // close messages not yet delivered

	// resent and retried make the first keyed order resent and the first close batch's
	// invocation retried, whatever the draws: every history, however short, has both.
	resent, retried atomic.Bool

	ops         sync.Map // op name → *atomic.Int64
	sqs         sync.Map // SQS-side fault kind → *atomic.Int64
	runs, diffs atomic.Int64
	diffSeen    atomic.Value // the first difference reported, as text

	refundsSettled int // refunds under way that settle delivered to the refund function
}

// publisher counts the alerts reconcile publishes.
type publisher struct{ n atomic.Int64 }

func (p *publisher) Publish(context.Context, *sns.PublishInput, ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.n.Add(1)
	return &sns.PublishOutput{}, nil
}

func newHistory(t testing.TB, seed uint64, f *faults) *history {
	t.Helper()
	h := &history{t: t, seed: seed, faults: f, alerts: &publisher{}, orders: map[string]string{}}
	h.stack = stacktest.New(t, stacktest.Options{
		Seed: `[
		{"skuId":"cup","delivery":"none","name":"cup","price":100,"stock":40,"limitPerUser":4},
		{"skuId":"teapot","delivery":"none","name":"teapot","price":900,"stock":60,"shards":4},
		{"skuId":"saucer","delivery":"none","name":"saucer","price":50,"stock":25}]`,
		Stack: local.StackConfig{PaymentTimeout: 5 * time.Minute, DynamoDBWrap: f.wrap},
	})
	h.clock = h.stack.Clock
	f.on.Store(true)
	h.rec = reconcile.New(dynamo.New(h.stack.DB, h.stack.Tables, dynamo.Options{Now: h.clock.Now}), h.alerts, slog.New(slog.DiscardHandler),
		reconcile.Config{ConfirmDelay: 5 * time.Millisecond, Now: h.clock.Now, Topic: "arn:aws:sns:us-east-1:000000000000:alerts"})
	return h
}

func (h *history) count(m *sync.Map, name string) {
	v, _ := m.LoadOrStore(name, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func counts(m *sync.Map) map[string]int64 {
	out := map[string]int64{}
	m.Range(func(k, v any) bool { out[k.(string)] = v.(*atomic.Int64).Load(); return true })
	return out
}

// run drives workers concurrent buyers and payers for ops operations each (or until
// d has passed, when d > 0), with two reconcile loops running back to back meanwhile
// (3 ms between runs).
func (h *history) run(workers, ops int, d time.Duration) {
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 { // two at once, as overlapping schedules or retries run them
		wg.Go(func() { h.reconcileLoop(ctx) })
	}
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	testkit.Parallel(workers, func(w int) {
		rng := rand.New(rand.NewPCG(h.seed, uint64(w)))
		for i := 0; d > 0 && time.Now().Before(deadline) || d == 0 && i < ops; i++ {
			h.step(rng)
		}
	})
	stop()
	wg.Wait()
}

// reconcileLoop runs reconcile every few milliseconds until ctx is done, keeping the
// differences it reports.
func (h *history) reconcileLoop(ctx context.Context) {
	for ctx.Err() == nil {
		rep, err := h.rec.Run(context.Background())
		h.runs.Add(1)
		if err == nil && len(rep.Differences) > 0 {
			h.diffs.Add(int64(len(rep.Differences)))
			h.diffSeen.CompareAndSwap(nil, fmt.Sprintf("%+v", rep.Differences))
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// step is one random operation.
func (h *history) step(rng *rand.Rand) {
	switch p := rng.IntN(100); {
	case p < 40:
		h.order(rng)
	case p < 58:
		h.pay(rng)
	case p < 68:
		h.cancel(rng)
	case p < 84:
		h.deliver(rng)
	case p < 92:
		h.clock.Advance(time.Duration(rng.IntN(90)+1) * time.Second)
		h.count(&h.ops, "clock moved")
	default:
		h.call(http.MethodPost, "/_local/invoke/closeOrder", "", nil, "")
		h.count(&h.ops, "sweep")
	}
}

func (h *history) call(method, path, user string, headers map[string]string, body string) (int, map[string]any) {
	return h.stack.Call(h.t, method, path, user, headers, body)
}

// pick is a random acknowledged order and its user ("" when none yet).
func (h *history) pick(rng *rand.Rand) (string, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ids) == 0 {
		return "", ""
	}
	id := h.ids[rng.IntN(len(h.ids))]
	return id, h.orders[id]
}

// order places a random order; a keyed one is sometimes sent twice, as a retried
// invocation would be.
func (h *history) order(rng *rand.Rand) {
	user := fmt.Sprintf("u%d", rng.IntN(12))
	sku := []string{"cup", "teapot", "saucer"}[rng.IntN(3)]
	body := fmt.Sprintf(`{"items":[{"skuId":%q,"qty":%d}]}`, sku, rng.IntN(3)+1)
	var headers map[string]string
	if rng.IntN(3) == 0 {
		headers = map[string]string{"Idempotency-Key": fmt.Sprintf("k-%d-%d", h.seed, rng.Uint64())}
	}
	sends := 1
	if headers != nil && (rng.IntN(4) == 0 || h.resent.CompareAndSwap(false, true)) {
		sends = 2
		h.count(&h.ops, "order invocation retried")
	}
	for range sends {
		status, out := h.call(http.MethodPost, "/orders", user, headers, body)
		h.count(&h.ops, fmt.Sprintf("order → %d", status))
		if status != http.StatusCreated && status != http.StatusOK {
			continue
		}
		id, _ := out["orderId"].(string)
		expires, _ := time.Parse(time.RFC3339, fmt.Sprint(out["expiresAt"]))
		h.mu.Lock()
		if _, seen := h.orders[id]; !seen && id != "" {
			h.orders[id] = user
			h.ids = append(h.ids, id)
			h.queue = append(h.queue, closeq.Message{OrderID: id, ExpiresAt: expires})
		}
		h.mu.Unlock()
	}
}

// pay notifies a payment of a random order, sometimes twice (a resent notification).
func (h *history) pay(rng *rand.Rand) {
	id, _ := h.pick(rng)
	if id == "" {
		return
	}
	for range 1 + rng.IntN(2) {
		status, _ := h.call(http.MethodPost, "/_local/pay/"+id, "", nil, "")
		h.count(&h.ops, fmt.Sprintf("pay → %d", status))
	}
}

func (h *history) cancel(rng *rand.Rand) {
	id, user := h.pick(rng)
	if id == "" {
		return
	}
	status, _ := h.call(http.MethodPost, "/orders/"+id+"/cancel", user, nil, "")
	h.count(&h.ops, fmt.Sprintf("cancel → %d", status))
}

// deliver hands closeOrder a batch of the close messages that are due, as the SQS
// event source would, with the queue's faults: a message delivered twice in the
// batch, a message held back for a later batch, the batch reordered, and the whole
// invocation retried.
func (h *history) deliver(rng *rand.Rand) {
	now := h.clock.Now()
	h.mu.Lock()
	var batch, keep []closeq.Message
	for _, m := range h.queue {
		switch {
		case len(batch) >= 5 || m.ExpiresAt.After(now):
			keep = append(keep, m)
		case rng.IntN(5) == 0:
			keep = append(keep, m)
			h.count(&h.sqs, queueDelayed)
		default:
			batch = append(batch, m)
		}
	}
	h.queue = keep
	h.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if rng.IntN(2) == 0 {
		batch = append(batch, batch[rng.IntN(len(batch))])
		h.count(&h.sqs, queueDuplicate)
	}
	if len(batch) > 1 && rng.IntN(2) == 0 {
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		h.count(&h.sqs, queueReordered)
	}
	var ev events.SQSEvent
	for i, m := range batch {
		body, _ := json.Marshal(m)
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m-%d-%d", rng.Uint64(), i), Body: string(body),
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:CloseOrderQueue", AWSRegion: "us-east-1"})
	}
	payload, _ := json.Marshal(ev)
	invocations := 1
	if rng.IntN(3) == 0 || h.retried.CompareAndSwap(false, true) {
		invocations = 2
		h.count(&h.sqs, queueRetried)
	}
	for range invocations {
		out, err := h.stack.Handlers["CloseOrderFunction"].Invoke(context.Background(), payload)
		h.count(&h.ops, "close batch delivered")
		var resp events.SQSEventResponse
		if err != nil || json.Unmarshal(out, &resp) != nil {
			h.requeue(batch) // the whole batch comes back
			continue
		}
		for _, f := range resp.BatchItemFailures { // those come back
			for i, r := range ev.Records {
				if r.MessageId == f.ItemIdentifier {
					h.requeue(batch[i : i+1])
				}
			}
		}
	}
}

func (h *history) requeue(ms []closeq.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = append(h.queue, ms...)
}

// settle stops the DynamoDB faults, moves past every payment window, delivers what
// the queue still holds and sweeps until nothing is PENDING.
func (h *history) settle() {
	h.faults.on.Store(false)
	h.clock.Advance(10 * time.Minute)
	rng := rand.New(rand.NewPCG(h.seed, 0x5e771e))
	for range 20 { // the queue's last deliveries, still with its faults
		h.deliver(rng)
	}
	for range 5 { // a sweep queries every PendingByExpiry bucket: no more than needed
		h.call(http.MethodPost, "/_local/invoke/closeOrder", "", nil, "")
		if states, _ := h.endStates(); states[string(inventory.StatusPending)] == 0 {
			break
		}
	}
	h.settleRefunds()
}

// settleRefunds delivers one refund message for every refund under way (the harness
// runs no refund queue: a late payment's refund, or a second payment's, waits here)
// to the refund function, as SQS would, and waits for the WeChat Pay stand-in's refund
// notifications: every refund owed then ends REFUNDED, which check verifies.
func (h *history) settleRefunds() {
	ctx := context.Background()
	store := dynamo.New(h.stack.DB, h.stack.Tables, dynamo.Options{Now: h.clock.Now})
	var ev events.SQSEvent
	for no, err := range store.RefundingBefore(ctx, h.clock.Now().Add(time.Hour)) {
		if err != nil {
			h.t.Errorf("list refunds under way: %v", err)
			return
		}
		body, _ := json.Marshal(refunds.Message{OutRefundNo: no})
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: "refund-" + no, Body: string(body), EventSource: "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:RefundQueue", AWSRegion: "us-east-1"})
	}
	h.refundsSettled = len(ev.Records)
	if len(ev.Records) > 0 {
		payload, _ := json.Marshal(ev)
		if _, err := h.stack.Handlers["RefundFunction"].Invoke(ctx, payload); err != nil {
			h.t.Errorf("refund batch: %v", err)
		}
	}
	h.stack.PayServer.WaitDeliveries()
}

// endStates counts the orders by status; an order still REFUND_PENDING or REFUNDING
// after settling is a refund owed and never made.
func (h *history) endStates() (map[string]int, []string) {
	states := map[string]int{}
	var problems []string
	for _, item := range h.stack.Scan(h.t, h.stack.Tables.Orders) {
		if item["kind"] != "ORDER" {
			continue
		}
		status := item["status"].(string)
		states[status]++
		if status == string(inventory.StatusRefundPending) || status == string(inventory.StatusRefunding) {
			problems = append(problems, fmt.Sprintf("order %s still %s after settling", item["pk"], status))
		}
	}
	return states, problems
}

// check returns every rule the history broke.
func (h *history) check() []string {
	ctx := context.Background()
	problems, err := booktest.Problems(ctx, h.stack.DB, h.stack.Tables)
	if err != nil {
		return []string{"books: " + err.Error()}
	}
	ledger, err := booktest.Scan(ctx, h.stack.DB, h.stack.Tables.StockLog)
	if err != nil {
		return []string{"ledger: " + err.Error()}
	}
	keys := map[string]bool{}
	for _, e := range ledger {
		keys[e["pk"].(string)] = true
	}
	for _, e := range ledger {
		if pk := e["pk"].(string); e["op"] == string(inventory.OpCommit) && keys[strings.Replace(pk, "#COMMIT#", "#RELEASE#", 1)] {
			problems = append(problems, "order both paid and released: "+pk)
		}
	}
	h.mu.Lock()
	orders := maps.Clone(h.orders)
	h.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(orders)) {
		if status, _ := h.call(http.MethodGet, "/orders/"+id, orders[id], nil, ""); status != http.StatusOK {
			problems = append(problems, fmt.Sprintf("acknowledged order %s answers %d", id, status))
		}
	}
	if n := h.diffs.Load(); n > 0 {
		problems = append(problems, fmt.Sprintf("reconcile reported %d differences during the traffic, first %v", n, h.diffSeen.Load()))
	}
	if n := h.alerts.n.Load(); n > 0 {
		problems = append(problems, fmt.Sprintf("reconcile published %d alerts", n))
	}
	full := reconcile.New(dynamo.New(h.stack.DB, h.stack.Tables, dynamo.Options{Now: h.clock.Now}), nil, slog.New(slog.DiscardHandler),
		reconcile.Config{Now: h.clock.Now, FullCheckEvery: time.Nanosecond, Window: reconcile.Window{End: 24*time.Hour - time.Second, Loc: time.UTC}})
	if rep, err := full.Run(ctx); err != nil || len(rep.Differences) > 0 || len(rep.RefundProblems) > 0 {
		problems = append(problems, fmt.Sprintf("final full reconcile: %v %+v", err, rep))
	}
	states, owed := h.endStates()
	h.t.Logf("seed %d: end states %v; %d refunds settled at the end", h.seed, states, h.refundsSettled)
	return append(problems, owed...)
}

// play runs the history of seed and returns what it broke; it logs what it did.
func play(t testing.TB, seed uint64, workers, ops int, d time.Duration, broken bool) ([]string, map[string]int64) {
	f := newFaults(seed)
	h := newHistory(t, seed, f)
	f.brokenRelease.Store(broken)
	h.run(workers, ops, d)
	h.settle()
	problems := h.check()
	h.mu.Lock()
	acked := len(h.orders)
	h.mu.Unlock()
	t.Logf("seed %d: %d orders acknowledged; operations %v; DynamoDB faults %v; queue faults %v; %d reconcile runs during traffic",
		seed, acked, counts(&h.ops), f.snapshot(), counts(&h.sqs), h.runs.Load())
	injected := counts(&h.sqs)
	for k, v := range f.snapshot() {
		injected[k] = int64(v)
	}
	injected["order invocation retried"] = counts(&h.ops)["order invocation retried"]
	return problems, injected
}

// TestHistory runs short seeded histories (-history.ops operations per worker; 30
// plays the long ones) with every fault kind and checks each ends with the books
// right and reconcile silent.
func TestHistory(t *testing.T) {
	injected := map[string]int64{}
	var mu sync.Mutex
	t.Run("seeds", func(t *testing.T) { // returns when every seed's history has ended
		for _, seed := range seeds(1, 2, 3) {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel() // each history on its own stack
				problems, faults := play(t, seed, 3, *opsFlag, 0, false)
				if len(problems) > 0 {
					t.Errorf("history seed %d broke (replay: go test -run History ./tools/internal/history/ -seed %d):\n%s", seed, seed, strings.Join(problems, "\n"))
				}
				mu.Lock()
				defer mu.Unlock()
				for k, v := range faults {
					injected[k] += v
				}
			})
		}
	})
	// Every fault kind was live.
	for _, kind := range []string{faultDropped, faultThrottle, faultServer, faultConflict, faultLatency,
		queueDelayed, queueDuplicate, queueReordered, queueRetried, "order invocation retried"} {
		if injected[kind] == 0 {
			t.Errorf("no %s injected over the histories", kind)
		}
	}
	t.Logf("faults injected over the histories: %v", injected)
}

// The histories can fail: a release that gives one unit more back than it records is
// caught (by reconcile during the traffic, by the books, or by the final full
// reconcile) in each of a few seeds, histories as long as TestHistory's.
func TestHistory_CatchesAReleaseThatGivesOneUnitTooMany(t *testing.T) {
	for _, seed := range seeds(11, 12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel() // each history on its own stack
			problems, _ := play(t, seed, 3, *opsFlag, 0, true)
			if len(problems) == 0 {
				t.Fatalf("seed %d: a broken release went unnoticed", seed)
			}
			t.Logf("seed %d caught it: %s", seed, problems[0])
		})
	}
}

// TestHistorySoak runs reconcile continuously (every few milliseconds) while
// concurrent buyers, payments, cancels and expiries run, for -history.for per seed
// over three seeds (default: 1.5 s over two; -history.for 7s makes the 21 s soak): no
// difference and no alert may be reported.
func TestHistorySoak(t *testing.T) {
	d, defaults := *forFlag, []uint64{101, 102, 103}
	if d <= 0 {
		d, defaults = 1500*time.Millisecond, defaults[:2]
	}
	for _, seed := range seeds(defaults...) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			f := newFaults(seed)
			f.scale = 0.2 // fewer faults, so that reconcile runs back to back
			h := newHistory(t, seed, f)
			h.run(3, 0, d)
			h.settle()
			if problems := h.check(); len(problems) > 0 {
				t.Errorf("history seed %d broke (replay: go test -run HistorySoak ./tools/internal/history/ -seed %d):\n%s", seed, seed, strings.Join(problems, "\n"))
			}
			injected := f.snapshot()
			t.Logf("seed %d: %d reconcile runs during %v of traffic, %d differences, %d alerts; operations %v; DynamoDB faults %v; queue faults %v",
				seed, h.runs.Load(), d, h.diffs.Load(), h.alerts.n.Load(), counts(&h.ops), injected, counts(&h.sqs))
		})
	}
}
