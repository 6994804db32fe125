// Package waitlist_test tests the waitlist (the store's entries, holds and pass, the
// reservation's use of a hold, and their routes) through the local stack: the real
// SDK against the embedded DynamoDB.
package waitlist_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/waitlist"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// seed: "tee" has 2 units over 2 shards, no delivery, no per-user limit.
const seed = `[{"skuId":"tee","delivery":"none","name":"tee","price":1000,"stock":2,"shards":2}]`

func order(t *testing.T, s *stacktest.Stack, user string, qty int) (int, map[string]any) {
	t.Helper()
	return s.Call(t, "POST", "/orders", user, nil, fmt.Sprintf(`{"items":[{"skuId":"tee","qty":%d}]}`, qty))
}

// join puts user on tee's waitlist, then lets dynamo.WaitlistLead pass: a hold may
// be granted from then on.
func join(t *testing.T, s *stacktest.Stack, user string) inventory.WaitlistEntry {
	t.Helper()
	e, _, err := s.Store.JoinWaitlist(context.Background(), user, "tee", true)
	if err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(dynamo.WaitlistLead)
	return e
}

func entry(t *testing.T, s *stacktest.Stack, user string) inventory.WaitlistEntry {
	t.Helper()
	e, err := s.Store.WaitlistEntryOf(context.Background(), user, "tee")
	if err != nil {
		t.Fatalf("entry of %s: %v", user, err)
	}
	return e
}

func pass(t *testing.T, s *stacktest.Stack, soldOut bool) inventory.WaitlistPass {
	t.Helper()
	p, err := s.Store.PassWaitlist(context.Background(), "tee", soldOut)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sweep runs closeOrder's schedule (the sweep, then the waitlist's pass) and returns
// what its pass did.
func sweep(t *testing.T, s *stacktest.Stack) waitlist.PassResult {
	t.Helper()
	var res waitlist.PassResult
	s.RunScheduled(t, "closeOrder", &res)
	return res
}

// states lists the buyers' entry states, with the units of a hold.
func states(t *testing.T, s *stacktest.Stack, users ...string) string {
	t.Helper()
	out := ""
	for _, u := range users {
		e := entry(t, s, u)
		out += fmt.Sprintf("%s:%s%d ", u, e.State, e.Units)
	}
	return out
}

// reconciled runs reconcile and the book check: both must find the books clean.
func reconciled(t *testing.T, s *stacktest.Stack) {
	t.Helper()
	var rep struct{ Differences []any }
	s.RunScheduled(t, "reconcile", &rep)
	if len(rep.Differences) != 0 {
		t.Errorf("reconcile: %v", rep.Differences)
	}
	s.Check(t)
}

