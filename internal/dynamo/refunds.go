package dynamo

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// refundFields are the refund attributes shared by orders and second-payment records.
type refundFields struct {
	OutRefundNo  string `dynamodbav:"outRefundNo,omitempty"`
	RefundingAt  string `dynamodbav:"refundingAt,omitempty"`
	Restocked    bool   `dynamodbav:"restocked,omitempty"`
	RefundBy     string `dynamodbav:"refundBy,omitempty"`
	RefundReason string `dynamodbav:"refundReason,omitempty"`
	RefundedAt   string `dynamodbav:"refundedAt,omitempty"`
	RefundAmount int64  `dynamodbav:"refundAmount,omitempty"`
	RefundError  string `dynamodbav:"refundError,omitempty"`
}

// refundingRecord marks a refund REFUNDING (pk = refunding#<out_refund_no>): put in
// the transaction that starts the refund, deleted in the one that ends it, so the
// sparse RefundingBySince index lists exactly the refunds under way. (A marker of its
// own rather than attributes on the order: an item enters and leaves the index whole.)
type refundingRecord struct {
	PK             string `dynamodbav:"pk"`
	Kind           string `dynamodbav:"kind"`
	RefundBucket   string `dynamodbav:"refundBucket"`
	RefundingSince int64  `dynamodbav:"refundingSince"` // Unix milliseconds
}

// extraRecord is a second successful payment of an order already paid (pk =
// refund#<out_refund_no>, the number derived from its transaction id): owed back
// whole, refunded without touching the order.
type extraRecord struct {
	PK            string `dynamodbav:"pk"`
	Kind          string `dynamodbav:"kind"`
	OrderID       string `dynamodbav:"orderId"`
	TransactionID string `dynamodbav:"transactionId"`
	Amount        int64  `dynamodbav:"amount"`
	Currency      string `dynamodbav:"currency"`
	PaidAt        string `dynamodbav:"paidAt"`
	Status        string `dynamodbav:"status"`
	Resolution    string `dynamodbav:"resolution,omitempty"` // an operator's retry or settlement
	refundFields
}

// refundState is the part of the record holding a refund (its order, or a second
// payment's record) that the refund's result changes, under the same attribute names
// on both.
type refundState struct {
	Status       string `dynamodbav:"status"`
	OutRefundNo  string `dynamodbav:"outRefundNo,omitempty"`
	RefundedAt   string `dynamodbav:"refundedAt,omitempty"`
	RefundAmount int64  `dynamodbav:"refundAmount,omitempty"`
	RefundError  string `dynamodbav:"refundError,omitempty"`
	Resolution   string `dynamodbav:"resolution,omitempty"`
}

func newRefundState(r *inventory.Refund) refundState {
	return refundState{
		Status: string(r.Status), OutRefundNo: r.OutRefundNo, RefundedAt: formatOptional(r.RefundedAt),
		RefundAmount: r.RefundAmount, RefundError: r.Error, Resolution: r.Resolution,
	}
}

// Refunds: goods before money (docs/design.md). The goods step (StartRefund) moves an order
// to REFUNDING in one TransactWriteItems with its RETURN entries; the money step is
// WeChat Pay's, and its result (MarkRefunded) moves the refund to REFUNDED once.

// RefundingIndex is the sparse GSI of refunds in REFUNDING (orders and second
// payments) on the orders table, over their markers (refundingRecord): hash key
// refundBucket (R0..R15 from a hash of the out_refund_no, see refundBucket; the
// legacyRefundBucket on markers written before the buckets), range key refundingSince
// (Unix milliseconds).
const RefundingIndex = "RefundingBySince"

// RefundBuckets is how many refundBucket values (R0..R15) refunds under way are spread
// over, from a hash of the out_refund_no (as PendingBuckets spreads PENDING orders), so
// that no single index partition takes every refund of the system: a partition serves
// 1,000 write units a second (DynamoDB Developer Guide, "Partitions and data
// distribution"; "Best practices for designing and using partition keys effectively",
// "Using write sharding to distribute workloads evenly"), and a refund writes its key
// twice (the marker put when it starts, deleted when it ends), so one key carried 500
// refunds a second for the whole system, and a refund write the index could not take
// throttled the order's own write with it ("Understanding GSI write throttling and
// back-pressure in DynamoDB"). 16 keys carry 8,000 refunds a second. Readers
// (RefundingBefore) query every bucket and merge them in time order, so the number may
// grow but never shrink.
const RefundBuckets = 16

// legacyRefundBucket is the one refundBucket value markers had before RefundBuckets:
// a marker lives while its refund is under way, so those left from before the buckets
// go as their refunds end. Readers query it too, while any may remain (RUNBOOK,
// "Refund markers written before the buckets").
const legacyRefundBucket = "R"

