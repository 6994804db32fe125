package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

var (
	operator = inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "arn:aws:iam::000000000000:user/op", Reason: "damaged"}
	keepAll  = inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.KeepGoods, By: "arn:aws:iam::000000000000:user/op", Reason: "shipped"}
)

// paidOrder reserves lines for user and pays them with transaction tx.
func (e *env) paidOrder(t testing.TB, user, tx string, lines ...inventory.Line) *inventory.Order {
	t.Helper()
	order := e.reserve(t, user, lines...)
	paid, _, err := e.store.Pay(context.Background(), payment(order, tx))
	if err != nil {
		t.Fatal(err)
	}
	return paid
}

func TestStartRefund_ReturnsTheCommittedUnitsOnceHoweverOftenAsked(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, Shards: 4, LimitPerUser: 5},
		inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "saucer", Stock: 10})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 5}, inventory.Line{SKU: "saucer", Qty: 2})
	var moved atomic.Int32
	parallel(20, func(int) {
		got, started, err := e.store.StartRefund(context.Background(), order, operator, 0)
		if err != nil || got.Status != inventory.StatusRefunding || len(got.Refunds) != 1 || got.Refunds[0].OutRefundNo != order.ID+"_R" || !got.Refunds[0].Restocked || got.Refunds[0].By != operator.By {
			t.Errorf("StartRefund: %+v %v", got, err)
		}
		if started != "" {
			moved.Add(1)
		}
	})
	if moved.Load() != 1 {
		t.Errorf("%d calls made the goods step, want 1", moved.Load())
	}
	if ops := e.Ops(t, order.ID); ops[string(inventory.OpReturn)] != 2 || ops[string(inventory.OpCommit)] != 2 {
		t.Errorf("ledger %v, want one RETURN and one COMMIT per line", ops)
	}
	for sku, want := range map[string]int{"cup": 10, "saucer": 10} {
		if b := e.books(t, sku); b.onHand != want || b.available != want {
			t.Errorf("%s onHand %d available %d, want %d and %d", sku, b.onHand, b.available, want, want)
		}
	}
	// The purchase counter was given back: the user may buy the limit again.
	e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 5})
	e.Check(t)
}

func TestStartRefund_WithoutRestockOrForARefundPendingOrderMovesNoGoods(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 3, LimitPerUser: 3})
	paid := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 1})
	late := e.reserve(t, "u2", inventory.Line{SKU: "cup", Qty: 2})
	if _, _, err := e.store.Cancel(context.Background(), "u2", late.ID); err != nil {
		t.Fatal(err)
	}
	e.reserve(t, "u3", inventory.Line{SKU: "cup", Qty: 2})
	late, res, err := e.store.Pay(context.Background(), payment(late, "tx-late"))
	if err != nil || res != inventory.RefundDue {
		t.Fatalf("late pay: %v %v", res, err)
	}
	skus := fmt.Sprint(e.Scan(t, e.Tables.SKUs))
	for _, o := range []*inventory.Order{paid, late} {
		got, did, err := e.store.StartRefund(context.Background(), o, keepAll, 0)
		if err != nil || did == "" || got.Status != inventory.StatusRefunding || got.Refunds[0].Restocked {
			t.Errorf("refund %s: %+v %v %v", o.Status, got, did, err)
		}
		if ops := e.Ops(t, o.ID); ops[string(inventory.OpReturn)] != 0 {
			t.Errorf("ledger %v, want no RETURN", ops)
		}
	}
	if fmt.Sprint(e.Scan(t, e.Tables.SKUs)) != skus {
		t.Error("a refund without restock moved stock")
	}
	e.Check(t)
}

func TestStartRefund_RefusesWhatMayNotBeRefundedAndChangesNothing(t *testing.T) {
	c := newClock()
	e := newEnv(t, dynamo.Options{Now: c.Now}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	pending := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 1})
	cancelled := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 1})
	if _, _, err := e.store.Cancel(context.Background(), "u1", cancelled.ID); err != nil {
		t.Fatal(err)
	}
	cancelled, _ = e.store.Lookup(context.Background(), cancelled.ID)
	paid := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 1})
	before := e.Snapshot(t)
	buyer := inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods, By: "u1"}
	c.Advance(time.Hour)
	for _, tc := range []struct {
		name   string
		order  *inventory.Order
		r      inventory.RefundRequest
		window time.Duration
	}{
		{"PENDING", pending, operator, 0},
		{"CANCELLED", cancelled, operator, 0},
		{"buyer with refunds off", paid, buyer, 0},
		{"buyer past the window", paid, buyer, time.Hour},
	} {
		if _, _, err := e.store.StartRefund(context.Background(), tc.order, tc.r, tc.window); !errors.Is(err, inventory.ErrRefundNotAllowed) {
			t.Errorf("%s: %v, want ErrRefundNotAllowed", tc.name, err)
		}
	}
	if e.Snapshot(t) != before {
		t.Error("a refused refund changed the tables")
	}
	if got, did, err := e.store.StartRefund(context.Background(), paid, buyer, time.Hour+time.Millisecond); err != nil || did == "" || got.Status != inventory.StatusRefunding {
		t.Errorf("buyer inside the window: %+v %v %v", got, did, err)
	}
	e.Check(t)
}

