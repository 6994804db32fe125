package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Refund errors callers branch on with errors.Is.
var (
	// ErrRefundNotAllowed: the order cannot be refunded by this caller now: a buyer
	// outside the refund window (or with buyers' refunds off), or an order that was
	// never paid (PENDING, CANCELLED). docs/contract.md: 409 REFUND_NOT_ALLOWED.
	ErrRefundNotAllowed = errors.New("refund not allowed")
	// ErrRefundMismatch: a refund result names an out_refund_no, amount or order that
	// is not the refund stockguard asked for.
	ErrRefundMismatch = errors.New("refund result does not match the refund requested")
	// ErrRefundNotFound: no refund has that out_refund_no.
	ErrRefundNotFound = errors.New("refund not found")
)

// outRefundNoPattern is WeChat Pay APIv3's out_refund_no: 1–64 characters of
// [0-9A-Za-z_-|*@] (WeChat Pay APIv3 docs, 退款申请, out_refund_no).
var outRefundNoPattern = regexp.MustCompile(`^[0-9A-Za-z_\-|*@]{1,64}$`)

// ValidOutRefundNo reports whether s is a valid WeChat Pay out_refund_no.
func ValidOutRefundNo(s string) bool { return outRefundNoPattern.MatchString(s) }

// orderRefundSuffix ends the out_refund_no of an order's own refund; extra payments'
// end in "_T" and 16 hex characters.
const (
	orderRefundSuffix = "_R"
	extraRefundMark   = "_T"
)

// OutRefundNo is the out_refund_no of the refund of order id's own payment: the order
// id (6–32 of [0-9A-Za-z_-]) and "_R", at most 34 characters, so every retry of the
// refund carries the same number and WeChat Pay refunds it once.
func OutRefundNo(orderID string) string { return orderID + orderRefundSuffix }

// ExtraOutRefundNo is the out_refund_no of the refund of a second payment
// (transactionID) of order id, which must never be confused with the order's own:
// the order id, "_T" and the first 16 hex characters of SHA-256(transactionID), at
// most 50 characters.
func ExtraOutRefundNo(orderID, transactionID string) string {
	sum := sha256.Sum256([]byte(transactionID))
	return orderID + extraRefundMark + hex.EncodeToString(sum[:8])
}

// RefundOf says which refund an out_refund_no names: the order id, and whether it is
// the order's own refund (true) or a second payment's (false). ok is false for a
// number stockguard never makes.
func RefundOf(outRefundNo string) (orderID string, own bool, ok bool) {
	n := len(outRefundNo)
	switch {
	case n > len(orderRefundSuffix) && outRefundNo[n-len(orderRefundSuffix):] == orderRefundSuffix:
		orderID, own = outRefundNo[:n-len(orderRefundSuffix)], true
	case n > 18 && outRefundNo[n-18:n-16] == extraRefundMark:
		orderID = outRefundNo[:n-18]
	default:
		return "", false, false
	}
	return orderID, own, ValidOrderID(orderID)
}

// Requester says who asks for a change: the order's buyer, a merchant's operator
// (the merchant API), or stockguard itself with no person involved. The zero value is
// no one the rules trust: it is refused what a buyer would be.
type Requester int

// Requesters.
const (
	Buyer    Requester = iota + 1 // the order's owner (a JWT sub)
	Merchant                      // an operator, by IAM principal
	System                        // stockguard, e.g. a refund a payment owes
)

// trusted reports whether r may do what only the shop may: refund any paid order,
// keep the goods.
func (r Requester) trusted() bool { return r == Merchant || r == System }

// Goods says what a refund does with the order's goods.
type Goods int

// What happens to the goods.
const (
	// KeepGoods: the goods stay with the buyer (shipped): no stock moves.
	KeepGoods Goods = iota
	// ReturnGoods: the order's units go back to on-hand and available (RETURN entries).
	ReturnGoods
)

// RefundRequest is a request to refund an order: who asks, what becomes of the goods,
// and why.
type RefundRequest struct {
	// Requester is who asks: a buyer (always within the refund window, goods back:
	// nothing was shipped), a merchant or stockguard (any PAID or REFUND_PENDING
	// order, goods as Goods says).
	Requester Requester
	// Goods says whether the units come back to stock; a buyer's always do.
	Goods Goods
	// By is who asked: the operator's IAM principal ARN, the buyer's user id, or
	// "stockguard" for automatic refunds.
	By string
	// Reason is free text recorded with the refund.
	Reason string
}

// RefundStep says what a refund request does to an order.
type RefundStep int

// Refund steps.
const (
	// RefundReturn: PAID → REFUNDING with the units returned to stock (RETURN).
	RefundReturn RefundStep = iota + 1
	// RefundKeep: PAID → REFUNDING with no goods moved (restock false), or
	// REFUND_PENDING → REFUNDING (the order held no stock).
	RefundKeep
	// RefundUnderway: already REFUNDING; nothing to do (the request may be sent again).
	RefundUnderway
	// RefundDone: already REFUNDED; nothing to do.
	RefundDone
)

