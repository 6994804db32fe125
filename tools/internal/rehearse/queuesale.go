package rehearse

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/waitroom"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// QueueConfig is one queued sale (RunQueue): one SKU with its waiting room on, Stock
// units over Shards shards (0: as many as inventory.ShardsForPeak plans for every
// buyer arriving within Over), one unit a buyer. Durations are of the sale's virtual
// clock.
type QueueConfig struct {
	// Template is the path of template.yaml.
	Template string
	// Buyers arrive uniformly over Over from the sale's start; FairWindow is the SKU's
	// fairWindowSeconds (whole seconds; 0: none). Buckets is how many arrival-time
	// buckets the fairness figure splits FairnessSpan into (0: FairWindow) (at least 2).
	Buyers, Stock, Shards, Buckets int
	Over, FairWindow, FairnessSpan time.Duration
	// Of the admitted buyers who get an order, PayRatio pay it PayAfter later; the
	// others let its hold run out (PaymentTimeout, the template's
	// PAYMENT_TIMEOUT_SECONDS for this sale), so that the sweep releases the unit and
	// the admitter admits the next buyer for it.
	PayRatio                 float64
	PayAfter, PaymentTimeout time.Duration
	// Seed seeds the arrivals and the fates.
	Seed uint64
	// LinePolls: buyers waiting with a position also read the SKU's line document
	// each second, as CDN hits (queueline.go).
	LinePolls bool
	// Played, when set, is called once the sale has been played, before the tables
	// are checked: when the sale holds the most memory (tools/cmd/rehearse's
	// -memprofile writes the heap profile there).
	Played func()
	// Progress, when set, gets a line every progressEvery of the sale's clock: how
	// far it has got (tools/cmd/rehearse -queue writes them to stderr).
	Progress io.Writer
}

// progressEvery is how often (sale's clock) QueueConfig.Progress gets a line.
const progressEvery = 10 * time.Second

// DefaultQueue is tools/cmd/queuesale's sale: the 1,000,000 buyers for
// 10,000 units, half of them within a 10 s fair window.
var DefaultQueue = QueueConfig{
	Template: "template.yaml", Buyers: 1_000_000, Stock: 10_000, Buckets: 10,
	Over: 20 * time.Second, FairWindow: 10 * time.Second,
	PayRatio: 0.9, PayAfter: 10 * time.Second, PaymentTimeout: time.Minute, Seed: 1,
}

// Check returns an error naming the first field (as its tools/cmd/queuesale flag)
// out of range.
func (c QueueConfig) Check() error {
	if err := checkStock(c.Stock, c.Shards); err != nil {
		return err
	}
	switch {
	case c.Buyers < 1 || c.Buyers > 10_000_000:
		return badFlag("buyers", "must be 1 to 10,000,000")
	case c.Over <= 0:
		return badFlag("over", "must be positive")
	case c.FairWindow < 0 || c.FairWindow > inventory.MaxFairWindowSeconds*time.Second || c.FairWindow%time.Second != 0:
		return badFlag("fair-window", "must be whole seconds, 0 to %ds", inventory.MaxFairWindowSeconds)
	case c.FairnessSpan < 0 || c.FairnessSpan == 0 && c.FairWindow == 0:
		return badFlag("fairness-span", "must be positive when there is no fair window")
	case c.Buckets < 2:
		return badFlag("buckets", "must be at least 2")
	case c.PayRatio < 0 || c.PayRatio > 1:
		return badFlag("pay-ratio", "must be 0 to 1")
	case c.PaymentTimeout < time.Second || c.PayAfter <= 0 || c.PayAfter >= c.PaymentTimeout:
		return badFlag("pay-after", "must be positive and below -payment-timeout (at least 1s)")
	}
	return nil
}

// virtualClock is the queued sale's clock: every function, the store, the admitter
// and the DynamoDB model read it; the sale moves it from event to event.
type virtualClock struct{ ns atomic.Int64 }

// Now is the virtual time (UTC).
func (c *virtualClock) Now() time.Time                   { return time.Unix(0, c.ns.Load()).UTC() }
func (c *virtualClock) set(t time.Time)                  { c.ns.Store(t.UnixNano()) }
func (c *virtualClock) since(t0 time.Time) time.Duration { return c.Now().Sub(t0) }