// 5 buyers wait on a sold-out SKU; 2 units come back (two orders cancelled): the
// first 2 get a hold of 1 unit each, the rest stay WAITING. 8 other buyers ordering
// at once get none of the held units. The first holder orders with the hold; the
// second's runs out and passes to the 3rd. The books and reconcile stay clean.
func TestWaitlist_ReleasedUnitsReachWaitlistedBuyersInOrder(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	var ids []string
	for _, b := range []string{"b1", "b2"} {
		ids = append(ids, s.Order(t, b, `{"items":[{"skuId":"tee","qty":1}]}`))
	}
	users := []string{"w1", "w2", "w3", "w4", "w5"}
	for _, u := range users {
		join(t, s, u)
		s.Clock.Advance(time.Second)
	}
	if p := pass(t, s, false); len(p.Granted) != 0 || p.Waiting != 5 {
		t.Fatalf("pass while sold out: %+v", p)
	}
	for i, id := range ids {
		if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", fmt.Sprintf("b%d", i+1), nil, ""); code != http.StatusOK {
			t.Fatalf("cancel: %d %v", code, out)
		}
	}
	if got := s.Available(t, "tee"); got != 2 {
		t.Fatalf("available after the cancels: %d", got)
	}
	if p := sweep(t, s); p.Holds != 2 || p.Units != 2 || p.Passed != 0 || p.SKUs != 1 {
		t.Fatalf("sweep: %+v", p)
	}
	if got, want := states(t, s, users...), "w1:HELD1 w2:HELD1 w3:WAITING0 w4:WAITING0 w5:WAITING0 "; got != want {
		t.Fatalf("states %q, want %q", got, want)
	}
	if got := s.Available(t, "tee"); got != 0 {
		t.Fatalf("available after the holds: %d", got)
	}
	reconciled(t, s)
	until := s.Clock.Now().Add(inventory.WaitlistHoldSeconds * time.Second).UTC().Format(time.RFC3339)
	if code, out := s.Call(t, "GET", "/skus/tee/waitlist", "w1", nil, ""); code != http.StatusOK || out["status"] != "HELD" ||
		out["quantity"] != float64(1) || out["holdExpiresAt"] != until {
		t.Errorf("GET as w1: %d %v, want HELD 1 until %s", code, out, until)
	}

	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() { codes[i], _ = order(t, s, fmt.Sprintf("other-%d", i), 1) })
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusConflict {
			t.Errorf("other buyer %d: %d, want 409 (no unit but the held ones)", i, c)
		}
	}

	code, out := order(t, s, "w1", 1)
	if code != http.StatusCreated {
		t.Fatalf("w1 orders with the hold: %d %v", code, out)
	}
	if e := entry(t, s, "w1"); e.State != inventory.WaitDone || e.OrderID != out["orderId"] {
		t.Errorf("w1 after the order: %+v", e)
	}
	reconciled(t, s)

	s.Clock.Advance(inventory.WaitlistHoldSeconds * time.Second)
	if p := sweep(t, s); p.Passed != 1 || p.Holds != 1 || p.Units != 1 {
		t.Fatalf("sweep after the hold ran out: %+v", p)
	}
	if got, want := states(t, s, users...), "w1:DONE0 w2:PASSED0 w3:HELD1 w4:WAITING0 w5:WAITING0 "; got != want {
		t.Fatalf("states %q, want %q", got, want)
	}
	if code, _ := order(t, s, "w2", 1); code != http.StatusConflict {
		t.Errorf("w2 ordered after the hold passed: %d", code)
	}
	reconciled(t, s)
}

