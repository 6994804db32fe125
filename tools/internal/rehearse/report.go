package rehearse

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/stockctl/plan"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/quotas"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
)

// Report is what one sale did and what the checks found. Rates are per second and
// latencies in milliseconds at 1×; units are DynamoDB capacity units; money is US
// dollars at Prices.
type Report struct {
	Config   Settings `json:"config"`
	Slowdown float64  `json:"slowdown"`

	// The checks; each must be 0 (empty, true) for the sale to pass.
	Oversold       int      `json:"oversold"`      // units held (PAID and PENDING) beyond the stock, plus shards below 0
	FalseStockOut  int      `json:"falseStockOut"` // STOCK_OUT answers while the SKU surely held a unit
	Unbacked       int      `json:"unbacked"`      // 201 answers whose order is not in the table
	BooksProblems  []string `json:"booksProblems"` // booktest.Problems after the sale
	ReconcileClean bool     `json:"reconcileClean"`
	// Unsettled counts orders still PENDING once every order had expired and the
	// final sweep had run.
	Unsettled int `json:"unsettled"`
	// Reconcile is the final reconcile's report, FinalSweep the final sweep's.
	Reconcile  *reconcile.Report `json:"reconcile"`
	FinalSweep json.RawMessage   `json:"finalSweep"`

	Orders  OrdersSummary  `json:"orders"`
	Pages   PagesSummary   `json:"pages"`
	Answers map[string]int `json:"answers"` // buyers' API requests by HTTP status
	// Requests counts every buyer request by step, status and error code.
	Requests map[string]int `json:"requests"`
	// Buyers counts why buyers left without an order.
	Buyers map[string]int `json:"buyers"`
	// Throttles counts refusals by the limit that made them: "item <table> <key>",
	// "index <table>.<index> <hash key>" (a key alone on its partition), "partition
	// <table>#<n> <key>" or "partition <table>.<index>#<n> <hash key>" (a partition the
	// refused key shares with others), "table <table> writes", "API Gateway account",
	// "API Gateway route <route>", "Lambda <function> <reason>".
	Throttles map[string]int `json:"throttles"`
	// Partitions counts each table's and index's partitions ("<table>",
	// "<table>.<index>") while keys share them (Settings.IsolateAfterSeconds > 0; nil
	// otherwise); IsolatedKeys is how many item keys split for heat gave a partition of
	// their own; SharedPartitionThrottles how many refusals a shared partition made.
	Partitions               map[string]int `json:"partitions"`
	IsolatedKeys             int            `json:"isolatedKeys"`
	SharedPartitionThrottles int            `json:"sharedPartitionThrottles"`
	// FirstThrottles lists the limits in the order they first refused a request;
	// Binding names the limit that refused the most.
	FirstThrottles []FirstThrottle `json:"firstThrottles"`
	Binding        string          `json:"binding"`

	WriteUnitsPerOrder   float64 `json:"writeUnitsPerOrder"`
	ReadUnitsPerPageView float64 `json:"readUnitsPerPageView"`
	// WriteUnitsPerRefusedBuyer and ReadUnitsPerRefusedBuyer are the DynamoDB units
	// of the POST /orders requests (retries included) of the buyers who got no order,
	// averaged over them (0 when none was refused).
	WriteUnitsPerRefusedBuyer float64 `json:"writeUnitsPerRefusedBuyer"`
	ReadUnitsPerRefusedBuyer  float64 `json:"readUnitsPerRefusedBuyer"`
	// RefusedBuyerUnitsByOperation splits those units by DynamoDB operation
	// (ddblimits.MeteredOperations): write units of a write operation (a refused
	// TransactWriteItems is billed whole), read units of a read, per refused buyer;
	// operations they did not call are absent.
	RefusedBuyerUnitsByOperation map[string]float64 `json:"refusedBuyerUnitsByOperation,omitempty"`
	// RefusedInFlight splits the refused buyers by when they first sent POST /orders:
	// before their SKU was first seen sold out (a STOCK_OUT or a page showing none
	// available: in flight as the last units went) or after it.
	RefusedInFlight RefusedSplit `json:"refusedInFlight"`
	RefusedAfter    RefusedSplit `json:"refusedAfterSellOut"`
	// Units breaks the DynamoDB units down by what the requests were for, per request
	// of that kind.
	Units map[string]UnitsSummary `json:"units"`
	// Lambda is what Lambda did per function; SQSRequests the SQS calls made.
	Lambda      map[string]quotas.FunctionStats `json:"lambda"`
	SQSRequests map[string]int64                `json:"sqsRequests"`

	// USDPerMillionOrders is what a million orders cost, line by line (Total: all of
	// them), the sale's fixed cost spread over its orders included; USDFixedPerSale
	// is that fixed cost of the one sale apart (provisioned concurrency, pre-warming);
	// Cost is what the whole sale cost, Usage what it used (Prices say each line's
	// source); USDKMSKeysPerMonth is the stack's customer managed keys' monthly fee,
	// whatever the sales.
	USDPerMillionOrders plan.Cost `json:"usdPerMillionOrders"`
	USDFixedPerSale     plan.Cost `json:"usdFixedPerSale"`
	USDKMSKeysPerMonth  float64   `json:"usdKmsKeysPerMonth"`
	// EnvironmentsPeak is the most execution environments (busy or idle) each
	// function had alive at once, by logical id (functions that ran only);
	// Environments is, per function, the most alive in each bucket of the timeline
	// (Timeline.BucketSeconds) until the last change.
	EnvironmentsPeak map[string]int   `json:"environmentsPeak"`
	Environments     map[string][]int `json:"environments"`

	Cost   plan.Cost   `json:"cost"`
	Usage  plan.Usage  `json:"usage"`
	Prices plan.Prices `json:"prices"`

	SKUs []SKUSummary `json:"skus"`
	// Timeline is the sale second by second.
	Timeline Timeline `json:"timeline"`

	// LagMs is how late the machine started a step at worst, at 1×: large against the
	// 5 ms round trip means the machine, not the model, shaped the sale.
	LagMs        float64 `json:"lagMs"`
	ModelSeconds float64 `json:"modelSeconds"`
	WallSeconds  float64 `json:"wallSeconds"`
	CPUSeconds   float64 `json:"cpuSeconds"`
}