// result is WeChat Pay's word on refund r.
func result(r *inventory.Refund, state string) inventory.RefundResult {
	return inventory.RefundResult{OutRefundNo: r.OutRefundNo, OutTradeNo: r.OrderID, Amount: r.Amount, State: state}
}

func TestMarkRefunded_TurnsRefundedOnceAndRefusesOtherRefunds(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 2})
	other := e.paidOrder(t, "u2", "tx-2", inventory.Line{SKU: "cup", Qty: 1})
	if _, err := e.store.RefundByNo(context.Background(), inventory.OutRefundNo(other.ID, 1)); !errors.Is(err, inventory.ErrRefundNotFound) {
		t.Errorf("refund of a PAID order: %v, want ErrRefundNotFound", err)
	}
	order, _, err := e.store.StartRefund(context.Background(), order, operator, 0)
	if err != nil {
		t.Fatal(err)
	}
	refund := order.RefundByNo(inventory.OutRefundNo(order.ID, 1))
	before := e.Snapshot(t)
	for _, tc := range []struct {
		res  inventory.RefundResult
		want error
	}{
		{inventory.RefundResult{OutRefundNo: refund.OutRefundNo, OutTradeNo: order.ID, Amount: order.Amount - 1, State: "SUCCESS"}, inventory.ErrRefundMismatch},
		{inventory.RefundResult{OutRefundNo: refund.OutRefundNo, OutTradeNo: other.ID, Amount: order.Amount, State: "SUCCESS"}, inventory.ErrRefundMismatch},
		{inventory.RefundResult{OutRefundNo: inventory.OutRefundNo(other.ID, 1), OutTradeNo: other.ID, Amount: other.Amount, State: "SUCCESS"}, inventory.ErrRefundNotFound},
		{inventory.RefundResult{OutRefundNo: "nosuchorder1_R", OutTradeNo: "nosuchorder1", Amount: 1, State: "SUCCESS"}, inventory.ErrRefundNotFound},
		{inventory.RefundResult{OutRefundNo: "limit#cup#u1", Amount: 1, State: "SUCCESS"}, inventory.ErrRefundNotFound},
	} {
		if _, _, err := e.store.MarkRefunded(context.Background(), tc.res); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.res, err, tc.want)
		}
	}
	if e.Snapshot(t) != before {
		t.Fatal("a refused result changed the tables")
	}
	// CLOSED keeps it REFUNDING with the error; SUCCESS, sent 20 times at once, once.
	if got, did, err := e.store.MarkRefunded(context.Background(), result(refund, "ABNORMAL")); err != nil || !did || got.Status != inventory.StatusRefunding || got.Error != "ABNORMAL" {
		t.Errorf("ABNORMAL: %+v %v %v", got, did, err)
	}
	var changed atomic.Int32
	parallel(20, func(int) {
		got, did, err := e.store.MarkRefunded(context.Background(), result(refund, "SUCCESS"))
		if err != nil || got.Status != inventory.StatusRefunded || got.RefundedAt == nil {
			t.Errorf("SUCCESS: %+v %v", got, err)
		}
		if did {
			changed.Add(1)
		}
	})
	order, _ = e.store.Lookup(context.Background(), order.ID)
	if changed.Load() != 1 || order.Status != inventory.StatusRefunded || order.RefundedAmount() != order.Amount {
		t.Errorf("%d calls changed it; order %+v", changed.Load(), order)
	}
	if _, did, err := e.store.MarkRefunded(context.Background(), result(refund, "CLOSED")); err != nil || did {
		t.Errorf("CLOSED after SUCCESS: %v %v, want nothing", did, err)
	}
	e.Check(t)
}

func TestSecondPayment_IsOwedBackUnderItsOwnNumberOnce(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 2})
	second := payment(order, "tx-2")
	if _, _, err := e.store.Pay(context.Background(), second); !errors.Is(err, inventory.ErrPaidTwice) {
		t.Fatalf("second payment: %v, want ErrPaidTwice", err)
	}
	skus, ledger := fmt.Sprint(e.Scan(t, e.Tables.SKUs)), fmt.Sprint(e.Scan(t, e.Tables.StockLog))
	var created atomic.Int32
	parallel(20, func(int) {
		r, did, err := e.store.SecondPayment(context.Background(), second)
		if err != nil || r.Status != inventory.StatusRefunding || r.TransactionID != "tx-2" || r.Amount != order.Amount ||
			r.OutRefundNo != inventory.ExtraOutRefundNo(order.ID, "tx-2") {
			t.Errorf("SecondPayment: %+v %v", r, err)
		}
		if did {
			created.Add(1)
		}
	})
	if created.Load() != 1 {
		t.Errorf("%d records created, want 1", created.Load())
	}
	r, _ := e.store.RefundByNo(context.Background(), inventory.ExtraOutRefundNo(order.ID, "tx-2"))
	if got, did, err := e.store.MarkRefunded(context.Background(), result(r, "SUCCESS")); err != nil || !did || got.Status != inventory.StatusRefunded {
		t.Errorf("MarkRefunded: %+v %v %v", got, did, err)
	}
	if got, _ := e.store.Lookup(context.Background(), order.ID); got.Status != inventory.StatusPaid || got.TransactionID != "tx-1" {
		t.Errorf("the order after its second payment's refund: %+v, want PAID by tx-1", got)
	}
	if fmt.Sprint(e.Scan(t, e.Tables.SKUs)) != skus || fmt.Sprint(e.Scan(t, e.Tables.StockLog)) != ledger {
		t.Error("a second payment's refund moved stock")
	}
	e.Check(t)
}