// refundBucket is the refundBucket value of refund outRefundNo's marker: R0..R15.
func refundBucket(outRefundNo string) string { return "R" + bucket(outRefundNo, RefundBuckets) }

// refundingKeys are the refundBucket values readers query: every bucket, and the
// legacy key.
func refundingKeys() []string {
	keys := []string{legacyRefundBucket}
	for b := range RefundBuckets {
		keys = append(keys, "R"+strconv.Itoa(b))
	}
	return keys
}

// extraKey is the key of a second payment's record; markKey of a refund's marker.
func extraKey(outRefundNo string) string { return "refund#" + outRefundNo }

func markKey(outRefundNo string) string { return "refunding#" + outRefundNo }

// mark adds the Put of the marker that lists refund outRefundNo as REFUNDING since now.
func (t *txn) mark(outRefundNo string, now time.Time) {
	t.put(part{kind: partOrder}, t.s.tables.Orders, refundingRecord{
		PK: markKey(outRefundNo), Kind: kindMark, RefundBucket: refundBucket(outRefundNo), RefundingSince: now.UnixMilli(),
	}, nil)
}

// StartRefund is the goods step of one refund of order (read just before), as
// inventory.Order.StartRefund decides for r (window: the buyers' refund window),
// through the one transition path (transact), in one TransactWriteItems conditioned on
// the order's status and refunds as read: the new refund on the order (the order
// REFUNDING when it covers the rest of the payment, else still PAID), its marker,
// from PAID the refunded units given back on the purchase counters and, when
// restocking, per line exactly the refunded units returned (available +q, on-hand +q)
// on the shards the order committed them on, with one RETURN ledger entry each. It
// returns the order as it stands and the out_refund_no of the refund this call started
// ("" when it started none: the refund was made already). Concurrent calls never
// refund more than was paid: each reads the order again when another refund won.
//
// Errors: inventory.ErrRefundNotAllowed, inventory.ErrRefundExceedsPaid,
// inventory.ErrIdempotencyKeyReused (RefundStep refused: nothing changed),
// inventory.ErrBusy (throttled, conflicted or unavailable: nothing changed), or
// another store error (a shard the order committed on is gone, or the books disagree
// with the order).
func (s *RefundStore) StartRefund(ctx context.Context, order *inventory.Order, r inventory.RefundRequest, window time.Duration) (*inventory.Order, string, error) {
	now := s.now()
	o, c, err := transact(ctx, s.store, s.orderSubject(order.ID), order, func(_ context.Context, o *inventory.Order, retry inventory.Retry) (inventory.Change, error) {
		return o.StartRefund(r, window, now, retry)
	})
	if err != nil || c.None() {
		return o, "", err
	}
	return o, c.Marker.OutRefundNo, nil
}

// SecondPayment records p, a successful payment of an order already paid by another
// transaction (inventory.ErrPaidTwice from Pay), as a refund owed: a record keyed by
// inventory.ExtraOutRefundNo(order, transaction), REFUNDING at once (it held no
// goods). Recording the same payment again returns the record as it is. It returns the
// refund and whether this call created it. Errors: inventory.ErrBusy, or another
// store error.
func (s *RefundStore) SecondPayment(ctx context.Context, p inventory.Payment) (*inventory.Refund, bool, error) {
	no := inventory.ExtraOutRefundNo(p.OrderID, p.TransactionID)
	now := s.now()
	rec := extraRecord{
		PK: extraKey(no), Kind: kindExtra, OrderID: p.OrderID, TransactionID: p.TransactionID,
		Amount: p.Amount, Currency: p.Currency, PaidAt: formatTime(p.PaidAt), Status: string(inventory.StatusRefunding),
		refundFields: refundFields{OutRefundNo: no, RefundingAt: formatTime(now), RefundBy: "stockguard", RefundReason: "second payment of a paid order"},
	}
	t := s.newTxn("record second payment " + p.TransactionID + " of order " + p.OrderID)
	t.put(part{kind: partOrder}, s.tables.Orders, rec, nil)
	t.mark(no, now)
	// Listed on its order, so the order's views show it (a set: adding twice is once).
	t.update(part{kind: partOrder}, s.tables.Orders, p.OrderID,
		expression.Add(expression.Name("secondRefunds"), expression.Value(&types.AttributeValueMemberSS{Value: []string{no}})),
		expression.AttributeExists(expression.Name("pk")))
	out, err := s.send(ctx, t)
	if err != nil {
		return nil, false, err
	}
	created := out.applied // else it exists (a resent notification) or the outcome is unknown: read it
	refund, err := s.RefundByNo(ctx, no)
	if err == nil && refund.TransactionID != p.TransactionID {
		err = fmt.Errorf("second payment %s: out_refund_no %s taken by %s", p.TransactionID, no, refund.TransactionID)
	}
	if err != nil {
		return nil, false, err
	}
	return refund, created, nil
}

