package notices_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/waitlist"
	"github.com/stockguard/stockguard/internal/wxqueue"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// Waitlist messages: 3 units that come back give 3 holds, and exactly the 2 buyers of
// them who subscribed get one message each (the SKU's name, the units, the hold's end,
// the SKU's page); the one who did not gets none, though WeChat would deliver it; a
// message delivered again sends nothing more.
func TestWaitlistMessages_OnePerSubscribedHold(t *testing.T) {
	const wl = local.LocalWaitlistTemplate
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true,
		Seed:  `[{"skuId":"tee","delivery":"none","name":"striped tee","price":1000,"stock":3}]`,
		Stack: local.StackConfig{WeChatBackoff: time.Second}})
	h.RunInBackground(t)
	var orders []string
	for _, b := range []string{"b1", "b2", "b3"} {
		orders = append(orders, h.Order(t, b, `{"items":[{"skuId":"tee","qty":1}]}`))
	}
	subscribed := map[string]bool{"w1": true, "w2": false, "w3": true}
	for _, w := range []string{"w1", "w2", "w3"} {
		h.WxAPIServer.Subscribe(w, wl, 2) // accepted twice: a second send would be delivered
		body := `{"subscribed":false}`
		if subscribed[w] {
			body = `{"subscribed":true}`
		}
		if code, out := h.Call(t, http.MethodPost, "/skus/tee/waitlist", w, nil, body); code != http.StatusCreated {
			t.Fatalf("%s joins: %d %v", w, code, out)
		}
	}
	var res waitlist.PassResult
	h.RunScheduled(t, "closeOrder", &res) // finds tee sold out: from now on returned units go to the waitlist
	for i, id := range orders {
		if code, out := h.Call(t, http.MethodPost, "/orders/"+id+"/cancel", []string{"b1", "b2", "b3"}[i], nil, ""); code != http.StatusOK {
			t.Fatalf("cancel: %d %v", code, out)
		}
	}
	// Holds come dynamo.WaitlistLead (30 s) after the joins flagged tee at the earliest.
	testkit.Eventually(t, 60*time.Second, "3 holds", func() bool {
		h.RunScheduled(t, "closeOrder", &res)
		for w := range subscribed {
			if e, err := h.Store.WaitlistEntryOf(context.Background(), w, "tee"); err != nil || e.Units != 1 {
				return false
			}
		}
		return true
	})
	testkit.Eventually(t, 20*time.Second, "w1's and w3's messages", func() bool {
		return len(h.WxAPIServer.Messages("w1")) > 0 && len(h.WxAPIServer.Messages("w3")) > 0
	})
	// The same messages delivered again (SQS delivers at least once) send nothing.
	q := wxqueue.New(h.SQSClient(), h.Queues["WeChatQueue"])
	for w := range subscribed {
		e, err := h.Store.WaitlistEntryOf(context.Background(), w, "tee")
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Send(context.Background(), wxqueue.Message{Kind: wxqueue.KindWaitlist, WaitlistID: e.ID, HoldRef: e.Ref}, 0); err != nil {
			t.Fatal(err)
		}
	}
	h.Drained(t, "WeChatQueue")

	for w, sub := range subscribed {
		msgs := h.WxAPIServer.Messages(w)
		if !sub {
			if len(msgs) != 0 {
				t.Errorf("%s, who did not subscribe, got %+v", w, msgs)
			}
			continue
		}
		e, err := h.Store.WaitlistEntryOf(context.Background(), w, "tee")
		if err != nil {
			t.Fatal(err)
		}
		until := e.HoldUntil.In(time.FixedZone("CST", 8*3600)).Format("2006-01-02 15:04")
		if len(msgs) != 1 || msgs[0].TemplateID != wl || msgs[0].Data["thing1"].Value != "striped tee" || msgs[0].Data["number2"].Value != "1" ||
			msgs[0].Data["time3"].Value != until || msgs[0].Page != "pages/sku/index?skuId=tee" {
			t.Errorf("%s got %+v, want one waitlist message: striped tee, 1, %s", w, msgs, until)
		}
	}
	h.Check(t)
}
