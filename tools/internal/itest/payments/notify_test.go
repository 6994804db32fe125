package payments_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// These tests run the whole local stack (embedded DynamoDB, tables from template.yaml,
// functions wired as the template wires them) and send WeChat Pay notifications built
// by the stack's own payment platform (or by a forger) through the notify route.

// newStack starts the standard stack with a one-minute payment window.
func newStack(t *testing.T, cfg local.StackConfig) *stacktest.Stack {
	t.Helper()
	if cfg.PaymentTimeout == 0 {
		cfg.PaymentTimeout = time.Minute
	}
	return stacktest.New(t, stacktest.Options{Stack: cfg})
}

// cupsAndSaucer is an order of 2 cups and a saucer of the standard seed, for amount fen.
const (
	cupsAndSaucer = `{"items":[{"skuId":"cup","qty":2},{"skuId":"saucer","qty":1}]}`
	amount        = 2*39900 + 12900
)

// success is the transaction WeChat Pay reports for a paid order.
func success(id string, amount int64) wechatpay.Transaction {
	return wechatpay.Transaction{
		OutTradeNo: id, TransactionID: "4200" + id[:24], TradeType: "JSAPI", TradeState: wechatpay.TradeStateSuccess,
		BankType: "OTHERS", SuccessTime: time.Date(2026, 11, 11, 0, 0, 30, 0, time.UTC), Payer: wechatpay.Payer{OpenID: "o-test"},
		Amount: wechatpay.Amount{Total: amount, PayerTotal: amount, Currency: "CNY", PayerCurrency: "CNY"},
	}
}