// N concurrent joins of one buyer make one entry; a second buyer gets another.
func TestJoinWaitlist_ConcurrentRequestsOfOneBuyerMakeOneEntry(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	const n = 16
	fresh := make([]bool, n)
	got := make([]inventory.WaitlistEntry, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			got[i], fresh[i], err = s.Store.JoinWaitlist(context.Background(), "u", "tee", true)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	news := 0
	for i := range n {
		if fresh[i] {
			news++
		}
		if got[i].Ref != got[0].Ref || got[i].State != inventory.WaitWaiting {
			t.Errorf("answer %d: %+v, answer 0: %+v", i, got[i], got[0])
		}
	}
	join(t, s, "v")
	items := 0
	for _, it := range s.Scan(t, s.Tables.Orders) {
		if it["kind"] == "WAIT" {
			items++
		}
	}
	if news != 1 || items != 2 {
		t.Errorf("%d answers new, %d entries; want 1 and 2", news, items)
	}
	if _, _, err := s.Store.JoinWaitlist(context.Background(), "u", "nope", true); err == nil {
		t.Error("joined the waitlist of an unknown SKU")
	}
}

// twoReturned is a stack where b ordered both units of tee, w1 then w2 joined its
// waitlist, a pass found it sold out, and b cancelled: 2 units for the next pass.
func twoReturned(t *testing.T) *stacktest.Stack {
	t.Helper()
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	join(t, s, "w1")
	s.Clock.Advance(time.Second)
	join(t, s, "w2")
	pass(t, s, false)
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	return s
}

// A buyer who leaves while HELD puts the held units back; they go to the next buyer
// at the next pass.
func TestLeaveWaitlist_WhileHeldGivesTheUnitsBack(t *testing.T) {
	s := twoReturned(t)
	if p := pass(t, s, true); p.Units != 2 {
		t.Fatalf("pass: %+v", p)
	}
	if err := s.Store.LeaveWaitlist(context.Background(), "w1", "tee"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store.WaitlistEntryOf(context.Background(), "w1", "tee"); err != inventory.ErrWaitlistNotFound {
		t.Errorf("w1 after leaving: %v", err)
	}
	if got := s.Available(t, "tee"); got != 1 {
		t.Errorf("available after w1 left: %d, want 1", got)
	}
	reconciled(t, s)
	if p := pass(t, s, true); p.Units != 0 || len(p.Granted) != 0 {
		t.Errorf("pass with w2 already held: %+v", p)
	}
}

// A buyer whose hold covers the order needs no admission when the SKU has gone into
// the waiting room since: the held units are theirs alone. A buyer without a hold
// still needs one, and a line larger than the hold too.
func TestOrder_WithAHoldNeedsNoAdmissionForAQueuedSKU(t *testing.T) {
	s := twoReturned(t)
	if p := pass(t, s, true); p.Units != 2 {
		t.Fatalf("pass: %+v", p)
	}
	if code, out := s.Call(t, "PATCH", "/admin/skus/tee", "", nil, `{"queue":true}`); code != http.StatusOK {
		t.Fatalf("queue on: %d %v", code, out)
	}
	s.Clock.Advance(6 * time.Second) // past the SKU record cache
	if code, out := order(t, s, "c", 1); code != http.StatusForbidden || out["code"] != "ADMISSION_REQUIRED" {
		t.Errorf("order without a hold: %d %v, want 403 ADMISSION_REQUIRED", code, out)
	}
	if code, out := order(t, s, "w1", 2); code != http.StatusForbidden || out["code"] != "ADMISSION_REQUIRED" {
		t.Errorf("order of 2 on a hold of 1: %d %v, want 403 ADMISSION_REQUIRED", code, out)
	}
	if code, out := order(t, s, "w1", 1); code != http.StatusCreated {
		t.Errorf("order on the hold: %d %v, want 201", code, out)
	}
	if w1, w2 := entry(t, s, "w1"), entry(t, s, "w2"); w1.State != inventory.WaitDone || w2.State != inventory.WaitHeld {
		t.Errorf("entries: w1 %s, w2 %s, want DONE and HELD", w1.State, w2.State)
	}
	reconciled(t, s)
}

// The routes: POST answers 201 for a new entry and 200 for the caller's own, GET
// reads it (404 WAITLIST_NOT_FOUND for a buyer not on it), DELETE takes it off
// (204, also when there is none); a bad body or an unknown SKU changes nothing.
func TestWaitlistRoutes_JoinReadLeave(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	call := func(want int, method, user, body string) map[string]any {
		t.Helper()
		code, out := s.Call(t, method, "/skus/tee/waitlist", user, nil, body)
		if code != want {
			t.Fatalf("%s as %s %s: %d %v, want %d", method, user, body, code, out, want)
		}
		return out
	}
	before := s.Snapshot(t)
	for _, body := range []string{``, `{}`, `{"subscribed":null}`, `{"subscribed":"yes"}`, `{"subscribed":true,"x":1}`,
		`{"subscribed":true,"subscribed":false}`, `[true]`, `{"subscribed":true} {}`} {
		code, out := s.OutsideContract("bad waitlist body").Call(t, "POST", "/skus/tee/waitlist", "u", nil, body)
		if code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
			t.Errorf("body %q: %d %v, want 400 INVALID_REQUEST", body, code, out)
		}
	}
	if code, out := s.Call(t, "POST", "/skus/nope/waitlist", "u", nil, `{"subscribed":true}`); code != http.StatusNotFound || out["code"] != "SKU_NOT_FOUND" {
		t.Errorf("unknown SKU: %d %v", code, out)
	}
	// A SKU id of 3,000 characters in the path is refused as one in a body is: 400,
	// the id not echoed back.
	long := strings.Repeat("a", 3000)
	for _, method := range []string{"POST", "GET", "DELETE"} {
		code, out := s.OutsideContract("a long SKU id").Call(t, method, "/skus/"+long+"/waitlist", "u", nil, `{"subscribed":true}`)
		if msg, _ := out["message"].(string); code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" || strings.Contains(msg, long[:64]) || out["skuId"] != nil {
			t.Errorf("%s a long SKU id: %d %.300v, want 400 INVALID_REQUEST without the id", method, code, out)
		}
	}
	if s.Snapshot(t) != before {
		t.Error("a refused request changed the tables")
	}
	if out := call(http.StatusNotFound, "GET", "u", ""); out["code"] != "WAITLIST_NOT_FOUND" {
		t.Errorf("GET before joining: %v", out)
	}
	if out := call(http.StatusCreated, "POST", "u", `{"subscribed":true}`); out["status"] != "WAITING" || out["skuId"] != "tee" || out["quantity"] != nil {
		t.Errorf("join: %v", out)
	}
	call(http.StatusOK, "POST", "u", `{"subscribed":false}`)
	if out := call(http.StatusOK, "GET", "u", ""); out["status"] != "WAITING" {
		t.Errorf("GET: %v", out)
	}
	call(http.StatusNotFound, "GET", "v", "")
	call(http.StatusNoContent, "DELETE", "u", "")
	call(http.StatusNoContent, "DELETE", "u", "")
	call(http.StatusNotFound, "GET", "u", "")
}

