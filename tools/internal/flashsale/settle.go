package flashsale

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// onHandReader returns a SKU's on-hand units (physical stock, summed over its shards).
type onHandReader func(ctx context.Context, sku string) (int, error)

// readOnHand reads the SKU's on-hand units from the API's merchant route GET
// /admin/skus/{skuId} (its onHand: the units in stock, summed over the shards, as the
// store reads them strongly consistently), unsigned and naming the local operator, as
// the refunds are sent: the local stack serves it so to requests from its own machine;
// a deployed API, or a stack's listener reached from another machine, answers 403.
func (a *api) readOnHand(ctx context.Context, sku string) (int, error) {
	path := "/admin/skus/" + url.PathEscape(sku)
	v, err := get[struct{ OnHand *int }](ctx, a, request{method: http.MethodGet, path: path, who: localOperator}, "on-hand of sku "+sku+" (GET "+path+")", nil)
	switch {
	case err != nil:
		return 0, err
	case v.OnHand == nil:
		return 0, fmt.Errorf("read on-hand of sku %s (GET %s): the answer has no onHand", sku, path)
	}
	return *v.OnHand, nil
}

// holder is a created order and the identity that holds it.
type holder struct {
	buyer int // index of the buyer who created it
	id    string
	who   identity
}

// holders lists the created orders with a valid id in buyer order, each once: an id
// handed to several buyers (a problem the order audit reports) is held by the first.
func holders(outcomes []outcome) []holder {
	var hs []holder
	seen := make(map[string]bool)
	for i, o := range outcomes {
		if !o.gotOrder() || !inventory.ValidOrderID(o.orderID) || seen[o.orderID] {
			continue
		}
		seen[o.orderID] = true
		hs = append(hs, holder{buyer: i, id: o.orderID, who: o.who})
	}
	return hs
}

// settledOrder is one order after settling.
type settledOrder struct {
	holder
	pay     bool     // a payer; otherwise unpaid
	answer  *attempt // the pay or cancel answer; nil when no request was sent
	status  string   // read back after settling; empty when readErr is set
	readErr error
}

// settlement is what settling the orders did and found.
type settlement struct {
	orders     []settledOrder // in buyer order, the payers first
	payers     int            // orders[:payers] were paid
	payWall    time.Duration  // duration of the payments, first sent to last answered
	cancelWall time.Duration  // duration of the cancels; 0 when none ran
	sku        skuView        // GET /skus/{skuId} after settling (and refunding)
	onHand     onHandFacts
	refunds    []refundedOrder // paid orders refunded after settling (RefundRatio)
}

// onHandFacts are the on-hand reads: before the sale and after settling.
type onHandFacts struct {
	start, end int   // units
	err        error // the read after settling failed
}

// settle pays for the first cfg.payers(len(hs)) orders through POST /_local/pay/{orderId}
// (anonymous, no body), then, when cfg.CancelUnpaid, cancels the others through
// POST /orders/{orderId}/cancel with their holders' identities, each phase with at most
// cfg.Concurrency requests in flight, and reads every order back with its holder's
// identity. Pays and cancels are sent once, never retried, so that each answer is
// what the route said. The SKU and on-hand reads are left to the caller.
func settle(ctx context.Context, a *api, cfg Config, hs []holder) *settlement {
	k := cfg.payers(len(hs))
	st := &settlement{orders: make([]settledOrder, len(hs)), payers: k}
	for i, h := range hs {
		st.orders[i] = settledOrder{holder: h, pay: i < k}
	}
	began := time.Now()
	forEach(ctx, k, cfg.Concurrency, func(i int) {
		if cfg.RefundRatio > 0 { // start the payment: the stand-in then knows what it refunds
			a.once(ctx, request{method: http.MethodPost, path: "/orders/" + url.PathEscape(hs[i].id) + "/pay", who: hs[i].who})
		}
		at := a.once(ctx, request{method: http.MethodPost, path: "/_local/pay/" + url.PathEscape(hs[i].id)})
		st.orders[i].answer = &at
	})
	st.payWall = time.Since(began)
	if cfg.CancelUnpaid {
		began = time.Now()
		forEach(ctx, len(hs)-k, cfg.Concurrency, func(i int) {
			h := hs[k+i]
			at := a.once(ctx, request{method: http.MethodPost, path: "/orders/" + url.PathEscape(h.id) + "/cancel", who: h.who})
			st.orders[k+i].answer = &at
		})
		st.cancelWall = time.Since(began)
	}
	forEach(ctx, len(hs), cfg.Concurrency, func(i int) {
		v, err := a.readOrder(ctx, hs[i].who, hs[i].id)
		st.orders[i].status, st.orders[i].readErr = v.Status, err
	})
	return st
}

// paidOrders counts orders read back PAID.
func (st *settlement) paidOrders() int { return st.ordersIn(statusPaid) }

// cancelledOrders counts orders read back CANCELLED.
func (st *settlement) cancelledOrders() int { return st.ordersIn(statusCancelled) }

// ordersIn counts orders read back in status.
func (st *settlement) ordersIn(status string) int {
	n := 0
	for _, o := range st.orders {
		if o.readErr == nil && o.status == status {
			n++
		}
	}
	return n
}

// reservedOrders counts orders that may still hold reserved units: read back PENDING,
// in a status that is not the contract's, or not read back at all.
func (st *settlement) reservedOrders() int {
	n := 0
	for _, o := range st.orders {
		gaveBack, known := givesBack(o.status)
		if o.readErr != nil || !known || (!gaveBack && o.status != statusPaid) {
			n++
		}
	}
	return n
}

// answers returns the pay answers (pay) or the cancel answers (!pay) that were sent.
func (st *settlement) answers(pay bool) []attempt {
	var as []attempt
	for _, o := range st.orders {
		if o.pay == pay && o.answer != nil {
			as = append(as, *o.answer)
		}
	}
	return as
}

// latency summarises the answers' round trips.
func latency(as []attempt) Latency {
	samples := make([]time.Duration, len(as))
	for i, a := range as {
		samples[i] = a.received.Sub(a.sent)
	}
	return summarise(samples)
}
