package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

func payment(o *inventory.Order, tx string) inventory.Payment {
	return inventory.Payment{OrderID: o.ID, TransactionID: tx, Amount: o.Amount, Currency: o.Currency}
}

func TestPay_CommitsTheReservedUnitsOnce(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, Shards: 4, LimitPerUser: 5})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 3})
	results := map[inventory.PayResult]int{}
	var mu sync.Mutex
	parallel(20, func(int) {
		got, res, err := e.store.Pay(context.Background(), payment(order, "4200000001"))
		if err != nil || got.Status != inventory.StatusPaid || got.TransactionID != "4200000001" || got.PaidAt == nil {
			t.Errorf("Pay: %+v %v %v", got, res, err)
		}
		mu.Lock()
		results[res]++
		mu.Unlock()
	})
	if results[inventory.PaidNow] != 1 || results[inventory.Replayed] != 19 {
		t.Errorf("results %v, want 1 PAID and 19 REPLAYED", results)
	}
	if ops := e.Ops(t, order.ID); ops[string(inventory.OpCommit)] != 1 || ops[string(inventory.OpRelease)] != 0 {
		t.Errorf("ledger ops %v, want one COMMIT", ops)
	}
	if b := e.books(t, "cup"); b.onHand != 7 || b.available != 7 {
		t.Errorf("onHand %d available %d, want 7 and 7", b.onHand, b.available)
	}
	// A paid order is never released.
	if _, _, err := e.store.Cancel(context.Background(), "u1", order.ID); !errors.Is(err, inventory.ErrNotCancellable) {
		t.Errorf("cancel after pay: %v, want ErrNotCancellable", err)
	}
	e.Check(t)
}

func TestPay_RejectsWhatDoesNotMatchAndChangesNothing(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
	paid := e.reserve(t, "u2", inventory.Line{SKU: "cup", Qty: 1})
	if _, _, err := e.store.Pay(context.Background(), payment(paid, "tx-paid")); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		return fmt.Sprint(e.Scan(t, e.Tables.SKUs), e.Scan(t, e.Tables.Orders), e.Scan(t, e.Tables.StockLog))
	}
	before := snapshot()
	for _, tc := range []struct {
		name string
		p    inventory.Payment
		want error
	}{
		{"amount too low", inventory.Payment{OrderID: order.ID, TransactionID: "t1", Amount: order.Amount - 1, Currency: "CNY"}, inventory.ErrPaymentMismatch},
		{"amount too high", inventory.Payment{OrderID: order.ID, TransactionID: "t1", Amount: order.Amount + 1, Currency: "CNY"}, inventory.ErrPaymentMismatch},
		{"currency", inventory.Payment{OrderID: order.ID, TransactionID: "t1", Amount: order.Amount, Currency: "USD"}, inventory.ErrPaymentMismatch},
		{"unknown order", inventory.Payment{OrderID: "0123456789abcdef0123456789abcdef", TransactionID: "t1", Amount: 1, Currency: "CNY"}, inventory.ErrOrderNotFound},
		{"a counter's key", inventory.Payment{OrderID: "limit#cup#u1", TransactionID: "t1", Amount: 1, Currency: "CNY"}, inventory.ErrOrderNotFound},
		{"paid by another transaction", payment(paid, "tx-other"), inventory.ErrPaidTwice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := e.store.Pay(context.Background(), tc.p); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if snapshot() != before {
		t.Error("a rejected payment changed the tables")
	}
}

func TestPay_AfterCancelReservesAgainWhenStockRemains(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, Shards: 2, LimitPerUser: 3}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "saucer", Stock: 5})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 3}, inventory.Line{SKU: "saucer", Qty: 1})
	if _, _, err := e.store.Cancel(context.Background(), "u1", order.ID); err != nil {
		t.Fatal(err)
	}
	got, res, err := e.store.Pay(context.Background(), payment(order, "late-1"))
	if err != nil || res != inventory.PaidLate || got.Status != inventory.StatusPaid {
		t.Fatalf("late pay: %+v %v %v, want PAID_LATE", got, res, err)
	}
	if _, res, err := e.store.Pay(context.Background(), payment(order, "late-1")); err != nil || res != inventory.Replayed {
		t.Errorf("replay: %v %v", res, err)
	}
	if ops := e.Ops(t, order.ID); ops[string(inventory.OpReserve)] != 4 || ops[string(inventory.OpRelease)] != 2 || ops[string(inventory.OpCommit)] != 2 {
		t.Errorf("ledger ops %v, want RESERVE 4 (2 lines × 2), RELEASE 2, COMMIT 2", ops)
	}
	if b := e.books(t, "cup"); b.onHand != 7 || b.available != 7 {
		t.Errorf("cup onHand %d available %d, want 7 and 7", b.onHand, b.available)
	}
	// The limit counts the paid units again.
	if _, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: "u1", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})}); !errors.Is(err, inventory.ErrLimitExceeded) {
		t.Errorf("another cup for u1: %v, want LIMIT_EXCEEDED", err)
	}
	e.Check(t)
}

