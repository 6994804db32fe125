package inventory

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// After-sales (docs/design.md, "After-sales"): a buyer's request, after payment, for
// money back on lines of a PAID order, decided by the merchant. A "refund" approved
// starts a partial refund of its lines without goods (StartRefund, KeepGoods); a
// "return-refund" approved waits for the goods to come back, and the merchant's
// receipt starts the refund with the units returned to stock then, not before. The
// rules are these pure decisions; the store applies them on the order.

// AftersaleKind is what a buyer asks for.
type AftersaleKind string

// After-sale kinds.
const (
	AftersaleRefund       AftersaleKind = "refund"        // money back, the goods stay with the buyer
	AftersaleReturnRefund AftersaleKind = "return-refund" // the goods go back, then the money
)

// AftersaleStatus is where an after-sale stands.
type AftersaleStatus string

// After-sale statuses: REQUESTED → REJECTED, or → APPROVED → (return-refund:
// received →) REFUNDING, its refund then settled as any other. A return-refund
// APPROVED and not received may still be REJECTED (with a reason told to the buyer):
// the goods never came, or a refund the merchant started meanwhile took its units, so
// that its receipt could never refund them (409) and it would wait for ever.
const (
	AftersaleRequested AftersaleStatus = "REQUESTED"
	AftersaleApproved  AftersaleStatus = "APPROVED" // a return-refund waiting for the goods
	AftersaleRejected  AftersaleStatus = "REJECTED"
	AftersaleRefunding AftersaleStatus = "REFUNDING" // its refund started (OutRefundNo)
	// AftersaleRefunded is not stored: an after-sale REFUNDING whose refund WeChat Pay
	// reported REFUNDED is shown so (Order.AftersaleShown).
	AftersaleRefunded AftersaleStatus = "REFUNDED"
)

// AftersaleShown is a's status as the order's views show it: REFUNDING becomes
// REFUNDED once the refund it started (a.OutRefundNo) is REFUNDED on o.
func (o *Order) AftersaleShown(a Aftersale) AftersaleStatus {
	if a.Status == AftersaleRefunding {
		for _, r := range o.Refunds {
			if r.OutRefundNo == a.OutRefundNo && r.Status == StatusRefunded {
				return AftersaleRefunded
			}
		}
	}
	return a.Status
}

// Bounds of an after-sale request.
const (
	// MaxAftersaleIDLength bounds an aftersaleId: printable ASCII, short enough that
	// its refund's refundId (AftersaleRefundID) fits MaxRefundIDLength.
	MaxAftersaleIDLength = MaxRefundIDLength - len(aftersaleRefundPrefix)
	// MaxAftersaleImages is how many image URLs a request carries at most.
	MaxAftersaleImages = 9
	// MaxImageURLLength bounds one image URL.
	MaxImageURLLength = 512
	// MaxAftersalesPerOrder is how many after-sales one order takes, whatever became of
	// them: each is kept on the order's item (at most about 7 KB: an id, a reason and
	// a rejection's of MaxReasonLength characters, MaxAftersaleImages URLs, MaxLines
	// lines), so the order stays far below DynamoDB's 400 KB item size (DynamoDB
	// Developer Guide, "Service, account, and table quotas": item size).
	MaxAftersalesPerOrder = 10
)

const aftersaleRefundPrefix = "aftersale-"

// AftersaleRefundID is the refundId of the refund an after-sale starts: one per
// after-sale, so that starting it again never refunds twice.
func AftersaleRefundID(aftersaleID string) string { return aftersaleRefundPrefix + aftersaleID }

// AftersaleRequest is a buyer's after-sale request as asked.
type AftersaleRequest struct {
	ID     string        // aftersaleId: the buyer's idempotency key
	Kind   AftersaleKind // refund or return-refund
	Lines  []RefundLine  // nil: every unit left to refund
	Reason string        // why, 1..MaxReasonLength characters
	Images []string      // https URLs of photos, at most MaxAftersaleImages
}

