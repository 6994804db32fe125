package reconcile_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// heldStack is a stack where "tee" (4 units, one shard, 2 per buyer) sold out to b,
// w1 joined its waitlist, b cancelled and a pass gave w1 a hold of 2: on the shard
// available 2, on-hand 4, reserved 2, and no open order. Reconcile repairs all day;
// hook, when set, runs once before reconcile's first read of tee's waitlist.
func heldStack(t *testing.T, hook *atomic.Value) *stacktest.Stack {
	t.Helper()
	var fired atomic.Bool
	wrap := testkit.FailDynamoDB(func(op string, body []byte) bool {
		if strings.HasSuffix(op, ".Query") && bytes.Contains(body, []byte("tee#wait")) && !fired.Load() {
			if f, ok := hook.Load().(func()); ok && fired.CompareAndSwap(false, true) {
				f()
			}
		}
		return false
	})
	h := stacktest.New(t, stacktest.Options{
		Seed: `[{"skuId":"tee","delivery":"none","name":"tee","price":1000,"stock":4,"limitPerUser":2}]`,
		Stack: local.StackConfig{DynamoDBWrap: local.Middleware(wrap), Reconcile: func(c *reconcile.Config) {
			c.ConfirmDelay = 10 * time.Millisecond
			allDay(c)
		}},
	})
	ctx := context.Background()
	id := h.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	id2 := h.Order(t, "b2", `{"items":[{"skuId":"tee","qty":2}]}`)
	if _, _, err := h.Store.JoinWaitlist(ctx, "w1", "tee", false); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(dynamo.WaitlistLead) // a hold is granted only this long after the orders' flag
	if _, err := h.Store.PassWaitlist(ctx, "tee", false); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct{ id, user string }{{id, "b"}, {id2, "b2"}} {
		if code, out := h.Call(t, "POST", "/orders/"+o.id+"/cancel", o.user, nil, ""); code != http.StatusOK {
			t.Fatalf("cancel: %d %v", code, out)
		}
	}
	if p, err := h.Store.PassWaitlist(ctx, "tee", true); err != nil || p.Units != 2 {
		t.Fatalf("pass: %+v %v", p, err)
	}
	if rep := runReconcile(t, h); len(rep.Differences) != 0 {
		t.Fatalf("with the hold, before the drift: %+v", rep.Differences)
	}
	return h
}

// shardIs checks tee's one shard counters.
func shardIs(t *testing.T, h *stacktest.Stack, when string, available, onHand, reserved int) {
	t.Helper()
	it := h.Item(t, h.Tables.SKUs, "tee#shard#0")
	got := [3]float64{it["available"].(float64), it["onHand"].(float64), it["reserved"].(float64)}
	if want := [3]float64{float64(available), float64(onHand), float64(reserved)}; got != want {
		t.Errorf("%s: tee shard available, onHand, reserved %v, want %v", when, got, want)
	}
}

// A shard holding a waitlist hold whose available counter drifted up by 2 is
// repaired to the ledger's numbers: the hold's 2 units count as reserved, as an
// open order's would. Counting the open orders alone, the drifted counters (4 of 4
// available, none reserved) agree with them, and the repair would book 2 units of
// phantom stock into the ledger instead.
func TestReconcile_RepairCountsAWaitlistHoldAsReserved(t *testing.T) {
	h := heldStack(t, new(atomic.Value))
	h.Add(t, h.Tables.SKUs, "tee#shard#0", "available", 2)
	rep := runReconcile(t, h)
	if len(rep.Repaired) != 1 || rep.Repaired[0] != (reconcile.Repaired{SKU: "tee", Rule: "available", Delta: -2}) {
		t.Errorf("repaired %+v, want available −2 on tee", rep.Repaired)
	}
	shardIs(t, h, "after the repair", 2, 4, 2)
	if again := runReconcile(t, h); len(again.Differences) != 0 || len(again.Repaired) != 0 {
		t.Errorf("after the repair: %+v", again)
	}
	h.Check(t)
}

// A hold used by its buyer's order, or run out and given back, between the open
// orders' read and the holds' read never makes the repair wrong: the run that read
// neither the order nor the hold repairs nothing (the shard moved since its cut), and
// the next one repairs to exact numbers.
func TestReconcile_AHoldChangingDuringTheRunNeverMakesTheRepairWrong(t *testing.T) {
	for _, c := range []struct {
		name                        string
		change                      func(t *testing.T, h *stacktest.Stack)
		available, onHand, reserved int
	}{
		{"used by an order", func(t *testing.T, h *stacktest.Stack) {
			if code, out := h.Call(t, "POST", "/orders", "w1", nil, `{"items":[{"skuId":"tee","qty":2}]}`); code != http.StatusCreated {
				t.Errorf("order on the hold: %d %v", code, out)
			}
		}, 2, 4, 2},
		{"run out and passed", func(t *testing.T, h *stacktest.Stack) {
			h.Clock.Advance((inventory.WaitlistHoldSeconds + 1) * time.Second)
			if p, err := h.Store.PassWaitlist(context.Background(), "tee", true); err != nil || p.Passed != 1 {
				t.Errorf("pass: %+v %v", p, err)
			}
		}, 4, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hook atomic.Value
			h := heldStack(t, &hook)
			h.Add(t, h.Tables.SKUs, "tee#shard#0", "available", 2)
			var changed atomic.Bool
			hook.Store(func() { c.change(t, h); changed.Store(true) })
			first := runReconcile(t, h)
			if !changed.Load() {
				t.Fatal("the hold did not change during the run")
			}
			if len(first.Repaired) != 0 {
				t.Errorf("the run that read neither hold nor order repaired %+v", first.Repaired)
			}
			second := runReconcile(t, h)
			if len(second.Repaired) != 1 || second.Repaired[0] != (reconcile.Repaired{SKU: "tee", Rule: "available", Delta: -2}) {
				t.Errorf("next run repaired %+v, want available −2 on tee", second.Repaired)
			}
			shardIs(t, h, "after the repair", c.available, c.onHand, c.reserved)
			if again := runReconcile(t, h); len(again.Differences) != 0 || len(again.Repaired) != 0 {
				t.Errorf("after the repair: %+v", again)
			}
			h.Check(t)
		})
	}
}