func TestPay_AfterCancelWithStockGoneIsRefundPending(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 3})
	order := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
	if _, _, err := e.store.Cancel(context.Background(), "u1", order.ID); err != nil {
		t.Fatal(err)
	}
	e.reserve(t, "u2", inventory.Line{SKU: "cup", Qty: 2}) // one unit left
	skus := fmt.Sprint(e.Scan(t, e.Tables.SKUs))
	got, res, err := e.store.Pay(context.Background(), payment(order, "late-2"))
	if err != nil || res != inventory.RefundDue || got.Status != inventory.StatusRefundPending || got.TransactionID != "late-2" {
		t.Fatalf("late pay: %+v %v %v, want REFUND_PENDING", got, res, err)
	}
	if fmt.Sprint(e.Scan(t, e.Tables.SKUs)) != skus {
		t.Error("REFUND_PENDING touched stock")
	}
	if _, res, err := e.store.Pay(context.Background(), payment(order, "late-2")); err != nil || res != inventory.Replayed {
		t.Errorf("replay: %v %v", res, err)
	}
	e.Check(t)
}

// A payment racing the timeout and the user's cancel, over many orders: each order is
// either PAID and never released, or CANCELLED first and then paid late; never both
// released and committed from the same reservation, and the books balance.
func TestPay_RacingTimeoutAndCancelResolvesEachOrderOneWay(t *testing.T) {
	c := newClock()
	e := newEnv(t, dynamo.Options{Now: c.Now, PaymentTimeout: time.Minute}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 200, Shards: 4, LimitPerUser: 4}, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "saucer", Stock: 200})
	const orders = 30
	list := make([]*inventory.Order, orders)
	for i := range list {
		list[i] = e.reserve(t, fmt.Sprintf("u%d", i), inventory.Line{SKU: "cup", Qty: 2}, inventory.Line{SKU: "saucer", Qty: 1})
	}
	c.Advance(time.Minute)
	results := map[inventory.PayResult]int{}
	var mu sync.Mutex
	parallel(3*orders, func(i int) {
		o := list[i/3]
		switch i % 3 {
		case 0:
			_, res, err := e.store.Pay(context.Background(), payment(o, "tx-"+o.ID))
			if err != nil {
				t.Errorf("pay %s: %v", o.ID, err)
			}
			mu.Lock()
			results[res]++
			mu.Unlock()
		case 1:
			if _, _, err := e.store.Expire(context.Background(), o.ID); err != nil {
				t.Errorf("expire %s: %v", o.ID, err)
			}
		case 2:
			if _, _, err := e.store.Cancel(context.Background(), o.UserID, o.ID); err != nil && !errors.Is(err, inventory.ErrNotCancellable) {
				t.Errorf("cancel %s: %v", o.ID, err)
			}
		}
	})
	for _, o := range list {
		got, err := e.store.Order(context.Background(), o.UserID, o.ID)
		if err != nil || got.Status != inventory.StatusPaid {
			t.Errorf("order %s: %+v %v, want PAID (now or late: stock remained)", o.ID, got, err)
			continue
		}
		ops := e.Ops(t, o.ID)
		if ops[string(inventory.OpCommit)] != 2 || ops[string(inventory.OpRelease)] != 0 && ops[string(inventory.OpReserve)] != 4 {
			t.Errorf("order %s ledger %v: a released order must have been reserved again", o.ID, ops)
		}
	}
	if results[inventory.PaidNow]+results[inventory.PaidLate] != orders {
		t.Errorf("results %v, want %d payments, each PAID now or late", results, orders)
	}
	t.Logf("results: %v", results)
	if b := e.books(t, "cup"); b.onHand != 200-2*orders || b.available != 200-2*orders {
		t.Errorf("cup onHand %d available %d, want %d each", b.onHand, b.available, 200-2*orders)
	}
	e.Check(t)
}

