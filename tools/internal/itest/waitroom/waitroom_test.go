// Package waitroom_test tests the waiting room's buyer side (package waitroom, the
// queue settings of package stock, the admission check of package orders and the
// store's tickets and frontiers) through the local stack: the real SDK against the
// embedded DynamoDB.
package waitroom_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// seed: "drop" sells through the waiting room (3 units, one shard, no address
// needed); "mug" does not.
const seed = `[
	{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":3,"shards":1,"queue":true},
	{"skuId":"mug","delivery":"none","name":"mug","price":1000,"stock":3}]`

func newStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	return stacktest.New(t, stacktest.Options{Seed: seed})
}

func num(v any) int { f, _ := v.(float64); return int(f) }

// take takes user's ticket for sku and returns its id.
func take(t *testing.T, s *stacktest.Stack, user, sku string) string {
	t.Helper()
	code, out := s.Call(t, "POST", "/skus/"+sku+"/queue", user, nil, "")
	if code != http.StatusAccepted {
		t.Fatalf("take %s as %s: %d %v", sku, user, code, out)
	}
	return out["ticket"].(string)
}

// admit places ticket at position and writes a frontier of the SKU's current sale
// admitting through through (now), then moves the clock past every instance's
// frontier cache.
func admit(t *testing.T, s *stacktest.Stack, sku, ticket string, position, through int, soldOut bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Store.PlaceTicket(ctx, ticket, position); err != nil {
		t.Fatal(err)
	}
	kept, version, err := s.Store.FrontierOf(ctx, sku)
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.Store.QueueSKUOf(ctx, sku)
	if err != nil {
		t.Fatal(err)
	}
	f := kept.ForSale(q.SaleStartsAt, s.Clock.Now())
	d := inventory.AdmissionDecision{Admit: through - f.Admitted(), SoldOut: soldOut}
	if err := s.Store.AdvanceFrontier(ctx, sku, version, f.Advance(s.Clock.Now(), d)); err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(time.Second)
}

// wantNoAdmission fails t unless an order of one unit of drop as user with token
// (what says which) is 403 ADMISSION_REQUIRED and changes no table.
func wantNoAdmission(t *testing.T, s *stacktest.Stack, user, token, what string) {
	t.Helper()
	before := s.Snapshot(t)
	if code, out := order(t, s, user, "drop", token, ""); code != http.StatusForbidden || out["code"] != "ADMISSION_REQUIRED" {
		t.Errorf("%s: %d %v, want 403 ADMISSION_REQUIRED", what, code, out)
	}
	if s.Snapshot(t) != before {
		t.Errorf("%s changed the tables", what)
	}
}

// order places an order of one unit of sku as user with the admission token (""
// none) and idempotency key (""  none).
func order(t *testing.T, s *stacktest.Stack, user, sku, token, key string) (int, map[string]any) {
	headers := map[string]string{}
	if token != "" {
		headers["Admission-Token"] = token
	}
	if key != "" {
		headers["Idempotency-Key"] = key
	}
	return s.Call(t, "POST", "/orders", user, headers, fmt.Sprintf(`{"items":[{"skuId":%q,"qty":1}]}`, sku))
}

