package orders_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// parcelSeed is a SKU that ships by express (the default) and one that does not.
const parcelSeed = `[
	{"skuId":"vase","name":"vase","price":19900,"stock":10},
	{"skuId":"voucher","name":"voucher","price":5000,"stock":10,"delivery":"none"}]`

// phoneLike matches what reads as a phone number, masked or not (13800138000,
// 189****1234): seven digits or more, some maybe masked, not inside a word, an id,
// a fraction or a JSON number (a log's epoch milliseconds).
var phoneLike = regexp.MustCompile(`(?:^|[^0-9A-Za-z.:])[0-9*]{7,}(?:$|[^0-9A-Za-z])`)

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
		{`{"items":[{"skuId":"vase","qty":1}],"address":` + strings.Replace(addr, "张三", "张\\u200f三", 1) + `}`, "address.userName"}, // RLM
		{`{"items":[{"skuId":"vase","qty":1}],"address":"广州市海珠区新港中路397号"}`, "address"},
		{`{"items":[{"skuId":"vase","qty":1}],"address":` + strings.Replace(addr, `"postalCode"`, `"zip"`, 1) + `}`, "address"},
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
	// The refusals' log lines carry their messages: no phone number (the one sent, or
	// an example's), no street.
	if log := stack.Log.String(); phoneLike.MatchString(log) || strings.Contains(log, "新港中路") {
		t.Errorf("the stack's log holds a phone number or a street: %s", phoneLike.FindString(log))
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

func TestChangeAddress_ByTheOwnerUntilTheFirstShipment(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: parcelSeed, SQS: true}) // a shipment is queued for upload
	id := stack.Order(t, "alice", `{"items":[{"skuId":"vase","qty":2}],"address":`+addr+`}`)
	moved := strings.Replace(addr, street, "阅江西路222号", 1)
	if status, out := stack.Call(t, http.MethodPatch, "/orders/"+id+"/address", "bob", nil, moved); status != http.StatusNotFound {
		t.Errorf("another buyer changes it: %d %v, want 404", status, out)
	}
	if status, out := stack.OutsideContract("bad phone").Call(t, http.MethodPatch, "/orders/"+id+"/address", "alice", nil, strings.Replace(moved, phone, "call me", 1)); status != http.StatusBadRequest {
		t.Errorf("bad phone: %d %v, want 400", status, out)
	}
	for range 2 { // the same change twice: the same answer
		status, out := stack.Call(t, http.MethodPatch, "/orders/"+id+"/address", "alice", nil, moved)
		if a, _ := out["address"].(map[string]any); status != http.StatusOK || a["detailInfo"] != "阅江西路222号" {
			t.Fatalf("owner changes it: %d %v, want 200 with the new address", status, out)
		}
	}
	if _, out := stack.Call(t, http.MethodGet, "/orders/"+id, "alice", nil, ""); out["address"].(map[string]any)["detailInfo"] != "阅江西路222号" {
		t.Errorf("read back: %v", out["address"])
	}
	if status, out := stack.Call(t, http.MethodPost, "/orders/"+id+"/pay", "alice", nil, ""); status != http.StatusOK {
		t.Fatalf("pay: %d %v", status, out)
	}
	if status, out := stack.Call(t, http.MethodPost, "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
		t.Fatalf("local pay: %d %v", status, out)
	}
	if status, out := stack.Call(t, http.MethodPost, "/admin/orders/"+id+"/shipments", "", nil,
		`{"shipmentId":"parcel-1","type":"express","carrier":"YTO","tracking":"YT3750696145732"}`); status != http.StatusAccepted {
		t.Fatalf("ship: %d %v", status, out)
	}
	if status, out := stack.Call(t, http.MethodPatch, "/orders/"+id+"/address", "alice", nil, addr); status != http.StatusConflict || out["code"] != "ADDRESS_LOCKED" {
		t.Errorf("after the first shipment: %d %v, want 409 ADDRESS_LOCKED", status, out)
	}
	if status, _ := stack.Call(t, http.MethodPatch, "/orders/"+id+"/address", "alice", nil, moved); status != http.StatusOK {
		t.Errorf("the applied change repeated after shipping: %d, want 200", status)
	}
}

