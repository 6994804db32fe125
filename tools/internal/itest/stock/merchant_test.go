package stock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// env is the local stack (embedded DynamoDB and the real SDK) with no SKUs, on a
// settable clock; admin routes are served through its HTTP API as the local operator.
type env struct {
	t     testing.TB
	stack *stacktest.Stack
	clock *testkit.Clock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	stack := stacktest.New(t, stacktest.Options{Seed: "[]"})
	return &env{t: t, stack: stack, clock: stack.Clock}
}

// call sends an admin request and returns the status and the JSON body.
func (e *env) call(method, path, body string) (int, map[string]any) {
	return e.stack.Call(e.t, method, path, "", nil, body)
}

// must sends an admin request and fails t unless it answers want.
func (e *env) must(t testing.TB, want int, method, path, body string) map[string]any {
	t.Helper()
	code, out := e.call(method, path, body)
	if code != want {
		t.Fatalf("%s %s %s: %d %v, want %d", method, path, body, code, out, want)
	}
	return out
}

// buy places an order of qty units of sku as user.
func (e *env) buy(user, sku string, qty int) (int, map[string]any) {
	return e.stack.Call(e.t, "POST", "/orders", user, nil, fmt.Sprintf(`{"items":[{"skuId":%q,"qty":%d}],"address":%s}`, sku, qty, orders.ExampleAddress))
}

// clean fails t unless booktest finds the books balanced and a reconcile run through
// POST /admin/reconcile reports no difference.
func (e *env) clean(t testing.TB) {
	t.Helper()
	e.stack.Check(t)
	rep := e.must(t, http.StatusOK, "POST", "/admin/reconcile", "")
	if diffs, _ := rep["differences"].([]any); len(diffs) != 0 {
		t.Errorf("reconcile differences: %v", diffs)
	}
}

func num(v any) int { f, _ := v.(float64); return int(f) }

// stock returns the SKU's available, reserved and on-hand units from GET /admin/skus/{skuId}.
func (e *env) stock(t testing.TB, sku string) (available, reserved, onHand int) {
	t.Helper()
	d := e.must(t, http.StatusOK, "GET", "/admin/skus/"+sku, "")
	return num(d["available"]), num(d["reserved"]), num(d["onHand"])
}

func TestCreateSKU_IsIdempotentAndRecordsTheOperator(t *testing.T) {
	e := newEnv(t)
	body := `{"skuId":"cup-01","name":"Cup","price":39900,"stock":10,"limitPerUser":2,"shards":2}`
	created := e.must(t, http.StatusCreated, "POST", "/admin/skus", body)
	if created["onHand"] != 10.0 || created["available"] != 10.0 || created["shards"] != 2.0 || created["status"] != "ON_SALE" ||
		created["updatedBy"] != local.LocalOperatorARN || len(created["perShard"].([]any)) != 2 {
		t.Errorf("created: %v", created)
	}
	again := e.must(t, http.StatusOK, "POST", "/admin/skus", body)
	if again["onHand"] != 10.0 {
		t.Errorf("replayed create changed the stock: %v", again)
	}
	code, out := e.call("POST", "/admin/skus", strings.Replace(body, `"price":39900`, `"price":100`, 1))
	if code != http.StatusConflict || out["code"] != "SKU_EXISTS" {
		t.Errorf("another SKU with that id: %d %v, want 409 SKU_EXISTS", code, out)
	}
	page := e.must(t, http.StatusOK, "GET", "/admin/skus/cup-01/ledger", "")
	entries := page["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("ledger: %v, want the one initial ADJUST", entries)
	}
	if en := entries[0].(map[string]any); en["op"] != "ADJUST" || en["qty"] != 10.0 || en["by"] != local.LocalOperatorARN {
		t.Errorf("initial entry: %v", en)
	}
	e.clean(t)
}

