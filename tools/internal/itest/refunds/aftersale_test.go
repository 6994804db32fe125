package refunds_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// aftersale asks order id's after-sale route for body as user.
func aftersale(t *testing.T, h *stacktest.Stack, user, id, body string) (int, map[string]any) {
	t.Helper()
	return h.Call(t, http.MethodPost, "/orders/"+id+"/aftersales", user, nil, body)
}

// merchantStep calls the merchant's after-sale step (approve, reject, received) of
// after-sale as of order id with body.
func merchantStep(t *testing.T, h *stacktest.Stack, id, as, step, body string) (int, map[string]any) {
	t.Helper()
	return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/aftersales/"+as+"/"+step, "", nil, body)
}

// race sends step n times at once, each 503 BUSY sent again as a client does, and
// counts the answers.
func race(t *testing.T, n int, step func() int) map[int]int {
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			code := step()
			for code == http.StatusServiceUnavailable {
				code = step()
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return codes
}

// returns counts order id's RETURN ledger entries of sku (under any of its refunds'
// references).
func returns(t *testing.T, h *stacktest.Stack, o *inventory.Order, sku string) int {
	refs := map[string]bool{}
	for _, r := range o.Refunds {
		refs[inventory.RefundLedgerRef(o.ID, r)] = true
	}
	n := 0
	for _, it := range h.Scan(t, h.Tables.StockLog) {
		if ref, _ := it["ref"].(string); refs[ref] && it["op"] == string(inventory.OpReturn) && it["skuId"] == sku {
			n++
		}
	}
	return n
}

// A return-refund: asked by the owner only, never beyond what is paid, idempotent on
// its aftersaleId; approved, nothing moves; the goods received by eight concurrent
// calls are restocked exactly once (on-hand and available +2, one RETURN entry) and
// refunded exactly once at WeChat Pay, under the after-sale's refundId.
func TestAftersale_ReturnRefundRestocksAndRefundsOnceAtReceipt(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.PayServer.SetRefundInterval(0)
	h.RunInBackground(t)
	id, tx := paid(t, h, "buyer", `{"items":[{"skuId":"cup","qty":3},{"skuId":"saucer","qty":1}]}`)
	onHand, available := h.OnHand(t, "cup"), h.Available(t, "cup")
	body := `{"aftersaleId":"as-1","kind":"return-refund","lines":[{"skuId":"cup","qty":2}],"reason":"arrived cracked","images":["https://img.example.com/1.jpg"]}`

	before := h.Snapshot(t)
	for _, c := range []struct {
		name, user, body, code string
		status                 int
	}{
		{"anyone else's order", "mallory", body, "ORDER_NOT_FOUND", http.StatusNotFound},
		{"null lines", "buyer", `{"aftersaleId":"as-1","kind":"return-refund","lines":null,"reason":"x"}`, "INVALID_REQUEST", http.StatusBadRequest},
		{"beyond what is paid", "buyer", `{"aftersaleId":"as-1","kind":"refund","lines":[{"skuId":"cup","qty":4}],"reason":"x"}`, "REFUND_EXCEEDS_PAID", http.StatusConflict},
	} {
		hh := h
		if c.status == http.StatusBadRequest {
			hh = h.OutsideContract("lines null")
		}
		if code, out := aftersale(t, hh, c.user, id, c.body); code != c.status || out["code"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, code, out, c.status, c.code)
		}
	}
	if h.Snapshot(t) != before {
		t.Fatal("a refused after-sale changed the tables")
	}

	code, out := aftersale(t, h, "buyer", id, body)
	if code != http.StatusAccepted || out["status"] != "PAID" {
		t.Fatalf("request: %d %v, want 202", code, out)
	}
	if as := out["aftersales"].([]any); len(as) != 1 || as[0].(map[string]any)["status"] != "REQUESTED" {
		t.Fatalf("aftersales %v, want one REQUESTED", as)
	}
	if code, out := aftersale(t, h, "buyer", id, body); code != http.StatusAccepted || len(out["aftersales"].([]any)) != 1 {
		t.Errorf("the same request again: %d %v, want 202 and one after-sale", code, out)
	}
	if code, out := aftersale(t, h, "buyer", id, `{"aftersaleId":"as-1","kind":"refund","reason":"x"}`); code != http.StatusUnprocessableEntity || out["code"] != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("as-1 with another body: %d %v, want 422", code, out)
	}
	if code, out := merchantStep(t, h, id, "nope", "approve", ""); code != http.StatusNotFound || out["code"] != "AFTERSALE_NOT_FOUND" {
		t.Errorf("approve an unknown after-sale: %d %v, want 404 AFTERSALE_NOT_FOUND", code, out)
	}
	if code, out := merchantStep(t, h, id, "as-1", "received", ""); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("received before approval: %d %v, want 409", code, out)
	}
	if code, out := merchantStep(t, h, id, "as-1", "approve", ""); code != http.StatusOK || out["aftersales"].([]any)[0].(map[string]any)["status"] != "APPROVED" {
		t.Fatalf("approve: %d %v, want 200 APPROVED", code, out)
	}
	if o := h.Lookup(t, id); len(o.Refunds) != 0 || h.OnHand(t, "cup") != onHand {
		t.Fatalf("approved return-refund: %d refunds, on-hand %d; want none and %d until the goods are back", len(o.Refunds), h.OnHand(t, "cup"), onHand)
	}

	codes := race(t, 8, func() int { code, _ := merchantStep(t, h, id, "as-1", "received", ""); return code })
	if codes[http.StatusOK] != 8 {
		t.Errorf("8 concurrent receipts answered %v, want 8 × 200", codes)
	}
	o := h.Lookup(t, id)
	a := o.Aftersale("as-1")
	if len(o.Refunds) != 1 || o.Refunds[0].RefundID != "aftersale-as-1" || !o.Refunds[0].Restocked || o.Refunds[0].Amount != 2*39900 ||
		a.Status != inventory.AftersaleRefunding || a.OutRefundNo != o.Refunds[0].OutRefundNo || a.ReceivedAt == nil {
		t.Fatalf("after the receipts: refunds %+v, after-sale %+v; want one restocking refund of 2 cups, the after-sale REFUNDING under it", o.Refunds, a)
	}
	if on, av := h.OnHand(t, "cup"), h.Available(t, "cup"); on != onHand+2 || av != available+2 {
		t.Errorf("cup on-hand %d available %d, want %d and %d (restocked once)", on, av, onHand+2, available+2)
	}
	if n := returns(t, h, o, "cup"); n != 1 {
		t.Errorf("%d RETURN entries of cup, want 1", n)
	}
	eventually(t, waitLimit, "the after-sale's refund REFUNDED", func() bool {
		return h.Lookup(t, id).Refunds[0].Status == inventory.StatusRefunded
	})
	if rec, ok := h.PayServer.Refund(a.OutRefundNo); !ok || rec.Requests != 1 || rec.Amount.Refund != 2*39900 {
		t.Errorf("at WeChat Pay: %+v, want one request for %d fen", rec, 2*39900)
	}
	if got, _ := h.PayServer.Refunded(tx); got != 2*39900 {
		t.Errorf("WeChat Pay refunded %d fen, want %d", got, 2*39900)
	}
	if code, out := h.Call(t, http.MethodGet, "/admin/orders/"+id, "", nil, ""); code != http.StatusOK || out["aftersales"].([]any)[0].(map[string]any)["outRefundNo"] != a.OutRefundNo {
		t.Errorf("merchant's view: %d %v, want the after-sale with its outRefundNo", code, out["aftersales"])
	}
	if code, out := h.Call(t, http.MethodGet, "/orders/"+id, "buyer", nil, ""); code != http.StatusOK || out["aftersales"].([]any)[0].(map[string]any)["status"] != "REFUNDED" {
		t.Errorf("owner's view: %d %v, want the after-sale REFUNDED with its refund", code, out["aftersales"])
	}
	h.Check(t)
}

