package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

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
	return s.CancelOrder(ctx, order)
}

// CancelOrder is Cancel of an order the caller has read (with Order) and, when it has
// a WeChat Pay order, settled with WeChat Pay. The release is conditioned on the order
// still having the prepay_id it was read with: a payment started since makes it fail
// with an error wrapping inventory.ErrBusy, nothing released (ask WeChat Pay again).
func (s *Store) CancelOrder(ctx context.Context, order *inventory.Order) (*inventory.Order, bool, error) {
	order, released, err := s.release(ctx, order, inventory.CancelUser)
	if err != nil {
		return nil, false, err
	}
	if err := order.CheckCancelled(); err != nil {
		return nil, false, err
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
	return s.ExpireOrder(ctx, order)
}

// ExpireOrder is Expire of an order the caller has read (with Lookup) and, when it has
// a WeChat Pay order, settled with WeChat Pay; a payment started since the read makes
// it fail as CancelOrder does.
func (s *Store) ExpireOrder(ctx context.Context, order *inventory.Order) (*inventory.Order, bool, error) {
	if !order.Expired(s.now()) {
		return order, false, nil
	}
	return s.release(ctx, order, inventory.CancelTimeout)
}

// release cancels order (read just before) with reason and gives its stock back, in
// one TransactWriteItems: the order's status PENDING → CANCELLED (conditioned on
// PENDING), per reserved shard available += q and reserved −= q (conditioned on
// reserved >= q, so available never passes on-hand), the purchase counters given
// back, and one RELEASE ledger entry per line (attribute_not_exists). Whoever loses
// the status condition changes nothing; the order is then read again and returned.
func (s *Store) release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error) {
	now := s.now()
	seen := order.PrepayID
	giveBack := map[string]bool{} // SKU → its counter is given back
	for _, it := range order.Items {
		giveBack[it.SKU] = it.Limited
	}
	for range maxTransitionRounds {
		if !order.Status.CanBecome(inventory.StatusCancelled) {
			return order, false, nil // paid or released meanwhile
		}
		t := s.releaseTx(order, reason, now, giveBack)
		res, failed, err := s.sendTransition(ctx, t, order.ID, func(o *inventory.Order) bool {
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
			if order.Status == inventory.StatusPending && order.PrepayID != seen {
				return nil, false, fmt.Errorf("release order %s: a WeChat Pay order was opened meanwhile: %w", order.ID, inventory.ErrBusy)
			}
			continue
		}
		// A purchase counter that holds less than the order counted on it (changed by
		// hand) is skipped in the next round; anything else means the books are off.
		for _, a := range failed {
			if a.kind != partLimit {
				return nil, false, booksOff(t.what, failed)
			}
			giveBack[a.sku] = false
		}
	}
	return nil, false, fmt.Errorf("release order %s: %d rounds without an answer: %w", order.ID, maxTransitionRounds, inventory.ErrBusy)
}

// releaseTx builds the release transaction of order: the status change, then per
// line the RELEASE of its units on the shards they came from (conditioned on reserved
// >= q, so available never passes on-hand) and, when giveBack says so, the units
// given back on the user's purchase counter.
func (s *Store) releaseTx(order *inventory.Order, reason inventory.CancelReason, now time.Time, giveBack map[string]bool) *txn {
	t := s.newTxn("release order " + order.ID)
	// The order's transition, conditioned on PENDING with the prepay_id as read.
	t.update(part{kind: partOrder}, t.s.tables.Orders, order.ID, expression.Set(expression.Name("status"), expression.Value(string(inventory.StatusCancelled))).
		Set(expression.Name("cancelReason"), expression.Value(string(reason))).
		Set(expression.Name("cancelledAt"), expression.Value(formatTime(now))).
		Remove(expression.Name("pendingBucket")).
		Remove(expression.Name("pendingExpiresAt")), pendingAsSeen(order))
	ref := entryRef{key: order.ID, ref: order.ID, reason: string(reason), at: now.UnixMilli()}
	for i, line := range order.Items {
		if giveBack[line.SKU] {
			bought := expression.Name("bought")
			t.counter(i, line.SKU, order.UserID, expression.Add(bought, expression.Value(-line.Qty)), bought.GreaterThanEqual(expression.Value(line.Qty)))
		}
		t.lineStock(i, line, ref, reservedAtLeast, inventory.OpRelease)
	}
	return t
}

// reservedAtLeast is the condition of a shard update that takes q reserved units
// (release, commit): reserved >= q.
func reservedAtLeast(q int) expression.ConditionBuilder {
	return expression.Name("reserved").GreaterThanEqual(expression.Value(q))
}