// RefusedSplit is one part of the refused buyers: how many, and their POST /orders
// requests' DynamoDB write and read units per buyer (retries included; 0 when none).
type RefusedSplit struct {
	Buyers             int     `json:"buyers"`
	WriteUnitsPerBuyer float64 `json:"writeUnitsPerBuyer"`
	ReadUnitsPerBuyer  float64 `json:"readUnitsPerBuyer"`
}

// perBuyer is units (per ddblimits.MeteredOperations) divided by n buyers, by
// operation name, the operations with none left out.
func perBuyer(units []float64, n int) map[string]float64 {
	out := map[string]float64{}
	for i, u := range units {
		if u > 0 {
			out[ddblimits.MeteredOperations[i]] = u / float64(n)
		}
	}
	return out
}

// byOperation is units per operation as text, the largest first: "TransactWriteItems
// 1.21 WU, GetItem 1.50 RU".
func byOperation(units map[string]float64) string {
	names := slices.SortedFunc(maps.Keys(units), func(a, b string) int { return cmp.Compare(units[b], units[a]) })
	parts := make([]string, len(names))
	for i, op := range names {
		kind := "RU"
		if slices.Index(ddblimits.MeteredOperations[:], op) < slices.Index(ddblimits.MeteredOperations[:], "GetItem") {
			kind = "WU"
		}
		parts[i] = fmt.Sprintf("%s %.2f %s", op, units[op], kind)
	}
	return strings.Join(parts, ", ")
}

// split is n buyers' units per buyer.
func split(n int, write, read float64) RefusedSplit {
	if n == 0 {
		return RefusedSplit{}
	}
	return RefusedSplit{n, write / float64(n), read / float64(n)}
}

// Settings echo the sale's configuration. Keys are camelCase like the rest of the
// report; rates are per second at 1×, units DynamoDB capacity units.
type Settings struct {
	SKUs                  int     `json:"skus"`
	Stock                 int     `json:"stock"`
	Shards                int     `json:"shards"`
	LimitPerUser          int     `json:"limitPerUser"`
	Buyers                int     `json:"buyers"`
	OverSeconds           float64 `json:"overSeconds"`
	Spike                 float64 `json:"spike"`
	PageViews             int     `json:"pageViews"`
	PayRatio              float64 `json:"payRatio"`
	CancelRatio           float64 `json:"cancelRatio"`
	LateRatio             float64 `json:"lateRatio"`
	PaymentTimeoutSeconds float64 `json:"paymentTimeoutSeconds"`
	Seed                  uint64  `json:"seed"`
	APIRate               float64 `json:"apiRate"` // account throttle, requests/s
	APIBurst              int     `json:"apiBurst"`
	StageRate             float64 `json:"stageRate"` // the routes' throttle (POST /orders's)
	StageBurst            float64 `json:"stageBurst"`
	LambdaConcurrency     int     `json:"lambdaConcurrency"`
	ColdStartMs           float64 `json:"coldStartMs"`
	PartitionWriteUnits   float64 `json:"partitionWriteUnits"`
	// WarmWriteUnits and WarmReadUnits are each table's warm throughput at the start,
	// units/s (0: warm to its quota); IndexWarmWriteUnits each index's warm write
	// throughput at the start (0: warm to its quota).
	WarmWriteUnits      float64 `json:"warmWriteUnits"`
	WarmReadUnits       float64 `json:"warmReadUnits"`
	IndexWarmWriteUnits float64 `json:"indexWarmWriteUnits"`
	// IsolateAfterSeconds is how long a hot key shares its partition before split for
	// heat isolates it, model seconds (0: every key on a partition of its own).
	IsolateAfterSeconds float64 `json:"isolateAfterSeconds"`
	PeakBuyersPerSecond float64 `json:"peakBuyersPerSecond"`
	// Warm and WarmClose are the createOrder and closeOrder execution environments
	// warm at the start (-warm, -warm-close: provisioned concurrency); Reserved the
	// reserved concurrency (executions) -reserved set, by function logical id (empty:
	// every function as the template reserves).
	Warm      int            `json:"warm"`
	WarmClose int            `json:"warmClose"`
	Reserved  map[string]int `json:"reserved"`
}

