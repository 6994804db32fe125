package openapitest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
)

const order = `{"orderId":"01a22e5575f07d0e","status":"PENDING","items":[{"skuId":"cup","qty":1,"unitPrice":100}],` +
	`"amount":100,"currency":"CNY","createdAt":"2026-11-11T00:00:00Z","expiresAt":"2026-11-11T00:15:00Z"}`

// answer is a handler that answers status, headers and body whatever it is sent.
func answer(status int, headers map[string]string, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

var jsonType = map[string]string{"Content-Type": "application/json"}

// check runs one exchange through Checker.Check, as the buyer alice (X-User-Id).
func check(t *testing.T, ctx context.Context, method, path, body string, h http.Handler) error {
	t.Helper()
	return checkAs(t, ctx, map[string]string{"X-User-Id": "alice"}, method, path, body, h)
}

// checkAs runs one exchange with the request headers given through Checker.Check.
func checkAs(t *testing.T, ctx context.Context, headers map[string]string, method, path, body string, h http.Handler) error {
	t.Helper()
	req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return openapitest.New(t).Check(req, []byte(body), rec.Result())
}

func TestCheck_AcceptsExchangesTheDocumentAllows(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, method, path, body string
		h                        http.Handler
	}{
		{"order created", "POST", "/orders", `{"items":[{"skuId":"cup","qty":1}]}`,
			answer(201, map[string]string{"Content-Type": "application/json", "Location": "/orders/01a22e5575f07d0e"}, order)},
		{"stock out", "POST", "/orders", `{"items":[{"skuId":"cup","qty":1}]}`,
			answer(409, jsonType, `{"code":"STOCK_OUT","message":"not enough stock available","skuId":"cup"}`)},
		{"busy", "GET", "/orders/01a22e5575f07d0e",
			"", answer(503, map[string]string{"Content-Type": "application/json", "Retry-After": "1"}, `{"code":"BUSY","message":"busy"}`)},
		{"authorizer's 401 (to a refused token)", "GET", "/orders/01a22e5575f07d0e", "", answer(401, jsonType, `{"message":"Unauthorized"}`)},
		{"notification handled", "POST", "/payments/wechatpay/notify", "", answer(204, nil, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctx
			if tc.name == "notification handled" {
				ctx = openapitest.OutsideContract(ctx, "no signature headers")
			}
			if err := check(t, ctx, tc.method, tc.path, tc.body, tc.h); err != nil {
				t.Error(err)
			}
		})
	}
}

