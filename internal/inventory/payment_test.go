package inventory_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestOrderPayStep(t *testing.T) {
	pay := inventory.Payment{OrderID: "o1", TransactionID: "tx1", Amount: 300, Currency: "CNY"}
	for _, tc := range []struct {
		name    string
		status  inventory.Status
		txID    string // the order's recorded transaction id
		payment func(*inventory.Payment)
		want    inventory.PayStep
		err     error
	}{
		{"pending is committed", inventory.StatusPending, "", nil, inventory.PayCommit, nil},
		{"cancelled goes the late way", inventory.StatusCancelled, "", nil, inventory.PayLate, nil},
		{"same payment again is a replay", inventory.StatusPaid, "tx1", nil, inventory.PayReplayed, nil},
		{"refund-pending replay", inventory.StatusRefundPending, "tx1", nil, inventory.PayReplayed, nil},
		{"paid by another transaction", inventory.StatusPaid, "tx0", nil, 0, inventory.ErrPaidTwice},
		{"refunded by another transaction", inventory.StatusRefunded, "tx0", nil, 0, inventory.ErrPaidTwice},
		{"amount differs", inventory.StatusPending, "", func(p *inventory.Payment) { p.Amount = 1 }, 0, inventory.ErrPaymentMismatch},
		{"currency differs", inventory.StatusPending, "", func(p *inventory.Payment) { p.Currency = "USD" }, 0, inventory.ErrPaymentMismatch},
		{"mismatch checked before a replay", inventory.StatusPaid, "tx1", func(p *inventory.Payment) { p.Amount = 301 }, 0, inventory.ErrPaymentMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pay
			if tc.payment != nil {
				tc.payment(&p)
			}
			o := &inventory.Order{ID: "o1", Status: tc.status, Amount: 300, Currency: "CNY", TransactionID: tc.txID}
			got, err := o.PayStep(p)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("PayStep = %v, %v; want %v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestOrderLatePayment(t *testing.T) {
	order := &inventory.Order{ID: "o1", Status: inventory.StatusCancelled, Items: []inventory.OrderItem{
		{SKU: "cup", Qty: 3, UnitPrice: 100, Shards: map[int]int{0: 3}, Limited: true},
		{SKU: "saucer", Qty: 2, UnitPrice: 50, Shards: map[int]int{1: 2}},
	}}
	stock := func(change func(map[string]inventory.StockNow)) map[string]inventory.StockNow {
		m := map[string]inventory.StockNow{
			"cup":    {OnSale: true, LimitPerUser: 5, Shards: inventory.ShardStock{0, 2, 2}},
			"saucer": {OnSale: true, Shards: inventory.ShardStock{7}},
		}
		if change != nil {
			change(m)
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		stock     map[string]inventory.StockNow
		overLimit bool
		want      inventory.PayResult
		cause     string
	}{
		{"units available again, split over shards", stock(nil), false, inventory.PaidLate, ""},
		{"purchase counter refused", stock(nil), true, inventory.RefundDue, inventory.DueOverLimit},
		{"SKU gone", stock(func(m map[string]inventory.StockNow) { delete(m, "saucer") }), false, inventory.RefundDue, inventory.DueOffSale},
		{"SKU off sale", stock(func(m map[string]inventory.StockNow) {
			m["cup"] = inventory.StockNow{LimitPerUser: 5, Shards: inventory.ShardStock{9}}
		}), false, inventory.RefundDue, inventory.DueOffSale},
		{"sale start moved later", stock(func(m map[string]inventory.StockNow) {
			m["cup"] = inventory.StockNow{OnSale: true, SaleStartsAt: t0.Add(time.Hour), Shards: inventory.ShardStock{9}}
		}), false, inventory.RefundDue, inventory.DueNotStarted},
		{"sale started", stock(func(m map[string]inventory.StockNow) {
			m["cup"] = inventory.StockNow{OnSale: true, SaleStartsAt: t0.Add(-time.Hour), Shards: inventory.ShardStock{9}}
		}), false, inventory.PaidLate, ""},
		{"line above a lowered limit", stock(func(m map[string]inventory.StockNow) {
			m["cup"] = inventory.StockNow{OnSale: true, LimitPerUser: 2, Shards: inventory.ShardStock{9}}
		}), false, inventory.RefundDue, inventory.DueOverLimit},
		{"limit lifted", stock(func(m map[string]inventory.StockNow) {
			m["cup"] = inventory.StockNow{OnSale: true, Shards: inventory.ShardStock{9}}
		}), false, inventory.PaidLate, ""},
		{"sold out since", stock(func(m map[string]inventory.StockNow) {
			m["cup"] = inventory.StockNow{OnSale: true, Shards: inventory.ShardStock{1, 1}}
		}), false, inventory.RefundDue, inventory.DueNoStock},
		{"no shards readable", stock(func(m map[string]inventory.StockNow) { m["saucer"] = inventory.StockNow{OnSale: true} }), false, inventory.RefundDue, inventory.DueNoStock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, got, cause := order.LatePayment(tc.stock, t0, inventory.Retry{OverLimit: tc.overLimit})
			if got != tc.want || cause != tc.cause {
				t.Fatalf("LatePayment = %v %q, want %v %q", got, cause, tc.want, tc.cause)
			}
			if got == inventory.RefundDue {
				if items != nil {
					t.Errorf("refund with items %+v", items)
				}
				return
			}
			for i, it := range items {
				was := order.Items[i]
				if it.SKU != was.SKU || it.Qty != was.Qty || it.UnitPrice != was.UnitPrice || it.Limited != was.Limited {
					t.Errorf("item %d changed beyond its shards: %+v, was %+v", i, it, was)
				}
				total := 0
				for n, units := range it.Shards {
					total += units
					if have := tc.stock[it.SKU].Shards[n]; units > have {
						t.Errorf("%s: shard %d given %d units, holds %d", it.SKU, n, units, have)
					}
				}
				if total != it.Qty {
					t.Errorf("%s: shards %v hold %d units, want %d", it.SKU, it.Shards, total, it.Qty)
				}
			}
			if !maps.Equal(order.Items[0].Shards, map[int]int{0: 3}) {
				t.Errorf("the order's own items were changed: %v", order.Items[0].Shards)
			}
		})
	}
}
