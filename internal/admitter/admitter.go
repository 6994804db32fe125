// Package admitter is the waiting room's admitter (docs/design.md, "Waiting room"):
// for each queued SKU on sale it reads the arrivals from the tickets' index, orders
// the line (inventory.QueueSettings.Line), writes each ticket's position once, and
// every tick admits from the head of the line as many buyers as the shards' rate and
// the units that can still be bought allow (inventory.AdmissionInput.Decide), or says
// the SKU is sold out, in the SKU's admission frontier that every poll reads. One
// admitter at a time per SKU, held by a lease item; the frontier's version keeps two
// from both advancing it or giving one position twice.
package admitter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Timing and bounds of the admitter.
const (
	// Tick is how often the admitter admits, reads arrivals and places tickets.
	Tick = 250 * time.Millisecond
	// Settle is how long after an arrival the admitter reads it from the index (the
	// index is eventually consistent); the fair window is drawn Settle after it
	// closes.
	Settle = time.Second
	// LeaseFor is how long a lease lasts past the tick that took or renewed it: an
	// admitter that stops without dropping its lease holds the SKU this long.
	LeaseFor = 2 * time.Second
	// PlacementsPerSecond is the most tickets placed a second per SKU (1 write unit
	// each): a quarter of a table's default 40,000 write units a second.
	PlacementsPerSecond = 10_000
	// placeWriters is how many PlaceTicket calls run at once.
	placeWriters = 16
	// StopBefore is the least time left before its invocation's deadline, beyond
	// the longest tick of the run, for the loop to start another tick (Run).
	StopBefore = 1500 * time.Millisecond
	// releaseBudget is how long before its invocation's deadline a tick is cut,
	// leaving the release (a frontier write and a lease drop per SKU) time to run.
	releaseBudget = 750 * time.Millisecond
	// answerBudget is how long before its invocation's deadline the release is
	// cut, leaving the runtime time to send the answer.
	answerBudget = 100 * time.Millisecond
	// refreshEvery is how often, in ticks, the admitter lists the queued SKUs again.
	refreshEvery = 40
	// DropUsedEvery is how often, at most, the admitter removes from a SKU's shards
	// the counters of admission claims used (inventory.AdmissionCredit) whose bucket
	// expired at least DropUsedAfter ago: 1 write unit per shard that has some.
	DropUsedEvery = 30 * time.Second
	// DropUsedAfter is how long after its bucket expired a counter is removed: past
	// createOrder's 10 s timeout, so that few orders add to it once it is gone.
	DropUsedAfter = 30 * time.Second
)

// Store is what the admitter reads and writes (dynamo.Store).
type Store interface {
	SKUsOnSale(ctx context.Context, after string) ([]*inventory.SKUDetail, string, []string, error)
	SKUDetail(ctx context.Context, sku string) (*inventory.SKUDetail, error)
	ReadFrontier(ctx context.Context, sku string) (inventory.Frontier, int64, error)
	AdvanceFrontier(ctx context.Context, sku string, prev int64, f inventory.Frontier) error
	PlaceTicket(ctx context.Context, id string, position int) (bool, error)
	Arrivals(ctx context.Context, sku string, start, after, through time.Time) ([]inventory.Arrival, error)
	TakeLease(ctx context.Context, sku, holder string, until time.Time) (bool, error)
	DropLease(ctx context.Context, sku, holder string) error
	DrawSeedOf(ctx context.Context, sku string, start time.Time) (inventory.DrawSeed, bool, error)
	DropUsedClaims(ctx context.Context, sku string, shard int, counters []inventory.UsedKey) error
}

// Admitter admits buyers of every queued SKU on sale. It keeps each SKU's line in
// memory between ticks and invocations of one function instance; Tick is safe for
// one caller at a time.
type Admitter struct {
	store  Store
	log    *slog.Logger
	now    func() time.Time // the store's clock
	holder string           // this admitter's lease holder id

	mu    sync.Mutex
	skus  map[string]*skuLine
	ticks int
}

