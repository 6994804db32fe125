package rehearse

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
)

// queueRecord is what the queued sale records as it goes.
type queueRecord struct {
	joins, polls, admitted, orders, paid int
	// sellOut is when the last unit was paid (since the sale's start; -1: never).
	sellOut time.Duration
	// soldOutWritten is the first tick whose frontier says SOLD_OUT (-1: none).
	soldOutWritten time.Duration
	// toldSoldOut is when each buyer's poll answered SOLD_OUT, in time order.
	toldSoldOut []time.Duration
	// usedPos marks the positions whose admission opened an order.
	usedPos []bool
	counts  map[string]int

	ticks, failedTicks, sweeps int
	// maxRatio is the most unused unexpired admissions over the units purchasable
	// after a tick; overAvailable counts the ticks whose unused admissions exceeded
	// the units available.
	maxRatio      float64
	overAvailable int
	maxUnused     int
}

func newQueueRecord() queueRecord {
	return queueRecord{sellOut: -1, soldOutWritten: -1, counts: map[string]int{}}
}

func (r *queueRecord) count(what string) { r.counts[what]++ }

// used marks position p's admission used by an order.
func (r *queueRecord) used(p int) {
	for len(r.usedPos) <= p {
		r.usedPos = append(r.usedPos, false)
	}
	r.usedPos[p] = true
}

// measureTick reads, after the admitter's tick at at, the SKU's frontier and shards
// (strongly consistent) and records the admissions that may still take a unit
// (unexpired, their order not opened) against the units purchasable (available plus
// held by PENDING orders) and available.
func (q *queueSale) measureTick(ctx context.Context, at time.Duration) error {
	f, _, err := q.stack.Store.ReadFrontier(ctx, queueSKU)
	if err != nil {
		return err
	}
	d, err := q.stack.Store.SKUDetail(ctx, queueSKU)
	if err != nil {
		return err
	}
	in := inventory.AdmissionInput{}
	for _, sh := range d.PerShard {
		in.Available += sh.Available
		in.Reserved += sh.Reserved
	}
	r := &q.rec
	through := f.Admitted()
	unused := 0
	for p := through - f.AdmittedUnexpired(q.clk.Now()) + 1; p <= through; p++ {
		if p >= len(r.usedPos) || !r.usedPos[p] {
			unused++
		}
	}
	r.ticks++
	r.maxUnused = max(r.maxUnused, unused)
	if unused > 0 {
		r.maxRatio = max(r.maxRatio, float64(unused)/float64(max(in.Purchasable(), 0)))
	}
	if unused > max(in.Available, 0) {
		r.overAvailable++
	}
	if f.SoldOut && r.soldOutWritten < 0 {
		r.soldOutWritten = at
	}
	return nil
}

// QueueReport is what one queued sale did and what its checks found. Times are of
// the sale's virtual clock, in seconds since its start unless named otherwise; units
// are DynamoDB capacity units.
type QueueReport struct {
	Config QueueSettings `json:"config"`

	// The checks: Oversold 0, MaxAdmittedToPurchasable ≤ 1, TicksOverAvailable 0,
	// PollWriteUnits 0.
	Oversold int `json:"oversold"` // PAID and PENDING units beyond the stock, plus shards below 0
	// MaxAdmittedToPurchasable is, over every admitter tick, the most admissions that
	// could still take a unit (unexpired, no order opened with them yet) over the
	// units purchasable (available plus held by PENDING orders); TicksOverAvailable
	// counts the ticks where those admissions exceeded the units available.
	MaxAdmittedToPurchasable float64 `json:"maxAdmittedToPurchasable"`
	TicksOverAvailable       int     `json:"ticksOverAvailable"`
	MaxOutstandingAdmissions int     `json:"maxOutstandingAdmissions"`
	Ticks                    int     `json:"ticks"`
	FailedTicks              int     `json:"failedTicks"`

	Joins    int `json:"joins"`
	Polls    int `json:"polls"`
	Admitted int `json:"admitted"` // buyers whose poll answered ADMITTED
	Orders   int `json:"orders"`   // orders opened with an admission
	Paid     int `json:"paid"`
	// Other counts what else buyers met: errors, refusals, EXPIRED tickets.
	Other map[string]int `json:"other"`

	SoldOut SoldOutSummary `json:"soldOut"`
	// Line is the line document's reads (QueueConfig.LinePolls; nil without).
	Line *LineSummary `json:"line,omitempty"`

	// Units per request of each kind (join, poll, order, pay, admitter per tick,
	// sweep per run).
	Units map[string]UnitsSummary `json:"units"`
	// PollWriteUnits and PollReadUnits are the units of one poll, on average; a poll
	// writes nothing, so PollWriteUnits is the total over every poll, 0.
	PollWriteUnits float64 `json:"pollWriteUnits"`
	PollReadUnits  float64 `json:"pollReadUnits"`

	Fairness Fairness `json:"fairness"`

	ModelSeconds float64 `json:"modelSeconds"`
	WallSeconds  float64 `json:"wallSeconds"`
	CPUSeconds   float64 `json:"cpuSeconds"`
}

