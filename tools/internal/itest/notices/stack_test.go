package notices_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxqueue"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// The stack here runs the WeChat queue (SQS): goaws keeps global state, so no test of
// this file runs in parallel.

const (
	remind = local.LocalPayReminderTemplate
	done   = local.LocalRefundDoneTemplate
)

// noticeStack is a local stack with SQS on real time: orders stay PENDING 20 s and
// their pay reminder is due 18 s before expiry, 2 s after the order.
func noticeStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true,
		Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":10}]`,
		Stack: local.StackConfig{PaymentTimeout: 20 * time.Second, WeChatBackoff: time.Second,
			Environment: func(_ string, env map[string]string) {
				if _, ok := env["PAY_REMINDER_LEAD_SECONDS"]; ok {
					env["PAY_REMINDER_LEAD_SECONDS"] = "18"
				}
			}}})
	h.RunInBackground(t)
	return h
}

const cart = `{"items":[{"skuId":"cup-01","qty":1}],"subscriptions":["` + remind + `","` + done + `"]}`

// A buyer who accepted the pay reminder gets exactly one message before expiry, however
// often the order is replayed or the reminder delivered; a buyer who paid first gets
// none; a refund-done message goes out once per settled refund.
func TestSubscribeMessages_ExactCounts(t *testing.T) {
	h := noticeStack(t)
	for _, buyer := range []string{"alice", "bob", "carol"} {
		h.WxAPIServer.Subscribe(buyer, remind, 2) // accepted twice: a second send would be delivered
		h.WxAPIServer.Subscribe(buyer, done, 2)
	}
	key := map[string]string{"Idempotency-Key": "tap-1"}
	code, out := h.Call(t, http.MethodPost, "/orders", "alice", key, cart)
	if code != http.StatusCreated {
		t.Fatalf("alice's order: %d %v", code, out)
	}
	alice := out["orderId"].(string)
	if code, _ := h.Call(t, http.MethodPost, "/orders", "alice", key, cart); code != http.StatusOK {
		t.Fatalf("replay: %d", code)
	}
	bob := h.Order(t, "bob", cart)
	if code, _ := h.Call(t, http.MethodPost, "/_local/pay/"+bob, "", nil, ""); code != http.StatusNoContent {
		t.Fatalf("bob pays: %d", code)
	}
	carol := h.Order(t, "carol", cart)
	h.Call(t, http.MethodPost, "/orders/"+carol+"/pay", "carol", nil, "")
	if code, _ := h.Call(t, http.MethodPost, "/_local/pay/"+carol, "", nil, ""); code != http.StatusNoContent {
		t.Fatalf("carol pays: %d", code)
	}

	testkit.Eventually(t, 20*time.Second, "alice reminded", func() bool { return len(h.WxAPIServer.Messages("alice")) > 0 })
	if o := h.Lookup(t, alice); o.Status != "PENDING" || !time.Now().Before(o.ExpiresAt) {
		t.Errorf("alice was reminded after her order left PENDING or expired: %s, expires %s", o.Status, o.ExpiresAt)
	}
	// The same reminder delivered again (SQS delivers at least once) sends nothing.
	q := wxqueue.New(h.SQSClient(), h.Queues["WeChatQueue"])
	if err := q.Send(context.Background(), wxqueue.Message{Kind: wxqueue.KindPayReminder, OrderID: alice, At: time.Now()}, 0); err != nil {
		t.Fatal(err)
	}
	if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+carol+"/refund", "", nil, `{"restock":true,"reason":"wrong colour"}`); code != http.StatusAccepted {
		t.Fatalf("refund carol: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "carol's refund REFUNDED", func() bool { return h.Lookup(t, carol).Status == "REFUNDED" })
	// The refund-done message is queued just after the refund turns REFUNDED, so the
	// queue can look drained before it is sent: wait for it, then for the queue.
	testkit.Eventually(t, 20*time.Second, "carol's refund-done message", func() bool { return len(h.WxAPIServer.Messages("carol")) > 0 })
	h.Drained(t, "WeChatQueue")

	msgs := h.WxAPIServer.Messages("alice")
	if len(msgs) != 1 || msgs[0].TemplateID != remind || msgs[0].Data["character_string1"].Value != alice ||
		msgs[0].Data["amount2"].Value != "¥399.00" || msgs[0].Page != "pages/order/index?orderId="+alice {
		t.Errorf("alice got %+v, want one pay reminder", msgs)
	}
	if msgs := h.WxAPIServer.Messages("bob"); len(msgs) != 0 {
		t.Errorf("bob, who paid first, got %+v", msgs)
	}
	msgs = h.WxAPIServer.Messages("carol")
	if len(msgs) != 1 || msgs[0].TemplateID != done || msgs[0].Data["amount2"].Value != "¥399.00" {
		t.Errorf("carol got %+v, want one refund-done message", msgs)
	}
	h.Check(t)
}

// Subscriptions must be configured templates: anything else is 400 with nothing
// reserved.
func TestSubscriptions_UnknownTemplateIsRefused(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":100,"stock":1}]`})
	for _, body := range []string{
		`{"items":[{"skuId":"cup-01","qty":1}],"subscriptions":["someone-elses"]}`,
		`{"items":[{"skuId":"cup-01","qty":1}],"subscriptions":["` + remind + `","` + remind + `"]}`,
	} {
		code, out := h.OutsideContract("subscription not configured or twice").Call(t, http.MethodPost, "/orders", "alice", nil, body)
		if code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
			t.Errorf("%s: %d %v", body, code, out)
		}
	}
	if n := h.Available(t, "cup-01"); n != 1 {
		t.Errorf("available %d, want 1", n)
	}
}
