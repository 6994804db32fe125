package rehearse

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
)

// step is what a buyer does next.
type step uint8

const (
	stepView    step = iota // GET /skus/{skuId}
	stepOrder               // POST /orders
	stepPrepay              // POST /orders/{orderId}/pay
	stepPay                 // pay at WeChat Pay (the stand-in), which notifies payCallback
	stepCancel              // POST /orders/{orderId}/cancel
	stepLatePay             // a payment notified after the order's release (POST /_local/pay)
)

// fate is what a buyer does with an order.
type fate uint8

const (
	abandon fate = iota
	pay
	cancelOrder
	payLate
)

// buyer is one buyer's state: a few bytes, no goroutine.
type buyer struct {
	sku     int32
	views   int16
	tries   int8
	fate    fate
	orderID string
	orderWU float32 // write units of its order requests
	orderRU float32 // read units of its order requests
	// orderOps is its order requests' units per DynamoDB operation
	// (ddblimits.MeteredOperations), nil until it orders.
	orderOps *opUnits
	// firstOrder is the model time the buyer first sent POST /orders (the first
	// click), valid once ordered.
	firstOrder time.Duration
	ordered    bool // sent at least one POST /orders
	got        bool // has an order
}

// event is a buyer's next step at a model time.
type event struct {
	at    time.Duration
	buyer int32
	step  step
}

type events []event

func (h events) Len() int           { return len(h) }
func (h events) Less(i, j int) bool { return h[i].at < h[j].at }
func (h events) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)        { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// engine plays the buyers: arrivals in time order, then each buyer's steps from a
// time-ordered queue; a goroutine exists only for a request in flight.
type engine struct {
	s        *sale
	buyers   []buyer
	arrivals []time.Duration // sorted; buyer i arrives at arrivals[i]
	mu       sync.Mutex
	queue    events
	wake     chan struct{}
	inflight sync.WaitGroup
	busy     atomic.Int64
	lag      atomic.Int64 // worst lateness of a step against its schedule, real ns
	rng      *rand.Rand   // for fates and delays; under mu
	lastOK   atomic.Int64 // model time of the last order created, ns
}

func newEngine(s *sale) *engine {
	cfg := s.cfg
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5a1e))
	e := &engine{s: s, buyers: make([]buyer, cfg.Buyers), arrivals: make([]time.Duration, cfg.Buyers), wake: make(chan struct{}, 1), rng: rng}
	for i := range e.arrivals {
		span := cfg.Over
		if rng.Float64() < cfg.Spike {
			span = cfg.Over / 10
		}
		e.arrivals[i] = time.Duration(rng.Float64() * float64(span))
	}
	slices.Sort(e.arrivals)
	for i := range e.buyers {
		e.buyers[i].sku = int32(rng.IntN(cfg.SKUs))
		switch f := rng.Float64(); {
		case f < cfg.PayRatio:
			e.buyers[i].fate = pay
		case f < cfg.PayRatio+cfg.CancelRatio:
			e.buyers[i].fate = cancelOrder
		case f < cfg.PayRatio+cfg.CancelRatio+cfg.LateRatio:
			e.buyers[i].fate = payLate
		}
	}
	return e
}