// OrdersSummary is what happened to orders.
type OrdersSummary struct {
	Created       int     `json:"created"`
	PerSecondPeak float64 `json:"perSecondPeak"`
	PerSecondMean float64 `json:"perSecondMean"`
	P50Ms         float64 `json:"p50Ms"`
	P99Ms         float64 `json:"p99Ms"` // per request answered 201/200, each attempt apart
	// BuyerP99Ms is the p99 of what a buyer waits from the first tap on buy (the
	// first POST /orders) to the final answer: the order, or the refusal after the
	// last retry; 429, 500 and 503 answers, the waits before each retry and refusals
	// all included.
	BuyerP99Ms float64 `json:"buyerP99Ms"`
	// By status at the end: PAID, CANCELLED (released), REFUND_PENDING, …
	ByStatus map[string]int `json:"byStatus"`
}

// PagesSummary is what happened to page views (GET /skus/{skuId} answered 200).
type PagesSummary struct {
	Served        int     `json:"served"`
	PerSecondPeak float64 `json:"perSecondPeak"`
	P50Ms         float64 `json:"p50Ms"`
	P99Ms         float64 `json:"p99Ms"`
	// CloudFront says whether the page was read through CloudFront (Config.CloudFront);
	// OriginFetches is how many views it sent to the API, CacheHits how many it
	// answered from its cache (or after a fetch already under way).
	CloudFront    bool `json:"cloudFront"`
	OriginFetches int  `json:"originFetches,omitempty"`
	CacheHits     int  `json:"cacheHits,omitempty"`
}

// UnitsSummary is the DynamoDB cost of one kind of request, per request.
type UnitsSummary struct {
	Requests      int     `json:"requests"`
	WriteUnits    float64 `json:"writeUnits"`
	MinWriteUnits float64 `json:"minWriteUnits"` // the cheapest request's that wrote anything (0: none did)
	// TypicalWriteUnits is what most of the Wrote requests took: an operation's own
	// cost, where the least and the mean also show the odd ones (a cancel racing the
	// queue's release, a write resent after a reconcile cut).
	TypicalWriteUnits float64 `json:"typicalWriteUnits"`
	// Wrote is how many requests wrote something with every write applied at its first
	// send (none refused by a condition, a conflict or a throttle and sent again).
	Wrote             int     `json:"wrote"`
	ReadUnits         float64 `json:"readUnits"`
	DynamoDBRequests  float64 `json:"dynamoDBRequests"`
	DynamoDBThrottles float64 `json:"dynamoDBThrottles"`
}

// FirstThrottle is when a limit first refused, in seconds since the sale's start.
type FirstThrottle struct {
	Limit     string  `json:"limit"`
	AtSeconds float64 `json:"atSeconds"`
	Count     int     `json:"count"`
}

// SKUSummary is one SKU's sale.
type SKUSummary struct {
	SKUID  string `json:"skuId"`
	Shards int    `json:"shards"`
	Stock  int    `json:"stock"`
	// SellOutSeconds is when a buyer was first told the SKU was sold out (a page
	// showing none available, or STOCK_OUT), seconds since the sale's start; nil when
	// it never sold out.
	SellOutSeconds *float64 `json:"sellOutSeconds"`
	Created        int      `json:"created"`
	Paid           int      `json:"paid"`
}

// Passed reports whether every check passed.
func (r *Report) Passed() bool {
	return r.Oversold == 0 && r.FalseStockOut == 0 && r.Unbacked == 0 && r.Unsettled == 0 && len(r.BooksProblems) == 0 && r.ReconcileClean
}

// report checks the tables and answers and puts the report together.
func (s *sale) report(ctx context.Context, e *engine, reconcileOut []byte, end time.Time) (*Report, error) {
	cfg, rec := s.cfg, s.rec
	r := &Report{Slowdown: s.slow, Prices: cfg.Prices, Answers: rec.answers, Requests: rec.byRequest, Buyers: rec.left}
	r.Config = s.settings()
	var rep reconcile.Report
	if err := json.Unmarshal(reconcileOut, &rep); err != nil {
		return nil, fmt.Errorf("final reconcile's report: %w", err)
	}
	r.Reconcile = &rep
	r.ReconcileClean = len(rep.Differences) == 0 && len(rep.OverdueOrders) == 0 && len(rep.RefundProblems) == 0
	db, tables := s.stack.DB, s.stack.Tables
	var err error
	if r.BooksProblems, err = booktest.Problems(ctx, db, tables); err != nil {
		return nil, err
	}
	if err := s.checkTables(ctx, r); err != nil {
		return nil, err
	}
	s.summarise(r, e, end)
	return r, nil
}