// RefundByNo reads the refund named by outRefundNo: an order's own (REFUNDING or
// REFUNDED) or a second payment's. Errors: inventory.ErrRefundNotFound (no such
// refund: malformed, unknown, or an order not being refunded under that number), or a
// store error.
func (s *store) RefundByNo(ctx context.Context, outRefundNo string) (*inventory.Refund, error) {
	orderID, own, ok := inventory.RefundOf(outRefundNo)
	if !ok {
		return nil, fmt.Errorf("refund %q: %w", outRefundNo, inventory.ErrRefundNotFound)
	}
	if own {
		order, err := s.order(ctx, orderID)
		if err != nil {
			return nil, err
		}
		if order != nil {
			if r := order.RefundByNo(outRefundNo); r != nil {
				return r, nil
			}
		}
		return nil, fmt.Errorf("refund %s: %w", outRefundNo, inventory.ErrRefundNotFound)
	}
	var rec extraRecord
	if err := s.get(ctx, s.tables.Orders, extraKey(outRefundNo), "refund "+outRefundNo, &rec); err != nil {
		return nil, err
	}
	if rec.Kind != kindExtra {
		return nil, fmt.Errorf("refund %s: %w", outRefundNo, inventory.ErrRefundNotFound)
	}
	return rec.refund()
}

// refund is the refund a second payment's record stands for.
func (r extraRecord) refund() (*inventory.Refund, error) {
	out := &inventory.Refund{
		OutRefundNo: r.OutRefundNo, OrderID: r.OrderID, TransactionID: r.TransactionID, Amount: r.Amount, Total: r.Amount,
		Currency: r.Currency, Status: inventory.Status(r.Status), RefundAmount: r.RefundAmount, Error: r.RefundError,
		Resolution: r.Resolution,
	}
	since, err := parseTime(r.RefundingAt)
	if err != nil {
		return nil, fmt.Errorf("decode refund %s: %w", r.PK, err)
	}
	out.Since = since
	if out.RefundedAt, err = optionalTime(r.RefundedAt); err != nil {
		return nil, fmt.Errorf("decode refund %s: %w", r.PK, err)
	}
	return out, nil
}

// MarkRefunded records what WeChat Pay says of a refund (a notification, the refund
// API's answer or a query): SUCCESS turns it REFUNDING → REFUNDED once (refundedAt and
// refundAmount set, conditioned on the status and the out_refund_no); CLOSED and
// ABNORMAL keep it REFUNDING with refundError set (the money must be returned by hand);
// PROCESSING changes nothing. It returns the refund as it stands and whether this call
// changed it; a result already recorded (a replay) changes nothing.
//
// Errors: inventory.ErrRefundNotFound (no refund has that out_refund_no),
// inventory.ErrRefundMismatch (out_trade_no or amount are not the refund's: nothing
// changed), inventory.ErrBusy, or another store error.
func (s *RefundStore) MarkRefunded(ctx context.Context, res inventory.RefundResult) (*inventory.Refund, bool, error) {
	now := s.now()
	if orderID, own, ok := inventory.RefundOf(res.OutRefundNo); ok && own {
		order, err := s.order(ctx, orderID)
		if err != nil {
			return nil, false, err
		}
		if order == nil || order.RefundByNo(res.OutRefundNo) == nil {
			return nil, false, fmt.Errorf("refund %s: %w", res.OutRefundNo, inventory.ErrRefundNotFound)
		}
		o, c, err := transact(ctx, s.store, s.orderSubject(orderID), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
			return o.RecordRefund(res, now)
		})
		if err != nil {
			return nil, false, err
		}
		return o.RefundByNo(res.OutRefundNo), !c.None(), nil
	}
	refund, err := s.RefundByNo(ctx, res.OutRefundNo)
	if err != nil {
		return nil, false, err
	}
	r, c, err := transact(ctx, s.store, s.refundSubject(res.OutRefundNo), refund, func(_ context.Context, r *inventory.Refund, _ inventory.Retry) (inventory.Change, error) {
		return r.Record(res, now)
	})
	if err != nil {
		return r, false, err
	}
	return r, !c.None(), nil
}

