package flashsale

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of one Run. Counts are buyers unless they say requests; times
// are milliseconds; stock is in units; money is in fen.
type Report struct {
	// Summary is the run in one sentence, for the shop's owner: the units sold of the
	// stock and how long it took, the money taken and refunded, and "nothing oversold"
	// or the first check that failed (see summary).
	Summary string `json:"summary"`
	// RunAt is when the sale began (the first order was sent); Version names the build
	// that ran it (see buildVersion).
	RunAt   time.Time `json:"runAt"`
	Version string    `json:"version"`
	// BaseURL and SKU say what was sold; Price is the SKU's unit price before the sale.
	BaseURL string `json:"baseUrl"`
	SKU     string `json:"sku"`
	Price   int64  `json:"price"`
	// Buyers, Concurrency and Qty echo the configuration.
	Buyers      int `json:"buyers"`
	Concurrency int `json:"concurrency"`
	Qty         int `json:"qty"`
	// Identities is the number of distinct identities the buyers used.
	Identities int `json:"identities"`
	// SameUser, Idempotency and TimeoutMs (per request) echo the configuration.
	SameUser    bool    `json:"sameUser"`
	Idempotency bool    `json:"idempotency"`
	TimeoutMs   float64 `json:"timeoutMs"`

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
	// PaidOrders counts orders read back PAID after settling (refunded ones included,
	// when read before their refund); PaidUnits is that × qty; TakenFen is what they
	// paid, PaidUnits × the price.
	PaidOrders int   `json:"paidOrders"`
	PaidUnits  int   `json:"paidUnits"`
	TakenFen   int64 `json:"takenFen"`
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
	// RefundedOrders those read back REFUNDED, RefundedFen their money (RefundedOrders
	// × qty × the price), RefundAnswers the refund route's answers by status and code
	// (202 accepted), RefundWaitMs how long each order was read until REFUNDED.
	RefundRatio    float64  `json:"refundRatio,omitempty"`
	Refunds        int      `json:"refunds,omitempty"`
	RefundedUnits  int      `json:"refundedUnits,omitempty"`
	RefundedOrders int      `json:"refundedOrders,omitempty"`
	RefundedFen    int64    `json:"refundedFen,omitempty"`
	RefundAnswers  []Answer `json:"refundAnswers,omitempty"`
	RefundWaitMs   float64  `json:"refundWaitMs,omitempty"`
	// StartOnHand and OnHand are the SKU's on-hand units before the sale and after
	// settling, read through GET /admin/skus/{skuId}; OnHand is absent when its read
	// failed.
	StartOnHand int  `json:"startOnHand"`
	OnHand      *int `json:"onHand,omitempty"`
}

// newSettlement summarises st, for a SKU of price fen; nil for nil.
func newSettlement(cfg Config, price int64, st *settlement) *Settlement {
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
	s.TakenFen = int64(s.PaidUnits) * price
	s.RefundRatio, s.Refunds, s.RefundedUnits = cfg.RefundRatio, len(st.refunds), st.refundedUnits(cfg.Qty)
	var refunds []attempt
	for _, r := range st.refunds {
		refunds = append(refunds, r.answer)
		if r.readErr == nil && r.status == statusRefunded {
			s.RefundedOrders++
		}
	}
	if cfg.RefundRatio > 0 {
		s.RefundAnswers, s.RefundWaitMs = tally(refunds), ms(cfg.RefundWait)
		s.RefundedFen = int64(s.RefundedOrders*cfg.Qty) * price
	}
	s.StartOnHand = st.onHand.start
	if st.onHand.err == nil {
		end := st.onHand.end
		s.OnHand = &end
	}
	return s
}

// newReport assembles the report of a sale that began at began and lasted wall, and
// runs the checks; st is nil when nothing was settled.
func newReport(cfg Config, start, end skuView, outcomes []outcome, audit orderAudit, began time.Time, wall time.Duration, st *settlement) *Report {
	answers := countAnswers(outcomes)
	f := newFacts(cfg, start, end, outcomes, audit, answers, st)
	r := &Report{
		RunAt: began, Version: buildVersion(),
		BaseURL: cfg.BaseURL, SKU: cfg.SKU, Price: start.Price,
		Buyers: cfg.Buyers, Concurrency: cfg.Concurrency, Qty: cfg.Qty,
		Identities: cfg.identities(), SameUser: cfg.SameUser, Idempotency: cfg.Idempotency, TimeoutMs: ms(cfg.Timeout),
		Answers: answers, Busy: f.finalBusy, TransportErrors: f.noAnswer,
		WallMs:         ms(wall),
		StartAvailable: start.Available, Demand: cfg.Buyers * cfg.Qty,
		Created: audit.created, Reserved: audit.created * cfg.Qty,
		EndAvailable: end.Available, EndStatus: end.Status,
		Settlement: newSettlement(cfg, start.Price, st),
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
	r.Summary = r.summary()
	return r
}

// summary is the run in one sentence: "Sold 30 of 30 cup-01 in 0.9 s (30 orders from
// 300 buyers); took ¥8,379.00 and refunded ¥1,596.00; nothing oversold, and every check
// passed." Without payments it says no money was taken; when a check failed it ends
// with the first one that did, and when overselling could not be ruled out (a check
// skipped for unknown outcomes), it says so.
func (r *Report) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Sold %d of %d %s in %s (%d orders from %d buyers)", r.Reserved, r.StartAvailable, r.SKU, duration(r.WallMs), r.Created, r.Buyers)
	switch s := r.Settlement; {
	case s == nil || s.Payers == 0:
		b.WriteString("; no money taken (nobody paid in this run)")
	case s.RefundRatio > 0:
		fmt.Fprintf(&b, "; took %s from %d paid orders and refunded %s for %d", yuan(s.TakenFen), s.PaidOrders, yuan(s.RefundedFen), s.RefundedOrders)
	default:
		fmt.Fprintf(&b, "; took %s from %d paid orders, refunded nothing", yuan(s.TakenFen), s.PaidOrders)
	}
	for _, c := range r.Checks {
		if c.Result == ResultFail {
			fmt.Fprintf(&b, "; but the %q check FAILED: %s.", c.Name, c.Detail)
			return b.String()
		}
	}
	for _, c := range r.Checks {
		if c.Name == checkOversoldName && c.Result != ResultPass {
			fmt.Fprintf(&b, "; overselling could not be ruled out: %s.", c.Detail)
			return b.String()
		}
	}
	b.WriteString("; nothing oversold, and every check passed.")
	return b.String()
}