// Aftersale is one after-sale of an order.
type Aftersale struct {
	AftersaleRequest
	Status       AftersaleStatus
	RequestedAt  time.Time
	DecidedAt    *time.Time // approved or rejected
	DecidedBy    string     // the operator's IAM principal
	RejectReason string
	ReceivedAt   *time.Time // return-refund: the goods came back
	OutRefundNo  string     // REFUNDING: the refund it started
}

// Validate checks r: aftersaleId 1..MaxAftersaleIDLength printable ASCII, a known
// kind, lines as RefundRequest.ValidateLines (merged by SKU, sorted), a reason, and
// at most MaxAftersaleImages https URLs. The error wraps ErrInvalidRequest.
func (r *AftersaleRequest) Validate() error {
	if err := CheckAftersaleID("aftersaleId", r.ID); err != nil {
		return err
	}
	if r.Kind != AftersaleRefund && r.Kind != AftersaleReturnRefund {
		return InvalidError(`kind must be "refund" or "return-refund"`)
	}
	req := RefundRequest{Lines: r.Lines, Reason: r.Reason}
	if err := req.ValidateLines(); err != nil {
		return err
	}
	if err := req.ValidateReason(); err != nil {
		return err
	}
	r.Lines = req.Lines
	if len(r.Images) > MaxAftersaleImages {
		return InvalidError("images: at most %d", MaxAftersaleImages)
	}
	for _, img := range r.Images {
		u, err := url.Parse(img)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(img) > MaxImageURLLength ||
			strings.IndexFunc(img, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			return InvalidError("images must be https URLs of at most %d characters, spaces escaped (%%20)", MaxImageURLLength)
		}
	}
	return nil
}

// body is r in one line: the same aftersaleId must come with the same body.
func (r AftersaleRequest) body() string {
	return fmt.Sprintf("kind=%s lines=%s reason=%q images=%s", r.Kind, linesText(r.Lines), r.Reason, strings.Join(r.Images, " "))
}

// Aftersale returns o's after-sale id, or nil.
func (o *Order) Aftersale(id string) *Aftersale {
	for i := range o.Aftersales {
		if o.Aftersales[i].ID == id {
			return &o.Aftersales[i]
		}
	}
	return nil
}

// open reports whether a holds units not yet refunded nor given up.
func (a *Aftersale) open() bool {
	return a.Status == AftersaleRequested || a.Status == AftersaleApproved
}

// RequestAftersale decides a buyer's after-sale request r (Validate'd) on o at now:
// the order with the after-sale REQUESTED, and true; or, for the same request again
// (aftersaleId and body), o unchanged and false. The lines (nil: every unit left)
// must be paid and neither refunded nor claimed by another open after-sale. Errors: a
// *RefusalError wrapping ErrIdempotencyKeyReused (the aftersaleId with another body),
// ErrRefundNotAllowed (o is not PAID) or ErrRefundExceedsPaid (more than is left).
func (o *Order) RequestAftersale(r AftersaleRequest, now time.Time) (*Order, bool, error) {
	if a := o.Aftersale(r.ID); a != nil {
		asked := r
		if r.Lines == nil { // every unit left: as resolved when first asked
			asked.Lines = a.Lines
		}
		if a.body() != asked.body() {
			return nil, false, refusal(ErrIdempotencyKeyReused, "aftersaleId %q of order %s was used with another request", r.ID, o.ID)
		}
		return o, false, nil
	}
	if o.Status != StatusPaid {
		return nil, false, refusal(ErrRefundNotAllowed, "order %s is %s: only a PAID order takes an after-sale", o.ID, o.Status)
	}
	if len(o.Aftersales) >= MaxAftersalesPerOrder {
		return nil, false, refusal(ErrRefundNotAllowed, "order %s has had %d after-sales, the most one order takes: ask the shop", o.ID, MaxAftersalesPerOrder)
	}
	if err := o.refundsLeft(); err != nil {
		return nil, false, err
	}
	lines, err := o.aftersaleLines(r.Lines)
	if err != nil {
		return nil, false, err
	}
	r.Lines = lines
	next := *o
	next.Aftersales = append(slices.Clone(o.Aftersales), Aftersale{AftersaleRequest: r, Status: AftersaleRequested, RequestedAt: now})
	return &next, true, nil
}

