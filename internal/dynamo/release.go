package dynamo

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Cancel is a user's cancel of their own order (CONTRACT.md, POST
// /orders/{orderId}/cancel). A PENDING order is cancelled with reason USER and its
// stock released; an order already CANCELLED is returned as it is, nothing released
// again. It returns the order as it stands afterwards and whether this call released
// the stock.
//
// Errors: inventory.ErrOrderNotFound (unknown id, malformed id or another user's
// order), inventory.ErrNotCancellable (PAID, REFUND_PENDING or REFUNDED),
// inventory.ErrBusy (DynamoDB throttled, conflicted or unavailable; nothing changed),
// or another store error.
func (s *Store) Cancel(ctx context.Context, userID, orderID string) (*inventory.Order, bool, error) {
	order, err := s.Order(ctx, userID, orderID)
	if err != nil {
		return nil, false, err
	}
	order, released, err := s.release(ctx, order, inventory.CancelUser)
	if err != nil {
		return nil, false, err
	}
	if order.Status != inventory.StatusCancelled {
		return nil, false, fmt.Errorf("cancel order %s (%s): %w", order.ID, order.Status, inventory.ErrNotCancellable)
	}
	return order, released, nil
}

// Expire releases an unpaid order whose payment window has ended: a PENDING order
// whose ExpiresAt is not after now is cancelled with reason TIMEOUT and its stock
// released. Anything else is left alone. It returns the order as it stands afterwards
// (still PENDING when its window is open: ExpiresAt says when to try again) and
// whether this call released the stock. Any number of Expire and Cancel calls on one
// order, sequential or concurrent, release its stock at most once.
//
// Errors: inventory.ErrOrderNotFound (no such order), inventory.ErrBusy (throttled,
// conflicted or unavailable; try again), or another store error.
func (s *Store) Expire(ctx context.Context, orderID string) (*inventory.Order, bool, error) {
	order, err := s.order(ctx, orderID)
	if err != nil {
		return nil, false, err
	}
	if order == nil {
		return nil, false, fmt.Errorf("expire order %s: %w", orderID, inventory.ErrOrderNotFound)
	}
	if order.Status != inventory.StatusPending || s.now().Before(order.ExpiresAt) {
		return order, false, nil
	}
	return s.release(ctx, order, inventory.CancelTimeout)
}

// maxTransitionRounds bounds the transactions one release or payment sends; rounds after the
// first only run when the order changed meanwhile or a counter had drifted.
const maxTransitionRounds = 4

// release cancels order (read just before) with reason and gives its stock back, in
// one TransactWriteItems: the order's status PENDING → CANCELLED (conditioned on
// PENDING), per reserved shard available += q and reserved −= q (conditioned on
// reserved >= q, so available never passes on-hand), the purchase counters given
// back, and one RELEASE ledger entry per line (attribute_not_exists). Whoever loses
// the status condition changes nothing; the order is then read again and returned.
func (s *Store) release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error) {
	now := s.now()
	giveBack := map[string]bool{} // SKU → its counter is given back
	for _, it := range order.Items {
		giveBack[it.SKU] = it.Limited
	}
	for range maxTransitionRounds {
		if order.Status != inventory.StatusPending {
			return order, false, nil
		}
		t := s.releaseTx(order, reason, now, giveBack)
		res, failed, err := s.send(ctx, t, func(o *inventory.Order) bool {
			return o.Status == inventory.StatusCancelled && o.CancelledAt != nil && o.CancelledAt.Equal(now)
		})
		switch {
		case err != nil:
			return nil, false, err
		case res == applied:
			done := *order
			done.Status, done.CancelReason, done.CancelledAt = inventory.StatusCancelled, reason, &now
			return &done, true, nil
		case res == lost:
			// Paid or released by someone else meanwhile: answer with what it is now.
			if order, err = s.mustOrder(ctx, order.ID); err != nil {
				return nil, false, err
			}
			continue
		}
		// A purchase counter that holds less than the order counted on it (changed by
		// hand) is skipped in the next round; anything else means the books are off.
		for _, a := range failed {
			if a.kind != roleLimit {
				return nil, false, booksOff("release", order.ID, failed)
			}
			giveBack[a.sku] = false
		}
	}
	return nil, false, fmt.Errorf("release order %s: %d rounds without an answer: %w", order.ID, maxTransitionRounds, inventory.ErrBusy)
}

