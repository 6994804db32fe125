package openapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/openapi"
)

func TestLoad_DocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %s, want 3.1", doc.OpenAPI)
	}
}

// localAlternative is the local runner's stand-in for each deployed security scheme:
// X-User-Id for the JWT authorizer, X-Operator-Id for AWS_IAM (SigV4).
var localAlternative = map[string]string{"jwt": "localUser", "sigv4": "localOperator"}

func TestLoad_LocalSecuritySchemesAreLocalOnly(t *testing.T) {
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for deployed, local := range localAlternative {
		scheme := doc.Components.SecuritySchemes[local]
		if scheme == nil || scheme.Value.Type != "apiKey" || scheme.Value.In != "header" || scheme.Value.Extensions["x-local-only"] != true {
			t.Errorf("%s (beside %s): %+v, want a header apiKey marked x-local-only", local, deployed, scheme)
		}
		if d := doc.Components.SecuritySchemes[deployed]; d == nil || d.Value.Extensions["x-local-only"] != nil {
			t.Errorf("%s: %+v, want a deployed scheme", deployed, d)
		}
	}
}

// Every route of the contract, the issuer's and the local runner's is in the
// document, with the authorization the contract gives it.
func TestLoad_DocumentHasEveryRoute(t *testing.T) {
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // "METHOD path" → security scheme ("" none)
		"POST /auth/wechat":                                         "",
		"POST /orders":                                              "jwt",
		"GET /orders":                                               "jwt",
		"GET /orders/{orderId}":                                     "jwt",
		"PATCH /orders/{orderId}/address":                           "jwt",
		"PUT /orders/{orderId}/address":                             "jwt",
		"POST /orders/{orderId}/pay":                                "jwt",
		"POST /orders/{orderId}/cancel":                             "jwt",
		"POST /orders/{orderId}/refund":                             "jwt",
		"GET /skus/{skuId}":                                         "",
		"GET /skus":                                                 "",
		"POST /payments/wechatpay/notify":                           "",
		"POST /payments/wechatpay/refund-notify":                    "",
		"GET /wechat/messages":                                      "",
		"POST /wechat/messages":                                     "",
		"POST /admin/skus":                                          "sigv4",
		"GET /admin/skus":                                           "sigv4",
		"GET /admin/skus/{skuId}":                                   "sigv4",
		"PATCH /admin/skus/{skuId}":                                 "sigv4",
		"POST /admin/skus/{skuId}/adjustments":                      "sigv4",
		"PUT /admin/skus/{skuId}/shards":                            "sigv4",
		"GET /admin/skus/{skuId}/ledger":                            "sigv4",
		"GET /admin/orders":                                         "sigv4",
		"GET /admin/orders/{orderId}":                               "sigv4",
		"POST /admin/orders/{orderId}/refund":                       "sigv4",
		"POST /admin/orders/{orderId}/refunds/{outRefundNo}/retry":  "sigv4",
		"POST /admin/orders/{orderId}/refunds/{outRefundNo}/settle": "sigv4",
		"POST /admin/orders/{orderId}/shipments":                    "sigv4",
		"POST /admin/orders/{orderId}/presale":                      "sigv4",
		"POST /admin/reconcile":                                     "sigv4",
		"GET /admin/reconcile/latest":                               "sigv4",
		"GET /.well-known/openid-configuration":                     "",
		"GET /.well-known/jwks.json":                                "",
		"POST /_local/pay/{orderId}":                                "",
		"POST /_local/receipt/{orderId}":                            "",
		"POST /_local/riskrank/{openid}":                            "",
		"POST /_local/invoke/{function}":                            "",
		"GET /openapi.yaml":                                         "",

		// After-sales.
		"POST /orders/{orderId}/aftersales":                              "jwt",
		"POST /admin/orders/{orderId}/aftersales/{aftersaleId}/approve":  "sigv4",
		"POST /admin/orders/{orderId}/aftersales/{aftersaleId}/reject":   "sigv4",
		"POST /admin/orders/{orderId}/aftersales/{aftersaleId}/received": "sigv4",

		// The waiting room.
		"POST /skus/{skuId}/queue": "jwt",
		"GET /queue/{ticket}":      "jwt",
		"GET /skus/{skuId}/line":   "",

		// The waitlist.
		"POST /skus/{skuId}/waitlist":   "jwt",
		"GET /skus/{skuId}/waitlist":    "jwt",
		"DELETE /skus/{skuId}/waitlist": "jwt",
	}
	got := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			got[key] = true
			scheme, ok := want[key]
			if !ok {
				t.Errorf("%s is in the document but not in the contract", key)
				continue
			}
			var schemes []string
			if op.Security != nil {
				for _, req := range *op.Security {
					for name := range req {
						schemes = append(schemes, name)
					}
				}
			}
			if (scheme == "") != (len(schemes) == 0) || scheme != "" && !slices.Contains(schemes, scheme) {
				t.Errorf("%s: security %v, want %q", key, schemes, scheme)
			}
			// Each deployed scheme has its local-only alternative, so that a validating
			// proxy in front of the local stack accepts the local runner's callers.
			// The merchant routes are also the console's (consoleStaff, on ConsoleApi).
			console := strings.HasPrefix(path, "/admin/")
			if console != slices.Contains(schemes, "consoleStaff") {
				t.Errorf("%s: security %v; want consoleStaff exactly on the /admin/ routes", key, schemes)
			}
			if console {
				schemes = slices.DeleteFunc(schemes, func(s string) bool { return s == "consoleStaff" })
			}
			if local := localAlternative[scheme]; local != "" && (len(schemes) != 2 || !slices.Contains(schemes, local)) {
				t.Errorf("%s: security %v, want %s or %s", key, schemes, scheme, local)
			}
			local := op.Extensions["x-local-only"] == true
			if local != strings.HasPrefix(path, "/_local/") && path != openapi.Path {
				t.Errorf("%s: x-local-only %v", key, local)
			}
		}
	}
	for key := range want {
		if !got[key] {
			t.Errorf("%s is missing from the document", key)
		}
	}
}

func TestHandler_ServesTheDocument(t *testing.T) {
	rec := httptest.NewRecorder()
	openapi.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, openapi.Path, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/yaml" ||
		!strings.HasPrefix(rec.Body.String(), "openapi: 3.1.0") {
		t.Errorf("GET %s: %d %q %.40q", openapi.Path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
}