// aftersaleLines resolves asked (nil: every unit left) against what o's refunds and
// open after-sales leave. Errors wrap ErrRefundExceedsPaid.
func (o *Order) aftersaleLines(asked []RefundLine) ([]RefundLine, error) {
	left := func(it OrderItem) int {
		n := it.Qty - o.RefundedUnits(it.SKU, false)
		for i := range o.Aftersales {
			if a := &o.Aftersales[i]; a.open() {
				for _, l := range a.Lines {
					if l.SKU == it.SKU {
						n -= l.Qty
					}
				}
			}
		}
		return n
	}
	var out []RefundLine
	if asked == nil {
		for _, it := range o.Items {
			if n := left(it); n > 0 {
				out = append(out, RefundLine{SKU: it.SKU, Qty: n})
			}
		}
		if len(out) == 0 {
			return nil, refusal(ErrRefundExceedsPaid, "order %s: nothing is left to refund", o.ID)
		}
		return out, nil
	}
	for _, l := range asked {
		i := slices.IndexFunc(o.Items, func(it OrderItem) bool { return it.SKU == l.SKU })
		if i < 0 {
			return nil, refusal(ErrRefundExceedsPaid, "order %s has no line of SKU %s", o.ID, l.SKU)
		}
		if n := left(o.Items[i]); l.Qty > n {
			return nil, refusal(ErrRefundExceedsPaid, "order %s: %d units of %s asked, %d are paid and neither refunded nor asked for", o.ID, l.Qty, l.SKU, max(n, 0))
		}
		out = append(out, l)
	}
	return out, nil
}

// refundsLeft refuses an after-sale on o once o took MaxOrderRefunds refunds: its
// refund could never start. The error wraps ErrRefundNotAllowed.
func (o *Order) refundsLeft() error {
	if len(o.Refunds) >= MaxOrderRefunds {
		return refusal(ErrRefundNotAllowed, "order %s has had %d refunds, the most one order takes: ask the shop", o.ID, MaxOrderRefunds)
	}
	return nil
}

// stillRefundable checks, before an approval, that a's refund can still start: o is
// PAID, below MaxOrderRefunds, and a's lines are paid and not refunded since (another
// refund may have taken them after the request), as a refund's own lines are checked
// (refundLines). Errors wrap ErrRefundNotAllowed or ErrRefundExceedsPaid.
func (o *Order) stillRefundable(a Aftersale) error {
	if o.Status != StatusPaid {
		return refusal(ErrRefundNotAllowed, "order %s is %s: after-sale %s has nothing left to refund", o.ID, o.Status, a.ID)
	}
	if err := o.refundsLeft(); err != nil {
		return err
	}
	_, _, err := o.refundLines(RefundRequest{Lines: a.Lines}) // a.Lines were resolved when asked: never nil
	return err
}

