package reconcile_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// Runs read only what was written since their checkpoint, and checkpoints stay right
// under concurrent runs, failed writes, hour boundaries and new SKUs.

// A run reads the catalogue, the open orders and only the ledger entries written since
// its checkpoint: with no traffic, none; after k one-line orders, k.
func TestReconcile_ReadsOnlyTheLedgerEntriesWrittenSinceItsCheckpoint(t *testing.T) {
	h := newStack(t, nil)
	r := reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.Clock.Now}), nil, slog.New(slog.DiscardHandler),
		reconcile.Config{ConfirmDelay: time.Millisecond, Now: h.Clock.Now})
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
	h.Clock.Advance(3 * time.Minute)
	run() // folds the ADJUST entries into checkpoints
	h.Clock.Advance(3 * time.Minute)
	if idle := run(); idle.LedgerEntriesRead != 0 {
		t.Errorf("idle run read %d ledger entries, want 0", idle.LedgerEntriesRead)
	}
	for i := range 5 {
		h.Order(t, fmt.Sprintf("b%d", i), `{"items":[{"skuId":"saucer","qty":1}]}`)
	}
	if busy := run(); busy.LedgerEntriesRead != 5 {
		t.Errorf("run after 5 orders read %d ledger entries, want 5", busy.LedgerEntriesRead)
	}
}

// Two runs at once cannot fold the same entries twice: the checkpoints are
// conditioned on what each read.
func TestReconcile_ConcurrentRunsKeepTheCheckpointsRight(t *testing.T) {
	h := newStack(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		traffic(t, h, rng, 30)
		h.Clock.Advance(3 * time.Minute)
		testkit.Parallel(4, func(int) {
			if status, out := h.Call(t, "POST", "/_local/invoke/reconcile", "", nil, ""); status != http.StatusOK {
				t.Errorf("reconcile: %d %v", status, out)
			}
		})
	}
	h.Clock.Advance(3 * time.Minute)
	for range 2 {
		if rep := runReconcile(t, h); len(rep.Differences) != 0 {
			t.Errorf("after concurrent runs: %+v", rep.Differences)
		}
	}
}

// A run that saved checkpoints but not the watermark (it failed, or another run moved
// it) leaves checkpoints ahead of the watermark; the next runs must not count the
// entries between them twice.
func TestReconcile_CheckpointsAheadOfTheWatermarkAreNotCountedTwice(t *testing.T) {
	var failWatermark atomic.Bool
	h := newStack(t, nil, failPutsOf(&failWatermark, "reconcile#watermark"))
	rng := rand.New(rand.NewPCG(3, 4))
	runReconcile(t, h) // the first run sets the watermark
	for round := range 4 {
		traffic(t, h, rng, 25)
		h.Clock.Advance(5 * time.Minute)
		failWatermark.Store(round%2 == 0)
		if rep := runReconcile(t, h); len(rep.Differences) != 0 {
			t.Fatalf("round %d: %+v", round, rep.Differences)
		}
	}
	failWatermark.Store(false)
	h.Clock.Advance(5 * time.Minute)
	if rep := runReconcile(t, h); len(rep.Differences) != 0 {
		t.Errorf("after watermark failures: %+v", rep.Differences)
	}
}

// A checkpoint ahead of the run's cutoff (saved by a run on a host whose clock is ahead,
// whose watermark save then failed) is rewritten with an earlier `through` but the same
// sums: the entries in between are counted twice from then on.
func TestReconcile_CheckpointsNeverMoveBack(t *testing.T) {
	var failWatermark atomic.Bool
	h := newStack(t, nil, failPutsOf(&failWatermark, "reconcile#watermark"))
	mk := func(skew time.Duration) *reconcile.Reconciler {
		now := func() time.Time { return h.Clock.Now().Add(skew) }
		return reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: now}), nil, slog.New(slog.DiscardHandler),
			reconcile.Config{ConfirmDelay: time.Millisecond, Now: now})
	}
	if rep := runReconcile(t, h); len(rep.Differences) != 0 { // 00:00, bootstrap
		t.Fatalf("baseline: %+v", rep)
	}
	h.Clock.Advance(4*time.Minute + 30*time.Second) // 00:04:30
	h.Order(t, "a", `{"items":[{"skuId":"saucer","qty":1}]}`)
	h.Clock.Advance(time.Minute) // 00:05:30
	h.Order(t, "b", `{"items":[{"skuId":"saucer","qty":2}]}`)
	h.Clock.Advance(2 * time.Minute) // 00:07:30
	failWatermark.Store(true)
	if _, err := mk(time.Minute).Run(context.Background()); err != nil { // host 1 min ahead: cutoff 00:06
		t.Fatal(err)
	}
	failWatermark.Store(false)
	if _, err := mk(0).Run(context.Background()); err != nil { // cutoff 00:05, below the checkpoint's 00:06
		t.Fatal(err)
	}
	rep := runReconcile(t, h)
	t.Logf("differences %+v", rep.Differences)
	if len(rep.Differences) != 0 {
		t.Errorf("healthy books reported as differing after a checkpoint moved backwards")
	}
}

// Hour boundary of the LedgerByTime buckets, a SKU created later, a run failing midway
// through its checkpoints: the books stay clean (what held up).
func TestReconcile_HourBoundaryNewSKUAndFailedCheckpointStayClean(t *testing.T) {
	var failCP atomic.Bool
	h := newStack(t, nil, failPutsOf(&failCP, "teapot#checkpoint"))
	store := dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.Clock.Now})
	check := func(step string) {
		t.Helper()
		if rep := runReconcile(t, h); len(rep.Differences) != 0 {
			t.Errorf("%s: %+v", step, rep.Differences)
		}
	}
	check("bootstrap")
	h.Clock.Advance(59*time.Minute + 30*time.Second) // 00:59:30
	h.Order(t, "a", `{"items":[{"skuId":"teapot","qty":1},{"skuId":"saucer","qty":1}]}`)
	h.Clock.Advance(20 * time.Second) // 00:59:50
	if created, err := store.EnsureSKU(context.Background(), inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "late", Name: "late", Price: 5, Stock: 40, Shards: 2}); err != nil || !created {
		t.Fatalf("create late: %v (created %v)", err, created)
	}
	h.Order(t, "b", `{"items":[{"skuId":"late","qty":3}]}`)
	check("00:59:50")
	h.Clock.Advance(30 * time.Second) // 01:00:20
	h.Order(t, "c", `{"items":[{"skuId":"teapot","qty":2},{"skuId":"late","qty":1}]}`)
	check("01:00:20")
	for i := range 6 {
		h.Clock.Advance(70 * time.Second)
		failCP.Store(i%2 == 0)
		h.Order(t, "d"+strconv.Itoa(i), `{"items":[{"skuId":"teapot","qty":1},{"skuId":"late","qty":1}]}`)
		check("step " + strconv.Itoa(i))
	}
	failCP.Store(false)
	h.Clock.Advance(10 * time.Minute)
	check("end")
}

// failPutsOf fails every PutItem whose request names key (a watermark or checkpoint
// key) with a 500 while *fail is set.
func failPutsOf(fail *atomic.Bool, key string) local.Middleware {
	return testkit.FailDynamoDB(func(op string, body []byte) bool {
		return fail.Load() && strings.HasSuffix(op, ".PutItem") && bytes.Contains(body, []byte(key))
	})
}
