package inventory

import (
	"fmt"
	"slices"
	"time"
)

// A Change is one decided transition of an order, or of a refund of one: the value a
// domain method (Order.Release, Order.Pay, Order.StartRefund, Refund.Record) returns
// and the store writes whole, in one conditional TransactWriteItems, then hands back
// to its caller as the same value (docs/design.md, "One path for every change"). It
// says everything the transaction does:
//
//   - the record it changes and the status that record must still be in (From): an
//     order, or a refund (held on its order, or apart: a second payment's);
//   - the record as the change leaves it (Order or Refund): what differs from the
//     record as read is what the transaction sets or removes, and the record returned
//     to the caller;
//   - the other facts it is conditioned on (Guards);
//   - per order line, the stock operations on each shard with their ledger ops
//     (Stock), the user's purchase counters counted or given back (Limits);
//   - the refund marker it lists or unlists (Marker), and the ledger entries' reference
//     (Entry).
//
// Whoever loses the From condition changes nothing; the store reads the record again
// and asks for the decision again. A new status is a new decision here and a test
// without a database.
type Change struct {
	Kind ChangeKind
	// From is the status the record must still have when the change is written: the
	// status it was read in.
	From Status
	// Order is the order as the change leaves it; nil for a change of a refund.
	Order *Order
	// Refund is the refund as the change leaves it, for a change of a refund (its
	// result); nil otherwise. The store writes it on the record that holds it: the
	// order for the order's own refund.
	Refund *Refund
	// Guards are the facts about the record, besides its status, that must still be as
	// read.
	Guards Guard
	// Stock lists, per order line, what the change does to its units on each shard.
	Stock []StockMove
	// Limits lists the purchase counters the change counts on or gives back.
	Limits []LimitMove
	// Marker, when set, lists or unlists a refund as REFUNDING.
	Marker *Marker
	// Entry names the ledger entries of Stock.
	Entry Entry
}

// ChangeKind says which transition a Change is (docs/design.md, "State machine").
type ChangeKind int

// Change kinds.
const (
	// NoChange: nothing to write (already done, or nothing to do); the record is as read.
	NoChange ChangeKind = iota
	// ChangeRelease: PENDING → CANCELLED, the reserved units back to available (RELEASE).
	ChangeRelease
	// ChangeCommit: PENDING → PAID, the reserved units leave on-hand (COMMIT).
	ChangeCommit
	// ChangePayLate: CANCELLED → PAID, the units reserved and committed again
	// (RESERVE and COMMIT under the order id + ".late").
	ChangePayLate
	// ChangeRefundDue: CANCELLED → REFUND_PENDING, paid with no stock to honour it.
	ChangeRefundDue
	// ChangeRefundStart: PAID or REFUND_PENDING → REFUNDING, the goods step of a refund
	// (RETURN when restocking).
	ChangeRefundStart
	// ChangeRefundResult: what WeChat Pay said of a refund recorded on it (REFUNDED, or
	// refundError set).
	ChangeRefundResult
	// ChangeShip: PAID stays PAID, a shipment recorded and its upload queued (Order.Ship).
	ChangeShip
	// ChangeShippingResult: PAID stays PAID, WeChat's answer to an upload recorded
	// (Order.ShippingResult).
	ChangeShippingResult
	// ChangePresale: PAID stays PAID, a presale declaration queued (Order.DeclarePresale).
	ChangePresale
	// ChangePresaleResult: PAID stays PAID, WeChat's answer to it recorded.
	ChangePresaleResult
	// ChangeAftersale: the status stays, an after-sale requested, decided or its goods
	// received (aftersale.go); one that starts its refund is a ChangeRefundStart.
	ChangeAftersale
	// ChangeReceipt: the status stays, WeChat's confirmation of receipt recorded
	// (Order.ConfirmReceipt).
	ChangeReceipt
)