func TestPatchSKU_ChangesWhatNewOrdersSeeNotPlacedOnes(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":10,"shards":3}`)
	_, first := e.buy("alice", "cup", 1)
	e.must(t, http.StatusOK, "PATCH", "/admin/skus/cup", `{"price":1500,"name":"Big cup","limitPerUser":3}`)
	_, second := e.buy("bob", "cup", 1)
	if first["amount"] != 1000.0 || second["amount"] != 1500.0 {
		t.Errorf("amounts %v and %v, want 1000 then 1500", first["amount"], second["amount"])
	}
	placed := e.must(t, http.StatusOK, "GET", "/admin/orders/"+first["orderId"].(string), "")
	if placed["amount"] != 1000.0 || placed["userId"] != "alice" {
		t.Errorf("the placed order changed: %v", placed)
	}
	if code, out := e.buy("carol", "cup", 4); code != http.StatusConflict || out["code"] != "LIMIT_EXCEEDED" {
		t.Errorf("over the new limit: %d %v", code, out)
	}
	e.must(t, http.StatusOK, "PATCH", "/admin/skus/cup", `{"onSale":false}`)
	if code, out := e.buy("dave", "cup", 1); code != http.StatusConflict || out["code"] != "SKU_OFF_SALE" {
		t.Errorf("off sale: %d %v", code, out)
	}
	start := e.clock.Now().Add(time.Hour).Format(time.RFC3339)
	sku := e.must(t, http.StatusOK, "PATCH", "/admin/skus/cup", `{"onSale":true,"saleStartsAt":"`+start+`"}`)
	if sku["status"] != "UPCOMING" || sku["saleStartsAt"] != start {
		t.Errorf("on sale later: %v", sku)
	}
	if code, out := e.buy("dave", "cup", 1); code != http.StatusConflict || out["code"] != "SALE_NOT_STARTED" || out["saleStartsAt"] != start {
		t.Errorf("before the start: %d %v", code, out)
	}
	sku = e.must(t, http.StatusOK, "PATCH", "/admin/skus/cup", `{"saleStartsAt":null}`)
	if _, set := sku["saleStartsAt"]; set || sku["status"] != "ON_SALE" {
		t.Errorf("start cleared: %v", sku)
	}
	if code, out := e.buy("dave", "cup", 1); code != http.StatusCreated || out["amount"] != 1500.0 {
		t.Errorf("back on sale: %d %v", code, out)
	}
	e.clean(t)
}