// DecideAftersale decides the merchant's approval (approve true) or rejection (with
// reason) of o's after-sale id by (IAM principal) at now. It returns the order as it
// becomes and, when the money is to go now (an approved "refund"), the refund to
// start through StartRefund (its lines, no goods, refundId AftersaleRefundID(id));
// the caller then records the refund's out_refund_no (Refunding). A decision already
// made the same way is the order unchanged. A rejection also takes a return-refund
// APPROVED whose goods were not received (its way out when they never come, or when
// another refund took its units); its units are then free to ask for again. Errors:
// ErrAftersaleNotFound; a *RefusalError wrapping ErrRefundNotAllowed when the
// after-sale was decided the other way or is past deciding (REFUNDING, received).
func (o *Order) DecideAftersale(id string, approve bool, by, reason string, now time.Time) (*Order, *RefundRequest, error) {
	i := slices.IndexFunc(o.Aftersales, func(a Aftersale) bool { return a.ID == id })
	if i < 0 {
		return nil, nil, fmt.Errorf("after-sale %s of order %s: %w", id, o.ID, ErrAftersaleNotFound)
	}
	a := o.Aftersales[i]
	want := AftersaleRejected
	if approve {
		want = AftersaleApproved
	}
	switch {
	case a.Status == AftersaleRequested:
	case !approve && a.Kind == AftersaleReturnRefund && a.Status == AftersaleApproved && a.ReceivedAt == nil: // waiting for its goods
	case a.Status == want || approve && a.Status == AftersaleRefunding && a.DecidedAt != nil:
		return o, a.refund(false), nil
	default:
		return nil, nil, refusal(ErrRefundNotAllowed, "after-sale %s of order %s is %s", id, o.ID, a.Status)
	}
	if approve {
		if err := o.stillRefundable(a); err != nil {
			return nil, nil, err
		}
	}
	a.Status, a.DecidedAt, a.DecidedBy = want, &now, by
	if !approve {
		a.RejectReason = reason
	}
	next := *o
	next.Aftersales = slices.Clone(o.Aftersales)
	next.Aftersales[i] = a
	return &next, a.refund(false), nil
}

// ReceiveAftersale decides the merchant's receipt of the goods of o's approved
// return-refund id at now: RECEIVED, and the refund to start with the units returned
// to stock (ReturnGoods). Received again: the same refund (StartRefund replays it).
// Errors: ErrAftersaleNotFound; a *RefusalError wrapping ErrRefundNotAllowed for a
// "refund" after-sale or one not approved, or wrapping ErrRefundExceedsPaid or
// ErrRefundNotAllowed when a refund since the approval took its units or the order
// is no longer PAID (the message says to reject it: DecideAftersale).
func (o *Order) ReceiveAftersale(id, by string, now time.Time) (*Order, *RefundRequest, error) {
	i := slices.IndexFunc(o.Aftersales, func(a Aftersale) bool { return a.ID == id })
	if i < 0 {
		return nil, nil, fmt.Errorf("after-sale %s of order %s: %w", id, o.ID, ErrAftersaleNotFound)
	}
	a := o.Aftersales[i]
	switch {
	case a.Kind != AftersaleReturnRefund:
		return nil, nil, refusal(ErrRefundNotAllowed, "after-sale %s of order %s is a refund without return: no goods to receive", id, o.ID)
	case a.ReceivedAt != nil:
		return o, a.refund(true), nil
	case a.Status != AftersaleApproved:
		return nil, nil, refusal(ErrRefundNotAllowed, "after-sale %s of order %s is %s: approve it before receiving its goods", id, o.ID, a.Status)
	}
	if err := o.stillRefundable(a); err != nil {
		// Another refund took its units (or the order is no longer PAID) since the
		// approval: its goods cannot be refunded through it; the merchant rejects it.
		var r *RefusalError
		if errors.As(err, &r) {
			return nil, nil, refusal(r.Err, "%s; after-sale %s cannot refund its goods: reject it with a reason", r.Reason, id)
		}
		return nil, nil, err
	}
	a.ReceivedAt = &now
	next := *o
	next.Aftersales = slices.Clone(o.Aftersales)
	next.Aftersales[i] = a
	return &next, a.refund(true), nil
}

// refund is the refund an approved after-sale starts now, nil when none: a "refund"
// at once, a "return-refund" once received (received true).
func (a Aftersale) refund(received bool) *RefundRequest {
	if a.Status == AftersaleRejected || a.Status == AftersaleRequested ||
		a.Kind == AftersaleReturnRefund && !received {
		return nil
	}
	goods := KeepGoods
	if a.Kind == AftersaleReturnRefund {
		goods = ReturnGoods
	}
	return &RefundRequest{
		Requester: Merchant, Goods: goods, By: a.DecidedBy, Reason: "after-sale " + a.ID + ": " + a.Reason,
		Lines: a.Lines, RefundID: AftersaleRefundID(a.ID),
	}
}

