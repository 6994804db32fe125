package inventory_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

var t0 = time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)

// pendingOrder is a PENDING order of two lines, the first counted on the user's limit.
func pendingOrder() *inventory.Order {
	return &inventory.Order{
		ID: "order-1", UserID: "alice", Status: inventory.StatusPending, Amount: 350, Currency: "CNY",
		CreatedAt: t0, ExpiresAt: t0.Add(15 * time.Minute),
		Items: []inventory.OrderItem{
			{SKU: "cup", Qty: 3, UnitPrice: 100, Shards: map[int]int{0: 1, 2: 2}, Limited: true},
			{SKU: "saucer", Qty: 1, UnitPrice: 50, Shards: map[int]int{1: 1}},
		},
	}
}

func TestRelease_CancelsGivesUnitsAndCountersBack(t *testing.T) {
	o := pendingOrder()
	c, err := o.Release(inventory.CancelUser, "", t0.Add(time.Minute), inventory.Retry{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != inventory.ChangeRelease || c.From != inventory.StatusPending || c.Guards != inventory.GuardPrepay {
		t.Errorf("kind %v from %v guards %v, want a release from PENDING guarded by the prepay_id", c.Kind, c.From, c.Guards)
	}
	if got := c.Order; got.Status != inventory.StatusCancelled || got.CancelReason != inventory.CancelUser || !got.CancelledAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("order after: %+v", got)
	}
	if o.Status != inventory.StatusPending {
		t.Errorf("the order read changed to %s", o.Status)
	}
	wantLimits := []inventory.LimitMove{{Line: 0, SKU: "cup", Units: -3}}
	if !reflect.DeepEqual(c.Limits, wantLimits) {
		t.Errorf("limits %+v, want %+v", c.Limits, wantLimits)
	}
	if len(c.Stock) != 2 || !reflect.DeepEqual(c.Stock[0].Ops, []inventory.Op{inventory.OpRelease}) || !reflect.DeepEqual(c.Stock[0].Item, o.Items[0]) {
		t.Errorf("stock %+v, want each line RELEASEd where it was reserved", c.Stock)
	}
	if d := c.Stock[0].Delta(2); d != (inventory.Delta{Available: 2, Reserved: -2}) {
		t.Errorf("release of 2 units: %+v", d)
	}
	if c.Entry != (inventory.Entry{Ref: "order-1", Reason: "USER", At: t0.Add(time.Minute)}) {
		t.Errorf("entry %+v", c.Entry)
	}
	if got := c.Actions(); got != 1+1+3+2 {
		t.Errorf("actions %d, want the order, one counter, three shards and two entries", got)
	}
}

func TestRelease_WhatItLeavesAlone(t *testing.T) {
	due := t0.Add(15 * time.Minute)
	for _, tc := range []struct {
		name   string
		status inventory.Status
		prepay string // the order's prepay_id now; "" was seen
		reason inventory.CancelReason
		now    time.Time
		kind   inventory.ChangeKind
		err    error
	}{
		{"a timeout before the window ends", inventory.StatusPending, "", inventory.CancelTimeout, due.Add(-time.Millisecond), inventory.NoChange, nil},
		{"a timeout at the window's end", inventory.StatusPending, "", inventory.CancelTimeout, due, inventory.ChangeRelease, nil},
		{"a user's cancel inside the window", inventory.StatusPending, "", inventory.CancelUser, t0, inventory.ChangeRelease, nil},
		{"a paid order", inventory.StatusPaid, "", inventory.CancelUser, due, inventory.NoChange, nil},
		{"a cancelled order", inventory.StatusCancelled, "", inventory.CancelTimeout, due, inventory.NoChange, nil},
		{"a payment started since the read", inventory.StatusPending, "wx-1", inventory.CancelUser, due, inventory.NoChange, inventory.ErrBusy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := pendingOrder()
			o.Status, o.PrepayID = tc.status, tc.prepay
			c, err := o.Release(tc.reason, "", tc.now, inventory.Retry{})
			if c.Kind != tc.kind || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Errorf("Release = %v, %v; want %v, %v", c.Kind, err, tc.kind, tc.err)
			}
		})
	}
}