// QueueSettings echo the queued sale's configuration.
type QueueSettings struct {
	Buyers                 int     `json:"buyers"`
	Stock                  int     `json:"stock"`
	Shards                 int     `json:"shards"`
	AdmissionRatePerSecond int     `json:"admissionRatePerSecond"`
	OverSeconds            float64 `json:"overSeconds"`
	FairWindowSeconds      float64 `json:"fairWindowSeconds"`
	PayRatio               float64 `json:"payRatio"`
	PaymentTimeoutSeconds  float64 `json:"paymentTimeoutSeconds"`
	Seed                   uint64  `json:"seed"`
}

// SoldOutSummary is how soon waiting buyers learnt the SKU was sold out.
type SoldOutSummary struct {
	// SellOutSeconds is when the last unit was paid (nil: never);
	// FrontierSeconds when the admitter's tick wrote SOLD_OUT; ReadableAfterMs is
	// how long after the sell-out a poll could first read it: that write plus the
	// polls' frontier cache (dynamo.FrontierCacheTTL) at most.
	SellOutSeconds  *float64 `json:"sellOutSeconds"`
	FrontierSeconds *float64 `json:"frontierSeconds"`
	ReadableAfterMs float64  `json:"readableAfterMs"`
	// Told is how many waiting buyers a poll answered SOLD_OUT; MaxMs and P99Ms how
	// long after the sell-out that poll came; Over1s how many came later than 1 s.
	Told   int     `json:"told"`
	MaxMs  float64 `json:"maxMs"`
	P99Ms  float64 `json:"p99Ms"`
	Over1s int     `json:"over1s"`
}

// Fairness is the spread of success odds (an order opened) across arrival times
// within SpanSeconds of the sale's start, in equal buckets, against what chance
// alone gives: Odds is the success share of all of them; each bucket's Low95 and
// High95 bound its odds 95 % of the time if every buyer had Odds (normal
// approximation of the binomial); ChiSquare (DF degrees of freedom) sums each
// bucket's squared distance from Odds in standard errors: about DF by chance, far
// more when odds depend on arrival time.
type Fairness struct {
	SpanSeconds float64        `json:"spanSeconds"`
	Buyers      int            `json:"buyers"`
	Odds        float64        `json:"odds"`
	Spread      float64        `json:"spread"` // highest bucket odds − lowest
	ChiSquare   float64        `json:"chiSquare"`
	DF          int            `json:"df"`
	Outside95   int            `json:"outside95"` // buckets outside their 95 % bounds
	Buckets     []OddsInBucket `json:"buckets"`
}

// OddsInBucket is one arrival-time bucket of Fairness.
type OddsInBucket struct {
	FromSeconds float64 `json:"fromSeconds"`
	Buyers      int     `json:"buyers"`
	Successes   int     `json:"successes"`
	Odds        float64 `json:"odds"`
	Low95       float64 `json:"low95"`
	High95      float64 `json:"high95"`
}

// Passed reports whether every check passed.
func (r *QueueReport) Passed() bool {
	return r.Oversold == 0 && r.MaxAdmittedToPurchasable <= 1 && r.TicksOverAvailable == 0 && r.PollWriteUnits == 0 && r.FailedTicks == 0
}