// Scarce stock: released units are contested by new buyers while the late payments of
// the released orders arrive. Whatever wins, nothing is oversold: PAID and PENDING
// orders together never hold more than the stock, a late payment that finds nothing is
// REFUND_PENDING, and the books balance.
func TestPay_LatePaymentsAndNewBuyersNeverOversell(t *testing.T) {
	for trial := range 5 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			c := newClock()
			e := newEnv(t, dynamo.Options{Now: c.Now, PaymentTimeout: time.Minute}, nil)
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, Shards: 2})
			var first []*inventory.Order
			for i := range 5 {
				first = append(first, e.reserve(t, fmt.Sprintf("first-%d", i), inventory.Line{SKU: "cup", Qty: 2}))
			}
			c.Advance(time.Minute)
			results := map[string]int{}
			var mu sync.Mutex
			note := func(k string) { mu.Lock(); results[k]++; mu.Unlock() }
			parallel(20, func(i int) {
				switch {
				case i < 5:
					if _, _, err := e.store.Expire(context.Background(), first[i].ID); err != nil {
						t.Error(err)
					}
				case i < 10:
					_, res, err := e.store.Pay(context.Background(), payment(first[i-5], fmt.Sprintf("tx-%d", i)))
					if err != nil {
						t.Error(err)
					}
					note(res.String())
				default:
					_, _, err := e.store.Reserve(context.Background(), inventory.ReserveRequest{UserID: fmt.Sprintf("new-%d", i), Cart: cart(t, inventory.Line{SKU: "cup", Qty: 2})})
					if err == nil {
						note("new order")
					} else if !errors.Is(err, inventory.ErrStockOut) {
						t.Error(err)
					}
				}
			})
			held := 0
			for _, it := range e.Scan(t, e.Tables.Orders) {
				if it["kind"] == "ORDER" && (it["status"] == "PAID" || it["status"] == "PENDING") {
					held += 2
				}
			}
			if held > 10 {
				t.Errorf("orders hold %d units of 10: oversold (%v)", held, results)
			}
			if results["PAID"]+results["PAID_LATE"]+results["REFUND_PENDING"] != 5 {
				t.Errorf("payment results %v, want 5", results)
			}
			t.Logf("%v", results)
			e.Check(t)
		})
	}
}

// A late payment takes stock again only as a new order could: within the user's limit,
// on sale, and in one transaction; otherwise the money is due back, stock untouched.
func TestPay_LateWhereANewOrderWouldBeRefusedIsRefundPending(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env) *inventory.Order
	}{
		{"limit reached meanwhile", func(t *testing.T, e *env) *inventory.Order {
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10, LimitPerUser: 2})
			first := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
			if _, _, err := e.store.Cancel(context.Background(), "u1", first.ID); err != nil {
				t.Fatal(err)
			}
			e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2}) // the limit is used again
			return first
		}},
		{"off sale meanwhile", func(t *testing.T, e *env) *inventory.Order {
			e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
			first := e.reserve(t, "u1", inventory.Line{SKU: "cup", Qty: 2})
			if _, _, err := e.store.Cancel(context.Background(), "u1", first.ID); err != nil {
				t.Fatal(err)
			}
			if err := e.store.SetOnSale(context.Background(), "cup", false); err != nil {
				t.Fatal(err)
			}
			return first
		}},
		{"too wide for one transaction", func(t *testing.T, e *env) *inventory.Order {
			var lines []inventory.Line
			for i := range 20 {
				id := fmt.Sprintf("sku-%02d", i)
				e.createSKU(t, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: id, Stock: 15, Shards: 3})
				lines = append(lines, inventory.Line{SKU: id, Qty: 13}) // 3 shards a line
			}
			first := e.reserve(t, "u1", lines...) // 81 actions; paying late needs 101
			if _, _, err := e.store.Cancel(context.Background(), "u1", first.ID); err != nil {
				t.Fatal(err)
			}
			return first
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, dynamo.Options{}, nil)
			order := tc.setup(t, e)
			skus := fmt.Sprint(e.Scan(t, e.Tables.SKUs))
			got, res, err := e.store.Pay(context.Background(), payment(order, "late"))
			if err != nil || res != inventory.RefundDue || got.Status != inventory.StatusRefundPending {
				t.Fatalf("late pay: %+v %v %v, want REFUND_PENDING", got, res, err)
			}
			if fmt.Sprint(e.Scan(t, e.Tables.SKUs)) != skus {
				t.Error("REFUND_PENDING touched stock")
			}
			e.Check(t)
		})
	}
}
