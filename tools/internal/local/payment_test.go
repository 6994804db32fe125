package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// payStack is a local stack (no SQS) on a settable clock, with 10 cups at 100 fen, and
// the JSON log lines of its functions.
func payStack(t *testing.T) (*local.Stack, *testkit.Clock, *testkit.Log) {
	t.Helper()
	return payStackWith(t, 10)
}

// payStackWith is payStack with stock cups; each option changes the stack's config.
func payStackWith(t *testing.T, stock int, options ...func(*local.StackConfig)) (*local.Stack, *testkit.Clock, *testkit.Log) {
	t.Helper()
	cfg := local.StackConfig{PaymentTimeout: 15 * time.Minute}
	for _, o := range options {
		o(&cfg)
	}
	s := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":100,"stock":` + itoa(stock) + `}]`, Stack: cfg})
	return s.Stack, s.Clock, s.Log
}

// paying is one buyer's order on its own payStack, with its payment started.
type paying struct {
	stack     *local.Stack
	clock     *testkit.Clock
	logs      *testkit.Log
	token, id string
	prepay    map[string]any // the answer to POST /orders/{id}/pay
}

// startPaying signs buyer in on a new payStack, orders qty cups and starts paying.
func startPaying(t *testing.T, buyer string, qty int) paying {
	t.Helper()
	p := paying{}
	p.stack, p.clock, p.logs = payStack(t)
	p.token = signIn(t, p.stack, buyer)
	p.id = placeOrder(t, p.stack, p.token, qty)
	p.prepay = startPayment(t, p.stack, p.token, p.id)
	return p
}

// buyerPays has the buyer pay the order at the WeChat Pay stand-in and returns its answer.
func buyerPays(stack *local.Stack, id string) (int, map[string]any) {
	status, body, _ := api(stack, "POST", "/_local/pay/"+id, "", "")
	return status, body
}

// wantStatus fails t unless the buyer's order id has status want.
func wantStatus(t *testing.T, stack *local.Stack, token, id, want string) {
	t.Helper()
	if got := orderStatus(t, stack, token, id); got != want {
		t.Errorf("order %s: status %s, want %s", id, got, want)
	}
}

// wantAvailable fails t unless want cups are available.
func wantAvailable(t *testing.T, stack *local.Stack, want float64) {
	t.Helper()
	if got := available(t, stack); got != want {
		t.Errorf("available %v, want %v", got, want)
	}
}

// api sends one request to the stack's HTTP API with the Bearer token (none when "")
// and returns the status, the decoded JSON object (nil when not one) and the headers.
func api(stack *local.Stack, method, path, token, body string) (int, map[string]any, http.Header) {
	return apiWith(context.Background(), stack, method, path, token, body)
}

// apiWith is api with the request's context (openapitest.OutsideContract marks a
// request the contract forbids).
func apiWith(ctx context.Context, stack *local.Stack, method, path, token, body string) (int, map[string]any, http.Header) {
	req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	stack.API.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out, rec.Header()
}

// signIn logs in as the buyer name (code test-<name> → openid o-<name>).
func signIn(t *testing.T, stack *local.Stack, name string) string {
	t.Helper()
	status, body, _ := api(stack, "POST", "/auth/wechat", "", `{"code":"test-`+name+`"}`)
	token, _ := body["token"].(string)
	if status != http.StatusOK || token == "" || body["expiresIn"] != 7200.0 {
		t.Fatalf("login %s: %d %v", name, status, body)
	}
	return token
}