// checkTables finds unbacked answers, oversold units and false STOCK_OUTs in the
// tables as the sale left them.
func (s *sale) checkTables(ctx context.Context, r *Report) error {
	db, tables := s.stack.DB, s.stack.Tables
	orders, err := booktest.Scan(ctx, db, tables.Orders)
	if err != nil {
		return err
	}
	ledger, err := booktest.Scan(ctx, db, tables.StockLog)
	if err != nil {
		return err
	}
	skus, err := booktest.Scan(ctx, db, tables.SKUs)
	if err != nil {
		return err
	}
	index := map[string]int{}
	for i, id := range s.skuIDs {
		index[id] = i
	}
	status, held, paid := s.tallyOrders(r, orders, index)
	s.countUnbacked(r, status)
	r.Unsettled = r.Orders.ByStatus["PENDING"]
	s.countOversold(r, held, skus)
	s.countFalseStockOuts(r, ledger, index)
	s.summariseSKUs(r, paid)
	return nil
}

// tallyOrders counts the orders table's orders by status into r and returns each
// order's status by id and, per SKU (index maps SKU id to position), the units
// held (PAID and PENDING) and paid.
func (s *sale) tallyOrders(r *Report, orders []map[string]any, index map[string]int) (status map[string]string, held, paid []int) {
	held = make([]int, len(s.skuIDs)) // PAID and PENDING units
	paid = make([]int, len(s.skuIDs))
	status = map[string]string{}
	r.Orders.ByStatus = map[string]int{}
	for _, o := range orders {
		if o["kind"] != "ORDER" {
			continue
		}
		st, _ := o["status"].(string)
		status[str(o["pk"])] = st
		r.Orders.ByStatus[st]++
		lines, _ := o["items"].([]any)
		for _, l := range lines {
			line, _ := l.(map[string]any)
			i, ok := index[str(line["skuId"])]
			if !ok {
				continue
			}
			q := num(line["qty"])
			if st == "PAID" || st == "PENDING" {
				held[i] += q
			}
			if st == "PAID" {
				paid[i] += q
			}
		}
	}
	return status, held, paid
}

// countUnbacked counts into r the orders answered 201 that the orders table does not
// hold (status maps the ids it holds).
func (s *sale) countUnbacked(r *Report, status map[string]string) {
	for _, o := range s.rec.orders {
		if _, ok := status[o.id]; !ok {
			r.Unbacked++
		}
	}
}

// countOversold counts into r the units held per SKU beyond its stock, and the units
// below 0 of every shard item of skus (the SKUs table).
func (s *sale) countOversold(r *Report, held []int, skus []map[string]any) {
	for i := range s.skuIDs {
		r.Oversold += max(0, held[i]-s.cfg.Stock)
	}
	for _, it := range skus {
		if it["kind"] == "SHARD" && num(it["available"]) < 0 {
			r.Oversold -= num(it["available"])
		}
	}
}

// countFalseStockOuts counts into r the STOCK_OUT answers given while the SKU surely
// held a unit, from the ledger's evidence: a reservation takes its unit no sooner
// than its entry's at; a release gives it back no later than the end of the
// invocation that wrote it (the latest-ending closeOrder or payCallback invocation
// that had started by then).
func (s *sale) countFalseStockOuts(r *Report, ledger []map[string]any, index map[string]int) {
	takes := make([][]time.Time, len(s.skuIDs))
	gives := make([][]time.Time, len(s.skuIDs))
	done := s.releaseBound()
	for _, e := range ledger {
		i, ok := index[str(e["skuId"])]
		if !ok {
			continue
		}
		at := time.UnixMilli(int64(num(e["at"])))
		for range max(num(e["qty"]), 0) {
			switch e["op"] {
			case string(inventory.OpReserve):
				takes[i] = append(takes[i], at)
			case string(inventory.OpRelease):
				if t, ok := done(at); ok {
					gives[i] = append(gives[i], t)
				}
			}
		}
	}
	for i := range s.skuIDs {
		r.FalseStockOut += booktest.FalseStockOuts(s.cfg.Stock, s.rec.stockOuts[i], takes[i], gives[i])
	}
}

// summariseSKUs fills r's per-SKU summaries: shards, stock, orders created, units
// paid (paid, per SKU) and when the SKU was first seen sold out.
func (s *sale) summariseSKUs(r *Report, paid []int) {
	rec := s.rec
	r.SKUs = make([]SKUSummary, len(s.skuIDs))
	created := make([]int, len(s.skuIDs))
	for _, o := range rec.orders {
		created[o.sku]++
	}
	for i, id := range s.skuIDs {
		r.SKUs[i] = SKUSummary{SKUID: id, Shards: s.shards[i], Stock: s.cfg.Stock, Created: created[i], Paid: paid[i]}
		if t := rec.soldOutAt[i]; t >= 0 {
			sec := t.Seconds()
			r.SKUs[i].SellOutSeconds = &sec
		}
	}
}

// releaseBound returns, for a ledger entry written at at (ms precision), the latest
// end of a closeOrder or payCallback invocation that had started by then (at + 1 ms:
// at is truncated): the moment by which that write was surely done.
func (s *sale) releaseBound() func(at time.Time) (time.Time, bool) {
	s.invMu.Lock()
	w := slices.Clone(s.invWindows)
	s.invMu.Unlock()
	slices.SortFunc(w, func(a, b window) int { return a.start.Compare(b.start) })
	ends := make([]time.Time, len(w)) // prefix maximum of the ends
	for i := range w {
		ends[i] = w[i].end
		if i > 0 && ends[i-1].After(ends[i]) {
			ends[i] = ends[i-1]
		}
	}
	return func(at time.Time) (time.Time, bool) {
		n, _ := slices.BinarySearchFunc(w, at.Add(time.Millisecond), func(a window, t time.Time) int { return a.start.Compare(t) })
		if n == 0 {
			return time.Time{}, false
		}
		return ends[n-1], true
	}
}

