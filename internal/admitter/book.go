package admitter

import (
	"slices"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Book is what one admitter holds in memory of a SKU's line between ticks: the
// tickets read and not placed yet, in line order, and the tickets it has read
// recently, to tell a late index entry from one it already has. It is pure: the
// admitter reads the arrivals and writes what Book says (docs/design.md, "Waiting
// room", "Positions").
type Book struct {
	Settings inventory.QueueSettings
	Start    time.Time          // the sale's start (zero: none)
	Seed     inventory.DrawSeed // the fair draw's seed (FairWindowSeconds > 0)

	// ReadTo is the arrival time up to which the index was read.
	ReadTo time.Time
	// Drawn: the fair window's line was drawn (always, without a window).
	Drawn bool
	// Pending is the tickets read and not placed yet, head first.
	Pending []string
	// Late counts the entries read after their arrival's time was read.
	Late int

	pool  []inventory.Arrival  // before the draw: every arrival read
	known map[string]time.Time // ticket → arrival, for arrivals after ReadTo − Lookback
}

// Lookback is how far before its watermark the admitter reads the index again each
// tick, to find entries the eventually consistent index showed late (DynamoDB's
// global secondary indexes usually show a write within a second). An entry later
// than this is not read here: its buyer's poll indexes the ticket again
// (inventory.LineState.Missed).
const Lookback = 2 * time.Second

// Queued is the tickets in the book: read and not placed (before the draw: every
// arrival read).
func (b *Book) Queued() int {
	if !b.Drawn {
		return len(b.pool)
	}
	return len(b.Pending)
}

// windowEnd is when the fair window closes; the draw comes once the index has
// been read past it.
func (b *Book) windowEnd() time.Time { return b.Settings.FairWindowEnd(b.Start) }

// Read adds arrivals, read from the index for the span up to cut (and, after the
// draw, Lookback before ReadTo), to the line, and returns how many joined it. Before
// the fair window's end they are pooled; the first Read whose cut reaches the
// window's end draws the pool (QueueSettings.Line: the window's arrivals in the
// seed's order, the rest by arrival). After the draw, new arrivals join by arrival
// time; one at or before ReadTo that the book has not seen is late: it joins the
// back and is counted.
func (b *Book) Read(arrivals []inventory.Arrival, cut time.Time) (int, error) {
	if b.known == nil {
		b.known = map[string]time.Time{}
	}
	var fresh, late []inventory.Arrival
	for _, a := range arrivals {
		if _, ok := b.known[a.Ticket]; ok || a.At.After(cut) {
			continue
		}
		b.known[a.Ticket] = a.At
		if b.Drawn && !a.At.After(b.ReadTo) {
			late = append(late, a)
		} else {
			fresh = append(fresh, a)
		}
	}
	if cut.After(b.ReadTo) {
		b.ReadTo = cut
	}
	if !b.Drawn {
		b.pool = append(b.pool, fresh...)
		if b.Settings.FairWindowSeconds > 0 && b.ReadTo.Before(b.windowEnd()) {
			return len(fresh), nil
		}
		line, err := b.Settings.Line(b.Seed, b.Start, b.pool)
		if err != nil {
			return 0, err
		}
		b.Pending, b.pool, b.Drawn = append(b.Pending, line...), nil, true
	} else if err := b.appendByArrival(fresh); err != nil {
		return 0, err
	}
	if err := b.appendByArrival(late); err != nil {
		return 0, err
	}
	b.Late += len(late)
	b.forget()
	return len(fresh) + len(late), nil
}

// appendByArrival adds arrivals to the back of the line by arrival time, ties by id.
func (b *Book) appendByArrival(arrivals []inventory.Arrival) error {
	line, err := inventory.QueueSettings{}.Line(b.Seed, b.Start, arrivals)
	if err != nil {
		return err
	}
	b.Pending = append(b.Pending, line...)
	return nil
}

// forget drops the tickets read before ReadTo − Lookback from the known set: the
// next reads do not reach them.
func (b *Book) forget() {
	if !b.Drawn {
		return
	}
	edge := b.ReadTo.Add(-Lookback)
	for id, at := range b.known {
		if at.Before(edge) {
			delete(b.known, id)
		}
	}
}

// Take removes and returns the first n pending tickets (fewer when fewer wait).
func (b *Book) Take(n int) []string {
	n = min(max(n, 0), len(b.Pending))
	out := slices.Clone(b.Pending[:n])
	b.Pending = b.Pending[n:]
	return out
}

// Resume rebuilds a book from the line kept in the frontier (another invocation's):
// every arrival up to l.Watermark, ordered as the line was (QueueSettings.Line),
// less the first l.Placed, which are placed. Exact unless late entries joined the
// back of the kept line: those are then ordered by their draw or arrival instead,
// and a ticket placed already may be taken again (its PlaceTicket changes nothing:
// a position without a ticket, admitted for nobody) while a late one waits for the
// next rebuild. With nothing pending (l.Queued = l.Placed) and nothing unwritten,
// arrivals need only reach Lookback before the watermark. Before the draw (l.Drawn
// false) it starts empty.
//
// It returns the tickets of the positions reserved and perhaps not written,
// l.Placed−l.Unwritten+1..l.Placed in order, to write again: only when no late entry
// ever joined the line (l.Late = 0) and the arrivals up to the watermark are the
// l.Queued tickets the line held (none missed then shown since, none unshown), so that
// the order rebuilt is the kept one and a position goes to the ticket it was reserved
// for. Otherwise none: those positions
// stay empty (admitted for nobody) and their tickets, never placed, are indexed
// again by their polls (inventory.LineState.Missed).
func (b *Book) Resume(l inventory.LineState, arrivals []inventory.Arrival) ([]string, error) {
	b.known, b.pool, b.Pending, b.Late = map[string]time.Time{}, nil, nil, l.Late
	b.ReadTo, b.Drawn = l.Watermark, l.Drawn
	if !l.Drawn {
		b.ReadTo = time.Time{}
		return nil, nil
	}
	var upTo []inventory.Arrival
	for _, a := range arrivals {
		if !a.At.After(l.Watermark) {
			upTo = append(upTo, a)
			b.known[a.Ticket] = a.At
		}
	}
	line, err := b.Settings.Line(b.Seed, b.Start, upTo)
	if err != nil {
		return nil, err
	}
	if l.Queued > l.Placed && l.Placed < len(line) {
		b.Pending = line[l.Placed:]
	}
	b.forget()
	if l.Late > 0 || l.Unwritten <= 0 || l.Placed > len(line) || len(line) != l.Queued {
		return nil, nil
	}
	return slices.Clone(line[max(l.Placed-l.Unwritten, 0):l.Placed]), nil
}