func TestAdjust_AppliesOnceAndNeverWritesOffReservedUnits(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":10,"shards":4}`)
	restock := `{"adjustmentId":"restock-1","delta":7,"reason":"delivery"}`
	first := e.must(t, http.StatusCreated, "POST", "/admin/skus/cup/adjustments", restock)
	e.clock.Advance(time.Millisecond) // the ledger lists entries in time order
	if first["replayed"] != false {
		t.Errorf("first restock: %v", first)
	}
	testkit.Parallel(10, func(int) {
		if code, out := e.call("POST", "/admin/skus/cup/adjustments", restock); code != http.StatusOK || out["replayed"] != true {
			t.Errorf("replayed restock: %d %v", code, out)
		}
	})
	if a, r, h := e.stock(t, "cup"); a != 17 || r != 0 || h != 17 {
		t.Errorf("after the restock ×11: available %d, reserved %d, on-hand %d; want 17, 0, 17", a, r, h)
	}
	if code, out := e.call("POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"restock-1","delta":8,"reason":"delivery"}`); code != http.StatusUnprocessableEntity || out["code"] != "IDEMPOTENCY_KEY_REUSED" ||
		out["message"] != "this idempotency key (the Idempotency-Key header, or the adjustmentId, refundId, shipmentId or aftersaleId) was used with a different request" {
		t.Errorf("same id, other body: %d %v", code, out)
	}
	if code, _ := e.buy("alice", "cup", 5); code != http.StatusCreated {
		t.Fatalf("order: %d", code)
	}
	// 12 available, 5 reserved: a write-off of 13 would take reserved units.
	if code, out := e.call("POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"loss-1","delta":-13,"reason":"broken"}`); code != http.StatusConflict || out["code"] != "STOCK_OUT" {
		t.Errorf("write-off beyond available: %d %v", code, out)
	}
	e.clock.Advance(time.Millisecond)
	e.must(t, http.StatusCreated, "POST", "/admin/skus/cup/adjustments", `{"adjustmentId":"loss-2","delta":-12,"reason":"broken"}`)
	if a, r, h := e.stock(t, "cup"); a != 0 || r != 5 || h != 5 {
		t.Errorf("after writing off 12: available %d, reserved %d, on-hand %d; want 0, 5, 5", a, r, h)
	}
	entries := e.must(t, http.StatusOK, "GET", "/admin/skus/cup/ledger", "")["entries"].([]any)
	var adjusts []string
	for _, raw := range entries {
		en := raw.(map[string]any)
		if en["op"] == "ADJUST" {
			adjusts = append(adjusts, fmt.Sprintf("%s %v %v %v", en["ref"], en["qty"], en["reason"], en["by"] == local.LocalOperatorARN))
		}
	}
	want := []string{"init 10 initial stock true", "restock-1 7 delivery true", "loss-2 -12 broken true"}
	if fmt.Sprint(adjusts) != fmt.Sprint(want) {
		t.Errorf("ADJUST entries %v, want %v", adjusts, want)
	}
	e.clean(t)
}

func TestReshard_GrowsAndShrinksKeepingTheBooks(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":100}`)
	res := e.must(t, http.StatusOK, "PUT", "/admin/skus/cup/shards", `{"shards":8}`)
	if res["shards"] != 8.0 || res["complete"] != true || res["moved"] == 0.0 {
		t.Errorf("1 → 8: %v", res)
	}
	d := e.must(t, http.StatusOK, "GET", "/admin/skus/cup", "")
	for _, raw := range d["perShard"].([]any) {
		if sh := raw.(map[string]any); num(sh["available"]) < 11 || num(sh["available"]) > 14 {
			t.Errorf("shard after 1 → 8: %v, want about 100/8 units", sh)
		}
	}
	e.clean(t)
	// Reserved units on a shard past the target keep it until the order is released.
	_, order := e.buy("alice", "cup", 30)
	res = e.must(t, http.StatusOK, "PUT", "/admin/skus/cup/shards", `{"shards":2}`)
	if a, r, h := e.stock(t, "cup"); a != 70 || r != 30 || h != 100 {
		t.Errorf("after 8 → 2: available %d, reserved %d, on-hand %d; want 70, 30, 100", a, r, h)
	}
	if res["complete"] == true && res["shards"] != 2.0 {
		t.Errorf("8 → 2: %v", res)
	}
	e.stack.Call(t, "POST", "/orders/"+order["orderId"].(string)+"/cancel", "alice", nil, "")
	res = e.must(t, http.StatusOK, "PUT", "/admin/skus/cup/shards", `{"shards":2}`)
	if res["shards"] != 2.0 || res["complete"] != true {
		t.Errorf("8 → 2 after the release: %v", res)
	}
	if d := e.must(t, http.StatusOK, "GET", "/admin/skus/cup", ""); d["shards"] != 2.0 || len(d["perShard"].([]any)) != 2 || d["available"] != 100.0 {
		t.Errorf("after 8 → 2: %v", d)
	}
	e.must(t, http.StatusOK, "PUT", "/admin/skus/cup/shards", `{"shards":2}`) // nothing to do
	e.clean(t)
}

func TestListsAndLedger_PageThroughEverythingOnce(t *testing.T) {
	e := newEnv(t)
	for i := range 57 {
		e.must(t, http.StatusCreated, "POST", "/admin/skus", fmt.Sprintf(`{"skuId":"sku-%02d","name":"n","price":100,"stock":1,"shards":2}`, i))
	}
	seen := map[string]bool{}
	pages := 0
	for after := ""; ; pages++ {
		page := e.must(t, http.StatusOK, "GET", "/admin/skus?after="+after, "")
		for _, raw := range page["skus"].([]any) {
			id := raw.(map[string]any)["skuId"].(string)
			if seen[id] {
				t.Errorf("%s listed twice", id)
			}
			seen[id] = true
		}
		next, _ := page["next"].(string)
		if after = next; after == "" {
			break
		}
	}
	if len(seen) != 57 || pages < 1 {
		t.Errorf("listed %d SKUs in %d pages, want 57 in 2", len(seen), pages+1)
	}
	for i := range 70 {
		e.clock.Advance(time.Millisecond * time.Duration(1-i%2)) // pairs share a millisecond
		e.must(t, http.StatusCreated, "POST", "/admin/skus/sku-00/adjustments", fmt.Sprintf(`{"adjustmentId":"a-%02d","delta":1,"reason":"r"}`, i))
	}
	var refs []string
	for after := ""; ; {
		page := e.must(t, http.StatusOK, "GET", "/admin/skus/sku-00/ledger?after="+after, "")
		for _, raw := range page["entries"].([]any) {
			refs = append(refs, raw.(map[string]any)["ref"].(string))
		}
		next, _ := page["next"].(string)
		if after = next; after == "" {
			break
		}
	}
	if len(refs) != 71 || refs[0] != "init" || refs[70] != "a-69" {
		t.Errorf("ledger pages: %d entries %v, want init then a-00 … a-69", len(refs), refs)
	}
	e.clean(t)
}

func TestOrdersAndReconcile_ShowWhatNeedsAttention(t *testing.T) {
	e := newEnv(t)
	if code, out := e.call("GET", "/admin/reconcile/latest", ""); code != http.StatusNotFound {
		t.Errorf("latest before any run: %d %v", code, out)
	}
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":2}`)
	_, late := e.buy("alice", "cup", 1)
	_, due := e.buy("bob", "cup", 1)
	// alice cancels, carol takes the unit back, then alice's payment arrives: no stock.
	e.stack.Call(t, "POST", "/orders/"+late["orderId"].(string)+"/cancel", "alice", nil, "")
	if code, _ := e.buy("carol", "cup", 1); code != http.StatusCreated {
		t.Fatalf("carol: %d", code)
	}
	if code, _ := e.stack.Call(t, "POST", "/_local/pay/"+late["orderId"].(string), "", nil, ""); code != http.StatusNoContent {
		t.Fatalf("late payment: %d", code)
	}
	// Money owed back is refunded with no person involved: REFUND_PENDING becomes
	// REFUNDING at once.
	list := e.must(t, http.StatusOK, "GET", "/admin/orders?status=REFUNDING", "")["orders"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["orderId"] != late["orderId"] {
		t.Errorf("REFUNDING: %v, want alice's order", list)
	}
	if list := e.must(t, http.StatusOK, "GET", "/admin/orders?status=REFUND_PENDING", "")["orders"].([]any); len(list) != 0 {
		t.Errorf("REFUND_PENDING: %v, want none", list)
	}
	if list := e.must(t, http.StatusOK, "GET", "/admin/orders?status=PENDING_OVERDUE", "")["orders"].([]any); len(list) != 0 {
		t.Errorf("overdue before expiry: %v", list)
	}
	e.clock.Advance(21 * time.Minute) // past expiresAt and reconcile's 5-minute grace
	list = e.must(t, http.StatusOK, "GET", "/admin/orders?status=PENDING_OVERDUE", "")["orders"].([]any)
	if len(list) != 2 || !strings.Contains(fmt.Sprint(list), due["orderId"].(string)) {
		t.Errorf("overdue after expiry: %v, want bob's and carol's", list)
	}
	e.clean(t)
	latest := e.must(t, http.StatusOK, "GET", "/admin/reconcile/latest", "")
	if latest["skusChecked"] != 1.0 || len(latest["overdueOrders"].([]any)) != 2 {
		t.Errorf("latest report: %v", latest)
	}
}

// PENDING_OVERDUE pages past 50 with after, like the other statuses; a cursor the
// route did not give is 400.
func TestOrders_PendingOverduePagesWithAfter(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":100}`)
	want := map[string]bool{}
	for i := range 53 {
		_, o := e.buy(fmt.Sprintf("u%02d", i), "cup", 1)
		want[o["orderId"].(string)] = true
	}
	e.clock.Advance(21 * time.Minute)
	seen := map[string]bool{}
	after, pages := "", 0
	for {
		page := e.must(t, http.StatusOK, "GET", "/admin/orders?status=PENDING_OVERDUE&after="+after, "")
		pages++
		for _, o := range page["orders"].([]any) {
			id := o.(map[string]any)["orderId"].(string)
			if seen[id] || !want[id] {
				t.Errorf("page %d: order %s twice or unknown", pages, id)
			}
			seen[id] = true
		}
		next, _ := page["next"].(string)
		if after = next; after == "" {
			break
		}
	}
	if len(seen) != 53 || pages != 2 {
		t.Errorf("%d overdue orders over %d pages, want 53 over 2", len(seen), pages)
	}
	if code, out := e.call("GET", "/admin/orders?status=PENDING_OVERDUE&after=not*a*cursor", ""); code != http.StatusBadRequest {
		t.Errorf("a bad cursor: %d %v, want 400", code, out)
	}
}

// ?userId= lists one buyer's orders, newest first; with status too, empty or longer
// than a token's sub may be, it is 400.
func TestOrders_ByBuyerNewestFirst(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":10}`)
	_, first := e.buy("alice", "cup", 1)
	e.clock.Advance(time.Second)
	e.buy("bob", "cup", 1)
	_, second := e.buy("alice", "cup", 2)
	list := e.must(t, http.StatusOK, "GET", "/admin/orders?userId=alice", "")["orders"].([]any)
	var got []any
	for _, o := range list {
		got = append(got, o.(map[string]any)["orderId"])
	}
	if want := []any{second["orderId"], first["orderId"]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("alice's orders: %v, want %v", got, want)
	}
	bad := e.stack.OutsideContract("userId with status, empty, or over 255 bytes")
	for _, q := range []string{"userId=alice&status=REFUNDING", "userId=", "userId=" + strings.Repeat("a", 256)} {
		if code, out := bad.Call(t, "GET", "/admin/orders?"+q, "", nil, ""); code != http.StatusBadRequest {
			t.Errorf("?%s: %d %v, want 400", q, code, out)
		}
	}
}

// Without the principal AWS_IAM authorization puts in the event, nothing is served.
func TestAdmin_RefusesRequestsWithoutAnIAMPrincipal(t *testing.T) {
	e := newEnv(t)
	event, _ := json.Marshal(map[string]any{
		"version": "2.0", "routeKey": "POST /admin/skus", "rawPath": "/admin/skus",
		"body":           `{"skuId":"cup","name":"Cup","price":1000,"stock":2}`,
		"requestContext": map[string]any{"routeKey": "POST /admin/skus", "requestId": "r-1"},
	})
	before := booktest.Snapshot(t, e.stack.DB, e.stack.Tables)
	out, err := e.stack.Handlers["AdminFunction"].Invoke(context.Background(), event)
	var resp struct {
		StatusCode int `json:"statusCode"`
	}
	if err != nil || json.Unmarshal(out, &resp) != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no principal: %s %v, want 401", out, err)
	}
	if after := booktest.Snapshot(t, e.stack.DB, e.stack.Tables); after != before {
		t.Error("a refused request changed the tables")
	}
}

func TestRefundOrder_RestocksOnlyWhenAskedAndRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":5}`)
	_, kept := e.buy("alice", "cup", 2)
	_, back := e.buy("bob", "cup", 1)
	_, open := e.buy("carol", "cup", 1)
	for _, o := range []map[string]any{kept, back} {
		if code, _ := e.stack.Call(t, "POST", "/_local/pay/"+o["orderId"].(string), "", nil, ""); code != http.StatusNoContent {
			t.Fatalf("pay: %d", code)
		}
	}
	path := func(o map[string]any) string { return "/admin/orders/" + o["orderId"].(string) + "/refund" }
	before := e.stack.Snapshot(t)
	for _, tc := range []struct {
		name, path, body string
		want             int
		code             string
	}{
		{"no body", path(kept), ``, http.StatusBadRequest, "INVALID_REQUEST"},
		{"no reason", path(kept), `{"restock":true}`, http.StatusBadRequest, "INVALID_REQUEST"},
		{"no restock", path(kept), `{"reason":"x"}`, http.StatusBadRequest, "INVALID_REQUEST"},
		{"blank reason", path(kept), `{"restock":true,"reason":"  "}`, http.StatusBadRequest, "INVALID_REQUEST"},
		{"unknown field", path(kept), `{"restock":true,"reason":"x","amount":1}`, http.StatusBadRequest, "INVALID_REQUEST"},
		{"restock a string", path(kept), `{"restock":"yes","reason":"x"}`, http.StatusBadRequest, "INVALID_REQUEST"},
		{"PENDING order", path(open), `{"restock":true,"reason":"x"}`, http.StatusConflict, "REFUND_NOT_ALLOWED"},
		{"unknown order", "/admin/orders/0123456789abcdef/refund", `{"restock":true,"reason":"x"}`, http.StatusNotFound, "ORDER_NOT_FOUND"},
	} {
		stack := e.stack
		if tc.code == "INVALID_REQUEST" {
			stack = stack.OutsideContract(tc.name)
		}
		if code, out := stack.Call(t, "POST", tc.path, "", nil, tc.body); code != tc.want || out["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, code, out, tc.want, tc.code)
		}
	}
	if e.stack.Snapshot(t) != before {
		t.Fatal("a refused refund changed the tables")
	}
	if out := e.must(t, http.StatusAccepted, "POST", path(kept), `{"restock":false,"reason":"shipped"}`); out["status"] != "REFUNDING" || out["userId"] != "alice" {
		t.Errorf("refund without restock: %v", out)
	}
	e.must(t, http.StatusAccepted, "POST", path(back), `{"restock":true,"reason":"returned unopened"}`)
	e.must(t, http.StatusAccepted, "POST", path(back), `{"restock":true,"reason":"returned unopened"}`) // again: nothing twice
	if available, reserved, onHand := e.stock(t, "cup"); available != 2 || reserved != 1 || onHand != 3 {
		t.Errorf("cup available %d reserved %d on-hand %d, want 2, 1 and 3 (bob's unit back, alice's not)", available, reserved, onHand)
	}
	if o := e.stack.Lookup(t, back["orderId"].(string)); len(o.Refunds) != 1 || o.Refunds[0].By != local.LocalOperatorARN || o.Refunds[0].Reason != "returned unopened" || !o.Refunds[0].Restocked {
		t.Errorf("bob's refunds recorded as %+v", o.Refunds)
	}
	e.clean(t)
}