// placeOrder orders qty cups and returns the order id.
func placeOrder(t *testing.T, stack *local.Stack, token string, qty int) string {
	t.Helper()
	status, body, _ := api(stack, "POST", "/orders", token, `{"items":[{"skuId":"cup-01","qty":`+itoa(qty)+`}]}`)
	id, _ := body["orderId"].(string)
	if status != http.StatusCreated || id == "" {
		t.Fatalf("order: %d %v", status, body)
	}
	return id
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// startPayment calls POST /orders/{id}/pay and wants 200 with the wx.requestPayment fields.
func startPayment(t *testing.T, stack *local.Stack, token, id string) map[string]any {
	t.Helper()
	status, body, _ := api(stack, "POST", "/orders/"+id+"/pay", token, "")
	if status != http.StatusOK {
		t.Fatalf("pay %s: %d %v", id, status, body)
	}
	pkg, _ := body["package"].(string)
	if !strings.HasPrefix(pkg, "prepay_id=") || body["signType"] != "RSA" || body["paySign"] == "" || body["nonceStr"] == "" || body["timeStamp"] == "" {
		t.Fatalf("pay %s: not wx.requestPayment parameters: %v", id, body)
	}
	return body
}

func orderStatus(t *testing.T, stack *local.Stack, token, id string) string {
	t.Helper()
	status, body, _ := api(stack, "GET", "/orders/"+id, token, "")
	if status != http.StatusOK {
		t.Fatalf("get %s: %d %v", id, status, body)
	}
	return body["status"].(string)
}

func available(t *testing.T, stack *local.Stack) float64 {
	t.Helper()
	_, body, _ := api(stack, "GET", "/skus/cup-01", "", "")
	return body["available"].(float64)
}

func sweep(t *testing.T, stack *local.Stack) map[string]any {
	t.Helper()
	status, body, _ := api(stack, "POST", "/_local/invoke/closeOrder", "", "")
	if status != http.StatusOK {
		t.Fatalf("sweep: %d %v", status, body)
	}
	return body
}

func TestPayment_LoginOrderPrepayPayIsPaid(t *testing.T) {
	p := startPaying(t, "alice", 2)
	wx, ok := p.stack.PayServer.Order(p.id)
	if !ok || wx.PayerOpenID != "o-alice" || wx.Total != 200 || wx.TradeState != wechatpay.TradeStateNotPay {
		t.Fatalf("WeChat Pay order %+v", wx)
	}
	_, order, _ := api(p.stack, "GET", "/orders/"+p.id, p.token, "")
	if want, _ := time.Parse(time.RFC3339Nano, order["expiresAt"].(string)); !wx.TimeExpire.Equal(want.Truncate(time.Second)) {
		t.Errorf("time_expire %v, want the order's expiresAt %v", wx.TimeExpire, want)
	}
	if status, body := buyerPays(p.stack, p.id); status != http.StatusNoContent {
		t.Fatalf("buyer pays: %d %v", status, body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PAID")
	wantAvailable(t, p.stack, 8)
	booktest.Check(t, p.stack.DB, p.stack.Tables)
}

func TestPayment_PrepayTwiceMakesOneWeChatOrder(t *testing.T) {
	p := startPaying(t, "bob", 1)
	p.clock.Advance(time.Minute)
	second := startPayment(t, p.stack, p.token, p.id)
	if p.prepay["package"] != second["package"] {
		t.Errorf("package %v then %v, want the same prepay_id", p.prepay["package"], second["package"])
	}
	if wx, _ := p.stack.PayServer.Order(p.id); wx.PrepayCalls != 1 {
		t.Errorf("JSAPI ordering calls %d, want 1", wx.PrepayCalls)
	}
	booktest.Check(t, p.stack.DB, p.stack.Tables)
}

func TestPayment_AfterExpiryIsRefused(t *testing.T) {
	p := startPaying(t, "carol", 1)
	p.clock.Advance(15*time.Minute + time.Second)
	if status, body, _ := api(p.stack, "POST", "/orders/"+p.id+"/pay", p.token, ""); status != http.StatusConflict || body["code"] != "ORDER_NOT_PAYABLE" {
		t.Errorf("pay after expiry: %d %v, want 409 ORDER_NOT_PAYABLE", status, body)
	}
	if status, body := buyerPays(p.stack, p.id); status != http.StatusConflict {
		t.Errorf("buyer pays after time_expire: %d %v, want the stand-in's refusal (409)", status, body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PENDING") // until released
	booktest.Check(t, p.stack.DB, p.stack.Tables)
}

func TestPayment_LostNotificationAndTimeoutCommitsByQuery(t *testing.T) {
	p := startPaying(t, "dave", 3)
	p.stack.PayServer.SetDropNotifications(true)
	if status, _ := buyerPays(p.stack, p.id); status != http.StatusAccepted {
		t.Fatalf("buyer pays with the notification lost: %d", status)
	}
	p.clock.Advance(16 * time.Minute)
	res := sweep(t, p.stack)
	if res["released"] != 0.0 || res["due"] != 1.0 {
		t.Errorf("sweep %v: want 1 due, 0 released", res)
	}
	wantStatus(t, p.stack, p.token, p.id, "PAID") // committed by the query
	wantAvailable(t, p.stack, 7)                  // nothing released
	if n := metricSum(t, p.logs, "PaidByQuery"); n != 1 {
		t.Errorf("PaidByQuery %v, want 1", n)
	}
	booktest.Check(t, p.stack.DB, p.stack.Tables)
}

func TestPayment_CancelClosesTheWeChatOrder(t *testing.T) {
	p := startPaying(t, "erin", 2)
	if status, body, _ := api(p.stack, "POST", "/orders/"+p.id+"/cancel", p.token, ""); status != http.StatusOK || body["status"] != "CANCELLED" {
		t.Fatalf("cancel: %d %v", status, body)
	}
	if wx, _ := p.stack.PayServer.Order(p.id); wx.TradeState != wechatpay.TradeStateClosed {
		t.Errorf("WeChat Pay order %s, want CLOSED", wx.TradeState)
	}
	if status, _ := buyerPays(p.stack, p.id); status != http.StatusConflict {
		t.Errorf("buyer pays a cancelled order: %d, want 409", status)
	}
	wantAvailable(t, p.stack, 10)
	booktest.Check(t, p.stack.DB, p.stack.Tables)
}

func TestPayment_CancelOfAnOrderPaidAtWeChatCommitsIt(t *testing.T) {
	p := startPaying(t, "fay", 1)
	p.stack.PayServer.SetDropNotifications(true)
	buyerPays(p.stack, p.id)
	if status, body, _ := api(p.stack, "POST", "/orders/"+p.id+"/cancel", p.token, ""); status != http.StatusConflict || body["code"] != "ORDER_NOT_CANCELLABLE" {
		t.Errorf("cancel: %d %v, want 409 ORDER_NOT_CANCELLABLE", status, body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PAID")
	booktest.Check(t, p.stack.DB, p.stack.Tables)
}

func TestPayment_WeChatFailuresChangeNothing(t *testing.T) {
	stack, clock, logs := payStack(t)
	token := signIn(t, stack, "gus")
	id := placeOrder(t, stack, token, 1)

	stack.PayServer.SetFailAPI(true)
	status, body, h := api(stack, "POST", "/orders/"+id+"/pay", token, "")
	if status != http.StatusServiceUnavailable || body["code"] != "BUSY" || h.Get("Retry-After") == "" {
		t.Errorf("pay with WeChat Pay failing: %d %v Retry-After %q, want 503 BUSY", status, body, h.Get("Retry-After"))
	}
	stack.PayServer.SetFailAPI(false)
	stack.PayServer.SetForgeAnswers(true)
	if status, body, _ := api(stack, "POST", "/orders/"+id+"/pay", token, ""); status != http.StatusBadGateway || body["code"] != "PAYMENT_REFUSED" {
		t.Errorf("pay with forged answers: %d %v, want 502 PAYMENT_REFUSED", status, body)
	}
	stack.PayServer.SetForgeAnswers(false)
	startPayment(t, stack, token, id) // still payable

	for _, fail := range []func(bool){stack.PayServer.SetFailAPI, stack.PayServer.SetForgeAnswers} {
		fail(true)
		if status, body, _ := api(stack, "POST", "/orders/"+id+"/cancel", token, ""); status != http.StatusServiceUnavailable {
			t.Errorf("cancel while WeChat Pay cannot be asked: %d %v, want 503", status, body)
		}
		fail(false)
	}
	if got := orderStatus(t, stack, token, id); got != "PENDING" || available(t, stack) != 9 {
		t.Fatalf("after refused cancels: %s, available %v; want PENDING, 9", got, available(t, stack))
	}
	// A timeout releases anyway, and counts it.
	stack.PayServer.SetFailAPI(true)
	clock.Advance(16 * time.Minute)
	if res := sweep(t, stack); res["released"] != 1.0 {
		t.Errorf("sweep %v: want 1 released", res)
	}
	if n := metricSum(t, logs, "ReleasedUnsettled"); n != 1 {
		t.Errorf("ReleasedUnsettled %v, want 1", n)
	}
	booktest.Check(t, stack.DB, stack.Tables)
}

func TestPayment_PayIsForTheOwnerOnly(t *testing.T) {
	stack, _, _ := payStack(t)
	alice, mallory := signIn(t, stack, "alice"), signIn(t, stack, "mallory")
	id := placeOrder(t, stack, alice, 1)
	if status, body, _ := api(stack, "POST", "/orders/"+id+"/pay", mallory, ""); status != http.StatusNotFound {
		t.Errorf("someone else's order: %d %v, want 404", status, body)
	}
	if status, _, _ := api(stack, "POST", "/orders/nosuchorder/pay", alice, ""); status != http.StatusNotFound {
		t.Errorf("unknown order: %d, want 404", status)
	}
	if status, _, _ := api(stack, "POST", "/orders/"+id+"/pay", alice+"x", ""); status != http.StatusUnauthorized {
		t.Errorf("bad token: %d, want 401", status)
	}
	if _, ok := stack.PayServer.Order(id); ok {
		t.Error("a WeChat Pay order was placed for refused requests")
	}
}

// metricSum adds up the single-value observations of metric name in the EMF lines.
func metricSum(t *testing.T, logs *testkit.Log, name string) float64 {
	t.Helper()
	lines, err := logs.Lines()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, l := range lines {
		if _, emf := l["_aws"]; emf {
			if v, ok := l[name].(float64); ok {
				sum += v
			}
		}
	}
	return sum
}

// A release that read the order before its payment was started loses: it would free the
// stock while a WeChat Pay order can still take money. Nothing moves; a fresh cancel
// asks WeChat Pay, closes its order, then releases.
func TestPayment_ReleaseReadBeforeThePaymentStartedLoses(t *testing.T) {
	stack, clock, _ := payStack(t)
	ctx := context.Background()
	token := signIn(t, stack, "hal")
	id := placeOrder(t, stack, token, 1)
	stale, err := stack.Store.Lookup(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	startPayment(t, stack, token, id)
	if _, _, err := stack.Store.Release(ctx, stale, inventory.CancelUser); !errors.Is(err, inventory.ErrBusy) {
		t.Errorf("cancel of the stale read: %v, want ErrBusy", err)
	}
	clock.Advance(16 * time.Minute)
	if _, _, err := stack.Store.Release(ctx, stale, inventory.CancelTimeout); !errors.Is(err, inventory.ErrBusy) {
		t.Errorf("expire of the stale read: %v, want ErrBusy", err)
	}
	wantAvailable(t, stack, 9) // nothing released
	if err := stack.Store.SetPrepay(ctx, stale, "wx-other", clock.Now()); err != nil {
		t.Fatalf("prepay of a PENDING order: %v", err)
	}
	if res := sweep(t, stack); res["released"] != 1.0 {
		t.Errorf("sweep %v, want 1 released", res)
	}
	if wx, _ := stack.PayServer.Order(id); wx.TradeState != wechatpay.TradeStateClosed {
		t.Errorf("WeChat Pay order %s, want CLOSED before the release", wx.TradeState)
	}
	if err := stack.Store.SetPrepay(ctx, stale, "wx-late", clock.Now()); !errors.Is(err, inventory.ErrNotPayable) {
		t.Errorf("prepay of a CANCELLED order: %v, want ErrNotPayable", err)
	}
	booktest.Check(t, stack.DB, stack.Tables)
}

// reconcile releases overdue orders when repairs are on, but never one with a WeChat
// Pay order: it cannot ask WeChat Pay, so it leaves that one to closeOrder.
func TestPayment_ReconcileLeavesOrdersWithAWeChatPayOrderToCloseOrder(t *testing.T) {
	stack, clock, _ := payStackWith(t, 10, func(cfg *local.StackConfig) {
		cfg.Reconcile = func(c *reconcile.Config) {
			c.Repair, c.Window = true, reconcile.Window{Start: 0, End: 23 * time.Hour, Loc: time.UTC}
		}
	})
	token := signIn(t, stack, "ivy")
	started, plain := placeOrder(t, stack, token, 1), placeOrder(t, stack, token, 2)
	startPayment(t, stack, token, started)
	clock.Advance(30 * time.Minute)
	if status, body, _ := api(stack, "POST", "/_local/invoke/reconcile", "", ""); status != http.StatusOK {
		t.Fatalf("reconcile: %d %v", status, body)
	}
	wantStatus(t, stack, token, plain, "CANCELLED") // no WeChat Pay order: reconcile releases it
	wantStatus(t, stack, token, started, "PENDING") // a WeChat Pay order: left to closeOrder
	sweep(t, stack)
	if wx, _ := stack.PayServer.Order(started); orderStatus(t, stack, token, started) != "CANCELLED" || wx.TradeState != wechatpay.TradeStateClosed {
		t.Errorf("after the sweep: WeChat Pay %s, want CLOSED and the order CANCELLED", wx.TradeState)
	}
	booktest.Check(t, stack.DB, stack.Tables)
}

// A payment whose notification was lost and which the merchant refunded outside
// stockguard queries as trade_state REFUND: paid. Neither the timeout nor the buyer's
// cancel releases it: the payment is committed once, the unit never resold, the outside
// refund alarmed (RefundedOutside), and the cancel has its final answer (409).
func TestPayment_PaidThenRefundedOutsideIsNeverReleased(t *testing.T) {
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			p := startPaying(t, "hal", 2)
			p.stack.PayServer.SetDropNotifications(true)
			if status, _ := buyerPays(p.stack, p.id); status != http.StatusAccepted {
				t.Fatalf("buyer pays with the notification lost: %d", status)
			}
			if err := p.stack.PayServer.RefundOutside(p.id, 100); err != nil {
				t.Fatal(err)
			}
			if wx, _ := p.stack.PayServer.Order(p.id); wx.TradeState != wechatpay.TradeStateRefund {
				t.Fatalf("stand-in trade_state %s, want REFUND", wx.TradeState)
			}
			if how == "timeout" {
				p.clock.Advance(16 * time.Minute)
				if res := sweep(t, p.stack); res["released"] != 0.0 || res["due"] != 1.0 {
					t.Errorf("sweep %v: want 1 due, 0 released", res)
				}
			} else {
				for range 2 { // the same final answer every time
					status, body, _ := api(p.stack, "POST", "/orders/"+p.id+"/cancel", p.token, "")
					if status != http.StatusConflict || body["code"] != "ORDER_NOT_CANCELLABLE" {
						t.Errorf("cancel: %d %v, want 409 ORDER_NOT_CANCELLABLE", status, body)
					}
				}
			}
			wantStatus(t, p.stack, p.token, p.id, "PAID")
			wantAvailable(t, p.stack, 8) // the 2 units committed, never back on sale
			if n := metricSum(t, p.logs, "RefundedOutside"); n != 1 {
				t.Errorf("RefundedOutside %v, want 1", n)
			}
			if n := metricSum(t, p.logs, "ReleasedUnsettled"); n != 0 {
				t.Errorf("ReleasedUnsettled %v, want 0", n)
			}
			booktest.Check(t, p.stack.DB, p.stack.Tables)
		})
	}
}

// The local pay route's amount is a payment of so many fen, at least 1: a body
// {"amount": 0} or a negative one is refused and the order stays PENDING (leave the
// body out to pay the ordered amount).
func TestLocalPay_RefusesAnAmountBelowOneFen(t *testing.T) {
	p := startPaying(t, "zed", 1)
	for _, body := range []string{`{"amount":0}`, `{"amount":-5}`} {
		ctx := openapitest.OutsideContract(context.Background(), "an amount below 1 fen, on purpose")
		if status, _, _ := apiWith(ctx, p.stack, "POST", "/_local/pay/"+p.id, "", body); status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", body, status)
		}
	}
	wantStatus(t, p.stack, p.token, p.id, "PENDING")
	if status, body := buyerPays(p.stack, p.id); status != http.StatusNoContent {
		t.Errorf("then paid in full: %d %v", status, body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PAID")
}

// A payment taken at the stand-in for an order /pay never opened is one WeChat Pay
// holds even when its notification is refused (a wrong amount): the order carries the
// JSAPI order's prepay_id, so a cancel asks WeChat Pay first and finds it paid,
// instead of releasing the units of money the stand-in keeps.
func TestLocalPay_AWrongAmountWithoutPayIsFoundPaidByTheCancel(t *testing.T) {
	stack, _, _ := payStack(t)
	token := signIn(t, stack, "yan")
	id := placeOrder(t, stack, token, 1)
	if status, _, _ := api(stack, "POST", "/_local/pay/"+id, "", `{"amount":1}`); status != http.StatusBadRequest {
		t.Fatalf("a wrong amount: %d, want the notify route's 400", status)
	}
	wantStatus(t, stack, token, id, "PENDING")
	status, body, _ := api(stack, "POST", "/orders/"+id+"/cancel", token, "")
	if status == http.StatusOK && body["status"] == "CANCELLED" {
		t.Fatalf("the cancel released an order WeChat Pay holds a payment for: %v", body)
	}
	wantStatus(t, stack, token, id, "PAID")
	wantAvailable(t, stack, 9)
}
