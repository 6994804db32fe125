package flashsale

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Result is a check's verdict.
type Result string

// Check verdicts. A skipped check could not be decided from the outside for this run
// (its Detail says why) and does not fail the run.
const (
	ResultPass Result = "PASS"
	ResultFail Result = "FAIL"
	ResultSkip Result = "SKIP"
)

// Check is one verification line.
type Check struct {
	// Name says what is checked, e.g. "nothing oversold".
	Name string `json:"name"`
	// Result is PASS, FAIL or SKIP.
	Result Result `json:"result"`
	// Detail gives the numbers compared, or why the check was skipped.
	Detail string `json:"detail"`
}

// kind classifies a buyer's final answer by what it says about stock.
type kind int

const (
	kindOrder      kind = iota // 200/201: an order holds the units
	kindStockOut               // 409 STOCK_OUT: not enough stock
	kindWithdrawn              // BUSY, RATE_LIMITED, LIMIT_EXCEEDED: refused, nothing reserved
	kindAmbiguous              // transport error or 5xx other than BUSY: may or may not have reserved
	kindUnexpected             // any other answer: nothing reserved, but it should not happen
)

// classify sorts an answer by HTTP status (0: no HTTP answer) and error code.
func classify(status int, code string) kind {
	switch {
	case status == http.StatusCreated || status == http.StatusOK:
		return kindOrder
	case status == http.StatusConflict && code == codeStockOut:
		return kindStockOut
	case isBusy(status, code), status == http.StatusTooManyRequests,
		status == http.StatusConflict && code == codeLimitExceeded:
		return kindWithdrawn
	case status == 0 || status >= 500:
		return kindAmbiguous
	}
	return kindUnexpected
}

// isBusy reports the contract's back-pressure answer, 503 BUSY.
func isBusy(status int, code string) bool {
	return status == http.StatusServiceUnavailable && code == codeBusy
}

// facts are what the checks reason about.
type facts struct {
	cfg        Config
	start, end skuView
	audit      orderAudit
	byKind     map[kind]int
	withdrawn  []Answer    // final answers of kind withdrawn
	unexpected []Answer    // final answers of kind ambiguous or unexpected
	early      int         // STOCK_OUT answers received before a later buyer who got an order sent its request
	serverErrs map[int]int // attempts answered 5xx other than 503 BUSY, by status
	busy       int         // attempts answered 503 BUSY
	finalBusy  int         // buyers whose final answer was 503 BUSY
	noAnswer   int         // buyers whose final attempt got no HTTP answer
	settle     *settlement // nil when nothing was settled
}

func newFacts(cfg Config, start, end skuView, outcomes []outcome, audit orderAudit, answers []Answer, st *settlement) facts {
	f := facts{cfg: cfg, start: start, end: end, audit: audit, byKind: make(map[kind]int), serverErrs: make(map[int]int), settle: st}
	for _, a := range answers {
		switch classify(a.Status, a.Code) {
		case kindWithdrawn:
			f.withdrawn = append(f.withdrawn, a)
		case kindAmbiguous, kindUnexpected:
			f.unexpected = append(f.unexpected, a)
		}
	}
	var lastOrderSent time.Time
	for _, o := range outcomes {
		f.byKind[o.kind()]++
		if o.final().busy() {
			f.finalBusy++
		}
		if o.final().err != nil {
			f.noAnswer++
		}
		if o.gotOrder() && o.first().sent.After(lastOrderSent) {
			lastOrderSent = o.first().sent
		}
		for _, a := range o.attempts {
			if a.serverError() {
				f.serverErrs[a.status]++
			}
			if a.busy() {
				f.busy++
			}
		}
	}
	for _, o := range outcomes {
		if o.kind() == kindStockOut && o.final().received.Before(lastOrderSent) {
			f.early++
		}
	}
	return f
}

