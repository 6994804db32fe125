package admitter_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// startSale sets sku's saleStartsAt to start through the admin API, and moves the
// clock past every instance's copy of the SKU record (CatalogTTL).
func startSale(t *testing.T, s *stacktest.Stack, sku string, start time.Time) {
	t.Helper()
	body := `{"saleStartsAt":"` + start.UTC().Format(time.RFC3339Nano) + `"}`
	if code, out := s.Call(t, "PATCH", "/admin/skus/"+sku, "", nil, body); code != http.StatusOK {
		t.Fatalf("PATCH %s: %d %v", body, code, out)
	}
	s.Clock.Advance(6 * time.Second)
}

// inDrawOrder fails t unless buyers hold positions 1..len(buyers) in the fair draw of
// seed (every buyer arrived in the fair window).
func inDrawOrder(t *testing.T, s *stacktest.Stack, seed inventory.DrawSeed, buyers []*buyer) []*buyer {
	t.Helper()
	byTicket := map[string]*buyer{}
	var tickets []string
	for _, b := range buyers {
		byTicket[b.ticket], tickets = b, append(tickets, b.ticket)
	}
	var line []*buyer
	for i, id := range seed.FairOrder(tickets) {
		b := byTicket[id]
		tk, err := s.Store.TicketOf(context.Background(), b.user, b.ticket)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Position != i+1 {
			t.Fatalf("%s at position %d, the draw's %d", b.user, tk.Position, i+1)
		}
		line = append(line, b)
	}
	return line
}

// Two sales of one SKU, each with a 2 s fair window. The first: 5 units, 6 buyers
// drawn with the first seed at positions 1..6, 5 admitted, 3 of whom order. The SKU
// is put on sale again with a new start: the line document shows the new sale's
// empty line before the admitter has ticked, and the second sale's 4 buyers are
// drawn with the second seed at positions 1..4. The first sale's 2 unused
// admissions still claim the 2 units left for inventory.SaleHandover after the
// frontier was replaced, then no more: 2 of the new buyers are admitted, long
// before those admissions expire. At every tick the unused admissions that can
// still open an order never exceed the units available.
func TestAdmitter_ANewSaleStartsANewLine(t *testing.T) {
	s := stack(t, `[{"skuId":"drop","delivery":"none","name":"drop","price":1000,"stock":5,"shards":1,"queue":true,"fairWindowSeconds":2}]`, time.Hour)
	adm := admitter.New(s.Store, slog.New(slog.DiscardHandler), s.Clock.Now)
	ctx := context.Background()
	start1 := s.Clock.Now().Add(10 * time.Second).Truncate(time.Millisecond)
	startSale(t, s, "drop", start1)
	first := takeTickets(t, s, "drop", "first", 6)
	for admittedThrough(t, s, "drop") == 0 {
		tick(t, s, adm, time.Second)
		if unused, available := unusedAdmissions(t, s, "drop", first), s.Available(t, "drop"); unused > available {
			t.Fatalf("first sale: %d unused admissions, %d available", unused, available)
		}
	}
	seed1, _, err := s.Store.DrawSeedOf(ctx, "drop", start1)
	if err != nil {
		t.Fatal(err)
	}
	line1 := inDrawOrder(t, s, seed1, first)
	if got := admittedThrough(t, s, "drop"); got != 5 {
		t.Fatalf("first sale admitted through %d, want 5", got)
	}
	if n := orderAdmitted(t, s, "drop", 1, line1[:3]); n != 3 {
		t.Fatalf("%d orders in the first sale, want 3", n)
	}
	old, _, err := s.Store.ReadFrontier(ctx, "drop")
	if err != nil {
		t.Fatal(err)
	}

	start2 := s.Clock.Now().Add(10 * time.Second).Truncate(time.Millisecond)
	startSale(t, s, "drop", start2)
	if code, line := readLine(t, s, "drop"); code != http.StatusOK || num(line["placed"]) != 0 || num(line["admittedThrough"]) != 0 {
		t.Fatalf("line document of the new sale before the admitter ticked: %d %v", code, line)
	}
	second := takeTickets(t, s, "drop", "second", 4)
	var admitted []int // admitted in the second sale, each tick
	for len(admitted) < 60 && (len(admitted) == 0 || admitted[len(admitted)-1] == 0) {
		tick(t, s, adm, time.Second)
		f, _, err := s.Store.ReadFrontier(ctx, "drop")
		if err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, f.Admitted())
		unused := unusedAdmissions(t, s, "drop", second)
		if s.Clock.Now().Before(f.Replaced.Add(inventory.SaleHandover)) {
			unused += unusedOf(t, s, old, first) // may still open an order
		}
		if available := s.Available(t, "drop"); unused > available {
			t.Fatalf("second sale, tick %d: %d unused admissions, %d available", len(admitted), unused, available)
		}
	}
	seed2, _, err := s.Store.DrawSeedOf(ctx, "drop", start2)
	if err != nil {
		t.Fatal(err)
	}
	if seed2 == seed1 {
		t.Fatal("the second sale drew with the first sale's seed")
	}
	line2 := inDrawOrder(t, s, seed2, second)
	// The first tick after the change replaces the frontier; the 2 unused
	// admissions of the first sale claim the 2 units left for 30 s, so the ticks
	// of those 30 s (the 31st is past them) admit nobody; then 2.
	want := append(make([]int, 30), 2)
	if !slices.Equal(admitted, want) {
		t.Fatalf("admitted through %v a tick in the second sale, want %v", admitted, want)
	}
	if n := orderAdmitted(t, s, "drop", 1, line2); n != 2 {
		t.Fatalf("%d orders in the second sale, want 2", n)
	}
	if code, line := readLine(t, s, "drop"); code != http.StatusOK || num(line["placed"]) != 4 || num(line["admittedThrough"]) != 2 {
		t.Fatalf("line document of the second sale: %d %v", code, line)
	}
	s.Check(t)
}

// readLine reads sku's line document (GET /skus/{skuId}/line, no identity).
func readLine(t *testing.T, s *stacktest.Stack, sku string) (int, map[string]any) {
	t.Helper()
	return s.Call(t, "GET", "/skus/"+sku+"/line", "", nil, "")
}
