package orders_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// harness is a stack with a createOrder handler over its store (no close-order queue).
type harness struct {
	stack   *stacktest.Stack
	handler handler
}

// do hands req to the handler as API Gateway would.
func (h *harness) do(t testing.TB, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, map[string]any) {
	t.Helper()
	return do(t, h.handler, req)
}

// snapshot is every item of the three tables, by table name.
func (h *harness) snapshot(t testing.TB) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, table := range []string{h.stack.Tables.SKUs, h.stack.Tables.Orders, h.stack.Tables.StockLog} {
		out[table] = h.stack.Scan(t, table)
	}
	return out
}

// shapingHarness is the stack with ORDERS_PER_USER_SKU_PER_MINUTE set to perMinute,
// on a settable clock, with "cup" (1,000 units, 4 shards) and "saucer" (1,000 units).
func shapingHarness(t *testing.T, perMinute int) (*harness, *testkit.Clock) {
	t.Helper()
	stack := stacktest.New(t, stacktest.Options{
		Seed: `[
		{"skuId":"cup","delivery":"none","name":"cup","price":100,"stock":1000,"shards":4},
		{"skuId":"saucer","delivery":"none","name":"saucer","price":100,"stock":1000}]`,
		Stack: local.StackConfig{Environment: func(function string, env map[string]string) {
			if function == "CreateOrderFunction" {
				env["ORDERS_PER_USER_SKU_PER_MINUTE"] = strconv.Itoa(perMinute)
			}
		}},
	})
	return &harness{stack: stack, handler: createOrder(t, stack.Store, nil, slog.New(slog.DiscardHandler))}, stack.Clock
}

// orderReq is a POST /orders event from user for body, with an Idempotency-Key when
// key is not "".
func orderReq(t testing.TB, user, key, body string) events.APIGatewayV2HTTPRequest {
	req := fixture(t, "create-order.json")
	req.RequestContext.Authorizer.JWT.Claims["sub"] = user
	if key != "" {
		req.Headers["idempotency-key"] = key
	}
	req.Body = body
	return req
}

const oneCup = `{"items":[{"skuId":"cup","qty":1}]}`

// available is the SKU's available units summed over its shards.
func (h *harness) available(t testing.TB, sku string) int {
	t.Helper()
	s, err := h.stack.Store.SKU(context.Background(), sku)
	if err != nil {
		t.Fatal(err)
	}
	return s.Available
}

// A user who sends at most 5 requests for a SKU in any 60 seconds is never refused,
// however the requests fall across windows: here one every 12 s for 3 minutes,
// starting mid-window, then 5 at the very end of a window and 5 at the start of the
// next.
func TestShaping_UserWithinTheRateIsNeverRefused(t *testing.T) {
	h, clock := shapingHarness(t, 5)
	clock.Advance(7 * time.Second)
	created := 0
	for i := range 15 {
		if resp, body := h.do(t, orderReq(t, "steady", "", oneCup)); resp.StatusCode == http.StatusCreated {
			created++
		} else {
			t.Errorf("request %d at %v: %d %v", i, clock.Now(), resp.StatusCode, body)
		}
		clock.Advance(12 * time.Second)
	}
	start := clock.Now().Truncate(time.Minute).Add(2 * time.Minute)
	clock.Advance(start.Sub(clock.Now()) - time.Second) // 1 s before a window ends
	for range 5 {
		if resp, _ := h.do(t, orderReq(t, "edge", "", oneCup)); resp.StatusCode == http.StatusCreated {
			created++
		}
	}
	clock.Advance(time.Second)
	for range 5 {
		if resp, _ := h.do(t, orderReq(t, "edge", "", oneCup)); resp.StatusCode == http.StatusCreated {
			created++
		}
	}
	if created != 25 || h.available(t, "cup") != 975 {
		t.Errorf("created %d orders, cup available %d; want 25 and 975", created, h.available(t, "cup"))
	}
	h.stack.Check(t)
}