// report checks the tables and puts the report together.
func (q *queueSale) report(ctx context.Context) (*QueueReport, error) {
	q.model.Bypass(true)
	rec := &q.rec
	cfg := q.cfg
	r := &QueueReport{
		Config: QueueSettings{
			Buyers: cfg.Buyers, Stock: cfg.Stock, Shards: q.shards, AdmissionRatePerSecond: inventory.AdmissionRatePerSecond(q.shards),
			OverSeconds: cfg.Over.Seconds(), FairWindowSeconds: cfg.FairWindow.Seconds(), PayRatio: cfg.PayRatio,
			PaymentTimeoutSeconds: cfg.PaymentTimeout.Seconds(), Seed: cfg.Seed,
		},
		MaxAdmittedToPurchasable: rec.maxRatio, TicksOverAvailable: rec.overAvailable, MaxOutstandingAdmissions: rec.maxUnused,
		Ticks: rec.ticks, FailedTicks: rec.failedTicks, Joins: rec.joins, Polls: rec.polls, Admitted: rec.admitted,
		Orders: rec.orders, Paid: rec.paid, Other: rec.counts, ModelSeconds: q.clk.since(q.start).Seconds(),
	}
	var err error
	if r.Oversold, err = q.oversold(ctx); err != nil {
		return nil, err
	}
	r.SoldOut = rec.soldOutSummary()
	r.Line = q.line.summary()
	r.Units = map[string]UnitsSummary{}
	per := map[string]int{"join": rec.joins, "poll": rec.polls, "order": rec.orders, "pay": rec.paid, "admitter": rec.ticks, "sweep": rec.sweeps}
	for name, m := range q.meters {
		n := max(per[name], 1)
		r.Units[name] = UnitsSummary{Requests: per[name], WriteUnits: m.WriteUnits() / float64(n), ReadUnits: m.ReadUnits() / float64(n),
			DynamoDBRequests: float64(m.Requests()) / float64(n), DynamoDBThrottles: float64(m.Throttles())}
	}
	r.PollWriteUnits = q.meters["poll"].WriteUnits()
	r.PollReadUnits = r.Units["poll"].ReadUnits
	r.Fairness = q.fairness()
	return r, nil
}

// oversold is the units held (PAID and PENDING) beyond the stock plus the units
// below 0 of every shard, from the tables as the sale left them (the rehearsal's
// count).
func (q *queueSale) oversold(ctx context.Context) (int, error) {
	db, tables := q.stack.DB, q.stack.Tables
	orders, err := booktest.Scan(ctx, db, tables.Orders)
	if err != nil {
		return 0, err
	}
	skus, err := booktest.Scan(ctx, db, tables.SKUs)
	if err != nil {
		return 0, err
	}
	s := &sale{cfg: Config{Stock: q.cfg.Stock}, skuIDs: []string{queueSKU}}
	var r Report
	_, held, _ := s.tallyOrders(&r, orders, map[string]int{queueSKU: 0})
	s.countOversold(&r, held, skus)
	return r.Oversold, nil
}

// soldOutSummary is how soon the waiting buyers were told SOLD_OUT.
func (r *queueRecord) soldOutSummary() SoldOutSummary {
	var s SoldOutSummary
	if r.sellOut < 0 {
		return s
	}
	sec := r.sellOut.Seconds()
	s.SellOutSeconds = &sec
	if r.soldOutWritten >= 0 {
		w := r.soldOutWritten.Seconds()
		s.FrontierSeconds = &w
		s.ReadableAfterMs = float64(r.soldOutWritten+dynamo.FrontierCacheTTL-r.sellOut) / float64(time.Millisecond)
	}
	ms := make([]float32, 0, len(r.toldSoldOut))
	for _, t := range r.toldSoldOut {
		late := t - r.sellOut
		ms = append(ms, float32(late)/float32(time.Millisecond))
		s.MaxMs = max(s.MaxMs, float64(late)/float64(time.Millisecond))
		if late > time.Second {
			s.Over1s++
		}
	}
	s.Told, s.P99Ms = len(ms), percentile(ms, 99)
	return s
}