// summarise fills the rates, latencies, units, throttles and cost.
func (s *sale) summarise(r *Report, e *engine, end time.Time) {
	s.summariseRates(r)
	s.summariseThrottles(r)
	write, read := s.summariseUnits(r)
	r.LagMs = float64(e.lag.Load()) / s.slow / float64(time.Millisecond)
	r.ModelSeconds = s.modelTime(end).Seconds()
	s.summariseCost(r, write, read)
}

// summariseRates fills the timeline and the orders' and page views' counts, rates
// and latencies.
func (s *sale) summariseRates(r *Report) {
	rec := s.rec
	r.Timeline = Timeline{BucketSeconds: bucket.Seconds(), Orders: rec.series[seriesOrders], Pages: rec.series[seriesPages],
		Throttled: rec.series[seriesThrottled], Failed: rec.series[seriesFailed], IndexThrottles: rec.series[seriesIndex],
		ItemThrottles: rec.series[seriesItem], TableThrottles: rec.series[seriesTableQuota]}
	perSecond := int(time.Second / bucket)
	r.Orders.Created = len(rec.orders)
	r.Orders.PerSecondPeak = perSecondPeak(r.Timeline.Orders, perSecond)
	if n := len(r.Timeline.Orders); n > 0 {
		r.Orders.PerSecondMean = float64(r.Orders.Created) / (float64(n) * bucket.Seconds()) // from the start to the last order
	}
	r.Orders.P50Ms, r.Orders.P99Ms = percentile(rec.orderLatency, 50), percentile(rec.orderLatency, 99)
	r.Orders.BuyerP99Ms = percentile(rec.buyerLatency, 99)
	r.Pages.Served = len(rec.pageLatency)
	r.Pages.PerSecondPeak = perSecondPeak(r.Timeline.Pages, perSecond)
	r.Pages.P50Ms, r.Pages.P99Ms = percentile(rec.pageLatency, 50), percentile(rec.pageLatency, 99)
}

// summariseThrottles fills the throttles of DynamoDB's, API Gateway's and Lambda's
// models by limit, when each limit first throttled, and the limit that throttled
// the most (the first by name among equals).
func (s *sale) summariseThrottles(r *Report) {
	r.Throttles = map[string]int{}
	first := map[string]time.Time{}
	for _, src := range []struct {
		counts map[string]int
		first  map[string]time.Time
	}{
		{s.model.Throttled(), s.model.FirstThrottled()},
		{s.gateway.Throttled(), s.gateway.FirstThrottled()},
		{s.lambda.Throttled(), s.lambda.FirstThrottled()},
	} {
		maps.Copy(r.Throttles, src.counts)
		maps.Copy(first, src.first)
	}
	for name, at := range first {
		r.FirstThrottles = append(r.FirstThrottles, FirstThrottle{Limit: name, AtSeconds: s.modelTime(at).Seconds(), Count: r.Throttles[name]})
	}
	slices.SortFunc(r.FirstThrottles, func(a, b FirstThrottle) int {
		return cmp.Or(cmp.Compare(a.AtSeconds, b.AtSeconds), cmp.Compare(a.Limit, b.Limit))
	})
	most := 0
	for _, name := range slices.Sorted(maps.Keys(r.Throttles)) {
		if r.Throttles[name] > most {
			r.Binding, most = name, r.Throttles[name]
		}
		if strings.HasPrefix(name, "partition ") {
			r.SharedPartitionThrottles += r.Throttles[name]
		}
	}
	r.Partitions, r.IsolatedKeys = s.model.Partitions()
}

// summariseUnits fills the DynamoDB units per request of each kind, per page view,
// per refused buyer and per order created, and returns the sale's write and read
// units in all.
func (s *sale) summariseUnits(r *Report) (write, read float64) {
	rec := s.rec
	r.Units = map[string]UnitsSummary{}
	for kind, u := range rec.units {
		n := float64(max(u.requests, 1))
		typical, wrote := u.typical()
		r.Units[kind] = UnitsSummary{Requests: u.requests, WriteUnits: u.write / n, MinWriteUnits: u.minWrite,
			TypicalWriteUnits: typical, Wrote: wrote, ReadUnits: u.read / n,
			DynamoDBRequests: float64(u.dynamoDB) / n, DynamoDBThrottles: float64(u.throttled) / n}
	}
	for name, m := range s.meters {
		r.Units[name] = UnitsSummary{Requests: 1, WriteUnits: m.WriteUnits(), MinWriteUnits: m.WriteUnits(), ReadUnits: m.ReadUnits(), DynamoDBRequests: float64(m.Requests()), DynamoDBThrottles: float64(m.Throttles())}
	}
	for _, c := range s.model.Stats() {
		write += c.WriteUnits
		read += c.ReadUnits
	}
	pages := rec.units["page views"]
	if pages != nil && r.Pages.Served > 0 {
		r.ReadUnitsPerPageView = pages.read / float64(r.Pages.Served)
	}
	if rec.refusedBuyers > 0 {
		r.WriteUnitsPerRefusedBuyer = rec.refusedWU / float64(rec.refusedBuyers)
		r.ReadUnitsPerRefusedBuyer = rec.refusedRU / float64(rec.refusedBuyers)
		r.RefusedBuyerUnitsByOperation = perBuyer(rec.refusedOps[:], rec.refusedBuyers)
	}
	r.RefusedAfter = split(rec.refusedLate, rec.refusedLateWU, rec.refusedLateRU)
	r.RefusedInFlight = split(rec.refusedBuyers-rec.refusedLate, rec.refusedWU-rec.refusedLateWU, rec.refusedRU-rec.refusedLateRU)
	if r.Orders.Created > 0 {
		pageWrites := 0.0
		if pages != nil {
			pageWrites = pages.write
		}
		r.WriteUnitsPerOrder = (write - pageWrites - rec.refusedWU) / float64(r.Orders.Created)
	}
	return write, read
}