// AftersaleRefunding is o with after-sale id REFUNDING under the refund outRefundNo it
// started (the store records it with the refund's goods step).
func (o *Order) AftersaleRefunding(id, outRefundNo string) *Order {
	next := *o
	next.Aftersales = slices.Clone(o.Aftersales)
	for i := range next.Aftersales {
		if a := &next.Aftersales[i]; a.ID == id {
			a.Status, a.OutRefundNo = AftersaleRefunding, outRefundNo
		}
	}
	return &next
}

// The changes the store writes (through its one transition path): each after-sale
// decision above, as one inventory.Change conditioned on the order's status, its
// after-sales and its refunds as read, so that concurrent requests and decisions on
// one order are applied one after the other and none is lost. A decision that starts
// the after-sale's refund is that refund's goods step (StartRefund) in the same
// change, with the after-sale REFUNDING under its out_refund_no: either both are
// written or neither.

// RequestAftersaleChange is RequestAftersale as a change: NoChange for the same
// request again. Errors are RequestAftersale's.
func (o *Order) RequestAftersaleChange(r AftersaleRequest, now time.Time) (Change, error) {
	next, created, err := o.RequestAftersale(r, now)
	if err != nil || !created {
		return Change{}, err
	}
	// Refunds as read too: what is left to ask for depends on them.
	return Change{Kind: ChangeAftersale, From: o.Status, Order: next, Guards: GuardAftersales | GuardRefunds}, nil
}

// DecideAftersaleChange is DecideAftersale as a change: an approved "refund" starts
// its refund in the same change (retry as StartRefund takes it); a decision already
// made the same way is NoChange. Errors are DecideAftersale's and StartRefund's
// (e.g. ErrRefundExceedsPaid when another refund took the units meanwhile: nothing
// is decided).
func (o *Order) DecideAftersaleChange(id string, approve bool, by, reason string, now time.Time, retry Retry) (Change, error) {
	next, refund, err := o.DecideAftersale(id, approve, by, reason, now)
	if err != nil {
		return Change{}, err
	}
	return o.aftersaleChange(id, next, refund, now, retry)
}

// ReceiveAftersaleChange is ReceiveAftersale as a change: the goods received and the
// refund started with its units back in stock (RETURN, on the shards they left, or on
// shard 0 of a SKU a reshard shrank: retry), once. Errors are ReceiveAftersale's and
// StartRefund's.
func (o *Order) ReceiveAftersaleChange(id, by string, now time.Time, retry Retry) (Change, error) {
	next, refund, err := o.ReceiveAftersale(id, by, now)
	if err != nil {
		return Change{}, err
	}
	return o.aftersaleChange(id, next, refund, now, retry)
}

// aftersaleChange is the change from o to next, after-sale id's decision, starting
// refund (nil: none) on next and recording its out_refund_no on the after-sale.
func (o *Order) aftersaleChange(id string, next *Order, refund *RefundRequest, now time.Time, retry Retry) (Change, error) {
	if refund == nil {
		if next == o {
			return Change{}, nil
		}
		return Change{Kind: ChangeAftersale, From: o.Status, Order: next, Guards: GuardAftersales | GuardRefunds}, nil
	}
	c, err := next.StartRefund(*refund, 0, now, retry)
	switch {
	case err != nil:
		return Change{}, err
	case c.None():
		// Its refund was started already: the after-sale records it, if not yet.
		started := next.Refund(refund.Key())
		if a := next.Aftersale(id); started == nil || a.Status == AftersaleRefunding {
			return Change{}, nil
		}
		return Change{Kind: ChangeAftersale, From: o.Status, Order: next.AftersaleRefunding(id, started.OutRefundNo), Guards: GuardAftersales | GuardRefunds}, nil
	}
	c.Order = c.Order.AftersaleRefunding(id, c.Marker.OutRefundNo)
	c.Guards |= GuardAftersales
	return c, nil
}