func TestNotify_PaysOnceHoweverOftenTheNotificationIsResent(t *testing.T) {
	h := newStack(t, local.StackConfig{})
	id := h.Order(t, "buyer", cupsAndSaucer)
	headers, body, err := h.Payments.Notify(success(id, amount), h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	testkit.Parallel(20, func(int) {
		if status, out := h.Notify(t, headers, body); status != http.StatusNoContent {
			t.Errorf("notify: %d %v, want 204", status, out)
		}
	})
	if ops := h.Ops(t, id); ops[string(inventory.OpCommit)] != 2 || ops[string(inventory.OpRelease)] != 0 {
		t.Errorf("ledger %v, want one COMMIT per line (2) and no RELEASE", ops)
	}
	status, out := h.Call(t, "GET", "/orders/"+id, "buyer", nil, "")
	if status != http.StatusOK || out["status"] != "PAID" || out["transactionId"] != "4200"+id[:24] || out["paidAt"] != "2026-11-11T00:00:30Z" {
		t.Errorf("order after payment: %d %v", status, out)
	}
	if cup := h.OnHand(t, "cup"); cup != 98 {
		t.Errorf("cup on-hand %d, want 98", cup)
	}
	h.Check(t)
}

// Every rejection the contract lists leaves stock, orders and ledger as they were.
func TestNotify_RejectsWhatCannotBeTrustedOrDoesNotMatch(t *testing.T) {
	h := newStack(t, local.StackConfig{})
	id := h.Order(t, "buyer", cupsAndSaucer)
	forger, err := paytest.NewPlatform(local.LocalMchID, local.LocalAppID)
	if err != nil {
		t.Fatal(err)
	}
	forger.Serial = h.Payments.Serial // claims to be the platform, signs with its own key
	now := h.Clock.Now()
	genuine := func(tx wechatpay.Transaction, at time.Time) (map[string]string, []byte) {
		headers, body, err := h.Payments.Notify(tx, at)
		if err != nil {
			t.Fatal(err)
		}
		return headers, body
	}
	// resign re-signs a changed body with the platform's key, so what fails is the
	// check after the signature.
	resign := func(body []byte) (map[string]string, []byte) {
		headers, err := h.Payments.Headers(body, now)
		if err != nil {
			t.Fatal(err)
		}
		return headers, body
	}
	// tamper flips one bit of the resource's ciphertext (at byte i from its start, or
	// in the tag when i < 0).
	tamper := func(i int) []byte {
		_, body := genuine(success(id, amount), now)
		var env map[string]any
		json.Unmarshal(body, &env)
		res := env["resource"].(map[string]any)
		ct, _ := base64.StdEncoding.DecodeString(res["ciphertext"].(string))
		if i < 0 {
			i = len(ct) + i
		}
		ct[i] ^= 1
		res["ciphertext"] = base64.StdEncoding.EncodeToString(ct)
		out, _ := json.Marshal(env)
		return out
	}
	other := success(id, amount)
	other.MchID = "1900009999"
	otherApp := success(id, amount)
	otherApp.AppID = "wx9999999999999999"
	low := success(id, amount)
	low.Amount.Total--
	usd := success(id, amount)
	usd.Amount.Currency = "USD"
	unknown := success("0123456789abcdef0123456789abcdef", amount)

	for _, tc := range []struct {
		name    string
		build   func() (map[string]string, []byte)
		status  int
		errLine bool // an error-level log line is expected
	}{
		{"forged signature", func() (map[string]string, []byte) {
			headers, body, err := forger.Notify(success(id, amount), now)
			if err != nil {
				t.Fatal(err)
			}
			return headers, body
		}, 401, false},
		{"stale timestamp", func() (map[string]string, []byte) { return genuine(success(id, amount), now.Add(-6*time.Minute)) }, 401, false},
		{"timestamp from the future", func() (map[string]string, []byte) { return genuine(success(id, amount), now.Add(6*time.Minute)) }, 401, false},
		{"unknown serial", func() (map[string]string, []byte) {
			headers, body := genuine(success(id, amount), now)
			headers["wechatpay-serial"] = "PUB_KEY_ID_0000000000000000"
			return headers, body
		}, 401, false},
		{"signature-test probe", func() (map[string]string, []byte) {
			headers, body := genuine(success(id, amount), now)
			headers["wechatpay-signature"] = "WECHATPAY/SIGNTEST/" + headers["wechatpay-signature"]
			return headers, body
		}, 401, false},
		{"body changed after signing", func() (map[string]string, []byte) {
			headers, body := genuine(success(id, amount), now)
			return headers, bytes.Replace(body, []byte(`"TRANSACTION.SUCCESS"`), []byte(`"TRANSACTION.SUCCESS" `), 1)
		}, 401, false},
		{"tampered ciphertext, re-signed", func() (map[string]string, []byte) { return resign(tamper(0)) }, 401, false},
		{"tampered tag, re-signed", func() (map[string]string, []byte) { return resign(tamper(-1)) }, 401, false},
		{"no headers", func() (map[string]string, []byte) { _, body := genuine(success(id, amount), now); return nil, body }, 401, false},
		{"signed junk", func() (map[string]string, []byte) { return resign([]byte(`{"id":1}`)) }, 400, false},
		{"another merchant", func() (map[string]string, []byte) { return genuine(other, now) }, 400, true},
		{"another app", func() (map[string]string, []byte) { return genuine(otherApp, now) }, 400, true},
		{"amount one fen short", func() (map[string]string, []byte) { return genuine(low, now) }, 400, true},
		{"wrong currency", func() (map[string]string, []byte) { return genuine(usd, now) }, 400, true},
		{"unknown order", func() (map[string]string, []byte) { return genuine(unknown, now) }, 404, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.Snapshot(t)
			errorsBefore := len(h.Logged(t, "level", "ERROR"))
			headers, body := tc.build()
			api := h
			if tc.name == "no headers" || tc.name == "signed junk" { // not a WeChat Pay notification at all
				api = h.OutsideContract(tc.name)
			}
			status, out := api.Notify(t, headers, body)
			if status != tc.status || out["code"] != "FAIL" || out["message"] == "" {
				t.Errorf("%d %v, want %d FAIL", status, out, tc.status)
			}
			if got := len(h.Logged(t, "level", "ERROR")) > errorsBefore; got != tc.errLine {
				t.Errorf("error-level log line: %v, want %v", got, tc.errLine)
			}
			if h.Snapshot(t) != before {
				t.Error("a rejected notification changed the tables")
			}
		})
	}
	if s := h.Lookup(t, id).Status; s != "PENDING" {
		t.Errorf("order %s after only bad notifications, want PENDING", s)
	}
}