func TestRelease_SkipsACounterFoundDrifted(t *testing.T) {
	var r inventory.Retry
	r.Drift("cup")
	c, err := pendingOrder().Release(inventory.CancelTimeout, "", t0.Add(time.Hour), r)
	if err != nil || len(c.Limits) != 0 || len(c.Stock) != 2 {
		t.Errorf("Release = %+v, %v; want the units released and no counter given back", c, err)
	}
}

func TestPay_Decisions(t *testing.T) {
	p := inventory.Payment{OrderID: "order-1", TransactionID: "tx1", Amount: 350, Currency: "CNY", PaidAt: t0.Add(time.Minute)}
	now := t0.Add(2 * time.Minute)
	stock := map[string]inventory.StockNow{
		"cup":    {OnSale: true, LimitPerUser: 5, Shards: inventory.ShardStock{0, 0, 3}},
		"saucer": {OnSale: true, Shards: inventory.ShardStock{0, 0, 1}},
	}
	cancelled := func() *inventory.Order {
		o := pendingOrder()
		at := t0.Add(time.Minute)
		o.Status, o.CancelReason, o.CancelledAt = inventory.StatusCancelled, inventory.CancelTimeout, &at
		return o
	}

	t.Run("pending is committed", func(t *testing.T) {
		c, err := pendingOrder().Pay(p, nil, now, inventory.Retry{})
		if err != nil || c.Kind != inventory.ChangeCommit || c.PayResult() != inventory.PaidNow {
			t.Fatalf("Pay = %v, %v", c.Kind, err)
		}
		if o := c.Order; o.Status != inventory.StatusPaid || o.TransactionID != "tx1" || !o.PaidAt.Equal(p.PaidAt) {
			t.Errorf("order after: %+v", o)
		}
		if d := c.Stock[0].Delta(3); d != (inventory.Delta{OnHand: -3, Reserved: -3}) || len(c.Limits) != 0 {
			t.Errorf("commit: delta %+v, limits %+v", d, c.Limits)
		}
		if c.Entry.Ref != "order-1" || c.Entry.Reason != "paid tx1" {
			t.Errorf("entry %+v", c.Entry)
		}
	})
	t.Run("cancelled with stock is paid late", func(t *testing.T) {
		o := cancelled()
		if !o.NeedsStock(p, inventory.Retry{}) {
			t.Error("a late payment does not ask for the stock")
		}
		c, err := o.Pay(p, stock, now, inventory.Retry{})
		if err != nil || c.Kind != inventory.ChangePayLate || c.PayResult() != inventory.PaidLate {
			t.Fatalf("Pay = %v, %v", c.Kind, err)
		}
		after := c.Order
		if after.Status != inventory.StatusPaid || after.CancelledAt != nil || after.CancelReason != "" || !reflect.DeepEqual(after.Items[0].Shards, map[int]int{2: 3}) {
			t.Errorf("order after: %+v", after)
		}
		if d := c.Stock[0].Delta(3); d != (inventory.Delta{Available: -3, OnHand: -3}) || !c.Stock[0].TakesAvailable() || !c.Stock[0].Reserves() {
			t.Errorf("late delta %+v", d)
		}
		if want := []inventory.LimitMove{{Line: 0, SKU: "cup", Units: 3, Cap: 5}}; !reflect.DeepEqual(c.Limits, want) {
			t.Errorf("limits %+v, want %+v", c.Limits, want)
		}
		if c.Entry.Ref != inventory.LateRef("order-1") {
			t.Errorf("entry %+v", c.Entry)
		}
	})
	for _, tc := range []struct {
		name  string
		stock map[string]inventory.StockNow
		retry inventory.Retry
	}{
		{"no stock left", map[string]inventory.StockNow{"cup": stock["cup"], "saucer": {OnSale: true, Shards: inventory.ShardStock{0, 0, 0}}}, inventory.Retry{}},
		{"the counter refused", nil, inventory.Retry{OverLimit: true}},
	} {
		t.Run(tc.name+" is refund-pending", func(t *testing.T) {
			c, err := cancelled().Pay(p, tc.stock, now, tc.retry)
			if err != nil || c.Kind != inventory.ChangeRefundDue || c.Order.Status != inventory.StatusRefundPending || len(c.Stock) != 0 {
				t.Errorf("Pay = %+v, %v", c, err)
			}
			if c.Order.CancelReason != inventory.CancelTimeout {
				t.Errorf("a refund-pending order keeps its cancellation: %+v", c.Order)
			}
		})
	}
	t.Run("a replay changes nothing", func(t *testing.T) {
		o := pendingOrder()
		o.Status, o.TransactionID = inventory.StatusPaid, "tx1"
		c, err := o.Pay(p, nil, now, inventory.Retry{})
		if err != nil || !c.None() || c.PayResult() != inventory.Replayed {
			t.Errorf("Pay = %v, %v", c.Kind, err)
		}
	})
	t.Run("another payment of a paid order", func(t *testing.T) {
		o := pendingOrder()
		o.Status, o.TransactionID = inventory.StatusPaid, "tx0"
		if _, err := o.Pay(p, nil, now, inventory.Retry{}); !errors.Is(err, inventory.ErrPaidTwice) {
			t.Errorf("Pay: %v, want ErrPaidTwice", err)
		}
	})
}

