package dynamo

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// maxReleaseRounds bounds the release transactions one call sends: a second round
// only runs without purchase-counter give-backs whose counters had drifted.
const maxReleaseRounds = 2

// release cancels order (read just before) with reason and gives its stock back, in
// one TransactWriteItems: the order's status PENDING → CANCELLED (conditioned on
// PENDING), per reserved shard available += q and reserved −= q (conditioned on
// reserved >= q, so available never passes on-hand), the purchase counters given
// back, and one RELEASE ledger entry per line (attribute_not_exists). Whoever loses
// the status condition changes nothing; the order is then read again and returned.
func (s *Store) release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error) {
	if order.Status != inventory.StatusPending {
		return order, false, nil
	}
	now := s.now()
	giveBack := map[string]bool{} // SKU → its counter is given back
	for _, it := range order.Items {
		giveBack[it.SKU] = it.Limited
	}
	for range maxReleaseRounds {
		tx, roles, err := s.releaseTx(order, reason, now, giveBack)
		if err != nil {
			return nil, false, err
		}
		_, err = s.db.TransactWriteItems(ctx, tx)
		if err == nil {
			done := *order
			done.Status, done.CancelReason, done.CancelledAt = inventory.StatusCancelled, reason, &now
			return &done, true, nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			return s.releaseUnknown(ctx, order.ID, now, err)
		}
		failed := conditionFailures(tce, len(roles))
		switch {
		case len(failed) == 0 && isTransient(err):
			return nil, false, fmt.Errorf("release order %s: %w (%w)", order.ID, inventory.ErrBusy, err)
		case len(failed) == 0:
			return nil, false, fmt.Errorf("release order %s: %w", order.ID, err)
		case slices.Contains(failed, 0):
			// The order is no longer PENDING: paid, or released by someone else.
			return s.reread(ctx, order.ID)
		}
		// A purchase counter that holds less than the order counted on it (changed by
		// hand) is skipped in the next round; anything else means the books are off.
		for _, i := range failed {
			ro := roles[i]
			if ro.kind != roleLimit {
				return nil, false, fmt.Errorf("release order %s: %s of %s failed its condition: the books need reconciling", order.ID, ro.what(), ro.sku)
			}
			giveBack[ro.sku] = false
		}
	}
	return nil, false, fmt.Errorf("release order %s: purchase counters kept failing their conditions", order.ID)
}

// releaseRole says what one action of a release transaction is.
type releaseRole struct {
	kind  roleKind
	sku   string
	shard int
}

func (r releaseRole) what() string {
	switch r.kind {
	case roleShard:
		return "shard " + strconv.Itoa(r.shard) + " (reserved < q)"
	case roleLedger:
		return "the RELEASE ledger entry (already written)"
	default:
		return "the purchase counter"
	}
}

