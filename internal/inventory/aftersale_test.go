package inventory_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// paidForAftersale is a PAID order of 3 cups and 1 saucer, one cup refunded already.
func paidForAftersale() *inventory.Order {
	o := pendingOrder()
	at := t0.Add(time.Minute)
	o.Status, o.PaidAt, o.TransactionID = inventory.StatusPaid, &at, "tx1"
	o.Refunds = []inventory.OrderRefund{{RefundID: "r1", OutRefundNo: "order-1_R", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}, Amount: 100, Status: inventory.StatusRefunded}}
	return o
}

func TestAftersaleRequest_Validate(t *testing.T) {
	good := inventory.AftersaleRequest{ID: "as-1", Kind: inventory.AftersaleReturnRefund, Reason: "broken", Images: []string{"https://img.example.com/1.jpg"},
		Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}, {SKU: "cup", Qty: 1}}}
	if err := good.Validate(); err != nil || len(good.Lines) != 1 || good.Lines[0].Qty != 2 {
		t.Errorf("Validate = %v, lines %v; want nil and the cup lines merged", err, good.Lines)
	}
	for name, mutate := range map[string]func(*inventory.AftersaleRequest){
		"no id":         func(r *inventory.AftersaleRequest) { r.ID = "" },
		"long id":       func(r *inventory.AftersaleRequest) { r.ID = string(make([]byte, inventory.MaxAftersaleIDLength+1)) },
		"unknown kind":  func(r *inventory.AftersaleRequest) { r.Kind = "exchange" },
		"no reason":     func(r *inventory.AftersaleRequest) { r.Reason = "" },
		"http image":    func(r *inventory.AftersaleRequest) { r.Images = []string{"http://img.example.com/1.jpg"} },
		"a space":       func(r *inventory.AftersaleRequest) { r.Images = []string{"https://img.example.com/a b.jpg"} },
		"10 images":     func(r *inventory.AftersaleRequest) { r.Images = make([]string, 10) },
		"a zero line":   func(r *inventory.AftersaleRequest) { r.Lines = []inventory.RefundLine{{SKU: "cup", Qty: 0}} },
		"an empty list": func(r *inventory.AftersaleRequest) { r.Lines = []inventory.RefundLine{} },
	} {
		r := good
		r.Lines = []inventory.RefundLine{{SKU: "cup", Qty: 1}}
		mutate(&r)
		if err := r.Validate(); !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
}

func TestRequestAftersale_IdempotentAndNeverBeyondWhatIsLeft(t *testing.T) {
	o := paidForAftersale()
	now := t0.Add(time.Hour)
	r := inventory.AftersaleRequest{ID: "as-1", Kind: inventory.AftersaleRefund, Reason: "late", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 2}}}
	next, created, err := o.RequestAftersale(r, now)
	if err != nil || !created || next.Aftersale("as-1").Status != inventory.AftersaleRequested || len(o.Aftersales) != 0 {
		t.Fatalf("RequestAftersale = %+v %v %v", next.Aftersales, created, err)
	}
	if again, created, err := next.RequestAftersale(r, now); err != nil || created || again != next {
		t.Errorf("same request again: %v %v, want the order unchanged", created, err)
	}
	other := r
	other.Reason = "changed my mind"
	if _, _, err := next.RequestAftersale(other, now); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("same id, other body: %v, want ErrIdempotencyKeyReused", err)
	}
	// 3 cups paid, 1 refunded, 2 claimed by as-1: no cup is left to ask for.
	more := inventory.AftersaleRequest{ID: "as-2", Kind: inventory.AftersaleRefund, Reason: "x", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}
	if _, _, err := next.RequestAftersale(more, now); !errors.Is(err, inventory.ErrRefundExceedsPaid) {
		t.Errorf("a cup beyond what is left: %v, want ErrRefundExceedsPaid", err)
	}
	all := inventory.AftersaleRequest{ID: "as-3", Kind: inventory.AftersaleReturnRefund, Reason: "x"}
	if n, _, err := next.RequestAftersale(all, now); err != nil || len(n.Aftersale("as-3").Lines) != 1 || n.Aftersale("as-3").Lines[0] != (inventory.RefundLine{SKU: "saucer", Qty: 1}) {
		t.Errorf("all that is left: %v, want the saucer only", err)
	}
	// A rejected after-sale gives its units back to ask for.
	rejected, _, err := next.DecideAftersale("as-1", false, "op", "not late", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rejected.RequestAftersale(more, now); err != nil {
		t.Errorf("after the rejection: %v, want the cup free to ask for", err)
	}
	pending := pendingOrder()
	if _, _, err := pending.RequestAftersale(r, now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("a PENDING order: %v, want ErrRefundNotAllowed", err)
	}
}