var kindNames = map[ChangeKind]string{
	NoChange: "nothing", ChangeRelease: "release", ChangeCommit: "commit", ChangePayLate: "pay late",
	ChangeRefundDue: "refund-pending", ChangeRefundStart: "refund", ChangeRefundResult: "refund result",
	ChangeShip: "ship", ChangeShippingResult: "shipping result", ChangePresale: "presale", ChangePresaleResult: "presale result",
	ChangeAftersale: "after-sale",
	ChangeReceipt:   "receipt",
}

// String names the kind in words, e.g. "release".
func (k ChangeKind) String() string { return kindNames[k] }

// Guard is a set of facts about a record, besides its status, that a change requires
// to be as read.
type Guard int

// Guards.
const (
	// GuardPrepay: the order's prepay_id is the one read (or there is still none): a
	// payment started since the read must be asked about before a release.
	GuardPrepay Guard = 1 << iota
	// GuardRefundNo: the record's out_refund_no is the one read (a second payment's).
	GuardRefundNo
	// GuardRefunds: the order's refunds are as read (its RefundRev).
	GuardRefunds
	// GuardShipping: the order's shipping information is the one read (or there is
	// still none), so that concurrent shipments and upload results never overwrite
	// each other.
	GuardShipping
	// GuardPresale: the order's presale declaration is the one read (or still none).
	GuardPresale
	// GuardAftersales: the order's after-sales are as read (or there are still none),
	// so that concurrent requests and decisions never overwrite each other.
	GuardAftersales
	// GuardReceipt: the order's receipt is the one read (or still none), so that a
	// receipt is recorded once.
	GuardReceipt
)

// Has reports whether g holds every guard of h.
func (g Guard) Has(h Guard) bool { return g&h == h }

// StockMove is what a change does to one order line's stock: Ops applied, in order,
// to Item.Qty units spread over the shards Item.Shards names: one update per shard by
// the ops' summed effect (Op.Effect), one ledger entry per op.
type StockMove struct {
	Line int       // the order line
	Item OrderItem // the SKU and where its units are (or go)
	Ops  []Op
}

// Delta is the summed effect of m's ops on q units of one shard.
func (m StockMove) Delta(q int) Delta {
	var d Delta
	for _, op := range m.Ops {
		e, _ := op.Effect(q)
		d = d.Plus(e)
	}
	return d
}

// Returns reports whether m gives units back to stock (RETURN), which only needs its
// shards to be there: a shard refusing it was deleted by a reshard.
func (m StockMove) Returns() bool { return slices.Contains(m.Ops, OpReturn) }

// TakesAvailable reports whether m takes available units, which another buyer may
// have taken since they were read (a late payment's RESERVE): a shard refusing it is
// news, not a sign that the books are off.
func (m StockMove) TakesAvailable() bool { return m.Delta(1).Available < 0 }

// Reserves reports whether m reserves units anew, which only a SKU on sale allows.
func (m StockMove) Reserves() bool {
	for _, op := range m.Ops {
		if op == OpReserve {
			return true
		}
	}
	return false
}

// LimitMove is a change to the order's user's purchase counter of one SKU: Units > 0
// are counted (never past Cap when Cap > 0), Units < 0 given back (never below zero).
type LimitMove struct {
	Line  int    // the order line
	SKU   string // the SKU id
	Units int    // signed units
	Cap   int    // the SKU's per-user limit when counting; 0: none
}

// Marker lists a refund as REFUNDING since Since (the stuck pass and reconcile read
// the list), or, with Remove, takes it off the list.
type Marker struct {
	OutRefundNo string
	Since       time.Time
	Remove      bool
}

// Entry names the ledger entries a change writes: Ref is the first part of their key
// (the order id, or the order id + ".late" for a late payment's second RESERVE and
// its COMMIT), Reason and By (an operator's principal) are recorded with them, At is
// when (UTC).
type Entry struct {
	Ref    string
	Reason string
	By     string
	At     time.Time
}

// Retry is what earlier rounds of a change learnt from the store, for the next
// decision: purchase counters that held less than the order counted (changed by hand:
// they are not given back), and whether the user's counter refused a late payment's
// units (OverLimit), and SKUs a shard of which, that a refund would return units to,
// a shrinking reshard deleted (Retired).
type Retry struct {
	Drifted   map[string]bool // SKU ids
	OverLimit bool
	// Retired are SKU ids one of whose shards a reshard deleted after the order
	// committed units on it: their units go back on shard 0, which no reshard deletes
	// (shards past the target are the ones dropped, and the target is at least 1).
	Retired map[string]bool
}

