package flashsale

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/orders"
)

// Errors returned (wrapped) by Run. Setup errors (ErrInvalidConfig, ErrSKUNotFound,
// ErrSKUNotOnSale, an unreachable server) come without a Report; ErrVerificationFailed
// comes with the written Report.
var (
	// ErrVerificationFailed means the run completed and at least one check failed.
	ErrVerificationFailed = errors.New("verification failed")
	// ErrSKUNotFound means GET /skus/{skuId} answered 404 before the run.
	ErrSKUNotFound = errors.New("sku not found")
	// ErrSKUNotOnSale means the SKU's status was OFF_SALE before the run.
	ErrSKUNotOnSale = errors.New("sku not on sale")
)

// Run reads cfg.SKU, lets cfg.Buyers buyers order it with at most cfg.Concurrency in
// flight, reads the SKU and every created order back, settles the orders when
// cfg.PayRatio > 0 or cfg.CancelUnpaid (see Config), verifies the outcome and writes the
// report to out (text, or JSON when cfg.JSON).
//
// It returns the report and nil when every check passes or is skipped, the report and an
// error wrapping ErrVerificationFailed when a check fails, and a nil report with an
// error for setup problems: ErrInvalidConfig, ErrSKUNotFound, ErrSKUNotOnSale, an
// unreachable server, on-hand stock that the API does not show before the sale (when
// settling; see api.readOnHand), or ctx ending before the run finished.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return run(ctx, cfg, out, nil)
}

// run is Run for a valid cfg, reading on-hand stock with onHand (nil: from the API,
// api.readOnHand).
func run(ctx context.Context, cfg Config, out io.Writer, onHand onHandReader) (*Report, error) {
	a := &api{base: strings.TrimRight(cfg.BaseURL, "/"), client: cfg.Client, timeout: cfg.Timeout}
	if a.client == nil {
		a.client = newClient(cfg.Concurrency)
		defer a.client.CloseIdleConnections()
	}
	if onHand == nil {
		onHand = a.readOnHand
	}
	start, err := a.readSKU(ctx, cfg.SKU)
	if err != nil {
		return nil, fmt.Errorf("before the sale: %w", err)
	}
	if start.Status == skuOffSale {
		return nil, fmt.Errorf("before the sale: sku %s: %w (status %s)", cfg.SKU, ErrSKUNotOnSale, start.Status)
	}
	var stock onHandFacts
	if cfg.settles() {
		if stock.start, err = onHand(ctx, cfg.SKU); err != nil {
			return nil, fmt.Errorf("before the sale: %w; settling (-pay-ratio, -cancel-unpaid) checks on-hand through the merchant API, "+
				"unsigned, as the local operator: cmd/local serves that to requests from its own machine, so point -url at its loopback address (e.g. http://127.0.0.1:3000)", err)
		}
	}
	began := time.Now()
	stopSampling := sampleStock(ctx, a, cfg, began)
	outcomes, wall := sell(ctx, a, cfg)
	available := stopSampling()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sale interrupted: %w", err)
	}
	// GET /skus/{skuId} answers from a read at most 1 s old (docs/contract.md): the
	// reads after the sale wait for it to see the sale's last change.
	time.Sleep(publicReadAge)
	end, err := a.readSKU(ctx, cfg.SKU)
	if err != nil {
		return nil, fmt.Errorf("after the sale: %w", err)
	}
	orders := auditOrders(ctx, a, cfg, outcomes)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("order read-back interrupted: %w", err)
	}
	var st *settlement
	if cfg.settles() {
		if st, err = settleAndRead(ctx, a, cfg, outcomes, onHand, stock); err != nil {
			return nil, err
		}
	}
	rep := newReport(cfg, start, end, outcomes, orders, began, wall, st)
	rep.Timeline = newTimeline(cfg, outcomes, began, wall, available)
	if err := rep.write(out, cfg.JSON); err != nil {
		return rep, fmt.Errorf("write report: %w", err)
	}
	if n := rep.failed(); n > 0 {
		return rep, fmt.Errorf("%w: %d of %d checks failed", ErrVerificationFailed, n, len(rep.Checks))
	}
	return rep, nil
}

// settleAndRead settles the orders, then reads the SKU and on-hand.
// A failed on-hand read is kept for its check; a failed SKU read or ctx ending is an
// error.
func settleAndRead(ctx context.Context, a *api, cfg Config, outcomes []outcome, onHand onHandReader, stock onHandFacts) (*settlement, error) {
	st := settle(ctx, a, cfg, holders(outcomes))
	if cfg.RefundRatio > 0 {
		st.refunds = refund(ctx, a, cfg, st)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("settling interrupted: %w", err)
	}
	var err error
	time.Sleep(publicReadAge)
	if st.sku, err = a.readSKU(ctx, cfg.SKU); err != nil {
		return nil, fmt.Errorf("after settling: %w", err)
	}
	stock.end, stock.err = onHand(ctx, cfg.SKU)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("on-hand read interrupted: %w", err)
	}
	st.onHand = stock
	return st, nil
}

// outcome is what one buyer saw: every attempt of its POST /orders, the final one last.
type outcome struct {
	who      identity
	attempts []attempt
	orderID  string // set when the final answer was a 200/201 order with an order id
}

func (o outcome) first() attempt { return o.attempts[0] }
func (o outcome) final() attempt { return o.attempts[len(o.attempts)-1] }

// gotOrder reports a 200 or 201 answer (an order, possibly an idempotent replay).
func (o outcome) gotOrder() bool { return o.kind() == kindOrder }