func TestNotify_LatePaymentReservesAgainOrIsRefundPending(t *testing.T) {
	h := newStack(t, local.StackConfig{})
	kept := h.Order(t, "early", cupsAndSaucer)
	gone := h.Order(t, "late", cupsAndSaucer)
	for _, o := range []struct{ id, user string }{{kept, "early"}, {gone, "late"}} {
		if status, out := h.Call(t, "POST", "/orders/"+o.id+"/cancel", o.user, nil, ""); status != http.StatusOK {
			t.Fatalf("cancel: %d %v", status, out)
		}
	}
	if status, _ := h.Pay(t, success(kept, amount)); status != http.StatusNoContent {
		t.Fatalf("late pay with stock: %d", status)
	}
	if s := h.Lookup(t, kept).Status; s != "PAID" {
		t.Errorf("late-paid order with stock left is %s, want PAID", s)
	}
	if _, out := h.Call(t, "GET", "/orders/"+kept, "early", nil, ""); out["status"] != "PAID" || out["cancelReason"] != nil || out["cancelledAt"] != nil {
		t.Errorf("late-paid order reads %v, want PAID without its past cancellation", out)
	}
	// Sell out the saucers, so the second late payment finds none.
	for i := 0; ; i++ {
		status, out := h.Call(t, "POST", "/orders", fmt.Sprintf("b%d", i), nil, `{"items":[{"skuId":"saucer","qty":1}]}`)
		if out["code"] == "STOCK_OUT" {
			break
		}
		if status != http.StatusCreated || i > 100 {
			t.Fatalf("sell out: %d %v", status, out)
		}
	}
	skus := fmt.Sprint(h.Scan(t, h.Tables.SKUs))
	errorsBefore := len(h.Logged(t, "level", "ERROR"))
	if status, _ := h.Pay(t, success(gone, amount)); status != http.StatusNoContent {
		t.Fatalf("late pay without stock: %d", status)
	}
	// REFUND_PENDING, then at once REFUNDING with no goods moved: the refund is asked
	// for with no person involved.
	if o := h.Lookup(t, gone); o.Status != inventory.StatusRefunding || len(o.Refunds) != 1 || o.Refunds[0].Restocked || o.Refunds[0].By != "stockguard" || o.Refunds[0].OutRefundNo != gone+"_R" {
		t.Errorf("late-paid order without stock: %+v, want REFUNDING by stockguard without restock", o)
	}
	if fmt.Sprint(h.Scan(t, h.Tables.SKUs)) != skus || h.Ops(t, gone)["RETURN"] != 0 {
		t.Error("REFUND_PENDING touched stock")
	}
	if len(h.Logged(t, "level", "ERROR")) <= errorsBefore {
		t.Error("no error-level log line for a refund due")
	}
	h.Check(t)
}

