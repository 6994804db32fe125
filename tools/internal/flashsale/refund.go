package flashsale

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
)

// statusRefunded is the contract's status of an order whose money is back.
const statusRefunded = string(inventory.StatusRefunded)

// refundBody is the operator's refund of a flash-sale order: the goods back in stock.
var refundBody = []byte(`{"restock":true,"reason":"flashsale refund"}`)

// refundPoll is how often a refunded order is read until it is REFUNDED.
const refundPoll = 100 * time.Millisecond

// refundedOrder is one paid order refunded after settling.
type refundedOrder struct {
	holder
	answer  attempt // POST /admin/orders/{orderId}/refund
	status  string  // last read back
	readErr error
}

// refundCount is how many of paid orders are refunded: round(RefundRatio × paid).
func (c Config) refundCount(paid int) int {
	return min(max(int(math.Round(c.RefundRatio*float64(paid))), 0), paid)
}

// refund refunds the first cfg.refundCount orders read back PAID through the merchant
// API (POST /admin/orders/{orderId}/refund, restock true; unsigned, naming the local
// operator in X-Operator-Id, so the local stack only), at most cfg.Concurrency at once, then reads each back with its holder's
// identity until it is REFUNDED or cfg.RefundWait has passed.
func refund(ctx context.Context, a *api, cfg Config, st *settlement) []refundedOrder {
	var rs []refundedOrder
	for _, o := range st.orders {
		if o.readErr == nil && o.status == statusPaid && len(rs) < cfg.refundCount(st.paidOrders()) {
			rs = append(rs, refundedOrder{holder: o.holder})
		}
	}
	forEach(ctx, len(rs), cfg.Concurrency, func(i int) {
		rs[i].answer = a.once(ctx, request{method: http.MethodPost, path: "/admin/orders/" + url.PathEscape(rs[i].id) + "/refund", who: localOperator, body: refundBody})
	})
	deadline := time.Now().Add(cfg.RefundWait)
	forEach(ctx, len(rs), cfg.Concurrency, func(i int) {
		for {
			v, err := a.readOrder(ctx, rs[i].who, rs[i].id)
			rs[i].status, rs[i].readErr = v.Status, err
			if err != nil || v.Status == statusRefunded || time.Now().After(deadline) || clock.Sleep(ctx, refundPoll) != nil {
				return
			}
		}
	})
	return rs
}

// refundedUnits is the units whose refund the API accepted (202, or 200 when already
// REFUNDED): they came back to on-hand and available.
func (st *settlement) refundedUnits(qty int) int {
	n := 0
	for _, r := range st.refunds {
		if r.answer.status == http.StatusAccepted || r.answer.status == http.StatusOK {
			n += qty
		}
	}
	return n
}

// checkRefunds (only with RefundRatio > 0): every refund was accepted (202) and its order read back REFUNDED
// within the wait (the money step through WeChat Pay's stand-in is asynchronous).
func (f facts) checkRefunds() Check {
	c := Check{Name: "refunds"}
	rs := f.settle.refunds
	var problems []string
	done := 0
	for _, r := range rs {
		switch {
		case r.answer.status != http.StatusAccepted && r.answer.status != http.StatusOK:
			problems = append(problems, fmt.Sprintf("%s: refund answered %d %s", r.id, r.answer.status, r.answer.code))
		case r.readErr != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", r.id, r.readErr))
		case r.status != statusRefunded:
			problems = append(problems, fmt.Sprintf("%s: %s after %v", r.id, r.status, f.cfg.RefundWait))
		default:
			done++
		}
	}
	if len(problems) > 0 {
		return c.fail("%d of %d refunds REFUNDED; %s", done, len(rs), shortList(problems))
	}
	return c.pass("%d of %d paid orders refunded (round(%v × paid)): each answered 202 and read back REFUNDED", done, f.settle.paidOrders(), f.cfg.RefundRatio)
}