func TestPay_LateThatWouldNotFitOneTransactionIsRefundPending(t *testing.T) {
	o := &inventory.Order{ID: "big", Status: inventory.StatusCancelled, Currency: "CNY"}
	stock := map[string]inventory.StockNow{}
	for i := range 20 {
		sku := string(rune('a' + i))
		o.Items = append(o.Items, inventory.OrderItem{SKU: sku, Qty: 5, Limited: true})
		stock[sku] = inventory.StockNow{OnSale: true, Shards: inventory.ShardStock{1, 1, 1, 1, 1}}
	}
	p := inventory.Payment{OrderID: "big", TransactionID: "tx", Currency: "CNY"}
	c, err := o.Pay(p, stock, t0, inventory.Retry{})
	if err != nil || c.Kind != inventory.ChangeRefundDue {
		t.Errorf("Pay = %v, %v; want refund-pending (20 lines × (5 shards + 2 entries + 1 counter) > 100 actions)", c.Kind, err)
	}
}

func TestStartRefund_Decisions(t *testing.T) {
	paid := func(status inventory.Status) *inventory.Order {
		o := pendingOrder()
		at := t0.Add(time.Minute)
		o.Status, o.PaidAt, o.TransactionID = status, &at, "tx1"
		return o
	}
	merchant := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "arn:aws:iam::1:user/op", Reason: "damaged"}
	now := t0.Add(time.Hour)

	c, err := paid(inventory.StatusPaid).StartRefund(merchant, 0, now, inventory.Retry{})
	if err != nil || c.Kind != inventory.ChangeRefundStart || c.From != inventory.StatusPaid {
		t.Fatalf("StartRefund = %v, %v", c.Kind, err)
	}
	if o := c.Order; o.Status != inventory.StatusRefunding || len(o.Refunds) != 1 || o.Refunds[0].OutRefundNo != "order-1_R" || !o.Refunds[0].Restocked || o.Refunds[0].By != merchant.By || o.Refunds[0].Reason != "damaged" {
		t.Errorf("order after: %+v", o)
	}
	if *c.Marker != (inventory.Marker{OutRefundNo: "order-1_R", Since: now}) {
		t.Errorf("marker %+v", c.Marker)
	}
	if len(c.Stock) != 2 || c.Stock[0].Delta(3) != (inventory.Delta{Available: 3, OnHand: 3}) || len(c.Limits) != 1 {
		t.Errorf("stock %+v limits %+v, want RETURN of each line and the counter given back", c.Stock, c.Limits)
	}
	if c.Entry.By != merchant.By || c.Entry.Reason != "refund: damaged" {
		t.Errorf("entry %+v", c.Entry)
	}

	keep := merchant
	keep.Goods = inventory.KeepGoods
	if c, _ := paid(inventory.StatusPaid).StartRefund(keep, 0, now, inventory.Retry{}); len(c.Stock) != 0 || len(c.Limits) != 1 || c.Order.Refunds[0].Restocked {
		t.Errorf("without restock: %+v", c)
	}
	if c, _ := paid(inventory.StatusRefundPending).StartRefund(merchant, 0, now, inventory.Retry{}); c.Kind != inventory.ChangeRefundStart || len(c.Stock) != 0 || len(c.Limits) != 0 || c.Order.Refunds[0].Restocked {
		t.Errorf("refund-pending: %+v, want no goods and no counters", c)
	}
	for _, s := range []inventory.Status{inventory.StatusRefunding, inventory.StatusRefunded} {
		if c, err := paid(s).StartRefund(merchant, 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrRefundExceedsPaid) || !c.None() {
			t.Errorf("%s: %v, %v; want no change and ErrRefundExceedsPaid", s, c.Kind, err)
		}
	}
	if _, err := paid(inventory.StatusCancelled).StartRefund(merchant, 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("cancelled: %v, want ErrRefundNotAllowed", err)
	}
}

