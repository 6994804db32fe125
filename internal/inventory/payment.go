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
	SaleStartsAt time.Time  // when its sale starts (UTC); zero: no start time
	LimitPerUser int        // units per user, 0 = no limit
	Shards       ShardStock // available units of each shard on sale (0 for one off sale or missing)
}

// Why a late payment is refunded instead of honoured (LatePayment): one rule for
// all, a late payment is honoured only as a new order of the same lines would be at
// that moment — the SKU on sale, its sale started, the user within its limit, the
// units available — and the refund names the first rule that fails.
const (
	DueNoStock    = "no stock left"                             // the shards cannot cover a line
	DueOffSale    = "SKU off sale"                              // a SKU is gone or off sale
	DueNotStarted = "sale not started"                          // a SKU's sale starts later
	DueOverLimit  = "per-user limit reached"                    // the user's counter refused, or a line is above the limit
	DueTooLarge   = "too many stock shards for one transaction" // DynamoDB's 100 actions
)

// LatePayment decides what a payment of o, found CANCELLED with its stock released,
// does at now: PaidLate with the order's items placed again on the shards that hold
// the units now (fullest first, so the transaction stays small), or RefundDue with its
// cause (DueOffSale … DueNoStock) when a new order of the same lines would be refused
// now: a SKU gone (absent) or off sale, its sale not started, a line above the SKU's
// per-user limit or r.OverLimit (the user's purchase counter refused the units on an
// earlier try), or a line the shards cannot cover.
func (o *Order) LatePayment(stock map[string]StockNow, now time.Time, r Retry) ([]OrderItem, PayResult, string) {
	if r.OverLimit {
		return nil, RefundDue, DueOverLimit
	}
	items := make([]OrderItem, len(o.Items))
	for i, it := range o.Items {
		s, ok := stock[it.SKU]
		switch {
		case !ok || !s.OnSale:
			return nil, RefundDue, DueOffSale
		case now.Before(s.SaleStartsAt):
			return nil, RefundDue, DueNotStarted
		case s.LimitPerUser > 0 && it.Qty > s.LimitPerUser:
			return nil, RefundDue, DueOverLimit
		}
		alloc, ok := s.Shards.Allocate(it.Qty)
		if !ok || len(s.Shards) == 0 {
			return nil, RefundDue, DueNoStock
		}
		items[i] = it
		items[i].Shards = alloc
	}
	return items, PaidLate, ""
}