// RefundStep decides what r does to o at now (docs/design.md, "Refunds: goods
// before money"). A buyer may refund their PAID order within window after PaidAt (window 0:
// never); an operator any PAID or REFUND_PENDING order. An order already REFUNDING or
// REFUNDED answers RefundUnderway or RefundDone to anyone. Errors wrap
// ErrRefundNotAllowed.
func (o *Order) RefundStep(r RefundRequest, window time.Duration, now time.Time) (RefundStep, error) {
	switch o.Status {
	case StatusRefunding:
		return RefundUnderway, nil
	case StatusRefunded:
		return RefundDone, nil
	case StatusRefundPending:
		if r.Requester.trusted() {
			return RefundKeep, nil
		}
		return 0, fmt.Errorf("refund order %s: REFUND_PENDING orders are refunded automatically: %w", o.ID, ErrRefundNotAllowed)
	case StatusPaid:
		if r.Requester.trusted() && r.Goods == KeepGoods {
			return RefundKeep, nil
		}
		if r.Requester.trusted() || o.PaidAt != nil && window > 0 && now.Before(o.PaidAt.Add(window)) {
			return RefundReturn, nil
		}
		return 0, fmt.Errorf("refund order %s: outside the buyer's refund window (%v): %w", o.ID, window, ErrRefundNotAllowed)
	}
	return 0, fmt.Errorf("refund order %s (%s): never paid: %w", o.ID, o.Status, ErrRefundNotAllowed)
}

// Refund is one refund stockguard owes or made: of an order's own payment, or of a
// second payment of an order already paid (WeChat Pay APIv3, 退款申请).
type Refund struct {
	OutRefundNo   string     // out_refund_no, see OutRefundNo and ExtraOutRefundNo
	OrderID       string     // out_trade_no of the payment refunded
	TransactionID string     // WeChat Pay transaction_id of the payment refunded
	Amount        int64      // fen: the whole payment (amount.refund = amount.total)
	Currency      string     // CNY
	Status        Status     // REFUNDING or REFUNDED
	Since         time.Time  // when it became REFUNDING
	RefundedAt    *time.Time // when WeChat Pay reported it done
	RefundAmount  int64      // fen WeChat Pay reported refunded, once REFUNDED
	Error         string     // refundError: why WeChat Pay closed it or marked it abnormal
}

// OwnRefund is the refund of o's own payment as it stands (Status REFUNDING or
// REFUNDED); nil when o is in neither.
func (o *Order) OwnRefund() *Refund {
	if o.Status != StatusRefunding && o.Status != StatusRefunded {
		return nil
	}
	return &Refund{
		OutRefundNo: o.OutRefundNo, OrderID: o.ID, TransactionID: o.TransactionID, Amount: o.Amount,
		Currency: o.Currency, Status: o.Status, Since: deref(o.RefundingAt), RefundedAt: o.RefundedAt,
		RefundAmount: o.RefundAmount, Error: o.RefundError,
	}
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// RefundResult is what WeChat Pay says of a refund (a refund notification, the refund
// API's answer or a refund query), in the fields stockguard checks.
type RefundResult struct {
	OutRefundNo string // out_refund_no
	OutTradeNo  string // out_trade_no
	// TransactionID is the transaction_id of the payment refunded; "" when not said.
	TransactionID string
	Amount        int64     // amount.refund, fen
	State         string    // SUCCESS, CLOSED, ABNORMAL or PROCESSING (refund_status / status)
	At            time.Time // success_time; zero means now
}

// Refund result states (WeChat Pay APIv3 docs, 退款结果通知, refund_status).
const (
	RefundStateSuccess    = "SUCCESS"
	RefundStateClosed     = "CLOSED"
	RefundStateAbnormal   = "ABNORMAL"
	RefundStateProcessing = "PROCESSING"
)

// Check reports whether res is about r: the same out_refund_no, out_trade_no, amount
// and (when res names one) transaction. The error wraps ErrRefundMismatch.
func (r *Refund) Check(res RefundResult) error {
	if res.OutRefundNo != r.OutRefundNo || res.OutTradeNo != r.OrderID || res.Amount != r.Amount ||
		res.TransactionID != "" && res.TransactionID != r.TransactionID {
		return fmt.Errorf("refund %s of %s for %d fen: result says %s of %s for %d fen: %w",
			r.OutRefundNo, r.OrderID, r.Amount, res.OutRefundNo, res.OutTradeNo, res.Amount, ErrRefundMismatch)
	}
	return nil
}

// ValidateReason checks the reason an operator gives for a refund: 1 to
// MaxReasonLength characters of text. The error wraps ErrInvalidRequest.
func (r RefundRequest) ValidateReason() error {
	if !validText(r.Reason, MaxReasonLength) {
		return InvalidError("reason must be 1 to %d characters of text", MaxReasonLength)
	}
	return nil
}

// RefundProblems checks o's money side against returned, the units of its RETURN
// ledger entries by SKU (docs/design.md, "Refunds: goods before money", "Reconcile"): a
// refund that restocked has a RETURN entry of each line's units, one that did not (or
// an order not being refunded) has none, and no order is refunded more than it was
// paid. It returns one line per broken rule, none when the order is in order.
func (o *Order) RefundProblems(returned map[string]int) []string {
	var out []string
	refund := o.Status == StatusRefunding || o.Status == StatusRefunded
	for _, it := range o.Items {
		want := 0
		if refund && o.Restocked {
			want = it.Qty
		}
		if got := returned[it.SKU]; got != want {
			out = append(out, fmt.Sprintf("%s (%s, restocked %v): RETURN of %d units of %s, want %d", o.ID, o.Status, o.Restocked, got, it.SKU, want))
		}
	}
	if o.RefundAmount > o.Amount {
		out = append(out, fmt.Sprintf("%s: refunded %d fen of %d paid", o.ID, o.RefundAmount, o.Amount))
	}
	return out
}
