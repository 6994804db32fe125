// Package admitter_test tests the waiting room's admitter (package admitter) through
// the local stack: tickets taken and orders placed through the HTTP API, the
// admitter ticking on the stack's clock against the embedded DynamoDB.
package admitter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

func num(v any) int { f, _ := v.(float64); return int(f) }

// stack starts a stack with seed whose unpaid orders are released after
// paymentTimeout.
func stack(t *testing.T, seed string, paymentTimeout time.Duration) *stacktest.Stack {
	t.Helper()
	return stacktest.New(t, stacktest.Options{Seed: seed, Stack: local.StackConfig{PaymentTimeout: paymentTimeout}})
}

// buyer is one buyer of the sale and what happened to them.
type buyer struct {
	user, ticket string
	order        string // the order their admission opened
	cancelled    bool
}

// takeTickets has n buyers, named prefix and a number, take tickets for sku, one a
// millisecond, in order.
func takeTickets(t *testing.T, s *stacktest.Stack, sku, prefix string, n int) []*buyer {
	t.Helper()
	buyers := make([]*buyer, n)
	for i := range buyers {
		b := &buyer{user: fmt.Sprintf("%s-%03d", prefix, i)}
		code, out := s.Call(t, "POST", "/skus/"+sku+"/queue", b.user, nil, "")
		if code != http.StatusAccepted {
			t.Fatalf("take %s: %d %v", b.user, code, out)
		}
		b.ticket = out["ticket"].(string)
		buyers[i] = b
		s.Clock.Advance(time.Millisecond)
	}
	return buyers
}

// tick moves the clock d and ticks adm, failing t on a failed tick.
func tick(t *testing.T, s *stacktest.Stack, adm *admitter.Admitter, d time.Duration) {
	t.Helper()
	s.Clock.Advance(d)
	if n := adm.Tick(context.Background()); n != 0 {
		t.Fatalf("%d failed SKU ticks: %v", n, s.Logged(t, "level", "ERROR"))
	}
}

// unusedAdmissions counts the buyers admitted now whose admission opened no order,
// from the frontier and each ticket as the store keeps them.
func unusedAdmissions(t *testing.T, s *stacktest.Stack, sku string, buyers []*buyer) int {
	t.Helper()
	ctx := context.Background()
	f, _, err := s.Store.ReadFrontier(ctx, sku)
	if err != nil {
		t.Fatal(err)
	}
	return unusedOf(t, s, f, buyers)
}

// unusedOf is unusedAdmissions as the frontier f (perhaps a copy kept of an
// earlier sale's) says.
func unusedOf(t *testing.T, s *stacktest.Stack, f inventory.Frontier, buyers []*buyer) int {
	t.Helper()
	n := 0
	for _, b := range buyers {
		tk, err := s.Store.TicketOf(context.Background(), b.user, b.ticket)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := f.Status(tk.Position, s.Clock.Now()); st == inventory.TicketAdmitted && tk.UsedBy == "" {
			n++
		}
	}
	return n
}

// orderAdmitted has every buyer without an order poll their ticket, all at once,
// and those ADMITTED order qty units with their admission; it returns how many
// orders opened.
func orderAdmitted(t *testing.T, s *stacktest.Stack, sku string, qty int, buyers []*buyer) int {
	t.Helper()
	var opened atomic.Int32
	var wg sync.WaitGroup
	for _, b := range buyers {
		if b.order != "" {
			continue
		}
		wg.Go(func() {
			code, out := s.Call(t, "GET", "/queue/"+b.ticket, b.user, nil, "")
			if code != http.StatusOK || out["status"] != "ADMITTED" {
				return
			}
			token := out["admission"].(string)
			code, out = s.Call(t, "POST", "/orders", b.user, map[string]string{"Admission-Token": token},
				fmt.Sprintf(`{"items":[{"skuId":%q,"qty":%d}]}`, sku, qty))
			if code == http.StatusConflict && out["code"] == "STOCK_OUT" && qty > 1 {
				// Admitted for a remainder under the claim: take the one unit left.
				code, out = s.Call(t, "POST", "/orders", b.user, map[string]string{"Admission-Token": token},
					fmt.Sprintf(`{"items":[{"skuId":%q,"qty":1}]}`, sku))
			}
			if code != http.StatusCreated {
				t.Errorf("%s ordering with an admission: %d %v", b.user, code, out)
				return
			}
			b.order = out["orderId"].(string)
			opened.Add(1)
		})
	}
	wg.Wait()
	return int(opened.Load())
}

