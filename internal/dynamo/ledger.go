package dynamo

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// The stock_log ledger: its entries, the one index that lists them (by shard, in time
// order: for reconcile and for the merchant API) and their reads. Merchant API pages
// are resumed with an opaque cursor ("after"), "" for the first page.

// ShardIndex is the GSI of the stock_log table that lists the entries of one shard
// in time order: hash key ledgerShard, "<skuId>#<n>" with n the lowest shard the entry
// moves (a REPAIR entry: its one shard), range key at (Unix milliseconds).
//
// Every entry is written in the same transaction as an update of the shard item its
// key names, and transactions on one item are serialized; so one index key never
// takes more writes than its shard item does, and no index key limits a sale below
// its shards' own ceiling (DynamoDB Developer Guide, "Partitions and data
// distribution": 1,000 write units per second per partition; "Understanding GSI write
// throttling and back-pressure": a throttled index write throttles the table's).
// Readers go by shard: reconcile reads only the shards that moved since their
// checkpoints, the entries since its watermark (the range key skips the rest), so its
// cost follows activity, not history; a merchant's ledger page reads each shard
// number a SKU can have. One entry is one index write (it is under 1 KB, so projecting
// fewer attributes would not make it cheaper, and both readers read every attribute).
const ShardIndex = "LedgerByShard"

// ledgerShard is the ShardIndex hash key of an entry of sku moving shards (REPAIR:
// repair is its shard).
func ledgerShard(sku string, shards map[string]int, repair *int) string {
	n := -1
	if repair != nil {
		n = *repair
	}
	for k := range shards {
		if i, err := strconv.Atoi(k); err == nil && (n < 0 || i < n) {
			n = i
		}
	}
	return sku + "#" + strconv.Itoa(max(n, 0))
}

// Ledger lists up to PageSize of sku's ledger entries in time order (then by key)
// after the cursor, and the cursor of the next page ("" at the end): the SKU record
// read (its shards and the shards a reshard deleted), then one Query of the
// LedgerByShard index per shard number it has had (eventually consistent: entries of
// the last moments may show on a later read). A shard grown past the count and shrunk
// back is in the record's retired shards. Errors wrap inventory.ErrInvalidRequest for
// a cursor this store did not issue, inventory.ErrSKUNotFound.
func (s *BookStore) Ledger(ctx context.Context, sku, after string) ([]inventory.LedgerEntry, string, error) {
	from, err := decodeLedgerCursor(after)
	if err != nil {
		return nil, "", err
	}
	rec, err := s.skuRecordOf(ctx, sku)
	if err != nil {
		return nil, "", err
	}
	numbers := map[int]bool{}
	for n := range rec.Shards {
		numbers[n] = true
	}
	for k := range rec.Retired {
		if n, err := strconv.Atoi(k); err == nil {
			numbers[n] = true
		}
	}
	var all []inventory.LedgerEntry
	for _, n := range slices.Sorted(maps.Keys(numbers)) {
		entries, err := s.ledgerBucketPage(ctx, sku+"#"+strconv.Itoa(n), from)
		if err != nil {
			return nil, "", err
		}
		all = append(all, entries...)
	}
	slices.SortFunc(all, func(a, b inventory.LedgerEntry) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Key, b.Key))
	})
	if len(all) <= PageSize {
		return all, "", nil
	}
	all = all[:PageSize]
	last := all[len(all)-1]
	return all, encodeLedgerCursor(ledgerCursor{At: last.At.UnixMilli(), Key: last.Key}), nil
}

// ledgerBucketPage reads up to PageSize+1 entries of one LedgerByShard key after from.
func (s *BookStore) ledgerBucketPage(ctx context.Context, key string, from ledgerCursor) ([]inventory.LedgerEntry, error) {
	cond := expression.Key("ledgerShard").Equal(expression.Value(key)).And(expression.Key("at").GreaterThanEqual(expression.Value(from.At)))
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build ledger query: %w", err)
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.tables.StockLog), IndexName: aws.String(ShardIndex), Limit: aws.Int32(PageSize + 1),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var out []inventory.LedgerEntry
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

