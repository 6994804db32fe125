package reconcile_test

// Cases an adversarial review found: each failed before its fix.

import (
	"bytes"
	"context"
	"hash/fnv"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testkit"
)

func allDay(c *reconcile.Config) {
	c.Repair = true
	c.Window = reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC}
}

// bucketOf is the LedgerByTime hash key the store gives an entry (dynamo.ledgerBucket),
// for tests that write ledger items behind the store's back.
func bucketOf(pk string, at time.Time) string {
	h := fnv.New32a()
	h.Write([]byte(pk))
	return at.UTC().Format("2006-01-02T15") + "#" + strconv.Itoa(int(h.Sum32()%dynamo.LedgerBuckets))
}

// copyLedger copies the ledger entry oldPK under newPK, written "now".
func copyLedger(t *testing.T, h *harness, oldPK, newPK string) {
	t.Helper()
	out, err := h.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(h.Tables.StockLog),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: oldPK}}})
	if err != nil || len(out.Item) == 0 {
		t.Fatalf("get %s: %v", oldPK, err)
	}
	now := h.clock.Now()
	out.Item["pk"] = &types.AttributeValueMemberS{Value: newPK}
	out.Item["at"] = n(int(now.UnixMilli()))
	out.Item["ledgerBucket"] = &types.AttributeValueMemberS{Value: bucketOf(newPK, now)}
	if _, err := h.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(h.Tables.StockLog), Item: out.Item}); err != nil {
		t.Fatal(err)
	}
}

func shard(t *testing.T, h *harness, pk string) map[string]any {
	for _, it := range scan(t, h, h.Tables.SKUs) {
		if it["pk"] == pk {
			return it
		}
	}
	return nil
}

// A duplicated ADJUST entry (ledger gained stock that never arrived) is "repaired" by
// raising the counters: phantom stock that will be sold.
func TestReconcile_DoesNotRepairADoubledAdjustIntoPhantomStock(t *testing.T) {
	h := newHarness(t, allDay)
	if rep := h.reconcile(t); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	h.clock.Advance(time.Minute)
	copyLedger(t, h, "init#ADJUST#saucer", "bogus#ADJUST#saucer")
	rep := h.reconcile(t)
	t.Logf("differences %+v repaired %+v", rep.Differences, rep.Repaired)
	sh := shard(t, h, "saucer#shard#0")
	t.Logf("saucer shard after repair: available=%v onHand=%v", sh["available"], sh["onHand"])
	_, out := h.call(t, "GET", "/skus/saucer", "", nil, "")
	t.Logf("GET /skus/saucer: %v", out)
	if sh["available"] != float64(1000) {
		t.Errorf("repair changed the real counters from 1000 to %v on the word of a duplicated ledger entry", sh["available"])
	}
}

// The ADJUST entry lost: the repair zeroes the real stock (false STOCK_OUT).
func TestReconcile_DoesNotRepairALostAdjustIntoAStockOut(t *testing.T) {
	h := newHarness(t, allDay)
	if _, err := h.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(h.Tables.StockLog),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "init#ADJUST#cup"}}}); err != nil {
		t.Fatal(err)
	}
	rep := h.reconcile(t) // first run: full scan of the ledger
	t.Logf("differences %+v repaired %+v", rep.Differences, rep.Repaired)
	sh := shard(t, h, "cup#shard#0")
	status, out := h.call(t, "POST", "/orders", "buyer", nil, `{"items":[{"skuId":"cup","qty":1}]}`)
	t.Logf("cup shard after repair: available=%v onHand=%v; new order: %d %v", sh["available"], sh["onHand"], status, out["code"])
	if sh["available"] != float64(60) {
		t.Errorf("repair wiped 60 real units (available now %v); buyers get %v", sh["available"], out["code"])
	}
}

