package inventory_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestOrderRefundStep_WhoMayRefundWhat(t *testing.T) {
	paidAt := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	buyer := inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods, By: "alice"}
	merchant := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "arn:aws:iam::1:user/op"}
	keep := inventory.RefundRequest{Requester: inventory.Merchant, By: "arn:aws:iam::1:user/op"}
	for _, tc := range []struct {
		name   string
		status inventory.Status
		r      inventory.RefundRequest
		window time.Duration
		now    time.Time
		want   inventory.RefundStep
	}{
		{"buyer inside the window", inventory.StatusPaid, buyer, time.Hour, paidAt.Add(59 * time.Minute), inventory.RefundReturn},
		{"buyer at the window's end", inventory.StatusPaid, buyer, time.Hour, paidAt.Add(time.Hour), 0},
		{"buyer with refunds off", inventory.StatusPaid, buyer, 0, paidAt, 0},
		{"buyer of a REFUND_PENDING order", inventory.StatusRefundPending, buyer, time.Hour, paidAt, 0},
		{"buyer of a PENDING order", inventory.StatusPending, buyer, time.Hour, paidAt, 0},
		{"buyer of a CANCELLED order", inventory.StatusCancelled, buyer, time.Hour, paidAt, 0},
		{"buyer again, order REFUNDING", inventory.StatusRefunding, buyer, 0, paidAt, inventory.RefundUnderway},
		{"buyer again, order REFUNDED", inventory.StatusRefunded, buyer, 0, paidAt, inventory.RefundDone},
		{"merchant, long after", inventory.StatusPaid, merchant, 0, paidAt.AddDate(1, 0, 0), inventory.RefundReturn},
		{"merchant without restock", inventory.StatusPaid, keep, 0, paidAt, inventory.RefundKeep},
		{"merchant of a REFUND_PENDING order", inventory.StatusRefundPending, merchant, 0, paidAt, inventory.RefundKeep},
		{"merchant of a CANCELLED order", inventory.StatusCancelled, merchant, 0, paidAt, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &inventory.Order{ID: "order-1", Status: tc.status, PaidAt: &paidAt}
			if tc.status == inventory.StatusRefunding || tc.status == inventory.StatusRefunded {
				// The same request made that refund: a replay.
				o.Refunds = []inventory.OrderRefund{{RefundID: tc.r.Key(), Body: tc.r.Body(), Reason: tc.r.Reason, Status: tc.status}}
			}
			got, err := o.RefundStep(tc.r, tc.window, tc.now)
			if got != tc.want || (tc.want == 0) != errors.Is(err, inventory.ErrRefundNotAllowed) {
				t.Errorf("RefundStep = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestOrderRefundStep_AnyOtherRequestOfAnOrderRefundedWholeIsExceedsPaid(t *testing.T) {
	paidAt := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	done := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "damaged", RefundID: "r1"}
	for _, status := range []inventory.Status{inventory.StatusRefunding, inventory.StatusRefunded} {
		o := &inventory.Order{ID: "order-1", Status: status, PaidAt: &paidAt,
			Refunds: []inventory.OrderRefund{{RefundID: done.Key(), Body: done.Body(), Reason: done.Reason, Status: status}}}
		for name, r := range map[string]inventory.RefundRequest{
			"without refundId, no restock": {Requester: inventory.Merchant, Goods: inventory.KeepGoods, By: "op", Reason: "again"},
			"without refundId, restock":    {Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "damaged"},
			"another refundId":             {Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "damaged", RefundID: "r2"},
		} {
			if step, err := o.RefundStep(r, 0, paidAt); !errors.Is(err, inventory.ErrRefundExceedsPaid) {
				t.Errorf("%s, %s: %v, %v; want ErrRefundExceedsPaid", status, name, step, err)
			}
		}
		if step, err := o.RefundStep(done, 0, paidAt); err != nil || step == 0 {
			t.Errorf("%s, the same request again: %v, %v; want a replay", status, step, err)
		}
	}
}

func TestOutRefundNo_ValidDistinctAndReadBack(t *testing.T) {
	long := strings.Repeat("a", 32)
	for _, id := range []string{"abc123", long, "0190f0e1-x_y"} {
		own, extra := inventory.OutRefundNo(id, 1), inventory.ExtraOutRefundNo(id, "4200000000000000000000000001")
		other := inventory.ExtraOutRefundNo(id, "4200000000000000000000000002")
		if !inventory.ValidOutRefundNo(own) || !inventory.ValidOutRefundNo(extra) || own == extra || extra == other {
			t.Errorf("%s: own %q, extra %q, other %q", id, own, extra, other)
		}
		for n := 1; n <= inventory.MaxRefundsPerOrder; n++ {
			no := inventory.OutRefundNo(id, n)
			if got, isOwn, ok := inventory.RefundOf(no); got != id || !isOwn || !ok || !inventory.ValidOutRefundNo(no) {
				t.Errorf("RefundOf(%q) = %q %v %v", no, got, isOwn, ok)
			}
		}
		if got, isOwn, ok := inventory.RefundOf(extra); got != id || isOwn || !ok {
			t.Errorf("RefundOf(%q) = %q %v %v", extra, got, isOwn, ok)
		}
	}
	for _, bad := range []string{"", "_R", "abc_R", "x#y_R", strings.Repeat("z", 65)} {
		if _, _, ok := inventory.RefundOf(bad); ok {
			t.Errorf("RefundOf(%q) accepted", bad)
		}
	}
	if inventory.ValidOutRefundNo(strings.Repeat("a", 65)) || inventory.ValidOutRefundNo("a b") || !inventory.ValidOutRefundNo("a|*@-_") {
		t.Error("ValidOutRefundNo does not follow WeChat Pay's pattern")
	}
}

func TestRefundCheck_RefusesAnotherRefund(t *testing.T) {
	r := &inventory.Refund{OutRefundNo: "order-1_R", OrderID: "order-1", Amount: 900}
	ok := inventory.RefundResult{OutRefundNo: "order-1_R", OutTradeNo: "order-1", Amount: 900}
	if err := r.Check(ok); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []inventory.RefundResult{
		{OutRefundNo: "order-2_R", OutTradeNo: "order-1", Amount: 900},
		{OutRefundNo: "order-1_R", OutTradeNo: "order-2", Amount: 900},
		{OutRefundNo: "order-1_R", OutTradeNo: "order-1", Amount: 899},
	} {
		if err := r.Check(bad); !errors.Is(err, inventory.ErrRefundMismatch) {
			t.Errorf("Check(%+v) = %v", bad, err)
		}
	}
}

func TestRefundProblems_GoodsBackExactlyWhenRestockedAndNeverMoreMoneyThanPaid(t *testing.T) {
	items := []inventory.OrderItem{{SKU: "cup", Qty: 2, UnitPrice: 3}, {SKU: "saucer", Qty: 1, UnitPrice: 3}}
	all := map[string]int{"cup": 2, "saucer": 1}
	whole := []inventory.RefundLine{{SKU: "cup", Qty: 2}, {SKU: "saucer", Qty: 1}}
	refund := func(restocked bool, got int64, lines ...inventory.RefundLine) inventory.OrderRefund {
		r := inventory.OrderRefund{OutRefundNo: "order-1_R", Lines: lines, Restocked: restocked, Status: inventory.StatusRefunding, RefundAmount: got}
		for _, l := range lines {
			r.Amount += int64(l.Qty) * 3
		}
		if got > 0 {
			r.Status = inventory.StatusRefunded
		}
		return r
	}
	cup1 := inventory.RefundLine{SKU: "cup", Qty: 1}
	for _, tc := range []struct {
		name     string
		refunds  []inventory.OrderRefund
		returned map[string]int
		problems int
	}{
		{"refunded, restocked, both returns", []inventory.OrderRefund{refund(true, 9, whole...)}, all, 0},
		{"refunding, restocked, one return missing", []inventory.OrderRefund{refund(true, 0, whole...)}, map[string]int{"cup": 2}, 1},
		{"refunded, restocked, no returns", []inventory.OrderRefund{refund(true, 9, whole...)}, nil, 2},
		{"refunded without restock", []inventory.OrderRefund{refund(false, 9, whole...)}, nil, 0},
		{"a return without restock", []inventory.OrderRefund{refund(false, 9, whole...)}, map[string]int{"saucer": 1}, 1},
		{"a return on an order never refunded", nil, all, 2},
		{"a return of other units", []inventory.OrderRefund{refund(true, 9, whole...)}, map[string]int{"cup": 3, "saucer": 1}, 1},
		{"refunded more than paid", []inventory.OrderRefund{refund(false, 10, whole...)}, nil, 1},
		{"two partial refunds, one restocked", []inventory.OrderRefund{refund(true, 3, cup1), refund(false, 0, cup1)}, map[string]int{"cup": 1}, 0},
		{"partial refunds past a line", []inventory.OrderRefund{refund(true, 0, cup1), refund(true, 0, inventory.RefundLine{SKU: "cup", Qty: 2})}, map[string]int{"cup": 3}, 1},
		{"a refund's amount not its lines'", []inventory.OrderRefund{{OutRefundNo: "order-1_R", Lines: []inventory.RefundLine{cup1}, Amount: 4}}, nil, 1},
	} {
		o := inventory.Order{ID: "order-1", Items: items, Amount: 9, Status: inventory.StatusPaid, Refunds: tc.refunds}
		if got := o.RefundProblems(tc.returned); len(got) != tc.problems {
			t.Errorf("%s: %q, want %d problems", tc.name, got, tc.problems)
		}
	}
}

// A request without a refundId asked again in other words: "all" of an order refunded
// whole has nothing left (409, not 422), and no answer shows another caller's reason.
// A refundId that a request without one would derive is refused.
func TestRefundStep_WithoutARefundIdAskedAgainInOtherWords(t *testing.T) {
	at := t0
	o := pendingOrder()
	o.Status, o.PaidAt, o.TransactionID = inventory.StatusPaid, &at, "tx1"
	shop := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.KeepGoods, By: "op", Reason: "lost in transit"}
	c, err := o.StartRefund(shop, 0, t0, inventory.Retry{})
	if err != nil || c.Order.Status != inventory.StatusRefunding {
		t.Fatalf("refund of all: %+v %v", c.Order, err)
	}
	buyer := inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods, By: "alice"}
	_, err = c.Order.RefundStep(buyer, time.Hour, t0)
	if !errors.Is(err, inventory.ErrRefundExceedsPaid) || strings.Contains(err.Error(), "lost in transit") {
		t.Errorf("the buyer's refund of an order refunded whole: %v; want ErrRefundExceedsPaid without the shop's reason", err)
	}
	one := []inventory.RefundLine{{SKU: "cup", Qty: 1}}
	first := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "chipped", Lines: one}
	c, err = o.StartRefund(first, 0, t0, inventory.Retry{})
	if err != nil {
		t.Fatal(err)
	}
	again := first
	again.Reason = "another"
	if _, err := c.Order.RefundStep(again, 0, t0); !errors.Is(err, inventory.ErrIdempotencyKeyReused) || strings.Contains(err.Error(), "chipped") {
		t.Errorf("the same lines with another reason: %v; want ErrIdempotencyKeyReused without the first reason", err)
	}
	for _, id := range []string{"all", "lines-0123456789abcdef"} {
		r := inventory.RefundRequest{RefundID: id, Lines: one}
		if err := r.ValidateLines(); !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("refundId %q: %v, want ErrInvalidRequest", id, err)
		}
	}
}

