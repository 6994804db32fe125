package dynamo

import (
	"context"
	"fmt"

	"github.com/stockguard/stockguard/internal/inventory"
)

// After-sales (docs/design.md, "After-sales"): held on their order (attribute
// "aftersales", at most inventory.MaxAftersalesPerOrder), requested, decided and
// received through the one transition path, each change conditioned on the order's
// status, after-sales and refunds as read (inventory.GuardAftersales,
// inventory.GuardRefunds); the refund a decision starts is written in the same
// TransactWriteItems.

type aftersaleRecord struct {
	ID           string             `dynamodbav:"id"`
	Kind         string             `dynamodbav:"kind"`
	Lines        []refundLineRecord `dynamodbav:"lines"`
	Reason       string             `dynamodbav:"reason"`
	Images       []string           `dynamodbav:"images,omitempty"`
	Status       string             `dynamodbav:"status"`
	RequestedAt  string             `dynamodbav:"requestedAt"`
	DecidedAt    string             `dynamodbav:"decidedAt,omitempty"`
	DecidedBy    string             `dynamodbav:"decidedBy,omitempty"`
	RejectReason string             `dynamodbav:"rejectReason,omitempty"`
	ReceivedAt   string             `dynamodbav:"receivedAt,omitempty"`
	OutRefundNo  string             `dynamodbav:"outRefundNo,omitempty"`
}

func newAftersaleRecords(as []inventory.Aftersale) []aftersaleRecord {
	var out []aftersaleRecord
	for _, a := range as {
		rec := aftersaleRecord{
			ID: a.ID, Kind: string(a.Kind), Reason: a.Reason, Images: a.Images, Status: string(a.Status),
			RequestedAt: formatTime(a.RequestedAt), DecidedAt: formatOptional(a.DecidedAt), DecidedBy: a.DecidedBy,
			RejectReason: a.RejectReason, ReceivedAt: formatOptional(a.ReceivedAt), OutRefundNo: a.OutRefundNo,
		}
		for _, l := range a.Lines {
			rec.Lines = append(rec.Lines, refundLineRecord(l))
		}
		out = append(out, rec)
	}
	return out
}

func (r aftersaleRecord) aftersale() (inventory.Aftersale, error) {
	a := inventory.Aftersale{
		AftersaleRequest: inventory.AftersaleRequest{ID: r.ID, Kind: inventory.AftersaleKind(r.Kind), Reason: r.Reason, Images: r.Images},
		Status:           inventory.AftersaleStatus(r.Status), DecidedBy: r.DecidedBy, RejectReason: r.RejectReason, OutRefundNo: r.OutRefundNo,
	}
	for _, l := range r.Lines {
		a.Lines = append(a.Lines, inventory.RefundLine(l))
	}
	var err error
	if a.RequestedAt, err = parseTime(r.RequestedAt); err != nil {
		return a, err
	}
	if a.DecidedAt, err = optionalTime(r.DecidedAt); err != nil {
		return a, err
	}
	a.ReceivedAt, err = optionalTime(r.ReceivedAt)
	return a, err
}

// aftersales decodes an order record's after-sales.
func (r orderRecord) aftersales() ([]inventory.Aftersale, error) {
	var out []inventory.Aftersale
	for _, rec := range r.Aftersales {
		a, err := rec.aftersale()
		if err != nil {
			return nil, fmt.Errorf("decode after-sale %s: %w", rec.ID, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// RequestAftersale records the buyer userID's after-sale request r (Validate'd) on
// their order id, as inventory.Order.RequestAftersaleChange decides, through the one
// transition path. It returns the order as it stands (with its second payments'
// refunds, as Order reads it) and whether this call recorded r (false for the same
// request again). Errors: inventory.ErrOrderNotFound (anyone else's, unknown or
// malformed id), inventory.ErrRefundNotAllowed, inventory.ErrRefundExceedsPaid,
// inventory.ErrIdempotencyKeyReused (nothing changed), inventory.ErrBusy, or another
// store error.
func (s *RefundStore) RequestAftersale(ctx context.Context, userID, id string, r inventory.AftersaleRequest) (*inventory.Order, bool, error) {
	order, err := (&OrderStore{s.store}).Order(ctx, userID, id)
	if err != nil {
		return nil, false, err
	}
	now := s.now()
	o, c, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.RequestAftersaleChange(r, now)
	})
	if err != nil {
		return nil, false, err
	}
	return o, !c.None(), s.withSecondPayments(ctx, o)
}

// DecideAftersale records the merchant's approval (approve) or rejection (with
// reason) of after-sale aftersaleID of order id by their IAM principal, as
// inventory.Order.DecideAftersaleChange decides, through the one transition path: an
// approved "refund" starts its refund (without goods) in the same transaction. It
// returns the order as it stands (Lookup's view) and the out_refund_no of the refund
// this call started ("" when none: a return-refund waits for its goods, or the
// decision was made already). Concurrent decisions on one after-sale start its
// refund once. Errors: inventory.ErrOrderNotFound, inventory.ErrAftersaleNotFound,
// inventory.ErrRefundNotAllowed (decided the other way, or past deciding),
// inventory.ErrRefundExceedsPaid (another refund took its units), inventory.ErrBusy,
// or another store error; nothing changed.
func (s *RefundStore) DecideAftersale(ctx context.Context, id, aftersaleID string, approve bool, by, reason string) (*inventory.Order, string, error) {
	now := s.now()
	return s.aftersaleTransition(ctx, id, func(o *inventory.Order, retry inventory.Retry) (inventory.Change, error) {
		return o.DecideAftersaleChange(aftersaleID, approve, by, reason, now, retry)
	})
}

// ReceiveAftersale records the merchant's receipt of the goods of the approved
// return-refund aftersaleID of order id, by their IAM principal, as
// inventory.Order.ReceiveAftersaleChange decides, through the one transition path:
// in one transaction the after-sale REFUNDING and its refund's goods step, the
// returned units back on the shards they left (on shard 0 when a shrinking reshard
// deleted one: StartRefund's retry), with RETURN ledger entries. It returns the order
// as it stands and the out_refund_no of the refund this call started ("" when it was
// started already). Concurrent receipts restock and refund once. Errors:
// inventory.ErrOrderNotFound, inventory.ErrAftersaleNotFound,
// inventory.ErrRefundNotAllowed (not an approved return-refund),
// inventory.ErrRefundExceedsPaid, inventory.ErrBusy, or another store error.
func (s *RefundStore) ReceiveAftersale(ctx context.Context, id, aftersaleID, by string) (*inventory.Order, string, error) {
	now := s.now()
	return s.aftersaleTransition(ctx, id, func(o *inventory.Order, retry inventory.Retry) (inventory.Change, error) {
		return o.ReceiveAftersaleChange(aftersaleID, by, now, retry)
	})
}

// aftersaleTransition writes decide's change of order id and says which refund it
// started.
func (s *RefundStore) aftersaleTransition(ctx context.Context, id string, decide func(*inventory.Order, inventory.Retry) (inventory.Change, error)) (*inventory.Order, string, error) {
	order, err := (&OrderStore{s.store}).Lookup(ctx, id)
	if err != nil {
		return nil, "", err
	}
	o, c, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, retry inventory.Retry) (inventory.Change, error) {
		return decide(o, retry)
	})
	if err != nil {
		return nil, "", err
	}
	started := ""
	if c.Kind == inventory.ChangeRefundStart && c.Marker != nil {
		started = c.Marker.OutRefundNo
	}
	return o, started, s.withSecondPayments(ctx, o)
}