// skuLine is the admitter's memory of one SKU.
type skuLine struct {
	book    Book
	version int64 // the frontier version book matches; -1: none (rebuild)
	last    time.Time
	carry   float64     // admissions of the rate not yet whole
	retry   []placement // positions reserved whose write failed, tried again each tick
	leased  bool
	kept    inventory.Frontier // the frontier as this admitter last wrote it, at version
	dropped time.Time          // when the used-claim counters expired long ago were last removed
}

// placement is a ticket and the position reserved for it.
type placement struct {
	ticket   string
	position int
	again    bool // written again after a rebuild: the ticket may hold it already
}

// New returns an admitter on store, logging to log, on the clock now (the store's).
func New(store Store, log *slog.Logger, now func() time.Time) *Admitter {
	var id [8]byte
	rand.Read(id[:])
	return &Admitter{store: store, log: log, now: now, holder: hex.EncodeToString(id[:]), skus: map[string]*skuLine{}}
}

// Report is what a run did, the scheduled invocation's result.
type Report struct {
	Ticks  int `json:"ticks"`
	SKUs   int `json:"skus"`   // queued SKUs on sale at the end
	Errors int `json:"errors"` // ticks of a SKU that failed (logged)
}

// Run ticks every Tick while its invocation has time left, then drops its leases.
// A tick starts only while at least StopBefore plus the longest tick of this run
// (Tick at first) remains before ctx's deadline, and is cut at releaseBudget before
// that deadline, so a slow store ends a tick (logged, its SKU rebuilt next tick, as
// any failed tick) rather than Lambda ending the invocation with it; the release has
// until shortly before the deadline. Without a deadline it ticks until ctx ends. The
// schedule starts it every minute; a run that finds a SKU's lease held keeps trying
// each tick, so the next run takes over when this one stops.
func (a *Admitter) Run(ctx context.Context) (Report, error) {
	deadline, bounded := ctx.Deadline()
	var r Report
	longest := Tick
	for ctx.Err() == nil {
		if bounded && time.Until(deadline) < StopBefore+longest {
			break
		}
		start := time.Now()
		tickCtx, cancel := boundedBy(ctx, deadline, bounded, releaseBudget)
		r.Errors += a.Tick(tickCtx)
		cancel()
		r.Ticks++
		longest = max(longest, time.Since(start))
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(Tick))):
		}
	}
	releaseCtx, cancel := boundedBy(context.WithoutCancel(ctx), deadline, bounded, answerBudget)
	defer cancel()
	r.SKUs = a.Release(releaseCtx)
	return r, nil
}

// boundedBy is ctx ended before the invocation's deadline by before when the
// invocation has one (bounded), else ctx as it is.
func boundedBy(ctx context.Context, deadline time.Time, bounded bool, before time.Duration) (context.Context, context.CancelFunc) {
	if !bounded {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-before))
}

// Tick runs one tick: every refreshEvery ticks it lists the queued SKUs on sale, then
// admits for each SKU it holds (or takes) the lease of. It returns how many SKUs'
// ticks failed; each failure is logged, and the SKU's memory is rebuilt next tick.
func (a *Admitter) Tick(ctx context.Context) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	failed := 0
	if a.ticks%refreshEvery == 0 {
		if err := a.refresh(ctx); err != nil {
			a.log.Log(ctx, inventory.FailureLevel(ctx, err), "list queued SKUs", "error", err)
			failed++
		}
	}
	a.ticks++
	for sku, l := range a.skus {
		if err := a.tickSKU(ctx, sku, l); err != nil {
			l.version = -1
			a.log.Log(ctx, inventory.FailureLevel(ctx, err), "admitter tick", "sku", sku, "error", err)
			failed++
		}
	}
	return failed
}

