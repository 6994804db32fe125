package dynamo

import (
	"context"
	"fmt"
	"iter"
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

// Orders lists up to PageSize orders in status after the cursor, and the cursor of
// the next page: a filtered Scan of the orders table (its cost follows the table, so
// it is for operators, not for buyers' requests). Errors wrap
// inventory.ErrInvalidRequest for a cursor this store did not issue.
func (s *OrderStore) Orders(ctx context.Context, status inventory.Status, after string) ([]*inventory.Order, string, error) {
	listing := "orders " + string(status)
	start, err := decodeCursor(listing, after)
	if err != nil {
		return nil, "", err
	}
	filter := expression.Name("kind").Equal(expression.Value(kindOrder)).And(expression.Name("status").Equal(expression.Value(string(status))))
	items, next, err := s.scanPage(ctx, s.tables.Orders, listing, filter, start)
	if err != nil {
		return nil, "", err
	}
	out := make([]*inventory.Order, len(items))
	for i, item := range items {
		var rec orderRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return nil, "", fmt.Errorf("decode order: %w", err)
		}
		if out[i], err = rec.order(); err != nil {
			return nil, "", fmt.Errorf("decode order %s: %w", rec.PK, err)
		}
	}
	return out, next, nil
}

// Overdue lists up to PageSize orders still PENDING whose payment window ended at or
// before `before`, read through the PendingByExpiry index (see DuePending), in order
// id order after the cursor after (an order id; "" for the first page), and the
// cursor of the next page ("" when none is left). Each page queries the index for the
// ids due and reads at most PageSize orders. Errors wrap inventory.ErrInvalidRequest
// for a cursor that is not an order id.
func (s *OrderStore) Overdue(ctx context.Context, before time.Time, after string) ([]*inventory.Order, string, error) {
	if after != "" && !inventory.ValidOrderID(after) {
		return nil, "", errBadCursor
	}
	var ids []string
	for id, err := range s.DuePending(ctx, before) {
		if err != nil {
			return nil, "", err
		}
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []*inventory.Order
	for i, id := range ids {
		if len(out) == PageSize {
			return out, ids[i-1], nil
		}
		o, err := s.order(ctx, id)
		if err != nil {
			return nil, "", err
		}
		if o != nil && o.Status == inventory.StatusPending {
			out = append(out, o)
		}
	}
	return out, "", nil
}

// PENDING orders through the sparse PendingByExpiry index (PendingIndex): the sweep
// lists the due ones, reconcile reads them all.

// DuePending lists the ids of orders that the PendingByExpiry index shows as PENDING
// with pendingExpiresAt at or before `before`, bucket by bucket (starting at a random
// bucket, so a sweep cut short by its deadline does not always favour the same
// buckets), a page (up to 1 MB, DynamoDB API Reference, Query) at a time. The index is
// eventually consistent and may still show an order that has just been paid or
// cancelled: callers act through Expire, which reads the order first. Iteration stops
// at the first error.
func (s *OrderStore) DuePending(ctx context.Context, before time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		first := rand.IntN(PendingBuckets)
		for i := range PendingBuckets {
			key := pendingKey((first + i) % PendingBuckets).And(expression.Key("pendingExpiresAt").LessThanEqual(expression.Value(before.UnixMilli())))
			ids := expression.NamesList(expression.Name("pk"))
			more, err := s.eachPending(ctx, key, "pending order", &ids, nil, func(rec orderRecord) bool {
				return yield(rec.PK, nil)
			})
			if err != nil {
				yield("", err)
			}
			if !more {
				return
			}
		}
	}
}