// A refund's bad lines are refused naming the refund's field, lines, not the order's.
func TestValidateLines_NamesTheLinesField(t *testing.T) {
	for msg, lines := range map[string][]inventory.RefundLine{
		"lines[0].qty must be an integer from 1 to": {{SKU: "cup", Qty: 0}},
		"lines[1].skuId must be 1-64 characters":    {{SKU: "cup", Qty: 1}, {SKU: "a b", Qty: 1}},
		"lines must hold 1 to":                      {},
	} {
		r := inventory.RefundRequest{Lines: lines}
		err := r.ValidateLines()
		if !errors.Is(err, inventory.ErrInvalidRequest) || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "items") {
			t.Errorf("lines %v: %v, want ErrInvalidRequest saying %q", lines, err, msg)
		}
	}
}

// Once a shipment is recorded (queued for upload or uploaded), the buyer's own refund,
// which puts the units back on sale, is refused: units with the courier must not be
// sold again. The merchant still refunds, restocking only if they say so.
func TestOrderRefundStep_BuyersRefundStopsAtTheFirstShipment(t *testing.T) {
	paidAt := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	buyer := inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods, By: "alice"}
	merchant := inventory.RefundRequest{Requester: inventory.Merchant, By: "arn:aws:iam::1:user/op"}
	for _, status := range []inventory.ShippingStatus{inventory.ShippingQueued, inventory.ShippingUploaded} {
		o := &inventory.Order{ID: "order-1", Status: inventory.StatusPaid, PaidAt: &paidAt,
			Shipping: &inventory.Shipping{Status: status, Shipments: []inventory.Shipment{{ID: "parcel-1"}}}}
		if _, err := o.RefundStep(buyer, time.Hour, paidAt.Add(time.Minute)); !errors.Is(err, inventory.ErrRefundNotAllowed) || !strings.Contains(err.Error(), "shipped") {
			t.Errorf("%s: the buyer's refund: %v, want ErrRefundNotAllowed saying it has shipped", status, err)
		}
		if step, err := o.RefundStep(merchant, 0, paidAt.Add(time.Minute)); err != nil || step != inventory.RefundKeep {
			t.Errorf("%s: the merchant's refund without restock: %v %v, want RefundKeep", status, step, err)
		}
	}
}

