package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/stockguard/stockguard/internal/inventory"
)

// putNew is a transactional Put of rec that fails when an item with its pk exists,
// unless orReplace (a condition on the existing item) holds.
func (s *Store) putNew(table string, rec any, orReplace *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode item for %s: %w", table, err)
	}
	cond := expression.AttributeNotExists(expression.Name("pk"))
	if orReplace != nil {
		cond = cond.Or(*orReplace)
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build put condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(table), Item: item,
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// update is a transactional Update of the item with key pk, returning the old item when
// its condition fails; a zero cond means no condition.
func update(table, pk string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	b := expression.NewBuilder().WithUpdate(upd)
	if cond.IsSet() {
		b = b.WithCondition(cond)
	}
	expr, err := b.Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build update of %s: %w", pk, err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: pkOf(pk),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// reserveUpdate moves qty units of one shard from available to reserved: available >=
// qty, on sale, and still at the price the order charges.
func (s *Store) reserveUpdate(sku string, shard, qty int, price int64) (types.TransactWriteItem, error) {
	avail := expression.Name("available")
	cond := avail.GreaterThanEqual(expression.Value(qty)).
		And(expression.Name("onSale").Equal(expression.Value(true))).
		And(expression.Name("price").Equal(expression.Value(price)))
	upd := expression.Set(avail, avail.Minus(expression.Value(qty))).Add(expression.Name("reserved"), expression.Value(qty))
	return update(s.tables.SKUs, shardKey(sku, shard), upd, cond)
}

// limitUpdate counts qty units against the user's per-SKU limit.
func (s *Store) limitUpdate(user, sku string, qty, limit int) (types.TransactWriteItem, error) {
	bought := expression.Name("bought")
	cond := expression.AttributeNotExists(bought).Or(bought.LessThanEqual(expression.Value(limit - qty)))
	upd := expression.Add(bought, expression.Value(qty)).
		Set(expression.Name("kind"), expression.Value(kindLimit)).
		Set(expression.Name("skuId"), expression.Value(sku)).
		Set(expression.Name("userId"), expression.Value(user))
	return update(s.tables.Orders, limitKey(sku, user), upd, cond)
}

// settle reads a failed reservation transaction. done=false means another round may
// run (the plan was adjusted); done=true returns the final answer.
func (r *reservation) settle(ctx context.Context, err error) (done bool, order *inventory.Order, replayed bool, _ error) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		order, err := r.ambiguous(ctx, err)
		return true, order, false, err
	}
	failed := conditionFailures(tce, len(r.roles))
	if len(failed) == 0 {
		if isTransient(err) {
			return true, nil, false, fmt.Errorf("reserve order %s: %w (%w)", r.id, inventory.ErrBusy, err)
		}
		return true, nil, false, fmt.Errorf("reserve order %s: %w", r.id, err)
	}
	// The order's own items first: if they exist, an earlier send of this very
	// transaction was applied and its response lost.
	for _, i := range failed {
		if k := r.roles[i].kind; k == roleOrder || k == roleLedger {
			order, err := r.own(ctx)
			return true, order, false, err
		}
	}
	for _, i := range failed {
		if r.roles[i].kind == roleIdem {
			order, replayed, err := r.replay(ctx)
			if err == nil && order == nil {
				return false, nil, false, nil // the record expired meanwhile: try again
			}
			return true, order, replayed, err
		}
	}
	i := failed[0]
	ro := r.roles[i]
	lp := &r.lines[ro.line]
	if ro.kind == roleLimit {
		limit := lp.rec.LimitPerUser
		if err := r.refresh(ctx, ro.line); err != nil {
			return true, nil, false, err
		}
		if r.lines[ro.line].rec.LimitPerUser == limit {
			return true, nil, false, &inventory.SKUError{Err: inventory.ErrLimitExceeded, SKU: lp.line.SKU}
		}
		return false, nil, false, nil // the limit changed since it was cached: try again
	}
	if err := r.shardFailed(ctx, ro, tce.CancellationReasons[i].Item); err != nil {
		return true, nil, false, err
	}
	return false, nil, false, nil
}

// conditionFailures lists the indexes whose reason is ConditionalCheckFailed.
func conditionFailures(tce *types.TransactionCanceledException, n int) []int {
	var out []int
	for i, r := range tce.CancellationReasons {
		if i < n && aws.ToString(r.Code) == "ConditionalCheckFailed" {
			out = append(out, i)
		}
	}
	return out
}