// A sale of 7 units, 2 a buyer, to 12 buyers: the admitter ticks on the stack's
// clock while the admitted buyers order concurrently, every third order is
// cancelled, and the unpaid orders' holds expire and are released by the sweep. At
// every tick each unused unexpired admission can still buy a unit, and their
// claims of 2 pass what is available by less than one (a buyer admitted for the
// last unit orders what is left); no more units are ever reserved than the stock; the books balance.
func TestAdmitter_NeverAdmitsMoreThanCanBeBought(t *testing.T) {
	const stock, perBuyer = 7, 2
	s := stack(t, fmt.Sprintf(`[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":%d,"shards":1,"limitPerUser":%d,"queue":true}]`, stock, perBuyer), 90*time.Second)
	buyers := takeTickets(t, s, "drop", "buyer", 12)
	adm := admitter.New(s.Store, slog.New(slog.DiscardHandler), s.Clock.Now)
	orders, cancels := 0, 0
	for round := range 16 { // 30 s a round: admissions last 6 rounds, unpaid holds 3
		tick(t, s, adm, 30*time.Second)
		available := s.Available(t, "drop")
		if unused := unusedAdmissions(t, s, "drop", buyers); unused > available || unused*perBuyer > available+perBuyer-1 {
			t.Fatalf("round %d: %d unused admissions of %d units, %d available", round, unused, perBuyer, available)
		}
		orders += orderAdmitted(t, s, "drop", perBuyer, buyers)
		for i, b := range buyers {
			if b.order != "" && !b.cancelled && i%3 == 0 {
				if code, out := s.Call(t, "POST", "/orders/"+b.order+"/cancel", b.user, nil, ""); code != http.StatusOK {
					t.Fatalf("cancel %s: %d %v", b.order, code, out)
				}
				b.cancelled = true
				cancels++
			}
		}
		if reserved := stock - s.Available(t, "drop"); reserved > stock || reserved < 0 {
			t.Fatalf("round %d: %d units reserved of %d", round, reserved, stock)
		}
		var swept map[string]any
		s.RunScheduled(t, "closeOrder", &swept)
	}
	s.Check(t)
	// 7 units, 2 a buyer: 3 admitted at first (6 units), who order, which gives
	// their claims back; buyer 0's cancel returns 2 units, admitted to the next
	// buyer at the next tick, as are the units of unpaid holds running out. So
	// every buyer orders, and every third cancels. The clock and the line fix who
	// is admitted when, so the counts are exact.
	if orders != 12 || cancels != 4 {
		t.Fatalf("%d orders, %d cancelled, want 12 and 4", orders, cancels)
	}
}

