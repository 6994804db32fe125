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

	"github.com/stockguard/stockguard/internal/dev/ddblimits"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
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
	ordered bool    // sent at least one POST /orders
	got     bool    // has an order
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
		var ev event
		arrival, have := false, true
		switch {
		case next < len(e.arrivals) && (len(e.queue) == 0 || e.arrivals[next] <= e.queue[0].at):
			ev, arrival = event{at: e.arrivals[next], buyer: int32(next), step: first}, true
		case len(e.queue) > 0:
			ev = e.queue[0]
		default:
			have = false
		}
		if !have {
			e.mu.Unlock()
			if e.busy.Load() == 0 {
				e.mu.Lock()
				done := len(e.queue) == 0 // a step that just ended may have scheduled one
				e.mu.Unlock()
				if done {
					break
				}
				continue
			}
			select { // wait for a step in flight to schedule the next
			case <-e.wake:
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if wait := time.Until(e.s.at(ev.at)); wait > 0 {
			e.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-e.wake: // something earlier may have been scheduled
			case <-ctx.Done():
			}
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
		// API Gateway answers a throttled request itself, at once: no goroutine.
		if route := routes[ev.step]; route != "" && e.s.gateway.Admit(route) != "" {
			e.throttled(ev)
			continue
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
	e.inflight.Wait()
	return time.Duration(e.lastOK.Load())
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
		status, body = s.call(ctx, s.inner, http.MethodGet, "/skus/"+sku, "", "", "")
	case stepOrder:
		status, body = s.call(ctx, s.inner, http.MethodPost, "/orders", user, user+"-1", `{"items":[{"skuId":"`+sku+`","qty":1}]}`)
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
	b := &e.buyers[ev.buyer]
	s := e.s
	now := s.modelTime(end)
	code := errorCode(body, status)
	r := s.rec
	r.answer(ev.step, status, code, end.Sub(start), s.slow, now, b.sku)
	retry := func(st step) bool {
		if (status == http.StatusTooManyRequests || status >= 500) && int(b.tries) < s.cfg.Retries {
			b.tries++
			e.push(ev.buyer, st, now+s.cfg.Think)
			return true
		}
		return false
	}
	switch ev.step {
	case stepView:
		r.add("page views", meter)
		if status != http.StatusOK {
			if !retry(stepView) {
				r.leave("gave up on the page")
			}
			return
		}
		b.views++
		var v struct {
			Available int
			Status    string
		}
		json.Unmarshal(body, &v)
		if v.Available == 0 {
			r.soldOut(b.sku, now)
			r.leave("saw the SKU sold out")
			return
		}
		if int(b.views) < s.cfg.PageViews {
			e.push(ev.buyer, stepView, now+s.cfg.Think)
		} else {
			b.tries = 0
			e.push(ev.buyer, stepOrder, now)
		}
	case stepOrder:
		b.ordered = true
		b.orderWU += float32(meter.WriteUnits())
		if status == http.StatusCreated || status == http.StatusOK {
			var o struct{ OrderID string }
			json.Unmarshal(body, &o)
			b.orderID, b.got, b.tries = o.OrderID, true, 0
			r.created(o.OrderID, b.sku, start, end, now)
			r.add("orders created", meter)
			for {
				last := e.lastOK.Load()
				if int64(now) <= last || e.lastOK.CompareAndSwap(last, int64(now)) {
					break
				}
			}
			e.afterOrder(ev.buyer, now)
			return
		}
		r.add("orders refused", meter)
		if code == "STOCK_OUT" {
			r.stockOut(b.sku, start, end, now)
		}
		if !retry(stepOrder) {
			r.refused(float64(b.orderWU))
		}
	case stepPrepay:
		r.add(kind("prepay", status), meter)
		if status == http.StatusOK {
			b.tries = 0
			e.push(ev.buyer, stepPay, now+s.cfg.Think)
		} else {
			retry(stepPrepay)
		}
	case stepPay:
		r.add(kind("payment", status), meter)
	case stepCancel:
		r.add(kind("cancel", status), meter)
		if status != http.StatusOK {
			retry(stepCancel)
		}
	case stepLatePay:
		r.add("late payment", meter)
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
