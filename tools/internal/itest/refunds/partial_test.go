package refunds_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// merchantRefund asks the merchant's refund route for body's refund of order id and
// returns the answer.
func merchantRefund(t *testing.T, h *stacktest.Stack, id, body string) (int, map[string]any) {
	t.Helper()
	return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refund", "", nil, body)
}

// refundBody is a merchant refund body restocking lines under refundID.
func refundBody(refundID string, lines ...string) string {
	b := `{"restock":true,"reason":"returned","refundId":"` + refundID + `"`
	if len(lines) > 0 {
		b += `,"lines":[`
		for i, l := range lines {
			if i > 0 {
				b += ","
			}
			var sku string
			var qty int
			fmt.Sscanf(l, "%s %d", &sku, &qty)
			b += fmt.Sprintf(`{"skuId":%q,"qty":%d}`, sku, qty)
		}
		b += "]"
	}
	return b + "}"
}

// refundStatuses are the statuses of order id's refunds, oldest first.
func refundStatuses(t *testing.T, h *stacktest.Stack, id string) []inventory.Status {
	var out []inventory.Status
	for _, r := range h.Lookup(t, id).Refunds {
		out = append(out, r.Status)
	}
	return out
}

// Two partial refunds, then a third asking for more than is left: the first two go
// REFUNDED at WeChat Pay, each under its own out_refund_no and amount; the third is
// 409 REFUND_EXCEEDS_PAID with nothing changed; on-hand and available are back by
// exactly the refunded units, the purchase counter by the refunded cups, and the
// order stays PAID with its refunds listed until the rest is refunded.
func TestPartialRefunds_TwoThenOneBeyondWhatWasPaid(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.PayServer.SetRefundInterval(0)
	h.RunInBackground(t)
	id, tx := paid(t, h, "buyer", `{"items":[{"skuId":"cup","qty":3},{"skuId":"saucer","qty":1}]}`)
	cupOnHand, cupAvailable, saucerOnHand := h.OnHand(t, "cup"), h.Available(t, "cup"), h.OnHand(t, "saucer")

	if code, out := merchantRefund(t, h, id, refundBody("first", "cup 1")); code != http.StatusAccepted || out["status"] != "PAID" {
		t.Fatalf("first refund: %d %v, want 202 and the order still PAID", code, out)
	}
	if code, out := merchantRefund(t, h, id, refundBody("second", "cup 1", "saucer 1")); code != http.StatusAccepted || out["status"] != "PAID" {
		t.Fatalf("second refund: %d %v", code, out)
	}
	eventually(t, waitLimit, "both refunds REFUNDED", func() bool {
		s := refundStatuses(t, h, id)
		return len(s) == 2 && s[0] == inventory.StatusRefunded && s[1] == inventory.StatusRefunded
	})
	before := h.Snapshot(t)
	code, out := merchantRefund(t, h, id, refundBody("third", "cup 2"))
	if code != http.StatusConflict || out["code"] != "REFUND_EXCEEDS_PAID" {
		t.Errorf("third refund beyond what was paid: %d %v, want 409 REFUND_EXCEEDS_PAID", code, out)
	}
	if h.Snapshot(t) != before {
		t.Error("a refused refund changed the tables")
	}

	order := h.Lookup(t, id)
	if order.Status != inventory.StatusPaid || len(order.Refunds) != 2 || order.RefundedAmount() != 2*39900+12900 {
		t.Errorf("order %s with %d refunds, %d fen refunded; want PAID, 2, %d", order.Status, len(order.Refunds), order.RefundedAmount(), 2*39900+12900)
	}
	for i, want := range []struct {
		no     string
		amount int64
	}{{id + "_R", 39900}, {id + "_R2", 39900 + 12900}} {
		r := order.Refunds[i]
		rec, ok := h.PayServer.Refund(r.OutRefundNo)
		if r.OutRefundNo != want.no || r.Amount != want.amount || !ok || rec.Amount.Refund != want.amount || rec.Amount.Total != order.Amount || rec.Requests != 1 {
			t.Errorf("refund %d: %+v, at WeChat Pay %+v; want %s for %d fen of %d, asked once", i, r, rec, want.no, want.amount, order.Amount)
		}
	}
	if got, _ := h.PayServer.Refunded(tx); got != 2*39900+12900 {
		t.Errorf("WeChat Pay refunded %d fen, want %d", got, 2*39900+12900)
	}
	if on, av, so := h.OnHand(t, "cup"), h.Available(t, "cup"), h.OnHand(t, "saucer"); on != cupOnHand+2 || av != cupAvailable+2 || so != saucerOnHand+1 {
		t.Errorf("cup on-hand %d available %d, saucer on-hand %d; want %d, %d, %d", on, av, so, cupOnHand+2, cupAvailable+2, saucerOnHand+1)
	}
	if bought := h.Item(t, h.Tables.Orders, "limit#cup#buyer")["bought"]; fmt.Sprint(bought) != "1" {
		t.Errorf("cup purchase counter %v, want 1 (3 bought, 2 refunded)", bought)
	}
	var rep reconcile.Report
	h.RunScheduled(t, "reconcile", &rep)
	if len(rep.Differences)+len(rep.RefundProblems) != 0 {
		t.Errorf("reconcile: %+v", rep)
	}

	// The rest: no lines, a refund of all that is left, and the order is REFUNDED.
	if code, out := merchantRefund(t, h, id, `{"restock":true,"reason":"the rest","refundId":"rest"}`); code != http.StatusAccepted || out["status"] != "REFUNDING" {
		t.Fatalf("refund of the rest: %d %v, want 202 REFUNDING", code, out)
	}
	eventually(t, waitLimit, "order REFUNDED", func() bool { return status(t, h, id) == inventory.StatusRefunded })
	if on := h.OnHand(t, "cup"); on != cupOnHand+3 {
		t.Errorf("cup on-hand %d, want %d", on, cupOnHand+3)
	}
	if got, _ := h.PayServer.Refunded(tx); got != order.Amount {
		t.Errorf("WeChat Pay refunded %d fen, want all %d", got, order.Amount)
	}
	h.Check(t)
}

