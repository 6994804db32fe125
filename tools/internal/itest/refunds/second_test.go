package refunds_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// The refund of a second payment is the merchant's to see and settle like any other:
// refused for good, it is in the order's refunds (merchant's and owner's views) with
// its error, in reconcile's refundProblems, and refund-retry finds it under its own
// out_refund_no; once refunded, settling it is 409.
func TestSecondPaymentRefund_ListedCheckedAndRetriedLikeAnyOther(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.PayServer.SetRefundInterval(0)
	h.RunInBackground(t)
	id, _ := paid(t, h, "twice", cupsAndSaucer)
	h.PayServer.SetRefundRefusal(wechatpay.CodeNoAuth)
	if d, err := h.PayServer.Pay(context.Background(), id, paytest.PayOptions{Again: true}); err != nil || d.StatusCode != http.StatusNoContent {
		t.Fatalf("second payment: %+v %v", d, err)
	}
	second := func(user string) map[string]any {
		path := "/admin/orders/" + id
		if user != "" {
			path = "/orders/" + id
		}
		code, out := h.Call(t, http.MethodGet, path, user, nil, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, code, out)
		}
		refunds, _ := out["refunds"].([]any)
		for _, r := range refunds {
			if r := r.(map[string]any); strings.Contains(fmt.Sprint(r["outRefundNo"]), "_T") {
				return r
			}
		}
		return nil
	}
	eventually(t, waitLimit, "second payment refused", func() bool { r := second(""); return r != nil && r["error"] != nil })
	r := second("")
	if r["error"] != "REFUSED NO_AUTH" || r["status"] != "REFUNDING" || r["amount"] != float64(amount) || r["refundId"] != "second-payment" {
		t.Errorf("merchant's view of the second payment's refund: %v", r)
	}
	if second("twice") == nil {
		t.Error("the owner's view does not list the second payment's refund")
	}
	var rep reconcile.Report
	h.RunScheduled(t, "reconcile", &rep)
	if len(rep.RefundProblems) != 1 || !strings.Contains(rep.RefundProblems[0], r["outRefundNo"].(string)) {
		t.Errorf("reconcile refundProblems %v, want the refused second payment's refund", rep.RefundProblems)
	}

	h.PayServer.SetRefundRefusal("")
	no := r["outRefundNo"].(string)
	resolve := func(what string) (int, map[string]any) {
		return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refunds/"+no+"/"+what, "", nil, `{"reason":"refund rights granted"}`)
	}
	if code, out := resolve("retry"); code != http.StatusAccepted {
		t.Fatalf("retry of the second payment's refund: %d %v, want 202", code, out)
	}
	eventually(t, waitLimit, "second payment REFUNDED", func() bool { return second("")["status"] == "REFUNDED" })
	if r := second(""); r["error"] != nil || !strings.Contains(fmt.Sprint(r["resolution"]), "retried by") {
		t.Errorf("after the retry: %v", r)
	}
	if code, out := resolve("settle"); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("settle of a refunded second payment: %d %v, want 409", code, out)
	}
	if o := h.Lookup(t, id); o.Status != inventory.StatusPaid || len(o.Refunds) != 0 {
		t.Errorf("the order itself: %s with %d refunds, want PAID with none", o.Status, len(o.Refunds))
	}
	h.Check(t)
}