// An admission its order used claims nothing more: 10 units on 2 shards, 2 a
// buyer, buyers ordering 1 unit each, all at once. Every tick admits as many
// buyers as the units left over the unused admissions' claims allow, while the
// first admissions are far from expiring: their orders' claims, cancels and the
// sweep's releases admit the next buyers at once, one for one. At every tick each
// unused admission can still buy a unit (their claims pass what is available by
// less than one claim). Counters of claims used
// are removed once their admissions have long expired.
func TestAdmitter_UsedAdmissionsAdmitTheNextBuyersAtOnce(t *testing.T) {
	const perBuyer = 2
	s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":10,"shards":2,"limitPerUser":2,"queue":true}]`, time.Minute)
	buyers := takeTickets(t, s, "drop", "buyer", 30)
	adm := admitter.New(s.Store, slog.New(slog.DiscardHandler), s.Clock.Now)
	var admitted, orders []int
	step := func(d time.Duration) {
		t.Helper()
		before := admittedThrough(t, s, "drop")
		tick(t, s, adm, d)
		admitted = append(admitted, admittedThrough(t, s, "drop")-before)
		if unused, available := unusedAdmissions(t, s, "drop", buyers), s.Available(t, "drop"); unused > available || unused*perBuyer > available+perBuyer-1 {
			t.Fatalf("tick %d: %d unused admissions of %d units, %d available", len(admitted), unused, perBuyer, available)
		}
		orders = append(orders, orderAdmitted(t, s, "drop", 1, buyers))
	}
	for range 5 {
		step(time.Second)
	}
	for _, b := range buyers[:3] {
		if code, out := s.Call(t, "POST", "/orders/"+b.order+"/cancel", b.user, nil, ""); code != http.StatusOK {
			t.Fatalf("cancel %s: %d %v", b.order, code, out)
		}
	}
	step(time.Second)
	step(time.Second)
	s.Clock.Advance(time.Minute) // every PENDING order's hold runs out
	var swept map[string]any
	s.RunScheduled(t, "closeOrder", &swept)
	step(time.Second)
	// 10 units, 2 claimed a buyer: 5 admitted, whose orders take 1 unit each and
	// give back their claims: 5 left, 2 more admitted (4 claimed), then 1 and 1;
	// then 1 unit left, under one claim: one buyer admitted for it. 3 cancels
	// return 3 units: 1 admitted (2 claimed), then 1 for the 2 left. The sweep
	// releases the orders left: 5 more admitted.
	want := []int{5, 2, 1, 1, 1, 1, 1, 5}
	if !slices.Equal(admitted, want) || !slices.Equal(orders, want) {
		t.Fatalf("admitted %v a tick, orders %v; want %v", admitted, orders, want)
	}
	s.Check(t)
	tick(t, s, adm, 7*time.Minute)
	d, err := s.Store.SKUDetail(context.Background(), "drop")
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range d.PerShard {
		if len(sh.UsedClaims) != 0 {
			t.Errorf("shard %d keeps counters %v of admissions expired long ago", sh.Shard, sh.UsedClaims)
		}
	}
}

// admittedThrough is the last position sku's frontier admitted.
func admittedThrough(t *testing.T, s *stacktest.Stack, sku string) int {
	t.Helper()
	f, _, err := s.Store.ReadFrontier(context.Background(), sku)
	if err != nil {
		t.Fatal(err)
	}
	return f.Admitted()
}

// paid pays order id (price 1000 fen a unit, qty units) through the notify route.
func paid(t *testing.T, s *stacktest.Stack, id string, qty int64) {
	t.Helper()
	amount := 1000 * qty
	tx := wechatpay.Transaction{
		OutTradeNo: id, TransactionID: "4200" + id[:24], TradeType: "JSAPI", TradeState: wechatpay.TradeStateSuccess,
		BankType: "OTHERS", SuccessTime: s.Clock.Now(), Payer: wechatpay.Payer{OpenID: "o-test"},
		Amount: wechatpay.Amount{Total: amount, PayerTotal: amount, Currency: "CNY", PayerCurrency: "CNY"},
	}
	if code, out := s.Pay(t, tx); code != http.StatusNoContent {
		t.Fatalf("pay %s: %d %v", id, code, out)
	}
}

// soldOut reads whether sku's frontier says SOLD_OUT.
func soldOut(t *testing.T, s *stacktest.Stack, sku string) bool {
	t.Helper()
	f, _, err := s.Store.ReadFrontier(context.Background(), sku)
	if err != nil {
		t.Fatal(err)
	}
	return f.SoldOut
}