func TestRecordRefundResult_Decisions(t *testing.T) {
	refunding := func(errText string) *inventory.Refund {
		return &inventory.Refund{OutRefundNo: "order-1_R", OrderID: "order-1", TransactionID: "tx1", Amount: 350, Currency: "CNY",
			Status: inventory.StatusRefunding, Since: t0, Error: errText}
	}
	res := func(state string, at time.Time) inventory.RefundResult {
		return inventory.RefundResult{OutRefundNo: "order-1_R", OutTradeNo: "order-1", Amount: 350, State: state, At: at}
	}
	now := t0.Add(time.Hour)

	c, err := refunding("").Record(res(inventory.RefundStateSuccess, time.Time{}), now)
	if err != nil || c.Kind != inventory.ChangeRefundResult || c.Guards != inventory.GuardRefundNo {
		t.Fatalf("Settle = %v, %v", c.Kind, err)
	}
	if r := c.Refund; r.Status != inventory.StatusRefunded || !r.RefundedAt.Equal(now) || r.RefundAmount != 350 {
		t.Errorf("refund after: %+v", r)
	}
	if c.Marker == nil || !c.Marker.Remove {
		t.Errorf("marker %+v, want the refund off the REFUNDING list", c.Marker)
	}
	if c, _ := refunding("").Record(res(inventory.RefundStateClosed, t0), now); c.Refund.Error != "CLOSED" || c.Refund.Status != inventory.StatusRefunding || c.Marker != nil {
		t.Errorf("closed: %+v", c)
	}
	for name, tc := range map[string]struct {
		r   *inventory.Refund
		res inventory.RefundResult
	}{
		"processing":         {refunding(""), res(inventory.RefundStateProcessing, t0)},
		"abnormal again":     {refunding("ABNORMAL"), res(inventory.RefundStateAbnormal, t0)},
		"refunded, replayed": {&inventory.Refund{OutRefundNo: "order-1_R", OrderID: "order-1", Amount: 350, Status: inventory.StatusRefunded}, res(inventory.RefundStateSuccess, t0)},
	} {
		if c, err := tc.r.Record(tc.res, now); err != nil || !c.None() {
			t.Errorf("%s: %v, %v; want no change", name, c.Kind, err)
		}
	}
	other := res(inventory.RefundStateSuccess, t0)
	other.Amount = 1
	if _, err := refunding("").Record(other, now); !errors.Is(err, inventory.ErrRefundMismatch) {
		t.Errorf("another amount: %v, want ErrRefundMismatch", err)
	}
}