// Passes racing each other (sweeps overlapping) hold no unit twice: with 2 units
// returned and 5 buyers waiting, 8 passes at once hold exactly 2 units for exactly
// the first 2 buyers, and the books stay clean.
func TestPassWaitlist_ConcurrentPassesHoldNoMoreThanReturned(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	users := []string{"w1", "w2", "w3", "w4", "w5"}
	for _, u := range users {
		join(t, s, u)
		s.Clock.Advance(time.Second)
	}
	pass(t, s, false)
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	var wg sync.WaitGroup
	units := make([]int, 8)
	for i := range units {
		wg.Go(func() {
			p, err := s.Store.PassWaitlist(context.Background(), "tee", true)
			if err != nil {
				t.Error(err)
			}
			units[i] = p.Units
		})
	}
	wg.Wait()
	sum := 0
	for _, u := range units {
		sum += u
	}
	if sum != 2 {
		t.Errorf("the passes held %d units in all (%v), want 2", sum, units)
	}
	if got, want := states(t, s, users...), "w1:HELD1 w2:HELD1 w3:WAITING0 w4:WAITING0 w5:WAITING0 "; got != want {
		t.Errorf("states %q, want %q", got, want)
	}
	reconciled(t, s)
}

// A hold covers an order up to its quantity: with 2 units held (per-user limit 2), an
// order of 1 takes 1 of them and the other goes back on sale at once, for anyone.
func TestOrder_WithAHoldTakesUpToItAndGivesTheRestBack(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"tee","delivery":"none","name":"tee","price":1000,"stock":2,"shards":2,"limitPerUser":2}]`})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	join(t, s, "w1")
	pass(t, s, false)
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	if p := pass(t, s, true); p.Units != 2 || len(p.Granted) != 1 {
		t.Fatalf("pass: %+v", p)
	}
	if code, out := order(t, s, "w1", 1); code != http.StatusCreated {
		t.Fatalf("w1 orders 1 with a hold of 2: %d %v", code, out)
	}
	if e := entry(t, s, "w1"); e.State != inventory.WaitDone {
		t.Errorf("w1 after the order: %+v", e)
	}
	if got := s.Available(t, "tee"); got != 1 {
		t.Errorf("available after the order: %d, want 1", got)
	}
	reconciled(t, s)
	if code, out := order(t, s, "x", 1); code != http.StatusCreated {
		t.Errorf("x orders the unit the hold gave back: %d %v", code, out)
	}
	reconciled(t, s)
}

// The waitlist's message goes out only while its hold stands: sent (once) for a hold
// not run out, nothing for one whose end passed before the message was sent, though
// the pass has not written it PASSED yet and WeChat would deliver it.
func TestWaitlistMessage_NotSentOnceTheHoldRanOut(t *testing.T) {
	s := twoReturned(t)
	if p := sweep(t, s); p.Holds != 2 {
		t.Fatalf("sweep: %+v", p)
	}
	client, err := wxapi.New(wxapi.Config{AppID: local.LocalAppID, AppSecret: local.LocalAppSecret, BaseURL: s.WxAPIServer.URL(), Now: s.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	cfg := notices.Config{WaitlistTemplate: local.LocalWaitlistTemplate, SKUPage: "pages/sku/index?skuId="}
	n := notices.New(s.Store, client, nil, cfg, slog.New(slog.DiscardHandler), s.Clock.Now)
	send := func(user string) {
		t.Helper()
		s.WxAPIServer.Subscribe(user, local.LocalWaitlistTemplate, 2)
		e := entry(t, s, user)
		for range 2 {
			if err := n.Waitlist(context.Background(), wxqueue.Message{Kind: wxqueue.KindWaitlist, WaitlistID: e.ID, HoldRef: e.Ref}); err != nil {
				t.Fatalf("%s's message: %v", user, err)
			}
		}
	}
	send("w1")
	if got := s.WxAPIServer.Messages("w1"); len(got) != 1 || got[0].Data["number2"].Value != "1" {
		t.Errorf("w1, held, got %+v, want one message", got)
	}
	s.Clock.Advance(inventory.WaitlistHoldSeconds * time.Second)
	send("w2")
	if got := s.WxAPIServer.Messages("w2"); len(got) != 0 {
		t.Errorf("w2, whose hold ran out, got %+v", got)
	}
}

// flagged reads tee's record's waitlist flag.
func flagged(t *testing.T, s *stacktest.Stack) bool {
	t.Helper()
	return s.Item(t, s.Tables.SKUs, "tee")["waitlist"] == true
}

// Once tee's waitlist has emptied (w1 ordered with its hold, w2 left) and the last
// hold's end has passed, the sweep clears the SKU's flag: N orders then read no
// waitlist entry (0 GetItems), against N while the flag stood. A join afterwards
// flags the SKU again.
func TestOrder_ReadsNoEntryOnceTheWaitlistEmptied(t *testing.T) {
	var reads atomic.Int64
	s := stacktest.New(t, stacktest.Options{Seed: seed, Stack: local.StackConfig{
		DynamoDBOptions: []func(*dynamodb.Options){stacktest.CountGetItems("wait#", &reads)},
	}})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	join(t, s, "w1")
	join(t, s, "w2")
	pass(t, s, false)
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	if p := sweep(t, s); p.Holds != 2 {
		t.Fatalf("sweep: %+v", p)
	}
	if code, out := order(t, s, "w1", 1); code != http.StatusCreated {
		t.Fatalf("w1 orders with the hold: %d %v", code, out)
	}
	if err := s.Store.LeaveWaitlist(context.Background(), "w2", "tee"); err != nil {
		t.Fatal(err)
	}
	const n = 6
	orders := func() int64 {
		t.Helper()
		before := reads.Load()
		for i := range n {
			if code, out := order(t, s, fmt.Sprintf("o%d", i), 1); code != http.StatusCreated && code != http.StatusConflict {
				t.Fatalf("order %d: %d %v", i, code, out)
			}
		}
		return reads.Load() - before
	}
	sweep(t, s) // the line is empty, but the last hold has not ended: the flag stays
	if got := orders(); got != n || !flagged(t, s) {
		t.Fatalf("while the holds may stand: %d entry reads for %d orders, flag %v; want %d, true", got, n, flagged(t, s), n)
	}
	s.Clock.Advance(inventory.WaitlistHoldSeconds * time.Second)
	sweep(t, s)
	if flagged(t, s) {
		t.Fatal("the sweep left the flag of an empty waitlist whose holds ended")
	}
	s.Clock.Advance(6 * time.Second) // past createOrder's SKU record cache
	if got := orders(); got != 0 {
		t.Errorf("after the waitlist emptied: %d entry reads for %d orders, want 0", got, n)
	}
	join(t, s, "w3")
	if !flagged(t, s) {
		t.Error("a join after the clear left the SKU unflagged")
	}
	reconciled(t, s)
}

// A join that lands on a SKU whose flag was cleared never makes an order miss its
// hold, though createOrder still plans from the unflagged record it cached a moment
// before. tee sold out, v joined and left, and the sweep cleared the flag; b's
// cancel put 2 units on open sale and x ordered one (createOrder caches tee
// unflagged). w joins (through another instance's store) racing 4 orders of
// another SKU; then a sweep runs every second and w orders as soon as it holds the
// unit left: that order must use the hold (201, entry DONE). A hold is granted
// dynamo.WaitlistLead after the flag at the earliest, when no order plans from the
// unflagged record any more: with no lead, w's order is refused (409) and its hold
// stands unused.
func TestWaitlist_AJoinAfterTheClearNeverLosesAHold(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"tee","delivery":"none","name":"tee","price":1000,"stock":2,"shards":2},
		{"skuId":"mug","delivery":"none","name":"mug","price":1000,"stock":9}]`})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	join(t, s, "v")
	sweep(t, s) // notes tee sold out
	if err := s.Store.LeaveWaitlist(context.Background(), "v", "tee"); err != nil {
		t.Fatal(err)
	}
	sweep(t, s)
	if flagged(t, s) {
		t.Fatal("the flag of an empty waitlist that never held stayed")
	}
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	s.Clock.Advance(6 * time.Second) // past createOrder's SKU record cache
	if code, out := order(t, s, "x", 1); code != http.StatusCreated {
		t.Fatalf("x orders a unit back on open sale: %d %v", code, out)
	}
	other := dynamo.New(s.DB, s.Tables, dynamo.Options{Now: s.Clock.Now}) // another instance's store
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, _, err := other.JoinWaitlist(context.Background(), "w", "tee", true); err != nil {
			t.Error(err)
		}
	})
	for i := range 4 {
		wg.Go(func() { s.Order(t, fmt.Sprintf("o%d", i), `{"items":[{"skuId":"mug","qty":1}]}`) })
	}
	wg.Wait()
	held := 0
	for range 60 { // seconds: twice dynamo.WaitlistLead
		p := sweep(t, s)
		held += p.Holds
		if p.Holds > 0 {
			if code, out := order(t, s, "w", 1); code != http.StatusCreated {
				t.Fatalf("w orders right after its hold: %d %v", code, out)
			}
			break
		}
		s.Clock.Advance(time.Second)
	}
	if e := entry(t, s, "w"); held != 1 || e.State != inventory.WaitDone {
		t.Errorf("%d holds, w's entry %s; want 1 and DONE", held, e.State)
	}
	reconciled(t, s)
}