// SOLD_OUT is written on the first tick that finds nothing available and nothing
// reserved, not before: while a PENDING order holds a unit, the line waits, since
// the unit may come back. The next poll of a waiting buyer answers SOLD_OUT.
func TestAdmitter_SoldOutOnTheTickThatFindsNothingLeft(t *testing.T) {
	s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":2,"shards":1,"queue":true}]`, 0)
	buyers := takeTickets(t, s, "drop", "buyer", 4)
	adm := admitter.New(s.Store, slog.New(slog.DiscardHandler), s.Clock.Now)
	tick(t, s, adm, time.Second)
	if n := orderAdmitted(t, s, "drop", 1, buyers); n != 2 {
		t.Fatalf("%d orders, want 2", n)
	}
	paid(t, s, buyers[0].order, 1)
	tick(t, s, adm, time.Second)
	if soldOut(t, s, "drop") { // buyer 1's unit is reserved, not sold
		t.Fatal("sold out while a PENDING order holds a unit")
	}
	if _, out := s.Call(t, "GET", "/queue/"+buyers[3].ticket, buyers[3].user, nil, ""); out["status"] != "WAITING" || num(out["position"]) != 4 {
		t.Fatalf("buyer 3 before the sell-out: %v", out)
	}
	paid(t, s, buyers[1].order, 1)
	tick(t, s, adm, admitter.Tick)
	if !soldOut(t, s, "drop") {
		t.Fatal("not sold out on the tick that found nothing available nor reserved")
	}
	s.Clock.Advance(500 * time.Millisecond) // the polls' copy of the frontier
	for _, b := range buyers[2:] {
		if _, out := s.Call(t, "GET", "/queue/"+b.ticket, b.user, nil, ""); out["status"] != "SOLD_OUT" {
			t.Errorf("%s after the sell-out: %v", b.user, out)
		}
	}
	if _, out := s.Call(t, "GET", "/queue/"+buyers[0].ticket, buyers[0].user, nil, ""); out["status"] != "ADMITTED" {
		t.Errorf("buyer 0, admitted before the sell-out: %v", out)
	}
}

// counting is a store that counts the frontier writes that succeeded, and, with
// noLease, lets every admitter hold every lease (only the frontier's version then
// keeps them apart).
type counting struct {
	admitter.Store
	noLease  bool
	advanced atomic.Int32
}

func (c *counting) AdvanceFrontier(ctx context.Context, sku string, prev int64, f inventory.Frontier) error {
	err := c.Store.AdvanceFrontier(ctx, sku, prev, f)
	if err == nil {
		c.advanced.Add(1)
	}
	return err
}

func (c *counting) TakeLease(ctx context.Context, sku, holder string, until time.Time) (bool, error) {
	if c.noLease {
		return true, nil
	}
	return c.Store.TakeLease(ctx, sku, holder, until)
}

// Two admitters tick the same SKU at once while buyers keep arriving, and the first
// stops halfway (its lease dropped, or run out): every ticket gets one position,
// the positions are 1..n with none twice and none empty, and every version of the
// frontier was written by one write of one tick. With the lease each tick admits
// once; without it, the frontier's version alone keeps positions unique.
func TestAdmitter_TwoAtOnceGiveEachPositionOnce(t *testing.T) {
	for _, noLease := range []bool{false, true} {
		t.Run(fmt.Sprintf("noLease=%v", noLease), func(t *testing.T) {
			s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":100,"shards":1,"queue":true}]`, 0)
			store := &counting{Store: s.Store, noLease: noLease}
			a := admitter.New(store, slog.New(slog.DiscardHandler), s.Clock.Now)
			b := admitter.New(store, slog.New(slog.DiscardHandler), s.Clock.Now)
			var buyers []*buyer
			for round := range 8 {
				buyers = append(buyers, takeTickets(t, s, "drop", fmt.Sprint("round", round), 5)...)
				s.Clock.Advance(admitter.Tick + admitter.Settle)
				var wg sync.WaitGroup
				for i, adm := range []*admitter.Admitter{a, b} {
					if i == 0 && round >= 4 {
						continue // a has stopped
					}
					wg.Go(func() { adm.Tick(context.Background()) })
				}
				wg.Wait()
				if round == 3 {
					a.Release(context.Background())
					s.Clock.Advance(admitter.LeaseFor)
				}
			}
			s.Clock.Advance(admitter.Tick + admitter.Settle)
			tick(t, s, b, 0)
			positions(t, s, buyers)
			_, version, err := s.Store.ReadFrontier(context.Background(), "drop")
			if err != nil {
				t.Fatal(err)
			}
			if int64(store.advanced.Load()) != version {
				t.Fatalf("%d frontier writes succeeded, version %d", store.advanced.Load(), version)
			}
		})
	}
}

