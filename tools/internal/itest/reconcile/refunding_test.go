package reconcile_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Refunds under way sit on many RefundingBySince keys (and, for those started before
// the buckets, on the one key of before): reconcile's money side reads them all, so a
// RETURN entry gone missing is found whichever key the refund's marker is on, and
// every refund left REFUNDING past the bound is reported, oldest first.
func TestReconcile_FindsRefundsOnEveryRefundingKey(t *testing.T) {
	h := newStack(t, nil)
	const n = 12
	orders := make([]string, n)
	for i := range orders {
		orders[i] = h.Order(t, fmt.Sprint("buyer-", i), `{"items":[{"skuId":"saucer","qty":1}]}`)
		if code, out := h.Call(t, "POST", "/_local/pay/"+orders[i], "", nil, ""); code != http.StatusNoContent {
			t.Fatalf("pay: %d %v", code, out)
		}
	}
	var stuck []string
	for _, id := range orders {
		h.Clock.Advance(time.Second)
		if code, out := h.Call(t, "POST", "/admin/orders/"+id+"/refund", "", nil, `{"restock":true,"reason":"test"}`); code != http.StatusAccepted {
			t.Fatalf("refund: %d %v", code, out)
		}
		stuck = append(stuck, inventory.OutRefundNo(id, 1))
	}
	// The first refund's marker as written before the buckets, under the one key "R".
	h.Set(t, h.Tables.Orders, "refunding#"+stuck[0], "refundBucket", "R")
	if rep := runReconcile(t, h); len(rep.Differences)+len(rep.RefundProblems)+len(rep.StuckRefunds) != 0 {
		t.Fatalf("after refunds: %+v", rep)
	}
	// Their RETURN entries deleted after the run read them: only the index leads
	// reconcile to these orders now.
	lost := []string{orders[0], orders[n-1]}
	for _, id := range lost {
		h.Delete(t, h.Tables.StockLog, id+"#RETURN#saucer")
	}
	rep := runReconcile(t, h)
	if len(rep.RefundProblems) != len(lost) {
		t.Fatalf("two RETURN entries deleted: problems %v", rep.RefundProblems)
	}
	for i, id := range lost {
		if !strings.Contains(rep.RefundProblems[i], id) {
			t.Errorf("problem %d: %q, want order %s", i, rep.RefundProblems[i], id)
		}
	}
	h.Clock.Advance(31 * time.Minute)
	if rep := runReconcile(t, h); !slices.Equal(rep.StuckRefunds, stuck) {
		t.Errorf("31 minutes on: stuck\n%v\nwant every refund, oldest first\n%v", rep.StuckRefunds, stuck)
	}
}
