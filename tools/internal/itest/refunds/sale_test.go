package refunds_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

var (
	saleBuyers = flag.Int("refund-sale-buyers", 40, "buyers in TestRandomizedSale_EveryRefundOwedEndsRefunded")
	saleSeed   = flag.Uint64("refund-sale-seed", 7, "seed of TestRandomizedSale_EveryRefundOwedEndsRefunded")
)

// What each buyer of the randomized sale does with their order.
const (
	actPay    = iota // pays
	actTwice         // pays, then pays again (a second transaction)
	actLate          // pays, but the notification is lost until after the release
	actCancel        // cancels
	actIdle          // lets it expire
	actCount
)

// A randomized sale on the whole stack: payments, double payments, cancels, payments
// whose notification comes after the release (some find their units sold: REFUND_PENDING),
// then refunds of a share of the paid orders by operators (restocking or not) and
// buyers. Every refund owed and asked for ends REFUNDED with no person involved, and
// reconcile and booktest find the books clean.
func TestRandomizedSale_EveryRefundOwedEndsRefunded(t *testing.T) {
	rng := rand.New(rand.NewPCG(*saleSeed, 1))
	h := stacktest.New(t, stacktest.Options{SQS: true, Seed: `[{"skuId":"mug","delivery":"none","name":"mug","price":500,"stock":` + fmt.Sprint(*saleBuyers/2) + `,"shards":2}]`,
		Stack: local.StackConfig{PaymentTimeout: time.Hour, Environment: func(f string, env map[string]string) {
			if f == "CloseOrderFunction" {
				env["USER_REFUND_WINDOW"] = "24h"
			}
		}, Refund: func(o *refunds.Options) { o.Backoff = time.Second }}})
	h.RunInBackground(t)
	acts, ids := map[string]int{}, []string{}
	for i := range *saleBuyers {
		user := fmt.Sprint("b", i)
		code, out := h.Call(t, http.MethodPost, "/orders", user, nil, `{"items":[{"skuId":"mug","qty":1}]}`)
		if code != http.StatusCreated {
			continue // sold out
		}
		id := out["orderId"].(string)
		if code, _ := h.Call(t, http.MethodPost, "/orders/"+id+"/pay", user, nil, ""); code != http.StatusOK {
			t.Fatalf("pay %s: %d", id, code)
		}
		acts[id] = rng.IntN(actCount)
		ids = append(ids, id)
	}
	h.PayServer.SetDropNotifications(true)
	for _, id := range ids {
		if acts[id] == actLate {
			mustPay(t, h, id, false)
		}
	}
	h.PayServer.SetDropNotifications(false)
	for _, id := range ids {
		switch acts[id] {
		case actPay:
			mustPay(t, h, id, false)
		case actTwice:
			mustPay(t, h, id, false)
			mustPay(t, h, id, true)
		case actCancel:
			h.Call(t, http.MethodPost, "/orders/"+id+"/cancel", h.Lookup(t, id).UserID, nil, "")
		}
	}
	// The window ends while WeChat Pay cannot be asked: the late and idle orders are
	// released; late buyers' units may be sold to others before their payment arrives.
	h.Clock.Advance(61 * time.Minute)
	h.PayServer.SetFailAPI(true)
	var sweep map[string]any
	h.RunScheduled(t, "closeOrder", &sweep)
	h.PayServer.SetFailAPI(false)
	for i := range rng.IntN(*saleBuyers/2 + 1) {
		user := fmt.Sprint("late-buyer-", i)
		if code, out := h.Call(t, http.MethodPost, "/orders", user, nil, `{"items":[{"skuId":"mug","qty":1}]}`); code == http.StatusCreated {
			id := out["orderId"].(string)
			h.Call(t, http.MethodPost, "/orders/"+id+"/pay", user, nil, "")
			mustPay(t, h, id, false)
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if acts[id] == actLate {
			if d, err := h.PayServer.Resend(context.Background(), id); err != nil || d.StatusCode != http.StatusNoContent {
				t.Fatalf("late notification of %s: %+v %v", id, d, err)
			}
		}
	}
	refunded := refundShare(t, h, rng, ids)
	counts := waitRefunded(t, h, ids)
	t.Logf("seed %d, %d buyers: %d orders; statuses %v; refunds asked by operators/buyers %d, second payments %d",
		*saleSeed, *saleBuyers, len(ids), counts, refunded, counts["extra"])
	var rep struct {
		Differences, RefundProblems, StuckRefunds []any
	}
	h.RunScheduled(t, "reconcile", &rep)
	if len(rep.Differences)+len(rep.RefundProblems)+len(rep.StuckRefunds) != 0 {
		t.Errorf("reconcile: %+v", rep)
	}
	h.Check(t)
}

// mustPay pays id at the stand-in (again: a second transaction).
func mustPay(t *testing.T, h *stacktest.Stack, id string, again bool) {
	t.Helper()
	if _, err := h.PayServer.Pay(context.Background(), id, paytest.PayOptions{Again: again}); err != nil {
		t.Fatalf("pay %s: %v", id, err)
	}
}

// refundShare refunds about a third of the PAID orders: operators with or without
// restock, buyers within their window. It returns how many it asked for.
func refundShare(t *testing.T, h *stacktest.Stack, rng *rand.Rand, ids []string) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		o := h.Lookup(t, id)
		if o.Status != inventory.StatusPaid || rng.IntN(3) != 0 {
			continue
		}
		var code int
		switch rng.IntN(3) {
		case 0:
			code, _ = h.Call(t, http.MethodPost, "/orders/"+id+"/refund", o.UserID, nil, "")
		case 1:
			code, _ = adminRefund(t, h, id, `{"restock":true,"reason":"returned"}`)
		default:
			code, _ = adminRefund(t, h, id, `{"restock":false,"reason":"lost"}`)
		}
		if code != http.StatusAccepted {
			t.Fatalf("refund %s: %d", id, code)
		}
		n++
	}
	return n
}

// waitRefunded waits until no order or second payment is owed money (REFUND_PENDING)
// or waits for it (REFUNDING), and returns the statuses counted ("extra": second
// payments, all REFUNDED; "late without stock": orders refunded because their payment
// came after their units were sold).
func waitRefunded(t *testing.T, h *stacktest.Stack, ids []string) map[string]int {
	t.Helper()
	var counts map[string]int
	eventually(t, 2*waitLimit, "every refund REFUNDED", func() bool {
		counts = map[string]int{}
		for _, it := range h.Scan(t, h.Tables.Orders) {
			switch it["kind"] {
			case "ORDER":
				counts[it["status"].(string)]++
				if refunds, _ := it["refunds"].([]any); len(refunds) > 0 && refunds[0].(map[string]any)["by"] == "stockguard" {
					counts["late without stock"]++
				}
			case "EXTRA_PAYMENT":
				counts["extra"]++
				if it["status"] != "REFUNDED" {
					return false
				}
			}
		}
		return counts["REFUND_PENDING"] == 0 && counts["REFUNDING"] == 0
	})
	return counts
}
