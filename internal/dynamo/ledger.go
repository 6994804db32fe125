package dynamo

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// LedgerIndex is the GSI of the stock_log table that finds entries by when they were
// written: hash key ledgerBucket, "<UTC hour>#<k>" (e.g. "2026-11-11T00#7", k =
// 0..LedgerBuckets-1 from a hash of the entry's key), range key at (Unix
// milliseconds). Reading the entries written since a time costs one Query per bucket
// per hour since then (the range key skips the older entries of the first hour), plus
// the entries themselves: it follows activity, not history. The k spreads an hour's
// writes over LedgerBuckets index partitions, so a flash sale's ledger writes do not
// throttle one partition (DynamoDB Developer Guide, "Partitions and data
// distribution"; a throttled GSI throttles its table's writes).
const LedgerIndex = "LedgerByTime"

// LedgerBuckets is how many index partitions one hour's ledger entries spread over.
const LedgerBuckets = 16

const hourLayout = "2006-01-02T15"

// ledgerBucket is the LedgerByTime hash key of the entry with key pk written at at.
func ledgerBucket(pk string, at time.Time) string {
	return at.UTC().Format(hourLayout) + "#" + bucket(pk, LedgerBuckets)
}

// LedgerEntry is one stock_log entry as reconcile reads it. Quantities are units.
type LedgerEntry struct {
	Key        string      // the entry's key: ref#op#skuId (REPAIR: ref#REPAIR#skuId#shard)
	Ref        string      // order id, adjustment id or repair run id
	Op         string      // OpReserve, OpRelease, OpCommit, OpReturn, OpAdjust, OpRepair
	SKU        string      // SKU id
	Qty        int         // units of the line (REPAIR: 0)
	DAvailable int         // change to the SKU's available units
	DOnHand    int         // change to the SKU's on-hand units
	Shards     map[int]int // shard → units of Qty on it (REPAIR: nil, see Shard)
	Shard      int         // REPAIR only: the one shard DAvailable and DOnHand apply to
	At         time.Time   // when the entry was written (writer's clock, ms)
	Reason     string      // ADJUST, MOVE and REPAIR entries: why
	By         string      // operator entries: the caller's IAM principal ARN
}

// ShardDeltas returns the entry's change to each shard's available and on-hand
// units: a REPAIR entry's signed deltas on its one shard, any other entry's units on
// each of its shards in the direction of its deltas.
func (e LedgerEntry) ShardDeltas() map[int]Sums {
	if e.Op == OpRepair {
		return map[int]Sums{e.Shard: {Available: e.DAvailable, OnHand: e.DOnHand}}
	}
	out := make(map[int]Sums, len(e.Shards))
	for n, units := range e.Shards {
		out[n] = Sums{Available: units * sign(e.DAvailable), OnHand: units * sign(e.DOnHand)}
	}
	return out
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}

func (r ledgerRecord) entry() (LedgerEntry, error) {
	shards, err := shardsFromRecord(r.Shards)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("decode ledger entry %s: %w", r.PK, err)
	}
	e := LedgerEntry{
		Key: r.PK, Ref: r.Ref, Op: r.Op, SKU: r.SKU, Qty: r.Qty, DAvailable: r.DAvailable, DOnHand: r.DOnHand,
		Shards: shards, At: time.UnixMilli(r.At).UTC(), Reason: r.Reason, By: r.By,
	}
	if r.Shard != nil {
		e.Shard = *r.Shard
	}
	return e, nil
}

// LedgerSince yields every ledger entry the LedgerByTime index holds with at after
// `after` and at or before `until`: one Query per bucket per hour in between, a page at
// a time (DynamoDB API Reference, Query). The index is eventually consistent, so
// entries written in the last moments may be missing; callers keep a margin (see
// package reconcile). read, when not nil, is told how many items each page returned.
func (s *Store) LedgerSince(ctx context.Context, after, until time.Time, read func(items int)) iter.Seq2[LedgerEntry, error] {
	return func(yield func(LedgerEntry, error) bool) {
		for h := after.UTC().Truncate(time.Hour); !h.After(until); h = h.Add(time.Hour) {
			for k := range LedgerBuckets {
				key := expression.Key("ledgerBucket").Equal(expression.Value(h.Format(hourLayout) + "#" + strconv.Itoa(k))).
					And(expression.Key("at").Between(expression.Value(after.UnixMilli()+1), expression.Value(until.UnixMilli())))
				expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
				if err != nil {
					yield(LedgerEntry{}, fmt.Errorf("build ledger query: %w", err))
					return
				}
				pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
					TableName: aws.String(s.tables.StockLog), IndexName: aws.String(LedgerIndex),
					KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
				})
				if !s.yieldPages(ctx, pages.HasMorePages, func(ctx context.Context) ([]map[string]types.AttributeValue, error) {
					page, err := pages.NextPage(ctx)
					if err != nil {
						return nil, err
					}
					return page.Items, nil
				}, read, yield) {
					return
				}
			}
		}
	}
}

// LedgerAll yields every ledger entry with a consistent Scan of the stock_log table: it
// reads all history, for the first reconcile run only.
func (s *Store) LedgerAll(ctx context.Context, read func(items int)) iter.Seq2[LedgerEntry, error] {
	return func(yield func(LedgerEntry, error) bool) {
		pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.tables.StockLog), ConsistentRead: aws.Bool(true)})
		s.yieldPages(ctx, pages.HasMorePages, func(ctx context.Context) ([]map[string]types.AttributeValue, error) {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			return page.Items, nil
		}, read, yield)
	}
}

// yieldPages decodes the ledger items of each page and yields them; false means stop.
func (s *Store) yieldPages(ctx context.Context, more func() bool, next func(context.Context) ([]map[string]types.AttributeValue, error),
	read func(int), yield func(LedgerEntry, error) bool) bool {
	for more() {
		items, err := next(ctx)
		if err != nil {
			yield(LedgerEntry{}, s.storeError("read ledger", err))
			return false
		}
		if read != nil {
			read(len(items))
		}
		for _, item := range items {
			var rec ledgerRecord
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				yield(LedgerEntry{}, fmt.Errorf("decode ledger entry: %w", err))
				return false
			}
			e, err := rec.entry()
			if err != nil {
				yield(LedgerEntry{}, err)
				return false
			}
			if !yield(e, nil) {
				return false
			}
		}
	}
	return true
}