// waitlistMessages receives what the WeChat queue holds and counts its waitlist
// messages.
func waitlistMessages(t *testing.T, s *stacktest.Stack) int {
	t.Helper()
	out, err := s.SQSClient().ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(s.Queues["WeChatQueue"]), MaxNumberOfMessages: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range out.Messages {
		var msg wxqueue.Message
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Kind == wxqueue.KindWaitlist {
			n++
		}
	}
	return n
}

// With WaitlistTemplateId "off" the sweep's pass queues no message for the hold it
// gives a subscribed buyer (the wechat function would drop it); with a template it
// queues one.
func TestWaitlistPass_QueuesNoMessageWithTheTemplateOff(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		want   int
	}{{map[string]string{"WaitlistTemplateId": "off"}, 0}, {nil, 1}} {
		t.Run(fmt.Sprint(c.params), func(t *testing.T) { // one SQS server at a time: each stack closes with its subtest
			s := stacktest.New(t, stacktest.Options{SQS: true, Seed: seed, Stack: local.StackConfig{Parameters: c.params}})
			id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":1}]}`)
			s.Order(t, "b2", `{"items":[{"skuId":"tee","qty":1}]}`)
			join(t, s, "w")
			sweep(t, s) // notes tee sold out
			if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
				t.Fatalf("cancel: %d %v", code, out)
			}
			if p := sweep(t, s); p.Holds != 1 {
				t.Fatalf("sweep: %+v", p)
			}
			if got := waitlistMessages(t, s); got != c.want {
				t.Errorf("template %v: %d waitlist messages queued, want %d", c.params, got, c.want)
			}
		})
	}
}

