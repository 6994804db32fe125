package shipping_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// raw sends one request through the local HTTP API and returns the status and body as
// they are (the message routes answer plain text).
func raw(t *testing.T, h *stacktest.Stack, method, target, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.API.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// pushed sends push to POST /wechat/messages signed with token at the time at.
func pushed(t *testing.T, h *stacktest.Stack, token string, push wxapi.Push, at time.Time) (int, string) {
	t.Helper()
	q, body := wxapitest.SignPush(token, push, at)
	return raw(t, h, http.MethodPost, "/wechat/messages?"+q.Encode(), string(body))
}

// receipt is the order's receipt and shipments as its owner reads them.
func receipt(t *testing.T, h *stacktest.Stack, user, id string) (map[string]any, []any) {
	t.Helper()
	code, out := h.Call(t, http.MethodGet, "/orders/"+id, user, nil, "")
	if code != http.StatusOK {
		t.Fatalf("read %s: %d %v", id, code, out)
	}
	r, _ := out["receipt"].(map[string]any)
	s, _ := out["shipments"].([]any)
	return r, s
}

// A shipped order's owner sees the parcel's path and receipt WAITING. A settlement
// push that is forged (another token) or stale (signed 6 minutes ago) is refused 401
// and changes nothing; the stand-in's signed push of the buyer's confirmation records
// receipt CONFIRMED (method buyer, WeChat's time) once; a repeat, and a later signed
// settlement saying otherwise, answer "success" and change nothing.
func TestConfirmReceipt_SignedPushRecordsOnce_ForgedOrStaleRefused(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	id := paidOrder(t, h, "grace")
	if code, out := h.Call(t, http.MethodPost, "/_local/receipt/"+id, "", nil, ""); code != http.StatusConflict || out["code"] != "NOT_CONFIRMABLE" {
		t.Fatalf("confirm before shipping: %d %v", code, out)
	}
	if r, s := receipt(t, h, "grace", id); r != nil || s != nil {
		t.Fatalf("before shipping: receipt %v, shipments %v", r, s)
	}
	if code, out := ship(t, h, id, express); code != http.StatusAccepted {
		t.Fatalf("ship: %d %v", code, out)
	}
	testkit.Eventually(t, 20*time.Second, "shipping UPLOADED", func() bool { return shipping(t, h, "grace", id)["status"] == "UPLOADED" })
	r, s := receipt(t, h, "grace", id)
	if r["status"] != "WAITING" || r["confirmedAt"] != nil || len(s) != 1 {
		t.Fatalf("shipped: receipt %v, shipments %v", r, s)
	}
	parcel := s[0].(map[string]any)
	if parcel["type"] != "express" || parcel["carrier"] != "YTO" || parcel["tracking"] != "YT3750696145732" || parcel["uploadedAt"] == nil ||
		len(parcel["items"].([]any)) != 2 {
		t.Errorf("shipment %v", parcel)
	}

	o := h.Lookup(t, id)
	settled := wxapi.Push{MsgType: wxapi.MsgTypeEvent, Event: wxapi.EventOrderSettlement, TransactionID: o.TransactionID,
		MerchantTradeNo: id, ConfirmReceiveMethod: wxapi.ConfirmManual, ConfirmReceiveTime: time.Now().Unix(), SettlementTime: time.Now().Unix()}
	if code, body := pushed(t, h, "a-guessed-token", settled, time.Now()); code != http.StatusUnauthorized {
		t.Errorf("forged push: %d %s", code, body)
	}
	if code, body := pushed(t, h, local.LocalMessageToken, settled, time.Now().Add(-6*time.Minute)); code != http.StatusUnauthorized {
		t.Errorf("stale push: %d %s", code, body)
	}
	if after := h.Lookup(t, id); after.Receipt != nil || !reflect.DeepEqual(after, o) {
		t.Fatalf("refused pushes changed the order: %+v", after.Receipt)
	}

	if code, body := raw(t, h, http.MethodPost, "/_local/receipt/"+id, ""); code != http.StatusOK || body != "success" {
		t.Fatalf("confirm: %d %q", code, body)
	}
	r, _ = receipt(t, h, "grace", id)
	confirmed := h.Lookup(t, id)
	if r["status"] != "CONFIRMED" || r["method"] != "buyer" || confirmed.Receipt == nil ||
		r["confirmedAt"] != confirmed.Receipt.ConfirmedAt.Format(time.RFC3339Nano) || confirmed.Status != o.Status {
		t.Fatalf("confirmed: receipt %v, order %+v", r, confirmed.Receipt)
	}
	if _, admin := h.Call(t, http.MethodGet, "/admin/orders/"+id, "", nil, ""); !reflect.DeepEqual(admin["receipt"], r) || len(admin["shipments"].([]any)) != 1 {
		t.Errorf("the merchant's view: receipt %v, shipments %v", admin["receipt"], admin["shipments"])
	}

	later := settled
	later.ConfirmReceiveMethod, later.ConfirmReceiveTime = wxapi.ConfirmAuto, time.Now().Add(time.Hour).Unix()
	if code, body := raw(t, h, http.MethodPost, "/_local/receipt/"+id, `{"method":"auto"}`); code != http.StatusOK || body != "success" {
		t.Errorf("the same push again: %d %q", code, body)
	}
	if code, body := pushed(t, h, local.LocalMessageToken, later, time.Now()); code != http.StatusOK || body != "success" {
		t.Errorf("a later settlement: %d %q", code, body)
	}
	if again := h.Lookup(t, id); !reflect.DeepEqual(again, confirmed) {
		t.Errorf("repeats changed the order: %+v, want %+v", again.Receipt, confirmed.Receipt)
	}
	results := map[any]int{}
	for _, l := range h.Logged(t, "route", "POST /wechat/messages") {
		results[l["result"]]++
	}
	if results["recorded"] != 1 || results["replayed"] != 2 {
		t.Errorf("push results %v, want 1 recorded and 2 replayed", results)
	}
	h.Check(t)
}

// WeChat's URL check is answered its echostr only when signed with the message Token;
// events stockguard does not read, the settlement push sent at shipping (no
// confirmation yet), a settlement of an unknown order and one of another payment are
// acknowledged and change nothing.
func TestMessages_URLCheckAndIgnoredPushes(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	now := time.Now()
	ts, nonce := strconv.FormatInt(now.Unix(), 10), "17"
	check := func(token string) (int, string) {
		q := url.Values{"signature": {wxapi.PushSignature(token, ts, nonce)}, "timestamp": {ts}, "nonce": {nonce}, "echostr": {"7394829137"}}
		return raw(t, h, http.MethodGet, "/wechat/messages?"+q.Encode(), "")
	}
	if code, body := check(local.LocalMessageToken); code != http.StatusOK || body != "7394829137" {
		t.Errorf("URL check: %d %q", code, body)
	}
	if code, body := check("a-guessed-token"); code != http.StatusUnauthorized || strings.Contains(body, "7394829137") {
		t.Errorf("forged URL check: %d %q", code, body)
	}

	id := paidOrder(t, h, "heidi")
	o := h.Lookup(t, id)
	for name, p := range map[string]wxapi.Push{
		"another event":      {MsgType: wxapi.MsgTypeEvent, Event: "trade_manage_remind_shipping", TransactionID: o.TransactionID, MerchantTradeNo: id},
		"a text message":     {MsgType: "text"},
		"pushed at shipping": {MsgType: wxapi.MsgTypeEvent, Event: wxapi.EventOrderSettlement, TransactionID: o.TransactionID, MerchantTradeNo: id, ShippedTime: now.Unix()},
		"unknown order":      {MsgType: wxapi.MsgTypeEvent, Event: wxapi.EventOrderSettlement, TransactionID: o.TransactionID, MerchantTradeNo: "no-such-order", ConfirmReceiveMethod: wxapi.ConfirmAuto, ConfirmReceiveTime: now.Unix()},
		"another payment":    {MsgType: wxapi.MsgTypeEvent, Event: wxapi.EventOrderSettlement, TransactionID: "4200009999202611110000000001", MerchantTradeNo: id, ConfirmReceiveMethod: wxapi.ConfirmAuto, ConfirmReceiveTime: now.Unix()},
	} {
		if code, body := pushed(t, h, local.LocalMessageToken, p, now); code != http.StatusOK || body != "success" {
			t.Errorf("%s: %d %q", name, code, body)
		}
	}
	if after := h.Lookup(t, id); !reflect.DeepEqual(after, o) {
		t.Errorf("ignored pushes changed the order: %+v", after.Receipt)
	}
	if n := len(h.Logged(t, "msg", "settlement for an unknown order")); n != 1 {
		t.Errorf("%d unknown-order lines, want 1", n)
	}
}

// WeChat delivering one settlement many times at once (its retries racing the first
// delivery) records exactly one receipt: every delivery answers "success", one log line
// says recorded and the others replayed, and the order's books are untouched.
func TestConfirmReceipt_ConcurrentDeliveriesRecordOnce(t *testing.T) {
	h := shipStack(t, local.StackConfig{})
	id := paidOrder(t, h, "ivan")
	if code, out := ship(t, h, id, express); code != http.StatusAccepted {
		t.Fatalf("ship: %d %v", code, out)
	}
	o, now := h.Lookup(t, id), time.Now()
	push := wxapi.Push{MsgType: wxapi.MsgTypeEvent, Event: wxapi.EventOrderSettlement, TransactionID: o.TransactionID, MerchantTradeNo: id,
		ConfirmReceiveMethod: wxapi.ConfirmAuto, ConfirmReceiveTime: now.Unix(), SettlementTime: now.Unix()}
	const deliveries = 16
	var wg sync.WaitGroup
	codes := make([]int, deliveries)
	for i := range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = pushed(t, h, local.LocalMessageToken, push, now)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("delivery %d: %d", i, c)
		}
	}
	results := map[any]int{}
	for _, l := range h.Logged(t, "route", "POST /wechat/messages") {
		results[l["result"]]++
	}
	if results["recorded"] != 1 || results["replayed"] != deliveries-1 {
		t.Errorf("results %v, want 1 recorded and %d replayed", results, deliveries-1)
	}
	if r := h.Lookup(t, id).Receipt; r == nil || r.Method != "auto" || r.ConfirmedAt.Unix() != push.ConfirmReceiveTime {
		t.Errorf("receipt %+v", r)
	}
	h.Check(t)
}