func TestRefundRecord_WaitingOnTheMerchantTellsToTopUpAndIsNotSettledByHand(t *testing.T) {
	now := time.Date(2026, 11, 11, 1, 0, 0, 0, time.UTC)
	o := &inventory.Order{ID: "order-1", Status: inventory.StatusRefunding, Amount: 900, Currency: "CNY",
		Refunds: []inventory.OrderRefund{{RefundID: "all", OutRefundNo: "order-1_R", Amount: 900, Status: inventory.StatusRefunding, Since: now}}}
	waiting := inventory.RefundResult{OutRefundNo: "order-1_R", OutTradeNo: "order-1", Amount: 900, State: inventory.RefundStateWaiting, Code: "NOT_ENOUGH"}
	c, err := o.RecordRefund(waiting, now)
	if err != nil || c.None() {
		t.Fatalf("RecordRefund = %v, %v", c.Kind, err)
	}
	r := c.Order.RefundByNo("order-1_R")
	if r.Status != inventory.StatusRefunding || !r.Waiting() || r.Refused() || !strings.Contains(r.Error, "top it up") {
		t.Errorf("refund after NOT_ENOUGH: %+v, want REFUNDING, waiting, telling to top up", r)
	}
	if c, err := c.Order.RecordRefund(waiting, now); err != nil || !c.None() {
		t.Errorf("the same answer again: %v, %v; want no change", c.Kind, err)
	}
	for _, how := range []inventory.Resolution{inventory.SettleRefund, inventory.RetryRefund} {
		if _, err := c.Order.ResolveRefund("order-1_R", how, "op", "by hand", now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
			t.Errorf("resolve %v of a waiting refund: %v, want ErrRefundNotAllowed", how, err)
		}
	}
	done, err := c.Order.RecordRefund(inventory.RefundResult{OutRefundNo: "order-1_R", OutTradeNo: "order-1", Amount: 900, State: inventory.RefundStateSuccess}, now)
	if err != nil || done.Order.Status != inventory.StatusRefunded || done.Order.Refunds[0].Error != "" {
		t.Errorf("SUCCESS after waiting: %+v, %v; want REFUNDED without error", done.Order, err)
	}
}