// Units that come back after the sell-out but before any sweep has seen the SKU
// sold out go to the waitlist: x's refused order puts tee in the sold-out state, w
// joins, b cancels both units before a sweep runs; the next sweep holds 1 for w
// (not "not sold out yet", the units on open sale).
func TestWaitlist_UnitsBackBeforeTheFirstSweepGoToTheWaitlist(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":2}]}`)
	if code, out := order(t, s, "x", 1); code != http.StatusConflict {
		t.Fatalf("order of a sold-out SKU: %d %v", code, out)
	}
	join(t, s, "w")
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	if p := sweep(t, s); p.Holds != 1 || p.Units != 1 {
		t.Fatalf("sweep after units came back: %+v, want 1 hold of 1", p)
	}
	if got := s.Available(t, "tee"); got != 1 {
		t.Errorf("available after the hold: %d, want 1", got)
	}
	reconciled(t, s)
}

// A held buyer who sends 8 orders at once gets exactly one order on the hold; the 7
// others are refused like any buyer's when nothing is left (409 STOCK_OUT), never 500:
// their transactions fail on the hold's entry and on its UNHOLD ledger entry (one key
// per hold), which is not this request's order existing.
func TestOrder_ConcurrentOrdersOfAHeldBuyerMakeOneOrderAndNo500(t *testing.T) {
	s := twoReturned(t)
	if p := pass(t, s, true); p.Units != 2 {
		t.Fatalf("pass: %+v", p)
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			code, _ := s.Call(t, "POST", "/orders", "w1", nil, `{"items":[{"skuId":"tee","qty":1}]}`)
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusCreated] != 1 || codes[http.StatusConflict] != 7 {
		t.Errorf("answers %v; want 1 × 201 and 7 × 409", codes)
	}
	if e := entry(t, s, "w1"); e.State != inventory.WaitDone {
		t.Errorf("w1 after the orders: %+v", e)
	}
	reconciled(t, s)
}