// RefundingBefore lists the out_refund_no of every refund (orders and second
// payments) that the RefundingBySince index shows REFUNDING since before `before`,
// oldest first (ties in out_refund_no order), a page at a time (their markers: see
// refundingRecord): it queries every refundBucket (refundingKeys) and merges them.
// The index is eventually consistent: a refund just marked REFUNDED may still show;
// callers act through MarkRefunded, which reads it first. Iteration stops at the
// first error.
func (s *RefundStore) RefundingBefore(ctx context.Context, before time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var heads []refundingHead
		defer func() {
			for _, h := range heads {
				h.stop()
			}
		}()
		for _, key := range refundingKeys() {
			next, stop := iter.Pull2(s.refundingIn(ctx, key, before))
			heads = append(heads, refundingHead{next: next, stop: stop})
			if !heads[len(heads)-1].advance() {
				heads[len(heads)-1].stop()
				heads = heads[:len(heads)-1]
			}
		}
		for len(heads) > 0 {
			i := 0
			for j := range heads {
				if heads[j].before(heads[i]) {
					i = j
				}
			}
			h := &heads[i]
			if h.err != nil {
				yield("", h.err)
				return
			}
			if !yield(h.rec.PK[len(markKey("")):], nil) {
				return
			}
			if !h.advance() {
				h.stop()
				heads = slices.Delete(heads, i, i+1)
			}
		}
	}
}

// refundingHead is one bucket's query in RefundingBefore's merge: its next marker (or
// error) and how to go on.
type refundingHead struct {
	next func() (refundingRecord, error, bool)
	stop func()
	rec  refundingRecord
	err  error
}

// advance reads the bucket's next marker, reporting false when there is none.
func (h *refundingHead) advance() bool {
	var ok bool
	h.rec, h.err, ok = h.next()
	return ok
}

// before orders heads: an error first, then the older marker, then the smaller key.
func (h refundingHead) before(o refundingHead) bool {
	switch {
	case h.err != nil || o.err != nil:
		return h.err != nil && o.err == nil
	case h.rec.RefundingSince != o.rec.RefundingSince:
		return h.rec.RefundingSince < o.rec.RefundingSince
	}
	return h.rec.PK < o.rec.PK
}

// refundingIn yields the markers of index key refundBucket = key since before
// `before`, oldest first, a page at a time.
func (s *RefundStore) refundingIn(ctx context.Context, key string, before time.Time) iter.Seq2[refundingRecord, error] {
	return func(yield func(refundingRecord, error) bool) {
		cond := expression.Key("refundBucket").Equal(expression.Value(key)).
			And(expression.Key("refundingSince").LessThan(expression.Value(before.UnixMilli())))
		expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
		if err != nil {
			yield(refundingRecord{}, fmt.Errorf("build refunding query: %w", err))
			return
		}
		pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName: aws.String(s.tables.Orders), IndexName: aws.String(RefundingIndex),
			KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(refundingRecord{}, s.storeError("query refunding", err))
				return
			}
			for _, item := range page.Items {
				var rec refundingRecord
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					yield(refundingRecord{}, fmt.Errorf("decode refunding item: %w", err))
					return
				}
				if strings.HasPrefix(rec.PK, markKey("")) && !yield(rec, nil) {
					return
				}
			}
		}
	}
}

// ResolveRefund records an operator's resolution of refund outRefundNo of order
// orderID (inventory.Order.ResolveRefund for the order's own refunds,
// inventory.Refund.Resolve for a second payment's: a retry of a refund WeChat Pay's
// refund API refused, or a refund settled outside WeChat Pay), by their IAM principal
// with reason, through the one transition path. It returns the order as it stands
// (Lookup's view, second payments' refunds included). Errors:
// inventory.ErrOrderNotFound, inventory.ErrRefundNotFound (no such refund of that
// order), inventory.ErrRefundNotAllowed (nothing to resolve that way: nothing
// changed), inventory.ErrBusy, or another store error.
func (s *RefundStore) ResolveRefund(ctx context.Context, orderID, outRefundNo string, how inventory.Resolution, by, reason string) (*inventory.Order, error) {
	order, err := s.mustOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if id, own, ok := inventory.RefundOf(outRefundNo); ok && !own && id == orderID {
		refund, err := s.RefundByNo(ctx, outRefundNo)
		if err != nil {
			return nil, err
		}
		if _, _, err := transact(ctx, s.store, s.refundSubject(outRefundNo), refund, func(_ context.Context, r *inventory.Refund, _ inventory.Retry) (inventory.Change, error) {
			return r.Resolve(how, by, reason, now)
		}); err != nil {
			return nil, err
		}
		return (&OrderStore{s.store}).Lookup(ctx, orderID)
	}
	o, _, err := transact(ctx, s.store, s.orderSubject(orderID), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.ResolveRefund(outRefundNo, how, by, reason, now)
	})
	if err != nil {
		return nil, err
	}
	return o, s.withSecondPayments(ctx, o)
}