func TestAftersale_RefundAtApprovalReturnRefundAtReceipt(t *testing.T) {
	now := t0.Add(time.Hour)
	o, _, _ := paidForAftersale().RequestAftersale(inventory.AftersaleRequest{ID: "money", Kind: inventory.AftersaleRefund, Reason: "late", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}, now)
	o, _, _ = o.RequestAftersale(inventory.AftersaleRequest{ID: "goods", Kind: inventory.AftersaleReturnRefund, Reason: "broken", Lines: []inventory.RefundLine{{SKU: "saucer", Qty: 1}}}, now)

	o, refund, err := o.DecideAftersale("money", true, "op", "", now)
	if err != nil || refund == nil || refund.Goods != inventory.KeepGoods || refund.RefundID != "aftersale-money" || refund.Requester != inventory.Merchant || len(refund.Lines) != 1 {
		t.Fatalf("approve refund: %+v %v; want a refund of its lines without goods", refund, err)
	}
	if _, again, err := o.DecideAftersale("money", true, "op", "", now); err != nil || again == nil || again.RefundID != refund.RefundID {
		t.Errorf("approved again: %+v %v, want the same refund (StartRefund replays it)", again, err)
	}
	if _, _, err := o.DecideAftersale("money", false, "op", "no", now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("reject an approved one: %v, want ErrRefundNotAllowed", err)
	}
	if _, _, err := o.ReceiveAftersale("goods", "op", now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("receive before approval: %v, want ErrRefundNotAllowed", err)
	}
	o, refund, err = o.DecideAftersale("goods", true, "op", "", now)
	if err != nil || refund != nil || o.Aftersale("goods").Status != inventory.AftersaleApproved {
		t.Fatalf("approve return-refund: %+v %v; want APPROVED and no refund before the goods are back", refund, err)
	}
	o, refund, err = o.ReceiveAftersale("goods", "op", now)
	if err != nil || refund == nil || refund.Goods != inventory.ReturnGoods || o.Aftersale("goods").ReceivedAt == nil {
		t.Fatalf("receive: %+v %v; want the refund with the units restocked", refund, err)
	}
	// The refund it starts is issue 25's partial refund.
	c, err := o.StartRefund(*refund, 0, now, inventory.Retry{})
	if err != nil || len(c.Stock) != 1 || c.Stock[0].Item.SKU != "saucer" || c.Order.Status != inventory.StatusPaid {
		t.Errorf("StartRefund of the received return: %+v %v", c.Stock, err)
	}
	if o := o.AftersaleRefunding("goods", "order-1_R2"); o.Aftersale("goods").Status != inventory.AftersaleRefunding || o.Aftersale("goods").OutRefundNo != "order-1_R2" {
		t.Errorf("after its refund started: %+v", o.Aftersale("goods"))
	}
	if _, _, err := o.DecideAftersale("nope", true, "op", "", now); !errors.Is(err, inventory.ErrAftersaleNotFound) {
		t.Errorf("unknown after-sale: %v, want ErrAftersaleNotFound", err)
	}
	if _, _, err := o.ReceiveAftersale("money", "op", now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("receive a refund without return: %v, want ErrRefundNotAllowed", err)
	}
}

