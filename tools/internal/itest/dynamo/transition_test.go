package dynamo_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Every transition returns the order its decision made, applied in memory: no read
// after a write that answered, and what it returns is what the table then holds.
func TestTransitions_ReturnTheOrderTheTableHoldsWithoutReadingItAgain(t *testing.T) {
	c := newClock()
	e := newEnv(t, dynamo.Options{Now: c.Now, PaymentTimeout: time.Minute}, nil,
		inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, Shards: 3, LimitPerUser: 5}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "saucer", Stock: 10})
	ctx := context.Background()
	lines := []inventory.Line{{SKU: "cup", Qty: 2}, {SKU: "saucer", Qty: 1}}
	check := func(t *testing.T, what string, got *inventory.Order, reads, want int) {
		t.Helper()
		if reads != want {
			t.Errorf("%s read the order %d time(s), want %d: before it decided, never after its write", what, reads, want)
		}
		stored, err := e.store.Lookup(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, stored) {
			t.Errorf("%s returned\n%+v\nthe table holds\n%+v", what, got, stored)
		}
	}
	// step runs fn on an order read by the caller (Release, StartRefund: no read of their
	// own) or by fn itself (Pay reads the order it pays once, before deciding).
	step := func(what string, reads int, fn func() (*inventory.Order, error)) *inventory.Order {
		t.Helper()
		gets := e.sent("GetItem")
		got, err := fn()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		check(t, what, got, e.sent("GetItem")-gets, reads)
		return got
	}

	placed := e.reserve(t, "u1", lines...)
	released := step("release", 0, func() (*inventory.Order, error) {
		o, _, err := e.store.Release(ctx, placed, inventory.CancelUser)
		return o, err
	})
	c.Advance(time.Second)
	step("late payment", 1, func() (*inventory.Order, error) {
		o, res, err := e.store.Pay(ctx, payment(released, "tx-late"))
		if res != inventory.PaidLate {
			t.Errorf("late payment: %v", res)
		}
		return o, err
	})
	placed = e.reserve(t, "u2", lines...)
	paid := step("commit", 1, func() (*inventory.Order, error) {
		p, _, err := e.store.Pay(ctx, payment(placed, "tx-2"))
		return p, err
	})
	refunding := step("refund start", 0, func() (*inventory.Order, error) {
		o, _, err := e.store.StartRefund(ctx, paid, operator, 0)
		return o, err
	})
	gets := e.sent("GetItem")
	refund, changed, err := e.store.MarkRefunded(ctx, inventory.RefundResult{
		OutRefundNo: refunding.Refunds[0].OutRefundNo, OutTradeNo: refunding.ID, Amount: refunding.Amount, State: inventory.RefundStateSuccess,
	})
	if err != nil || !changed || refund.Status != inventory.StatusRefunded {
		t.Fatalf("refund result: %+v %v %v", refund, changed, err)
	}
	if n := e.sent("GetItem") - gets; n != 1 {
		t.Errorf("refund result read %d times, want once, before deciding", n)
	}
	if stored, err := e.store.RefundByNo(ctx, refund.OutRefundNo); err != nil || !reflect.DeepEqual(refund, stored) {
		t.Errorf("refund result returned\n%+v\nthe table holds\n%+v (%v)", refund, stored, err)
	}
	e.Check(t)
}
