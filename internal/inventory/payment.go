package inventory

import (
	"fmt"
	"time"
)

// Payment is a verified, successful payment of an order: the fields of a WeChat Pay
// APIv3 transaction that stockguard records (WeChat Pay APIv3 docs, 支付成功回调通知).
type Payment struct {
	OrderID       string    // out_trade_no: the order id
	TransactionID string    // WeChat Pay transaction_id
	Amount        int64     // amount.total, fen
	Currency      string    // amount.currency, e.g. CNY
	PaidAt        time.Time // success_time; zero means now
}

// PayResult says what a payment did to its order.
type PayResult int

// Pay results.
const (
	// PaidNow: PENDING → PAID; the reserved units were committed (on-hand −q).
	PaidNow PayResult = iota + 1
	// PaidLate: the order had been CANCELLED (timeout or user) and its stock released;
	// the units were available again, so they were reserved and committed at once, and
	// the order is PAID.
	PaidLate
	// RefundDue: the order had been CANCELLED and its units are no longer available;
	// it is REFUND_PENDING (money to give back), stock untouched.
	RefundDue
	// Replayed: this very payment (same transaction id) was recorded before; nothing
	// changed.
	Replayed
)

func (r PayResult) String() string {
	switch r {
	case PaidNow:
		return string(StatusPaid)
	case PaidLate:
		return "PAID_LATE"
	case RefundDue:
		return string(StatusRefundPending)
	case Replayed:
		return "REPLAYED"
	}
	return "UNKNOWN"
}

// Recorded reports whether the order already carries p (same WeChat Pay
// transaction_id): a resent notification.
func (o *Order) Recorded(p Payment) bool { return o.TransactionID == p.TransactionID }

// PayStep says which way a payment takes from the order's current status.
type PayStep int

// Pay steps.
const (
	// PayCommit: PENDING → PAID, the reserved units are committed.
	PayCommit PayStep = iota + 1
	// PayLate: CANCELLED → PAID or REFUND_PENDING, decided by LatePayment.
	PayLate
	// PayReplayed: the order already records this payment; nothing to do.
	PayReplayed
)

// PayStep decides what paying o with p does (docs/design.md, "State machine"). Errors:
// ErrPaymentMismatch when p's amount (fen) or currency differ from the order's;
// ErrPaidTwice when the order is already PAID (or further on) by another transaction.
func (o *Order) PayStep(p Payment) (PayStep, error) {
	switch {
	case p.Amount != o.Amount || p.Currency != o.Currency:
		return 0, fmt.Errorf("pay order %s: paid %d fen %s, order is %d fen %s: %w", o.ID, p.Amount, p.Currency, o.Amount, o.Currency, ErrPaymentMismatch)
	case o.Status == StatusPending:
		return PayCommit, nil
	case o.Status.CanBecome(StatusPaid):
		return PayLate, nil // CANCELLED: its stock was released, the late way decides
	case o.Recorded(p):
		return PayReplayed, nil
	}
	return 0, fmt.Errorf("pay order %s with %s: %s by %s: %w", o.ID, p.TransactionID, o.Status, o.TransactionID, ErrPaidTwice)
}

// StockNow is one SKU as a late payment finds it, read just before.
type StockNow struct {
	OnSale       bool       // the SKU record's on-sale flag
	LimitPerUser int        // units per user, 0 = no limit
	Shards       ShardStock // available units of each shard on sale (0 for one off sale or missing)
}

// LatePayment decides what a payment of o, found CANCELLED with its stock released,
// does: PaidLate with the order's items placed again on the shards that hold the
// units now (fullest first, so the transaction stays small), or RefundDue when that
// cannot be: a SKU gone from stock (absent) or off sale, a line above the SKU's
// per-user limit, a line the shards cannot cover, or r.OverLimit (the user's purchase
// counter refused the units on an earlier try).
func (o *Order) LatePayment(stock map[string]StockNow, r Retry) ([]OrderItem, PayResult) {
	if r.OverLimit {
		return nil, RefundDue
	}
	items := make([]OrderItem, len(o.Items))
	for i, it := range o.Items {
		now, ok := stock[it.SKU]
		if !ok || !now.OnSale || now.LimitPerUser > 0 && it.Qty > now.LimitPerUser {
			return nil, RefundDue
		}
		alloc, ok := now.Shards.Allocate(it.Qty)
		if !ok || len(now.Shards) == 0 {
			return nil, RefundDue
		}
		items[i] = it
		items[i].Shards = alloc
	}
	return items, PaidLate
}
