package inventory

// The buyer's side of the waiting room (docs/design.md, "Waiting room"): tickets,
// what a poll answers and the admission an order needs.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Waiting-room errors, checked with errors.Is. The per-SKU ones come wrapped in a
// *SKUError.
var (
	// ErrQueueNotEnabled: the SKU has no waiting room (queue off), so it issues no
	// ticket; its buyers order directly (docs/contract.md, 409 QUEUE_NOT_ENABLED).
	ErrQueueNotEnabled = errors.New("SKU has no waiting room")
	// ErrAdmissionRequired: an order line names a SKU with a waiting room and the
	// request carries no valid admission of the caller for it (none, another
	// user's or SKU's, expired, forged, or already used by another order)
	// (docs/contract.md, 403 ADMISSION_REQUIRED). Nothing is reserved.
	ErrAdmissionRequired = errors.New("an admission from the waiting room is required")
	// ErrTicketNotFound: no ticket of the caller has that id (docs/contract.md, 404
	// TICKET_NOT_FOUND): another buyer's ticket is not found either.
	ErrTicketNotFound = errors.New("ticket not found")
)

// TicketID is the id of user's ticket for the sale of sku that starts at start: the
// first 16 bytes of SHA-256("ticket" 0 user 0 sku), and 0 and the start in Unix
// milliseconds (decimal) when start is not zero, hex (32 characters), like
// KeyedOrderID. The same buyer, SKU and sale always get the same id, so one
// conditioned write keeps one ticket per buyer and sale; a SKU put on sale again
// with a new start gives each buyer a new ticket (Ticket.OfSale).
func TicketID(user, sku string, start time.Time) string {
	key := "ticket\x00" + user + "\x00" + sku
	if !start.IsZero() {
		key += "\x00" + strconv.FormatInt(start.UnixMilli(), 10)
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// ValidTicketID reports whether s has TicketID's shape (32 lower-case hex digits).
func ValidTicketID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Ticket is one buyer's place in a SKU's waiting room.
type Ticket struct {
	ID        string    // TicketID(User, SKU, the sale's start)
	SKU       string    // the SKU id
	User      string    // the buyer (JWT sub)
	ArrivedAt time.Time // when it was first taken (the store's clock, milliseconds)
	// Position is its place in the line (1-based), 0 until the admitter places it.
	Position int
	UsedBy   string // the order its admission opened; "" while unused
}

// OfSale reports whether t was taken for the SKU's sale that starts at start (zero:
// none): a ticket of an earlier sale answers EXPIRED and its buyer takes a new one.
func (t Ticket) OfSale(start time.Time) bool { return t.ID == TicketID(t.User, t.SKU, start) }

// TicketView is what a poll of a ticket answers (GET /queue/{ticket}).
type TicketView struct {
	Status TicketStatus
	// Position is the ticket's place in line, 0 when not placed yet.
	Position int
	// EstimatedWaitSeconds is the wait at the SKU's admission rate (WAITING only).
	EstimatedWaitSeconds int
	// Estimated: EstimatedWaitSeconds holds an estimate (WAITING, and the ticket
	// placed or the admitter having read the line: Frontier.Line).
	Estimated bool
	// AdmissionExpires is when the admission ends (ADMITTED only).
	AdmissionExpires time.Time
	// NextPollSeconds is how long the buyer should wait before polling again
	// (NextPoll), 0 once the status is final (SOLD_OUT, EXPIRED) or ADMITTED.
	NextPollSeconds int
}

// Poll bounds, in seconds (docs/design.md, "Polling costs no write").
const (
	// MinPollSeconds is the poll interval of a buyer whose wait is short.
	MinPollSeconds = 1
	// MaxPollSeconds is the longest interval a waiting buyer is told to wait.
	MaxPollSeconds = 30
)

// NextPoll is how long, in whole seconds, a WAITING buyer should wait before polling
// again: until the fair window's end (windowEnd, when now is before it; at most
// MaxFairWindowSeconds), since nobody learns a place before the draw; else
// MinPollSeconds while the wait is under MaxPollSeconds, a tenth of the wait
// (rounded up) beyond, at most MaxPollSeconds.
func NextPoll(waitSeconds int, windowEnd, now time.Time) int {
	if now.Before(windowEnd) {
		return max(int((windowEnd.Sub(now)+time.Second-1)/time.Second), MinPollSeconds)
	}
	if waitSeconds < MaxPollSeconds {
		return MinPollSeconds
	}
	return min((waitSeconds+9)/10, MaxPollSeconds)
}

// View is what a poll of t answers at now from the SKU's frontier f, the SKU's
// settings q and sale start (for the fair window; zero: none) and admission rate
// (AdmissionRatePerSecond of its shards): Frontier.Status of t's position, with its
// wait and the next poll while WAITING. A ticket not placed yet is estimated from
// the line the admitter keeps in f (LineState.Ahead) once the line is drawn. A
// ticket of another sale than the one starting at start (Ticket.OfSale) is EXPIRED;
// a frontier of another sale (not yet replaced by the admitter) is read as the
// sale's new one (Frontier.ForSale): nobody placed nor admitted.
func (f Frontier) View(t Ticket, q QueueSettings, start time.Time, ratePerSecond int, now time.Time) TicketView {
	if !t.OfSale(start) {
		return TicketView{Status: TicketExpired, Position: t.Position}
	}
	f = f.ForSale(start, now) // a frontier of the last sale admits nobody of this one
	status, expires := f.Status(t.Position, now)
	v := TicketView{Status: status, Position: t.Position, AdmissionExpires: expires}
	if status != TicketWaiting {
		return v
	}
	var windowEnd time.Time
	if !start.IsZero() {
		windowEnd = q.FairWindowEnd(start)
	}
	switch {
	case t.Position > 0:
		v.EstimatedWaitSeconds, v.Estimated = f.EstimatedWaitSeconds(t.Position, ratePerSecond), true
	case f.Line.Drawn && !now.Before(windowEnd):
		// Not placed yet: behind every ticket the admitter has read, and the
		// arrivals since its watermark.
		v.EstimatedWaitSeconds, v.Estimated = f.EstimatedWaitSeconds(f.Line.Ahead(t.ArrivedAt)+1, ratePerSecond), true
	}
	v.NextPollSeconds = NextPoll(v.EstimatedWaitSeconds, windowEnd, now)
	return v
}

// Admission is what an admission token says (claims sub, sku, tkt, pos, exp): user
// may open one order with SKU until Expires, once.
type Admission struct {
	User     string    // sub: the buyer
	SKU      string    // sku
	Ticket   string    // tkt: the ticket id, marked usedBy the order that uses it
	Position int       // pos: the ticket's place in line
	Expires  time.Time // exp: the admission's step's expiry (Frontier.Status)
}

// Admits reports whether a lets user order sku, whose sale starts at start (zero:
// none), at now: its user and SKU, its ticket of that sale (Ticket.OfSale), not
// expired. The caller has checked its signature.
func (a Admission) Admits(user, sku string, start, now time.Time) bool {
	return a.User == user && a.SKU == sku && now.Before(a.Expires) && a.Ticket == TicketID(user, sku, start)
}

// OtherSale reports whether a would let user order sku at now but for its ticket,
// which is of another sale than the one starting at start: a SKU record that may be
// behind (the catalog cache) then refuses it only once read again (docs/design.md,
// "A new sale, a new line"), since the admission may be of the sale it has not seen.
func (a Admission) OtherSale(user, sku string, start, now time.Time) bool {
	return a.User == user && a.SKU == sku && now.Before(a.Expires) && a.Ticket != TicketID(user, sku, start)
}

// SaleClockSkew is the most two function instances' clocks are taken to differ by
// when one's read of a SKU record is compared with a ticket's arrival, which another
// stamped (Ticket.SaleSettled).
const SaleClockSkew = time.Second

// SaleSettled reports whether a SKU record known current at known (QueueSKU.Known;
// zero: from the catalog cache or an eventually consistent read, perhaps behind)
// settles t's sale: it was read more than SaleClockSkew after t arrived, so after the
// record t's sale was taken from. A ticket of another sale than such a record's is
// of no current sale (EXPIRED); one the record does not settle may be of a sale the
// record has not seen yet. A ticket without its arrival (from a ticket token) is
// settled by no record.
func (t Ticket) SaleSettled(known time.Time) bool {
	return !t.ArrivedAt.IsZero() && known.After(t.ArrivedAt.Add(SaleClockSkew))
}

// QueueSKU is what a poll needs of a SKU besides its frontier: its waiting-room
// settings, sale start (zero: none) and shard count (its admission rate,
// AdmissionRatePerSecond), and when the record was known current (Ticket.SaleSettled).
type QueueSKU struct {
	Queue        QueueSettings
	SaleStartsAt time.Time
	Shards       int
	// Known is when the record was read strongly consistent (the store's clock);
	// zero when it may be behind (an eventually consistent read).
	Known time.Time
}

// View is what a poll of t answers at now from the SKU's frontier f and this record
// (Frontier.View), but for a ticket of another sale than the record's that the record
// does not settle (Ticket.SaleSettled): that is WAITING, without an estimate, to poll
// again in MinPollSeconds, never EXPIRED, which is final to the buyer, while the
// record may be behind the ticket's sale.
func (q QueueSKU) View(f Frontier, t Ticket, now time.Time) TicketView {
	if !t.OfSale(q.SaleStartsAt) && !t.SaleSettled(q.Known) {
		return TicketView{Status: TicketWaiting, Position: t.Position, NextPollSeconds: MinPollSeconds}
	}
	return f.View(t, q.Queue, q.SaleStartsAt, AdmissionRatePerSecond(q.Shards), now)
}