// Retire records that a shard of sku an order committed units on is gone.
func (r *Retry) Retire(sku string) {
	if r.Retired == nil {
		r.Retired = map[string]bool{}
	}
	r.Retired[sku] = true
}

// Drift records that the counter of sku held less than a give-back needed.
func (r *Retry) Drift(sku string) {
	if r.Drifted == nil {
		r.Drifted = map[string]bool{}
	}
	r.Drifted[sku] = true
}

// None reports whether c writes nothing.
func (c Change) None() bool { return c.Kind == NoChange }

// String describes c for errors and logs, e.g. "release order 0190…".
func (c Change) String() string {
	switch {
	case c.Order != nil:
		return c.Kind.String() + " order " + c.Order.ID
	case c.Refund != nil:
		return c.Kind.String() + " " + c.Refund.OutRefundNo
	}
	return c.Kind.String()
}

// Actions is how many write actions c takes in one transaction: the record, the
// marker, each purchase counter, and per stock move one update per shard and one
// ledger entry per op.
func (c Change) Actions() int {
	n := 1
	if c.Marker != nil {
		n++
	}
	n += len(c.Limits)
	for _, m := range c.Stock {
		n += len(m.Item.Shards) + len(m.Ops)
	}
	return n
}

// PayResult is what c, the decision on a payment, does to its order: Replayed for no
// change.
func (c Change) PayResult() PayResult {
	switch c.Kind {
	case ChangeCommit:
		return PaidNow
	case ChangePayLate:
		return PaidLate
	case ChangeRefundDue:
		return RefundDue
	}
	return Replayed
}

// giveBack lists the purchase counters o's lines counted on, to be given back, except
// those r found drifted.
func (o *Order) giveBack(r Retry) []LimitMove {
	var out []LimitMove
	for i, it := range o.Items {
		if it.Limited && !r.Drifted[it.SKU] {
			out = append(out, LimitMove{Line: i, SKU: it.SKU, Units: -it.Qty})
		}
	}
	return out
}

// moves applies ops to every line of items.
func moves(items []OrderItem, ops ...Op) []StockMove {
	out := make([]StockMove, len(items))
	for i, it := range items {
		out[i] = StockMove{Line: i, Item: it, Ops: ops}
	}
	return out
}

// Release decides the release of o, read with the prepay_id seen, for reason at now
// (docs/design.md, "Release"): PENDING → CANCELLED with reason, every line's units
// RELEASEd on the shards they were reserved on and the purchase counters given back
// (except those r found drifted), conditioned on the prepay_id as read. A timeout
// releases only an order whose window has ended (Expired). An order that is no
// longer PENDING, or not yet due, is NoChange. An order that gained a WeChat Pay
// order since it was asked about (PrepayID is not seen) is an error wrapping ErrBusy:
// ask WeChat Pay again.
func (o *Order) Release(reason CancelReason, seen string, now time.Time, r Retry) (Change, error) {
	if !o.Status.CanBecome(StatusCancelled) || reason == CancelTimeout && !o.Expired(now) {
		return Change{}, nil
	}
	if o.PrepayID != seen {
		return Change{}, fmt.Errorf("release order %s: a WeChat Pay order was opened meanwhile: %w", o.ID, ErrBusy)
	}
	next := *o
	next.Status, next.CancelReason, next.CancelledAt = StatusCancelled, reason, &now
	return Change{
		Kind: ChangeRelease, From: o.Status, Order: &next, Guards: GuardPrepay,
		Limits: o.giveBack(r), Stock: moves(o.Items, OpRelease),
		Entry: Entry{Ref: o.ID, Reason: string(reason), At: now},
	}, nil
}

// LateRef is the ledger reference of a late payment's entries: distinct from the
// order's first RESERVE, which its release answered.
func LateRef(orderID string) string { return orderID + ".late" }