// A refund after-sale approved by eight concurrent calls starts exactly one refund,
// without goods (nothing restocked); a rejection gives the units back to ask for, and
// a decision the other way is 409.
func TestAftersale_RefundApprovedConcurrentlyRefundsOnceWithoutGoods(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"saucer","qty":2}]}`)
	onHand := h.OnHand(t, "saucer")
	if code, out := aftersale(t, h, "buyer", id, `{"aftersaleId":"late","kind":"refund","lines":[{"skuId":"saucer","qty":1}],"reason":"arrived late"}`); code != http.StatusAccepted {
		t.Fatalf("request: %d %v", code, out)
	}
	// The other saucer, asked and rejected, then asked again.
	if code, out := aftersale(t, h, "buyer", id, `{"aftersaleId":"more","kind":"refund","reason":"changed my mind"}`); code != http.StatusAccepted ||
		out["aftersales"].([]any)[1].(map[string]any)["lines"].([]any)[0].(map[string]any)["qty"] != float64(1) {
		t.Fatalf("request of the rest: %d %v, want the one saucer left", code, out)
	}
	if code, out := aftersale(t, h, "buyer", id, `{"aftersaleId":"third","kind":"refund","reason":"x"}`); code != http.StatusConflict || out["code"] != "REFUND_EXCEEDS_PAID" {
		t.Errorf("a third while both saucers are asked for: %d %v, want 409 REFUND_EXCEEDS_PAID", code, out)
	}
	if code, out := h.OutsideContract("no reason").Call(t, http.MethodPost, "/admin/orders/"+id+"/aftersales/more/reject", "", nil, `{}`); code != http.StatusBadRequest {
		t.Errorf("reject without a reason: %d %v, want 400", code, out)
	}
	if code, out := merchantStep(t, h, id, "more", "reject", `{"reason":"not a fault"}`); code != http.StatusOK || out["aftersales"].([]any)[1].(map[string]any)["rejectReason"] != "not a fault" {
		t.Fatalf("reject: %d %v", code, out)
	}
	if code, out := merchantStep(t, h, id, "more", "approve", ""); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("approve a rejected one: %d %v, want 409", code, out)
	}

	codes := race(t, 8, func() int { code, _ := merchantStep(t, h, id, "late", "approve", ""); return code })
	if codes[http.StatusOK] != 8 {
		t.Errorf("8 concurrent approvals answered %v, want 8 × 200", codes)
	}
	o := h.Lookup(t, id)
	if len(o.Refunds) != 1 || o.Refunds[0].RefundID != "aftersale-late" || o.Refunds[0].Restocked || o.Refunds[0].Amount != 12900 ||
		o.Aftersale("late").Status != inventory.AftersaleRefunding || o.Status != inventory.StatusPaid {
		t.Fatalf("refunds %+v, after-sale %+v; want one refund of a saucer without goods, the order still PAID", o.Refunds, o.Aftersale("late"))
	}
	if on := h.OnHand(t, "saucer"); on != onHand {
		t.Errorf("saucer on-hand %d, want %d: the goods stay with the buyer", on, onHand)
	}
	if code, out := merchantStep(t, h, id, "late", "reject", `{"reason":"too late"}`); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("reject an approved one: %d %v, want 409", code, out)
	}
	if code, out := aftersale(t, h, "buyer", id, `{"aftersaleId":"again","kind":"return-refund","reason":"cracked after all"}`); code != http.StatusAccepted {
		t.Errorf("the rejected saucer asked again: %d %v, want 202", code, out)
	}
	h.Check(t)
}

// Twelve after-sales of one saucer each, asked at once of an order of five: exactly
// five are REQUESTED (202) and kept, the others refused 409 REFUND_EXCEEDS_PAID;
// none overwrites another.
func TestAftersale_ConcurrentRequestsNeverClaimMoreThanWasPaid(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"saucer","qty":5}]}`)
	var mu sync.Mutex
	n := 0
	codes := race(t, 12, func() int {
		mu.Lock()
		n++
		body := `{"aftersaleId":"as-` + string(rune('a'+n)) + `","kind":"refund","lines":[{"skuId":"saucer","qty":1}],"reason":"x"}`
		mu.Unlock()
		code, _ := aftersale(t, h, "buyer", id, body)
		return code
	})
	if codes[http.StatusAccepted] != 5 || codes[http.StatusConflict] != 7 {
		t.Errorf("answers %v, want 5 × 202 and 7 × 409", codes)
	}
	if o := h.Lookup(t, id); len(o.Aftersales) != 5 {
		t.Errorf("%d after-sales kept, want 5", len(o.Aftersales))
	}
}

