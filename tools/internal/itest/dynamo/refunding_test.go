package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// steppingClock is a clock one second further on at each reading.
func steppingClock(start time.Time) func() time.Time {
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		start = start.Add(time.Second)
		return start
	}
}

// Refunds under way are spread over the RefundingBySince buckets by their
// out_refund_no, and RefundingBefore reads every bucket, and the one key markers had
// before the buckets, merged oldest first.
func TestRefundingBefore_SpreadsRefundsOverBucketsAndListsThemAllOldestFirst(t *testing.T) {
	e := newEnv(t, dynamo.Options{Now: steppingClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))}, nil,
		inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 100, Shards: 2})
	const n = 40
	var started []string
	for i := range n {
		order := e.paidOrder(t, fmt.Sprint("u", i), fmt.Sprint("tx-", i), inventory.Line{SKU: "cup", Qty: 1})
		_, no, err := e.store.StartRefund(context.Background(), order, keepAll, 0)
		if err != nil || no == "" {
			t.Fatalf("StartRefund %d: %q %v", i, no, err)
		}
		started = append(started, no)
	}
	// The first refund's marker as it was written before the buckets: under the one key "R".
	e.Set(t, e.Tables.Orders, "refunding#"+started[0], "refundBucket", "R")

	buckets := map[string]int{}
	valid := map[string]bool{}
	for b := range dynamo.RefundBuckets {
		valid[fmt.Sprint("R", b)] = true
	}
	for _, it := range e.Scan(t, e.Tables.Orders) {
		if it["kind"] != string(inventory.StatusRefunding) || it["pk"] == "refunding#"+started[0] {
			continue
		}
		b, _ := it["refundBucket"].(string)
		if !valid[b] {
			t.Errorf("marker %s under refundBucket %q, want R0..R%d", it["pk"], b, dynamo.RefundBuckets-1)
		}
		buckets[b]++
	}
	// 39 refunds hashed onto 16 keys: all on fewer than 8 would be a broken hash.
	if len(buckets) < 8 {
		t.Errorf("39 refunds under %d refundBucket values %v, want them spread over at least 8 of %d", len(buckets), buckets, dynamo.RefundBuckets)
	}

	list := func(before time.Time) []string {
		var out []string
		for no, err := range e.store.RefundingBefore(context.Background(), before) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, no)
		}
		return out
	}
	if got := list(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)); !slices.Equal(got, started) {
		t.Errorf("RefundingBefore lists\n%v\nwant every refund oldest first\n%v", got, started)
	}
	// Each refund took a few clock readings (reserve, pay, refund): the cut falls
	// between two of them, a legacy marker and bucketed ones on both sides.
	half, err := e.store.RefundByNo(context.Background(), started[n/2])
	if err != nil {
		t.Fatal(err)
	}
	if got := list(half.Since); !slices.Equal(got, started[:n/2]) {
		t.Errorf("RefundingBefore(%v) lists %v, want the first %d", half.Since, got, n/2)
	}
	// Stopping early stops every bucket's query.
	for range e.store.RefundingBefore(context.Background(), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		break
	}
}