// NeedsStock reports whether deciding p on o (Pay) needs the stock of o's SKUs read
// now: a late payment whose user's counter has not refused it yet.
func (o *Order) NeedsStock(p Payment, r Retry) bool {
	step, err := o.PayStep(p)
	return err == nil && step == PayLate && !r.OverLimit
}

// Pay decides what the payment p (PaidAt set) does to o at now (docs/design.md,
// "Payment"), as PayStep picks the way:
//   - PENDING → PAID: the reserved units COMMITted on the shards they were reserved on;
//   - CANCELLED → PAID when LatePayment places every line again on the shards of
//     stock (read just before, see NeedsStock): RESERVE and COMMIT of each line, the
//     units counted on the purchase counters again (capped by the SKU's limit);
//   - CANCELLED → REFUND_PENDING otherwise, its DueCause saying why (LatePayment's
//     causes, or DueTooLarge for a transaction too large), stock untouched;
//   - NoChange for a payment already recorded (a replay).
//
// Errors are PayStep's: ErrPaymentMismatch, ErrPaidTwice.
func (o *Order) Pay(p Payment, stock map[string]StockNow, now time.Time, r Retry) (Change, error) {
	step, err := o.PayStep(p)
	if err != nil || step == PayReplayed {
		return Change{}, err
	}
	next := *o
	next.PaidAt, next.TransactionID = &p.PaidAt, p.TransactionID
	if step == PayCommit {
		next.Status = StatusPaid
		return Change{Kind: ChangeCommit, From: o.Status, Order: &next, Stock: moves(o.Items, OpCommit),
			Entry: Entry{Ref: o.ID, Reason: "paid " + p.TransactionID, At: now}}, nil
	}
	due := next
	due.Status = StatusRefundPending
	refundDue := func(cause string) Change {
		due.DueCause = cause
		return Change{Kind: ChangeRefundDue, From: o.Status, Order: &due}
	}
	items, result, cause := o.LatePayment(stock, now, r)
	if result == RefundDue {
		return refundDue(cause), nil
	}
	next.Status, next.Items, next.CancelReason, next.CancelledAt = StatusPaid, items, "", nil
	late := Change{Kind: ChangePayLate, From: o.Status, Order: &next, Stock: moves(items, OpReserve, OpCommit),
		Entry: Entry{Ref: LateRef(o.ID), Reason: "paid after cancel " + p.TransactionID, At: now}}
	for i, it := range items {
		if it.Limited {
			late.Limits = append(late.Limits, LimitMove{Line: i, SKU: it.SKU, Units: it.Qty, Cap: stock[it.SKU].LimitPerUser})
		}
	}
	if late.Actions() > MaxTransactionActions { // DynamoDB API Reference, TransactWriteItems: up to 100 actions
		return refundDue(DueTooLarge), nil
	}
	return late, nil
}

