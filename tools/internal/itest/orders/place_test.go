package orders_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	miniserver "github.com/truora/minidyn/server"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/wiring/function/createorder"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// fixture returns a testdata event (API Gateway HTTP API payload format 2.0).
func fixture(t testing.TB, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	data, err := os.ReadFile("../../../../internal/orders/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

// handler is a function's handler of HTTP API requests (lambdaevent.Function.HTTP).
type handler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// createOrder builds the createOrder function's HTTP handler with package createorder, as
// its main does, on store, logging to log; order requests send their close messages
// to queue (nil: none).
func createOrder(t testing.TB, store *dynamo.Store, queue *closeq.Queue, log *slog.Logger) handler {
	t.Helper()
	fn, err := createorder.Build(createorder.Config{}, log, store, queue, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fn.HTTP
}

// newHandler starts the local stack with a limited "cup-01", a 2-shard "saucer-02" and
// an off-sale "retired", and returns it with a createOrder handler over its store (no
// close-order queue).
func newHandler(t testing.TB) (*stacktest.Stack, handler) {
	t.Helper()
	stack := stacktest.New(t, stacktest.Options{Seed: `[
		{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":10,"limitPerUser":3},
		{"skuId":"saucer-02","delivery":"none","name":"saucer","price":12900,"stock":2,"shards":2},
		{"skuId":"retired","delivery":"none","name":"old","price":100,"stock":5}]`})
	off := false
	if _, err := stack.Store.PatchSKU(context.Background(), "retired", inventory.SKUPatch{OnSale: &off}, ""); err != nil {
		t.Fatal(err)
	}
	return stack, createOrder(t, stack.Store, nil, slog.New(slog.DiscardHandler))
}

// do hands req to handler as API Gateway would and decodes the JSON body.
func do(t testing.TB, handle handler, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, map[string]any) {
	t.Helper()
	resp, err := handle(context.Background(), req)
	if err != nil {
		t.Fatalf("Handle returned an error (API Gateway would answer 500): %v", err)
	}
	var body map[string]any
	if resp.Body != "" {
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
			t.Fatalf("response body is not JSON: %q", resp.Body)
		}
	}
	return resp, body
}

func withBody(req events.APIGatewayV2HTTPRequest, body string) events.APIGatewayV2HTTPRequest {
	req.Body = body
	return req
}

func lines(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"skuId":"sku-%d","qty":1}`, i)
	}
	return `{"items":[` + strings.Join(parts, ",") + `]}`
}

func TestCreateOrder_RejectsBadRequestsAndChangesNothing(t *testing.T) {
	stack, handler := newHandler(t)
	base := fixture(t, "create-order.json")
	// A key first used with one cart, so reusing it with another is a conflict.
	keyed := base
	keyed.Headers = map[string]string{"idempotency-key": "first-use"}
	if resp, _ := do(t, handler, keyed); resp.StatusCode != http.StatusCreated {
		t.Fatalf("setup order: %d", resp.StatusCode)
	}
	noIdentity := base
	noIdentity.RequestContext.Authorizer = nil
	emptySub := fixture(t, "create-order.json")
	emptySub.RequestContext.Authorizer.JWT.Claims["sub"] = ""
	longSub := fixture(t, "create-order.json") // OIDC caps sub at 255 ASCII characters
	longSub.RequestContext.Authorizer.JWT.Claims["sub"] = strings.Repeat("u", 256)
	controlSub := fixture(t, "create-order.json")
	controlSub.RequestContext.Authorizer.JWT.Claims["sub"] = "alice\nbob"
	header := func(k, v string) events.APIGatewayV2HTTPRequest {
		r := fixture(t, "create-order.json")
		r.Headers[k] = v
		return r
	}
	b64 := base
	b64.IsBase64Encoded, b64.Body = true, "not base64!"

	for _, tc := range []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		status int
		code   string
		sku    string
	}{
		{"malformed JSON", withBody(base, `{"items":[`), 400, "INVALID_REQUEST", ""},
		{"empty body", withBody(base, ``), 400, "INVALID_REQUEST", ""},
		{"array instead of object", withBody(base, `[]`), 400, "INVALID_REQUEST", ""},
		{"JSON null", withBody(base, `null`), 400, "INVALID_REQUEST", ""},
		{"unknown top-level field", withBody(base, `{"items":[{"skuId":"cup-01","qty":1}],"coupon":"FREE"}`), 400, "INVALID_REQUEST", ""},
		{"client-supplied price", withBody(base, `{"items":[{"skuId":"cup-01","qty":1,"unitPrice":1}]}`), 400, "INVALID_REQUEST", ""},
		{"field name in other case", withBody(base, `{"Items":[{"skuId":"cup-01","qty":1}]}`), 400, "INVALID_REQUEST", ""},
		{"missing items", withBody(base, `{}`), 400, "INVALID_REQUEST", ""},
		{"items null", withBody(base, `{"items":null}`), 400, "INVALID_REQUEST", ""},
		{"no lines", withBody(base, `{"items":[]}`), 400, "INVALID_REQUEST", ""},
		{"21 distinct lines", withBody(base, lines(21)), 400, "INVALID_REQUEST", ""},
		{"401 lines merging to 21 SKUs", withBody(base, `{"items":[`+strings.Repeat(`{"skuId":"cup-01","qty":1},`, 380)+strings.TrimPrefix(lines(21), `{"items":[`)), 400, "INVALID_REQUEST", ""},
		{"line not an object", withBody(base, `{"items":[1]}`), 400, "INVALID_REQUEST", ""},
		{"missing qty", withBody(base, `{"items":[{"skuId":"cup-01"}]}`), 400, "INVALID_REQUEST", ""},
		{"qty zero", withBody(base, `{"items":[{"skuId":"cup-01","qty":0}]}`), 400, "INVALID_REQUEST", ""},
		{"qty negative", withBody(base, `{"items":[{"skuId":"cup-01","qty":-1}]}`), 400, "INVALID_REQUEST", ""},
		{"qty fractional", withBody(base, `{"items":[{"skuId":"cup-01","qty":1.5}]}`), 400, "INVALID_REQUEST", ""},
		{"qty string", withBody(base, `{"items":[{"skuId":"cup-01","qty":"2"}]}`), 400, "INVALID_REQUEST", ""},
		{"qty null", withBody(base, `{"items":[{"skuId":"cup-01","qty":null}]}`), 400, "INVALID_REQUEST", ""},
		{"qty above 9999", withBody(base, `{"items":[{"skuId":"cup-01","qty":10000}]}`), 400, "INVALID_REQUEST", ""},
		{"qty overflowing int64", withBody(base, `{"items":[{"skuId":"cup-01","qty":99999999999999999999}]}`), 400, "INVALID_REQUEST", ""},
		{"merged qty above 9999", withBody(base, `{"items":[{"skuId":"cup-01","qty":5000},{"skuId":"cup-01","qty":5000}]}`), 400, "INVALID_REQUEST", ""},
		{"empty skuId", withBody(base, `{"items":[{"skuId":"","qty":1}]}`), 400, "INVALID_REQUEST", ""},
		{"skuId with space", withBody(base, `{"items":[{"skuId":"cup 01","qty":1}]}`), 400, "INVALID_REQUEST", ""},
		{"skuId with #", withBody(base, `{"items":[{"skuId":"cup-01#shard#0","qty":1}]}`), 400, "INVALID_REQUEST", ""},
		{"skuId 65 chars", withBody(base, `{"items":[{"skuId":"`+strings.Repeat("a", 65)+`","qty":1}]}`), 400, "INVALID_REQUEST", ""},
		{"skuId not a string", withBody(base, `{"items":[{"skuId":7,"qty":1}]}`), 400, "INVALID_REQUEST", ""},
		{"skuId named twice", withBody(base, `{"items":[{"skuId":"ghost","qty":1,"skuId":"cup-01"}]}`), 400, "INVALID_REQUEST", ""},
		{"qty named twice", withBody(base, `{"items":[{"skuId":"cup-01","qty":1,"qty":9999}]}`), 400, "INVALID_REQUEST", ""},
		{"items named twice", withBody(base, `{"items":[{"skuId":"cup-01","qty":1}],"items":[]}`), 400, "INVALID_REQUEST", ""},
		{"trailing data", withBody(base, `{"items":[{"skuId":"cup-01","qty":1}]} {}`), 400, "INVALID_REQUEST", ""},
		{"body over 16 KiB", withBody(base, `{"items":[{"skuId":"cup-01","qty":1}]}`+strings.Repeat(" ", 16<<10)), 413, "PAYLOAD_TOO_LARGE", ""},
		{"bad base64 body", b64, 400, "INVALID_REQUEST", ""},
		{"empty Idempotency-Key", header("idempotency-key", ""), 400, "INVALID_REQUEST", ""},
		{"65-char Idempotency-Key", header("idempotency-key", strings.Repeat("k", 65)), 400, "INVALID_REQUEST", ""},
		{"non-ASCII Idempotency-Key", header("idempotency-key", "ключ"), 400, "INVALID_REQUEST", ""},
		{"Idempotency-Key sent twice (API Gateway joins them with a comma)", header("idempotency-key", "k-1,k-2"), 400, "INVALID_REQUEST", ""},
		{"no identity", noIdentity, 401, "UNAUTHORIZED", ""},
		{"empty sub claim", emptySub, 401, "UNAUTHORIZED", ""},
		{"sub claim over 255 bytes", longSub, 401, "UNAUTHORIZED", ""},
		{"sub claim with a control character", controlSub, 401, "UNAUTHORIZED", ""},
		{"unknown SKU", withBody(base, `{"items":[{"skuId":"cup-01","qty":1},{"skuId":"ghost","qty":1}]}`), 404, "SKU_NOT_FOUND", "ghost"},
		{"not enough stock", withBody(base, `{"items":[{"skuId":"cup-01","qty":1},{"skuId":"saucer-02","qty":3}]}`), 409, "STOCK_OUT", "saucer-02"},
		{"off sale", withBody(base, `{"items":[{"skuId":"retired","qty":1}]}`), 409, "SKU_OFF_SALE", "retired"},
		{"over the per-user limit", withBody(base, `{"items":[{"skuId":"cup-01","qty":2}]}`), 409, "LIMIT_EXCEEDED", "cup-01"},
		{"idempotency key reused with another cart", withBody(keyed, `{"items":[{"skuId":"cup-01","qty":1}]}`), 422, "IDEMPOTENCY_KEY_REUSED", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := stack.Snapshot(t)
			resp, body := do(t, handler, tc.req)
			if resp.StatusCode != tc.status || body["code"] != tc.code {
				t.Fatalf("got %d %v, want %d %s", resp.StatusCode, body, tc.status, tc.code)
			}
			if sku, _ := body["skuId"].(string); sku != tc.sku {
				t.Errorf("skuId %q, want %q", sku, tc.sku)
			}
			if msg, _ := body["message"].(string); msg == "" {
				t.Error("no message")
			}
			if after := stack.Snapshot(t); before != after {
				t.Errorf("a rejected request changed the tables")
			}
		})
	}
}

func TestCreateOrder_CreatesThenReplaysWithTheSameIdempotencyKey(t *testing.T) {
	_, handler := newHandler(t)
	req := fixture(t, "create-order.json")
	req.Headers["idempotency-key"] = "tap-1"
	req.Body = `{"items":[{"skuId":"cup-01","qty":1},{"skuId":"saucer-02","qty":1},{"skuId":"cup-01","qty":1}]}`
	first, created := do(t, handler, req)
	if first.StatusCode != http.StatusCreated || first.Headers["Location"] != "/orders/"+created["orderId"].(string) {
		t.Fatalf("first: %d %v %v", first.StatusCode, first.Headers, created)
	}
	items := created["items"].([]any)
	if len(items) != 2 || created["amount"].(float64) != 2*39900+12900 || created["status"] != "PENDING" || created["currency"] != "CNY" {
		t.Errorf("merged cart: %v", created)
	}
	req.Body = `{"items":[{"skuId":"saucer-02","qty":1},{"skuId":"cup-01","qty":2}]}` // same cart, other spelling
	second, replayed := do(t, handler, req)
	if second.StatusCode != http.StatusOK || second.Headers["Idempotent-Replayed"] != "true" || replayed["orderId"] != created["orderId"] {
		t.Errorf("replay: %d %v %v", second.StatusCode, second.Headers, replayed)
	}
}

func TestGetOrder_OnlyTheOwnerSeesIt(t *testing.T) {
	_, handler := newHandler(t)
	_, created := do(t, handler, fixture(t, "create-order.json"))
	id := created["orderId"].(string)
	get := func(sub, id string) (int, map[string]any) {
		req := fixture(t, "get-order.json")
		req.PathParameters["orderId"] = id
		if sub == "" {
			req.RequestContext.Authorizer = nil
		} else {
			req.RequestContext.Authorizer.JWT.Claims["sub"] = sub
		}
		resp, body := do(t, handler, req)
		return resp.StatusCode, body
	}
	owner := fixture(t, "create-order.json").RequestContext.Authorizer.JWT.Claims["sub"]
	if status, body := get(owner, id); status != 200 || body["orderId"] != id || body["expiresAt"] == nil {
		t.Errorf("owner: %d %v", status, body)
	}
	for _, tc := range []struct {
		name, sub, id string
		status        int
		code          string
	}{
		{"another user", "someone-else", id, 404, "ORDER_NOT_FOUND"},
		{"unknown id", owner, "0000000000000000000000000000000a", 404, "ORDER_NOT_FOUND"},
		{"malformed id", owner, "../../etc", 400, "INVALID_REQUEST"},
		{"a purchase counter's key", owner, "limit#cup-01#" + owner, 400, "INVALID_REQUEST"},
		{"3,000 characters", owner, strings.Repeat("a", 3000), 400, "INVALID_REQUEST"},
		{"no identity", "", id, 401, "UNAUTHORIZED"},
	} {
		if status, body := get(tc.sub, tc.id); status != tc.status || body["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, status, body, tc.status, tc.code)
		}
	}
}

// A SKU's answer is at most stock.MaxStale old: the checks after buying let that pass.
func TestGetSKU_ShowsSaleStatusAndConservativeAvailability(t *testing.T) {
	stack, handler := newHandler(t)
	sku := func(id string) (int, map[string]any) {
		req := fixture(t, "get-sku.json")
		req.PathParameters["skuId"] = id
		resp, body := do(t, handler, req)
		return resp.StatusCode, body
	}
	buy := func(id string, qty int, user string) {
		req := fixture(t, "create-order.json")
		req.RequestContext.Authorizer.JWT.Claims["sub"] = user
		req.Body = fmt.Sprintf(`{"items":[{"skuId":%q,"qty":%d}]}`, id, qty)
		if resp, body := do(t, handler, req); resp.StatusCode != 201 {
			t.Fatalf("buy: %d %v", resp.StatusCode, body)
		}
	}
	check := func(id, status string, available float64) {
		t.Helper()
		stack.Clock.Advance(stock.MaxStale)
		code, body := sku(id)
		if code != 200 || body["status"] != status || body["available"] != available {
			t.Errorf("%s: %d %v, want %s with %v available", id, code, body, status, available)
		}
	}
	check("cup-01", "ON_SALE", 10)
	buy("cup-01", 3, "a")
	buy("cup-01", 2, "b")
	check("cup-01", "LOW_STOCK", 5)
	buy("saucer-02", 1, "a")
	buy("saucer-02", 1, "b")
	check("saucer-02", "SOLD_OUT", 0)
	check("retired", "OFF_SALE", 0)
	if code, body := sku("ghost"); code != 404 || body["code"] != "SKU_NOT_FOUND" {
		t.Errorf("unknown: %d %v", code, body)
	}
	if code, body := sku("bad id!"); code != 400 || body["code"] != "INVALID_REQUEST" {
		t.Errorf("malformed: %d %v", code, body)
	}
}

func TestHandle_StoreFailureAnswersBusyWithoutLeakingAWSText(t *testing.T) {
	stack, handler := newHandler(t)
	stack.DynamoDB.Minidyn().EmulateFailure(miniserver.FailureConditionInternalServerError)
	defer stack.DynamoDB.Minidyn().EmulateFailure(miniserver.FailureConditionNone)
	for _, name := range []string{"create-order.json", "get-order.json", "get-sku.json"} {
		resp, body := do(t, handler, fixture(t, name))
		if resp.StatusCode < 500 {
			t.Errorf("%s: %d, want 5xx", name, resp.StatusCode)
		}
		for _, leak := range []string{"emulated", "DynamoDB", "Table", "operation error", "StatusCode"} {
			if strings.Contains(resp.Body, leak) {
				t.Errorf("%s: body leaks %q: %s", name, leak, resp.Body)
			}
		}
		if resp.StatusCode == http.StatusServiceUnavailable && (body["code"] != "BUSY" || resp.Headers["Retry-After"] == "") {
			t.Errorf("%s: 503 without BUSY and Retry-After: %v %v", name, resp.Headers, body)
		}
	}
	if resp, _ := do(t, handler, fixture(t, "create-order.json")); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("createOrder with the store down: %d, want 503 BUSY", resp.StatusCode)
	}
}

// A route createOrder does not own (closeOrder's cancel, one that does not exist) is
// refused with an error, and nothing changes.
func TestHandle_RefusesRoutesOfOtherFunctions(t *testing.T) {
	stack, handler := newHandler(t)
	create := fixture(t, "create-order.json")
	for _, route := range []string{"POST /orders/{orderId}/cancel", "DELETE /skus/{skuId}", ""} {
		before := stack.Snapshot(t)
		req := create
		req.RouteKey = route
		if _, err := handler(context.Background(), req); !errors.Is(err, lambdaevent.ErrNotServed) {
			t.Errorf("route %q: %v, want ErrNotServed", route, err)
		}
		if after := stack.Snapshot(t); before != after {
			t.Errorf("route %q changed the tables", route)
		}
	}
}
