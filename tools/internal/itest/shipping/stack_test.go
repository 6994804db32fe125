package shipping_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// The stacks here run the WeChat queue (SQS): goaws keeps global state, so no test of
// this file runs in parallel.

const cups = `[{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":10},{"skuId":"saucer-02","delivery":"none","name":"saucer","price":1500,"stock":10}]`

// shipStack is a local stack with SQS running its event sources, retrying WeChat
// work after 1 s.
func shipStack(t *testing.T, cfg local.StackConfig) *stacktest.Stack {
	t.Helper()
	cfg.WeChatBackoff = time.Second
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true, Seed: cups, Stack: cfg})
	h.RunInBackground(t)
	return h
}

// paidOrder places user's order of 2 cups and 1 saucer, starts its payment and pays
// it at the WeChat Pay stand-in (so that WeChat's stand-in holds the payment too).
func paidOrder(t *testing.T, h *stacktest.Stack, user string) string {
	t.Helper()
	id := h.Order(t, user, `{"items":[{"skuId":"cup-01","qty":2},{"skuId":"saucer-02","qty":1}]}`)
	if code, out := h.Call(t, http.MethodPost, "/orders/"+id+"/pay", user, nil, ""); code != http.StatusOK {
		t.Fatalf("pay %s: %d %v", id, code, out)
	}
	if code, out := h.Call(t, http.MethodPost, "/_local/pay/"+id, "", nil, ""); code != http.StatusNoContent {
		t.Fatalf("local pay %s: %d %v", id, code, out)
	}
	return id
}

func ship(t *testing.T, h *stacktest.Stack, id, body string) (int, map[string]any) {
	t.Helper()
	return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/shipments", "", nil, body)
}

// shipping is the order's shipping as its owner reads it (GET /orders/{orderId}).
func shipping(t *testing.T, h *stacktest.Stack, user, id string) map[string]any {
	t.Helper()
	code, out := h.Call(t, http.MethodGet, "/orders/"+id, user, nil, "")
	if code != http.StatusOK {
		t.Fatalf("read %s: %d %v", id, code, out)
	}
	s, _ := out["shipping"].(map[string]any)
	return s
}

const express = `{"shipmentId":"parcel-1","type":"express","carrier":"YTO","tracking":"YT3750696145732"}`