// checks runs every check in report order; the settlement's checks come last, and only
// when orders were settled.
func (f facts) checks() []Check {
	cs := []Check{
		f.checkCreated(),
		f.checkOversold(),
		f.checkSoldOut(),
		f.checkFalseStockOut(),
		f.checkServerErrors(),
		f.checkAnswers(),
		f.checkOrders(),
	}
	if f.settle != nil {
		cs = append(cs,
			f.checkPayments(),
			f.checkCancels(),
			f.checkSettledAvailable(),
			f.checkSettledOnHand(),
		)
	}
	if f.settle != nil && f.cfg.RefundRatio > 0 {
		cs = append(cs, f.checkRefunds())
	}
	return cs
}

func (f facts) contenders() int { return f.byKind[kindOrder] + f.byKind[kindStockOut] }

// checkCreated: with no other traffic, a correct server sells to every contender (a
// buyer answered with an order or STOCK_OUT) until fewer than qty units remain, so
// created == min(floor(start/qty), contenders). Withdrawn buyers (BUSY, RATE_LIMITED,
// LIMIT_EXCEEDED) reserved nothing by contract and are left out.
func (f facts) checkCreated() Check {
	c := Check{Name: "created orders"}
	fit := f.start.Available / f.cfg.Qty
	want := min(fit, f.contenders())
	detail := fmt.Sprintf("%d created, want min(floor(%d/%d)=%d, contenders %d) = %d",
		f.audit.created, f.start.Available, f.cfg.Qty, fit, f.contenders(), want)
	if len(f.withdrawn) > 0 {
		detail += fmt.Sprintf("; %d buyers withdrew without reserving (%s) and are no contenders",
			f.byKind[kindWithdrawn], answerList(f.withdrawn))
	}
	switch {
	case f.byKind[kindAmbiguous] > 0:
		return c.skip("%d buyers got no definite answer (no HTTP answer or a 5xx other than BUSY): whether they reserved is unknown, so no exact count can be expected", f.byKind[kindAmbiguous])
	case f.audit.created == want:
		return c.pass("%s", detail)
	}
	return c.fail("%s", detail)
}

// checkOversoldName names the check that nothing was oversold (the report's summary
// looks for it).
const checkOversoldName = "nothing oversold"

// checkOversold: orders never claim more than the starting stock, and the SKU's books
// agree with the orders read back.
func (f facts) checkOversold() Check {
	c := Check{Name: checkOversoldName}
	reserved := f.audit.created * f.cfg.Qty
	want := f.start.Available - f.audit.held
	switch {
	case reserved > f.start.Available:
		return c.fail("orders claim %d units, start available was %d: oversold by %d", reserved, f.start.Available, reserved-f.start.Available)
	case f.end.Available < 0:
		return c.fail("end available %d is negative", f.end.Available)
	case f.end.Available == want:
		return c.pass("orders claim %d <= start %d units; end available %d == start %d - held %d", reserved, f.start.Available, f.end.Available, f.start.Available, f.audit.held)
	case f.end.Available < want && f.byKind[kindAmbiguous] > 0:
		return c.skip("end available %d, want start %d - held %d = %d: %d units are held by no known order, and %d buyers' outcomes are unknown", f.end.Available, f.start.Available, f.audit.held, want, want-f.end.Available, f.byKind[kindAmbiguous])
	}
	return c.fail("end available %d, want start %d - held %d = %d", f.end.Available, f.start.Available, f.audit.held, want)
}

