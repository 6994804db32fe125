package flashsale

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Report is the outcome of one Run. Counts are buyers unless they say requests; times
// are milliseconds; stock is in units.
type Report struct {
	// BaseURL and SKU say what was sold.
	BaseURL string `json:"baseUrl"`
	SKU     string `json:"sku"`
	// Buyers, Concurrency and Qty echo the configuration.
	Buyers      int `json:"buyers"`
	Concurrency int `json:"concurrency"`
	Qty         int `json:"qty"`
	// Identities is the number of distinct identities the buyers used.
	Identities int `json:"identities"`
	// SameUser and Idempotency echo the configuration.
	SameUser    bool `json:"sameUser"`
	Idempotency bool `json:"idempotency"`

	// Answers counts the buyers' final answers by HTTP status and error code.
	Answers []Answer `json:"answers"`
	// Requests counts HTTP attempts of POST /orders, Retries the ones that were retries.
	Requests int `json:"requests"`
	Retries  int `json:"retries"`
	// Replayed counts buyers whose order came back as an idempotent replay
	// (200, Idempotent-Replayed: true): a retry found the order an earlier attempt made.
	Replayed int `json:"replayed"`
	// Busy counts buyers whose final answer was 503 BUSY (honest back-pressure).
	Busy int `json:"busy"`
	// TransportErrors counts buyers whose final attempt got no HTTP answer.
	TransportErrors int `json:"transportErrors"`

	// Latency summarises the buyers' waits.
	Latency Latency `json:"latency"`
	// WallMs is the duration of the sale, first request sent to last answer, ms.
	WallMs float64 `json:"wallMs"`
	// OrdersPerSec is created orders ÷ wall time; RequestsPerSec is Requests ÷ wall time.
	OrdersPerSec   float64 `json:"ordersPerSec"`
	RequestsPerSec float64 `json:"requestsPerSec"`

	// StartAvailable is the SKU's available before the sale, units.
	StartAvailable int `json:"startAvailable"`
	// Demand is Buyers × Qty, units.
	Demand int `json:"demand"`
	// Created counts distinct orders answered 200/201.
	Created int `json:"created"`
	// Reserved is Created × Qty, units.
	Reserved int `json:"reserved"`
	// EndAvailable and EndStatus are the SKU read after the sale.
	EndAvailable int    `json:"endAvailable"`
	EndStatus    string `json:"endStatus"`

	// Settlement is what settling the orders did; nil (absent from JSON) when the run
	// settled nothing (PayRatio 0 and not CancelUnpaid).
	Settlement *Settlement `json:"settlement,omitempty"`

	// Checks are the verification lines, in order.
	Checks []Check `json:"checks"`
	// Passed is true when no check failed.
	Passed bool `json:"passed"`
	// Notes are warnings and the assumptions behind the checks.
	Notes []string `json:"notes"`

	// Timeline holds the per-buyer and over-time figures the HTML report draws; it is
	// left out of the JSON report.
	Timeline *Timeline `json:"-"`
}

// Settlement reports the payments and cancels after the sale. Counts are orders unless
// they say units; times are milliseconds.
type Settlement struct {
	// PayRatio and CancelUnpaid echo the configuration.
	PayRatio     float64 `json:"payRatio"`
	CancelUnpaid bool    `json:"cancelUnpaid"`
	// Orders counts the orders settled: created orders with a valid id, each once.
	Orders int `json:"orders"`
	// Payers is round(PayRatio × Orders): the first Payers orders in buyer order were
	// sent POST /_local/pay/{orderId}.
	Payers int `json:"payers"`
	// Cancels counts the orders whose holder sent POST /orders/{orderId}/cancel: the
	// rest when CancelUnpaid, else 0.
	Cancels int `json:"cancels"`
	// PaidOrders counts orders read back PAID after settling; PaidUnits is that × qty.
	PaidOrders int `json:"paidOrders"`
	PaidUnits  int `json:"paidUnits"`
	// CancelledOrders counts orders read back CANCELLED after settling; ReleasedUnits is
	// that × qty, the units given back to available.
	CancelledOrders int `json:"cancelledOrders"`
	ReleasedUnits   int `json:"releasedUnits"`
	// PayAnswers and CancelAnswers count the answers by HTTP status and error code
	// (the contract: pay 204, cancel 200).
	PayAnswers    []Answer `json:"payAnswers"`
	CancelAnswers []Answer `json:"cancelAnswers"`
	// PayLatency and CancelLatency summarise the requests' round trips.
	PayLatency    Latency `json:"payLatency"`
	CancelLatency Latency `json:"cancelLatency"`
	// PayWallMs and CancelWallMs are the durations of the two phases, ms.
	PayWallMs    float64 `json:"payWallMs"`
	CancelWallMs float64 `json:"cancelWallMs"`
	// Available and Status are the SKU read after settling.
	Available int    `json:"available"`
	Status    string `json:"status"`
	// RefundRatio echoes the configuration; Refunds counts the paid orders refunded
	// (round(RefundRatio × PaidOrders)), RefundedUnits the units the API took back,
	// RefundedOrders those read back REFUNDED.
	RefundRatio    float64 `json:"refundRatio,omitempty"`
	Refunds        int     `json:"refunds,omitempty"`
	RefundedUnits  int     `json:"refundedUnits,omitempty"`
	RefundedOrders int     `json:"refundedOrders,omitempty"`
	// StartOnHand and OnHand are the SKU's on-hand units before the sale and after
	// settling, read through GET /admin/skus/{skuId}; OnHand is absent when its read
	// failed.
	StartOnHand int  `json:"startOnHand"`
	OnHand      *int `json:"onHand,omitempty"`
}