// summariseCost fills what Lambda and SQS did, the sale's usage (write and read are
// its DynamoDB units; API requests are those API Gateway admitted; CloudWatch Logs,
// X-Ray and each buyer's login as plan.Design counts them, the login signing a new
// token), its cost, the cost of a million orders line by line, and the fixed cost of
// the sale apart: createOrder's and closeOrder's provisioned environments
// (Config.Warm, Config.WarmClose) for the sale,
// billed 5 minutes at least, and the tables' warm throughput raised above a new
// table's.
func (s *sale) summariseCost(r *Report, write, read float64) {
	x := plan.Today()
	r.Lambda = s.lambda.Stats()
	r.EnvironmentsPeak, r.Environments = map[string]int{}, s.liveTimeline()
	for name, f := range r.Lambda {
		if f.PeakLive > 0 {
			r.EnvironmentsPeak[name] = f.PeakLive
		}
	}
	if s.edge != nil {
		r.Pages.CloudFront = true
		r.Pages.OriginFetches, r.Pages.CacheHits = s.edge.counts()
	}
	r.SQSRequests = map[string]int64{"all": s.sqsCalls.Load()}
	u := plan.Usage{WriteRequestUnits: write, ReadRequestUnits: read, SQSRequests: float64(s.sqsCalls.Load())}
	for _, f := range r.Lambda {
		u.LambdaRequests += float64(f.Invocations)
		u.LambdaGBSeconds += f.Busy.Seconds() * float64(f.MemoryMB) / 1024
	}
	for route, n := range s.gateway.Requests() {
		if route != "" {
			u.APIRequests += float64(n)
		}
	}
	for _, n := range s.gateway.Throttled() {
		u.APIRequests -= float64(n)
	}
	u.LogBytes = x.LogBytes(u.LambdaRequests, u.APIRequests)
	u.XRayTraces = x.XRayTraces(u.LambdaRequests, r.ModelSeconds)
	u = u.Add(x.LoginUsage(float64(s.cfg.Buyers), true))
	m := s.model.Config()
	warm := x.PreWarmUsage(cmp.Or(m.WarmWriteUnits, m.TableWriteUnits), cmp.Or(m.WarmReadUnits, m.TableReadUnits)).
		Add(x.IndexPreWarmUsage(cmp.Or(m.IndexWarmWriteUnits, m.TableWriteUnits)))
	u.WarmWriteUnits, u.WarmReadUnits = warm.WarmWriteUnits, warm.WarmReadUnits
	u.ProvisionedGBSeconds = plan.ProvisionedGBSeconds(s.cfg.Warm, float64(r.Lambda[createOrderFunction].MemoryMB), r.ModelSeconds) +
		plan.ProvisionedGBSeconds(s.cfg.WarmClose, float64(r.Lambda[closeOrderFunction].MemoryMB), r.ModelSeconds)
	r.Usage, r.Cost = u, s.cfg.Prices.Cost(u)
	r.USDFixedPerSale = r.Cost.Fixed()
	r.USDKMSKeysPerMonth = float64(x.KMSKeys) * s.cfg.Prices.KMSKeyMonths
	if r.Orders.Created > 0 {
		r.USDPerMillionOrders = r.Cost.Scale(1e6 / float64(r.Orders.Created))
	}
}

// createOrderFunction and closeOrderFunction are the template's createOrder and
// closeOrder functions, whose environments Config.Warm and Config.WarmClose provision.
const (
	createOrderFunction = "CreateOrderFunction"
	closeOrderFunction  = "CloseOrderFunction"
)