// A refundId is the refund's idempotency key: the same id and body again answers the
// order and refunds nothing more; another body under it (restock, reason, lines) is
// 422 IDEMPOTENCY_KEY_REUSED with nothing changed. Without a refundId the request's
// lines are its key: sent again, it refunds nothing more.
func TestPartialRefunds_RefundIDIsTheIdempotencyKey(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"saucer","qty":5}]}`)
	if code, out := merchantRefund(t, h, id, refundBody("rf-1", "saucer 1")); code != http.StatusAccepted {
		t.Fatalf("refund: %d %v", code, out)
	}
	before := h.Snapshot(t)
	if code, out := merchantRefund(t, h, id, refundBody("rf-1", "saucer 1")); code != http.StatusAccepted || len(out["refunds"].([]any)) != 1 {
		t.Errorf("same refundId and body: %d %v, want 202 and one refund", code, out)
	}
	for _, body := range []string{
		`{"restock":false,"reason":"returned","refundId":"rf-1","lines":[{"skuId":"saucer","qty":1}]}`,
		`{"restock":true,"reason":"other","refundId":"rf-1","lines":[{"skuId":"saucer","qty":1}]}`,
		refundBody("rf-1", "saucer 2"),
		refundBody("rf-1"),
	} {
		if code, out := merchantRefund(t, h, id, body); code != http.StatusUnprocessableEntity || out["code"] != "IDEMPOTENCY_KEY_REUSED" {
			t.Errorf("%s: %d %v, want 422 IDEMPOTENCY_KEY_REUSED", body, code, out)
		}
	}
	if h.Snapshot(t) != before {
		t.Error("a replay or a reused refundId changed the tables")
	}
	noID := `{"restock":true,"reason":"returned","lines":[{"skuId":"saucer","qty":2}]}`
	for range 2 {
		if code, out := merchantRefund(t, h, id, noID); code != http.StatusAccepted {
			t.Errorf("without refundId: %d %v", code, out)
		}
	}
	if o := h.Lookup(t, id); len(o.Refunds) != 2 || o.RefundsAmount() != 3*12900 {
		t.Errorf("refunds %+v, want 2 covering 3 saucers", o.Refunds)
	}
	h.Check(t)
}

// Twenty partial refunds of one saucer each race on an order of ten: exactly ten
// are started (202), the others refused 409 REFUND_EXCEEDS_PAID (a racer answered 503
// BUSY, nothing changed, sends again); exactly ten RETURN entries and ten units are
// back; nothing refunds past what was paid.
func TestPartialRefunds_RacingRefundsNeverExceedWhatWasPaid(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"saucer","qty":10}]}`)
	onHand := h.OnHand(t, "saucer")
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			code, _ := merchantRefund(t, h, id, refundBody(fmt.Sprintf("race-%d", i), "saucer 1"))
			for code == http.StatusServiceUnavailable { // 503 BUSY changed nothing: retry, as a client does
				code, _ = merchantRefund(t, h, id, refundBody(fmt.Sprintf("race-%d", i), "saucer 1"))
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusAccepted] != 10 || codes[http.StatusConflict] != 10 {
		t.Errorf("answers %v, want 10 × 202 and 10 × 409", codes)
	}
	o := h.Lookup(t, id)
	if len(o.Refunds) != 10 || o.RefundsAmount() != o.Amount || o.Status != inventory.StatusRefunding {
		t.Errorf("order %s with %d refunds for %d of %d fen, want REFUNDING with 10 for all", o.Status, len(o.Refunds), o.RefundsAmount(), o.Amount)
	}
	returns := 0
	for _, it := range h.Scan(t, h.Tables.StockLog) {
		if it["ref"] == id && it["op"] == string(inventory.OpReturn) {
			returns++
		}
	}
	if returns != 10 || h.OnHand(t, "saucer") != onHand+10 {
		t.Errorf("%d RETURN entries, saucer on-hand %d; want 10 and %d", returns, h.OnHand(t, "saucer"), onHand+10)
	}
	h.Check(t)
}