// newSettlement summarises st; nil for nil.
func newSettlement(cfg Config, st *settlement) *Settlement {
	if st == nil {
		return nil
	}
	pays, cancels := st.answers(true), st.answers(false)
	s := &Settlement{
		PayRatio: cfg.PayRatio, CancelUnpaid: cfg.CancelUnpaid,
		Orders: len(st.orders), Payers: st.payers, Cancels: len(cancels),
		PaidOrders: st.paidOrders(), CancelledOrders: st.cancelledOrders(),
		PayAnswers: tally(pays), CancelAnswers: tally(cancels),
		PayLatency: latency(pays), CancelLatency: latency(cancels),
		PayWallMs: ms(st.payWall), CancelWallMs: ms(st.cancelWall),
		Available: st.sku.Available, Status: st.sku.Status,
	}
	s.PaidUnits, s.ReleasedUnits = s.PaidOrders*cfg.Qty, s.CancelledOrders*cfg.Qty
	s.RefundRatio, s.Refunds, s.RefundedUnits = cfg.RefundRatio, len(st.refunds), st.refundedUnits(cfg.Qty)
	for _, r := range st.refunds {
		if r.readErr == nil && r.status == statusRefunded {
			s.RefundedOrders++
		}
	}
	s.StartOnHand = st.onHand.start
	if st.onHand.err == nil {
		end := st.onHand.end
		s.OnHand = &end
	}
	return s
}

// newReport assembles the report and runs the checks; st is nil when nothing was settled.
func newReport(cfg Config, start, end skuView, outcomes []outcome, audit orderAudit, wall time.Duration, st *settlement) *Report {
	answers := countAnswers(outcomes)
	f := newFacts(cfg, start, end, outcomes, audit, answers, st)
	r := &Report{
		BaseURL: cfg.BaseURL, SKU: cfg.SKU,
		Buyers: cfg.Buyers, Concurrency: cfg.Concurrency, Qty: cfg.Qty,
		Identities: cfg.identities(), SameUser: cfg.SameUser, Idempotency: cfg.Idempotency,
		Answers: answers, Busy: f.finalBusy, TransportErrors: f.noAnswer,
		WallMs:         ms(wall),
		StartAvailable: start.Available, Demand: cfg.Buyers * cfg.Qty,
		Created: audit.created, Reserved: audit.created * cfg.Qty,
		EndAvailable: end.Available, EndStatus: end.Status,
		Settlement: newSettlement(cfg, st),
		Checks:     f.checks(),
	}
	samples := make([]time.Duration, 0, len(outcomes))
	for _, o := range outcomes {
		r.Requests += len(o.attempts)
		if o.final().replayed {
			r.Replayed++
		}
		samples = append(samples, o.latency())
	}
	r.Retries = r.Requests - len(outcomes)
	r.Latency = summarise(samples)
	r.OrdersPerSec, r.RequestsPerSec = perSecond(r.Created, wall), perSecond(r.Requests, wall)
	r.Passed = r.failed() == 0
	r.Notes = notes(cfg, f)
	return r
}

// failed counts failed checks.
func (r *Report) failed() int {
	n := 0
	for _, c := range r.Checks {
		if c.Result == ResultFail {
			n++
		}
	}
	return n
}