// releaseTx builds the release transaction of order; roles[i] names action i.
func (s *Store) releaseTx(order *inventory.Order, reason inventory.CancelReason, now time.Time, giveBack map[string]bool) (*dynamodb.TransactWriteItemsInput, []releaseRole, error) {
	status := expression.Name("status")
	upd := expression.Set(status, expression.Value(string(inventory.StatusCancelled))).
		Set(expression.Name("cancelReason"), expression.Value(string(reason))).
		Set(expression.Name("cancelledAt"), expression.Value(formatTime(now))).
		Remove(expression.Name("pendingBucket")).
		Remove(expression.Name("pendingExpiresAt"))
	it, err := update(s.tables.Orders, order.ID, upd, status.Equal(expression.Value(string(inventory.StatusPending))))
	if err != nil {
		return nil, nil, err
	}
	items := []types.TransactWriteItem{it}
	roles := []releaseRole{{kind: roleOrder}}
	reserved := expression.Name("reserved")
	for _, line := range order.Items {
		for _, shard := range slices.Sorted(maps.Keys(line.Shards)) {
			q := line.Shards[shard]
			avail := expression.Name("available")
			upd := expression.Set(avail, avail.Plus(expression.Value(q))).Add(reserved, expression.Value(-q))
			it, err := update(s.tables.SKUs, shardKey(line.SKU, shard), upd, reserved.GreaterThanEqual(expression.Value(q)))
			if err != nil {
				return nil, nil, err
			}
			items = append(items, it)
			roles = append(roles, releaseRole{kind: roleShard, sku: line.SKU, shard: shard})
		}
		if giveBack[line.SKU] {
			bought := expression.Name("bought")
			it, err := update(s.tables.Orders, limitKey(line.SKU, order.UserID), expression.Add(bought, expression.Value(-line.Qty)), bought.GreaterThanEqual(expression.Value(line.Qty)))
			if err != nil {
				return nil, nil, err
			}
			items = append(items, it)
			roles = append(roles, releaseRole{kind: roleLimit, sku: line.SKU})
		}
		entry := ledgerRecord{
			PK: ledgerKey(order.ID, OpRelease, line.SKU), Ref: order.ID, Op: OpRelease, SKU: line.SKU,
			Qty: line.Qty, DAvailable: line.Qty, Shards: shardsToRecord(line.Shards), At: now.UnixMilli(), Reason: string(reason),
		}
		put, err := s.putNew(s.tables.StockLog, entry, nil)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, put)
		roles = append(roles, releaseRole{kind: roleLedger, sku: line.SKU})
	}
	return &dynamodb.TransactWriteItemsInput{
		TransactItems: items,
		// The SDK's retries of this input are idempotent for 10 minutes (DynamoDB API
		// Reference, TransactWriteItems, ClientRequestToken); the status condition
		// makes any later copy a no-op.
		ClientRequestToken: aws.String(order.ID + "-release"),
	}, roles, nil
}

// releaseUnknown handles a release whose outcome is unknown (timeout, 5xx after the
// SDK's retries): it reads the order back; CANCELLED at this call's cancelledAt means
// this call's write was applied.
func (s *Store) releaseUnknown(ctx context.Context, id string, at time.Time, cause error) (*inventory.Order, bool, error) {
	if err := definiteFailure("release order "+id, cause); err != nil {
		return nil, false, err
	}
	cctx, cancel := convergeContext(ctx)
	defer cancel()
	order, err := s.order(cctx, id)
	if err != nil || order == nil || order.Status == inventory.StatusPending {
		return nil, false, fmt.Errorf("release order %s: outcome unknown after %v: %w", id, cause, inventory.ErrBusy)
	}
	mine := order.CancelledAt != nil && order.CancelledAt.Equal(at)
	return order, mine, nil
}

// reread returns the order as it stands now, after a release lost its status condition.
func (s *Store) reread(ctx context.Context, id string) (*inventory.Order, bool, error) {
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if order == nil {
		return nil, false, fmt.Errorf("release order %s: %w", id, inventory.ErrOrderNotFound)
	}
	return order, false, nil
}

// DuePending lists the ids of orders that the PendingByExpiry index shows as PENDING
// with pendingExpiresAt at or before `before`, bucket by bucket, a page (up to 1 MB,
// DynamoDB API Reference, Query) at a time. The index is eventually consistent and
// may still show an order that has just been paid or cancelled: callers act through
// Expire, which reads the order first. Iteration stops at the first error.
func (s *Store) DuePending(ctx context.Context, before time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for b := range PendingBuckets {
			key := expression.Key("pendingBucket").Equal(expression.Value("P" + strconv.Itoa(b))).
				And(expression.Key("pendingExpiresAt").LessThanEqual(expression.Value(before.UnixMilli())))
			expr, err := expression.NewBuilder().WithKeyCondition(key).
				WithProjection(expression.NamesList(expression.Name("pk"))).Build()
			if err != nil {
				yield("", fmt.Errorf("build pending query: %w", err))
				return
			}
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName: aws.String(s.tables.Orders), IndexName: aws.String(PendingIndex),
				KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(),
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
