package dynamo

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
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

// What the merchant API reads: SKUs with their shards, a SKU's ledger, orders by
// status. Pages are resumed with an opaque cursor ("after"), "" for the first page.

// SKUIndex is the GSI of the stock_log table that lists one SKU's entries in time
// order: hash key skuBucket, "<skuId>#<k>" (k = 0..LedgerBuckets-1 from a hash of
// the entry's key, so a hot SKU's ledger writes spread over LedgerBuckets index
// partitions), range key at (Unix milliseconds).
const SKUIndex = "LedgerBySku"

// PageSize is how many items one page of a merchant API list holds at most.
const PageSize = 50

// skuLedgerBucket is the LedgerBySku hash key of entry pk of sku.
func skuLedgerBucket(sku, pk string) string { return sku + "#" + bucket(pk, LedgerBuckets) }

// ShardDetail is one shard item's counters (units).
type ShardDetail struct {
	Shard     int `json:"shard"`
	Available int `json:"available"`
	Reserved  int `json:"reserved"`
	OnHand    int `json:"onHand"`
}

// SKUDetail is a SKU with its stock per shard and its last change.
type SKUDetail struct {
	inventory.SKU
	PerShard  []ShardDetail // by shard number
	UpdatedBy string        // principal of the last change ("" when unknown)
	UpdatedAt time.Time     // when (zero when unknown)
}

// SKUDetail reads sku's record and every shard (settled: no unit in transit, see
// settledShards). Errors wrap inventory.ErrSKUNotFound or ErrBusy.
func (s *Store) SKUDetail(ctx context.Context, sku string) (*SKUDetail, error) {
	for range settleRounds {
		shards, rec, err := s.settledShards(ctx, sku)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			return detailOf(*rec, shards), nil
		}
	}
	return nil, fmt.Errorf("read SKU %s: shards kept moving: %w", sku, inventory.ErrBusy)
}

// settledSKU is SKU read through SKUDetail.
func (s *Store) settledSKU(ctx context.Context, id string) (*inventory.SKU, error) {
	d, err := s.SKUDetail(ctx, id)
	if err != nil {
		return nil, err
	}
	return &d.SKU, nil
}

func detailOf(rec skuRecord, shards []shardRecord) *SKUDetail {
	d := &SKUDetail{SKU: *recordSKU(rec, shards), UpdatedBy: rec.UpdatedBy, UpdatedAt: fromMilli(rec.UpdatedAt)}
	for _, sh := range shards {
		d.PerShard = append(d.PerShard, ShardDetail{Shard: sh.Shard, Available: sh.Available, Reserved: sh.Reserved, OnHand: sh.OnHand})
	}
	slices.SortFunc(d.PerShard, func(a, b ShardDetail) int { return cmp.Compare(a.Shard, b.Shard) })
	return d
}

// SKUs lists up to PageSize SKUs after the cursor with their stock summed over their
// shards, and the cursor of the next page ("" at the end). It scans the skus table
// (its size follows the catalogue). Errors wrap inventory.ErrInvalidRequest for a
// cursor this store did not issue.
func (s *Store) SKUs(ctx context.Context, after string) ([]*SKUDetail, string, error) {
	start, err := decodeCursor(after, "pk")
	if err != nil {
		return nil, "", err
	}
	filter := expression.Name("kind").Equal(expression.Value(kindSKU))
	items, next, err := s.scanPage(ctx, s.tables.SKUs, filter, start)
	if err != nil {
		return nil, "", err
	}
	counts := map[string]int{}
	recs := make([]skuRecord, len(items))
	for i, item := range items {
		if err := attributevalue.UnmarshalMap(item, &recs[i]); err != nil {
			return nil, "", fmt.Errorf("decode SKU: %w", err)
		}
		counts[recs[i].SKU] = recs[i].Shards
	}
	shards, err := s.shardRecords(ctx, counts)
	if err != nil {
		return nil, "", err
	}
	out := make([]*SKUDetail, len(recs))
	for i, rec := range recs {
		out[i] = detailOf(rec, shards[rec.SKU])
	}
	return out, next, nil
}