// refresh lists the queued SKUs on sale (a scan of the skus table, filtered) and
// keeps a line for each; a SKU no longer queued or on sale is dropped, its lease too.
func (a *Admitter) refresh(ctx context.Context) error {
	seen := map[string]bool{}
	for after := ""; ; {
		page, next, _, err := a.store.SKUsOnSale(ctx, after)
		if err != nil {
			return err
		}
		for _, d := range page {
			if d.Queue.Queue {
				seen[d.ID] = true
				if a.skus[d.ID] == nil {
					a.skus[d.ID] = &skuLine{version: -1}
				}
			}
		}
		if after = next; after == "" {
			break
		}
	}
	for sku, l := range a.skus {
		if !seen[sku] {
			a.drop(ctx, sku, l)
		}
	}
	return nil
}

// drop forgets sku and ends this admitter's lease on it.
func (a *Admitter) drop(ctx context.Context, sku string, l *skuLine) {
	if l.leased {
		if err := a.store.DropLease(ctx, sku, a.holder); err != nil {
			a.log.Warn("drop admitter lease", "sku", sku, "error", err)
		}
	}
	delete(a.skus, sku)
}

// Release ends every lease this admitter holds, so that the next run (in this
// instance or another) takes over at once, and returns how many SKUs it had. It keeps
// the lines: a later run of this admitter that finds a frontier still at its own last
// write goes on from them without reading the line again.
func (a *Admitter) Release(ctx context.Context) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	for sku, l := range a.skus {
		if l.leased {
			a.confirm(ctx, sku, l)
			if err := a.store.DropLease(ctx, sku, a.holder); err != nil {
				a.log.Warn("drop admitter lease", "sku", sku, "error", err)
			}
			l.leased = false
		}
	}
	a.ticks = 0
	return len(a.skus)
}

// confirm writes, at a run's end, the frontier this admitter last wrote with its
// positions' writes counted (Unwritten), so that the next run, in another instance,
// has nothing to write again; it is left as it is if another admitter wrote since.
func (a *Admitter) confirm(ctx context.Context, sku string, l *skuLine) {
	next := l.kept
	next.Line.Unwritten = unwritten(next.Line.Placed, next.Line.Placed, l.retry)
	if l.version < 1 || next.Line == l.kept.Line {
		return
	}
	if err := a.store.AdvanceFrontier(ctx, sku, l.version, next); err != nil {
		a.log.Warn("confirm placements", "sku", sku, "error", err)
		return
	}
	l.version, l.kept = l.version+1, next
}

// unwritten is how many of positions 1..placed are not known written when those up
// to before were all tried and retry holds the ones that failed.
func unwritten(placed, before int, retry []placement) int {
	written := before
	for _, p := range retry {
		written = min(written, p.position-1)
	}
	return placed - written
}

// tickSKU is one tick of one SKU.
func (a *Admitter) tickSKU(ctx context.Context, sku string, l *skuLine) error {
	d, err := a.store.SKUDetail(ctx, sku)
	if err != nil {
		return err
	}
	if !d.OnSale || !d.Queue.Queue {
		a.drop(ctx, sku, l)
		return nil
	}
	now := a.now()
	if l.leased, err = a.store.TakeLease(ctx, sku, a.holder, now.Add(LeaseFor)); err != nil || !l.leased {
		l.version = -1
		return err
	}
	kept, version, err := a.store.ReadFrontier(ctx, sku)
	if err != nil {
		return err
	}
	f := kept.ForSale(d.SaleStartsAt, now) // a new sale: a new line, written this tick
	if version != l.version || l.book.Start != d.SaleStartsAt || l.book.Settings != d.Queue || !f.Sale.Equal(kept.Sale) {
		if err := a.resume(ctx, d, f.Line, l); err != nil {
			return err
		}
	}
	read, err := a.readArrivals(ctx, sku, l, now)
	if err != nil {
		return err
	}
	placed, err := a.admit(ctx, d, kept, f, version, l, now, read)
	if err != nil {
		return err
	}
	for i, id := range placed {
		l.retry = append(l.retry, placement{id, f.Line.Placed + 1 + i, false})
	}
	l.retry = a.place(ctx, sku, l.retry)
	a.dropUsed(ctx, d, l, now)
	return nil
}