// settings echoes the configuration.
func (s *sale) settings() Settings {
	c := s.cfg
	st := Settings{
		SKUs: c.SKUs, Stock: c.Stock, Shards: s.shards[0], LimitPerUser: c.LimitPerUser, Buyers: c.Buyers,
		OverSeconds: c.Over.Seconds(), Spike: c.Spike, PageViews: c.PageViews,
		PayRatio: c.PayRatio, CancelRatio: c.CancelRatio, LateRatio: c.LateRatio,
		PaymentTimeoutSeconds: c.PaymentTimeout.Seconds(), Seed: c.Seed,
		APIRate: cmp.Or(c.Gateway.Rate, quotas.AccountRequestsPerSecond), APIBurst: cmp.Or(c.Gateway.Burst, quotas.AccountBurst),
		LambdaConcurrency: cmp.Or(c.Lambda.AccountConcurrency, quotas.AccountConcurrency), ColdStartMs: float64(c.Lambda.ColdStart) / float64(time.Millisecond),
		PartitionWriteUnits: s.model.Config().WriteUnits, PeakBuyersPerSecond: c.PeakBuyers(),
		WarmWriteUnits: s.model.Config().WarmWriteUnits, WarmReadUnits: s.model.Config().WarmReadUnits,
		IndexWarmWriteUnits: s.model.Config().IndexWarmWriteUnits, IsolateAfterSeconds: s.model.Config().IsolateAfter.Seconds(),
		Warm: c.Warm, WarmClose: c.WarmClose, Reserved: maps.Clone(c.Reserved),
	}
	if st.Reserved == nil {
		st.Reserved = map[string]int{}
	}
	if t := s.stageThrottle(); t != nil {
		st.StageRate, st.StageBurst = t.Rate, float64(t.Burst)
	}
	return st
}

// percentile is the p-th percentile of ms (0 for none).
func percentile(ms []float32, p int) float64 {
	if len(ms) == 0 {
		return 0
	}
	sorted := slices.Clone(ms)
	slices.Sort(sorted)
	return float64(sorted[min(len(sorted)-1, len(sorted)*p/100)])
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int { f, _ := v.(float64); return int(f) }

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for a person: the sale, the answers, the units, the
// cost, the limits that refused requests (first to refuse on top), the SKUs and the
// verdict.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	c := r.Config
	fmt.Fprintf(tw, "sale\t%d SKUs × %d units on %d shards, %d buyers over %.0f s (%.0f%% in the first tenth, peak %.0f/s), %d page views each\n",
		c.SKUs, c.Stock, c.Shards, c.Buyers, c.OverSeconds, c.Spike*100, c.PeakBuyersPerSecond, c.PageViews)
	fmt.Fprintf(tw, "quotas\tAPI account %.0f/s (burst %d), routes %.0f/s (burst %.0f), Lambda %d concurrent, partitions %.0f WU/s, tables warm to %.0f WU/s and %.0f RU/s, indexes to %.0f WU/s (0: their quota)\n",
		c.APIRate, c.APIBurst, c.StageRate, c.StageBurst, c.LambdaConcurrency, c.PartitionWriteUnits, c.WarmWriteUnits, c.WarmReadUnits, c.IndexWarmWriteUnits)
	fmt.Fprintf(tw, "lambda\t%d createOrder and %d closeOrder environments warm at the start (-warm, -warm-close); reserved concurrency %s\n",
		c.Warm, c.WarmClose, reservations(c.Reserved))
	fmt.Fprintf(tw, "partitions\t%s\n", r.partitionsLine())
	fmt.Fprintf(tw, "clock\t%.1f× slower: %.0f s of sale in %.0f s wall, %.0f s CPU; worst lag %.1f ms at 1×\n",
		r.Slowdown, r.ModelSeconds, r.WallSeconds, r.CPUSeconds, r.LagMs)
	fmt.Fprintf(tw, "orders\t%d created, peak %.0f/s, mean %.0f/s, p50 %.1f ms, p99 %.1f ms per request, p99 %.1f ms a buyer waits (first tap to final answer); at the end %s\n",
		r.Orders.Created, r.Orders.PerSecondPeak, r.Orders.PerSecondMean, r.Orders.P50Ms, r.Orders.P99Ms, r.Orders.BuyerP99Ms, counts(r.Orders.ByStatus))
	fmt.Fprintf(tw, "pages\t%d served, peak %.0f/s, p50 %.1f ms, p99 %.1f ms\n", r.Pages.Served, r.Pages.PerSecondPeak, r.Pages.P50Ms, r.Pages.P99Ms)
	if r.Pages.CloudFront {
		fmt.Fprintf(tw, "cloudfront\t%d page views sent to the API, %d answered from the cache\n", r.Pages.OriginFetches, r.Pages.CacheHits)
	}
	fmt.Fprintf(tw, "environments\t%s (most alive at once)\n", counts(r.EnvironmentsPeak))
	fmt.Fprintf(tw, "answers\t%s\n", counts(r.Answers))
	fmt.Fprintf(tw, "buyers left\t%s\n", counts(r.Buyers))
	fmt.Fprintf(tw, "units\t%.1f write units per order's life, %.2f read units per page view, %.2f write and %.2f read units per refused buyer (%d who asked before their SKU was seen sold out: %.2f and %.2f; %d after: %.2f and %.2f)\n",
		r.WriteUnitsPerOrder, r.ReadUnitsPerPageView, r.WriteUnitsPerRefusedBuyer, r.ReadUnitsPerRefusedBuyer,
		r.RefusedInFlight.Buyers, r.RefusedInFlight.WriteUnitsPerBuyer, r.RefusedInFlight.ReadUnitsPerBuyer,
		r.RefusedAfter.Buyers, r.RefusedAfter.WriteUnitsPerBuyer, r.RefusedAfter.ReadUnitsPerBuyer)
	if len(r.RefusedBuyerUnitsByOperation) > 0 {
		fmt.Fprintf(tw, "refused\tper refused buyer by call: %s\n", byOperation(r.RefusedBuyerUnitsByOperation))
	}
	m, f := r.USDPerMillionOrders, r.USDFixedPerSale
	fmt.Fprintf(tw, "cost\t$%.2f per million orders: DynamoDB $%.2f, Lambda requests $%.2f and GB-seconds $%.2f, API Gateway $%.2f, SQS $%.2f, KMS signing at login $%.2f, CloudWatch Logs $%.2f, X-Ray $%.2f, provisioned concurrency $%.2f, pre-warming $%.2f\n",
		m.Total, m.DynamoDB, m.LambdaRequests, m.LambdaGBSeconds, m.APIGateway, m.SQS, m.KMS, m.Logs, m.XRay, m.ProvisionedConcurrency, m.PreWarming)
	fmt.Fprintf(tw, "fixed\t$%.2f for this sale whatever its orders (provisioned concurrency $%.2f, pre-warming $%.2f; in the lines above, spread over its orders); the sale in all $%.2f; KMS keys $%.2f a month\n",
		f.Total, f.ProvisionedConcurrency, f.PreWarming, r.Cost.Total, r.USDKMSKeysPerMonth)
	fmt.Fprintf(tw, "verdict\t%s\n", r.Verdict())
	if err := tw.Flush(); err != nil {
		return err
	}
	r.writeDetails(w)
	return nil
}

