// Package admitter_test tests the waiting room's admitter (package admitter) through
// the local stack: tickets taken and orders placed through the HTTP API, the
// admitter ticking on the stack's clock against the embedded DynamoDB.
package admitter_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/inventory"
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

// takeTickets has n buyers take tickets for sku, one a millisecond, in order.
func takeTickets(t *testing.T, s *stacktest.Stack, sku string, n int) []*buyer {
	t.Helper()
	buyers := make([]*buyer, n)
	for i := range buyers {
		b := &buyer{user: fmt.Sprintf("buyer-%03d", i)}
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
	n := 0
	for _, b := range buyers {
		tk, err := s.Store.TicketOf(ctx, b.user, b.ticket)
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
// every tick the unused unexpired admissions, 2 units each, fit in what is
// available; no more units are ever reserved than the stock; the books balance.
func TestAdmitter_NeverAdmitsMoreThanCanBeBought(t *testing.T) {
	const stock, perBuyer = 7, 2
	s := stack(t, fmt.Sprintf(`[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":%d,"shards":1,"limitPerUser":%d,"queue":true}]`, stock, perBuyer), 90*time.Second)
	buyers := takeTickets(t, s, "drop", 12)
	adm := admitter.New(s.Store, slog.New(slog.DiscardHandler), s.Clock.Now)
	orders, cancels := 0, 0
	for round := range 16 { // 30 s a round: admissions last 6 rounds, unpaid holds 3
		tick(t, s, adm, 30*time.Second)
		available := s.Available(t, "drop")
		if unused := unusedAdmissions(t, s, "drop", buyers); unused*perBuyer > available {
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
	// 7 units, 2 a buyer: 3 admitted at first (6 units), who order; buyer 0's
	// cancel returns 2 units, admitted again once the 3 admissions (used or not)
	// expire; each round of unpaid holds running out admits the next 3. The clock
	// and the line fix who is admitted when, so the counts are exact.
	if orders != 9 || cancels != 3 {
		t.Fatalf("%d orders, %d cancelled, want 9 and 3", orders, cancels)
	}
}