// Two overlapping runs (e.g. an EventBridge duplicate delivery or a retry) each write a
// REPAIR entry for the same ledger-side difference: the ledger is then off the other way.
func TestReconcile_OverlappingRunsRepairTheLedgerOnce(t *testing.T) {
	h := newHarness(t, allDay)
	id, ok := h.order(t, "u1", `{"items":[{"skuId":"saucer","qty":4}]}`)
	if !ok {
		t.Fatal("order refused")
	}
	if status, _ := h.call(t, "POST", "/orders/"+id+"/cancel", "u1", nil, ""); status != http.StatusOK {
		t.Fatal("cancel refused")
	}
	if rep := h.reconcile(t); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	// Lose the RELEASE entry (the counters, which agree with the orders, are right).
	if _, err := h.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(h.Tables.StockLog),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id + "#RELEASE#saucer"}}}); err != nil {
		t.Fatal(err)
	}
	mk := func(skew time.Duration) *reconcile.Reconciler {
		now := func() time.Time { return h.clock.Now().Add(skew) }
		return reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: now}), nil, slog.New(slog.DiscardHandler),
			reconcile.Config{Repair: true, Window: reconcile.Window{Start: 0, End: 24*time.Hour - time.Second, Loc: time.UTC},
				ConfirmDelay: 300 * time.Millisecond, Now: now})
	}
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
	for _, it := range scan(t, h, h.Tables.StockLog) {
		if it["op"] == dynamo.OpRepair {
			repairs++
		}
	}
	next := h.reconcile(t)
	t.Logf("REPAIR entries %d; next run: differences %+v repaired %+v", repairs, next.Differences, next.Repaired)
	if repairs != 1 {
		t.Errorf("%d REPAIR entries for one lost RELEASE", repairs)
	}
}

// A real drift on a SKU with live traffic is never confirmed: the two passes see
// different expected/actual values even though the difference itself is the same.
func TestReconcile_TrafficBetweenPassesDoesNotHideADrift(t *testing.T) {
	var scans atomic.Int32
	var hook atomic.Value // func()
	wrap := testkit.FailDynamoDB(func(op string, body []byte) bool {
		if strings.HasSuffix(op, ".Scan") && bytes.Contains(body, []byte("SkusTable")) && scans.Add(1) == 2 {
			if f, ok := hook.Load().(func()); ok {
				f() // one order between the two passes, as live traffic does
			}
		}
		return false
	})
	h := newHarness(t, nil, wrap)
	if rep := h.reconcile(t); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	h.update(t, h.Tables.SKUs, "saucer#shard#0", "SET available = available + :d", map[string]types.AttributeValue{":d": n(40)})
	scans.Store(0)
	hook.Store(func() { h.order(t, "buyer", `{"items":[{"skuId":"saucer","qty":1}]}`) })
	rep := h.reconcile(t)
	t.Logf("with one order between the passes: %+v", rep.Differences)
	if len(rep.Differences) == 0 {
		t.Errorf("saucer available +40 not reported because one order landed between the confirmation passes")
	}
	hook.Store(func() {})
	t.Logf("quiet run: %+v", h.reconcile(t).Differences)
}

// Phantom stock (counters raised by hand) sold and paid: the ledger goes negative and
// the repair books the phantom units into the ledger as "lost entries".
func TestReconcile_DoesNotBookAnOversellAsARepair(t *testing.T) {
	h := newHarness(t, allDay)
	if rep := h.reconcile(t); len(rep.Differences) != 0 {
		t.Fatalf("baseline: %+v", rep)
	}
	h.update(t, h.Tables.SKUs, "cup#shard#0", "SET available = available + :d, onHand = onHand + :d", map[string]types.AttributeValue{":d": n(10)})
	for i := range 14 {
		id, ok := h.order(t, "buyer"+strconv.Itoa(i), `{"items":[{"skuId":"cup","qty":5}]}`)
		if !ok {
			t.Fatalf("order %d refused", i)
		}
		if status, _ := h.call(t, "POST", "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
			t.Fatal("pay refused")
		}
	}
	rep := h.reconcile(t)
	t.Logf("70 units sold of 60 stocked: differences %+v repaired %+v", rep.Differences, rep.Repaired)
	next := h.reconcile(t)
	t.Logf("next run: differences %+v", next.Differences)
	for _, r := range rep.Repaired {
		if r.Rule == "ledger available" || r.Rule == "ledger onHand" {
			t.Errorf("repair wrote a REPAIR entry %+v for a SKU that is oversold (committed > stocked)", r)
		}
	}
}