// A deliberately wrong answer, or a request outside the contract not marked as such,
// fails the check: the checker can fail.
func TestCheck_RefusesWhatTheDocumentDoesNotAllow(t *testing.T) {
	ctx := context.Background()
	cart := `{"items":[{"skuId":"cup","qty":1}]}`
	for _, tc := range []struct {
		name, method, path, body string
		h                        http.Handler
		want                     string // in the error
	}{
		{"409 with a code not in the document", "POST", "/orders", cart,
			answer(409, jsonType, `{"code":"SOLD_OUT","message":"gone","skuId":"cup"}`), "response 409"},
		{"409 STOCK_OUT without its skuId", "POST", "/orders", cart,
			answer(409, jsonType, `{"code":"STOCK_OUT","message":"not enough stock available"}`), "skuId"},
		{"order without its required orderId", "GET", "/orders/01a22e5575f07d0e", "",
			answer(200, jsonType, strings.Replace(order, `"orderId":"01a22e5575f07d0e",`, "", 1)), "orderId"},
		{"order with a field the document does not have", "GET", "/orders/01a22e5575f07d0e", "",
			answer(200, jsonType, strings.Replace(order, `"amount":100`, `"amount":100,"userId":"alice"`, 1)), "userId"},
		{"a status the route does not document", "GET", "/skus/cup", "",
			answer(409, jsonType, `{"code":"STOCK_OUT","message":"m"}`), "status is not supported"},
		{"503 without Retry-After", "GET", "/orders/01a22e5575f07d0e", "",
			answer(503, jsonType, `{"code":"BUSY","message":"busy"}`), "Retry-After"},
		{"error with AWS detail fields", "GET", "/skus/cup", "",
			answer(404, jsonType, `{"code":"SKU_NOT_FOUND","message":"m","table":"skus"}`), "table"},
		{"qty 0, not marked", "POST", "/orders", `{"items":[{"skuId":"cup","qty":0}]}`,
			answer(400, jsonType, `{"code":"INVALID_REQUEST","message":"m"}`), "request"},
		{"malformed order id, not marked", "GET", "/orders/x", "",
			answer(404, jsonType, `{"code":"ORDER_NOT_FOUND","message":"m"}`), "orderId"},
		{"a route the document does not have", "GET", "/nowhere", "", answer(404, jsonType, `{"message":"Not Found"}`), "no such route"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(t, ctx, tc.method, tc.path, tc.body, tc.h)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// A request must carry what one of its operation's security requirements names, as a
// validating proxy requires: the buyer routes a Bearer token or (locally) X-User-Id,
// the merchant routes a SigV4 Authorization or (locally) X-Operator-Id; public routes
// nothing.
func TestCheck_RequiresOneOfTheOperationsSecuritySchemes(t *testing.T) {
	ctx := context.Background()
	order404 := answer(404, jsonType, `{"code":"ORDER_NOT_FOUND","message":"m"}`)
	sku := answer(404, jsonType, `{"code":"SKU_NOT_FOUND","message":"m"}`)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		path    string
		h       http.Handler
		ok      bool
	}{
		{"buyer with a token", map[string]string{"Authorization": "Bearer abc"}, "/orders/01a22e5575f07d0e", order404, true},
		{"buyer locally", map[string]string{"X-User-Id": "alice"}, "/orders/01a22e5575f07d0e", order404, true},
		{"buyer without identity", nil, "/orders/01a22e5575f07d0e", order404, false},
		{"buyer with a SigV4 header", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=x"}, "/orders/01a22e5575f07d0e", order404, false},
		{"operator signed", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=x"}, "/admin/skus/cup", sku, true},
		{"operator locally", map[string]string{"X-Operator-Id": "local-operator"}, "/admin/skus/cup", sku, true},
		{"operator without identity", nil, "/admin/skus/cup", sku, false},
		{"operator as a buyer", map[string]string{"X-User-Id": "alice"}, "/admin/skus/cup", sku, false},
		{"public", nil, "/skus/cup", sku, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAs(t, ctx, tc.headers, "GET", tc.path, "", tc.h)
			if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "security requirements failed") {
				t.Errorf("error %v, want ok=%v (or a security failure)", err, tc.ok)
			}
		})
	}
}

// A request marked OutsideContract is not checked; its answer still is.
func TestCheck_OutsideContractSkipsTheRequestOnly(t *testing.T) {
	ctx := openapitest.OutsideContract(context.Background(), "qty 0")
	bad := `{"items":[{"skuId":"cup","qty":0}]}`
	if err := check(t, ctx, "POST", "/orders", bad, answer(400, jsonType, `{"code":"INVALID_REQUEST","message":"m"}`)); err != nil {
		t.Errorf("documented answer to a marked request: %v", err)
	}
	if err := check(t, ctx, "POST", "/orders", bad, answer(400, jsonType, `{"code":"BAD","message":"m"}`)); err == nil {
		t.Error("an undocumented answer to a marked request passed")
	}
	if err := check(t, ctx, "GET", "/nowhere", "", answer(404, jsonType, `{"message":"Not Found"}`)); err != nil {
		t.Errorf("API Gateway's 404 to a marked request for no route: %v", err)
	}
	if err := check(t, ctx, "GET", "/nowhere", "", answer(200, jsonType, `{}`)); err == nil {
		t.Error("a 200 for a route the document does not have passed")
	}
}

// recorder is a testing.TB that records what Wrap reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Wrap passes the exchange through unchanged, reports a mismatch to the test, and
// counts what it checked.
func TestWrap_ReportsMismatchesToTheTestAndPassesTheAnswerOn(t *testing.T) {
	rec := &recorder{TB: t}
	c := openapitest.New(rec)
	srv := httptest.NewServer(c.Wrap(answer(409, jsonType, `{"code":"SOLD_OUT","message":"gone"}`)))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"items":[{"skuId":"cup","qty":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User-Id", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 409 || string(body) != `{"code":"SOLD_OUT","message":"gone"}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("answer %d %q %s, want the handler's", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "POST /orders") {
		t.Errorf("reported %q, want one mismatch of POST /orders", rec.errs)
	}
	if reqs, resps := c.Checked(); reqs != 1 || resps != 1 {
		t.Errorf("checked %d requests, %d responses; want 1, 1", reqs, resps)
	}
}
