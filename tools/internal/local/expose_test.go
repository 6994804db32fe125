package local_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/openapi"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// Where a request arrived: a network interface's address (another machine sent it)
// or a loopback address (this machine did).
const (
	lanAddr      = "192.0.2.1:3000"
	loopbackAddr = "127.0.0.1:3000"
)

// exposedCall sends one request through Stack.ExposedAPI as if it had arrived at the
// listener address at (what http.Server puts in the request's context), and returns
// the status and the body.
func exposedCall(ctx context.Context, stack *stacktest.Stack, at, method, path string, headers map[string]string, body string) (int, string) {
	req := httptest.NewRequestWithContext(ctx, method, "http://"+at+path, strings.NewReader(body))
	if at != "" {
		addr, err := net.ResolveTCPAddr("tcp", at)
		if err != nil {
			panic(err)
		}
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	stack.ExposedAPI().ServeHTTP(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// fill puts example values into a route path's parameters.
func fill(path, orderID string) string {
	return strings.NewReplacer("{orderId}", orderID, "{skuId}", "cup", "{function}", "reconcile").Replace(path)
}

// A request from another machine to the exposed listener gets what the deployed API
// serves: every route the OpenAPI document marks x-local-only answers API Gateway's
// 404, every merchant route (SigV4) API Gateway's 403 whatever the request carries
// (the local operator header, a SigV4-shaped signature nothing here can verify), and
// every buyer route ignores X-User-Id: without an Authorization header the JWT
// authorizer answers API Gateway's 401 {"message":"Unauthorized"} and no function is
// invoked. Each refusal leaves the tables as they were. The routes come from the
// document, so a route added later is covered too.
func TestExposedAPI_OtherMachinesGetNoLocalOnlyRouteOrShortcut(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{})
	order := stack.Order(t, "alice", `{"items":[{"skuId":"cup","qty":1}]}`)
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := stack.Snapshot(t)
	shortcuts := map[string]string{"X-User-Id": "alice", local.OperatorHeader: local.LocalOperator}
	outside := openapitest.OutsideContract(context.Background(), "a request from another machine")
	var localOnly, merchant, buyer int
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			target := fill(path, order)
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			var schemes []string
			for _, req := range security {
				for name := range req {
					schemes = append(schemes, name)
				}
			}
			switch {
			case op.Extensions["x-local-only"] == true:
				localOnly++
				status, body := exposedCall(context.Background(), stack, lanAddr, method, target, shortcuts, "")
				if status != 404 || body != `{"message":"Not Found"}` {
					t.Errorf("%s %s from another machine: %d %s, want API Gateway's 404", method, target, status, body)
				}
			case slices.Contains(schemes, "sigv4"):
				merchant++
				for _, headers := range []map[string]string{
					shortcuts, nil,
					{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261111/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000", "X-Amz-Date": "20261111T000000Z"},
				} {
					status, body := exposedCall(outside, stack, lanAddr, method, target, headers, `{}`)
					if status != 403 || body != `{"message":"Forbidden"}` {
						t.Errorf("%s %s from another machine with %v: %d %s, want API Gateway's 403", method, target, headers, status, body)
					}
				}
			case slices.Contains(schemes, "localUser"):
				buyer++
				status, body := exposedCall(outside, stack, lanAddr, method, target, shortcuts, `{"items":[{"skuId":"cup","qty":1}]}`)
				if status != 401 || body != `{"message":"Unauthorized"}` {
					t.Errorf("%s %s from another machine with X-User-Id: %d %s, want API Gateway's 401", method, target, status, body)
				}
			}
		}
	}
	if localOnly < 3 || merchant < 12 || buyer < 5 {
		t.Errorf("checked %d local-only, %d merchant and %d buyer operations; the document has more", localOnly, merchant, buyer)
	}
	if after := stack.Snapshot(t); after != before {
		t.Errorf("refused requests changed the tables:\nbefore %s\nafter  %s", before, after)
	}
}

// Another machine signs in with a wx.login code and buys with the token, as on the
// deployed API; a bad token is the JWT authorizer's 401, and the public routes answer.
func TestExposedAPI_OtherMachinesBuyWithARealToken(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{})
	ctx := context.Background()
	status, body := exposedCall(ctx, stack, lanAddr, "POST", "/auth/wechat", map[string]string{"Content-Type": "application/json"}, `{"code":"test-carol"}`)
	var login struct{ Token string }
	if status != 200 || json.Unmarshal([]byte(body), &login) != nil || login.Token == "" {
		t.Fatalf("sign in from another machine: %d %s", status, body)
	}
	bearer := map[string]string{"Authorization": "Bearer " + login.Token, "Content-Type": "application/json", "X-User-Id": "mallory"}
	status, body = exposedCall(ctx, stack, lanAddr, "POST", "/orders", bearer, `{"items":[{"skuId":"cup","qty":1}]}`)
	var order struct{ OrderID, UserID string }
	if status != 201 || json.Unmarshal([]byte(body), &order) != nil {
		t.Fatalf("order with the token: %d %s", status, body)
	}
	if got := stack.Lookup(t, order.OrderID).UserID; got != "o-carol" {
		t.Errorf("the order belongs to %q, want the token's o-carol (X-User-Id is not read)", got)
	}
	for _, tc := range []struct {
		method, path string
		headers      map[string]string
		want         int
	}{
		{"GET", "/orders/" + order.OrderID, bearer, 200},
		{"GET", "/orders/" + order.OrderID, map[string]string{"Authorization": "Bearer " + login.Token + "x"}, 401},
		{"POST", "/orders/" + order.OrderID + "/cancel", bearer, 200},
		{"GET", "/skus/cup", nil, 200},
		{"GET", "/.well-known/openid-configuration", nil, 200},
		{"GET", "/.well-known/jwks.json", nil, 200},
	} {
		if status, body := exposedCall(ctx, stack, lanAddr, tc.method, tc.path, tc.headers, ""); status != tc.want {
			t.Errorf("%s %s from another machine: %d %s, want %d", tc.method, tc.path, status, body, tc.want)
		}
	}
}

