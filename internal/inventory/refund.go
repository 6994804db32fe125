package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
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

// ExtraOutRefundNo is the out_refund_no of the refund of a second payment
// (transactionID) of order id, which must never be confused with the order's own:
// the order id, "_T" and the first 16 hex characters of SHA-256(transactionID), at
// most 50 characters.
func ExtraOutRefundNo(orderID, transactionID string) string {
	sum := sha256.Sum256([]byte(transactionID))
	return orderID + extraRefundMark + hex.EncodeToString(sum[:8])
}

// RefundOf says which refund an out_refund_no names: the order id, and whether it is
// one of the order's own refunds (true: OutRefundNo) or a second payment's (false:
// ExtraOutRefundNo). ok is false for a number stockguard never makes.
func RefundOf(outRefundNo string) (orderID string, own bool, ok bool) {
	n := len(outRefundNo)
	if n > 18 && outRefundNo[n-18:n-16] == extraRefundMark && isHex(outRefundNo[n-16:]) {
		orderID = outRefundNo[:n-18]
	} else if orderID, own = ownRefundOf(outRefundNo); !own {
		return "", false, false
	}
	return orderID, own, ValidOrderID(orderID)
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
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
	// Lines are the units to refund, merged by SKU and sorted (ValidateLines); nil:
	// all that is left to refund.
	Lines []RefundLine
	// RefundID is the caller's idempotency key of this refund (refundId); "": derived
	// from the request (Key).
	RefundID string
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
// before money"). A buyer may refund their PAID order within window after PaidAt
// (window 0: never) until a shipment is recorded; an operator any PAID order, or a REFUND_PENDING one whole. A
// refund already made under r's refundId (Key) answers RefundUnderway or RefundDone
// when r asks the same (OrderRefund.Asks), else an error wrapping ErrIdempotencyKeyReused. An order
// REFUNDING or REFUNDED answers ErrRefundExceedsPaid to any other request, with a
// refundId or without (nothing is left: its body is not silently ignored). No order takes
// more than MaxOrderRefunds refunds (below WeChat Pay's MaxRefundsPerOrder), nor any
// after RefundPeriod from its payment (WeChat Pay's rule), refused before any goods
// move. Refusals are *RefusalError
// values naming the order's status and what can be refunded; they wrap
// ErrRefundNotAllowed unless said otherwise.
func (o *Order) RefundStep(r RefundRequest, window time.Duration, now time.Time) (RefundStep, error) {
	if done := o.Refund(r.Key()); done != nil {
		switch {
		case !done.Asks(r) && r.RefundID == "" && (o.Status == StatusRefunding || o.Status == StatusRefunded):
			return 0, refusal(ErrRefundExceedsPaid, "order %s is %s: nothing is left to refund", o.ID, o.Status)
		case !done.Asks(r) && r.RefundID == "":
			return 0, refusal(ErrIdempotencyKeyReused, "order %s has a refund of these lines asked with another reason or restock; to refund them again, give a refundId", o.ID)
		case !done.Asks(r):
			return 0, refusal(ErrIdempotencyKeyReused, "refundId %q of order %s was used with another request (its lines, restock or reason differ)", r.Key(), o.ID)
		case done.Status == StatusRefunded:
			return RefundDone, nil
		}
		return RefundUnderway, nil
	}
	switch o.Status {
	case StatusRefunding, StatusRefunded:
		// Not a replay (those are answered above, by key and body): whatever it asks,
		// with or without a refundId, nothing is left to refund.
		return 0, refusal(ErrRefundExceedsPaid, "order %s is %s: nothing is left to refund", o.ID, o.Status)
	case StatusRefundPending:
		switch {
		case !r.Requester.trusted():
			return 0, refusal(ErrRefundNotAllowed, "order %s is REFUND_PENDING: paid with no stock to honour it, its refund is automatic", o.ID)
		case r.Lines != nil:
			return 0, refusal(ErrRefundNotAllowed, "order %s is REFUND_PENDING: it held no goods and is refunded whole, without lines", o.ID)
		}
		return RefundKeep, nil
	case StatusPaid:
		return o.paidRefundStep(r, window, now)
	}
	return 0, refusal(ErrRefundNotAllowed, "order %s is %s, never paid: only PAID orders (and, by the merchant, REFUND_PENDING ones) can be refunded", o.ID, o.Status)
}

// paidRefundStep is RefundStep for a PAID order.
func (o *Order) paidRefundStep(r RefundRequest, window time.Duration, now time.Time) (RefundStep, error) {
	switch {
	case len(o.Refunds) >= MaxOrderRefunds:
		return 0, refusal(ErrRefundNotAllowed, "order %s has had %d refunds, the most one order takes: the rest must be settled by hand", o.ID, MaxOrderRefunds)
	case o.PaidAt != nil && now.After(o.PaidAt.Add(RefundPeriod)):
		return 0, refusal(ErrRefundNotAllowed, "order %s was paid more than a year ago: WeChat Pay refunds no payment older than that", o.ID)
	case r.Requester.trusted() && r.Goods == KeepGoods:
		return RefundKeep, nil
	case !r.Requester.trusted() && o.Shipping != nil && len(o.Shipping.Shipments) > 0:
		// A buyer's refund puts the units back on sale: not those with the courier.
		return 0, refusal(ErrRefundNotAllowed, "order %s has shipped (%d parcel(s)): units on their way cannot go back on sale; ask for an after-sale instead (POST /orders/%s/aftersales)", o.ID, len(o.Shipping.Shipments), o.ID)
	case r.Requester.trusted() || o.PaidAt != nil && window > 0 && now.Before(o.PaidAt.Add(window)):
		return RefundReturn, nil
	case window <= 0:
		return 0, refusal(ErrRefundNotAllowed, "order %s is PAID, but buyers cannot refund by themselves here: ask for an after-sale (POST /orders/%s/aftersales)", o.ID, o.ID)
	}
	return 0, refusal(ErrRefundNotAllowed, "order %s is PAID, but the buyer's refund window (%v after payment) is over: ask for an after-sale (POST /orders/%s/aftersales)", o.ID, window, o.ID)
}

// Refund is one refund stockguard owes or made, as its money step sees it: one of an
// order's own refunds (OrderRefund, see Order.RefundByNo), or the refund of a second
// payment of an order already paid (WeChat Pay APIv3, 退款申请).
type Refund struct {
	OutRefundNo   string     // out_refund_no, see OutRefundNo and ExtraOutRefundNo
	OrderID       string     // out_trade_no of the payment refunded
	TransactionID string     // WeChat Pay transaction_id of the payment refunded
	Amount        int64      // fen: this refund (amount.refund)
	Total         int64      // fen: the payment refunded (amount.total)
	Currency      string     // CNY
	Status        Status     // REFUNDING or REFUNDED
	Since         time.Time  // when it became REFUNDING
	RefundedAt    *time.Time // when WeChat Pay reported it done
	RefundAmount  int64      // fen WeChat Pay reported refunded, once REFUNDED
	Error         string     // refundError: why WeChat Pay closed it, marked it abnormal or refused it for good
	Resolution    string     // an operator's last retry or settlement of it: what, by whom (IAM principal), why
}

// RefundByNo is o's own refund with out_refund_no no as its money step sees it; nil
// when o has none.
func (o *Order) RefundByNo(no string) *Refund {
	i := o.refundIndex(no)
	if i < 0 {
		return nil
	}
	r := o.Refunds[i]
	return &Refund{
		OutRefundNo: r.OutRefundNo, OrderID: o.ID, TransactionID: o.TransactionID, Amount: r.Amount, Total: o.Amount,
		Currency: o.Currency, Status: r.Status, Since: r.Since, RefundedAt: r.RefundedAt, RefundAmount: r.RefundAmount, Error: r.Error,
		Resolution: r.Resolution,
	}
}

// RefundResult is what WeChat Pay says of a refund (a refund notification, the refund
// API's answer or a refund query), in the fields stockguard checks.
type RefundResult struct {
	OutRefundNo string // out_refund_no
	OutTradeNo  string // out_trade_no
	// TransactionID is the transaction_id of the payment refunded; "" when not said.
	TransactionID string
	Amount        int64     // amount.refund, fen
	Total         int64     // amount.total, fen: the payment refunded; 0 when not said
	State         string    // SUCCESS, CLOSED, ABNORMAL or PROCESSING (refund_status / status), or REFUSED
	Code          string    // REFUSED: the refund API's error code
	At            time.Time // success_time; zero means now
}

// Refund result states (WeChat Pay APIv3 docs, 退款结果通知, refund_status).
const (
	RefundStateSuccess    = "SUCCESS"
	RefundStateClosed     = "CLOSED"
	RefundStateAbnormal   = "ABNORMAL"
	RefundStateProcessing = "PROCESSING"
	// RefundStateRefused is stockguard's own, not WeChat Pay's: the refund API refused
	// the request for good (wechatpay.FinalRefusal); the money must be settled by hand.
	RefundStateRefused = "REFUSED"
	// RefundStateWaiting is stockguard's own too: the refund API answered a refusal
	// that waits on the merchant (NOT_ENOUGH: the merchant's available balance cannot
	// cover the refund, WeChat Pay APIv3 docs, 申请退款, 错误码 NOT_ENOUGH "余额不足"); the
	// refund stays on the refund queue and is asked again under the same
	// out_refund_no, so it must not be settled by hand meanwhile.
	RefundStateWaiting = "WAITING"
)

// codeNotEnough is WeChat Pay's NOT_ENOUGH (申请退款, 错误码: 余额不足).
const codeNotEnough = "NOT_ENOUGH"

// WaitingError is the refundError of a refund the refund API answered code, a refusal
// that waits on the merchant (RefundStateWaiting): "WAITING <code>: " and what the
// operator must do, in words shown by stockctl and the merchant's order view.
func WaitingError(code string) string {
	if code == codeNotEnough {
		return RefundStateWaiting + " " + code + ": the merchant's WeChat Pay balance cannot cover this refund: top it up; the refund is asked again by itself"
	}
	return RefundStateWaiting + " " + code + ": WeChat Pay waits on the merchant; the refund is asked again by itself"
}

// Waiting reports whether r waits on the merchant (RefundStateWaiting): asked again
// from the refund queue, never to be settled by hand meanwhile.
func (r *Refund) Waiting() bool { return strings.HasPrefix(r.Error, RefundStateWaiting+" ") }

// Refused reports whether the refund API refused r for good (its Error is a refusal):
// it is not requested again until an operator retries it.
func (r *Refund) Refused() bool { return strings.HasPrefix(r.Error, RefundStateRefused) }

// Check reports whether res is about r: the same out_refund_no, out_trade_no, amount
// and (when res names them) payment total and transaction. The error wraps
// ErrRefundMismatch.
func (r *Refund) Check(res RefundResult) error {
	if res.OutRefundNo != r.OutRefundNo || res.OutTradeNo != r.OrderID || res.Amount != r.Amount ||
		res.Total != 0 && res.Total != r.Total || res.TransactionID != "" && res.TransactionID != r.TransactionID {
		return fmt.Errorf("refund %s of %s for %d of %d fen: result says %s of %s for %d of %d fen: %w",
			r.OutRefundNo, r.OrderID, r.Amount, r.Total, res.OutRefundNo, res.OutTradeNo, res.Amount, res.Total, ErrRefundMismatch)
	}
	return nil
}

// ValidateReason checks the reason an operator gives for a refund: 1 to
// MaxReasonLength characters of text. The error wraps ErrInvalidRequest.
func (r RefundRequest) ValidateReason() error {
	if !validText(r.Reason, MaxReasonLength) {
		return InvalidError("reason must be 1 to %d %s", MaxReasonLength, TextRule)
	}
	return nil
}

// RefundProblems checks o's money side against returned, the units of its RETURN
// ledger entries by SKU, all its refunds together (docs/design.md, "Refunds: goods
// before money", "Reconcile"): RETURN entries of exactly the units its restocking
// refunds cover, none beyond; per line no more units refunded than paid; each refund's
// amount its lines' units × unit price; and no more refunded than paid, asked or
// reported; and of the refunds of its second payments read with it (Second), each
// reported refunded whole, and none left with an error WeChat Pay will not fix (retry
// or settle it: the merchant API's refund-retry and refund-settle take them). It
// returns one line per broken rule, none when the order is in order.
func (o *Order) RefundProblems(returned map[string]int) []string {
	var out []string
	for _, it := range o.Items {
		if got, want := returned[it.SKU], o.RefundedUnits(it.SKU, true); got != want {
			out = append(out, fmt.Sprintf("%s (%s): RETURN of %d units of %s, restocking refunds cover %d", o.ID, o.Status, got, it.SKU, want))
		}
		if n := o.RefundedUnits(it.SKU, false); n > it.Qty {
			out = append(out, fmt.Sprintf("%s: %d units of %s refunded, %d paid", o.ID, n, it.SKU, it.Qty))
		}
	}
	for _, r := range o.Refunds {
		var want int64
		for _, l := range r.Lines {
			for _, it := range o.Items {
				if it.SKU == l.SKU {
					want += int64(l.Qty) * it.UnitPrice
				}
			}
		}
		if r.Amount != want {
			out = append(out, fmt.Sprintf("%s: refund %s of %d fen, its lines come to %d", o.ID, r.OutRefundNo, r.Amount, want))
		}
	}
	if asked, got := o.RefundsAmount(), o.RefundedAmount(); asked > o.Amount || got > o.Amount {
		out = append(out, fmt.Sprintf("%s: refunds of %d fen asked, %d reported, of %d paid", o.ID, asked, got, o.Amount))
	}
	for _, r := range o.Second {
		switch {
		case r.Status == StatusRefunded && r.RefundAmount != r.Amount:
			out = append(out, fmt.Sprintf("%s: second payment's refund %s reported %d fen of %d paid", o.ID, r.OutRefundNo, r.RefundAmount, r.Amount))
		case r.Status == StatusRefunding && r.Error != "" && !r.Waiting():
			out = append(out, fmt.Sprintf("%s: second payment's refund %s of %d fen is %s: retry or settle it", o.ID, r.OutRefundNo, r.Amount, r.Error))
		}
	}
	return out
}