// push schedules buyer b's step at model time at.
func (e *engine) push(b int32, st step, at time.Duration) {
	e.mu.Lock()
	heap.Push(&e.queue, event{at: at, buyer: b, step: st})
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run plays every buyer to the end and returns the model time of the last order
// created.
func (e *engine) run(ctx context.Context) time.Duration {
	first := stepView
	if e.s.cfg.PageViews == 0 {
		first = stepOrder
	}
	next := 0 // next arrival
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil {
		e.mu.Lock()
		ev, arrival, have := e.peekLocked(next, first)
		if !have {
			e.mu.Unlock()
			if e.waitForWork() {
				break
			}
			continue
		}
		if wait := time.Until(e.s.at(ev.at)); wait > 0 {
			e.mu.Unlock()
			e.sleep(ctx, timer, wait)
			continue
		} else if int64(-wait) > e.lag.Load() {
			e.lag.Store(int64(-wait))
		}
		if arrival {
			next++
		} else {
			heap.Pop(&e.queue)
		}
		e.mu.Unlock()
		e.dispatch(ctx, ev)
	}
	e.inflight.Wait()
	return time.Duration(e.lastOK.Load())
}

// peekLocked is the earliest event without taking it: the arrival of buyer next
// (whose first step is first) when it comes no later than the queue's head, else the
// queue's head; have is false when neither is left. e.mu is held.
func (e *engine) peekLocked(next int, first step) (ev event, arrival, have bool) {
	switch {
	case next < len(e.arrivals) && (len(e.queue) == 0 || e.arrivals[next] <= e.queue[0].at):
		return event{at: e.arrivals[next], buyer: int32(next), step: first}, true, true
	case len(e.queue) > 0:
		return e.queue[0], false, true
	}
	return event{}, false, false
}

// waitForWork is called when no event is left: it reports true (done) when no step is
// in flight and none was scheduled meanwhile, else waits (at most 10 ms) for a step in
// flight to schedule the next and reports false.
func (e *engine) waitForWork() (done bool) {
	if e.busy.Load() == 0 {
		e.mu.Lock()
		empty := len(e.queue) == 0 // a step that just ended may have scheduled one
		e.mu.Unlock()
		return empty
	}
	select { // wait for a step in flight to schedule the next
	case <-e.wake:
	case <-time.After(10 * time.Millisecond):
	}
	return false
}

// sleep waits wait (real time) on timer for the next event's time, or less when
// something earlier may have been scheduled or ctx ends.
func (e *engine) sleep(ctx context.Context, timer *time.Timer, wait time.Duration) {
	timer.Reset(wait)
	select {
	case <-timer.C:
	case <-e.wake: // something earlier may have been scheduled
	case <-ctx.Done():
	}
}

// dispatch plays event ev, now due: answered at once when API Gateway throttles it,
// else on a goroutine of its own that wakes run when done.
func (e *engine) dispatch(ctx context.Context, ev event) {
	if ev.step == stepView && e.s.edge != nil {
		// CloudFront answers from its cache at once, before API Gateway: no
		// goroutine; a miss goes to the origin (do).
		if o := e.s.edge.fresh(e.pagePath(ev), time.Now()); o != nil {
			now := time.Now()
			e.outcome(ev, o.status, o.body, now, now, &ddblimits.Meter{})
			return
		}
	} else if route := routes[ev.step]; route != "" && e.s.gateway.Admit(route) != "" {
		// API Gateway answers a throttled request itself, at once: no goroutine.
		e.throttled(ev)
		return
	}
	e.busy.Add(1)
	e.inflight.Go(func() {
		defer e.busy.Add(-1)
		e.do(ctx, ev)
		select {
		case e.wake <- struct{}{}:
		default:
		}
	})
}

// pagePath is the path of the page ev's buyer views.
func (e *engine) pagePath(ev event) string {
	return "/skus/" + e.s.skuIDs[e.buyers[ev.buyer].sku]
}

// view reads the page at path: through CloudFront when the sale has it (a miss is
// sent to the origin through API Gateway's throttles), else from the API, which
// dispatch already admitted.
func (s *sale) view(ctx context.Context, path string) (int, []byte) {
	if s.edge == nil {
		return s.call(ctx, s.inner, http.MethodGet, path, "", "", "")
	}
	status, body, _ := s.edge.get(path, time.Now(), func() (int, []byte, http.Header) {
		if s.gateway.Admit(routes[stepView]) != "" {
			return http.StatusTooManyRequests, tooMany, nil
		}
		return s.send(ctx, s.inner, http.MethodGet, path, "", "", "")
	})
	return status, body
}

// routes are the API routes of the steps that call the API (the others: "").
var routes = map[step]string{
	stepView: "GET /skus/{skuId}", stepOrder: "POST /orders",
	stepPrepay: "POST /orders/{orderId}/pay", stepCancel: "POST /orders/{orderId}/cancel",
}

// tooMany is API Gateway's throttled answer (see quotas.Gateway).
var tooMany = []byte(`{"message":"Too Many Requests"}`)

// throttled plays a step API Gateway refused: answered at once, nothing run.
func (e *engine) throttled(ev event) {
	now := time.Now()
	e.outcome(ev, http.StatusTooManyRequests, tooMany, now, now, &ddblimits.Meter{})
}

// do plays one step of one buyer that API Gateway admitted (or that calls no API).
func (e *engine) do(ctx context.Context, ev event) {
	b := &e.buyers[ev.buyer]
	s := e.s
	user := "b" + strconv.Itoa(int(ev.buyer))
	sku := s.skuIDs[b.sku]
	meter := &ddblimits.Meter{}
	ctx = ddblimits.WithMeter(ctx, meter)
	start := time.Now()
	var status int
	var body []byte
	switch ev.step {
	case stepView:
		status, body = s.view(ctx, "/skus/"+sku)
	case stepOrder:
		status, body = s.call(ctx, s.inner, http.MethodPost, "/orders", user, user+"-1", `{"items":[{"skuId":"`+sku+`","qty":1}],"address":`+orders.ExampleAddress+`}`)
	case stepPrepay:
		status, body = s.call(ctx, s.inner, http.MethodPost, "/orders/"+b.orderID+"/pay", user, "", "")
	case stepCancel:
		status, body = s.call(ctx, s.inner, http.MethodPost, "/orders/"+b.orderID+"/cancel", user, "", "")
	case stepPay:
		status = http.StatusNoContent
		if _, err := s.stack.PayServer.Pay(ctx, b.orderID, paytest.PayOptions{}); err != nil {
			status = http.StatusConflict
			if !errors.Is(err, paytest.ErrNotPayable) && !errors.Is(err, paytest.ErrNoOrder) {
				status = http.StatusInternalServerError
			}
		}
	case stepLatePay:
		status, body = s.call(ctx, s.api, http.MethodPost, "/_local/pay/"+b.orderID, "", "", "")
	}
	e.outcome(ev, status, body, start, time.Now(), meter)
}

// outcome records a step's answer and schedules what the buyer does next.
func (e *engine) outcome(ev event, status int, body []byte, start, end time.Time, meter *ddblimits.Meter) {
	s := e.s
	a := reply{ev: ev, status: status, code: errorCode(body, status), body: body, start: start, end: end, now: s.modelTime(end), meter: meter}
	r := s.rec
	r.answer(ev.step, status, a.code, end.Sub(start), s.slow, a.now, e.buyers[ev.buyer].sku)
	switch ev.step {
	case stepView:
		e.viewed(a)
	case stepOrder:
		e.ordered(a)
	case stepPrepay:
		e.prepaid(a)
	case stepPay:
		r.add(kind("payment", status), meter)
	case stepCancel:
		r.add(kind("cancel", status), meter)
		if status != http.StatusOK {
			e.retry(a, stepCancel)
		}
	case stepLatePay:
		r.add("late payment", meter)
	}
}

// reply is one step's answer, as outcome hands it to the step's handler.
type reply struct {
	ev         event
	status     int
	code       string // the error answer's code, "" for none
	body       []byte
	start, end time.Time     // real times the request was sent and answered
	now        time.Duration // model time of the answer
	meter      *ddblimits.Meter
}

// retry schedules step st again, Think after the answer, when a was a 429 or a 5xx
// and the buyer has retries left, and reports whether it did.
func (e *engine) retry(a reply, st step) bool {
	b := &e.buyers[a.ev.buyer]
	if (a.status == http.StatusTooManyRequests || a.status >= 500) && int(b.tries) < e.s.cfg.Retries {
		b.tries++
		e.push(a.ev.buyer, st, a.now+e.s.cfg.Think)
		return true
	}
	return false
}

// viewed handles a page view's answer: the buyer retries or gives up on an error,
// leaves when the page shows the SKU sold out, else views again or orders.
func (e *engine) viewed(a reply) {
	b := &e.buyers[a.ev.buyer]
	s := e.s
	r := s.rec
	r.add("page views", a.meter)
	if a.status != http.StatusOK {
		if !e.retry(a, stepView) {
			r.leave("gave up on the page")
		}
		return
	}
	b.views++
	var v struct {
		Available int
		Status    string
	}
	json.Unmarshal(a.body, &v)
	if v.Available == 0 {
		r.soldOut(b.sku, a.now)
		r.leave("saw the SKU sold out")
		return
	}
	if int(b.views) < s.cfg.PageViews {
		e.push(a.ev.buyer, stepView, a.now+s.cfg.Think)
	} else {
		b.tries = 0
		e.push(a.ev.buyer, stepOrder, a.now)
	}
}

// ordered handles POST /orders' answer: an order created is recorded and its fate
// scheduled; a refusal is recorded (a STOCK_OUT as such) and retried while retries
// are left.
func (e *engine) ordered(a reply) {
	b := &e.buyers[a.ev.buyer]
	r := e.s.rec
	if !b.ordered {
		b.firstOrder = e.s.modelTime(a.start)
	}
	b.ordered = true
	b.orderWU += float32(a.meter.WriteUnits())
	b.orderRU += float32(a.meter.ReadUnits())
	if b.orderOps == nil {
		b.orderOps = new(opUnits)
	}
	for i := range b.orderOps {
		b.orderOps[i] += float32(a.meter.OperationUnits(i))
	}
	if a.status == http.StatusCreated || a.status == http.StatusOK {
		var o struct{ OrderID string }
		json.Unmarshal(a.body, &o)
		b.orderID, b.got, b.tries = o.OrderID, true, 0
		r.created(o.OrderID, b.sku, a.start, a.end, a.now)
		r.buyerAnswered(a.now - b.firstOrder)
		r.add("orders created", a.meter)
		e.raiseLastOK(a.now)
		e.afterOrder(a.ev.buyer, a.now)
		return
	}
	r.add("orders refused", a.meter)
	if a.code == "STOCK_OUT" {
		if r.soldOutBy(b.sku, e.s.modelTime(a.start)) {
			// a buyer who asked after the SKU was seen sold out: what sell-out costs
			r.add("orders refused after sell-out", a.meter)
		}
		r.stockOut(b.sku, a.start, a.end, a.now)
	}
	if !e.retry(a, stepOrder) {
		r.buyerAnswered(a.now - b.firstOrder)
		r.refused(float64(b.orderWU), float64(b.orderRU), b.orderOps, r.soldOutBy(b.sku, b.firstOrder))
	}
}

// raiseLastOK raises the model time of the last order created to now, if later.
func (e *engine) raiseLastOK(now time.Duration) {
	for {
		last := e.lastOK.Load()
		if int64(now) <= last || e.lastOK.CompareAndSwap(last, int64(now)) {
			return
		}
	}
}

// prepaid handles the prepay's answer: the buyer pays at WeChat Pay Think later, or
// retries on a 429 or 5xx.
func (e *engine) prepaid(a reply) {
	e.s.rec.add(kind("prepay", a.status), a.meter)
	if a.status == http.StatusOK {
		e.buyers[a.ev.buyer].tries = 0
		e.push(a.ev.buyer, stepPay, a.now+e.s.cfg.Think)
	} else {
		e.retry(a, stepPrepay)
	}
}

// kind is what a request of step name was for in the report's units: name when it was
// answered 2xx, "name refused" otherwise (a payment the stand-in refused, a prepay or a
// cancel of an order already released), so that each kind's least write units are
// those of the operation done.
func kind(name string, status int) string {
	if status >= 200 && status < 300 {
		return name
	}
	return name + " refused"
}

// afterOrder schedules what buyer b does with the order it got at model time now.
func (e *engine) afterOrder(b int32, now time.Duration) {
	cfg := e.s.cfg
	e.mu.Lock()
	jitter := 0.5 + e.rng.Float64() // 0.5 to 1.5
	e.mu.Unlock()
	switch e.buyers[b].fate {
	case pay:
		e.push(b, stepPrepay, now+time.Duration(float64(cfg.PayAfter)*jitter))
	case cancelOrder:
		e.push(b, stepCancel, now+time.Duration(float64(cfg.PayAfter)*jitter))
	case payLate:
		// After the expiry and the release that follows it (the sweep's period at
		// most, on top of the queue's delivery).
		e.push(b, stepLatePay, now+cfg.PaymentTimeout+time.Duration(float64(cfg.PayAfter)*jitter))
	}
}

// errorCode is the "code" of an error answer's body, "" for none (API Gateway's own
// answers carry only a message).
func errorCode(body []byte, status int) string {
	if status < 400 || len(body) == 0 || bytes.HasPrefix(body, []byte(`{"message"`)) {
		return ""
	}
	var e struct{ Code string }
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Code
}