// StartRefund decides the goods step of one refund of o as req asks at now, buyers
// within window of the payment (RefundStep; docs/design.md, "Refunds: goods before
// money"): a new OrderRefund of the lines req names (nil: all that is left) under
// OutRefundNo(o.ID, n) for the order's n-th refund, REFUNDING and listed as REFUNDING
// since now, with who asked and why, its amount the lines' units × unit price (fen;
// exact, so the refund that takes what is left takes exactly what is left of the
// payment: no rounding). The order stays PAID while its refunds cover part of the
// payment and becomes REFUNDING with the refund that covers the rest. From PAID the
// purchase counters are given back per unit refunded (except those r found drifted,
// and units kept by the buyer: a refund without restock once something shipped)
// and, when restocking, exactly the refunded units are RETURNed, on the shards they were
// committed on, after those earlier refunds returned; the RETURN entries are keyed by
// RefundLedgerRef. The change is conditioned on the order's refunds as read
// (GuardRefunds): a racing refund makes the store read again and decide again, so
// refunds never sum past what was paid. A refund already made under req's refundId,
// or an order refunded whole, is NoChange. Errors: RefundStep's, and
// ErrRefundExceedsPaid (more units than are left on a line, a SKU not in the order,
// nothing left).
func (o *Order) StartRefund(req RefundRequest, window time.Duration, now time.Time, r Retry) (Change, error) {
	step, err := o.RefundStep(req, window, now)
	if err != nil || step == RefundUnderway || step == RefundDone {
		return Change{}, err
	}
	lines, amount, err := o.refundLines(req)
	if err != nil {
		return Change{}, err
	}
	ref := OrderRefund{
		RefundID: req.Key(), OutRefundNo: OutRefundNo(o.ID, len(o.Refunds)+1), Lines: lines, Amount: amount,
		Status: StatusRefunding, Since: now, Restocked: step == RefundReturn, By: req.By, Reason: req.Reason, Body: req.Body(),
	}
	next := *o
	next.Refunds = append(slices.Clone(o.Refunds), ref)
	next.RefundRev++
	if next.RefundsAmount() >= o.Amount {
		next.Status = StatusRefunding
		next.Shipping = o.cancelShipping() // the refund of all that is left, before shipping, cancels the shipment
		next.Presale = o.cancelPresale()   // and a presale declaration not made yet
	}
	c := Change{
		// Shipping and presale as read, present or not: a shipment recorded meanwhile
		// must not be overwritten (nor escape its cancellation).
		Kind: ChangeRefundStart, From: o.Status, Order: &next, Guards: GuardRefunds | GuardShipping | GuardPresale,
		Marker: &Marker{OutRefundNo: ref.OutRefundNo, Since: now},
		Entry:  Entry{Ref: RefundLedgerRef(o.ID, ref), Reason: "refund: " + req.Reason, By: req.By, At: now},
	}
	if o.Status != StatusPaid {
		return c, nil // REFUND_PENDING: neither stock nor counters were held
	}
	// Units that shipped and stay with the buyer (a refund without goods back, such as
	// an approved "refund" after-sale) are still the buyer's: their purchase counters
	// are not given back, or the per-user limit would let the buyer hold more.
	kept := !ref.Restocked && o.Shipping != nil && len(o.Shipping.Shipments) > 0
	for _, l := range lines {
		i := slices.IndexFunc(o.Items, func(it OrderItem) bool { return it.SKU == l.SKU })
		it := o.Items[i]
		if it.Limited && !r.Drifted[it.SKU] && !kept {
			c.Limits = append(c.Limits, LimitMove{Line: i, SKU: it.SKU, Units: -l.Qty})
		}
		if ref.Restocked {
			back := OrderItem{SKU: it.SKU, Qty: l.Qty, UnitPrice: it.UnitPrice, Shards: returnShards(it, o.RefundedUnits(it.SKU, true), l.Qty), Limited: it.Limited}
			if r.Retired[it.SKU] {
				back.Shards = map[int]int{0: l.Qty}
			}
			c.Stock = append(c.Stock, StockMove{Line: i, Item: back, Ops: []Op{OpReturn}})
		}
	}
	return fitRefund(c)
}

// fitRefund makes the goods step c of a refund fit in one TransactWriteItems of at
// most MaxTransactionActions actions (DynamoDB API Reference, TransactWriteItems:
// "up to 100 action requests";
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
// its REFUNDING marker makes it one action more than the order's reservation, which
// may have used all 100. Units return on fewer shards first (each line's on its
// lowest-numbered shard: any shard of a SKU sells them the same); a change that
// still does not fit is refused, a *RefusalError wrapping ErrRefundNotAllowed that
// says to refund the order in parts (with lines), and nothing moves.
func fitRefund(c Change) (Change, error) {
	if c.Actions() <= MaxTransactionActions {
		return c, nil
	}
	for i, m := range c.Stock {
		if len(m.Item.Shards) > 1 {
			item := m.Item
			item.Shards = map[int]int{slices.Min(mapsKeys(item.Shards)): item.Qty}
			c.Stock[i].Item = item
		}
	}
	if n := c.Actions(); n > MaxTransactionActions {
		return Change{}, refusal(ErrRefundNotAllowed, "refunding these %d lines of order %s at once needs %d transaction actions, more than DynamoDB's %d: refund them in parts, naming lines", len(c.Stock), c.Order.ID, n, MaxTransactionActions)
	}
	return c, nil
}