// A SKU's waiting-room settings are taken on create and patch within their bounds,
// shown to the merchant, and queue to buyers; anything else is 400 and changes nothing.
func TestQueueSettings_StoredValidatedAndShown(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: "[]"})
	call := func(want int, method, path, body string) map[string]any {
		t.Helper()
		code, out := s.Call(t, method, path, "", nil, body)
		if code != want {
			t.Fatalf("%s %s %s: %d %v, want %d", method, path, body, code, out, want)
		}
		return out
	}
	out := call(http.StatusCreated, "POST", "/admin/skus", `{"skuId":"q","name":"Q","price":100,"stock":5,"queue":true,"fairWindowSeconds":10,"riskThreshold":2}`)
	if out["queue"] != true || num(out["fairWindowSeconds"]) != 10 || num(out["riskThreshold"]) != 2 {
		t.Fatalf("created: %v", out)
	}
	call(http.StatusOK, "POST", "/admin/skus", `{"skuId":"q","name":"Q","price":100,"stock":5,"queue":true,"fairWindowSeconds":10,"riskThreshold":2}`)
	call(http.StatusCreated, "POST", "/admin/skus", `{"skuId":"plain","name":"P","price":100,"stock":5}`)
	if got := call(http.StatusOK, "GET", "/skus/q", ""); got["queue"] != true {
		t.Errorf("public view of q: %v", got)
	}
	if got := call(http.StatusOK, "GET", "/skus/plain", ""); got["queue"] != false {
		t.Errorf("public view of plain: %v", got)
	}
	before := s.Snapshot(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/admin/skus", `{"skuId":"n","name":"N","price":100,"queue":true,"fairWindowSeconds":301}`},
		{"POST", "/admin/skus", `{"skuId":"n","name":"N","price":100,"queue":true,"fairWindowSeconds":-1}`},
		{"POST", "/admin/skus", `{"skuId":"n","name":"N","price":100,"fairWindowSeconds":10}`},
		{"POST", "/admin/skus", `{"skuId":"n","name":"N","price":100,"riskThreshold":5}`},
		{"POST", "/admin/skus", `{"skuId":"n","name":"N","price":100,"queue":"yes"}`},
		{"POST", "/admin/skus", `{"skuId":"n","name":"N","price":100,"queue":null}`},
		{"PATCH", "/admin/skus/plain", `{"fairWindowSeconds":10}`},
		{"PATCH", "/admin/skus/q", `{"riskThreshold":-1}`},
		{"PATCH", "/admin/skus/q", `{"queue":false,"fairWindowSeconds":5}`},
	} {
		code, out := s.OutsideContract("bad waiting-room settings").Call(t, c.method, c.path, "", nil, c.body)
		if code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
			t.Errorf("%s %s %s: %d %v, want 400 INVALID_REQUEST", c.method, c.path, c.body, code, out)
		}
	}
	if s.Snapshot(t) != before {
		t.Error("a refused request changed the tables")
	}
	call(http.StatusOK, "PATCH", "/admin/skus/q", `{"onSale":false}`) // its sale is on: the queue stays on until it ends
	out = call(http.StatusOK, "PATCH", "/admin/skus/q", `{"queue":false}`)
	if out["queue"] != false || num(out["fairWindowSeconds"]) != 0 || num(out["riskThreshold"]) != 2 {
		t.Errorf("queue off: %v", out)
	}
	call(http.StatusOK, "PATCH", "/admin/skus/plain", `{"queue":true,"fairWindowSeconds":30}`)
	if out := call(http.StatusOK, "GET", "/admin/skus/plain", ""); out["queue"] != true || num(out["fairWindowSeconds"]) != 30 {
		t.Errorf("plain after patch: %v", out)
	}
}