// writeDetails writes the report's lists: the units per request by what it was for,
// the limits that refused requests (first to refuse on top) and the SKUs.
func (r *Report) writeDetails(w io.Writer) {
	fmt.Fprintln(w, "\nDynamoDB units per request, by what it was for:")
	for _, kind := range slices.Sorted(maps.Keys(r.Units)) {
		u := r.Units[kind]
		fmt.Fprintf(w, "  %-24s %7d × %6.2f WU (least %.0f), %6.2f RU, %5.2f DynamoDB requests, %.3f throttled\n",
			kind, u.Requests, u.WriteUnits, u.MinWriteUnits, u.ReadUnits, u.DynamoDBRequests, u.DynamoDBThrottles)
	}
	fmt.Fprintln(w, "\nLimits that refused a request, first to refuse first:")
	if len(r.FirstThrottles) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for i, t := range r.FirstThrottles {
		if i == 15 {
			fmt.Fprintf(w, "  … and %d more (-json lists them all)\n", len(r.FirstThrottles)-15)
			break
		}
		fmt.Fprintf(w, "  %8.2f s %8d  %s\n", t.AtSeconds, t.Count, t.Limit)
	}
	fmt.Fprintln(w, "\nSKUs:")
	for _, sku := range r.SKUs {
		sold := "never sold out"
		if sku.SellOutSeconds != nil {
			sold = fmt.Sprintf("sold out at %.2f s", *sku.SellOutSeconds)
		}
		fmt.Fprintf(w, "  %s  %d shards, %d orders, %d paid, %s\n", sku.SKUID, sku.Shards, sku.Created, sku.Paid, sold)
	}
}

// partitionsLine says how DynamoDB's keys were placed: every key on a partition of
// its own, or the partitions of each table and index, the keys split for heat
// isolated and the refusals of shared partitions.
func (r *Report) partitionsLine() string {
	if r.Config.IsolateAfterSeconds <= 0 {
		return "every key on a partition of its own"
	}
	return fmt.Sprintf("%s; keys hashed onto them, a key isolated after %g s hot: %d isolated, %d refusals on a shared partition",
		counts(r.Partitions), r.Config.IsolateAfterSeconds, r.IsolatedKeys, r.SharedPartitionThrottles)
}

// Verdict is one line: PASS or FAIL with the checks, and the binding limit.
func (r *Report) Verdict() string {
	word := "PASS"
	if !r.Passed() {
		word = "FAIL"
	}
	binding := "no limit refused a request"
	if r.Binding != "" {
		binding = fmt.Sprintf("binding limit: %s (%d refusals)", r.Binding, r.Throttles[r.Binding])
	}
	return fmt.Sprintf("%s: oversold %d, false STOCK_OUT %d, unbacked %d, unsettled %d, books problems %d, reconcile clean %t; %s",
		word, r.Oversold, r.FalseStockOut, r.Unbacked, r.Unsettled, len(r.BooksProblems), r.ReconcileClean, binding)
}

// counts formats a count map as "k n, k n" in key order.
func counts(m map[string]int) string {
	return joined(m, "%s %d")
}

// reservations says the reserved concurrency -reserved set (m), as the flag takes
// it (FUNCTION=N, … sorted), or that there was none.
func reservations(m map[string]int) string {
	if len(m) == 0 {
		return "as the template reserves it (no -reserved)"
	}
	return joined(m, "%s=%d") + " (-reserved; the template's for the rest)"
}

// joined is m's entries, sorted by key, each formatted with format (key, value) and
// comma-separated; "none" for none.
func joined(m map[string]int, format string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf(format, k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