// OpenOrders yields every order the PendingByExpiry index shows as PENDING, bucket by
// bucket, a page at a time: their number follows open orders, not history. The index
// is eventually consistent: an order paid or released a moment ago may still show.
// read, when not nil, is told what each page paid for (the items read before the
// status filter).
func (s *OrderStore) OpenOrders(ctx context.Context, read func(items int)) iter.Seq2[inventory.OpenOrder, error] {
	return func(yield func(inventory.OpenOrder, error) bool) {
		for b := range PendingBuckets {
			more, err := s.eachPending(ctx, pendingKey(b), "open order", nil, read, func(rec orderRecord) bool {
				o := inventory.OpenOrder{ID: rec.PK, UserID: rec.UserID, ExpiresAt: time.UnixMilli(rec.PendingExpiresAt).UTC()}
				for _, it := range rec.Items {
					shards, err := shardsFromRecord(it.Shards)
					if err != nil {
						yield(inventory.OpenOrder{}, fmt.Errorf("decode open order %s: %w", rec.PK, err))
						return false
					}
					o.Items = append(o.Items, inventory.OrderItem{SKU: it.SKU, Qty: it.Qty, Shards: shards, Limited: it.Limited})
				}
				return yield(o, nil)
			})
			if err != nil {
				yield(inventory.OpenOrder{}, err)
			}
			if !more {
				return
			}
		}
	}
}

// pendingKey selects one bucket (0 … PendingBuckets−1) of the PendingByExpiry index.
func pendingKey(bucket int) expression.KeyConditionBuilder {
	return expression.Key("pendingBucket").Equal(expression.Value("P" + strconv.Itoa(bucket)))
}

// eachPending queries the PendingByExpiry index with key, keeping only what is still
// PENDING (the index lags a release or a payment; see the package doc on sparse-index
// removal) and projecting proj (nil: whole items), and calls each for every order a
// page at a time; read, when not nil, is told the items each page read. It reports
// whether to go on: false once each returned false or on an error, which it returns
// (what names the items in it).
func (s *OrderStore) eachPending(ctx context.Context, key expression.KeyConditionBuilder, what string, proj *expression.ProjectionBuilder,
	read func(items int), each func(orderRecord) bool) (bool, error) {
	b := expression.NewBuilder().WithKeyCondition(key).
		WithFilter(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending))))
	if proj != nil {
		b = b.WithProjection(*proj)
	}
	expr, err := b.Build()
	if err != nil {
		return false, fmt.Errorf("build %s query: %w", what, err)
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.tables.Orders), IndexName: aws.String(PendingIndex),
		KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return false, s.storeError("query "+what+"s", err)
		}
		if read != nil { // what a Query pays for: the items read before the filter
			read(max(int(page.ScannedCount), len(page.Items)))
		}
		for _, item := range page.Items {
			var rec orderRecord
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				return false, fmt.Errorf("decode %s: %w", what, err)
			}
			if !each(rec) {
				return false, nil
			}
		}
	}
	return true, nil
}

// pendingBucket spreads PENDING orders over PendingBuckets GSI partitions.
func pendingBucket(orderID string) string { return "P" + bucket(orderID, PendingBuckets) }

// PendingIndex is the sparse GSI of PENDING orders on the orders table, hash key
// pendingBucket, range key pendingExpiresAt (Unix milliseconds).
const PendingIndex = "PendingByExpiry"

// PendingBuckets is how many pendingBucket values (P0..P127) PENDING orders are spread
// over, from a hash of the order id, so a flash sale's order writes do not all land on
// a few GSI partitions: an order's life writes its key twice (the entry put with the
// order, removed when it leaves PENDING), so the index takes 128 × 1,000 write units a
// second (DynamoDB Developer Guide, "Partitions and data distribution") = 64,000
// orders a second for the whole system: at 30,000 orders a second a key runs at 47 %,
// below a shard item's 80 % in the planned sale, so a burst meets the shards' ceiling
// before this index's (64 buckets ran at 94 % and refused a whole-sale rehearsal's
// burst). The orders table's own default write quota (40,000 write units a second per
// table, "Quotas in Amazon DynamoDB") binds long before: an order's life writes about
// 16 units there. A sweep queries every bucket: 128 Queries a minute, each of the due
// entries only (an empty one costs half a read unit: 64 read units a minute), so its
// cost follows the orders due. More buckets lift the index's ceiling; readers query
// every bucket, so the number may grow but never shrink.
const PendingBuckets = 128
