package local_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/openapi"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// Many requests at once through one function's handler each get their own answer
// (aws-lambda-go reuses its output buffers; see handler in stack.go). Under -race a
// shared buffer is also reported as a data race.
func TestStack_ConcurrentInvocationsGetTheirOwnAnswers(t *testing.T) {
	var seed []string
	for i := range 8 {
		seed = append(seed, fmt.Sprintf(`{"skuId":"sku-%d","delivery":"none","name":"n","price":%d,"stock":1}`, i, 100+i))
	}
	stack := stacktest.New(t, stacktest.Options{Seed: "[" + strings.Join(seed, ",") + "]"})
	testkit.Parallel(256, func(i int) {
		sku := fmt.Sprintf("sku-%d", i%8)
		rec := httptest.NewRecorder()
		stack.API.ServeHTTP(rec, httptest.NewRequest("GET", "/skus/"+sku, nil))
		var got struct {
			SKU   string `json:"skuId"`
			Price int    `json:"price"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.SKU != sku || got.Price != 100+i%8 {
			t.Errorf("GET /skus/%s answered %d %s", sku, rec.Code, rec.Body.String())
		}
	})
}

// The stack serves its contract as the OpenAPI document, through the same checked API.
func TestStack_ServesTheOpenAPIDocument(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: "[]"})
	rec := httptest.NewRecorder()
	stack.API.ServeHTTP(rec, httptest.NewRequest("GET", openapi.Path, nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/yaml" || !bytes.Equal(rec.Body.Bytes(), openapi.YAML()) {
		t.Errorf("GET %s: %d %q, %d bytes; want the document", openapi.Path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	if reqs, resps := stack.Contract.Checked(); reqs != 1 || resps != 1 {
		t.Errorf("checked %d requests and %d answers, want 1 and 1", reqs, resps)
	}
}

// A path with an empty, . or .. segment gets the gateway's 404 JSON through the whole
// stack, as from API Gateway: never a redirect (which a client following it would
// turn into the cleaned route) and never an HTML body.
func TestStack_UncleanPathsAreNotFound(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup","delivery":"none","name":"n","price":100,"stock":1}]`})
	for _, tc := range []struct{ method, path string }{
		{"GET", "//skus/cup"}, {"GET", "/./skus/cup"}, {"GET", "/skus/../skus/cup"}, {"GET", "/skus/cup/."},
		{"POST", "//orders"}, {"POST", "/x/../orders"}, {"POST", "//_local/invoke/reconcile"},
		{"POST", "/admin/skus/cup/./adjustments"}, {"GET", "//openapi.yaml"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, "http://stack.test"+tc.path, strings.NewReader(`{}`))
		stack.API.ServeHTTP(rec, req.WithContext(openapitest.OutsideContract(req.Context(), "an unclean path")))
		if rec.Code != 404 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || rec.Header().Get("Location") != "" {
			t.Errorf("%s %s: %d %q Location %q: %s; want 404 JSON", tc.method, tc.path, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Location"), rec.Body.String())
		}
	}
}