// On the local stack, a paid order shipped through the admin route is uploaded after
// WeChat first answered 10060001 (支付单不存在) once: the stand-in gets two uploads,
// accepts exactly one, and the order reads UPLOADED. The same shipmentId again changes
// nothing and sends nothing; with another body it is 422.
func TestShip_UploadedAfterPaymentNotFoundOnce_SameShipmentIDChangesNothing(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	id := paidOrder(t, h, "alice")
	h.WxAPIServer.FailPaymentNotFound(id, 1)

	code, out := ship(t, h, id, express)
	if code != http.StatusAccepted || out["shipping"].(map[string]any)["status"] != "QUEUED" {
		t.Fatalf("ship: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "shipping UPLOADED", func() bool { return shipping(t, h, "alice", id)["status"] == "UPLOADED" })
	if s := shipping(t, h, "alice", id); s["uploadedAt"] == nil || s["error"] != nil {
		t.Errorf("shipping %v", s)
	}
	h.Drained(t, "WeChatQueue")
	uploads := h.WxAPIServer.Shipments(id)
	if len(uploads) != 1 || h.WxAPIServer.Calls(wxapi.PathUploadShippingInfo) != 2 {
		t.Fatalf("stand-in: %d accepted of %d uploads, want 1 of 2", len(uploads), h.WxAPIServer.Calls(wxapi.PathUploadShippingInfo))
	}
	u := uploads[0]
	if u.LogisticsType != 1 || u.DeliveryMode != 1 || len(u.ShippingList) != 1 || u.ShippingList[0].TrackingNo != "YT3750696145732" ||
		u.ShippingList[0].ExpressCompany != "YTO" || u.Payer.OpenID != "alice" || u.OrderKey.TransactionID != h.Lookup(t, id).TransactionID {
		t.Errorf("upload %+v", u)
	}

	for range 3 {
		if code, again := ship(t, h, id, express); code != http.StatusAccepted || again["shipping"].(map[string]any)["status"] != "UPLOADED" {
			t.Fatalf("same shipment again: %d %v", code, again)
		}
	}
	if code, out := ship(t, h, id, `{"shipmentId":"parcel-1","type":"express","carrier":"YTO","tracking":"YT0000000000001"}`); code != http.StatusUnprocessableEntity || out["code"] != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("same id, other body: %d %v", code, out)
	}
	h.Drained(t, "WeChatQueue")
	if n, calls := len(h.WxAPIServer.Shipments(id)), h.WxAPIServer.Calls(wxapi.PathUploadShippingInfo); n != 1 || calls != 2 {
		t.Errorf("after the replays: %d accepted of %d uploads, want 1 of 2", n, calls)
	}
	if code, out := ship(t, h, id, `{"shipmentId":"parcel-2","type":"express","carrier":"YTO","tracking":"YT2"}`); code != http.StatusConflict || out["code"] != "ORDER_NOT_SHIPPABLE" {
		t.Errorf("a shipment after the whole order shipped: %d %v", code, out)
	}
	h.Check(t)
}

// A shipment of an unpaid order, or of one refunded in full, is refused 409 with
// nothing recorded and nothing sent to WeChat.
func TestShip_UnpaidOrRefundedOrderIsRefusedWithNothingSent(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	unpaid := h.Order(t, "bob", `{"items":[{"skuId":"cup-01","qty":1}]}`)
	refunded := paidOrder(t, h, "carol")
	if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+refunded+"/refund", "", nil, `{"restock":true,"reason":"changed her mind"}`); code != http.StatusAccepted {
		t.Fatalf("refund: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "refund REFUNDED", func() bool { return h.Lookup(t, refunded).Status == "REFUNDED" })
	for _, id := range []string{unpaid, refunded} {
		before := h.Lookup(t, id)
		if code, out := ship(t, h, id, express); code != http.StatusConflict || out["code"] != "ORDER_NOT_SHIPPABLE" {
			t.Errorf("ship %s (%s): %d %v", id, before.Status, code, out)
		}
		if after := h.Lookup(t, id); after.Shipping != nil || after.Status != before.Status {
			t.Errorf("order %s changed: %+v", id, after)
		}
	}
	h.Drained(t, "WeChatQueue")
	if calls := h.WxAPIServer.Calls(wxapi.PathUploadShippingInfo); calls != 0 {
		t.Errorf("%d uploads sent, want 0", calls)
	}
	h.Check(t)
}

// A refund of the whole order while its upload is still being retried cancels the
// shipment: CANCELLED, and WeChat never accepts an upload for it.
func TestShip_FullRefundBeforeUploadCancelsTheShipment(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	id := paidOrder(t, h, "dave")
	h.WxAPIServer.FailPaymentNotFound(id, 1000)
	if code, out := ship(t, h, id, `{"shipmentId":"all","type":"self-pickup"}`); code != http.StatusAccepted {
		t.Fatalf("ship: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "an upload refused", func() bool { return shipping(t, h, "dave", id)["error"] != nil })
	if code, out := h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refund", "", nil, `{"restock":true,"reason":"never collected"}`); code != http.StatusAccepted {
		t.Fatalf("refund: %d %v", code, out)
	}
	if s := shipping(t, h, "dave", id); s["status"] != "CANCELLED" {
		t.Errorf("shipping after the refund: %v", s)
	}
	h.Drained(t, "WeChatQueue")
	if n := len(h.WxAPIServer.Shipments(id)); n != 0 {
		t.Errorf("%d uploads accepted, want 0", n)
	}
	h.Check(t)
}

// An express order split into two parcels: the first upload is a split delivery not
// yet complete, the second lists both parcels and completes it.
func TestShip_SplitExpressShipments(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	id := paidOrder(t, h, "erin")
	if code, out := ship(t, h, id, `{"shipmentId":"p1","type":"express","carrier":"SF","tracking":"SF1","contact":"189****1234","items":[{"skuId":"cup-01","qty":2}]}`); code != http.StatusAccepted {
		t.Fatalf("first parcel: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "first parcel UPLOADED", func() bool { return shipping(t, h, "erin", id)["status"] == "UPLOADED" })
	time.Sleep(10 * time.Millisecond) // WeChat orders uploads by upload_time (milliseconds)
	// The answer shows the second parcel's own upload (none yet) beside the order's
	// shipping, whose uploadedAt is the first parcel's.
	code, out := ship(t, h, id, `{"shipmentId":"p2","type":"express","carrier":"YTO","tracking":"YT2"}`)
	if code != http.StatusAccepted {
		t.Fatalf("second parcel: %d %v", code, out)
	}
	if sh, order := out["shipment"].(map[string]any), out["shipping"].(map[string]any); sh["uploadedAt"] != nil || order["status"] != "QUEUED" || order["uploadedAt"] == nil {
		t.Errorf("second parcel's answer: shipment %v, shipping %v; want no uploadedAt on the shipment, QUEUED", sh, order)
	}
	testkit.Eventually(t, 20*time.Second, "both parcels UPLOADED", func() bool {
		o := h.Lookup(t, id)
		return o.Shipping.Status == "UPLOADED" && o.Shipping.Uploaded == 2
	})
	uploads := h.WxAPIServer.Shipments(id)
	if len(uploads) != 2 {
		t.Fatalf("%d uploads accepted, want 2", len(uploads))
	}
	first, second := uploads[0], uploads[1]
	if first.DeliveryMode != 2 || *first.IsAllDelivered || len(first.ShippingList) != 1 ||
		second.DeliveryMode != 2 || !*second.IsAllDelivered || len(second.ShippingList) != 2 || second.ShippingList[1].ItemDesc != "saucer-02*1" {
		t.Errorf("uploads %+v then %+v", first, second)
	}
	if code, out := ship(t, h, id, `{"shipmentId":"p1","type":"express","carrier":"SF","tracking":"SF1","contact":"189****1234","items":[{"skuId":"cup-01","qty":2}]}`); code != http.StatusAccepted || out["shipment"].(map[string]any)["uploadedAt"] == nil {
		t.Errorf("first parcel again: %d %v, want its own uploadedAt", code, out)
	}
	if code, out := ship(t, h, id, `{"shipmentId":"p3","type":"express","carrier":"YTO","tracking":"YT3"}`); code != http.StatusConflict {
		t.Errorf("a third parcel of nothing: %d %v", code, out)
	}
}

// A presale shipping 20 days after payment is declared to WeChat (opspecialorder),
// after WeChat first answered 268546002 (the payment not stored yet) once: exactly one
// declaration accepted, the order reads DECLARED; a ship time within 15 days is 400
// with nothing sent.
func TestPresale_DeclaredAfterNotFoundOnce(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	id := paidOrder(t, h, "frank")
	h.WxAPIServer.FailPaymentNotFound(id, 1)
	presale := func(at time.Time) (int, map[string]any) {
		return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/presale", "", nil, `{"shipAt":"`+at.UTC().Format(time.RFC3339)+`"}`)
	}
	paidAt := *h.Lookup(t, id).PaidAt
	if code, out := presale(paidAt.Add(10 * 24 * time.Hour)); code != http.StatusBadRequest {
		t.Errorf("a presale within 15 days: %d %v", code, out)
	}
	shipAt := paidAt.Add(20 * 24 * time.Hour).Truncate(time.Second)
	if code, out := presale(shipAt); code != http.StatusAccepted || out["presale"].(map[string]any)["status"] != "QUEUED" {
		t.Fatalf("presale: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "presale DECLARED", func() bool {
		p := h.Lookup(t, id).Presale
		return p != nil && p.Status == "DECLARED"
	})
	if code, _ := presale(shipAt); code != http.StatusAccepted {
		t.Errorf("the same presale again: %d", code)
	}
	h.Drained(t, "WeChatQueue")
	decls := h.WxAPIServer.SpecialOrders(id)
	if len(decls) != 1 || h.WxAPIServer.Calls(wxapi.PathOpSpecialOrder) != 2 || decls[0].Type != 1 || decls[0].DelayTo != shipAt.Unix() {
		t.Errorf("declarations %+v of %d calls, want one presale to %d of 2 calls", decls, h.WxAPIServer.Calls(wxapi.PathOpSpecialOrder), shipAt.Unix())
	}
	if code, out := ship(t, h, id, express); code != http.StatusAccepted {
		t.Errorf("shipping the presale: %d %v", code, out)
	}
	if code, out := presale(shipAt.Add(time.Hour)); code != http.StatusConflict {
		t.Errorf("a presale after shipping: %d %v", code, out)
	}
}

// A shipment racing the refund of the whole order never survives it: 20 times, a
// shipment and a full refund of a paid order sent together end with the refund made
// and either the shipment refused (409), or recorded and then CANCELLED (or UPLOADED
// first), never an order refunded with its shipment still QUEUED.
func TestShip_RacingAFullRefundNeverOutlivesIt(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	refused, cancelled, uploaded := 0, 0, 0
	for i := range 20 {
		id := paidOrder(t, h, "racer")
		codes := make(chan int, 2)
		go func() { code, _ := ship(t, h, id, express); codes <- code }()
		go func() {
			code, _ := h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refund", "", nil, `{"restock":true,"reason":"race"}`)
			codes <- -code
		}()
		shipCode, refundCode := 0, 0
		for range 2 {
			if c := <-codes; c < 0 {
				refundCode = -c
			} else {
				shipCode = c
			}
		}
		if refundCode != http.StatusAccepted {
			t.Fatalf("round %d: refund %d", i, refundCode)
		}
		s := shipping(t, h, "racer", id)
		switch {
		case shipCode == http.StatusConflict && s == nil:
			refused++
		case shipCode == http.StatusAccepted && s["status"] == "CANCELLED":
			cancelled++
		case shipCode == http.StatusAccepted && s["status"] == "UPLOADED":
			uploaded++ // uploaded before the refund: WeChat holds it, it stays
		default:
			t.Errorf("round %d: shipment %d, refund %d, shipping %v", i, shipCode, refundCode, s)
		}
	}
	t.Logf("shipment refused %d, recorded then cancelled %d, uploaded first %d", refused, cancelled, uploaded)
	h.Check(t)
}

// A buyer's own refund racing the merchant's shipment: either the refund comes first
// (the shipment is then refused) or the shipment does, and then the
// buyer's refund is refused 409 REFUND_NOT_ALLOWED with nothing back on sale. Never
// both a live shipment and its units restocked.
func TestShip_RacingTheBuyersRefundNeverRestocksShippedUnits(t *testing.T) {
	// Every round the shipment wins keeps 2 cups and a saucer with the courier: stock
	// for all 12 rounds.
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true, Seed: strings.ReplaceAll(cups, `"stock":10`, `"stock":40`),
		Stack: local.StackConfig{WeChatBackoff: time.Second, Environment: func(function string, env map[string]string) {
			if function == "CloseOrderFunction" {
				env["USER_REFUND_WINDOW"] = "1h"
			}
		}}})
	h.RunInBackground(t)
	shippedFirst, refundedFirst := 0, 0
	for i := range 12 {
		id := paidOrder(t, h, "racer")
		before := h.Available(t, "cup-01")
		codes := make(chan int, 2)
		go func() { code, _ := ship(t, h, id, express); codes <- code }()
		go func() {
			code, _ := h.Call(t, http.MethodPost, "/orders/"+id+"/refund", "racer", nil, "")
			codes <- -code
		}()
		shipCode, refundCode := 0, 0
		for range 2 {
			if c := <-codes; c < 0 {
				refundCode = -c
			} else {
				shipCode = c
			}
		}
		s := shipping(t, h, "racer", id)
		after := h.Available(t, "cup-01")
		switch {
		case refundCode == http.StatusConflict && shipCode == http.StatusAccepted && after == before:
			shippedFirst++
		case refundCode == http.StatusAccepted && shipCode == http.StatusConflict && s == nil && after == before+2:
			refundedFirst++
		default:
			t.Errorf("round %d: shipment %d, buyer's refund %d, shipping %v, cup-01 available %d -> %d", i, shipCode, refundCode, s, before, after)
		}
	}
	t.Logf("shipped first %d, refunded first %d", shippedFirst, refundedFirst)
	h.Check(t)
}