// Refunds in parts, decided without a database: each refund its own out_refund_no,
// lines and amount; exactly its units returned, on the shards they were committed on
// after those earlier refunds returned; the counters given back per unit; the order
// PAID until the refund that covers the rest; nothing past what was paid; the
// refundId the idempotency key; 20 refunds an order (MaxOrderRefunds) and WeChat Pay's one year.
func TestStartRefund_InParts(t *testing.T) {
	now := t0.Add(time.Hour)
	o := pendingOrder()
	at := t0.Add(time.Minute)
	o.Status, o.PaidAt, o.TransactionID = inventory.StatusPaid, &at, "tx1"
	req := func(id string, goods inventory.Goods, lines ...inventory.RefundLine) inventory.RefundRequest {
		return inventory.RefundRequest{Requester: inventory.Merchant, Goods: goods, By: "op", Reason: "r", RefundID: id, Lines: lines}
	}
	cup := func(q int) inventory.RefundLine { return inventory.RefundLine{SKU: "cup", Qty: q} }

	c, err := o.StartRefund(req("a", inventory.ReturnGoods, cup(2)), 0, now, inventory.Retry{})
	if err != nil || c.Order.Status != inventory.StatusPaid || c.Guards != inventory.GuardRefunds|inventory.GuardShipping|inventory.GuardPresale || c.Order.RefundRev != 1 {
		t.Fatalf("first refund: %+v %v", c, err)
	}
	r := c.Order.Refunds[0]
	if r.OutRefundNo != "order-1_R" || r.Amount != 200 || r.Status != inventory.StatusRefunding || c.Entry.Ref != "order-1" {
		t.Errorf("first refund %+v, entry %+v", r, c.Entry)
	}
	if len(c.Stock) != 1 || fmt.Sprint(c.Stock[0].Item.Shards) != "map[0:1 2:1]" || len(c.Limits) != 1 || c.Limits[0].Units != -2 {
		t.Errorf("first refund moves %+v limits %+v, want 2 cups back on shards 0 and 2, counter −2", c.Stock, c.Limits)
	}
	o = c.Order
	c, err = o.StartRefund(req("b", inventory.ReturnGoods), 0, now, inventory.Retry{}) // all that is left
	if err != nil || c.Order.Status != inventory.StatusRefunding || len(c.Order.Refunds) != 2 {
		t.Fatalf("the rest: %+v %v", c, err)
	}
	r = c.Order.Refunds[1]
	if r.OutRefundNo != "order-1_R2" || r.Amount != 150 || fmt.Sprint(r.Lines) != "[{cup 1} {saucer 1}]" || c.Entry.Ref != "order-1_R2" {
		t.Errorf("the rest %+v, entry %+v", r, c.Entry)
	}
	if len(c.Stock) != 2 || fmt.Sprint(c.Stock[0].Item.Shards) != "map[2:1]" || c.Order.RefundsAmount() != o.Amount {
		t.Errorf("the rest moves %+v, want the last cup from shard 2", c.Stock)
	}
	if _, err := o.StartRefund(req("c", inventory.ReturnGoods, cup(2)), 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrRefundExceedsPaid) {
		t.Errorf("2 cups of the 1 left: %v, want ErrRefundExceedsPaid", err)
	}
	if _, err := o.StartRefund(req("c", inventory.ReturnGoods, inventory.RefundLine{SKU: "teapot", Qty: 1}), 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrRefundExceedsPaid) {
		t.Errorf("a SKU not in the order: %v, want ErrRefundExceedsPaid", err)
	}
	if c, err := o.StartRefund(req("a", inventory.ReturnGoods, cup(2)), 0, now, inventory.Retry{}); err != nil || !c.None() {
		t.Errorf("the same refundId and body: %+v %v, want no change", c, err)
	}
	for _, other := range []inventory.RefundRequest{req("a", inventory.KeepGoods, cup(2)), req("a", inventory.ReturnGoods, cup(1)), req("a", inventory.ReturnGoods)} {
		if _, err := o.StartRefund(other, 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
			t.Errorf("refundId a with %s: %v, want ErrIdempotencyKeyReused", other.Body(), err)
		}
	}
	if _, err := o.StartRefund(req("late", inventory.ReturnGoods, cup(1)), 0, at.Add(inventory.RefundPeriod+time.Second), inventory.Retry{}); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("a year after payment: %v, want ErrRefundNotAllowed", err)
	}
	full := *o
	for len(full.Refunds) < inventory.MaxOrderRefunds {
		full.Refunds = append(full.Refunds, inventory.OrderRefund{RefundID: fmt.Sprint(len(full.Refunds))})
	}
	if _, err := full.StartRefund(req("21", inventory.ReturnGoods, cup(1)), 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("the 21st refund: %v, want ErrRefundNotAllowed", err)
	}
	var refusal *inventory.RefusalError
	if _, err := pendingOrder().StartRefund(req("p", inventory.ReturnGoods), 0, now, inventory.Retry{}); !errors.As(err, &refusal) || !strings.Contains(refusal.Reason, "PENDING") || !strings.Contains(refusal.Reason, "only PAID") {
		t.Errorf("a PENDING order: %v, want a refusal naming its status and what can be refunded", err)
	}
}