// 20 requests at once from one user for one SKU, with 5 allowed per minute: exactly 5
// orders, 15 × 429 RATE_LIMITED with Retry-After up to the window's end and nothing
// reserved for them. Other SKUs and other users are not affected, and the next window
// admits the user again.
func TestShaping_FasterIsRefusedBeforeAnyStockIsTouched(t *testing.T) {
	h, clock := shapingHarness(t, 5)
	clock.Advance(45 * time.Second) // 15 s left in the window
	var created, limited, other atomic.Int64
	testkit.Parallel(20, func(int) {
		resp, body := h.do(t, orderReq(t, "eager", "", oneCup))
		switch {
		case resp.StatusCode == http.StatusCreated:
			created.Add(1)
		case resp.StatusCode == http.StatusTooManyRequests && body["code"] == "RATE_LIMITED" && body["skuId"] == "cup" && resp.Headers["Retry-After"] == "15":
			limited.Add(1)
		default:
			other.Add(1)
			t.Errorf("%d %v %v", resp.StatusCode, resp.Headers, body)
		}
	})
	if created.Load() != 5 || limited.Load() != 15 || other.Load() != 0 || h.available(t, "cup") != 995 {
		t.Fatalf("created %d, limited %d, other %d, cup available %d; want 5, 15, 0, 995", created.Load(), limited.Load(), other.Load(), h.available(t, "cup"))
	}
	// A refused request changes no SKU, shard or ledger entry and opens no order.
	before := h.snapshot(t)
	resp, _ := h.do(t, orderReq(t, "eager", "", `{"items":[{"skuId":"saucer","qty":1},{"skuId":"cup","qty":1}]}`))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a cart naming a full SKU: %d, want 429", resp.StatusCode)
	}
	after := h.snapshot(t)
	for _, table := range []string{h.stack.Tables.SKUs, h.stack.Tables.StockLog} {
		if !reflect.DeepEqual(before[table], after[table]) {
			t.Errorf("a refused request changed %s", table)
		}
	}
	if orders := countKind(before[h.stack.Tables.Orders], "ORDER"); orders != 5 || countKind(after[h.stack.Tables.Orders], "ORDER") != 5 {
		t.Errorf("%d orders before the refused request, %d after; want 5", orders, countKind(after[h.stack.Tables.Orders], "ORDER"))
	}
	for _, ok := range []events.APIGatewayV2HTTPRequest{
		orderReq(t, "eager", "", `{"items":[{"skuId":"saucer","qty":1}]}`), // another SKU
		orderReq(t, "calm", "", oneCup),                                    // another user
	} {
		if resp, body := h.do(t, ok); resp.StatusCode != http.StatusCreated {
			t.Errorf("%s: %d %v", ok.Body, resp.StatusCode, body)
		}
	}
	clock.Advance(15 * time.Second)
	if resp, body := h.do(t, orderReq(t, "eager", "", oneCup)); resp.StatusCode != http.StatusCreated {
		t.Errorf("next window: %d %v", resp.StatusCode, body)
	}
	h.stack.Check(t)
}

func countKind(items []map[string]any, kind string) int {
	n := 0
	for _, it := range items {
		if it["kind"] == kind {
			n++
		}
	}
	return n
}

// Copies of one keyed request count once, and a replay is never refused: 20 copies at
// once with 1 request allowed per minute give one order and 19 replays; in a later
// window already full of other requests, a replay of the first key still gets its
// order back.
func TestShaping_IdempotentReplaysAreNeverRefused(t *testing.T) {
	h, clock := shapingHarness(t, 1)
	var created, replayed atomic.Int64
	orderIDs := map[string]bool{}
	var ids = make(chan string, 20)
	testkit.Parallel(20, func(int) {
		resp, body := h.do(t, orderReq(t, "tapper", "tap-1", oneCup))
		switch resp.StatusCode {
		case http.StatusCreated:
			created.Add(1)
		case http.StatusOK:
			replayed.Add(1)
		default:
			t.Errorf("copy: %d %v", resp.StatusCode, body)
		}
		ids <- fmt.Sprint(body["orderId"])
	})
	close(ids)
	for id := range ids {
		orderIDs[id] = true
	}
	if created.Load() != 1 || replayed.Load() != 19 || len(orderIDs) != 1 || h.available(t, "cup") != 999 {
		t.Fatalf("created %d, replayed %d, order ids %v, cup available %d; want 1, 19, one, 999", created.Load(), replayed.Load(), orderIDs, h.available(t, "cup"))
	}
	clock.Advance(time.Minute)
	if resp, _ := h.do(t, orderReq(t, "tapper", "tap-2", oneCup)); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first request of the next window: %d", resp.StatusCode)
	}
	if resp, _ := h.do(t, orderReq(t, "tapper", "tap-3", oneCup)); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second new request of the window: %d, want 429", resp.StatusCode)
	}
	resp, body := h.do(t, orderReq(t, "tapper", "tap-1", oneCup))
	if resp.StatusCode != http.StatusOK || resp.Headers["Idempotent-Replayed"] != "true" || !orderIDs[fmt.Sprint(body["orderId"])] {
		t.Errorf("replay in a full window: %d %v %v, want 200 with the first order", resp.StatusCode, resp.Headers, body)
	}
	if h.available(t, "cup") != 998 {
		t.Errorf("cup available %d, want 998", h.available(t, "cup"))
	}
	h.stack.Check(t)
}

// One write decides the whole cart: a cart naming a full SKU is refused naming that
// SKU, and counts nothing for its other SKUs.
func TestShaping_RefusedCartNamesTheFullSKUAndCountsNothing(t *testing.T) {
	h, _ := shapingHarness(t, 1)
	if resp, _ := h.do(t, orderReq(t, "u", "", `{"items":[{"skuId":"saucer","qty":1}]}`)); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first saucer: %d", resp.StatusCode)
	}
	resp, body := h.do(t, orderReq(t, "u", "", `{"items":[{"skuId":"cup","qty":1},{"skuId":"saucer","qty":1}]}`))
	if resp.StatusCode != http.StatusTooManyRequests || body["skuId"] != "saucer" {
		t.Fatalf("cup and saucer: %d %v, want 429 naming saucer", resp.StatusCode, body)
	}
	if resp, body := h.do(t, orderReq(t, "u", "", oneCup)); resp.StatusCode != http.StatusCreated {
		t.Errorf("cup after the refused cart: %d %v, want 201 (the refusal counted no cup)", resp.StatusCode, body)
	}
}
