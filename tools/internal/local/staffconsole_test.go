package local_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/local/staffidp"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

var staff = []staffidp.Account{
	{Username: "owner", Password: "owner-pass-local", Groups: []string{"owner"}},
	{Username: "operator", Password: "operator-pass-local", Groups: []string{"operator"}},
	{Username: "viewer", Password: "viewer-pass-local", Groups: []string{"viewer"}},
}

// consoleStack is a payStack whose staff may sign in to the console; it returns each
// role's access token.
func consoleStack(t *testing.T) (*local.Stack, map[string]string) {
	t.Helper()
	// On the wall clock: the staff provider stamps its tokens with it.
	stack := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":100,"stock":10}]`, RealTime: true,
		Stack: local.StackConfig{PaymentTimeout: 15 * time.Minute, Staff: staff}}).Stack
	tokens := map[string]string{}
	for _, a := range staff {
		token, err := staffidp.SignIn(context.Background(), stack.StaffIssuer(), a.Username, a.Password)
		if err != nil {
			t.Fatal(err)
		}
		tokens[a.Username] = token
	}
	return stack, tokens
}

// console sends a request to the console's API (ConsoleApi) with token.
func console(t *testing.T, stack *local.Stack, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	status, out, _ := apiWith(context.Background(), stack, method, local.ConsoleAPIPath+path, token, body)
	return status, out
}

// Each role reaches what it may on the console's API, and a change records the staff
// member; what a role may not do is 403 ROLE_FORBIDDEN and changes nothing.
func TestConsole_RolesOnTheMerchantRoutes(t *testing.T) {
	stack, tokens := consoleStack(t)
	status, sku := console(t, stack, "POST", "/admin/skus", tokens["owner"], `{"skuId":"mug-04","delivery":"none","name":"mug","price":5900,"stock":20}`)
	if status != http.StatusCreated || sku["updatedBy"] != "staff:owner" {
		t.Fatalf("owner creates a SKU: %d %v; want 201 recorded as staff:owner", status, sku)
	}
	writes := []struct{ method, path, body string }{
		{"POST", "/admin/skus", `{"skuId":"x-1","delivery":"none","name":"x","price":1}`},
		{"PATCH", "/admin/skus/mug-04", `{"limitPerUser":1}`},
		{"POST", "/admin/skus/mug-04/adjustments", `{"adjustmentId":"restock-1","delta":5,"reason":"delivery"}`},
		{"PUT", "/admin/skus/mug-04/shards", `{"shards":2}`},
		{"POST", "/admin/reconcile", ``},
	}
	for _, role := range []string{"operator", "viewer"} {
		for _, w := range writes {
			if status, body := console(t, stack, w.method, w.path, tokens[role], w.body); status != http.StatusForbidden || body["code"] != "ROLE_FORBIDDEN" {
				t.Errorf("%s %s %s: %d %v; want 403 ROLE_FORBIDDEN", role, w.method, w.path, status, body)
			}
		}
		if status, body := console(t, stack, "GET", "/admin/skus/mug-04", tokens[role], ""); status != http.StatusOK || body["onHand"] != 20.0 || body["shards"] != 1.0 {
			t.Errorf("%s reads mug-04: %d %v; want 200, on-hand 20 on 1 shard (nothing changed)", role, status, body)
		}
	}
	order := paidOrder(t, stack)
	if status, body := console(t, stack, "POST", "/admin/orders/"+order+"/refund", tokens["viewer"], `{"restock":true,"reason":"r"}`); status != http.StatusForbidden {
		t.Errorf("viewer refunds: %d %v; want 403", status, body)
	}
	status, body := console(t, stack, "POST", "/admin/orders/"+order+"/refund", tokens["operator"],
		`{"restock":true,"reason":"one cup back","refundId":"rf-1","lines":[{"skuId":"cup-01","qty":1}]}`)
	if status != http.StatusAccepted {
		t.Errorf("operator refunds a line: %d %v; want 202", status, body)
	}
}

// paidOrder is a PAID order of two cups.
func paidOrder(t *testing.T, stack *local.Stack) string {
	t.Helper()
	id := placeOrder(t, stack, signIn(t, stack, "carol"), 2)
	if status, body, _ := api(stack, "POST", "/_local/pay/"+id, "", ""); status != http.StatusNoContent {
		t.Fatalf("pay: %d %v", status, body)
	}
	return id
}

// Nothing but a staff access token of the user pool gets through the console's API:
// no token, a buyer's login token, the local operator header. And a buyer's token on
// HttpApi's merchant routes is no SigV4 signature: API Gateway's 403.
func TestConsole_RefusesEveryOtherCaller(t *testing.T) {
	stack, _ := consoleStack(t)
	buyer := signIn(t, stack, "alice")
	for name, token := range map[string]string{"no token": "", "a buyer's token": buyer, "not a JWT": "abc"} {
		ctx := context.Background()
		if token == "" {
			ctx = openapitest.OutsideContract(ctx, "no credentials at all")
		}
		if status, body, _ := apiWith(ctx, stack, "GET", local.ConsoleAPIPath+"/admin/skus", token, ""); status != http.StatusUnauthorized || body["message"] != "Unauthorized" {
			t.Errorf("console API with %s: %d %v; want API Gateway's 401", name, status, body)
		}
	}
	req := httptest.NewRequest("GET", local.ConsoleAPIPath+"/admin/skus", nil)
	req.Header.Set(local.OperatorHeader, "local-operator")
	req.Header.Set("X-User-Id", "o-alice")
	rec := httptest.NewRecorder()
	stack.API.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("console API with X-Operator-Id: %d %s; want 401 (no local shortcut)", rec.Code, rec.Body)
	}
	ctx := openapitest.OutsideContract(context.Background(), "a bearer token on an AWS_IAM route")
	if status, body, _ := apiWith(ctx, stack, "GET", "/admin/skus", buyer, ""); status != http.StatusForbidden || body["message"] != "Forbidden" {
		t.Errorf("HttpApi's /admin/skus with a buyer's token: %d %v; want API Gateway's 403", status, body)
	}
}

// The console's page is served with the distribution's security headers, and its
// config names the staff issuer, the client and the API.
func TestConsole_PageAndConfig(t *testing.T) {
	stack, _ := consoleStack(t)
	rec := httptest.NewRecorder()
	stack.API.ServeHTTP(rec, httptest.NewRequest("GET", local.ConsolePath+"config.json", nil))
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `"authority":"`+stack.StaffIssuer()+`"`) ||
		!strings.Contains(body, staffidp.ClientID) || !strings.Contains(body, `"api":"/console/api"`) {
		t.Errorf("config.json: %d %s", rec.Code, body)
	}
	rec = httptest.NewRecorder()
	stack.API.ServeHTTP(rec, httptest.NewRequest("GET", local.ConsolePath, nil))
	h := rec.Header()
	if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("console page headers %v", h)
	}
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "npm run build") {
		t.Errorf("console page without a build: %d %s; want 503 saying how to build it", rec.Code, rec.Body)
	}
}
