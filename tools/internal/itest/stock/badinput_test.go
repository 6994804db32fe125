package stock_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
)

// Every request outside the contract gets its 4xx with the contract's code, and a
// scan of the three tables shows nothing changed.
func TestAdmin_RejectsBadInputAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":10,"shards":2}`)
	e.must(t, http.StatusCreated, "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"adj-1","delta":5,"reason":"r"}`)
	if code, _ := e.buy("alice", "cup", 1); code != http.StatusCreated { // 15 on hand, 14 available, 1 reserved
		t.Fatalf("order: %d", code)
	}
	long := strings.Repeat("x", 65)
	sku := func(fields string) string { return `{"skuId":"new","name":"New","price":100,` + fields + `}` }
	huge := strings.Repeat("a", 3000)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown field", "POST", "/admin/skus", sku(`"colour":"red"`), 400, "INVALID_REQUEST"},
		{"field in another case", "POST", "/admin/skus", `{"SKUID":"new","name":"New","price":100}`, 400, "INVALID_REQUEST"},
		{"field twice", "POST", "/admin/skus", sku(`"price":200`), 400, "INVALID_REQUEST"},
		{"missing name", "POST", "/admin/skus", `{"skuId":"new","price":100}`, 400, "INVALID_REQUEST"},
		{"not JSON", "POST", "/admin/skus", `{"skuId":`, 400, "INVALID_REQUEST"},
		{"array", "POST", "/admin/skus", `[]`, 400, "INVALID_REQUEST"},
		{"null", "POST", "/admin/skus", `null`, 400, "INVALID_REQUEST"},
		{"null stock", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":100,"stock":null}`, 400, "INVALID_REQUEST"},
		{"null start", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":100,"saleStartsAt":null}`, 400, "INVALID_REQUEST"},
		{"trailing data", "POST", "/admin/skus", sku(`"stock":1`) + `{}`, 400, "INVALID_REQUEST"},
		{"negative price", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":-1}`, 400, "INVALID_REQUEST"},
		{"zero price", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":0}`, 400, "INVALID_REQUEST"},
		{"huge price", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":1000000000001}`, 400, "INVALID_REQUEST"},
		{"price beyond int64", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":1e30}`, 400, "INVALID_REQUEST"},
		{"fractional price", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":1.5}`, 400, "INVALID_REQUEST"},
		{"price as text", "POST", "/admin/skus", `{"skuId":"new","name":"New","price":"100"}`, 400, "INVALID_REQUEST"},
		{"negative stock", "POST", "/admin/skus", sku(`"stock":-1`), 400, "INVALID_REQUEST"},
		{"huge stock", "POST", "/admin/skus", sku(`"stock":100000001`), 400, "INVALID_REQUEST"},
		{"negative limit", "POST", "/admin/skus", sku(`"limitPerUser":-1`), 400, "INVALID_REQUEST"},
		{"zero shards", "POST", "/admin/skus", sku(`"shards":0`), 400, "INVALID_REQUEST"},
		{"65 shards", "POST", "/admin/skus", sku(`"shards":65`), 400, "INVALID_REQUEST"},
		{"other currency", "POST", "/admin/skus", sku(`"currency":"USD"`), 400, "INVALID_REQUEST"},
		{"id with #", "POST", "/admin/skus", `{"skuId":"a#b","name":"New","price":100}`, 400, "INVALID_REQUEST"},
		{"empty id", "POST", "/admin/skus", `{"skuId":"","name":"New","price":100}`, 400, "INVALID_REQUEST"},
		{"65-char id", "POST", "/admin/skus", `{"skuId":"` + long + `","name":"New","price":100}`, 400, "INVALID_REQUEST"},
		{"non-ASCII id", "POST", "/admin/skus", `{"skuId":"杯","name":"New","price":100}`, 400, "INVALID_REQUEST"},
		{"empty name", "POST", "/admin/skus", `{"skuId":"new","name":"","price":100}`, 400, "INVALID_REQUEST"},
		{"blank name", "POST", "/admin/skus", `{"skuId":"new","name":"   ","price":100}`, 400, "INVALID_REQUEST"},
		{"name not UTF-8", "POST", "/admin/skus", "{\"skuId\":\"new\",\"name\":\"Cup \xff\",\"price\":100}", 400, "INVALID_REQUEST"},
		{"saleStartsAt before 2000", "POST", "/admin/skus", `{"skuId":"new","name":"n","price":100,"saleStartsAt":"1999-12-31T23:59:59Z"}`, 400, "INVALID_REQUEST"},
		{"201-char name", "POST", "/admin/skus", `{"skuId":"new","name":"` + strings.Repeat("n", 201) + `","price":100}`, 400, "INVALID_REQUEST"},
		{"start unparseable", "POST", "/admin/skus", sku(`"saleStartsAt":"tomorrow"`), 400, "INVALID_REQUEST"},
		{"start with offset", "POST", "/admin/skus", sku(`"saleStartsAt":"2026-11-11T10:00:00+08:00"`), 400, "INVALID_REQUEST"},
		{"start without T", "POST", "/admin/skus", sku(`"saleStartsAt":"2026-11-11 10:00:00Z"`), 400, "INVALID_REQUEST"},
		{"start date only", "POST", "/admin/skus", sku(`"saleStartsAt":"2026-11-11"`), 400, "INVALID_REQUEST"},
		{"start as number", "POST", "/admin/skus", sku(`"saleStartsAt":1762855200`), 400, "INVALID_REQUEST"},
		{"same id, other SKU", "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":999,"stock":10,"shards":2}`, 409, "SKU_EXISTS"},
		{"patch nothing", "PATCH", "/admin/skus/cup", `{}`, 400, "INVALID_REQUEST"},
		{"patch negative price", "PATCH", "/admin/skus/cup", `{"price":-5}`, 400, "INVALID_REQUEST"},
		{"patch null price", "PATCH", "/admin/skus/cup", `{"price":null}`, 400, "INVALID_REQUEST"},
		{"patch empty name", "PATCH", "/admin/skus/cup", `{"name":""}`, 400, "INVALID_REQUEST"},
		{"patch name not UTF-8", "PATCH", "/admin/skus/cup", "{\"name\":\"Cup \xc3\"}", 400, "INVALID_REQUEST"},
		{"patch stock", "PATCH", "/admin/skus/cup", `{"stock":5}`, 400, "INVALID_REQUEST"},
		{"patch on-sale as text", "PATCH", "/admin/skus/cup", `{"onSale":"yes"}`, 400, "INVALID_REQUEST"},
		{"patch start with offset", "PATCH", "/admin/skus/cup", `{"saleStartsAt":"2026-11-11T10:00:00+01:00"}`, 400, "INVALID_REQUEST"},
		{"patch unknown SKU", "PATCH", "/admin/skus/nope", `{"price":5}`, 404, "SKU_NOT_FOUND"},
		{"patch id outside the pattern", "PATCH", "/admin/skus/a%23b", `{"price":5}`, 400, "INVALID_REQUEST"},
		{"adjustment id reused, other delta", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"adj-1","delta":6,"reason":"r"}`, 422, "IDEMPOTENCY_KEY_REUSED"},
		{"adjustment id reused, other reason", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"adj-1","delta":5,"reason":"x"}`, 422, "IDEMPOTENCY_KEY_REUSED"},
		{"write-off above available", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"loss","delta":-15,"reason":"r"}`, 409, "STOCK_OUT"},
		{"zero delta", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a2","delta":0,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"huge delta", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a2","delta":100000001,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"huge write-off", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a2","delta":-100000001,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"fractional delta", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a2","delta":1.5,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"adjustment id with space", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a b","delta":1,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"65-char adjustment id", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"` + long + `","delta":1,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"empty reason", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a2","delta":1,"reason":""}`, 400, "INVALID_REQUEST"},
		{"missing reason", "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"a2","delta":1}`, 400, "INVALID_REQUEST"},
		{"adjust unknown SKU", "POST", "/admin/skus/nope/adjustments", `{"adjustmentId":"a2","delta":1,"reason":"r"}`, 404, "SKU_NOT_FOUND"},
		{"zero shards", "PUT", "/admin/skus/cup/shards", `{"shards":0}`, 400, "INVALID_REQUEST"},
		{"65 shards", "PUT", "/admin/skus/cup/shards", `{"shards":65}`, 400, "INVALID_REQUEST"},
		{"negative shards", "PUT", "/admin/skus/cup/shards", `{"shards":-1}`, 400, "INVALID_REQUEST"},
		{"shards as text", "PUT", "/admin/skus/cup/shards", `{"shards":"4"}`, 400, "INVALID_REQUEST"},
		{"fractional shards", "PUT", "/admin/skus/cup/shards", `{"shards":4.5}`, 400, "INVALID_REQUEST"},
		{"no shards", "PUT", "/admin/skus/cup/shards", `{}`, 400, "INVALID_REQUEST"},
		{"reshard unknown SKU", "PUT", "/admin/skus/nope/shards", `{"shards":4}`, 404, "SKU_NOT_FOUND"},
		{"bad SKU cursor", "GET", "/admin/skus?after=garbage", ``, 400, "INVALID_REQUEST"},
		{"bad ledger cursor", "GET", "/admin/skus/cup/ledger?after=garbage", ``, 400, "INVALID_REQUEST"},
		{"ledger of unknown SKU", "GET", "/admin/skus/nope/ledger", ``, 404, "SKU_NOT_FOUND"},
		{"orders of another status", "GET", "/admin/orders?status=PAID", ``, 400, "INVALID_REQUEST"},
		{"orders without status", "GET", "/admin/orders", ``, 400, "INVALID_REQUEST"},
		{"unknown order", "GET", "/admin/orders/nope00", ``, 404, "ORDER_NOT_FOUND"},
		{"unknown SKU", "GET", "/admin/skus/nope", ``, 404, "SKU_NOT_FOUND"},
		// An id of 3,000 characters in a path is refused as one in a body is, not echoed.
		{"long SKU id to patch", "PATCH", "/admin/skus/" + huge, `{"price":5}`, 400, "INVALID_REQUEST"},
		{"long SKU id to read", "GET", "/admin/skus/" + huge, ``, 400, "INVALID_REQUEST"},
		{"long SKU id to adjust", "POST", "/admin/skus/" + huge + "/adjustments", `{"adjustmentId":"a3","delta":1,"reason":"r"}`, 400, "INVALID_REQUEST"},
		{"long SKU id's ledger", "GET", "/admin/skus/" + huge + "/ledger", ``, 400, "INVALID_REQUEST"},
		{"long order id", "GET", "/admin/orders/" + huge, ``, 400, "INVALID_REQUEST"},
		{"long order id to refund", "POST", "/admin/orders/" + huge + "/refund", `{"restock":true,"reason":"x"}`, 400, "INVALID_REQUEST"},
		{"long out_refund_no", "POST", "/admin/orders/nope00/refunds/" + huge + "/retry", ``, 400, "INVALID_REQUEST"},
		{"long after-sale id", "POST", "/admin/orders/nope00/aftersales/" + huge + "/approve", ``, 400, "INVALID_REQUEST"},
	}
	before := booktest.Snapshot(t, e.stack.DB, e.stack.Tables)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Every INVALID_REQUEST case, and an id outside the pattern, is a request
			// the contract forbids.
			api := e.stack
			if tc.code == "INVALID_REQUEST" || tc.name == "patch id outside the pattern" {
				api = api.OutsideContract(tc.name)
			}
			code, out := api.Call(t, tc.method, tc.path, "", nil, tc.body)
			if code != tc.status || out["code"] != tc.code || out["message"] == "" {
				t.Errorf("%d %.300v, want %d %s", code, out, tc.status, tc.code)
			}
			if msg, _ := out["message"].(string); strings.Contains(msg, huge[:64]) {
				t.Errorf("the answer echoes the id: %.300s", msg)
			}
			if after := booktest.Snapshot(t, e.stack.DB, e.stack.Tables); after != before {
				t.Errorf("the tables changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	e.clean(t)
}