// positions reads each buyer's position, failing t unless they are 1..len(buyers),
// each given once.
func positions(t *testing.T, s *stacktest.Stack, buyers []*buyer) {
	t.Helper()
	seen := map[int]string{}
	for _, bu := range buyers {
		tk, err := s.Store.TicketOf(context.Background(), bu.user, bu.ticket)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := seen[tk.Position]; dup || tk.Position < 1 || tk.Position > len(buyers) {
			t.Fatalf("%s at position %d (also %q): %d tickets", bu.user, tk.Position, other, len(buyers))
		}
		seen[tk.Position] = bu.user
	}
}

// crashing is a store whose ticket writes fail once crashed is set: an admitter on
// it stops, as if its run crashed, between its frontier's write and its tickets'.
type crashing struct {
	admitter.Store
	crashed atomic.Bool
}

func (c *crashing) PlaceTicket(ctx context.Context, id string, position int) (bool, error) {
	if c.crashed.Load() {
		return false, errors.New("the run crashed")
	}
	return c.Store.PlaceTicket(ctx, id, position)
}

// A run reserves positions 6..10 in the frontier (and admits them) and crashes
// before writing them to the tickets; the next run, in another instance, writes
// them to the tickets they were reserved for: every buyer is placed once, all 10
// are admitted, and nothing is left unwritten.
func TestAdmitter_NextRunWritesTheCrashedRunsPositions(t *testing.T) {
	s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":100,"shards":1,"queue":true}]`, 0)
	store := &crashing{Store: s.Store}
	crashed := admitter.New(store, slog.New(slog.DiscardHandler), s.Clock.Now)
	buyers := takeTickets(t, s, "drop", "first", 5)
	tick(t, s, crashed, admitter.Tick+admitter.Settle)
	buyers = append(buyers, takeTickets(t, s, "drop", "second", 5)...)
	store.crashed.Store(true)
	s.Clock.Advance(admitter.Tick + admitter.Settle)
	crashed.Tick(context.Background()) // fails at the ticket writes, then is never heard of again
	if f, _, err := s.Store.ReadFrontier(context.Background(), "drop"); err != nil || f.Line.Placed != 10 || f.Admitted() != 10 {
		t.Fatalf("frontier after the crash: %+v (%v), want 10 positions reserved and admitted", f, err)
	}
	s.Clock.Advance(admitter.LeaseFor)
	next := admitter.New(s.Store, slog.New(slog.DiscardHandler), s.Clock.Now)
	tick(t, s, next, admitter.Tick)
	positions(t, s, buyers)
	s.Clock.Advance(500 * time.Millisecond) // the polls' copy of the frontier
	for _, b := range buyers {
		if _, out := s.Call(t, "GET", "/queue/"+b.ticket, b.user, nil, ""); out["status"] != "ADMITTED" {
			t.Errorf("%s: %v", b.user, out)
		}
	}
	next.Release(context.Background())
	if f, _, err := s.Store.ReadFrontier(context.Background(), "drop"); err != nil || f.Line.Unwritten != 0 || f.Admitted() != 10 {
		t.Fatalf("frontier at the run's end: %+v (%v), want 10 admitted, none unwritten", f, err)
	}
}

// lagging is a store whose index never shows the first entry of ticket hidden (a
// global secondary index has no bound on its lag): it shows the ticket only once
// indexed again.
type lagging struct {
	admitter.Store
	hidden string
	at     time.Time // the hidden entry's arrival
}

