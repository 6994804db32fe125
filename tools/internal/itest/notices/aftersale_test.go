package notices_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// After-sale messages: the buyer who accepted the after-sale template hears once that
// an after-sale was approved (whatever the number of approvals sent), then, by the
// refund-done message, that its refund went through; another buyer hears once of a
// rejection, with its reason.
func TestAftersaleMessages_ApprovedThenRefundedAndRejected(t *testing.T) {
	h := noticeStack(t)
	const as = local.LocalAftersaleTemplate
	cart := `{"items":[{"skuId":"cup-01","qty":1}],"subscriptions":["` + done + `","` + as + `"]}`
	orders := map[string]string{}
	for _, buyer := range []string{"dora", "erin"} {
		h.WxAPIServer.Subscribe(buyer, as, 2) // accepted twice: a second send would be delivered
		h.WxAPIServer.Subscribe(buyer, done, 2)
		orders[buyer] = h.Order(t, buyer, cart)
		if code, _ := h.Call(t, http.MethodPost, "/_local/pay/"+orders[buyer], "", nil, ""); code != http.StatusNoContent {
			t.Fatalf("%s pays: %d", buyer, code)
		}
		if code, out := h.Call(t, http.MethodPost, "/orders/"+orders[buyer]+"/aftersales", buyer, nil, `{"aftersaleId":"as-1","kind":"refund","reason":"arrived late"}`); code != http.StatusAccepted {
			t.Fatalf("%s asks: %d %v", buyer, code, out)
		}
	}
	for range 2 {
		if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+orders["dora"]+"/aftersales/as-1/approve", "", nil, ""); code != http.StatusOK {
			t.Fatalf("approve: %d %v", code, out)
		}
		if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+orders["erin"]+"/aftersales/as-1/reject", "", nil, `{"reason":"delivered on the promised day"}`); code != http.StatusOK {
			t.Fatalf("reject: %d %v", code, out)
		}
	}
	testkit.Eventually(t, 20*time.Second, "dora's refund REFUNDED", func() bool { return h.Lookup(t, orders["dora"]).Status == "REFUNDED" })
	testkit.Eventually(t, 20*time.Second, "dora's two messages and erin's one", func() bool {
		return len(h.WxAPIServer.Messages("dora")) >= 2 && len(h.WxAPIServer.Messages("erin")) >= 1
	})
	h.Drained(t, "WeChatQueue")

	msgs := h.WxAPIServer.Messages("dora")
	if len(msgs) != 2 {
		t.Fatalf("dora got %+v, want the approval and the refund-done message", msgs)
	}
	var approval, refunded int
	for _, m := range msgs {
		switch {
		case m.TemplateID == as && m.Data["phrase2"].Value == "已同意" && m.Data["character_string1"].Value == orders["dora"]:
			approval++
		case m.TemplateID == done && m.Data["amount2"].Value == "¥399.00":
			refunded++
		}
	}
	if approval != 1 || refunded != 1 {
		t.Errorf("dora got %+v, want one approval and one refund-done message", msgs)
	}
	if msgs := h.WxAPIServer.Messages("erin"); len(msgs) != 1 || msgs[0].TemplateID != as || msgs[0].Data["phrase2"].Value != "已拒绝" ||
		msgs[0].Data["thing3"].Value != "delivered on the pr…" {
		t.Errorf("erin got %+v, want one rejection with its reason cut to 20 characters", msgs)
	}
	h.Check(t)
}
