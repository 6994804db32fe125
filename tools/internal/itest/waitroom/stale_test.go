package waitroom_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// newSaleBehindTheCache puts drop on sale again, starting now, while createOrder's
// instance (the stack's Store) still caches the first sale's record, and returns
// carol's ticket of the new sale, taken through another instance (a store of its
// own, which reads the new start).
func newSaleBehindTheCache(t *testing.T, s *stacktest.Stack) string {
	t.Helper()
	ctx := context.Background()
	alice := take(t, s, "alice", "drop") // createOrder's instance reads drop's record: no start
	if _, err := s.Store.PlaceTicket(ctx, alice, 1); err != nil {
		t.Fatal(err)
	}
	start := s.Clock.Now()
	for _, body := range []string{`{"onSale":false}`, `{"onSale":true,"saleStartsAt":"` + start.UTC().Format(time.RFC3339Nano) + `"}`} {
		if code, out := s.Call(t, "PATCH", "/admin/skus/drop", "", nil, body); code != http.StatusOK {
			t.Fatalf("PATCH %s: %d %v", body, code, out)
		}
	}
	other := dynamo.New(s.DB, s.Tables, dynamo.Options{Now: s.Clock.Now})
	ticket, _, err := other.TakeTicket(ctx, "carol", "drop")
	if err != nil {
		t.Fatal(err)
	}
	if ticket.ID != inventory.TicketID("carol", "drop", start) {
		t.Fatalf("carol's ticket %s is not of the new sale", ticket.ID)
	}
	if q, err := s.Store.QueueSKUOf(ctx, "drop"); err != nil || !q.SaleStartsAt.IsZero() {
		t.Fatalf("createOrder's cached record: %+v, %v; want the first sale's (no start)", q, err)
	}
	return ticket.ID
}

// A ticket of the new sale polled through an instance whose cached SKU record still
// has the last sale's start is WAITING (the record read again), not EXPIRED; the
// instance then has the new start, and the last sale's ticket, polled with its
// ticket token, is EXPIRED (its arrival read, before the record).
func TestPoll_ANewSalesTicketThroughAnInstanceBehindIsNotExpired(t *testing.T) {
	s := newStack(t)
	keys, err := local.LocalAdmissionKeys()
	if err != nil {
		t.Fatal(err)
	}
	alice := inventory.TicketID("alice", "drop", time.Time{})
	aliceToken, err := keys.MintTicket(inventory.Ticket{ID: alice, SKU: "drop", User: "alice", Position: 1}, s.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	ticket := newSaleBehindTheCache(t, s)
	s.Clock.Advance(2 * time.Second) // past the clock skew after alice's arrival, within the cache
	code, out := s.Call(t, "GET", "/queue/"+ticket, "carol", nil, "")
	if code != http.StatusOK || out["status"] != "WAITING" || out["position"] != nil || out["admission"] != nil {
		t.Fatalf("carol's poll: %d %v, want 200 WAITING, no position", code, out)
	}
	if q, err := s.Store.QueueSKUOf(context.Background(), "drop"); err != nil || q.SaleStartsAt.IsZero() {
		t.Errorf("createOrder's record after the poll: %+v, %v; want the new start", q, err)
	}
	code, out = s.Call(t, "GET", "/queue/"+alice, "alice", map[string]string{"Ticket-Token": aliceToken}, "")
	if code != http.StatusOK || out["status"] != "EXPIRED" {
		t.Errorf("alice's ticket of the first sale, with its token: %d %v, want 200 EXPIRED", code, out)
	}
	s.Check(t)
}

// An admission of the new sale, sent through an instance whose cached SKU record
// still has the last sale's start, opens its order (the record read again), not
// 403 ADMISSION_REQUIRED.
func TestOrder_ANewSalesAdmissionThroughAnInstanceBehindIsAdmitted(t *testing.T) {
	s := newStack(t)
	ticket := newSaleBehindTheCache(t, s)
	keys, err := local.LocalAdmissionKeys()
	if err != nil {
		t.Fatal(err)
	}
	token, err := keys.Mint(inventory.Admission{User: "carol", SKU: "drop", Ticket: ticket, Position: 1, Expires: s.Clock.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := order(t, s, "carol", "drop", token, ""); code != http.StatusCreated {
		t.Fatalf("carol's order: %d %v, want 201", code, out)
	}
	if got := s.Available(t, "drop"); got != 2 {
		t.Errorf("available %d, want 2", got)
	}
	s.Check(t)
}