func TestAftersaleChanges_OneConditionalChangeEachAndReplaysAreNone(t *testing.T) {
	now := t0.Add(time.Hour)
	o := paidForAftersale()
	c, err := o.RequestAftersaleChange(inventory.AftersaleRequest{ID: "money", Kind: inventory.AftersaleRefund, Reason: "late", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}, now)
	if err != nil || c.Kind != inventory.ChangeAftersale || c.From != inventory.StatusPaid || !c.Guards.Has(inventory.GuardAftersales|inventory.GuardRefunds) || len(c.Stock) != 0 {
		t.Fatalf("request: %+v %v; want an after-sale change conditioned on the after-sales and refunds as read", c, err)
	}
	o = c.Order
	if again, err := o.RequestAftersaleChange(o.Aftersales[0].AftersaleRequest, now); err != nil || !again.None() {
		t.Errorf("the same request again: %v %v, want no change", again.Kind, err)
	}
	c, err = o.DecideAftersaleChange("money", true, "op", "", now, inventory.Retry{})
	if err != nil || c.Kind != inventory.ChangeRefundStart || len(c.Stock) != 0 || !c.Guards.Has(inventory.GuardAftersales|inventory.GuardRefunds) || c.Marker == nil {
		t.Fatalf("approve a refund: %+v %v; want its refund started, no goods, in the same change", c, err)
	}
	a := c.Order.Aftersale("money")
	if a.Status != inventory.AftersaleRefunding || a.OutRefundNo != "order-1_R2" || c.Marker.OutRefundNo != "order-1_R2" || c.Order.Refund("aftersale-money") == nil {
		t.Fatalf("approved: %+v; want REFUNDING under order-1_R2", a)
	}
	o = c.Order
	if again, err := o.DecideAftersaleChange("money", true, "op", "", now, inventory.Retry{}); err != nil || !again.None() {
		t.Errorf("approved again: %v %v, want no change (nothing refunded twice)", again.Kind, err)
	}

	c, _ = o.RequestAftersaleChange(inventory.AftersaleRequest{ID: "goods", Kind: inventory.AftersaleReturnRefund, Reason: "broken", Lines: []inventory.RefundLine{{SKU: "saucer", Qty: 1}}}, now)
	o = c.Order
	c, err = o.DecideAftersaleChange("goods", true, "op", "", now, inventory.Retry{})
	if err != nil || c.Kind != inventory.ChangeAftersale || len(c.Stock) != 0 || c.Marker != nil || c.Order.Aftersale("goods").Status != inventory.AftersaleApproved {
		t.Fatalf("approve a return-refund: %+v %v; want APPROVED, nothing restocked or refunded yet", c, err)
	}
	o = c.Order
	c, err = o.ReceiveAftersaleChange("goods", "op", now, inventory.Retry{Retired: map[string]bool{"saucer": true}})
	if err != nil || c.Kind != inventory.ChangeRefundStart || len(c.Stock) != 1 || c.Stock[0].Item.SKU != "saucer" || c.Stock[0].Item.Shards[0] != 1 || !c.Stock[0].Returns() {
		t.Fatalf("receive: %+v %v; want the saucer returned (on shard 0: its shard was retired) with its refund", c.Stock, err)
	}
	if a := c.Order.Aftersale("goods"); a.Status != inventory.AftersaleRefunding || a.ReceivedAt == nil || a.OutRefundNo != "order-1_R3" {
		t.Errorf("received: %+v", a)
	}
	if again, err := c.Order.ReceiveAftersaleChange("goods", "op", now, inventory.Retry{}); err != nil || !again.None() {
		t.Errorf("received again: %v %v, want no change (restocked once)", again.Kind, err)
	}
}