// The mini-program's wx.request sends no PATCH (its method takes OPTIONS, GET, HEAD,
// POST, PUT, DELETE, TRACE, CONNECT), so PUT on the same path is the same change, with
// the same answers; and its body is read as JSON whatever the Content-Type says, as
// every JSON route's (docs/contract.md, Conventions).
func TestChangeAddress_PutIsPatchForTheMiniProgram(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: parcelSeed, SQS: true})
	id := stack.Order(t, "alice", `{"items":[{"skuId":"vase","qty":1}],"address":`+addr+`}`)
	moved := strings.Replace(addr, street, "阅江西路222号", 1)
	if status, out := stack.Call(t, http.MethodPut, "/orders/"+id+"/address", "bob", nil, moved); status != http.StatusNotFound || out["code"] != "ORDER_NOT_FOUND" {
		t.Errorf("another buyer puts it: %d %v, want 404", status, out)
	}
	if status, out := stack.OutsideContract("bad phone").Call(t, http.MethodPut, "/orders/"+id+"/address", "alice", nil, strings.Replace(moved, phone, "call me", 1)); status != http.StatusBadRequest {
		t.Errorf("bad phone: %d %v, want 400", status, out)
	}
	if status, out := stack.OutsideContract("the address wrapped as in POST /orders").Call(t, http.MethodPut, "/orders/"+id+"/address", "alice", nil, `{"address":`+moved+`}`); status != http.StatusBadRequest || !strings.Contains(out["message"].(string), "the body is the address itself") {
		t.Errorf("wrapped: %d %v, want 400 saying the body is the address", status, out)
	}
	status, out := stack.OutsideContract("a JSON body sent as text/plain").Call(t, http.MethodPut, "/orders/"+id+"/address", "alice",
		map[string]string{"Content-Type": "text/plain"}, moved)
	if a, _ := out["address"].(map[string]any); status != http.StatusOK || a["detailInfo"] != "阅江西路222号" {
		t.Fatalf("owner puts it as text/plain: %d %v, want 200 with the new address", status, out)
	}
	if status, out := stack.OutsideContract("a JSON body sent as text/plain").Call(t, http.MethodPatch, "/orders/"+id+"/address", "alice",
		map[string]string{"Content-Type": "text/plain; charset=utf-8"}, moved); status != http.StatusOK {
		t.Errorf("owner patches it as text/plain: %d %v, want 200 as with PUT", status, out)
	}
	if _, out := stack.Call(t, http.MethodGet, "/orders/"+id, "alice", nil, ""); out["address"].(map[string]any)["detailInfo"] != "阅江西路222号" {
		t.Errorf("read back: %v", out["address"])
	}
	if status, out := stack.Call(t, http.MethodPost, "/orders/"+id+"/pay", "alice", nil, ""); status != http.StatusOK {
		t.Fatalf("pay: %d %v", status, out)
	}
	if status, out := stack.Call(t, http.MethodPost, "/_local/pay/"+id, "", nil, ""); status != http.StatusNoContent {
		t.Fatalf("local pay: %d %v", status, out)
	}
	if status, out := stack.Call(t, http.MethodPost, "/admin/orders/"+id+"/shipments", "", nil,
		`{"shipmentId":"parcel-1","type":"express","carrier":"YTO","tracking":"YT3750696145732"}`); status != http.StatusAccepted {
		t.Fatalf("ship: %d %v", status, out)
	}
	if status, out := stack.Call(t, http.MethodPut, "/orders/"+id+"/address", "alice", nil, addr); status != http.StatusConflict || out["code"] != "ADDRESS_LOCKED" {
		t.Errorf("after the first shipment: %d %v, want 409 ADDRESS_LOCKED", status, out)
	}
}

// wx.chooseAddress's answer as it is (its page: userName, postalCode, provinceName,
// cityName, countyName, streetName, detailInfo, detailInfoNew, nationalCode,
// telNumber, errMsg) is taken by POST /orders and by the address change: streetName
// is kept with the address fields, detailInfoNew, nationalCode and errMsg are not.
func TestOrderAddress_TakesWxChooseAddressAnswerAsItIs(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: parcelSeed})
	picker := `{"errMsg":"chooseAddress:ok","userName":"张三","nationalCode":"510000","telNumber":"` + phone + `","postalCode":"510000","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","streetName":"新港街道","detailInfo":"` + street + `","detailInfoNew":"新港街道` + street + `"}`
	status, out := stack.Call(t, http.MethodPost, "/orders", "alice", nil, `{"items":[{"skuId":"vase","qty":1}],"address":`+picker+`}`)
	if status != http.StatusCreated {
		t.Fatalf("order with the picker's answer: %d %v, want 201", status, out)
	}
	id := out["orderId"].(string)
	for _, method := range []string{http.MethodPatch, http.MethodPut} {
		if status, out := stack.Call(t, method, "/orders/"+id+"/address", "alice", nil, picker); status != http.StatusOK {
			t.Errorf("%s with the picker's answer: %d %v, want 200", method, status, out)
		}
	}
	for _, who := range []string{"/orders/" + id, "/admin/orders/" + id} {
		_, got := stack.Call(t, http.MethodGet, who, "alice", nil, "")
		a, _ := got["address"].(map[string]any)
		if a["streetName"] != "新港街道" || a["detailInfo"] != street || a["errMsg"] != nil || a["nationalCode"] != nil || a["detailInfoNew"] != nil {
			t.Errorf("%s: address %v, want streetName kept and the picker-only fields dropped", who, a)
		}
	}
	_, got := stack.Call(t, http.MethodGet, "/orders", "alice", nil, "")
	if a := got["orders"].([]any)[0].(map[string]any)["address"].(map[string]any); a["streetName"] != nil {
		t.Errorf("the list shows the street level: %v", a)
	}
	if status, out := stack.OutsideContract("a field wx.chooseAddress does not answer").Call(t, http.MethodPost, "/orders", "alice", nil,
		`{"items":[{"skuId":"vase","qty":1}],"address":`+strings.Replace(picker, `"errMsg"`, `"idCard":"x","errMsg"`, 1)+`}`); status != http.StatusBadRequest {
		t.Errorf("an unknown address field: %d %v, want 400", status, out)
	}
}
