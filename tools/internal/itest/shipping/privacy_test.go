package shipping_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// A buyer's whole journey (issue 36's "Done when"): an order to one address, moved to
// another before shipping, paid, shipped by SF (whose contact stockguard fills from the
// address), uploaded to WeChat, receipt confirmed by WeChat's signed push, an after-sale
// return-refund requested, approved and received, refunded. The owner's view shows the
// latest address whole; whatever the stack logged on the way (requests, metrics, the
// WeChat and WeChat Pay calls) holds neither phone number, street nor the buyer's name.
func TestBuyerJourney_TheLogHoldsNoPhoneNumberStreetOrName(t *testing.T) {
	const (
		phone1, street1 = "18912341234", "新港中路397号"
		phone2, street2 = "13700137000", "阅江西路222号"
		name            = "欧阳娜娜"
	)
	address := func(phone, street string) string {
		return `{"userName":"` + name + `","telNumber":"` + phone + `","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"` + street + `","postalCode":"510000"}`
	}
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true, Stack: local.StackConfig{WeChatBackoff: time.Second},
		Seed: `[{"skuId":"vase","name":"vase","price":19900,"stock":10}]`})
	h.RunInBackground(t)

	id := h.Order(t, "olivia", `{"items":[{"skuId":"vase","qty":2}],"address":`+address(phone1, street1)+`}`)
	steps := []struct {
		what, method, path, user, body string
		want                           int
	}{
		{"move the parcel", http.MethodPut, "/orders/" + id + "/address", "olivia", address(phone2, street2), http.StatusOK},
		{"pay", http.MethodPost, "/orders/" + id + "/pay", "olivia", "", http.StatusOK},
		{"pay at WeChat Pay", http.MethodPost, "/_local/pay/" + id, "", "", http.StatusNoContent},
		{"ship by SF", http.MethodPost, "/admin/orders/" + id + "/shipments", "",
			`{"shipmentId":"parcel-1","type":"express","carrier":"SF","tracking":"SF1234567890"}`, http.StatusAccepted},
	}
	for _, s := range steps {
		if code, out := h.Call(t, s.method, s.path, s.user, nil, s.body); code != s.want {
			t.Fatalf("%s: %d %v, want %d", s.what, code, out, s.want)
		}
	}
	testkit.Eventually(t, 20*time.Second, "shipping UPLOADED", func() bool { return shipping(t, h, "olivia", id)["status"] == "UPLOADED" })
	if code, body := raw(t, h, http.MethodPost, "/_local/receipt/"+id, ""); code != http.StatusOK || body != "success" {
		t.Fatalf("confirm receipt: %d %q", code, body)
	}
	after := []struct {
		what, path, user, body string
		want                   int
	}{
		{"ask for an after-sale", "/orders/" + id + "/aftersales", "olivia",
			`{"aftersaleId":"as-1","kind":"return-refund","lines":[{"skuId":"vase","qty":1}],"reason":"arrived cracked"}`, http.StatusAccepted},
		{"approve it", "/admin/orders/" + id + "/aftersales/as-1/approve", "", "", http.StatusOK},
		{"receive the vase", "/admin/orders/" + id + "/aftersales/as-1/received", "", "", http.StatusOK},
	}
	for _, s := range after {
		if code, out := h.Call(t, http.MethodPost, s.path, s.user, nil, s.body); code != s.want {
			t.Fatalf("%s: %d %v, want %d", s.what, code, out, s.want)
		}
	}
	code, out := h.Call(t, http.MethodGet, "/orders/"+id, "olivia", nil, "")
	if code != http.StatusOK {
		t.Fatalf("read: %d %v", code, out)
	}
	if a, _ := out["address"].(map[string]any); a["telNumber"] != phone2 || a["detailInfo"] != street2 {
		t.Errorf("owner's view: address %v, want the moved one whole", out["address"])
	}
	if r, _ := out["receipt"].(map[string]any); r["status"] != "CONFIRMED" {
		t.Errorf("owner's view: receipt %v, want CONFIRMED", out["receipt"])
	}
	// The refund runs from its queue: it may have finished by now.
	if as, _ := out["aftersales"].([]any); len(as) != 1 || (as[0].(map[string]any)["status"] != "REFUNDING" && as[0].(map[string]any)["status"] != "REFUNDED") {
		t.Errorf("owner's view: aftersales %v, want one REFUNDING or REFUNDED", out["aftersales"])
	}

	log := h.Log.String()
	if !strings.Contains(log, id) {
		t.Fatalf("the stack's log never names the order: the check would prove nothing")
	}
	for _, secret := range []string{phone1, phone2, street1, street2, "新港中路", "阅江西路", name} {
		if strings.Contains(log, secret) {
			t.Errorf("the stack's log holds %q", secret)
		}
	}
}