func TestRequestAftersale_BoundedPerOrder(t *testing.T) {
	o := paidForAftersale()
	now := t0.Add(time.Hour)
	for i := range inventory.MaxAftersalesPerOrder {
		next, _, err := o.RequestAftersale(inventory.AftersaleRequest{ID: "as-" + string(rune('a'+i)), Kind: inventory.AftersaleRefund, Reason: "x", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if o, _, err = next.DecideAftersale(next.Aftersales[i].ID, false, "op", "no", now); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := o.RequestAftersale(inventory.AftersaleRequest{ID: "one-more", Kind: inventory.AftersaleRefund, Reason: "x"}, now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("after-sale %d: %v, want ErrRefundNotAllowed", inventory.MaxAftersalesPerOrder+1, err)
	}
}

func TestBuyerRefund_OfAShippedOrderPointsToTheAftersaleRoute(t *testing.T) {
	o := paidForAftersale()
	o.Shipping = &inventory.Shipping{Status: inventory.ShippingQueued, Shipments: []inventory.Shipment{{ID: "s1", Logistics: inventory.LogisticsExpress}}}
	_, err := o.RefundStep(inventory.RefundRequest{Requester: inventory.Buyer, Goods: inventory.ReturnGoods}, time.Hour, t0.Add(2*time.Minute))
	var refusal *inventory.RefusalError
	if !errors.Is(err, inventory.ErrRefundNotAllowed) || !errors.As(err, &refusal) || !strings.Contains(refusal.Reason, "POST /orders/order-1/aftersales") {
		t.Errorf("buyer's refund of a shipped order: %v; want REFUND_NOT_ALLOWED naming the after-sale route", err)
	}
}

// A request that left its lines out ("every unit left"), sent again the same way after
// the answer was lost, is the same request although its lines were resolved when
// first asked; with another reason it is still another request.
func TestRequestAftersale_WithoutLinesReplays(t *testing.T) {
	r := inventory.AftersaleRequest{ID: "as-all", Kind: inventory.AftersaleReturnRefund, Reason: "bad"}
	next, created, err := paidForAftersale().RequestAftersale(r, t0.Add(time.Hour))
	if err != nil || !created || len(next.Aftersale("as-all").Lines) == 0 {
		t.Fatalf("first: %v %v", created, err)
	}
	if again, created, err := next.RequestAftersale(r, t0.Add(2*time.Hour)); err != nil || created || again != next {
		t.Errorf("the same request again: %v %v, want the order unchanged", created, err)
	}
	r.Reason = "worse"
	if _, _, err := next.RequestAftersale(r, t0.Add(2*time.Hour)); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("another reason: %v, want ErrIdempotencyKeyReused", err)
	}
}

// An approval finds what is left to refund as it is then: units another refund took
// since the request, an order refunded whole, or one at its MaxOrderRefunds refunds
// are refused, the after-sale left REQUESTED (the merchant rejects it), never
// APPROVED with a refund that can never start.
func TestDecideAftersale_ApprovalNeedsItsUnitsStillRefundable(t *testing.T) {
	r := inventory.AftersaleRequest{ID: "as-1", Kind: inventory.AftersaleReturnRefund, Reason: "cracked", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 2}}}
	asked, _, err := paidForAftersale().RequestAftersale(r, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	took := *asked // the merchant refunded a cup meanwhile: 1 of 3 left
	took.Refunds = append(slices.Clone(asked.Refunds), inventory.OrderRefund{RefundID: "m1", OutRefundNo: "order-1_R2", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}, Status: inventory.StatusRefunding})
	whole := *asked
	whole.Status = inventory.StatusRefunded
	capped := *asked
	capped.Refunds = make([]inventory.OrderRefund, inventory.MaxOrderRefunds)
	for name, c := range map[string]struct {
		o    *inventory.Order
		want error
	}{"lines taken": {&took, inventory.ErrRefundExceedsPaid}, "refunded whole": {&whole, inventory.ErrRefundNotAllowed}, "at the refund cap": {&capped, inventory.ErrRefundNotAllowed}} {
		if _, _, err := c.o.DecideAftersale("as-1", true, "op", "", t0.Add(2*time.Hour)); !errors.Is(err, c.want) {
			t.Errorf("%s: approve = %v, want %v", name, err, c.want)
		}
		if next, _, err := c.o.DecideAftersale("as-1", false, "op", "gone", t0.Add(2*time.Hour)); err != nil || next.Aftersale("as-1").Status != inventory.AftersaleRejected {
			t.Errorf("%s: reject = %v, want REJECTED", name, err)
		}
	}
	if _, _, err := capped.RequestAftersale(inventory.AftersaleRequest{ID: "as-2", Kind: inventory.AftersaleRefund, Reason: "x", Lines: []inventory.RefundLine{{SKU: "saucer", Qty: 1}}}, t0.Add(2*time.Hour)); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("a request at the refund cap: %v, want ErrRefundNotAllowed", err)
	}
}

// The views show an after-sale REFUNDED once the refund it started is REFUNDED.
func TestAftersaleShown_RefundedWithItsRefund(t *testing.T) {
	o := paidForAftersale()
	a := inventory.Aftersale{Status: inventory.AftersaleRefunding, OutRefundNo: "order-1_R2"}
	o.Refunds = append(o.Refunds, inventory.OrderRefund{OutRefundNo: "order-1_R2", Status: inventory.StatusRefunding})
	if got := o.AftersaleShown(a); got != inventory.AftersaleRefunding {
		t.Errorf("refund under way: %s, want REFUNDING", got)
	}
	o.Refunds[1].Status = inventory.StatusRefunded
	if got := o.AftersaleShown(a); got != inventory.AftersaleRefunded {
		t.Errorf("refund done: %s, want REFUNDED", got)
	}
}