// A refund keeps its reason once: the body holds the lines and goods asked, not the
// reason, and a request under the same refundId is a replay only with the same reason.
func TestOrderRefund_BodyLeavesTheReasonToReason(t *testing.T) {
	paidAt := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	reason := strings.Repeat("退", inventory.MaxReasonLength)
	done := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: reason, RefundID: "r1"}
	if strings.Contains(done.Body(), "退") {
		t.Errorf("body %q holds the reason", done.Body())
	}
	o := &inventory.Order{ID: "order-1", Status: inventory.StatusPaid, PaidAt: &paidAt, Amount: 200,
		Items: []inventory.OrderItem{{SKU: "cup", Qty: 2, UnitPrice: 100}}}
	c, err := o.StartRefund(done, 0, paidAt, inventory.Retry{})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Order.Refund("r1")
	if r == nil || r.Reason != reason || strings.Contains(r.Body, "退") || !r.Asks(done) {
		t.Fatalf("refund %+v, want the reason once, in Reason", r)
	}
	if step, err := c.Order.RefundStep(done, 0, paidAt); err != nil || step != inventory.RefundUnderway {
		t.Errorf("the same request again: %v %v, want RefundUnderway", step, err)
	}
	other := done
	other.Reason = "another"
	if _, err := c.Order.RefundStep(other, 0, paidAt); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("refundId r1 with another reason: %v, want ErrIdempotencyKeyReused", err)
	}
}
