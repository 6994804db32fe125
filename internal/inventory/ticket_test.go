package inventory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestTicketID_OnePerBuyerSKUAndSale(t *testing.T) {
	a := inventory.TicketID("alice", "drop", saleStart)
	if a != inventory.TicketID("alice", "drop", saleStart) || !inventory.ValidTicketID(a) {
		t.Fatalf("TicketID not stable or not valid: %q", a)
	}
	for _, other := range []string{inventory.TicketID("bob", "drop", saleStart), inventory.TicketID("alice", "mug", saleStart),
		inventory.TicketID("alice\x00drop", "", saleStart), inventory.TicketID("alice", "drop", time.Time{}),
		inventory.TicketID("alice", "drop", saleStart.Add(time.Millisecond))} {
		if other == a {
			t.Errorf("%q collides with alice's ticket for drop", other)
		}
	}
	for _, bad := range []string{"", "x", a[:31], a + "0", "A" + a[1:], "g" + a[1:]} {
		if inventory.ValidTicketID(bad) {
			t.Errorf("ValidTicketID(%q) = true", bad)
		}
	}
}

func TestNextPoll_FollowsTheWaitAndTheFairWindow(t *testing.T) {
	now := saleStart.Add(10 * time.Second)
	for _, tc := range []struct {
		wait      int
		windowEnd time.Time
		want      int
	}{
		{0, time.Time{}, 1},
		{29, time.Time{}, 1},
		{30, time.Time{}, 3},
		{101, time.Time{}, 11},
		{300, time.Time{}, 30},
		{10_000, time.Time{}, 30},
		{0, now.Add(20 * time.Second), 20},
		{0, now.Add(1500 * time.Millisecond), 2},
		{500, now, 30}, // the window just closed
	} {
		if got := inventory.NextPoll(tc.wait, tc.windowEnd, now); got != tc.want {
			t.Errorf("NextPoll(%d, %v) = %d, want %d", tc.wait, tc.windowEnd, got, tc.want)
		}
	}
}