// fairness is the success odds of the buyers who arrived within the fairness span,
// by arrival-time bucket.
func (q *queueSale) fairness() Fairness {
	span, n := q.cfg.FairnessSpan, q.cfg.Buckets
	f := Fairness{SpanSeconds: span.Seconds(), DF: n - 1, Buckets: make([]OddsInBucket, n)}
	successes := 0
	for _, b := range q.buyers {
		if b.arrived >= span {
			break // sorted by arrival
		}
		i := int(int64(b.arrived) * int64(n) / int64(span))
		f.Buckets[i].Buyers++
		f.Buyers++
		if b.got {
			f.Buckets[i].Successes++
			successes++
		}
	}
	if f.Buyers == 0 {
		return f
	}
	f.Odds = float64(successes) / float64(f.Buyers)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range f.Buckets {
		b := &f.Buckets[i]
		b.FromSeconds = (span * time.Duration(i) / time.Duration(n)).Seconds()
		if b.Buyers == 0 {
			continue
		}
		b.Odds = float64(b.Successes) / float64(b.Buyers)
		se := math.Sqrt(f.Odds * (1 - f.Odds) / float64(b.Buyers))
		b.Low95, b.High95 = f.Odds-1.96*se, f.Odds+1.96*se
		if b.Odds < b.Low95 || b.Odds > b.High95 {
			f.Outside95++
		}
		if se > 0 {
			f.ChiSquare += (b.Odds - f.Odds) * (b.Odds - f.Odds) / (se * se)
		}
		lo, hi = min(lo, b.Odds), max(hi, b.Odds)
	}
	f.Spread = hi - lo
	return f
}

// WriteText writes the report's figures for a reader.
func (r *QueueReport) WriteText(w io.Writer) error {
	c, so, f := r.Config, r.SoldOut, r.Fairness
	fmt.Fprintf(w, "queued sale: %d buyers over %.0fs for %d units, %d shards (admits %d/s), fair window %.0fs, %.0f%% pay, holds run out after %.0fs\n",
		c.Buyers, c.OverSeconds, c.Stock, c.Shards, c.AdmissionRatePerSecond, c.FairWindowSeconds, 100*c.PayRatio, c.PaymentTimeoutSeconds)
	fmt.Fprintf(w, "  joins %d, polls %d, admitted %d, orders %d, paid %d, oversold %d; other: %s\n",
		r.Joins, r.Polls, r.Admitted, r.Orders, r.Paid, r.Oversold, counts(r.Other))
	fmt.Fprintf(w, "  admitter: %d ticks (%d failed); admissions that could still buy / purchasable: max %.3f; ticks over available: %d (most outstanding: %d)\n",
		r.Ticks, r.FailedTicks, r.MaxAdmittedToPurchasable, r.TicksOverAvailable, r.MaxOutstandingAdmissions)
	if so.SellOutSeconds != nil {
		fmt.Fprintf(w, "  sold out at %.2fs; SOLD_OUT readable %.0f ms after; %d waiting buyers told: max %.0f ms, p99 %.0f ms after the last unit, %d later than 1 s\n",
			*so.SellOutSeconds, so.ReadableAfterMs, so.Told, so.MaxMs, so.P99Ms, so.Over1s)
	} else {
		fmt.Fprintf(w, "  never sold out; %d buyers told SOLD_OUT\n", so.Told)
	}
	r.Line.writeText(w)
	fmt.Fprintf(w, "  per poll: %.4f read units, %g write units in all; per join: %.2f WU %.2f RU\n",
		r.PollReadUnits, r.PollWriteUnits, r.Units["join"].WriteUnits, r.Units["join"].ReadUnits)
	fmt.Fprintf(w, "  fairness over the first %.0fs (%d buyers): odds %.4f, spread %.4f, chi-square %.1f on %d df, %d of %d buckets outside 95%%\n",
		f.SpanSeconds, f.Buyers, f.Odds, f.Spread, f.ChiSquare, f.DF, f.Outside95, len(f.Buckets))
	for _, b := range f.Buckets {
		fmt.Fprintf(w, "    from %5.1fs: %7d buyers, odds %.4f (95%%: %.4f–%.4f)\n", b.FromSeconds, b.Buyers, b.Odds, b.Low95, b.High95)
	}
	_, err := fmt.Fprintf(w, "  %.0f s of sale in %.0f s wall, %.0f s CPU; %s\n", r.ModelSeconds, r.WallSeconds, r.CPUSeconds, verdict(r.Passed()))
	return err
}

// verdict is PASS or FAIL.
func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