// WeChat Pay's rule on refunds of one payment: a second refund within the minute
// waits its turn in the refund queue; its goods are back at once.
func TestPartialRefunds_WeChatPaysRulesOnRefunds(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.PayServer.SetRefundInterval(2 * time.Second)
	h.RunInBackground(t)
	id, tx := paid(t, h, "buyer", `{"items":[{"skuId":"saucer","qty":3}]}`)
	onHand := h.OnHand(t, "saucer")
	for _, rf := range []string{"a", "b"} {
		if code, out := merchantRefund(t, h, id, refundBody(rf, "saucer 1")); code != http.StatusAccepted {
			t.Fatalf("refund %s: %d %v", rf, code, out)
		}
	}
	if h.OnHand(t, "saucer") != onHand+2 {
		t.Errorf("saucer on-hand %d, want both refunds' goods back at once (%d)", h.OnHand(t, "saucer"), onHand+2)
	}
	// The stand-in's minute is on the stack's clock, which stands still until one money
	// step has been held back by it, then moves a second per look.
	eventually(t, waitLimit, "the second refund's money step held back by WeChat Pay's minute", func() bool {
		return len(h.Logged(t, "msg", "refund request failed; it will be retried")) > 0
	})
	eventually(t, waitLimit, "both refunds REFUNDED", func() bool {
		h.Clock.Advance(time.Second)
		s := refundStatuses(t, h, id)
		return len(s) == 2 && s[0] == inventory.StatusRefunded && s[1] == inventory.StatusRefunded
	})
	if got, _ := h.PayServer.Refunded(tx); got != 2*12900 {
		t.Errorf("WeChat Pay refunded %d fen, want %d", got, 2*12900)
	}

}