// releaseTx builds the release transaction of order.
func (s *Store) releaseTx(order *inventory.Order, reason inventory.CancelReason, now time.Time, giveBack map[string]bool) *transition {
	upd := expression.Set(expression.Name("status"), expression.Value(string(inventory.StatusCancelled))).
		Set(expression.Name("cancelReason"), expression.Value(string(reason))).
		Set(expression.Name("cancelledAt"), expression.Value(formatTime(now))).
		Remove(expression.Name("pendingBucket")).
		Remove(expression.Name("pendingExpiresAt"))
	t := s.newTransition("release", order, inventory.StatusPending, upd)
	avail, reserved := expression.Name("available"), expression.Name("reserved")
	for _, line := range order.Items {
		for _, n := range slices.Sorted(maps.Keys(line.Shards)) {
			q := line.Shards[n]
			t.shard(s, line.SKU, n, expression.Set(avail, avail.Plus(expression.Value(q))).Add(reserved, expression.Value(-q)),
				reserved.GreaterThanEqual(expression.Value(q)))
		}
		if giveBack[line.SKU] {
			bought := expression.Name("bought")
			t.counter(s, line.SKU, order.UserID, expression.Add(bought, expression.Value(-line.Qty)), bought.GreaterThanEqual(expression.Value(line.Qty)))
		}
		t.ledger(s, ledgerRecord{
			PK: ledgerKey(order.ID, OpRelease, line.SKU), Ref: order.ID, Op: OpRelease, SKU: line.SKU,
			Qty: line.Qty, DAvailable: line.Qty, Shards: shardsToRecord(line.Shards), At: now.UnixMilli(), Reason: string(reason),
		})
	}
	return t
}

// mustOrder reads an order that must exist.
func (s *Store) mustOrder(ctx context.Context, id string) (*inventory.Order, error) {
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, fmt.Errorf("order %s vanished: %w", id, inventory.ErrOrderNotFound)
	}
	return order, nil
}

// DuePending lists the ids of orders that the PendingByExpiry index shows as PENDING
// with pendingExpiresAt at or before `before`, bucket by bucket (starting at a random
// bucket, so a sweep cut short by its deadline does not always favour the same
// buckets), a page (up to 1 MB, DynamoDB API Reference, Query) at a time. The index is
// eventually consistent and may still show an order that has just been paid or
// cancelled: callers act through Expire, which reads the order first. Iteration stops
// at the first error.
func (s *Store) DuePending(ctx context.Context, before time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		first := rand.IntN(PendingBuckets)
		for i := range PendingBuckets {
			b := (first + i) % PendingBuckets
			key := expression.Key("pendingBucket").Equal(expression.Value("P" + strconv.Itoa(b))).
				And(expression.Key("pendingExpiresAt").LessThanEqual(expression.Value(before.UnixMilli())))
			// The status filter drops what the index still shows after a release or a
			// payment (index lag; see the package doc on sparse-index removal).
			expr, err := expression.NewBuilder().WithKeyCondition(key).
				WithFilter(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending)))).
				WithProjection(expression.NamesList(expression.Name("pk"))).Build()
			if err != nil {
				yield("", fmt.Errorf("build pending query: %w", err))
				return
			}
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName: aws.String(s.tables.Orders), IndexName: aws.String(PendingIndex),
				KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(), FilterExpression: expr.Filter(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			})
			for pages.HasMorePages() {
				page, err := pages.NextPage(ctx)
				if err != nil {
					yield("", s.storeError("query pending orders", err))
					return
				}
				for _, item := range page.Items {
					var rec struct {
						PK string `dynamodbav:"pk"`
					}
					if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
						yield("", fmt.Errorf("decode pending order key: %w", err))
						return
					}
					if !yield(rec.PK, nil) {
						return
					}
				}
			}
		}
	}
}