// Payment, timeout and user cancel fired at once on many orders: each ends PAID, either
// committed straight from its reservation (no RELEASE) or released first and then
// reserved again by the late payment; never released and committed from one
// reservation, and the books balance.
func TestNotify_PaymentRacingTimeoutAndCancel(t *testing.T) {
	h := newStack(t, local.StackConfig{})
	const orders = 15
	ids := make([]string, orders)
	notes := make([][2]any, orders)
	for i := range ids {
		ids[i] = h.Order(t, fmt.Sprintf("u%d", i), cupsAndSaucer)
		headers, body, err := h.Payments.Notify(success(ids[i], amount), h.Clock.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		notes[i] = [2]any{headers, body}
	}
	h.Clock.Advance(time.Minute)
	var direct, late atomic.Int32
	testkit.Parallel(3*orders, func(i int) {
		o := i / 3
		switch i % 3 {
		case 0:
			if status, out := h.Notify(t, notes[o][0].(map[string]string), notes[o][1].([]byte)); status != http.StatusNoContent {
				t.Errorf("notify %s: %d %v", ids[o], status, out)
			}
		case 1:
			body, _ := json.Marshal(closeq.Message{OrderID: ids[o], ExpiresAt: h.Clock.Now()})
			event, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m" + ids[o], Body: string(body), EventSource: "aws:sqs"}}})
			out, err := h.Handlers["CloseOrderFunction"].Invoke(context.Background(), event)
			if err != nil || strings.Contains(string(out), "itemIdentifier") {
				t.Errorf("close %s: %s %v", ids[o], out, err)
			}
		case 2:
			status, out := h.Call(t, "POST", "/orders/"+ids[o]+"/cancel", fmt.Sprintf("u%d", o), nil, "")
			if status != http.StatusOK && (status != http.StatusConflict || out["code"] != "ORDER_NOT_CANCELLABLE") {
				t.Errorf("cancel %s: %d %v", ids[o], status, out)
			}
		}
	})
	for _, id := range ids {
		if s := h.Lookup(t, id).Status; s != "PAID" {
			t.Errorf("order %s is %s, want PAID (stock remained for a late payment)", id, s)
		}
		switch ops := h.Ops(t, id); {
		case ops[string(inventory.OpRelease)] == 0 && ops[string(inventory.OpCommit)] == 2 && ops[string(inventory.OpReserve)] == 2:
			direct.Add(1)
		case ops[string(inventory.OpRelease)] == 2 && ops[string(inventory.OpCommit)] == 2 && ops[string(inventory.OpReserve)] == 4:
			late.Add(1)
		default:
			t.Errorf("order %s ledger %v: neither paid straight nor released then paid late", id, ops)
		}
	}
	t.Logf("paid straight %d, released then paid late %d", direct.Load(), late.Load())
	if cup := h.OnHand(t, "cup"); cup != 100-2*orders {
		t.Errorf("cup on-hand %d, want %d", cup, 100-2*orders)
	}
	h.Check(t)
}

// failReadsOf fails every DynamoDB request naming the order id in *target with a 500.
func failReadsOf(target *atomic.Value) local.Middleware {
	return testkit.FailDynamoDB(func(_ string, body []byte) bool {
		id, _ := target.Load().(string)
		return id != "" && bytes.Contains(body, []byte(id))
	})
}

func TestNotify_StoreFailureAnswers5xxSoWeChatPayResends(t *testing.T) {
	var target atomic.Value
	h := newStack(t, local.StackConfig{DynamoDBWrap: failReadsOf(&target)})
	id := h.Order(t, "buyer", cupsAndSaucer)
	before := h.Snapshot(t)
	target.Store(id)
	status, out := h.Pay(t, success(id, amount))
	target.Store("")
	if status != http.StatusInternalServerError || out["code"] != "FAIL" || strings.Contains(fmt.Sprint(out), "injected") {
		t.Errorf("%d %v, want 500 FAIL without the store's error text", status, out)
	}
	if h.Snapshot(t) != before {
		t.Error("a failed notification changed the tables")
	}
	if status, _ := h.Pay(t, success(id, amount)); status != http.StatusNoContent || h.Lookup(t, id).Status != inventory.StatusPaid {
		t.Errorf("resend after the failure: %d, order %s", status, h.Lookup(t, id).Status)
	}
}

func TestNotify_AcknowledgesOtherEventsWithoutPaying(t *testing.T) {
	h := newStack(t, local.StackConfig{})
	id := h.Order(t, "buyer", cupsAndSaucer)
	tx := success(id, amount)
	tx.TradeState, tx.TransactionID = wechatpay.TradeStateNotPay, ""
	before := h.Snapshot(t)
	if status, out := h.Pay(t, tx); status != http.StatusNoContent {
		t.Errorf("%d %v, want 204", status, out)
	}
	if h.Snapshot(t) != before {
		t.Error("a NOTPAY event changed the tables")
	}
}

// POST /_local/pay/{orderId} pays at the WeChat Pay stand-in, which opens the JSAPI
// order when the order has none, sends a genuine notification and answers as the
// notify route did; a second payment of a paid order is refused as WeChat Pay refuses
// it.
func TestLocalPay_SendsASignedNotificationThroughTheNotifyRoute(t *testing.T) {
	h := newStack(t, local.StackConfig{})
	id := h.Order(t, "buyer", cupsAndSaucer)
	other := h.Order(t, "buyer2", cupsAndSaucer)
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"wrong amount", "/_local/pay/" + other, `{"amount": 1}`, 400, "FAIL"},
		{"unknown order", "/_local/pay/0123456789abcdef0123456789abcdef", ``, 404, "ORDER_NOT_FOUND"},
		{"bad body", "/_local/pay/" + id, `{"amount": "lots"}`, 400, "INVALID_REQUEST"},
		{"unknown field", "/_local/pay/" + id, `{"tip": 5}`, 400, "INVALID_REQUEST"},
		{"negative amount", "/_local/pay/" + id, `{"amount": -1}`, 400, "INVALID_REQUEST"},
		{"unknown state", "/_local/pay/" + id, `{"state": "PAID"}`, 400, "INVALID_REQUEST"},
		{"pay", "/_local/pay/" + id, ``, 204, ""},
		{"pay again", "/_local/pay/" + id, `{"state": "SUCCESS"}`, 409, "ORDER_NOT_PAYABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := h
			if tc.code == "INVALID_REQUEST" { // a body the route does not take
				api = h.OutsideContract(tc.name)
			}
			status, out := api.Call(t, "POST", tc.path, "", nil, tc.body)
			if status != tc.status || tc.code != "" && out["code"] != tc.code {
				t.Errorf("%d %v, want %d %s", status, out, tc.status, tc.code)
			}
		})
	}
	if ops := h.Ops(t, id); ops[string(inventory.OpCommit)] != 2 {
		t.Errorf("ledger %v, want 2 COMMIT (once)", ops)
	}
	if wx, ok := h.Stack.PayServer.Order(id); !ok || wx.TradeState != wechatpay.TradeStateSuccess || wx.TransactionID == "" {
		t.Errorf("the stand-in's order %+v, want it opened and SUCCESS", wx)
	}
	h.Check(t)
}

// Each notification emits one metrics line that counts its answer: a payment as Paid
// and nothing failed, a refused one as NotificationRejected, a store failure as
// NotificationFailed (the alarms on these must not fire on every payment).
func TestNotify_MetricsCountTheAnswer(t *testing.T) {
	var target atomic.Value
	h := newStack(t, local.StackConfig{DynamoDBWrap: failReadsOf(&target)})
	id := h.Order(t, "buyer", cupsAndSaucer)
	target.Store(id)
	h.Pay(t, success(id, amount))
	target.Store("")
	h.Pay(t, success(id, amount+1))
	h.Pay(t, success(id, amount))
	var got []string
	for _, line := range h.Logged(t, "msg", "metrics") {
		if line["Function"] == "payCallback" {
			got = append(got, fmt.Sprintf("paid=%v rejected=%v failed=%v", line["Paid"], line["NotificationRejected"], line["NotificationFailed"]))
		}
	}
	want := []string{"paid=0 rejected=0 failed=1", "paid=0 rejected=1 failed=0", "paid=1 rejected=0 failed=0"}
	if !slices.Equal(got, want) {
		t.Errorf("metrics %q, want %q", got, want)
	}
}