// While a queued SKU's sale is on, a patch that raises what one admission may buy
// (limitPerUser) or turns the queue off is 409 SALE_IN_PROGRESS and changes nothing
// (also together with other fields); lowering the limit goes through, and so does
// the raise once the SKU is off sale or its next sale has not started.
func TestPatchSKU_RefusesRaisingTheLimitOrDroppingTheQueueMidSale(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":9,"limitPerUser":2,"queue":true}]`})
	call := func(want int, body string) map[string]any {
		t.Helper()
		code, out := s.Call(t, "PATCH", "/admin/skus/drop", "", nil, body)
		if code != want {
			t.Fatalf("PATCH %s: %d %v, want %d", body, code, out, want)
		}
		return out
	}
	before := s.Snapshot(t)
	for _, body := range []string{`{"limitPerUser":10}`, `{"limitPerUser":3,"name":"Drop"}`, `{"queue":false}`, `{"queue":false,"onSale":false}`} {
		if out := call(http.StatusConflict, body); out["code"] != "SALE_IN_PROGRESS" || out["skuId"] != "drop" || !strings.Contains(out["message"].(string), "nothing was changed") {
			t.Errorf("PATCH %s: %v, want 409 SALE_IN_PROGRESS naming drop", body, out)
		}
	}
	if s.Snapshot(t) != before {
		t.Error("a refused patch changed the tables")
	}
	if out := call(http.StatusOK, `{"limitPerUser":1}`); num(out["limitPerUser"]) != 1 {
		t.Errorf("lowered: %v", out)
	}
	next := s.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	call(http.StatusOK, `{"onSale":false}`)
	call(http.StatusOK, `{"onSale":true,"saleStartsAt":"`+next+`"}`)
	if out := call(http.StatusOK, `{"limitPerUser":10}`); num(out["limitPerUser"]) != 10 {
		t.Errorf("raised before the next sale: %v", out)
	}
	s.Clock.Advance(time.Hour)
	call(http.StatusConflict, `{"limitPerUser":11}`)
}

// N concurrent requests of one buyer for one SKU make exactly one ticket, and all
// answer it; a later request keeps its first arrival; another buyer gets another. A SKU without a queue or an unknown one
// issues none.
func TestTakeTicket_ConcurrentRequestsOfOneBuyerMakeOneTicket(t *testing.T) {
	s := newStack(t)
	const n = 16
	tickets := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			code, out := s.Call(t, "POST", "/skus/drop/queue", "alice", nil, "")
			codes[i] = code
			tickets[i], _ = out["ticket"].(string)
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != http.StatusAccepted || tickets[i] != tickets[0] || tickets[i] == "" {
			t.Fatalf("request %d: %d %q, want 202 %q; log %v", i, codes[i], tickets[i], tickets[0], s.Log)
		}
	}
	arrived := s.Item(t, s.Tables.Orders, "ticket#"+tickets[0])["arrivedMs"]
	s.Clock.Advance(time.Minute)
	if again := take(t, s, "alice", "drop"); again != tickets[0] {
		t.Errorf("a minute later alice got %s, want %s", again, tickets[0])
	}
	if got := s.Item(t, s.Tables.Orders, "ticket#"+tickets[0])["arrivedMs"]; got != arrived {
		t.Errorf("arrivedMs %v after a second request, want the first arrival %v", got, arrived)
	}
	if bob := take(t, s, "bob", "drop"); bob == tickets[0] {
		t.Error("bob got alice's ticket")
	}
	count := 0
	for _, it := range s.Scan(t, s.Tables.Orders) {
		if strings.HasPrefix(it["pk"].(string), "ticket#") {
			count++
		}
	}
	if count != 2 {
		t.Errorf("%d ticket items, want 2 (alice's and bob's)", count)
	}
	if code, out := s.Call(t, "POST", "/skus/mug/queue", "alice", nil, ""); code != http.StatusConflict || out["code"] != "QUEUE_NOT_ENABLED" {
		t.Errorf("mug: %d %v", code, out)
	}
	if code, out := s.Call(t, "POST", "/skus/nope/queue", "alice", nil, ""); code != http.StatusNotFound || out["code"] != "SKU_NOT_FOUND" {
		t.Errorf("nope: %d %v", code, out)
	}
	// A SKU id of 3,000 characters in the path is refused as one in a body is: 400,
	// the id not echoed back.
	long := strings.Repeat("a", 3000)
	code, out := s.OutsideContract("a long SKU id").Call(t, "POST", "/skus/"+long+"/queue", "alice", nil, "")
	if msg, _ := out["message"].(string); code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" || strings.Contains(msg, long[:64]) || out["skuId"] != nil {
		t.Errorf("a long SKU id: %d %.300v, want 400 INVALID_REQUEST without the id", code, out)
	}
}