// shardFailed explains a failed shard condition from the shard's old image and adjusts
// the plan, or returns the answer: off sale, or out of stock when a strongly consistent
// read of every shard cannot cover the line.
func (r *reservation) shardFailed(ctx context.Context, ro role, old map[string]types.AttributeValue) error {
	lp := &r.lines[ro.line]
	sku := lp.line.SKU
	var sh shardRecord
	if len(old) > 0 {
		if err := attributevalue.UnmarshalMap(old, &sh); err != nil {
			return fmt.Errorf("decode shard %d of %s: %w", ro.shard, sku, err)
		}
	}
	switch {
	case len(old) > 0 && !sh.OnSale:
		return &inventory.SKUError{Err: inventory.ErrOffSale, SKU: sku}
	case len(old) > 0 && sh.Price == lp.rec.Price && sh.Available < lp.alloc[ro.shard]:
		r.s.catalog.noteShard(sku, ro.shard, sh.Available)
		if lp.rec.Shards == 1 {
			return &inventory.SKUError{Err: inventory.ErrStockOut, SKU: sku}
		}
		return r.rereadShards(ctx, false)
	}
	// Missing shard or a changed price: the cached SKU record is stale.
	return r.refresh(ctx, ro.line)
}

// refresh re-reads line i's SKU record and shards (strongly consistent) and plans the
// line again from them.
func (r *reservation) refresh(ctx context.Context, i int) error {
	sku := r.lines[i].line.SKU
	r.s.catalog.forget(sku)
	entries, err := r.s.skuRecords(ctx, []string{sku}, true)
	if err != nil {
		return err
	}
	e, ok := entries[sku]
	if !ok {
		return &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	return r.replan(ctx, i, e, true)
}

// own reads back this reservation's order after its write turned out to exist already.
func (r *reservation) own(ctx context.Context) (*inventory.Order, error) {
	order, err := r.s.order(ctx, r.id)
	if err != nil {
		return nil, fmt.Errorf("read back order %s: %w", r.id, err)
	}
	if order == nil || order.UserID != r.req.UserID || order.CartHash != r.hash {
		return nil, fmt.Errorf("order id %s already taken by another order", r.id)
	}
	return order, nil
}

// replay answers a request whose idempotency key already has a live record: the same
// cart gets the recorded order (replayed unless it is this reservation's own write),
// another cart gets ErrIdempotencyKeyReused. A nil order with nil error means the
// record is gone or expired.
func (r *reservation) replay(ctx context.Context) (*inventory.Order, bool, error) {
	out, err := r.s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.s.tables.Orders), Key: pkOf(idemKey(r.req.UserID, r.req.IdempotencyKey)),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, false, r.s.storeError("read idempotency record", err)
	}
	var rec idemRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return nil, false, fmt.Errorf("decode idempotency record: %w", err)
	}
	if rec.OrderID == "" || rec.TTL < r.createdAt.Unix() {
		return nil, false, nil
	}
	if rec.UserID != r.req.UserID || rec.CartHash != r.hash {
		return nil, false, inventory.ErrIdempotencyKeyReused
	}
	if rec.OrderID == r.id {
		order, err := r.own(ctx)
		return order, false, err
	}
	order, err := r.s.order(ctx, rec.OrderID)
	if err != nil {
		return nil, false, fmt.Errorf("read replayed order %s: %w", rec.OrderID, err)
	}
	if order == nil {
		return nil, false, fmt.Errorf("idempotency record names missing order %s", rec.OrderID)
	}
	return order, true, nil
}

// ambiguous handles a failure that says nothing about whether the write applied
// (timeouts, 5xx after the SDK's retries, a cancelled context): it reads the order
// back, and answers ErrBusy when it is not there.
func (r *reservation) ambiguous(ctx context.Context, cause error) (*inventory.Order, error) {
	what := "reserve order " + r.id
	if err := definiteFailure(what, cause); err != nil {
		return nil, err
	}
	cctx, cancel := convergeContext(ctx)
	defer cancel()
	order, err := r.s.order(cctx, r.id)
	if err == nil && order != nil && order.UserID == r.req.UserID && order.CartHash == r.hash {
		return order, nil
	}
	return nil, fmt.Errorf("%s: outcome unknown after %v: %w", what, cause, inventory.ErrBusy)
}

// definiteFailure returns the error to answer when a failed write certainly changed
// nothing: ErrBusy for throttling and conflicts, the cause itself for other client
// faults (bugs), whether the SDK models the error (smithy.FaultClient) or only saw a
// 4xx status (an unmodeled error such as ValidationException). It returns nil when the
// write may have been applied (timeouts, 5xx after the SDK's retries, a cancelled
// context): the caller must read back.
func definiteFailure(what string, cause error) error {
	if isTransient(cause) {
		return fmt.Errorf("%s: %w (%w)", what, inventory.ErrBusy, cause)
	}
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if errors.As(cause, &ae) && ae.ErrorFault() == smithy.FaultClient ||
		errors.As(cause, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500 {
		return fmt.Errorf("%s: %w", what, cause)
	}
	return nil
}