// yuan writes fen as yuan with thousands separators, e.g. 837900 → "¥8,379.00".
func yuan(fen int64) string {
	sign := ""
	if fen < 0 {
		sign, fen = "-", -fen
	}
	whole := strconv.FormatInt(fen/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s¥%s.%02d", sign, whole, fen%100)
}

// duration writes a wall time in ms for people: "0.9 s", "12.3 s", "2 min 05 s".
func duration(ms float64) string {
	if ms < 60_000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	s := int(math.Round(ms / 1000))
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}

// buildVersion names the build running this code, from the binary's build information
// (runtime/debug.ReadBuildInfo): the main module's version when it has one (a tagged
// or pseudo-version), the VCS commit and its time when the build recorded them (go
// build stamps them unless -buildvcs=false; "+modified" for uncommitted changes), and
// the Go version. go run records no commit: then, when the current directory is in a
// git checkout of the main module, it names what `git describe --always --dirty` says
// of that working tree (which go run built from).
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown build, " + runtime.Version()
	}
	parts := []string{cmp.Or(info.Main.Version, "(devel)")}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	switch rev := vcs["vcs.revision"]; {
	case rev != "":
		commit := "commit " + rev[:min(len(rev), 12)]
		if at := vcs["vcs.time"]; at != "" {
			commit += " of " + at
		}
		if vcs["vcs.modified"] == "true" {
			commit += " +modified"
		}
		parts = append(parts, commit)
	case info.Main.Path != "":
		if tree := describeWorkingTree(info.Main.Path); tree != "" {
			parts = append(parts, "working tree "+tree+" (git describe)")
		}
	}
	return strings.Join(append(parts, info.GoVersion), ", ")
}

// moduleLine finds the module path of a go.mod file (Go Modules Reference, "go.mod
// files": the module directive).
var moduleLine = regexp.MustCompile(`(?m)^module\s+"?([^"\s]+)"?\s*$`)

// describeWorkingTree returns `git describe --always --dirty` of the git checkout the
// current directory is in, when its go.mod declares module; "" otherwise (no git, not
// a checkout, another module, or git taking over 2 s).
func describeWorkingTree(module string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return ""
	}
	mod, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(top)), "go.mod"))
	if m := moduleLine.FindSubmatch(mod); err != nil || m == nil || string(m[1]) != module {
		return ""
	}
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
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

// WriteText writes the report for people: the summary sentence, the run's date and
// build, answers, latency, throughput, stock, the settlement, notes and the
// verification lines, ending with "result: PASS" or "result: FAIL".
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	p("%s", r.Summary)
	p("run %s, build %s", r.RunAt.Format("2006-01-02 15:04:05 MST"), r.Version)
	p("")
	p("flashsale: %d buyers x qty %d of %s (%s) at %s, concurrency %d", r.Buyers, r.Qty, r.SKU, yuan(r.Price), r.BaseURL, r.Concurrency)
	p("identities %d, idempotency keys %s, timeout %s per request", r.Identities, onOff(r.Idempotency), duration(r.TimeoutMs))
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
	p("paid %d orders = %d units = %s taken, cancelled %d orders = %d units released; available after %d (%s)",
		s.PaidOrders, s.PaidUnits, yuan(s.TakenFen), s.CancelledOrders, s.ReleasedUnits, s.Available, s.Status)
	if s.RefundRatio > 0 {
		p("refunds: ratio %g of %d paid = %d refunded (restock), %d units back, %d read back REFUNDED = %s refunded",
			s.RefundRatio, s.PaidOrders, s.Refunds, s.RefundedUnits, s.RefundedOrders, yuan(s.RefundedFen))
		p("refund answers\torders")
		for _, a := range s.RefundAnswers {
			p("  %s\t%d", answerLabel(a), a.Count)
		}
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