// A poll answers WAITING until the ticket is placed and admitted, then ADMITTED with
// an admission, EXPIRED after it; a ticket not admitted when the frontier says sold
// out is SOLD_OUT. Another buyer's ticket and an unknown one are not found.
func TestPoll_FollowsTheFrontier(t *testing.T) {
	s := newStack(t)
	alice, bob := take(t, s, "alice", "drop"), take(t, s, "bob", "drop")
	poll := func(user, ticket string) (int, map[string]any) {
		t.Helper()
		return s.Call(t, "GET", "/queue/"+ticket, user, nil, "")
	}
	if code, out := poll("alice", alice); code != 200 || out["status"] != "WAITING" || out["position"] != nil || num(out["nextPollSeconds"]) < 1 {
		t.Fatalf("before placing: %d %v", code, out)
	}
	for _, c := range []struct{ user, ticket string }{{"bob", alice}, {"alice", strings.Repeat("0", 32)}} {
		if code, out := poll(c.user, c.ticket); code != http.StatusNotFound || out["code"] != "TICKET_NOT_FOUND" {
			t.Errorf("%s polling %s: %d %v", c.user, c.ticket, code, out)
		}
	}
	if code, out := s.OutsideContract("malformed ticket").Call(t, "GET", "/queue/x%23y", "alice", nil, ""); code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
		t.Errorf("malformed ticket: %d %v", code, out)
	}
	if _, err := s.Store.PlaceTicket(context.Background(), bob, 2); err != nil {
		t.Fatal(err)
	}
	admit(t, s, "drop", alice, 1, 1, false)
	code, out := poll("alice", alice)
	if code != 200 || out["status"] != "ADMITTED" || num(out["position"]) != 1 || out["admission"] == nil {
		t.Fatalf("admitted: %d %v", code, out)
	}
	if code, out := poll("bob", bob); code != 200 || out["status"] != "WAITING" || num(out["position"]) != 2 || out["estimatedWaitSeconds"] == nil {
		t.Fatalf("bob waiting: %d %v", code, out)
	}
	admit(t, s, "drop", bob, 2, 1, true) // bob already placed: the frontier only says sold out
	if _, out := poll("bob", bob); out["status"] != "SOLD_OUT" {
		t.Errorf("bob after sell-out: %v", out)
	}
	if _, out := poll("alice", alice); out["status"] != "ADMITTED" {
		t.Errorf("alice after sell-out, admission unexpired: %v", out)
	}
	s.Clock.Advance(inventory.AdmissionSeconds * time.Second)
	if _, out := poll("alice", alice); out["status"] != "EXPIRED" || out["admission"] != nil {
		t.Errorf("alice after the admission: %v", out)
	}
}