func TestFrontier_ViewOfATicket(t *testing.T) {
	q := inventory.QueueSettings{Queue: true, FairWindowSeconds: 30}
	f := inventory.Frontier{Sale: saleStart}.Advance(saleStart.Add(40*time.Second), inventory.AdmissionDecision{Admit: 100})
	at := saleStart.Add(41 * time.Second)
	for _, tc := range []struct {
		name     string
		ticket   inventory.Ticket
		now      time.Time
		frontier inventory.Frontier
		want     inventory.TicketView
	}{
		{"not placed, window open", inventory.Ticket{}, saleStart.Add(10 * time.Second), inventory.Frontier{},
			inventory.TicketView{Status: inventory.TicketWaiting, NextPollSeconds: 20}},
		{"not placed, window closed", inventory.Ticket{}, at, f,
			inventory.TicketView{Status: inventory.TicketWaiting, NextPollSeconds: 1}},
		{"placed far back", inventory.Ticket{Position: 100 + 200*60}, at, f,
			inventory.TicketView{Status: inventory.TicketWaiting, Position: 12_100, EstimatedWaitSeconds: 60, Estimated: true, NextPollSeconds: 6}},
		// 300 read, 100 a second since the watermark a second before its arrival:
		// 400 ahead, 300 of them not admitted, at 200 a second.
		{"not placed, line drawn", inventory.Ticket{ArrivedAt: at}, at, withLine(f, inventory.LineState{Queued: 300, ArrivalsPerSecond: 100, Watermark: at.Add(-time.Second), Drawn: true}),
			inventory.TicketView{Status: inventory.TicketWaiting, EstimatedWaitSeconds: 2, Estimated: true, NextPollSeconds: 1}},
		{"admitted", inventory.Ticket{Position: 7}, at, f,
			inventory.TicketView{Status: inventory.TicketAdmitted, Position: 7, AdmissionExpires: saleStart.Add((40 + inventory.AdmissionSeconds) * time.Second)}},
		{"expired", inventory.Ticket{Position: 7}, saleStart.Add((40 + inventory.AdmissionSeconds) * time.Second), f,
			inventory.TicketView{Status: inventory.TicketExpired, Position: 7}},
		{"sold out", inventory.Ticket{Position: 101}, at, inventory.Frontier{Steps: f.Steps, SoldOut: true, Sale: saleStart},
			inventory.TicketView{Status: inventory.TicketSoldOut, Position: 101}},
	} {
		tc.ticket.ID = inventory.TicketID(tc.ticket.User, tc.ticket.SKU, saleStart) // a ticket of this sale
		if got := tc.frontier.View(tc.ticket, q, saleStart, 200, tc.now); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func withLine(f inventory.Frontier, l inventory.LineState) inventory.Frontier {
	f.Line = l
	return f
}

func TestAdmission_AdmitsItsUserAndSKUInItsSaleUntilItExpires(t *testing.T) {
	a := inventory.Admission{User: "alice", SKU: "drop", Ticket: inventory.TicketID("alice", "drop", saleStart), Position: 1, Expires: saleStart.Add(time.Minute)}
	if !a.Admits("alice", "drop", saleStart, saleStart) {
		t.Error("alice refused")
	}
	next := saleStart.Add(time.Hour)
	for _, c := range []struct {
		user, sku string
		start, at time.Time
	}{{"bob", "drop", saleStart, saleStart}, {"alice", "mug", saleStart, saleStart}, {"alice", "drop", saleStart, a.Expires},
		{"alice", "drop", next, saleStart}, {"alice", "drop", time.Time{}, saleStart}} {
		if a.Admits(c.user, c.sku, c.start, c.at) {
			t.Errorf("admits %s for %s's sale at %v at %v", c.user, c.sku, c.start, c.at)
		}
	}
}

// A ticket of an earlier sale of its SKU answers EXPIRED, whatever its position and
// the frontier say; one of the sale answers as the frontier says.
func TestView_ATicketOfAnotherSaleIsExpired(t *testing.T) {
	now := saleStart.Add(time.Minute)
	for _, start := range []time.Time{{}, saleStart} {
		f := inventory.Frontier{Sale: start}.Advance(now, inventory.AdmissionDecision{Admit: 5})
		t1 := inventory.Ticket{ID: inventory.TicketID("alice", "drop", start), SKU: "drop", User: "alice", Position: 1}
		if v := f.View(t1, inventory.QueueSettings{Queue: true}, start, 100, now); v.Status != inventory.TicketAdmitted {
			t.Errorf("ticket of the sale at %v: %v, want ADMITTED", start, v.Status)
		}
		for _, other := range []time.Time{{}, saleStart, saleStart.Add(time.Hour)} {
			if other.Equal(start) {
				continue
			}
			if v := f.View(t1, inventory.QueueSettings{Queue: true}, other, 100, now); v.Status != inventory.TicketExpired {
				t.Errorf("ticket of the sale at %v polled in the sale at %v: %v, want EXPIRED", start, other, v.Status)
			}
		}
	}
}

func TestSKUPatch_QueueSettingsAppliedAndChecked(t *testing.T) {
	yes, no, ten, five, bad := true, false, 10, 5, 301
	cur := inventory.QueueSettings{Queue: true, FairWindowSeconds: 30, RiskThreshold: 2}
	for _, tc := range []struct {
		name    string
		p       inventory.SKUPatch
		want    inventory.QueueSettings
		invalid bool
	}{
		{"window", inventory.SKUPatch{FairWindowSeconds: &ten}, inventory.QueueSettings{Queue: true, FairWindowSeconds: 10, RiskThreshold: 2}, false},
		{"queue off clears the window", inventory.SKUPatch{Queue: &no}, inventory.QueueSettings{RiskThreshold: 2}, false},
		{"queue off with a window", inventory.SKUPatch{Queue: &no, FairWindowSeconds: &ten}, inventory.QueueSettings{}, true},
		{"risk out of bounds", inventory.SKUPatch{RiskThreshold: &five}, inventory.QueueSettings{}, true},
		{"window out of bounds", inventory.SKUPatch{Queue: &yes, FairWindowSeconds: &bad}, inventory.QueueSettings{}, true},
	} {
		got, err := tc.p.ApplyQueue(cur)
		if tc.invalid != errors.Is(err, inventory.ErrInvalidRequest) || !tc.invalid && got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v (invalid %t)", tc.name, got, err, tc.want, tc.invalid)
		}
		if tc.invalid && tc.name != "queue off with a window" && !errors.Is(tc.p.Validate(), inventory.ErrInvalidRequest) {
			t.Errorf("%s: Validate let it through", tc.name)
		}
	}
	if err := (inventory.SKUPatch{RiskThreshold: new(0)}).Validate(); err != nil {
		t.Errorf("a patch of riskThreshold alone: %v", err)
	}
	sku := inventory.NewSKU{ID: "x", Name: "x", Price: 1, Shards: 1, Delivery: inventory.DeliveryNone, Queue: inventory.QueueSettings{FairWindowSeconds: 10}}
	if !errors.Is(sku.Validate(), inventory.ErrInvalidRequest) {
		t.Error("a new SKU with a fair window and no queue was taken")
	}
}

// A frontier of the last sale, which the admitter has not replaced yet, admits
// nobody of the new sale: a new ticket placed at a position the old frontier had
// admitted waits, and one not placed has no estimate from the old line.
func TestView_AFrontierOfTheLastSaleAdmitsNobodyOfTheNext(t *testing.T) {
	now := saleStart.Add(time.Hour)
	old := inventory.Frontier{Sale: saleStart, Line: inventory.LineState{Placed: 9, Queued: 9, Drawn: true, Watermark: now}}.
		Advance(now.Add(-time.Minute), inventory.AdmissionDecision{Admit: 5})
	next := saleStart.Add(30 * time.Minute)
	placed := inventory.Ticket{ID: inventory.TicketID("alice", "drop", next), SKU: "drop", User: "alice", Position: 3, ArrivedAt: now}
	if v := old.View(placed, inventory.QueueSettings{Queue: true}, next, 100, now); v.Status != inventory.TicketWaiting || v.EstimatedWaitSeconds != 1 {
		t.Errorf("placed ticket of the new sale: %+v, want WAITING, 1 s", v)
	}
	placed.Position = 0
	if v := old.View(placed, inventory.QueueSettings{Queue: true}, next, 100, now); v.Status != inventory.TicketWaiting || v.Estimated {
		t.Errorf("unplaced ticket of the new sale: %+v, want WAITING without an estimate", v)
	}
}

// A ticket of another sale than the SKU record's is EXPIRED only when the record was
// read strongly consistent more than SaleClockSkew after the ticket arrived; from a
// record that may be behind (cached, eventually consistent, read too close to the
// arrival), and for a ticket without its arrival (a ticket token's), it is WAITING,
// poll again in 1 s. A ticket of the record's sale answers as the frontier says.
func TestQueueSKUView_AnotherSaleIsExpiredOnlyOnARecordReadAfterTheTicket(t *testing.T) {
	next := saleStart.Add(time.Hour) // the new sale
	arrived := next.Add(time.Second)
	now := arrived.Add(time.Minute)
	ticket := inventory.Ticket{ID: inventory.TicketID("alice", "drop", next), SKU: "drop", User: "alice", ArrivedAt: arrived}
	for _, c := range []struct {
		name     string
		start    time.Time // the record's sale
		known    time.Time
		token    bool // the ticket from a ticket token: no arrival
		want     inventory.TicketStatus
		wantPoll int
	}{
		{"record of the last sale, from the cache", saleStart, time.Time{}, false, inventory.TicketWaiting, 1},
		{"record of the last sale, read before the arrival", saleStart, arrived.Add(-time.Second), false, inventory.TicketWaiting, 1},
		{"record of the last sale, read within the clock skew", saleStart, arrived.Add(inventory.SaleClockSkew), false, inventory.TicketWaiting, 1},
		{"record of another sale, read after the arrival", saleStart, arrived.Add(inventory.SaleClockSkew + time.Millisecond), false, inventory.TicketExpired, 0},
		{"record of another sale, read now, ticket token", saleStart, now, true, inventory.TicketWaiting, 1},
		{"record of the ticket's sale, from the cache", next, time.Time{}, false, inventory.TicketWaiting, 1},
	} {
		tk := ticket
		if c.token {
			tk.ArrivedAt = time.Time{}
		}
		q := inventory.QueueSKU{Queue: inventory.QueueSettings{Queue: true}, SaleStartsAt: c.start, Shards: 1, Known: c.known}
		v := q.View(inventory.Frontier{}, tk, now)
		if v.Status != c.want || v.NextPollSeconds != c.wantPoll {
			t.Errorf("%s: %s, next poll %d s; want %s, %d s", c.name, v.Status, v.NextPollSeconds, c.want, c.wantPoll)
		}
	}
}

// An admission of another sale than the record's is told apart from one refused for
// its user, SKU or expiry: only the first is worth reading the record again for.
func TestAdmission_OtherSale(t *testing.T) {
	next := saleStart.Add(time.Hour)
	a := inventory.Admission{User: "alice", SKU: "drop", Ticket: inventory.TicketID("alice", "drop", next), Position: 1, Expires: next.Add(time.Minute)}
	if a.OtherSale("alice", "drop", next, next) {
		t.Error("an admission of the record's sale is of another sale")
	}
	if !a.OtherSale("alice", "drop", saleStart, next) || !a.OtherSale("alice", "drop", time.Time{}, next) {
		t.Error("an admission of the new sale, on a record of the last, is not of another sale")
	}
	for _, c := range []struct {
		user, sku string
		at        time.Time
	}{{"bob", "drop", next}, {"alice", "mug", next}, {"alice", "drop", a.Expires}} {
		if a.OtherSale(c.user, c.sku, saleStart, c.at) {
			t.Errorf("%s, %s at %v: of another sale, want refused for itself", c.user, c.sku, c.at)
		}
	}
}