// notes are the warnings that go with a run, then the standing assumptions.
func notes(cfg Config, f facts) []string {
	var n []string
	ids := cfg.identities()
	switch {
	case cfg.SameUser:
		n = append(n, "-same-user: every buyer shares one identity, so the per-user limit refuses most of them with cheap LIMIT_EXCEEDED answers; this flatters latency and throughput. Created orders are checked against contenders (buyers answered with an order or STOCK_OUT) only.")
	case ids < cfg.Buyers:
		n = append(n, fmt.Sprintf("only %d distinct identities for %d buyers: the per-user limit caps the orders; created orders are checked against contenders only.", ids, cfg.Buyers))
	case f.byKind[kindWithdrawn] > f.finalBusy:
		n = append(n, "LIMIT_EXCEEDED or RATE_LIMITED despite distinct buyers: qty may exceed the per-user limit, or these users already bought in an earlier run (pick a new -user-prefix).")
	}
	if len(cfg.Tokens) > 0 {
		n = append(n, "identities come from the bearer tokens' sub claim (deployed API); distinct buyers need distinct tokens.")
	}
	if f.byKind[kindAmbiguous] > 0 && !cfg.Idempotency {
		n = append(n, "some buyers got no definite answer; rerun with -idempotency so that retries with the same key converge.")
	}
	if cfg.PayRatio > 0 {
		n = append(n, "payments go through the local-only route POST /_local/pay/{orderId} (cmd/local), which a deployed API does not serve.")
	}
	if f.start.Available < cfg.Qty {
		n = append(n, fmt.Sprintf("the SKU had %d available at start, less than qty %d: every buyer should get STOCK_OUT.", f.start.Available, cfg.Qty))
	}
	return append(n,
		"the checks assume no other traffic on this SKU during the run (no other orders, cancellations, expiries or restocks, so available only falls) "+
			"and that available read at rest is exact (the contract promises only that it is never too high).")
}

// write renders the report as JSON or text.
func (r *Report) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return r.WriteJSON(w)
	}
	return r.WriteText(w)
}

// WriteJSON writes the report as indented JSON, field names as in the struct tags.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	return nil
}

// WriteText writes the report for people: answers, latency, throughput, stock, notes
// and the verification lines, ending with "result: PASS" or "result: FAIL".
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	p("flashsale: %d buyers x qty %d of %s at %s, concurrency %d", r.Buyers, r.Qty, r.SKU, r.BaseURL, r.Concurrency)
	p("identities %d, idempotency keys %s", r.Identities, onOff(r.Idempotency))
	p("")
	p("final answers\tbuyers")
	for _, a := range r.Answers {
		p("  %s\t%d", answerLabel(a), a.Count)
	}
	p("requests %d (retries %d), replayed orders %d, BUSY %d, no HTTP answer %d", r.Requests, r.Retries, r.Replayed, r.Busy, r.TransportErrors)
	p("latency ms (per buyer, nearest rank)  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f", r.Latency.P50Ms, r.Latency.P90Ms, r.Latency.P99Ms, r.Latency.MaxMs)
	p("wall %.1f ms, %.1f orders/s, %.1f requests/s", r.WallMs, r.OrdersPerSec, r.RequestsPerSec)
	p("stock: start available %d, demand %d, created %d orders = %d units reserved, end available %d (%s)",
		r.StartAvailable, r.Demand, r.Created, r.Reserved, r.EndAvailable, r.EndStatus)
	if r.Settlement != nil {
		p("")
		r.Settlement.writeText(p)
	}
	p("")
	p("notes")
	for _, n := range r.Notes {
		p("  - %s", n)
	}
	p("")
	p("verification")
	for _, c := range r.Checks {
		p("  %s\t%s\t%s", c.Result, c.Name, c.Detail)
	}
	p("result: %s", verdict(r.Passed))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// writeText writes the settlement's lines through p.
func (s *Settlement) writeText(p func(format string, args ...any)) {
	p("settlement: pay ratio %g of %d orders = %d pay, %d cancel (cancel unpaid %s)", s.PayRatio, s.Orders, s.Payers, s.Cancels, onOff(s.CancelUnpaid))
	p("pay answers\torders")
	for _, a := range s.PayAnswers {
		p("  %s\t%d", answerLabel(a), a.Count)
	}
	p("cancel answers\torders")
	for _, a := range s.CancelAnswers {
		p("  %s\t%d", answerLabel(a), a.Count)
	}
	for _, l := range []struct {
		name string
		lat  Latency
		wall float64
	}{{"pay", s.PayLatency, s.PayWallMs}, {"cancel", s.CancelLatency, s.CancelWallMs}} {
		p("%s latency ms (per request, nearest rank)  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f  wall %.1f",
			l.name, l.lat.P50Ms, l.lat.P90Ms, l.lat.P99Ms, l.lat.MaxMs, l.wall)
	}
	p("paid %d orders = %d units, cancelled %d orders = %d units released; available after %d (%s)",
		s.PaidOrders, s.PaidUnits, s.CancelledOrders, s.ReleasedUnits, s.Available, s.Status)
	if s.RefundRatio > 0 {
		p("refunds: ratio %g of %d paid = %d refunded (restock), %d units back, %d read back REFUNDED",
			s.RefundRatio, s.PaidOrders, s.Refunds, s.RefundedUnits, s.RefundedOrders)
	}
	if s.OnHand == nil {
		p("on-hand: %d before the sale, unreadable after settling", s.StartOnHand)
	} else {
		p("on-hand: %d before the sale, %d after settling", s.StartOnHand, *s.OnHand)
	}
}

func verdict(passed bool) Result {
	if passed {
		return ResultPass
	}
	return ResultFail
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