// queueSale is one running queued sale.
type queueSale struct {
	cfg    QueueConfig
	clk    *virtualClock
	start  time.Time // the sale's start (saleStartsAt), virtual
	stack  *local.Stack
	model  *ddblimits.Model
	room   *waitroom.Room
	adm    *admitter.Admitter
	shards int
	rng    *rand.Rand

	buyers []queueBuyer
	queue  events
	// meters by what the requests were for: "join", "poll", "order", "pay", "admitter", "sweep"
	meters map[string]*ddblimits.Meter
	ctxs   map[string]context.Context
	rec    queueRecord
	line   *lineModel // nil unless cfg.LinePolls
}

// unlimited is the model's limits in a queued sale: it meters every call's units
// and refuses none (the virtual clock stands still during a call, so that a refused
// call's retries would never find throughput refilled; the whole-sale rehearsal
// plays the limits).
const unlimited = 1e12

// queueSKU is the queued sale's SKU id.
const queueSKU = "drop"

// RunQueue plays the queued sale cfg describes on a virtual clock and returns its
// report. The error is for a sale that could not be set up or checked.
func RunQueue(ctx context.Context, cfg QueueConfig) (*QueueReport, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.FairnessSpan == 0 {
		cfg.FairnessSpan = cfg.FairWindow
	}
	wallStart, cpuStart := time.Now(), cpuTime()
	q, err := startQueueSale(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer q.stack.Close()
	if err := q.play(ctx); err != nil {
		return nil, err
	}
	if cfg.Played != nil {
		cfg.Played()
	}
	r, err := q.report(ctx)
	if err != nil {
		return nil, err
	}
	r.WallSeconds, r.CPUSeconds = time.Since(wallStart).Seconds(), (cpuTime() - cpuStart).Seconds()
	return r, nil
}

// startQueueSale starts the local stack on the virtual clock with the DynamoDB model
// (on that clock) in front of it, creates the SKU and the buyers.
func startQueueSale(ctx context.Context, cfg QueueConfig) (*queueSale, error) {
	tpl, err := sam.Load(cfg.Template)
	if err != nil {
		return nil, err
	}
	tables, err := tpl.Tables()
	if err != nil {
		return nil, err
	}
	q := &queueSale{cfg: cfg, clk: &virtualClock{}, meters: map[string]*ddblimits.Meter{}, ctxs: map[string]context.Context{}}
	q.start = time.Date(2026, 11, 11, 10, 0, 0, 0, time.UTC)
	q.clk.set(q.start.Add(-time.Minute))
	q.model = ddblimits.New(ddblimits.Config{
		Now: q.clk.Now, Keys: ddblimits.KeysOf(tables), Indexes: ddblimits.IndexesOf(tables),
		WriteUnits: unlimited, ReadUnits: unlimited, TableWriteUnits: unlimited, TableReadUnits: unlimited,
	})
	q.stack, err = local.Start(ctx, local.StackConfig{
		Template: cfg.Template, InProcess: true, Now: q.clk.Now, PaymentTimeout: cfg.PaymentTimeout,
		DynamoDBOptions: []func(*dynamodb.Options){q.model.ClientOptions},
	})
	if err != nil {
		return nil, err
	}
	if err := q.seed(ctx); err != nil {
		q.stack.Close()
		return nil, err
	}
	keys, err := local.LocalAdmissionKeys()
	if err != nil {
		q.stack.Close()
		return nil, err
	}
	q.room = waitroom.NewRoom(q.stack.Store, keys, q.clk.Now)
	q.adm = admitter.New(q.stack.Store, slog.New(slog.DiscardHandler), q.clk.Now)
	for _, name := range []string{"join", "poll", "order", "pay", "admitter", "sweep"} {
		q.meters[name] = &ddblimits.Meter{}
		q.ctxs[name] = ddblimits.WithMeter(ctx, q.meters[name])
	}
	q.rec = newQueueRecord()
	q.startLine(ctx)
	q.newBuyers()
	return q, nil
}

// seed creates the queued SKU through the merchant API (delivery "none": orders need
// no address), on sale from q.start.
func (q *queueSale) seed(ctx context.Context) error {
	q.shards = q.cfg.Shards
	if q.shards == 0 {
		q.shards = inventory.ShardsForPeak(int(math.Ceil(float64(q.cfg.Buyers) / q.cfg.Over.Seconds())))
	}
	sku := map[string]any{
		"skuId": queueSKU, "delivery": "none", "name": "queued " + queueSKU, "price": 9900, "stock": q.cfg.Stock,
		"shards": q.shards, "limitPerUser": 1, "queue": true, "saleStartsAt": q.start.Format(time.RFC3339),
	}
	if q.cfg.FairWindow > 0 {
		sku["fairWindowSeconds"] = int(q.cfg.FairWindow / time.Second)
	}
	raw, err := json.Marshal([]any{sku})
	if err != nil {
		return err
	}
	return q.stack.Seed(ctx, strings.NewReader(string(raw)))
}

// newBuyers draws the buyers' arrivals (sorted: buyer i arrives i-th) and fates, and
// schedules each arrival.
func (q *queueSale) newBuyers() {
	q.rng = rand.New(rand.NewPCG(q.cfg.Seed, 0x9ee0e))
	arrivals := make([]time.Duration, q.cfg.Buyers)
	for i := range arrivals {
		arrivals[i] = time.Duration(q.rng.Float64() * float64(q.cfg.Over))
	}
	slices.Sort(arrivals)
	q.buyers = make([]queueBuyer, q.cfg.Buyers)
	q.queue = make(events, 0, q.cfg.Buyers)
	for i, at := range arrivals {
		q.buyers[i] = queueBuyer{arrived: at, pays: q.rng.Float64() < q.cfg.PayRatio}
		q.queue = append(q.queue, event{at: at, buyer: int32(i), step: stepJoin})
	}
	heap.Init(&q.queue) // sorted already: a heap
}

// play runs the sale: every buyer's steps in time order, the admitter's ticks every
// admitter.Tick and the closeOrder sweep every sweepEvery, until every buyer is done
// (SOLD_OUT, or an order refused or placed: a hold left to run out is released by
// a sweep after the sale, which is not played).
func (q *queueSale) play(ctx context.Context) error {
	nextTick, nextSweep := time.Duration(0), sweepEvery
	for ctx.Err() == nil {
		if len(q.queue) > 0 && q.queue[0].at < nextTick {
			ev := heap.Pop(&q.queue).(event)
			q.clk.set(q.start.Add(ev.at))
			q.step(ev)
			continue
		}
		if len(q.queue) == 0 {
			return nil
		}
		q.clk.set(q.start.Add(nextTick))
		if nextTick >= nextSweep {
			if err := q.sweep(ctx); err != nil {
				return err
			}
			nextSweep += sweepEvery
			q.rec.sweeps++
		}
		if n := q.adm.Tick(q.ctxs["admitter"]); n != 0 {
			q.rec.failedTicks += n
		}
		if err := q.measureTick(ctx, nextTick); err != nil {
			return err
		}
		if err := q.lineSecond(nextTick); err != nil {
			return err
		}
		q.progress(nextTick)
		nextTick += admitter.Tick
	}
	return ctx.Err()
}

// progress writes a line to cfg.Progress at every progressEvery of the sale.
func (q *queueSale) progress(at time.Duration) {
	if q.cfg.Progress == nil || at%progressEvery != 0 {
		return
	}
	r := &q.rec
	fmt.Fprintf(q.cfg.Progress, "rehearse -queue: %3.0fs of sale: joins %d, polls %d, admitted %d, orders %d, paid %d, told SOLD_OUT %d, events queued %d\n",
		at.Seconds(), r.joins, r.polls, r.admitted, r.orders, r.paid, len(r.toldSoldOut), len(q.queue))
}

// sweepEvery is closeOrder's schedule (template.yaml: rate(1 minute)).
const sweepEvery = time.Minute

// sweep invokes closeOrder as its schedule does: it releases the orders whose hold
// ran out.
func (q *queueSale) sweep(ctx context.Context) error {
	ev := local.ScheduledEvent(q.clk.Now(), "arn:aws:events:"+local.Region+":"+local.AccountID+":rule/CloseOrderFunction")
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := q.stack.Handlers[closeOrderFunction].Invoke(q.ctxs["sweep"], payload); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}
