package dynamo

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// The stock_log ledger: its entries, the two indexes that list them (by time for
// reconcile, by SKU for the merchant API) and their reads. Merchant API pages are
// resumed with an opaque cursor ("after"), "" for the first page.

// SKUIndex is the GSI of the stock_log table that lists one SKU's entries in time
// order: hash key skuBucket, "<skuId>#<k>" (k = 0..LedgerBuckets-1 from a hash of
// the entry's key, so a hot SKU's ledger writes spread over LedgerBuckets index
// partitions), range key at (Unix milliseconds).
const SKUIndex = "LedgerBySku"

// skuLedgerBucket is the LedgerBySku hash key of entry pk of sku.
func skuLedgerBucket(sku, pk string) string { return sku + "#" + bucket(pk, LedgerBuckets) }

// Ledger lists up to PageSize of sku's ledger entries in time order (then by key)
// after the cursor, and the cursor of the next page ("" at the end): one Query of
// the LedgerBySku index per bucket (eventually consistent: entries of the last
// moments may show on a later read). Errors wrap inventory.ErrInvalidRequest for a
// cursor this store did not issue.
func (s *Store) Ledger(ctx context.Context, sku, after string) ([]LedgerEntry, string, error) {
	from, err := decodeLedgerCursor(after)
	if err != nil {
		return nil, "", err
	}
	var all []LedgerEntry
	for k := range LedgerBuckets {
		entries, err := s.ledgerBucketPage(ctx, sku+"#"+strconv.Itoa(k), from)
		if err != nil {
			return nil, "", err
		}
		all = append(all, entries...)
	}
	slices.SortFunc(all, func(a, b LedgerEntry) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Key, b.Key))
	})
	if len(all) <= PageSize {
		return all, "", nil
	}
	all = all[:PageSize]
	last := all[len(all)-1]
	return all, encodeLedgerCursor(ledgerCursor{At: last.At.UnixMilli(), Key: last.Key}), nil
}

// ledgerBucketPage reads up to PageSize+1 entries of one LedgerBySku bucket after from.
func (s *Store) ledgerBucketPage(ctx context.Context, key string, from ledgerCursor) ([]LedgerEntry, error) {
	cond := expression.Key("skuBucket").Equal(expression.Value(key)).And(expression.Key("at").GreaterThanEqual(expression.Value(from.At)))
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build ledger query: %w", err)
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.tables.StockLog), IndexName: aws.String(SKUIndex), Limit: aws.Int32(PageSize + 1),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var out []LedgerEntry
	for e, err := range s.pagesOf(ctx, pages.HasMorePages, func(ctx context.Context) ([]map[string]types.AttributeValue, error) {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		return page.Items, nil
	}) {
		if err != nil {
			return nil, err
		}
		if e.At.UnixMilli() == from.At && e.Key <= from.Key {
			continue // on or before the cursor
		}
		if out = append(out, e); len(out) > PageSize {
			break
		}
	}
	return out, nil
}

// ledgerCursor is where a ledger page ended: the last entry's time and key.
type ledgerCursor struct {
	At  int64  `json:"at"`
	Key string `json:"pk"`
}

func encodeLedgerCursor(c ledgerCursor) string {
	data, _ := json.Marshal(c) // a plain struct of a number and a string
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeLedgerCursor(cursor string) (ledgerCursor, error) {
	var c ledgerCursor
	if cursor == "" {
		return c, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(data, &c) != nil || c.Key == "" || c.At < 0 {
		return ledgerCursor{}, errBadCursor
	}
	return c, nil
}

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
	Key        string       // the entry's key: ref#op#skuId (REPAIR: ref#REPAIR#skuId#shard)
	Ref        string       // order id, adjustment id or repair run id
	Op         inventory.Op // the ledger operation (inventory.Op: its effect on the counters)
	SKU        string       // SKU id
	Qty        int          // units of the line (REPAIR: 0)
	DAvailable int          // change to the SKU's available units
	DOnHand    int          // change to the SKU's on-hand units
	Shards     map[int]int  // shard → units of Qty on it (REPAIR: nil, see Shard)
	Shard      int          // REPAIR only: the one shard DAvailable and DOnHand apply to
	At         time.Time    // when the entry was written (writer's clock, ms)
	Reason     string       // ADJUST, MOVE and REPAIR entries: why
	By         string       // operator entries: the caller's IAM principal ARN
	// Epochs are the epochs of the shards the entry moved when it was written
	// (shard → epoch; see Cut). An entry without one counts as epoch 0.
	Epochs map[int]int
}

// ShardDeltas returns the entry's change to each shard's available and on-hand
// units: a REPAIR entry's signed deltas on its one shard, any other entry's units on
// each of its shards in the direction of its deltas.
func (e LedgerEntry) ShardDeltas() map[int]Sums {
	if e.Op == inventory.OpRepair {
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
	epochs, err := shardsFromRecord(r.Epochs)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("decode ledger entry %s: %w", r.PK, err)
	}
	e := LedgerEntry{
		Key: r.PK, Ref: r.Ref, Op: r.Op, SKU: r.SKU, Qty: r.Qty, DAvailable: r.DAvailable, DOnHand: r.DOnHand,
		Shards: shards, At: time.UnixMilli(r.At).UTC(), Reason: r.Reason, By: r.By, Epochs: epochs,
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

type ledgerRecord struct {
	PK         string         `dynamodbav:"pk"`
	Ref        string         `dynamodbav:"ref"`
	Op         inventory.Op   `dynamodbav:"op"`
	SKU        string         `dynamodbav:"skuId"`
	Qty        int            `dynamodbav:"qty"`
	DAvailable int            `dynamodbav:"dAvailable"`
	DOnHand    int            `dynamodbav:"dOnHand"`
	Shards     map[string]int `dynamodbav:"shards"`
	At         int64          `dynamodbav:"at"` // Unix milliseconds
	Reason     string         `dynamodbav:"reason,omitempty"`
	By         string         `dynamodbav:"by,omitempty"` // operator entries: the caller's IAM principal ARN
	// Shard, on REPAIR entries only, is the one shard whose counters DAvailable and
	// DOnHand (signed) apply to; other entries spread Qty over Shards.
	Shard *int `dynamodbav:"shard,omitempty"`
	// Counter corrections a REPAIR entry records: how much it changed the shard's
	// available and onHand counters (not ledger deltas: see reconcile).
	FixAvailable int `dynamodbav:"fixAvailable,omitempty"`
	FixOnHand    int `dynamodbav:"fixOnHand,omitempty"`
	// Bucket is the LedgerByTime index's hash key (see ledgerBucket).
	Bucket string `dynamodbav:"ledgerBucket"`
	// SKUBucket is the LedgerBySku index's hash key (see skuLedgerBucket).
	SKUBucket string `dynamodbav:"skuBucket"`
	// Epochs are the epochs of the shards (number → epoch) the entry moved, as they
	// were when it was written (see cut.go).
	Epochs map[string]int `dynamodbav:"epochs,omitempty"`
}

// Returned reads order's RETURN ledger entries, one key per line (strongly
// consistent), and returns their units by SKU (absent: none).
func (s *Store) Returned(ctx context.Context, order *inventory.Order) (map[string]int, error) {
	out := map[string]int{}
	for _, it := range order.Items {
		var e ledgerRecord
		key := ledgerKey(order.ID, inventory.OpReturn, it.SKU)
		if err := s.get(ctx, s.tables.StockLog, key, "ledger entry "+key, &e); err != nil {
			return nil, err
		}
		if e.Op == inventory.OpReturn {
			out[it.SKU] += e.Qty
		}
	}
	return out, nil
}