// A request that arrived at a loopback address keeps every local convenience, as
// before: the local-only routes, X-User-Id and the unsigned merchant routes. One whose
// arrival address is unknown is taken to come from another machine.
func TestExposedAPI_LoopbackKeepsTheLocalConveniences(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{})
	ctx := context.Background()
	for _, at := range []string{loopbackAddr, "[::1]:3000", "127.0.0.2:3000"} {
		status, body := exposedCall(ctx, stack, at, "POST", "/orders", map[string]string{"X-User-Id": "alice", "Content-Type": "application/json"}, `{"items":[{"skuId":"cup","qty":1}]}`)
		var order struct{ OrderID string }
		if status != 201 || json.Unmarshal([]byte(body), &order) != nil {
			t.Fatalf("order as X-User-Id alice at %s: %d %s", at, status, body)
		}
		for _, tc := range []struct {
			method, path string
			headers      map[string]string
			want         int
		}{
			{"GET", "/orders/" + order.OrderID, map[string]string{"X-User-Id": "alice"}, 200},
			{"POST", "/_local/pay/" + order.OrderID, nil, 204},
			{"POST", "/_local/invoke/reconcile", nil, 200},
			{"GET", "/openapi.yaml", nil, 200},
			{"GET", "/admin/skus/cup", map[string]string{local.OperatorHeader: local.LocalOperator}, 200},
			{"POST", "/admin/skus/cup/adjustments", map[string]string{"Content-Type": "application/json", local.OperatorHeader: "ops"}, 201},
		} {
			body := ""
			if tc.path == "/admin/skus/cup/adjustments" {
				body = `{"adjustmentId":"restock-` + strings.NewReplacer(":", "-", "[", "", "]", "", ".", "-").Replace(at) + `","delta":1,"reason":"delivery"}`
			}
			if status, answer := exposedCall(ctx, stack, at, tc.method, tc.path, tc.headers, body); status != tc.want {
				t.Errorf("%s %s at %s: %d %s, want %d", tc.method, tc.path, at, status, answer, tc.want)
			}
		}
	}
	if status, body := exposedCall(ctx, stack, "", "POST", "/_local/invoke/reconcile", nil, ""); status != 404 {
		t.Errorf("POST /_local/invoke/reconcile with no arrival address: %d %s, want 404", status, body)
	}
}

// Over real sockets: a listener on every interface, as cmd/local -expose -addr
// 0.0.0.0:3000 opens, serves the local-only routes to a connection made to 127.0.0.1
// and API Gateway's 404 to one made to this machine's network address.
func TestExposedAPI_DecidesByTheAddressAConnectionArrivedAt(t *testing.T) {
	lan := testkit.NetworkAddress(t)
	stack := stacktest.New(t, stacktest.Options{})
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: stack.ExposedAPI()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		host string
		want int
	}{{"127.0.0.1", 200}, {lan.String(), 404}} {
		resp, err := http.Get("http://" + net.JoinHostPort(tc.host, itoa(port)) + "/openapi.yaml")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET /openapi.yaml at %s: %d %.80s, want %d", tc.host, resp.StatusCode, body, tc.want)
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:3000": true, "127.0.0.1:0": true, "127.1.2.3:80": true, "[::1]:3000": true, "localhost:3000": true,
		"0.0.0.0:3000": false, ":3000": false, "[::]:3000": false, "192.168.1.5:3000": false, "example.com:3000": false,
		"127.0.0.1": false, "": false,
	} {
		if got := local.LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