// dropUsed removes, at most every DropUsedEvery, the used-claim counters whose
// bucket expired DropUsedAfter or more before now from each shard of d that has
// some. A failure is logged and tried again next time: counters only grow the shard
// items meanwhile.
func (a *Admitter) dropUsed(ctx context.Context, d *inventory.SKUDetail, l *skuLine, now time.Time) {
	if now.Sub(l.dropped) < DropUsedEvery {
		return
	}
	l.dropped = now
	before := inventory.AdmissionBucket(now.Add(-DropUsedAfter))
	for _, sh := range d.PerShard {
		var old []inventory.UsedKey
		for k := range sh.UsedClaims {
			if k.Bucket < before {
				old = append(old, k)
			}
		}
		if err := a.store.DropUsedClaims(ctx, d.ID, sh.Shard, old); err != nil {
			a.log.Warn("drop used admission claims", "sku", d.ID, "shard", sh.Shard, "error", err)
		}
	}
}

// resume rebuilds l's book from the line kept in the frontier: after another
// admitter's ticks, a failed tick or a changed sale (whose line starts empty: its
// positions from 1, its own fair window and seed).
func (a *Admitter) resume(ctx context.Context, d *inventory.SKUDetail, kept inventory.LineState, l *skuLine) error {
	if !l.book.Start.Equal(d.SaleStartsAt) {
		l.retry = nil // the last sale's positions: its tickets are EXPIRED
	}
	l.book = Book{Settings: d.Queue, Start: d.SaleStartsAt}
	l.carry, l.last = 0, time.Time{}
	if d.Queue.FairWindowSeconds > 0 {
		seed, fresh, err := a.store.DrawSeedOf(ctx, d.ID, d.SaleStartsAt)
		if err != nil {
			return err
		}
		if fresh {
			a.log.Info("fair draw committed", "sku", d.ID, "saleStartsAt", d.SaleStartsAt, "commitment", seed.Commitment())
		}
		l.book.Seed = seed
	}
	if !kept.Drawn {
		_, err := l.book.Resume(kept, nil)
		return err
	}
	var from time.Time // the whole line when some of it is not placed or written
	if kept.Queued <= kept.Placed && kept.Unwritten <= 0 {
		from = kept.Watermark.Add(-Lookback)
	}
	arrivals, err := a.store.Arrivals(ctx, d.ID, d.SaleStartsAt, from, kept.Watermark)
	if err != nil {
		return err
	}
	again, err := l.book.Resume(kept, arrivals)
	for i, id := range again {
		l.retry = append(l.retry, placement{id, kept.Placed - len(again) + 1 + i, true})
	}
	return err
}

// readArrivals reads the index since the book's watermark (less Lookback after the
// draw) up to Settle ago into the book, and returns how many joined the line.
func (a *Admitter) readArrivals(ctx context.Context, sku string, l *skuLine, now time.Time) (int, error) {
	cut := now.Add(-Settle)
	from := l.book.ReadTo
	if l.book.Drawn {
		from = from.Add(-Lookback)
	}
	if !cut.After(from) {
		return 0, nil
	}
	arrivals, err := a.store.Arrivals(ctx, sku, l.book.Start, from, cut)
	if err != nil {
		return 0, err
	}
	wasDrawn := l.book.Drawn
	n, err := l.book.Read(arrivals, cut)
	if err == nil && !wasDrawn && l.book.Drawn && l.book.Settings.FairWindowSeconds > 0 {
		a.log.Info("fair window drawn", "sku", sku, "drawn", l.book.Queued(), "seed", hex.EncodeToString(l.book.Seed[:]))
	}
	return n, err
}