func (r ledgerRecord) entry() (inventory.LedgerEntry, error) {
	shards, err := shardsFromRecord(r.Shards)
	if err != nil {
		return inventory.LedgerEntry{}, fmt.Errorf("decode ledger entry %s: %w", r.PK, err)
	}
	epochs, err := shardsFromRecord(r.Epochs)
	if err != nil {
		return inventory.LedgerEntry{}, fmt.Errorf("decode ledger entry %s: %w", r.PK, err)
	}
	e := inventory.LedgerEntry{
		Key: r.PK, Ref: r.Ref, Op: r.Op, SKU: r.SKU, Qty: r.Qty, DAvailable: r.DAvailable, DOnHand: r.DOnHand,
		Shards: shards, At: time.UnixMilli(r.At).UTC(), Reason: r.Reason, By: r.By, Epochs: epochs,
	}
	if r.Shard != nil {
		e.Shard = *r.Shard
	}
	return e, nil
}

// LedgerSince yields every ledger entry the LedgerByShard index holds, on the shards
// named (SKU → shard numbers), with at after `after` and at or before `until`: one
// Query per shard, a page at a time (DynamoDB API Reference, Query). An entry is found
// under the lowest shard it moved, so shards must name every shard that moved since
// `after` (reconcile names those whose seq moved since their checkpoints). The index is
// eventually consistent, so entries written in the last moments may be missing;
// callers keep a margin (see package reconcile). read, when not nil, is told how many
// items each page returned.
func (s *BookStore) LedgerSince(ctx context.Context, shards map[string][]int, after, until time.Time, read func(items int)) iter.Seq2[inventory.LedgerEntry, error] {
	return func(yield func(inventory.LedgerEntry, error) bool) {
		for _, sku := range slices.Sorted(maps.Keys(shards)) {
			for _, n := range shards[sku] {
				key := expression.Key("ledgerShard").Equal(expression.Value(sku + "#" + strconv.Itoa(n))).
					And(expression.Key("at").Between(expression.Value(after.UnixMilli()+1), expression.Value(until.UnixMilli())))
				expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
				if err != nil {
					yield(inventory.LedgerEntry{}, fmt.Errorf("build ledger query: %w", err))
					return
				}
				pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
					TableName: aws.String(s.tables.StockLog), IndexName: aws.String(ShardIndex),
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
func (s *BookStore) LedgerAll(ctx context.Context, read func(items int)) iter.Seq2[inventory.LedgerEntry, error] {
	return func(yield func(inventory.LedgerEntry, error) bool) {
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
	// ShardKey is the LedgerByShard index's hash key (see ledgerShard).
	ShardKey string `dynamodbav:"ledgerShard"`
	// Epochs are the epochs of the shards (number → epoch) the entry moved, as they
	// were when it was written (see cut.go).
	Epochs map[string]int `dynamodbav:"epochs,omitempty"`
}

// Returned reads order's RETURN ledger entries, one key per line and refund (each
// refund's entries are keyed by inventory.RefundLedgerRef; the order id's keys are
// read even without a refund, so that a stray entry shows), strongly consistent, and
// returns their units by SKU (absent: none).
func (s *BookStore) Returned(ctx context.Context, order *inventory.Order) (map[string]int, error) {
	refs := []string{order.ID}
	for _, r := range order.Refunds {
		if ref := inventory.RefundLedgerRef(order.ID, r); ref != order.ID {
			refs = append(refs, ref)
		}
	}
	out := map[string]int{}
	for _, ref := range refs {
		for _, it := range order.Items {
			var e ledgerRecord
			key := ledgerKey(ref, inventory.OpReturn, it.SKU)
			if err := s.get(ctx, s.tables.StockLog, key, "ledger entry "+key, &e); err != nil {
				return nil, err
			}
			if e.Op == inventory.OpReturn {
				out[it.SKU] += e.Qty
			}
		}
	}
	return out, nil
}
