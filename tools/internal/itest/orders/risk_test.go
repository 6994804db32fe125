package orders_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

const cupOrder = `{"items":[{"skuId":"cup","qty":1}]}`

// riskStack is the standard stack with the scalper check on "cup" at threshold.
func riskStack(t *testing.T, threshold int) *stacktest.Stack {
	t.Helper()
	stack := stacktest.New(t, stacktest.Options{})
	stack.SetRiskThreshold(t, "cup", threshold)
	return stack
}

// A buyer WeChat rates at the threshold sends many orders at once: every one is
// refused 403 RISK_REJECTED naming the SKU, nothing is reserved, no order or ledger
// entry is written, WeChat is asked once (the instance's concurrent orders share one
// question) and the answer is kept in one item that names no openid. A buyer rated
// below the threshold buys; the rejected buyer still buys a SKU without a threshold,
// without another question to WeChat.
func TestRiskCheck_RejectedBuyerReservesNothingAndWeChatIsAskedOnce(t *testing.T) {
	const orders = 24
	stack := riskStack(t, 3)
	if code, body := stack.Call(t, http.MethodPost, "/_local/riskrank/scalper", "", nil, `{"riskRank":3}`); code != http.StatusNoContent {
		t.Fatalf("POST /_local/riskrank/scalper: %d %v", code, body)
	}
	if code, body := stack.OutsideContract("rank 5").Call(t, http.MethodPost, "/_local/riskrank/fan", "", nil, `{"riskRank":5}`); code != http.StatusBadRequest || body["code"] != "INVALID_REQUEST" {
		t.Fatalf("rank 5: %d %v, want 400 INVALID_REQUEST", code, body)
	}
	stack.WxAPIServer.SetRiskRank("fan", 2)
	kept := stack.RefusedAtOnce(t, orders, http.MethodPost, "/orders", "scalper", cupOrder, "cup")
	if len(kept) != 1 || kept[0]["rank"] != 3.0 || strings.Contains(kept[0]["pk"].(string), "scalper") {
		t.Errorf("kept answers %v, want one of rank 3 keyed without the openid", kept)
	}
	if stack.Available(t, "cup") != 100 {
		t.Errorf("cup available %d, want 100", stack.Available(t, "cup"))
	}

	stack.Order(t, "fan", cupOrder)
	stack.Order(t, "scalper", `{"items":[{"skuId":"saucer","qty":1}]}`)
	if n := stack.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 2 {
		t.Errorf("WeChat asked %d times after the fan's order and a saucer, want 2", n)
	}
	for _, l := range stack.Logged(t, "msg", "risk check without a rank; the buyer is let through") {
		t.Errorf("unexpected fail-open: %v", l)
	}
	stack.Check(t)
}

// The kept answer outlives the instance's copy: an order an hour later reads it
// (no question to WeChat); a day later it has expired and WeChat is asked again.
func TestRiskCheck_KeptAnswerServesADay(t *testing.T) {
	stack := riskStack(t, 4)
	stack.WxAPIServer.SetRiskRank("scalper", 4)
	if code, body := stack.Call(t, http.MethodPost, "/orders", "scalper", nil, cupOrder); code != http.StatusForbidden || body["code"] != "RISK_REJECTED" {
		t.Fatalf("first order: %d %v", code, body)
	}
	stack.Clock.Advance(orders.RiskCopySeconds*time.Second + time.Second)
	if code, body := stack.Call(t, http.MethodPost, "/orders", "scalper", nil, cupOrder); code != http.StatusForbidden || body["code"] != "RISK_REJECTED" {
		t.Fatalf("an hour later: %d %v", code, body)
	}
	if n := stack.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 1 {
		t.Errorf("WeChat asked %d times within the day, want 1", n)
	}
	stack.WxAPIServer.SetRiskRank("scalper", 0) // WeChat's rating improved
	stack.Clock.Advance(24 * time.Hour)
	stack.Order(t, "scalper", cupOrder)
	if n := stack.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 2 {
		t.Errorf("WeChat asked %d times after the day, want 2", n)
	}
}