// scanPage scans table for up to PageSize items matching filter from start, and
// returns them with the cursor of the next page ("" at the end): the key of the last
// item returned, where a Scan resumes (DynamoDB API Reference, Scan: ExclusiveStartKey).
func (s *Store) scanPage(ctx context.Context, table string, filter expression.ConditionBuilder, start map[string]types.AttributeValue) ([]map[string]types.AttributeValue, string, error) {
	expr, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return nil, "", fmt.Errorf("build scan filter: %w", err)
	}
	var items []map[string]types.AttributeValue
	for {
		out, err := s.db.Scan(ctx, &dynamodb.ScanInput{
			TableName: aws.String(table), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
			Limit: aws.Int32(scanLimit), FilterExpression: expr.Filter(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		})
		if err != nil {
			return nil, "", s.storeError("scan "+table, err)
		}
		items, start = append(items, out.Items...), out.LastEvaluatedKey
		switch {
		case len(items) > PageSize:
			items = items[:PageSize]
			next, err := encodeCursor(map[string]types.AttributeValue{"pk": items[PageSize-1]["pk"]})
			return items, next, err
		case len(start) == 0:
			return items, "", nil
		case len(items) == PageSize:
			next, err := encodeCursor(start)
			return items, next, err
		}
	}
}

// scanLimit is how many items one Scan of a merchant API list examines.
const scanLimit = 200

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

// pagesOf yields the ledger entries of pages (see yieldPages).
func (s *Store) pagesOf(ctx context.Context, more func() bool, next func(context.Context) ([]map[string]types.AttributeValue, error)) func(func(LedgerEntry, error) bool) {
	return func(yield func(LedgerEntry, error) bool) { s.yieldPages(ctx, more, next, nil, yield) }
}

// Orders lists up to PageSize orders in status after the cursor, and the cursor of
// the next page: a filtered Scan of the orders table (its cost follows the table, so
// it is for operators, not for buyers' requests). Errors wrap
// inventory.ErrInvalidRequest for a cursor this store did not issue.
func (s *Store) Orders(ctx context.Context, status inventory.Status, after string) ([]*inventory.Order, string, error) {
	start, err := decodeCursor(after, "pk")
	if err != nil {
		return nil, "", err
	}
	filter := expression.Name("kind").Equal(expression.Value(kindOrder)).And(expression.Name("status").Equal(expression.Value(string(status))))
	items, next, err := s.scanPage(ctx, s.tables.Orders, filter, start)
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
// before `before`, read through the PendingByExpiry index (see DuePending).
func (s *Store) Overdue(ctx context.Context, before time.Time) ([]*inventory.Order, error) {
	var out []*inventory.Order
	for id, err := range s.DuePending(ctx, before) {
		if err != nil {
			return nil, err
		}
		o, err := s.order(ctx, id)
		if err != nil {
			return nil, err
		}
		if o != nil && o.Status == inventory.StatusPending {
			out = append(out, o)
		}
		if len(out) == PageSize {
			break
		}
	}
	slices.SortFunc(out, func(a, b *inventory.Order) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	return out, nil
}

var errBadCursor = inventory.InvalidError("after is not a cursor from a previous page")

// encodeCursor makes an opaque cursor of a DynamoDB key of string and number values.
func encodeCursor(key map[string]types.AttributeValue) (string, error) {
	var m map[string]any
	if err := attributevalue.UnmarshalMap(key, &m); err != nil {
		return "", fmt.Errorf("encode cursor: %w", err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// decodeCursor reads a cursor made by encodeCursor for a key of exactly the string
// attributes names; "" is the first page (nil key).
func decodeCursor(cursor string, names ...string) (map[string]types.AttributeValue, error) {
	if cursor == "" {
		return nil, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	var m map[string]string
	if err != nil || json.Unmarshal(data, &m) != nil || len(m) != len(names) {
		return nil, errBadCursor
	}
	key := map[string]types.AttributeValue{}
	for _, n := range names {
		v, ok := m[n]
		if !ok || v == "" {
			return nil, errBadCursor
		}
		key[n] = &types.AttributeValueMemberS{Value: v}
	}
	return key, nil
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