// A refund without goods back of a shipped order (an approved "refund" after-sale)
// leaves the units with the buyer, so their purchase counters stay counted: the
// per-user limit does not let the buyer hold more. The same units returned
// (ReturnGoods, a received "return-refund") are given back.
func TestStartRefund_UnitsKeptByTheBuyerStayCounted(t *testing.T) {
	paid := paidOrder()
	at := t0.Add(time.Minute)
	paid.PaidAt = &at
	o := shipped(t, paid, parcel)
	now := at.Add(time.Hour)
	for goods, want := range map[inventory.Goods]int{inventory.KeepGoods: 0, inventory.ReturnGoods: 1} {
		req := inventory.RefundRequest{Requester: inventory.Merchant, Goods: goods, By: "op", Reason: "after-sale", RefundID: "as", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}
		c, err := o.StartRefund(req, 0, now, inventory.Retry{})
		if err != nil {
			t.Fatalf("goods %v: %v", goods, err)
		}
		if len(c.Limits) != want || want == 1 && c.Limits[0].Units != -1 {
			t.Errorf("goods %v: counters %+v, want %d given back", goods, c.Limits, want)
		}
	}
}

// A return-refund approved, whose units a refund the merchant started meanwhile took:
// its receipt cannot refund them (409 naming the way out), and the merchant rejects
// it with a reason: REJECTED, nothing refunded. A received one, or an approved
// "refund", cannot be rejected.
func TestDecideAftersale_RejectsAnApprovedReturnRefundWaitingForItsGoods(t *testing.T) {
	now := t0.Add(time.Hour)
	o, _, _ := paidForAftersale().RequestAftersale(inventory.AftersaleRequest{ID: "goods", Kind: inventory.AftersaleReturnRefund, Reason: "cracked", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 2}}}, now)
	o, _, err := o.DecideAftersale("goods", true, "op", "", now)
	if err != nil || o.Aftersale("goods").Status != inventory.AftersaleApproved {
		t.Fatalf("approve: %v", err)
	}
	took := *o // the merchant refunded a cup meanwhile: 1 of the 2 asked is left
	took.Refunds = append(slices.Clone(o.Refunds), inventory.OrderRefund{RefundID: "m1", OutRefundNo: "order-1_R2", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}, Status: inventory.StatusRefunding})
	_, _, err = took.ReceiveAftersale("goods", "op", now)
	var refusal *inventory.RefusalError
	if !errors.Is(err, inventory.ErrRefundExceedsPaid) || !errors.As(err, &refusal) || !strings.Contains(refusal.Reason, "reject it") {
		t.Errorf("received after another refund took its units: %v, want ErrRefundExceedsPaid saying to reject it", err)
	}
	rejected, refund, err := took.DecideAftersale("goods", false, "op2", "refunded by hand instead", now.Add(time.Minute))
	if a := rejected.Aftersale("goods"); err != nil || refund != nil || a.Status != inventory.AftersaleRejected || a.RejectReason != "refunded by hand instead" || a.DecidedBy != "op2" {
		t.Fatalf("reject the approved return-refund: %+v %+v %v, want REJECTED with its reason, no refund", a, refund, err)
	}
	if again, _, err := rejected.DecideAftersale("goods", false, "op2", "refunded by hand instead", now.Add(time.Minute)); err != nil || again != rejected {
		t.Errorf("rejected again: %v, want the order unchanged", err)
	}
	for name, step := range map[string]func() error{
		"approve the rejected": func() error { _, _, err := rejected.DecideAftersale("goods", true, "op", "", now); return err },
		"receive the rejected": func() error { _, _, err := rejected.ReceiveAftersale("goods", "op", now); return err },
	} {
		if err := step(); !errors.Is(err, inventory.ErrRefundNotAllowed) {
			t.Errorf("%s: %v, want ErrRefundNotAllowed", name, err)
		}
	}
	// Its units are free to ask for again: the cup the other refund left.
	if _, created, err := rejected.RequestAftersale(inventory.AftersaleRequest{ID: "goods-2", Kind: inventory.AftersaleReturnRefund, Reason: "cracked", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}, now); err != nil || !created {
		t.Errorf("ask again for the cup left: %v", err)
	}

	received, _, err := o.ReceiveAftersale("goods", "op", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := received.DecideAftersale("goods", false, "op", "changed my mind", now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("reject a received return-refund: %v, want ErrRefundNotAllowed", err)
	}
	money, _, _ := paidForAftersale().RequestAftersale(inventory.AftersaleRequest{ID: "money", Kind: inventory.AftersaleRefund, Reason: "late", Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}, now)
	money, _, _ = money.DecideAftersale("money", true, "op", "", now)
	if _, _, err := money.DecideAftersale("money", false, "op", "no", now); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("reject an approved refund: %v, want ErrRefundNotAllowed", err)
	}
}