// A refund result changes its refund only; the order is REFUNDED with the last one.
func TestRecordRefund_OrderRefundedWithItsLastRefund(t *testing.T) {
	o := pendingOrder()
	at := t0.Add(time.Minute)
	o.Status, o.PaidAt, o.TransactionID = inventory.StatusPaid, &at, "tx1"
	for _, lines := range [][]inventory.RefundLine{{{SKU: "cup", Qty: 3}}, nil} {
		c, err := o.StartRefund(inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.KeepGoods, By: "op", Reason: "r", Lines: lines}, 0, at, inventory.Retry{})
		if err != nil {
			t.Fatal(err)
		}
		o = c.Order
	}
	success := func(no string, amount int64) inventory.RefundResult {
		return inventory.RefundResult{OutRefundNo: no, OutTradeNo: o.ID, Amount: amount, State: inventory.RefundStateSuccess}
	}
	if _, err := o.RecordRefund(success("order-1_R", 350), at); !errors.Is(err, inventory.ErrRefundMismatch) {
		t.Errorf("the whole amount for the first refund: %v, want ErrRefundMismatch", err)
	}
	c, err := o.RecordRefund(success("order-1_R2", 50), at)
	if err != nil || c.Order.Status != inventory.StatusRefunding || c.Order.Refunds[1].Status != inventory.StatusRefunded || !c.Marker.Remove {
		t.Fatalf("second refund done first: %+v %v", c, err)
	}
	c, err = c.Order.RecordRefund(success("order-1_R", 300), at)
	if err != nil || c.Order.Status != inventory.StatusRefunded || c.Order.RefundedAmount() != 350 {
		t.Errorf("the last refund done: %+v %v, want the order REFUNDED with 350 fen", c.Order, err)
	}
	if _, err := o.RecordRefund(success("order-1_R3", 1), at); !errors.Is(err, inventory.ErrRefundNotFound) {
		t.Errorf("an unknown refund: %v", err)
	}
}