// WeChat busy: the buyer WeChat would refuse buys (the check fails open), the miss is
// counted (RiskUnknown) and logged without the openid or the address, and nothing is
// kept; the instance asks again only after RiskUnknownSeconds, and then refuses.
func TestRiskCheck_WeChatErrorLetsTheBuyerBuy(t *testing.T) {
	stack := riskStack(t, 1)
	stack.WxAPIServer.SetRiskRank("scalper", 4)
	stack.WxAPIServer.FailNext(wxapi.PathGetUserRiskRank, wxapitest.FailBusy, 1)
	stack.Order(t, "scalper", cupOrder)
	if stack.Available(t, "cup") != 99 || len(stack.RiskItems(t)) != 0 {
		t.Errorf("after a fail-open order: available %d, kept %v", stack.Available(t, "cup"), stack.RiskItems(t))
	}
	lines := stack.Logged(t, "msg", "risk check without a rank; the buyer is let through")
	if len(lines) != 1 || lines[0]["reason"] != "getUserRiskRank errcode -1" {
		t.Errorf("fail-open log lines %v, want one with reason errcode -1", lines)
	}
	if n := len(stack.Logged(t, "RiskUnknown", 1.0)); n != 1 {
		t.Errorf("%d RiskUnknown metrics, want 1", n)
	}
	stack.Order(t, "scalper", cupOrder)
	if n := stack.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 1 {
		t.Errorf("WeChat asked %d times within a minute of the miss, want 1", n)
	}
	stack.Clock.Advance(orders.RiskUnknownSeconds * time.Second)
	if code, body := stack.Call(t, http.MethodPost, "/orders", "scalper", nil, cupOrder); code != http.StatusForbidden || body["code"] != "RISK_REJECTED" {
		t.Errorf("a minute later: %d %v, want 403 RISK_REJECTED", code, body)
	}
	lines, err := stack.Log.Lines()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l["msg"] == "risk check without a rank; the buyer is let through" || l["RiskUnknown"] != nil || l["RiskRejected"] != nil {
			for k, v := range l {
				if s, ok := v.(string); ok && (strings.Contains(s, "scalper") || strings.Contains(s, "192.0.2.1")) {
					t.Errorf("log line %v: %s names the buyer or the address", l, k)
				}
			}
		}
	}
	stack.Check(t)
}

// A keyed order placed before its buyer was refused stays its key's answer: after the
// SKU gets a riskThreshold the buyer is at, a copy of the request (the same
// Idempotency-Key and cart) gets the order back, 200, nothing reserved again; a new
// key is refused 403 RISK_REJECTED, and WeChat is asked once.
func TestRiskCheck_KeyedReplayOfAnEarlierOrderReturnsIt(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{})
	stack.WxAPIServer.SetRiskRank("scalper", 4)
	keyed := map[string]string{"Idempotency-Key": "tap-1"}
	code, created := stack.Call(t, http.MethodPost, "/orders", "scalper", keyed, cupOrder)
	if code != http.StatusCreated {
		t.Fatalf("order before the threshold: %d %v", code, created)
	}
	stack.SetRiskThreshold(t, "cup", 3)
	stack.Clock.Advance(dynamo.DefaultCatalogTTL + time.Second) // createOrder's SKU cache reads the threshold
	if code, again := stack.Call(t, http.MethodPost, "/orders", "scalper", keyed, cupOrder); code != http.StatusOK || again["orderId"] != created["orderId"] {
		t.Errorf("replay after the threshold: %d %v, want 200 with order %v", code, again, created["orderId"])
	}
	if code, body := stack.Call(t, http.MethodPost, "/orders", "scalper", map[string]string{"Idempotency-Key": "tap-2"}, cupOrder); code != http.StatusForbidden || body["code"] != "RISK_REJECTED" {
		t.Errorf("a new key: %d %v, want 403 RISK_REJECTED", code, body)
	}
	if n := stack.Available(t, "cup"); n != 99 {
		t.Errorf("cup available %d, want 99", n)
	}
	if n := stack.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 1 {
		t.Errorf("WeChat asked %d times, want 1", n)
	}
	stack.Check(t)
}