// admit decides the tick (Decide on one read of the shards) and reserves the
// positions of the tickets to place, f.Line.Placed+1…, in the frontier it writes (one
// conditional write, from the version read: kept, which f is for the SKU's sale);
// it returns those tickets.
func (a *Admitter) admit(ctx context.Context, d *inventory.SKUDetail, kept, f inventory.Frontier, version int64, l *skuLine, now time.Time, read int) ([]string, error) {
	elapsed := Tick
	if !l.last.IsZero() {
		elapsed = min(max(now.Sub(l.last), 0), time.Second)
	}
	l.last = now
	place := l.book.Take(int(PlacementsPerSecond * elapsed / time.Second))
	in := inventory.AdmissionInput{
		AdmittedUnexpired: f.AdmittedUnexpired(now) + f.PriorClaims(now), UnitsPerAdmission: max(d.LimitPerUser, 1),
		Waiting: f.Line.Placed + len(place) - f.Admitted(),
	}
	used := map[inventory.UsedKey]int{}
	for _, sh := range d.PerShard {
		in.Available += sh.Available
		in.Reserved += sh.Reserved
		for b, units := range sh.UsedClaims {
			used[b] += units
		}
	}
	in.UsedClaims = f.UsedClaims(now, used, in.UnitsPerAdmission)
	if !now.Before(d.SaleStartsAt) {
		l.carry += float64(inventory.AdmissionRatePerSecond(d.Shards)) * elapsed.Seconds()
		in.Budget = int(l.carry)
	}
	dec := in.Decide()
	l.carry -= float64(dec.Admit)
	if in.Budget > dec.Admit { // an unused budget is not saved up
		l.carry = min(l.carry, 1)
	}
	next := f.Advance(now, dec)
	next.Line = a.lineAfter(f.Line, l, len(place), read, elapsed)
	if !changed(kept, next) {
		return nil, nil
	}
	if err := a.store.AdvanceFrontier(ctx, d.ID, version, next); err != nil {
		return nil, err
	}
	l.version, l.kept = version+1, next
	return place, nil
}

// lineAfter is the line kept in the frontier after a tick that placed placed tickets
// and read read arrivals in elapsed. Positions up to kept.Placed were written by
// earlier ticks but for those still to try again (l.retry); this tick's are written
// after the frontier, so they count as unwritten until the next write.
func (a *Admitter) lineAfter(kept inventory.LineState, l *skuLine, placed, read int, elapsed time.Duration) inventory.LineState {
	next := inventory.LineState{
		Placed: kept.Placed + placed, Drawn: l.book.Drawn, Late: l.book.Late,
		ArrivalsPerSecond: (kept.ArrivalsPerSecond + int(float64(read)/elapsed.Seconds())) / 2,
	}
	next.Unwritten = unwritten(next.Placed, kept.Placed, l.retry)
	next.Queued = next.Placed + l.book.Queued()
	if l.book.Drawn {
		next.Watermark = l.book.ReadTo
	}
	return next
}

// changed reports whether a tick changed the frontier (else it is not written).
func changed(f, next inventory.Frontier) bool {
	return next.Admitted() != f.Admitted() || next.SoldOut != f.SoldOut || len(next.Steps) != len(f.Steps) ||
		next.Line != f.Line || !next.Sale.Equal(f.Sale)
}

// place writes each ticket's reserved position, placeWriters at a time, and returns
// the placements whose write failed (logged), to try again next tick. A ticket placed
// already (by an admitter that rebuilt its line) keeps its position; the new one stays
// empty, admitted for nobody (logged, but for a position written again after a
// rebuild, which the ticket usually holds already).
func (a *Admitter) place(ctx context.Context, sku string, todo []placement) []placement {
	var g errgroup.Group
	g.SetLimit(placeWriters)
	var mu sync.Mutex
	var failed []placement
	for _, p := range todo {
		g.Go(func() error {
			ok, err := a.store.PlaceTicket(ctx, p.ticket, p.position)
			switch {
			case errors.Is(err, inventory.ErrTicketNotFound): // gone (its TTL) since it was read
			case err != nil:
				mu.Lock()
				failed = append(failed, p)
				mu.Unlock()
				a.log.Warn("place ticket", "sku", sku, "position", p.position, "error", err)
			case !ok && !p.again:
				a.log.Warn("ticket placed already: position left empty", "sku", sku, "position", p.position)
			}
			return nil
		})
	}
	g.Wait()
	return failed
}