// kind classifies the buyer's final answer.
func (o outcome) kind() kind { return classify(o.final().status, o.final().code) }

// latency is the buyer's wait: first attempt sent to final answer, retries included.
func (o outcome) latency() time.Duration {
	return o.final().received.Sub(o.first().sent)
}

// sell lets every buyer order once (with retries when cfg.Idempotency) and returns what
// each saw, indexed by buyer, and the wall time of the sale.
func sell(ctx context.Context, a *api, cfg Config) ([]outcome, time.Duration) {
	body, _ := json.Marshal(map[string]any{ // cannot fail
		"items":   []orderLine{{SKUID: cfg.SKU, Qty: cfg.Qty}},
		"address": json.RawMessage(orders.ExampleAddress), // the SKU may ship by express
	})
	runID := rand.Text()
	retries := 0
	if cfg.Idempotency {
		retries = MaxRetries
	}
	outcomes := make([]outcome, cfg.Buyers)
	began := time.Now()
	forEach(ctx, cfg.Buyers, cfg.Concurrency, func(i int) {
		r := request{method: http.MethodPost, path: "/orders", who: cfg.buyer(i), body: body}
		if cfg.Idempotency {
			r.key = "flashsale-" + runID + "-" + strconv.Itoa(i)
		}
		outcomes[i] = newOutcome(r.who, a.send(ctx, r, retries))
	})
	return outcomes, time.Since(began)
}

func newOutcome(who identity, attempts []attempt) outcome {
	o := outcome{who: who, attempts: attempts}
	if o.gotOrder() {
		var v orderView
		if json.Unmarshal(o.final().body, &v) == nil {
			o.orderID = v.OrderID
		}
	}
	return o
}

// forEach calls fn(i) for i in [0, n) on at most workers goroutines and returns when all
// calls returned. Once ctx ends no further calls start.
func forEach(ctx context.Context, n, workers int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
}

// orderAudit is what reading the created orders back found.
type orderAudit struct {
	created  int            // distinct orders answered 200/201 to the buyers
	checked  int            // distinct valid order ids read back
	statuses map[string]int // order status → orders, for orders read back
	held     int            // units still held: orders not read back as given back
	released int            // orders read back CANCELLED, REFUND_PENDING or REFUNDED
	problems []string       // one line per order (or answer) that does not check out
}

// givesBack reports whether an order in status no longer holds its units of available
// stock (CANCELLED released them; REFUND_PENDING and REFUNDED may have), and whether
// status is a contract status at all. Every contract status is "PENDING or later".
func givesBack(status string) (gaveBack, known bool) {
	switch inventory.Status(status) {
	case inventory.StatusPending, inventory.StatusPaid:
		return false, true
	case inventory.StatusCancelled, inventory.StatusRefundPending, inventory.StatusRefunded:
		return true, true
	}
	return false, false
}

// auditOrders reads every created order back with its owner's identity and checks that
// it exists, has a contract status and holds exactly the line that was ordered.
func auditOrders(ctx context.Context, a *api, cfg Config, outcomes []outcome) orderAudit {
	owners, invalid, problems := orderOwners(outcomes)
	ids := slices.Sorted(maps.Keys(owners))
	views := make([]orderView, len(ids))
	errs := make([]error, len(ids))
	forEach(ctx, len(ids), cfg.Concurrency, func(i int) {
		views[i], errs[i] = a.readOrder(ctx, owners[ids[i]], ids[i])
	})
	au := orderAudit{created: len(ids) + invalid, checked: len(ids), statuses: make(map[string]int), problems: problems}
	for i, id := range ids {
		au.add(cfg, id, views[i], errs[i])
	}
	return au
}

// orderOwners maps each created order id to the identity that created it, counts order
// answers without a valid id, and lists those and any id handed to two buyers.
func orderOwners(outcomes []outcome) (owners map[string]identity, invalid int, problems []string) {
	owners = make(map[string]identity)
	for i, o := range outcomes {
		_, seen := owners[o.orderID]
		switch {
		case !o.gotOrder():
		case !inventory.ValidOrderID(o.orderID):
			invalid++
			problems = append(problems, fmt.Sprintf("buyer %d: status %d with order id %q, want 6-32 of [0-9A-Za-z_-]", i, o.final().status, o.orderID))
		case seen:
			problems = append(problems, fmt.Sprintf("order %s: handed to more than one buyer", o.orderID))
		default:
			owners[o.orderID] = o.who
		}
	}
	return owners, invalid, problems
}

// add records one read-back order.
func (au *orderAudit) add(cfg Config, id string, v orderView, err error) {
	if err != nil {
		au.held += cfg.Qty // unknown state: assume it still holds its stock
		au.problems = append(au.problems, err.Error())
		return
	}
	au.statuses[v.Status]++
	gaveBack, known := givesBack(v.Status)
	if gaveBack {
		au.released++
	} else {
		au.held += cfg.Qty
	}
	want := []orderLine{{SKUID: cfg.SKU, Qty: cfg.Qty}}
	switch {
	case v.OrderID != id:
		au.problems = append(au.problems, fmt.Sprintf("order %s: read back as %q", id, v.OrderID))
	case !known:
		au.problems = append(au.problems, fmt.Sprintf("order %s: status %q is not a contract status", id, v.Status))
	case !slices.Equal(v.Items, want):
		au.problems = append(au.problems, fmt.Sprintf("order %s: items %v, want %v", id, v.Items, want))
	}
}

// publicReadAge is how long after a change GET /skus/{skuId} is sure to show it: its
// answer is at most 1 s old.
const publicReadAge = 1100 * time.Millisecond
