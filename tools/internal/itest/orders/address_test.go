package orders_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// parcelSeed is a SKU that ships by express (the default) and one that does not.
const parcelSeed = `[
	{"skuId":"vase","name":"vase","price":19900,"stock":10},
	{"skuId":"voucher","name":"voucher","price":5000,"stock":10,"delivery":"none"}]`

const (
	phone  = "18912341234"
	street = "新港中路397号"
	addr   = `{"userName":"张三","telNumber":"` + phone + `","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"` + street + `","postalCode":"510000"}`
)

func TestCreateOrder_AnExpressLineNeedsAValidAddressAndNothingIsWrittenWithoutOne(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: parcelSeed})
	before := stack.Snapshot(t)
	for _, tc := range []struct{ body, names string }{
		{`{"items":[{"skuId":"vase","qty":1}]}`, "address"},
		{`{"items":[{"skuId":"voucher","qty":1},{"skuId":"vase","qty":1}]}`, "address"},
		{`{"items":[{"skuId":"vase","qty":1}],"address":` + strings.Replace(addr, phone, "189-call-me", 1) + `}`, "address.telNumber"},
		{`{"items":[{"skuId":"vase","qty":1}],"address":` + strings.Replace(addr, street, strings.Repeat("路", 201), 1) + `}`, "address.detailInfo"},
		{`{"items":[{"skuId":"vase","qty":1}],"address":` + strings.Replace(addr, "广州市", "广州\\u0000市", 1) + `}`, "address.cityName"},
		{`{"items":[{"skuId":"vase","qty":1}],"address":` + strings.Replace(addr, `"postalCode":"510000"`, `"postalCode":"51-00"`, 1) + `}`, "address.postalCode"},
	} {
		status, out := stack.OutsideContract("bad or missing address").Call(t, http.MethodPost, "/orders", "alice", nil, tc.body)
		msg, _ := out["message"].(string)
		if status != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" || !strings.Contains(msg, tc.names) || strings.Contains(msg, phone) {
			t.Errorf("%s: %d %v, want 400 INVALID_REQUEST naming %s", tc.body, status, out, tc.names)
		}
	}
	if after := stack.Snapshot(t); after != before {
		t.Errorf("refused orders changed the tables:\n%s\n%s", before, after)
	}
	if status, out := stack.Call(t, http.MethodPost, "/orders", "alice", nil, `{"items":[{"skuId":"voucher","qty":1}]}`); status != http.StatusCreated || out["address"] != nil {
		t.Errorf("an order of a SKU that does not ship, without address: %d %v, want 201", status, out)
	}
}

func TestOrderAddress_WholeInOneOrderMaskedInListsAbsentFromTheLog(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: parcelSeed})
	status, out := stack.Call(t, http.MethodPost, "/orders", "alice", nil, `{"items":[{"skuId":"vase","qty":2}],"address":`+addr+`}`)
	if status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	id := out["orderId"].(string)
	whole := func(who string, out map[string]any) {
		a, _ := out["address"].(map[string]any)
		if a["telNumber"] != phone || a["detailInfo"] != street || a["userName"] != "张三" || a["postalCode"] != "510000" {
			t.Errorf("%s: address %v, want it whole", who, out["address"])
		}
	}
	masked := func(who string, out map[string]any) {
		orders, _ := out["orders"].([]any)
		if len(orders) != 1 {
			t.Fatalf("%s: %v, want one order", who, out)
		}
		a, _ := orders[0].(map[string]any)["address"].(map[string]any)
		if a["telNumber"] != "189****1234" || a["userName"] != "张*" || a["cityName"] != "广州市" || a["detailInfo"] != nil || a["postalCode"] != nil {
			t.Errorf("%s: address %v, want the phone masked and no street", who, a)
		}
	}
	whole("the answer to POST /orders", out)
	_, got := stack.Call(t, http.MethodGet, "/orders/"+id, "alice", nil, "")
	whole("the owner's GET /orders/{orderId}", got)
	if status, _ := stack.Call(t, http.MethodGet, "/orders/"+id, "bob", nil, ""); status != http.StatusNotFound {
		t.Errorf("another buyer reads the order: %d, want 404", status)
	}
	_, got = stack.Call(t, http.MethodGet, "/admin/orders/"+id, "", nil, "")
	whole("the merchant's GET /admin/orders/{orderId}", got)
	_, got = stack.Call(t, http.MethodGet, "/orders", "alice", nil, "")
	masked("the owner's GET /orders", got)
	_, got = stack.Call(t, http.MethodGet, "/admin/orders?userId=alice", "", nil, "")
	masked("the merchant's GET /admin/orders?userId=", got)

	// Whatever the stack logged (requests, metrics, alerts) carries neither.
	log := stack.Log.String()
	if log == "" {
		t.Fatal("the stack logged nothing: the check would prove nothing")
	}
	for _, secret := range []string{phone, street, "新港中路"} {
		if strings.Contains(log, secret) {
			t.Errorf("the stack's log holds %q", secret)
		}
	}
}

func TestSKUDelivery_DefaultsToExpressAndAPatchChangesIt(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: parcelSeed})
	for sku, want := range map[string]string{"vase": "express", "voucher": "none"} {
		if _, out := stack.Call(t, http.MethodGet, "/admin/skus/"+sku, "", nil, ""); out["delivery"] != want {
			t.Errorf("merchant view of %s: delivery %v, want %s", sku, out["delivery"], want)
		}
		if _, out := stack.Call(t, http.MethodGet, "/skus/"+sku, "", nil, ""); out["delivery"] != want {
			t.Errorf("buyer view of %s: delivery %v, want %s", sku, out["delivery"], want)
		}
	}
	if status, out := stack.OutsideContract("unknown delivery").Call(t, http.MethodPatch, "/admin/skus/vase", "", nil, `{"delivery":"pigeon"}`); status != http.StatusBadRequest || !strings.Contains(out["message"].(string), "delivery") {
		t.Errorf("delivery pigeon: %d %v, want 400 naming delivery", status, out)
	}
	if status, out := stack.Call(t, http.MethodPatch, "/admin/skus/vase", "", nil, `{"delivery":"none"}`); status != http.StatusOK || out["delivery"] != "none" {
		t.Fatalf("patch delivery none: %d %v", status, out)
	}
	// The record createOrder cached (express) is younger than the catalog's TTL: only
	// the fresh read a refusal makes sees the change.
	stack.Clock.Advance(time.Millisecond)
	if status, out := stack.Call(t, http.MethodPost, "/orders", "alice", nil, `{"items":[{"skuId":"vase","qty":1}]}`); status != http.StatusCreated {
		t.Errorf("order of vase after delivery none, without address: %d %v, want 201", status, out)
	}
}