// A refund racing a late payment of the same cancelled order: the refund is refused
// while the order is CANCELLED and goes through once it is PAID; never both ways.
func TestStartRefund_RacingALatePayment(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 40, Shards: 2})
	const n = 10
	for i := range n {
		order := e.reserve(t, fmt.Sprint("u", i), inventory.Line{SKU: "cup", Qty: 2})
		if _, _, err := e.store.Cancel(context.Background(), order.UserID, order.ID); err != nil {
			t.Fatal(err)
		}
		order, _ = e.store.Lookup(context.Background(), order.ID)
		var refundErr error
		parallel(2, func(j int) {
			if j == 0 {
				if _, _, err := e.store.Pay(context.Background(), payment(order, fmt.Sprint("late-", i))); err != nil {
					t.Error(err)
				}
				return
			}
			now, err := e.store.Lookup(context.Background(), order.ID)
			if err != nil {
				t.Error(err)
				return
			}
			_, _, refundErr = e.store.StartRefund(context.Background(), now, operator, 0)
		})
		got, _ := e.store.Lookup(context.Background(), order.ID)
		switch {
		case refundErr == nil && got.Status != inventory.StatusRefunding,
			errors.Is(refundErr, inventory.ErrRefundNotAllowed) && got.Status != inventory.StatusPaid,
			refundErr != nil && !errors.Is(refundErr, inventory.ErrRefundNotAllowed):
			t.Errorf("order %d: refund %v, order %s", i, refundErr, got.Status)
		}
	}
	e.Check(t)
}

func TestStartRefund_AfterAShrinkingReshardReturnsUnitsToALiveShard(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 4, Shards: 4})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 4})
	if len(order.Items[0].Shards) < 2 {
		t.Fatalf("order committed on %v, want several shards", order.Items[0].Shards)
	}
	// Every shard is empty once paid: the shrink deletes shards 1..3 at once.
	if res, err := e.store.Reshard(context.Background(), "cup", 1, "arn:aws:iam::000000000000:user/op"); err != nil || !res.Complete {
		t.Fatalf("Reshard: %+v %v", res, err)
	}
	got, started, err := e.store.StartRefund(context.Background(), order, operator, 0)
	if err != nil || started == "" || got.Status != inventory.StatusRefunding {
		t.Fatalf("StartRefund: %+v %q %v", got, started, err)
	}
	if b := e.books(t, "cup"); b.onHand != 4 || b.available != 4 {
		t.Errorf("cup onHand %d available %d, want 4 and 4 back on the live shard", b.onHand, b.available)
	}
	if ops := e.Ops(t, order.ID); ops[string(inventory.OpReturn)] != 1 {
		t.Errorf("ledger %v, want one RETURN", ops)
	}
	e.Check(t)
}

func TestStartRefund_OfAReservationOf100ActionsIsNoServerError(t *testing.T) {
	var skus []inventory.NewSKU
	var lines []inventory.Line
	for i := range 11 {
		id := fmt.Sprintf("sku-%02d", i)
		skus = append(skus, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: id, Stock: 8, Shards: 8})
		lines = append(lines, inventory.Line{SKU: id, Qty: 8})
	}
	e := newEnv(t, dynamo.Options{}, nil, skus...)
	order := e.paidOrder(t, "u1", "tx-1", lines...)
	if n := inventory.ReservationActions(order.Items); n != inventory.MaxTransactionActions {
		t.Fatalf("the reservation took %d actions, want %d", n, inventory.MaxTransactionActions)
	}
	got, started, err := e.store.StartRefund(context.Background(), order, operator, 0)
	if err != nil || started == "" || got.Status != inventory.StatusRefunding {
		t.Fatalf("StartRefund: %q %v", started, err)
	}
	for _, l := range lines {
		if b := e.books(t, l.SKU); b.onHand != 8 || b.available != 8 {
			t.Errorf("%s onHand %d available %d, want 8 and 8", l.SKU, b.onHand, b.available)
		}
	}
	e.Check(t)
}