// checkSoldOut: once the contenders wanted at least the stock, no further order fits
// (available < qty), and available 0 reads SOLD_OUT. With less demand than stock the
// SKU must not read SOLD_OUT.
func (f facts) checkSoldOut() Check {
	c := Check{Name: "sold out"}
	demand, stock, end := f.cfg.Buyers*f.cfg.Qty, f.start.Available, f.end
	switch {
	case demand < stock && end.Status == skuSoldOut:
		return c.fail("demand %d < stock %d, yet the SKU reads SOLD_OUT (available %d)", demand, stock, end.Available)
	case demand < stock:
		return c.pass("demand %d < stock %d: not sold out (%s, available %d)", demand, stock, end.Status, end.Available)
	case f.contenders()*f.cfg.Qty < stock:
		return c.skip("demand %d >= stock %d, but only %d buyers competed for stock (the others withdrew), so it need not sell out", demand, stock, f.contenders())
	case end.Available >= f.cfg.Qty:
		return c.fail("demand %d >= stock %d, yet %d units (>= qty %d) are still available", demand, stock, end.Available, f.cfg.Qty)
	case end.Available == 0 && end.Status != skuSoldOut:
		return c.fail("available 0 but status %s, want SOLD_OUT", end.Status)
	case end.Status == skuSoldOut && end.Available != 0:
		return c.fail("status SOLD_OUT but available %d, want 0", end.Available)
	case end.Available == 0:
		return c.pass("demand %d >= stock %d: SOLD_OUT, available 0", demand, stock)
	}
	return c.pass("demand %d >= stock %d: %d left, fewer than qty %d, so no further order fits (%s)", demand, stock, end.Available, f.cfg.Qty, end.Status)
}

// checkFalseStockOut proves false STOCK_OUT answers from the outside. Premise: available
// never rose during the run (no cancellation, expiry, restock or other traffic), so it
// only fell. Then a STOCK_OUT is provably false when
//   - end available >= qty: available was at least that when it was answered; or
//   - it arrived before a buyer who then got an order sent its first attempt: that
//     buyer's units were still available when the STOCK_OUT was decided.
//
// A STOCK_OUT that overlapped in time with a successful order while stock ran out is
// consistent with a correct server and cannot be told apart from a false one here.
func (f facts) checkFalseStockOut() Check {
	c := Check{Name: "no false STOCK_OUT"}
	n, qty, end := f.byKind[kindStockOut], f.cfg.Qty, f.end.Available
	switch {
	case n == 0:
		return c.pass("no STOCK_OUT answers")
	case f.audit.released > 0:
		return c.skip("%d orders gave stock back during the run, so available may have risen and nothing can be proven", f.audit.released)
	case end >= qty:
		return c.fail("%d STOCK_OUT answers, yet %d units (>= qty %d) are still available: available only fell during the run, so every one was false", n, end, qty)
	case f.early > 0:
		return c.fail("%d of %d STOCK_OUT answers arrived before a later buyer sent the request that then got stock: those were false", f.early, n)
	}
	return c.pass("%d STOCK_OUT answers, end available %d < qty %d, and none arrived before a later successful buyer's request: "+
		"each came while the last successful orders were in flight or after them, as from a correct server running out "+
		"(a false STOCK_OUT racing a successful order cannot be told apart from outside)", n, end, qty)
}

// checkServerErrors counts every attempt, retried ones included.
func (f facts) checkServerErrors() Check {
	c := Check{Name: "no 5xx except BUSY"}
	busy := fmt.Sprintf("503 BUSY on %d attempts (final answer of %d buyers): back-pressure, counted, not an error", f.busy, f.finalBusy)
	if len(f.serverErrs) == 0 {
		return c.pass("no other 5xx; %s", busy)
	}
	parts := make([]string, 0, len(f.serverErrs))
	total := 0
	for _, s := range slices.Sorted(maps.Keys(f.serverErrs)) {
		parts = append(parts, fmt.Sprintf("%d x%d", s, f.serverErrs[s]))
		total += f.serverErrs[s]
	}
	return c.fail("%d attempts answered 5xx other than BUSY (%s); %s", total, strings.Join(parts, ", "), busy)
}

// checkAnswers: every buyer's final answer is an order, STOCK_OUT or an honest refusal
// (BUSY, RATE_LIMITED, LIMIT_EXCEEDED); anything else (no answer, 400, 401, 404, ...)
// means the run did not test what it meant to.
func (f facts) checkAnswers() Check {
	c := Check{Name: "expected answers"}
	if len(f.unexpected) == 0 {
		return c.pass("every buyer got an order, STOCK_OUT, BUSY, RATE_LIMITED or LIMIT_EXCEEDED")
	}
	return c.fail("unexpected final answers: %s", answerList(f.unexpected))
}