// A frontier written before anybody is admitted (a line placed, no steps) reads back,
// and the placed ticket polls as WAITING with its position.
func TestPoll_FrontierWithoutStepsReadsBack(t *testing.T) {
	s := newStack(t)
	alice := take(t, s, "alice", "drop")
	ctx := context.Background()
	if _, err := s.Store.PlaceTicket(ctx, alice, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.AdvanceFrontier(ctx, "drop", 0, inventory.Frontier{Line: inventory.LineState{Placed: 1, Drawn: true}}); err != nil {
		t.Fatal(err)
	}
	f, version, err := s.Store.ReadFrontier(ctx, "drop")
	if err != nil || version != 1 || len(f.Steps) != 0 || f.Line.Placed != 1 {
		t.Fatalf("read back: %+v version %d, %v", f, version, err)
	}
	s.Clock.Advance(time.Second)
	if code, out := s.Call(t, "GET", "/queue/"+alice, "alice", nil, ""); code != 200 || out["status"] != "WAITING" || num(out["position"]) != 1 {
		t.Errorf("poll: %d %v", code, out)
	}
}

// An order of a queued SKU without a valid admission of the caller for it is 403
// ADMISSION_REQUIRED and writes nothing: no token, a forged one, another buyer's,
// another SKU's, an expired one. An order of a SKU without a queue needs none.
func TestOrder_WithoutAdmissionIsRefusedAndReservesNothing(t *testing.T) {
	s := newStack(t)
	alice := take(t, s, "alice", "drop")
	admit(t, s, "drop", alice, 1, 1, false)
	_, out := s.Call(t, "GET", "/queue/"+alice, "alice", nil, "")
	token := out["admission"].(string)
	keys, err := local.LocalAdmissionKeys()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := admission.NewKeys(make([]byte, admission.KeySize), nil)
	claim := inventory.Admission{User: "alice", SKU: "drop", Ticket: alice, Position: 1, Expires: s.Clock.Now().Add(time.Minute)}
	forged, _ := other.Mint(claim)
	otherSKU := claim
	otherSKU.SKU = "mug"
	mugToken, _ := keys.Mint(otherSKU)
	expired := claim
	expired.Expires = s.Clock.Now().Add(-time.Second)
	expiredToken, _ := keys.Mint(expired)

	before := s.Snapshot(t)
	for _, c := range []struct{ name, user, token string }{
		{"no token", "alice", ""}, {"forged", "alice", forged}, {"another buyer's", "bob", token},
		{"another SKU's", "alice", mugToken}, {"expired", "alice", expiredToken}, {"not a JWT", "alice", "x"},
	} {
		code, out := order(t, s, c.user, "drop", c.token, "")
		if code != http.StatusForbidden || out["code"] != "ADMISSION_REQUIRED" || out["skuId"] != "drop" {
			t.Errorf("%s: %d %v, want 403 ADMISSION_REQUIRED", c.name, code, out)
		}
	}
	if s.Snapshot(t) != before {
		t.Error("a refused order changed the tables")
	}
	// The admission claims one unit (drop has no per-user limit): two are refused,
	// and the admission still opens an order of one.
	code, out := s.Call(t, "POST", "/orders", "alice", map[string]string{"Admission-Token": token}, `{"items":[{"skuId":"drop","qty":2}]}`)
	if msg, _ := out["message"].(string); code != http.StatusConflict || out["code"] != "LIMIT_EXCEEDED" || out["skuId"] != "drop" || !strings.Contains(msg, "one admission buys one unit") {
		t.Errorf("two units on one admission: %d %v, want 409 LIMIT_EXCEEDED saying one admission buys one unit", code, out)
	}
	if s.Snapshot(t) != before {
		t.Error("a refused order changed the tables")
	}
	if code, out := order(t, s, "alice", "drop", token, ""); code != http.StatusCreated {
		t.Errorf("one unit on the admission: %d %v", code, out)
	}
	if code, out := order(t, s, "alice", "mug", "", ""); code != http.StatusCreated {
		t.Errorf("mug without a token: %d %v", code, out)
	}
}

// A ticket belongs to one sale: once the SKU is put on sale again with a new start,
// a buyer whose ticket was used (alice) takes a new one, is placed and orders in the
// new sale, while the old ticket answers EXPIRED; an admission of the earlier sale
// still within its 180 s (bob's) opens no order in the new one.
func TestTicket_ANewSaleGivesANewTicket(t *testing.T) {
	s := newStack(t)
	poll := func(user, ticket string) map[string]any {
		t.Helper()
		code, out := s.Call(t, "GET", "/queue/"+ticket, user, nil, "")
		if code != http.StatusOK {
			t.Fatalf("poll %s as %s: %d %v", ticket, user, code, out)
		}
		return out
	}
	alice, bob := take(t, s, "alice", "drop"), take(t, s, "bob", "drop")
	admit(t, s, "drop", alice, 1, 1, false)
	admit(t, s, "drop", bob, 2, 2, false)
	if code, out := order(t, s, "alice", "drop", poll("alice", alice)["admission"].(string), ""); code != http.StatusCreated {
		t.Fatalf("alice's order in the first sale: %d %v", code, out)
	}
	bobToken := poll("bob", bob)["admission"].(string)

	start := s.Clock.Now().Add(2 * time.Second)
	for _, body := range []string{`{"onSale":false}`, `{"onSale":true,"saleStartsAt":"` + start.UTC().Format(time.RFC3339Nano) + `"}`} {
		if code, out := s.Call(t, "PATCH", "/admin/skus/drop", "", nil, body); code != http.StatusOK {
			t.Fatalf("PATCH %s: %d %v", body, code, out)
		}
	}
	s.Clock.Advance(6 * time.Second) // past the sale's start and the SKU record's cache
	again := take(t, s, "alice", "drop")
	if again == alice {
		t.Fatalf("the new sale answered alice's old ticket %s", alice)
	}
	for user, old := range map[string]string{"alice": alice, "bob": bob} {
		if out := poll(user, old); out["status"] != "EXPIRED" || out["admission"] != nil {
			t.Errorf("%s's ticket of the first sale: %v, want EXPIRED without an admission", user, out)
		}
	}
	wantNoAdmission(t, s, "bob", bobToken, "bob's admission of the first sale, unexpired, in the second")
	if out := poll("alice", again); out["status"] != "WAITING" {
		t.Errorf("alice's new ticket: %v, want WAITING", out)
	}
	admit(t, s, "drop", again, 1, 1, false) // the new sale's line starts at 1
	out := poll("alice", again)
	if out["status"] != "ADMITTED" {
		t.Fatalf("alice's new ticket admitted: %v", out)
	}
	if code, out := order(t, s, "alice", "drop", out["admission"].(string), ""); code != http.StatusCreated {
		t.Errorf("alice's order in the new sale: %d %v", code, out)
	}
	if got := s.Available(t, "drop"); got != 1 {
		t.Errorf("available %d, want 1 (one unit per sale to alice)", got)
	}
	s.Check(t)
}

// N concurrent orders with one admission (each its own idempotency key) open exactly
// one order and reserve exactly one unit; the ticket names that order, and the
// winner's key replays it.
func TestOrder_OneAdmissionOpensOneOrder(t *testing.T) {
	s := newStack(t)
	alice := take(t, s, "alice", "drop")
	admit(t, s, "drop", alice, 1, 1, false)
	_, out := s.Call(t, "GET", "/queue/"+alice, "alice", nil, "")
	token := out["admission"].(string)
	const n = 16
	codes, ids := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			code, out := order(t, s, "alice", "drop", token, fmt.Sprintf("key-%d", i))
			codes[i] = code
			ids[i], _ = out["orderId"].(string)
		})
	}
	wg.Wait()
	created, refused, winner := 0, 0, -1
	for i, code := range codes {
		switch code {
		case http.StatusCreated:
			created++
			winner = i
		case http.StatusForbidden:
			refused++
		default:
			t.Errorf("order %d: %d", i, code)
		}
	}
	if created != 1 || refused != n-1 {
		t.Fatalf("%d created, %d refused; want 1 and %d", created, refused, n-1)
	}
	if got := s.Available(t, "drop"); got != 2 {
		t.Errorf("available %d, want 2", got)
	}
	if used := s.Item(t, s.Tables.Orders, "ticket#"+alice)["usedBy"]; used != ids[winner] {
		t.Errorf("ticket usedBy %v, want %s", used, ids[winner])
	}
	code, again := order(t, s, "alice", "drop", token, fmt.Sprintf("key-%d", winner))
	if code != http.StatusOK || again["orderId"] != ids[winner] {
		t.Errorf("replay: %d %v", code, again)
	}
	s.Check(t)
}