// An order takes no 21st refund (inventory.MaxOrderRefunds: its item carries every
// refund), and WeChat Pay none a year after the payment: stockguard refuses both before
// any goods move (the money steps are left out: no refund queue).
func TestPartialRefunds_TwentyRefundsAtMostAndNoneAfterAYear(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"saucer","qty":60}]}`)
	onHand := h.OnHand(t, "saucer")
	for i := 1; i <= inventory.MaxOrderRefunds; i++ {
		if code, out := merchantRefund(t, h, id, refundBody(fmt.Sprint("n", i), "saucer 1")); code != http.StatusAccepted {
			t.Fatalf("refund %d: %d %v", i, code, out)
		}
	}
	if on := h.OnHand(t, "saucer"); on != onHand+inventory.MaxOrderRefunds {
		t.Errorf("saucer on-hand %d, want %d", on, onHand+inventory.MaxOrderRefunds)
	}
	before := h.Snapshot(t)
	if code, out := merchantRefund(t, h, id, refundBody("n21", "saucer 1")); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" ||
		!strings.Contains(fmt.Sprint(out["message"]), "20 refunds") {
		t.Errorf("21st refund: %d %v, want 409 REFUND_NOT_ALLOWED naming the 20 refunds", code, out)
	}
	if h.Snapshot(t) != before {
		t.Error("the refused 21st refund changed the tables")
	}
	old, _ := paid(t, h, "buyer2", `{"items":[{"skuId":"saucer","qty":1}]}`)
	h.Clock.Advance(inventory.RefundPeriod + time.Hour)
	before = h.Snapshot(t)
	if code, out := merchantRefund(t, h, old, refundBody("late")); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("refund of a payment over a year old: %d %v, want 409 REFUND_NOT_ALLOWED", code, out)
	}
	if h.Snapshot(t) != before {
		t.Error("the refused late refund changed the tables")
	}
}

// A refusal the refund API documents as final stops at once: the refund keeps its
// error (REFUSED and the code), the settle-by-hand alarm (RefundAbnormal) fires once,
// nothing asks WeChat Pay again (not the queue, not the stuck pass), and the order
// shows it to the merchant; an operator retries it once the cause is fixed, or records
// it settled outside WeChat Pay, with their principal. A refusal to retry later
// (NOT_ENOUGH: the merchant's balance) keeps going round the queue until it succeeds.
func TestRefusals_FinalStopsAtOnceRetryLaterWaits(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.PayServer.SetRefundInterval(0)
	h.RunInBackground(t)
	refused := func(id string) string {
		eventually(t, waitLimit, "refund refused", func() bool { return h.Lookup(t, id).Refunds[0].Error != "" })
		return h.Lookup(t, id).Refunds[0].Error
	}

	// Final: the merchant has no right to refund it; fixed, the operator retries.
	h.PayServer.SetRefundRefusal(wechatpay.CodeNoAuth)
	fixable, _ := paid(t, h, "buyer", cupsAndSaucer)
	if code, out := merchantRefund(t, h, fixable, `{"restock":true,"reason":"returned"}`); code != http.StatusAccepted {
		t.Fatalf("refund: %d %v", code, out)
	}
	if got := refused(fixable); got != "REFUSED NO_AUTH" {
		t.Errorf("error %q, want REFUSED NO_AUTH", got)
	}
	// Already paid back outside stockguard: WeChat Pay refuses more than is refundable.
	h.PayServer.SetRefundRefusal("")
	outside, tx := paid(t, h, "buyer2", cupsAndSaucer)
	if err := h.PayServer.RefundOutside(outside, amount); err != nil {
		t.Fatal(err)
	}
	if code, out := merchantRefund(t, h, outside, `{"restock":false,"reason":"refunded in the merchant platform"}`); code != http.StatusAccepted {
		t.Fatalf("refund: %d %v", code, out)
	}
	if got := refused(outside); got != "REFUSED INVALID_REQUEST" {
		t.Errorf("error %q, want REFUSED INVALID_REQUEST", got)
	}
	if n := len(h.Logged(t, "RefundAbnormal", 1.0)); n != 2 {
		t.Errorf("%d RefundAbnormal alarms, want 2 (one per refusal)", n)
	}
	if n := len(h.Logged(t, "msg", "refund request failed; it will be retried")); n != 0 {
		t.Errorf("%d retries of final refusals, want 0", n)
	}
	h.Clock.Advance(31 * time.Minute)
	var pass refunds.StuckResult
	h.RunScheduled(t, "refund", &pass)
	if pass.Found != 2 || pass.Requeued != 0 || pass.Refunded != 0 {
		t.Errorf("stuck pass %+v, want both found, none requested again", pass)
	}
	if code, out := h.Call(t, http.MethodGet, "/admin/orders/"+outside, "", nil, ""); code != http.StatusOK ||
		fmt.Sprint(out["refunds"].([]any)[0].(map[string]any)["error"]) != "REFUSED INVALID_REQUEST" {
		t.Errorf("admin order view: %d %v, want the refund's error", code, out)
	}

	resolve := func(id, what, body string) (int, map[string]any) {
		return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refunds/"+id+"_R/"+what, "", nil, body)
	}
	if code, out := resolve(outside, "retry", `{"reason":"try again"}`); code != http.StatusAccepted {
		t.Errorf("retry of a refusal: %d %v, want 202", code, out)
	}
	eventually(t, waitLimit, "refused again", func() bool { return h.Lookup(t, outside).Refunds[0].Error != "" })
	if code, out := resolve(outside, "settle", `{"reason":"paid back in the merchant platform"}`); code != http.StatusOK || out["status"] != "REFUNDED" {
		t.Errorf("settle: %d %v, want 200 REFUNDED", code, out)
	}
	o := h.Lookup(t, outside)
	if r := o.Refunds[0]; r.Status != inventory.StatusRefunded || !strings.Contains(r.Resolution, local.LocalOperatorARN) {
		t.Errorf("settled refund %+v, want REFUNDED with the operator's principal", r)
	}
	if got, _ := h.PayServer.Refunded(tx); got != amount {
		t.Errorf("WeChat Pay refunded %d fen, want only the outside refund's %d", got, amount)
	}
	if code, out := resolve(outside, "settle", `{"reason":"again"}`); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("settle a REFUNDED refund: %d %v, want 409 REFUND_NOT_ALLOWED", code, out)
	}
	if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+outside+"/refunds/nosuchorder_R/settle", "", nil, `{"reason":"x"}`); code != http.StatusNotFound || out["code"] != "REFUND_NOT_FOUND" {
		t.Errorf("settle another order's refund: %d %v, want 404 REFUND_NOT_FOUND", code, out)
	}

	if code, out := resolve(fixable, "retry", `{"reason":"refund rights granted"}`); code != http.StatusAccepted {
		t.Fatalf("retry: %d %v", code, out)
	}
	eventually(t, waitLimit, "retried refund REFUNDED", func() bool { return status(t, h, fixable) == inventory.StatusRefunded })
	if r := h.Lookup(t, fixable).Refunds[0]; !strings.Contains(r.Resolution, "retried by "+local.LocalOperatorARN) {
		t.Errorf("retried refund %+v, want the retry recorded with the operator's principal", r)
	}

	// Retry later: the merchant's balance is short; the queue keeps asking.
	alarms := len(h.Logged(t, "RefundAbnormal", 1.0))
	h.PayServer.SetRefundRefusal(wechatpay.CodeNotEnough)
	short, _ := paid(t, h, "buyer3", cupsAndSaucer)
	if code, out := merchantRefund(t, h, short, `{"restock":true,"reason":"returned"}`); code != http.StatusAccepted {
		t.Fatalf("refund: %d %v", code, out)
	}
	eventually(t, waitLimit, "retried", func() bool { return len(h.Logged(t, "msg", "refund request failed; it will be retried")) > 0 })
	if r := h.Lookup(t, short).Refunds[0]; r.Error != inventory.WaitingError(wechatpay.CodeNotEnough) || r.Status != inventory.StatusRefunding {
		t.Errorf("refund short of balance %+v, want REFUNDING with the error telling to top up", r)
	}
	if code, out := h.Call(t, http.MethodGet, "/admin/orders/"+short, "", nil, ""); code != http.StatusOK ||
		!strings.Contains(fmt.Sprint(out["refunds"].([]any)[0].(map[string]any)["error"]), "top it up") {
		t.Errorf("admin order view: %d %v, want the refund's error telling to top up", code, out)
	}
	if code, out := resolve(short, "settle", `{"reason":"paid by hand"}`); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("settle a refund the queue asks again: %d %v, want 409 REFUND_NOT_ALLOWED", code, out)
	}
	if n := len(h.Logged(t, "RefundAbnormal", 1.0)); n != alarms {
		t.Errorf("%d RefundAbnormal alarms, want still %d: a short balance is not settled by hand", n, alarms)
	}
	h.PayServer.SetRefundRefusal("")
	eventually(t, waitLimit, "refunded once topped up", func() bool { return status(t, h, short) == inventory.StatusRefunded })
	if r := h.Lookup(t, short).Refunds[0]; r.Error != "" {
		t.Errorf("refunded after the top-up with error %q, want none", r.Error)
	}
	h.Check(t)
}

// Partial refunds racing a late payment and a repairing reconcile: twenty refunds of
// one mug each (three paid) race a payment that reaches another buyer's released
// order while reconcile, repair on, runs over and over. Exactly three refunds are
// started; the late payment is either honoured from a returned mug or refunded whole,
// never both; reconcile finds no difference and repairs nothing; the books balance.
func TestPartialRefunds_RacingALatePaymentAndARepairingReconcile(t *testing.T) {
	for round := range 3 {
		h := stacktest.New(t, stacktest.Options{
			Seed: `[{"skuId":"mug","delivery":"none","name":"mug","price":700,"stock":3}]`,
			Stack: local.StackConfig{PaymentTimeout: time.Minute, Reconcile: func(c *reconcile.Config) {
				c.Repair, c.Window = true, reconcile.Window{End: 24*time.Hour - time.Second, Loc: time.UTC}
				c.ConfirmDelay = time.Millisecond
			}},
		})
		late := h.Order(t, "late", `{"items":[{"skuId":"mug","qty":1}]}`)
		if code, out := h.Call(t, http.MethodPost, "/orders/"+late+"/cancel", "late", nil, ""); code != http.StatusOK {
			t.Fatalf("cancel: %d %v", code, out)
		}
		id, _ := paid(t, h, "buyer", `{"items":[{"skuId":"mug","qty":3}]}`)
		var mu sync.Mutex
		codes := map[int]int{}
		var reps []reconcile.Report
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				body := refundBody(fmt.Sprintf("r%d", i), "mug 1")
				code, _ := merchantRefund(t, h, id, body)
				for code == http.StatusServiceUnavailable {
					code, _ = merchantRefund(t, h, id, body)
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		wg.Go(func() {
			if code, out := h.Call(t, http.MethodPost, "/_local/pay/"+late, "", nil, ""); code != http.StatusNoContent {
				t.Errorf("late payment: %d %v", code, out)
			}
		})
		for range 2 {
			wg.Go(func() {
				for range 3 {
					var rep reconcile.Report
					h.RunScheduled(t, "reconcile", &rep)
					mu.Lock()
					reps = append(reps, rep)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if codes[http.StatusAccepted] != 3 || codes[http.StatusConflict] != 17 {
			t.Errorf("round %d: refund answers %v, want 3 × 202 and 17 × 409", round, codes)
		}
		lateStatus := status(t, h, late)
		want := 3 // the refunded mugs, back on-hand and available
		switch lateStatus {
		case inventory.StatusPaid:
			want-- // one of them sold again to the late payer
		case inventory.StatusRefunding, inventory.StatusRefundPending:
		default:
			t.Errorf("round %d: late-paid order %s", round, lateStatus)
		}
		if on, av := h.OnHand(t, "mug"), h.Available(t, "mug"); on != want || av != want {
			t.Errorf("round %d: mug on-hand %d available %d, want %d (late order %s)", round, on, av, want, lateStatus)
		}
		for _, rep := range reps {
			if len(rep.Differences)+len(rep.Repaired)+len(rep.RefundProblems) != 0 {
				t.Errorf("round %d: reconcile during the race %+v", round, rep)
			}
		}
		h.Check(t)
		t.Logf("round %d: late payment %s, %d reconcile runs", round, lateStatus, len(reps))
	}
}