// paidOrderOf is a PAID order of lines, each of qty units over the given shards
// (one unit per shard), limited or not.
func paidOrderOf(lines, shards int, limited bool) *inventory.Order {
	at := t0.Add(time.Minute)
	o := &inventory.Order{ID: "big-1", UserID: "alice", Status: inventory.StatusPaid, Currency: "CNY", CreatedAt: t0, PaidAt: &at, TransactionID: "tx1"}
	for i := range lines {
		it := inventory.OrderItem{SKU: fmt.Sprintf("sku-%02d", i), Qty: shards, UnitPrice: 10, Shards: map[int]int{}, Limited: limited}
		for n := range shards {
			it.Shards[n] = 1
		}
		o.Items = append(o.Items, it)
		o.Amount += int64(shards) * 10
	}
	return o
}

func TestStartRefund_OfAReservationOfExactly100ActionsFitsOrIsRefused(t *testing.T) {
	merchant := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "arn:aws:iam::1:user/op", Reason: "damaged"}
	now := t0.Add(time.Hour)

	// 11 lines over 8 shards: 1 + 11 × (8 + 1) = 100 actions to reserve; the refund's
	// marker would make 101: the units go back on one shard per line instead.
	o := paidOrderOf(11, 8, false)
	if n := inventory.ReservationActions(o.Items); n != inventory.MaxTransactionActions {
		t.Fatalf("reservation takes %d actions, want %d", n, inventory.MaxTransactionActions)
	}
	c, err := o.StartRefund(merchant, 0, now, inventory.Retry{})
	if err != nil || c.Actions() > inventory.MaxTransactionActions {
		t.Fatalf("StartRefund = %d actions, %v; want at most %d", c.Actions(), err, inventory.MaxTransactionActions)
	}
	for _, m := range c.Stock {
		if len(m.Item.Shards) != 1 || m.Item.Shards[0] != 8 {
			t.Errorf("line %d returns on %v, want all 8 units on shard 0", m.Line, m.Item.Shards)
		}
	}

	// 33 limited lines on one shard each: 1 + 33 × 3 = 100; no fewer shards to use.
	o = paidOrderOf(33, 1, true)
	if n := inventory.ReservationActions(o.Items); n != inventory.MaxTransactionActions {
		t.Fatalf("reservation takes %d actions, want %d", n, inventory.MaxTransactionActions)
	}
	if _, err := o.StartRefund(merchant, 0, now, inventory.Retry{}); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("whole refund of 101 actions: %v, want ErrRefundNotAllowed", err)
	}
	part := merchant
	part.Lines = []inventory.RefundLine{{SKU: "sku-00", Qty: 1}}
	if c, err := o.StartRefund(part, 0, now, inventory.Retry{}); err != nil || c.Kind != inventory.ChangeRefundStart {
		t.Errorf("refund of one line: %v, %v", c.Kind, err)
	}
}

func TestStartRefund_ReturnsUnitsOfARetiredShardOnShard0(t *testing.T) {
	o := pendingOrder()
	at := t0.Add(time.Minute)
	o.Status, o.PaidAt, o.TransactionID = inventory.StatusPaid, &at, "tx1"
	merchant := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "arn:aws:iam::1:user/op", Reason: "damaged"}
	var r inventory.Retry
	r.Retire("cup")
	c, err := o.StartRefund(merchant, 0, t0.Add(time.Hour), r)
	if err != nil || len(c.Stock) != 2 {
		t.Fatalf("StartRefund = %+v, %v", c.Stock, err)
	}
	if got := c.Stock[0].Item.Shards; len(got) != 1 || got[0] != 3 {
		t.Errorf("cup returns on %v, want its 3 units on shard 0", got)
	}
	if got := c.Stock[1].Item.Shards; len(got) != 1 || got[1] != 1 {
		t.Errorf("saucer returns on %v, want shard 1 as committed", got)
	}
	if !c.Stock[0].Returns() || c.Stock[0].TakesAvailable() {
		t.Errorf("a RETURN move: Returns %v TakesAvailable %v", c.Stock[0].Returns(), c.Stock[0].TakesAvailable())
	}
}