// A return-refund approved, then a refund the merchant starts takes its units: its
// receipt is 409 REFUND_EXCEEDS_PAID (the message says to reject it), nothing
// restocked; the merchant rejects it with a reason: 200 REJECTED, nothing refunded by
// it, and stock and ledger balance.
func TestAftersale_ApprovedReturnRefundWhoseUnitsAnotherRefundTookIsRejected(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"cup","qty":2}]}`)
	if code, out := aftersale(t, h, "buyer", id, `{"aftersaleId":"as-1","kind":"return-refund","lines":[{"skuId":"cup","qty":2}],"reason":"arrived cracked"}`); code != http.StatusAccepted {
		t.Fatalf("request: %d %v", code, out)
	}
	if code, out := merchantStep(t, h, id, "as-1", "approve", ""); code != http.StatusOK {
		t.Fatalf("approve: %d %v", code, out)
	}
	if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refund", "", nil, `{"restock":false,"reason":"refunded by phone","refundId":"m1","lines":[{"skuId":"cup","qty":1}]}`); code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("merchant's refund: %d %v", code, out)
	}
	onHand := h.OnHand(t, "cup")
	code, out := merchantStep(t, h, id, "as-1", "received", "")
	if msg, _ := out["message"].(string); code != http.StatusConflict || out["code"] != "REFUND_EXCEEDS_PAID" || !strings.Contains(msg, "reject it") {
		t.Errorf("received: %d %v, want 409 REFUND_EXCEEDS_PAID saying to reject it", code, out)
	}
	code, out = merchantStep(t, h, id, "as-1", "reject", `{"reason":"refunded by phone instead"}`)
	if a, _ := out["aftersales"].([]any); code != http.StatusOK || len(a) != 1 || a[0].(map[string]any)["status"] != "REJECTED" || a[0].(map[string]any)["rejectReason"] != "refunded by phone instead" {
		t.Fatalf("reject the approved return-refund: %d %v, want 200 REJECTED with its reason", code, out)
	}
	if code, out := merchantStep(t, h, id, "as-1", "received", ""); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("received after the rejection: %d %v, want 409 REFUND_NOT_ALLOWED", code, out)
	}
	if o := h.Lookup(t, id); len(o.Refunds) != 1 || o.Refunds[0].RefundID != "m1" || h.OnHand(t, "cup") != onHand {
		t.Errorf("refunds %+v, cup on-hand %d; want the merchant's refund only and on-hand %d", o.Refunds, h.OnHand(t, "cup"), onHand)
	}
	h.Check(t)
}