// RecordRefund decides what res, WeChat Pay's word on one of o's own refunds, does to
// o at now, as Refund.Record decides for that refund: the refund REFUNDED (off the
// REFUNDING list) or its error set; an order REFUNDING becomes REFUNDED with the last
// of its refunds. Conditioned on the order's refunds as read (GuardRefunds). Errors:
// ErrRefundNotFound (o has no refund res.OutRefundNo), Record's.
func (o *Order) RecordRefund(res RefundResult, now time.Time) (Change, error) {
	i := o.refundIndex(res.OutRefundNo)
	if i < 0 {
		return Change{}, fmt.Errorf("refund %s of order %s: %w", res.OutRefundNo, o.ID, ErrRefundNotFound)
	}
	c, err := o.RefundByNo(res.OutRefundNo).Record(res, now)
	if err != nil || c.None() {
		return Change{}, err
	}
	return o.withRefund(i, c.Refund, c.Marker), nil
}

// withRefund is the change of o that leaves its i-th refund as the money step says
// (status, when, how much, error), the order REFUNDED once every refund is and they
// cover the payment, with marker.
func (o *Order) withRefund(i int, r *Refund, marker *Marker) Change {
	next := *o
	next.Refunds = slices.Clone(o.Refunds)
	e := &next.Refunds[i]
	e.Status, e.RefundedAt, e.RefundAmount, e.Error = r.Status, r.RefundedAt, r.RefundAmount, r.Error
	next.RefundRev++
	if o.Status == StatusRefunding && !slices.ContainsFunc(next.Refunds, func(r OrderRefund) bool { return r.Status != StatusRefunded }) {
		next.Status = StatusRefunded
	}
	return Change{Kind: ChangeRefundResult, From: o.Status, Order: &next, Guards: GuardRefunds, Marker: marker}
}

// Record decides what res, WeChat Pay's word on r (a notification, the refund API's
// answer or a query), does to r at now: SUCCESS turns it REFUNDING → REFUNDED
// (refundedAt = res.At or now, refundAmount = res.Amount, refundError cleared) and takes it off the
// REFUNDING list; CLOSED and ABNORMAL keep it REFUNDING with refundError set (the
// money must be returned by hand), and so does REFUSED (the refund API refused it for
// good: refundError "REFUSED <code>") and WAITING (the refund API waits on the merchant,
// e.g. its balance: refundError WaitingError(code), asked again from the queue); PROCESSING, a result already recorded and a refund
// already REFUNDED are NoChange. The change is conditioned on the out_refund_no as
// read. Errors: Check's (ErrRefundMismatch).
func (r *Refund) Record(res RefundResult, now time.Time) (Change, error) {
	if err := r.Check(res); err != nil {
		return Change{}, err
	}
	if r.Status != StatusRefunding {
		return Change{}, nil // REFUNDED already: a replay
	}
	next := *r
	c := Change{Kind: ChangeRefundResult, From: r.Status, Refund: &next, Guards: GuardRefundNo}
	switch res.State {
	case RefundStateSuccess:
		at := res.At
		if at.IsZero() {
			at = now
		}
		// An earlier CLOSED or ABNORMAL step no longer holds: nothing is left to settle
		// by hand.
		next.Status, next.RefundedAt, next.RefundAmount, next.Error = StatusRefunded, &at, res.Amount, ""
		c.Marker = &Marker{OutRefundNo: r.OutRefundNo, Remove: true}
	case RefundStateClosed, RefundStateAbnormal, RefundStateRefused, RefundStateWaiting:
		why := res.State
		switch res.State {
		case RefundStateRefused:
			why += " " + res.Code
		case RefundStateWaiting:
			why = WaitingError(res.Code)
		}
		if r.Error == why {
			return Change{}, nil
		}
		next.Error = why
	default:
		return Change{}, nil
	}
	return c, nil
}