// checkOrders: every created order reads back for its owner with a contract status and
// exactly the ordered line.
func (f facts) checkOrders() Check {
	c := Check{Name: "orders read back"}
	if len(f.audit.problems) == 0 {
		return c.pass("%d of %d orders found by their owner, items %s x%d, statuses %s",
			f.audit.checked, f.audit.created, f.cfg.SKU, f.cfg.Qty, statusList(f.audit.statuses))
	}
	return c.fail("%d problems: %s", len(f.audit.problems), shortList(f.audit.problems))
}

// checkPayments: every payer's POST /_local/pay answered 204 (the notify route's
// success) and its order reads back PAID.
func (f facts) checkPayments() Check {
	c := Check{Name: "payments"}
	st := f.settle
	if st.payers == 0 {
		return c.pass("round(%g x %d orders) = 0 payers: nothing paid", f.cfg.PayRatio, len(st.orders))
	}
	var problems []string
	for _, o := range st.orders[:st.payers] {
		if p := settleProblem(o, "pay", http.StatusNoContent, statusPaid); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		return c.pass("%d of %d orders paid (round(%g x %d)): every pay answered 204 and reads back PAID",
			st.payers, len(st.orders), f.cfg.PayRatio, len(st.orders))
	}
	return c.fail("%d of %d payers: %s (pay answers %s)", len(problems), st.payers, shortList(problems), answerList(tally(st.answers(true))))
}

// checkCancels: every unpaid order's cancel answered 200 and it reads back CANCELLED.
func (f facts) checkCancels() Check {
	c := Check{Name: "cancels"}
	st := f.settle
	unpaid := st.orders[st.payers:]
	switch {
	case !f.cfg.CancelUnpaid:
		return c.skip("cancel unpaid is off: the %d unpaid orders keep their stock until the payment timeout", len(unpaid))
	case len(unpaid) == 0:
		return c.pass("no unpaid order to cancel")
	}
	var problems []string
	for _, o := range unpaid {
		if p := settleProblem(o, "cancel", http.StatusOK, statusCancelled); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		return c.pass("%d unpaid orders cancelled: every cancel answered 200 and reads back CANCELLED", len(unpaid))
	}
	return c.fail("%d of %d cancels: %s (cancel answers %s)", len(problems), len(unpaid), shortList(problems), answerList(tally(st.answers(false))))
}

// settleProblem describes what is wrong with a settled order, or returns "".
func settleProblem(o settledOrder, what string, wantAnswer int, wantStatus string) string {
	switch {
	case o.answer == nil:
		return fmt.Sprintf("order %s: %s not sent", o.id, what)
	case o.answer.err != nil:
		return fmt.Sprintf("order %s: %s got no HTTP answer: %v", o.id, what, o.answer.err)
	case o.answer.status != wantAnswer:
		return fmt.Sprintf("order %s: %s answered %s, want %d", o.id, what, answerLabel(Answer{Status: o.answer.status, Code: o.answer.code}), wantAnswer)
	case o.readErr != nil:
		return fmt.Sprintf("order %s: %s answered %d, then %v", o.id, what, wantAnswer, o.readErr)
	case o.status != wantStatus:
		return fmt.Sprintf("order %s: %s answered %d but the order reads back %s, want %s", o.id, what, wantAnswer, o.status, wantStatus)
	}
	return ""
}