// A checkpoint ahead of the run's cutoff (saved by a run on a host whose clock is ahead,
// whose watermark save then failed) is rewritten with an earlier `through` but the same
// sums: the entries in between are counted twice from then on.
func TestReconcile_CheckpointsNeverMoveBack(t *testing.T) {
	var failWatermark atomic.Bool
	wrap := testkit.FailDynamoDB(func(op string, body []byte) bool {
		return failWatermark.Load() && strings.HasSuffix(op, ".PutItem") && bytes.Contains(body, []byte("reconcile#watermark"))
	})
	h := newHarness(t, nil, wrap)
	mk := func(skew time.Duration) *reconcile.Reconciler {
		now := func() time.Time { return h.clock.Now().Add(skew) }
		return reconcile.New(dynamo.New(h.DB, h.Tables, dynamo.Options{Now: now}), nil, slog.New(slog.DiscardHandler),
			reconcile.Config{ConfirmDelay: time.Millisecond, Now: now})
	}
	if rep := h.reconcile(t); len(rep.Differences) != 0 { // 00:00, bootstrap
		t.Fatalf("baseline: %+v", rep)
	}
	h.clock.Advance(4*time.Minute + 30*time.Second) // 00:04:30
	h.order(t, "a", `{"items":[{"skuId":"saucer","qty":1}]}`)
	h.clock.Advance(time.Minute) // 00:05:30
	h.order(t, "b", `{"items":[{"skuId":"saucer","qty":2}]}`)
	h.clock.Advance(2 * time.Minute) // 00:07:30
	failWatermark.Store(true)
	if _, err := mk(time.Minute).Run(context.Background()); err != nil { // host 1 min ahead: cutoff 00:06
		t.Fatal(err)
	}
	failWatermark.Store(false)
	if _, err := mk(0).Run(context.Background()); err != nil { // cutoff 00:05, below the checkpoint's 00:06
		t.Fatal(err)
	}
	rep := h.reconcile(t)
	t.Logf("differences %+v", rep.Differences)
	if len(rep.Differences) != 0 {
		t.Errorf("healthy books reported as differing after a checkpoint moved backwards")
	}
}

// Hour boundary of the LedgerByTime buckets, a SKU created later, a run failing midway
// through its checkpoints: the books stay clean (what held up).
func TestReconcile_HourBoundaryNewSKUAndFailedCheckpointStayClean(t *testing.T) {
	var failCP atomic.Bool
	wrap := testkit.FailDynamoDB(func(op string, body []byte) bool {
		return failCP.Load() && strings.HasSuffix(op, ".PutItem") && bytes.Contains(body, []byte("teapot#checkpoint"))
	})
	h := newHarness(t, nil, wrap)
	store := dynamo.New(h.DB, h.Tables, dynamo.Options{Now: h.clock.Now})
	check := func(step string) {
		t.Helper()
		if rep := h.reconcile(t); len(rep.Differences) != 0 {
			t.Errorf("%s: %+v", step, rep.Differences)
		}
	}
	check("bootstrap")
	h.clock.Advance(59*time.Minute + 30*time.Second) // 00:59:30
	h.order(t, "a", `{"items":[{"skuId":"teapot","qty":1},{"skuId":"saucer","qty":1}]}`)
	h.clock.Advance(20 * time.Second) // 00:59:50
	if err := store.CreateSKU(context.Background(), inventory.NewSKU{ID: "late", Name: "late", Price: 5, Stock: 40, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	h.order(t, "b", `{"items":[{"skuId":"late","qty":3}]}`)
	check("00:59:50")
	h.clock.Advance(30 * time.Second) // 01:00:20
	h.order(t, "c", `{"items":[{"skuId":"teapot","qty":2},{"skuId":"late","qty":1}]}`)
	check("01:00:20")
	for i := range 6 {
		h.clock.Advance(70 * time.Second)
		failCP.Store(i%2 == 0)
		h.order(t, "d"+strconv.Itoa(i), `{"items":[{"skuId":"teapot","qty":1},{"skuId":"late","qty":1}]}`)
		check("step " + strconv.Itoa(i))
	}
	failCP.Store(false)
	h.clock.Advance(10 * time.Minute)
	check("end")
}