// A placed ticket's answer carries a ticket token; polls that send it back in
// Ticket-Token read no ticket (and get no new token): 0 GetItem of a ticket and 0 read units, against 1 and
// 0.5 per poll without it (the frontier and the SKU record come from the instance's
// caches in both). A forged token, or another buyer's, is ignored: the ticket is read
// and the caller gets their own ticket's answer, or 404 for a ticket not theirs. A
// ticket token is no admission.
func TestPoll_TicketTokenSavesTheTicketRead(t *testing.T) {
	var ticketReads atomic.Int64
	model := ddblimits.New(ddblimits.Config{RoundTrip: time.Microsecond})
	s := stacktest.New(t, stacktest.Options{Seed: seed, Stack: local.StackConfig{
		DynamoDBOptions: []func(*dynamodb.Options){stacktest.CountGetItems("ticket#", &ticketReads), model.ClientOptions},
	}})
	alice, bob := take(t, s, "alice", "drop"), take(t, s, "bob", "drop")
	if _, err := s.Store.PlaceTicket(context.Background(), bob, 2); err != nil {
		t.Fatal(err)
	}
	admit(t, s, "drop", alice, 1, 1, false)
	poll := func(user, ticket, token string) (int, map[string]any) {
		t.Helper()
		headers := map[string]string{}
		if token != "" {
			headers["Ticket-Token"] = token
		}
		return s.Call(t, "GET", "/queue/"+ticket, user, headers, "")
	}
	_, out := poll("alice", alice, "")
	aliceToken, _ := out["ticketToken"].(string)
	_, out = poll("bob", bob, "")
	bobToken, _ := out["ticketToken"].(string)
	if aliceToken == "" || bobToken == "" {
		t.Fatalf("placed tickets' answers carry no ticketToken: %v", out)
	}
	other, _ := admission.NewKeys(make([]byte, admission.KeySize), nil)
	forged, _ := other.MintTicket(inventory.Ticket{ID: alice, SKU: "drop", User: "alice", Position: 1}, s.Clock.Now())

	const n = 10
	for _, c := range []struct {
		name, user, ticket, token, status string
		reads                             int64
	}{
		{"no token", "alice", alice, "", "ADMITTED", n},
		{"alice's token", "alice", alice, aliceToken, "ADMITTED", 0},
		{"bob's token", "bob", bob, bobToken, "WAITING", 0},
		{"forged", "alice", alice, forged, "ADMITTED", n},
		{"bob's token on alice's ticket", "alice", alice, bobToken, "ADMITTED", n},
		{"not a JWT", "alice", alice, "x", "ADMITTED", n},
	} {
		reads, units := ticketReads.Load(), model.Stats()["GetItem"].ReadUnits
		for range n {
			code, out := poll(c.user, c.ticket, c.token)
			if code != http.StatusOK || out["status"] != c.status || out["ticket"] != c.ticket {
				t.Fatalf("%s: %d %v, want 200 %s of %s", c.name, code, out, c.status, c.ticket)
			}
			// A new token comes only with a read: one answered from a token does not
			// extend it.
			if _, minted := out["ticketToken"]; minted != (c.reads > 0) {
				t.Fatalf("%s: ticketToken in the answer %v, want %v", c.name, minted, c.reads > 0)
			}
		}
		gotReads, gotUnits := ticketReads.Load()-reads, model.Stats()["GetItem"].ReadUnits-units
		if gotReads != c.reads || gotUnits != float64(c.reads)/2 {
			t.Errorf("%s: %d polls read the ticket %d times, %.1f read units; want %d, %.1f", c.name, n, gotReads, gotUnits, c.reads, float64(c.reads)/2)
		}
	}
	if code, out := poll("bob", alice, aliceToken); code != http.StatusNotFound || out["code"] != "TICKET_NOT_FOUND" {
		t.Errorf("bob polling alice's ticket with her token: %d %v", code, out)
	}
	wantNoAdmission(t, s, "alice", aliceToken, "an order with a ticket token as its admission")
}