// checkSettledAvailable: after settling, available = start available − paid units +
// refunded units −
// units of orders that may still hold a reservation (none once every unpaid order was
// cancelled), read from GET /skus/{skuId}; and available 0 reads SOLD_OUT.
func (f facts) checkSettledAvailable() Check {
	c := Check{Name: "available after settling"}
	st, qty := f.settle, f.cfg.Qty
	paid, back := st.paidOrders()*qty, st.refundedUnits(qty)
	invalid := f.audit.created - f.audit.checked // orders without a usable id cannot be settled
	held := (st.reservedOrders() + invalid) * qty
	want := f.start.Available - paid + back - held
	got := st.sku
	detail := fmt.Sprintf("available %d, want start %d - paid %d + refunded %d - still reserved %d = %d", got.Available, f.start.Available, paid, back, held, want)
	switch {
	case got.Available == 0 && got.Status != skuSoldOut:
		return c.fail("available 0 but status %s, want SOLD_OUT", got.Status)
	case got.Status == skuSoldOut && got.Available != 0:
		return c.fail("status SOLD_OUT but available %d, want 0", got.Available)
	case got.Available == want && held == 0:
		return c.pass("%s: nothing left reserved (%s)", detail, got.Status)
	case got.Available == want:
		return c.pass("%s (%s)", detail, got.Status)
	case got.Available < want && f.byKind[kindAmbiguous] > 0:
		return c.skip("%s: %d units are held by no known order, and %d buyers' outcomes are unknown", detail, want-got.Available, f.byKind[kindAmbiguous])
	}
	return c.fail("%s", detail)
}

// checkSettledOnHand: only payments take stock from on-hand and only refunds give it
// back, so after settling on-hand = on-hand before the sale − paid units + refunded
// units, both read through the merchant route (GET /skus does not show on-hand).
func (f facts) checkSettledOnHand() Check {
	c := Check{Name: "on-hand after settling"}
	oh := f.settle.onHand
	paid, back := f.settle.paidOrders()*f.cfg.Qty, f.settle.refundedUnits(f.cfg.Qty)
	switch {
	case oh.err != nil:
		return c.fail("%v", oh.err)
	case oh.end == oh.start-paid+back:
		return c.pass("on-hand %d == before the sale %d - paid %d + refunded %d units (GET /admin/skus, summed over shards)", oh.end, oh.start, paid, back)
	}
	return c.fail("on-hand %d, want before the sale %d - paid %d + refunded %d = %d (GET /admin/skus, summed over shards)", oh.end, oh.start, paid, back, oh.start-paid+back)
}

// shortList joins the first few problems and says how many more there are.
func shortList(problems []string) string {
	const shown = 5
	more := ""
	if len(problems) > shown {
		problems, more = problems[:shown], fmt.Sprintf("; and %d more", len(problems)-shown)
	}
	return strings.Join(problems, "; ") + more
}

func (c Check) pass(format string, args ...any) Check { return c.with(ResultPass, format, args) }
func (c Check) fail(format string, args ...any) Check { return c.with(ResultFail, format, args) }
func (c Check) skip(format string, args ...any) Check { return c.with(ResultSkip, format, args) }

func (c Check) with(r Result, format string, args []any) Check {
	c.Result, c.Detail = r, fmt.Sprintf(format, args...)
	return c
}

// answerList renders answers as "503 BUSY x3, 409 LIMIT_EXCEEDED x2".
func answerList(answers []Answer) string {
	parts := make([]string, 0, len(answers))
	for _, a := range answers {
		parts = append(parts, fmt.Sprintf("%s x%d", answerLabel(a), a.Count))
	}
	return strings.Join(parts, ", ")
}

// answerLabel renders an answer's status and code, e.g. "409 STOCK_OUT".
func answerLabel(a Answer) string {
	if a.Status == 0 {
		return "no HTTP answer"
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", a.Status, a.Code))
}

// statusList renders order statuses as "PENDING 99, PAID 1" in name order, or "none".
func statusList(statuses map[string]int) string {
	if len(statuses) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(statuses))
	for _, s := range slices.Sorted(maps.Keys(statuses)) {
		parts = append(parts, fmt.Sprintf("%s %d", s, statuses[s]))
	}
	return strings.Join(parts, ", ")
}