func (l *lagging) Arrivals(ctx context.Context, sku string, start, after, through time.Time) ([]inventory.Arrival, error) {
	all, err := l.Store.Arrivals(ctx, sku, start, after, through)
	var shown []inventory.Arrival
	for _, a := range all {
		if a.Ticket != l.hidden || !a.At.Equal(l.at) {
			shown = append(shown, a)
		}
	}
	return shown, err
}

// A ticket whose index entry never shows in time is not placed by the admitter;
// its buyer's poll, once the admitter's watermark is inventory.RescueAfter past its
// arrival with nothing left to place, indexes it again, and the next ticks place it:
// all 5 buyers placed once, the missed one last. Polls before that write nothing.
func TestAdmitter_APollRescuesATicketTheIndexShowedTooLate(t *testing.T) {
	s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":100,"shards":1,"queue":true}]`, 0)
	buyers := takeTickets(t, s, "drop", "buyer", 5)
	missed := buyers[2]
	tk, err := s.Store.TicketOf(context.Background(), missed.user, missed.ticket)
	if err != nil {
		t.Fatal(err)
	}
	adm := admitter.New(&lagging{Store: s.Store, hidden: missed.ticket, at: tk.ArrivedAt}, slog.New(slog.DiscardHandler), s.Clock.Now)
	poll := func() map[string]any {
		s.Clock.Advance(500 * time.Millisecond) // the polls' copy of the frontier
		_, out := s.Call(t, "GET", "/queue/"+missed.ticket, missed.user, nil, "")
		return out
	}
	for range 4 { // the watermark reaches 4 s past the arrivals, short of RescueAfter
		tick(t, s, adm, time.Second)
		if out := poll(); out["position"] != nil || out["status"] != "WAITING" {
			t.Fatalf("missed ticket: %v", out)
		}
	}
	if again, _ := s.Store.TicketOf(context.Background(), missed.user, missed.ticket); !again.ArrivedAt.Equal(tk.ArrivedAt) {
		t.Fatalf("indexed again at %v before RescueAfter", again.ArrivedAt)
	}
	tick(t, s, adm, 2*time.Second)
	poll() // indexes it again
	tick(t, s, adm, admitter.Settle+admitter.Tick)
	positions(t, s, buyers)
	if out := poll(); num(out["position"]) != 5 {
		t.Fatalf("rescued ticket: %v, want position 5", out)
	}
}

// A tick cut short by its context (the run's client hung up, POST
// /_local/invoke/admitter, or its time ran out) fails its SKU, but says so: the error
// is the context's (errors.Is context.Canceled), its text says the request was
// cancelled, never that the store was busy, and it is logged at warn, not error.
func TestAdmitter_ACancelledTickIsNotAStoreFault(t *testing.T) {
	s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":3,"shards":1,"queue":true}]`, 90*time.Second)
	takeTickets(t, s, "drop", "buyer", 2)
	var logged bytes.Buffer
	adm := admitter.New(s.Store, slog.New(slog.NewJSONHandler(&logged, nil)), s.Clock.Now)
	tick(t, s, adm, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Clock.Advance(time.Second)
	if n := adm.Tick(ctx); n == 0 {
		t.Fatalf("a cancelled tick failed no SKU")
	}
	lines := 0
	for line := range bytes.Lines(logged.Bytes()) {
		var l struct{ Level, Msg, Error string }
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		lines++
		if l.Level != "WARN" || !strings.Contains(l.Error, "cancel") || strings.Contains(l.Error, inventory.ErrBusy.Error()) {
			t.Errorf("logged %s %q: %s, want WARN saying the request was cancelled", l.Level, l.Msg, l.Error)
		}
	}
	if lines == 0 {
		t.Error("the failed tick logged nothing")
	}
	_, _, _, err := s.Store.SKUsOnSale(ctx, "")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, inventory.ErrBusy) || strings.Contains(err.Error(), inventory.ErrBusy.Error()) {
		t.Errorf("a read on a cancelled context: %v, want context.Canceled (answered as ErrBusy) saying so", err)
	}
}
