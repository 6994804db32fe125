package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Adjust applies an operator's restock (a.Delta > 0, spread over the shards) or
// write-off (a.Delta < 0, taken from available units, fullest shards first) to sku:
// on-hand and available move together, with one ADJUST ledger entry keyed by a.ID
// (ledger key a.ID#ADJUST#skuId) that records a.Reason and a.By, in one transaction.
// It reports true when this call applied it and false when the same adjustment (same
// id, delta and reason) was applied before: nothing is applied twice. Errors wrap
// inventory.ErrInvalidRequest (Adjustment.Validate), ErrSKUNotFound,
// ErrIdempotencyKeyReused (the id was used with another delta or reason), ErrStockOut
// (a write-off larger than the available units; reserved units are never written
// off), or ErrBusy.
func (s *StockStore) Adjust(ctx context.Context, sku string, a inventory.Adjustment) (bool, error) {
	if err := a.Validate(); err != nil {
		return false, err
	}
	key := ledgerKey(a.ID, inventory.OpAdjust, sku)
	for range layoutRounds {
		applied, err := s.adjustOnce(ctx, sku, key, a)
		if errors.Is(err, errGone) {
			continue // a buyer or a reshard changed the shards: plan again
		}
		return applied, err
	}
	return false, fmt.Errorf("adjust %s: shards kept changing: %w", sku, inventory.ErrBusy)
}

// adjustOnce plans and sends one try of Adjust; errGone means try again.
func (s *StockStore) adjustOnce(ctx context.Context, sku, key string, a inventory.Adjustment) (bool, error) {
	if done, err := s.adjusted(ctx, key, a); err != nil || done {
		return false, err
	}
	shards, rec, err := s.steadyShards(ctx, sku)
	if err != nil || rec == nil {
		return false, cmpOr(err, errGone)
	}
	plan, err := adjustPlan(rec, shards, a.Delta)
	if err != nil {
		return false, err
	}
	t := s.newTxn("adjust " + sku + " by " + a.ID)
	for _, n := range slices.Sorted(maps.Keys(plan)) {
		q := plan[n]
		d, _ := inventory.OpAdjust.Effect(q)
		cond := expression.AttributeExists(expression.Name("pk")).And(sameShardCount(rec.Shards))
		if q < 0 {
			cond = cond.And(expression.Name("available").GreaterThanEqual(expression.Value(-q)))
		}
		t.shard(0, sku, n, d, cond)
	}
	units := make(map[int]int, len(plan))
	for n, q := range plan {
		units[n] = abs(q)
	}
	ref := entryRef{key: a.ID, ref: a.ID, reason: a.Reason, at: s.now().UnixMilli(), by: a.By}
	t.ledger(0, newEntry(ref, inventory.OpAdjust, sku, a.Delta, units))
	out, err := s.send(ctx, t)
	s.catalog.forget(sku)
	switch {
	case err != nil:
		return false, err
	case out.applied:
		return true, nil
	case out.unknown != nil || out.has(partLedger):
		done, err := s.adjusted(ctx, key, a)
		switch {
		case err == nil && !done && out.unknown != nil:
			err = outcomeUnknown("adjust "+sku, out.unknown)
		case err == nil && !done:
			err = fmt.Errorf("adjust %s: outcome unknown: %w", sku, inventory.ErrBusy)
		}
		return done && out.unknown != nil, err
	}
	return false, errGone
}

// adjustPlan spreads delta units over rec's shards: a restock evenly, a write-off
// over the fullest shards' available units, or an error wrapping ErrStockOut.
func adjustPlan(rec *skuRecord, shards []shardRecord, delta int) (map[int]int, error) {
	if delta > 0 {
		plan := inventory.NewSKU{Stock: delta, Shards: rec.Shards}.Split()
		maps.DeleteFunc(plan, func(_ int, q int) bool { return q == 0 })
		return plan, nil
	}
	avail := make(inventory.ShardStock, rec.Shards)
	for _, sh := range shards {
		if sh.Shard < len(avail) {
			avail[sh.Shard] = max(sh.Available, 0)
		}
	}
	alloc, ok := avail.Allocate(-delta)
	if !ok {
		return nil, &inventory.SKUError{Err: inventory.ErrStockOut, SKU: rec.SKU}
	}
	plan := make(map[int]int, len(alloc))
	for n, q := range alloc {
		plan[n] = -q
	}
	return plan, nil
}

// adjusted reports whether the ADJUST entry key exists with a's delta and reason; an
// entry with another delta or reason is an error wrapping ErrIdempotencyKeyReused.
func (s *StockStore) adjusted(ctx context.Context, key string, a inventory.Adjustment) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.StockLog), Key: pkOf(key), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, s.storeError("read adjustment "+a.ID, err)
	}
	if len(out.Item) == 0 {
		return false, nil
	}
	var rec ledgerRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return false, fmt.Errorf("decode adjustment %s: %w", a.ID, err)
	}
	if rec.Qty != a.Delta || rec.Reason != a.Reason {
		return false, fmt.Errorf("adjustment %s: %w", a.ID, inventory.ErrIdempotencyKeyReused)
	}
	return true, nil
}

// cmpOr returns err when it is set, else alt.
func cmpOr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}
