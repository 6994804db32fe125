package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
)

// catalog caches SKU records (price, shard count, limit) for a short TTL, and keeps a
// hint of each shard's last seen available count so a sharded SKU's first try goes to
// shards that had stock. Neither decides an outcome: the transaction's conditions do.
type catalog struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]catalogEntry
}

type catalogEntry struct {
	rec     skuRecord
	fetched time.Time
	hint    []int // last seen available per shard, -1 = unknown
}

func newCatalog(ttl time.Duration) *catalog {
	return &catalog{ttl: ttl, entries: map[string]catalogEntry{}}
}

func (c *catalog) get(sku string, now time.Time) (catalogEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[sku]
	return e, ok && now.Sub(e.fetched) < c.ttl
}

func (c *catalog) put(rec skuRecord, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hint := c.entries[rec.SKU].hint
	if len(hint) != rec.Shards {
		hint = make([]int, rec.Shards)
		for i := range hint {
			hint[i] = -1
		}
	}
	c.entries[rec.SKU] = catalogEntry{rec: rec, fetched: now, hint: hint}
}

func (c *catalog) forget(sku string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, sku)
}

// noteShard records a shard's available count seen in a read or a failed condition.
func (c *catalog) noteShard(sku string, shard, available int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[sku]
	if !ok || shard < 0 || shard >= len(e.hint) {
		return
	}
	hint := append([]int(nil), e.hint...)
	hint[shard] = available
	e.hint = hint
	c.entries[sku] = e
}

// skuRecords returns the SKU records for ids, from the cache when fresh and otherwise
// read with one strongly consistent BatchGetItem. Missing ids are absent from the map.
func (s *Store) skuRecords(ctx context.Context, ids []string, fresh bool) (map[string]catalogEntry, error) {
	now := s.now()
	out := make(map[string]catalogEntry, len(ids))
	var missing []string
	for _, id := range ids {
		if e, ok := s.catalog.get(id, now); ok && !fresh {
			out[id] = e
			continue
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return out, nil
	}
	keys := make([]string, len(missing))
	for i, id := range missing {
		keys[i] = skuKey(id)
	}
	items, err := s.batchGet(ctx, s.tables.SKUs, keys)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		var rec skuRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return nil, fmt.Errorf("decode SKU record: %w", err)
		}
		if rec.Kind != kindSKU || rec.Shards < 1 {
			continue
		}
		s.catalog.put(rec, now)
		e, _ := s.catalog.get(rec.SKU, now)
		out[rec.SKU] = e
	}
	return out, nil
}

// shardRecords reads every shard item of the SKUs in counts (SKU id → shard count)
// with strongly consistent reads, refreshes the shard hints, and groups the items by SKU.
func (s *Store) shardRecords(ctx context.Context, counts map[string]int) (map[string][]shardRecord, error) {
	var keys []string
	for sku, n := range counts {
		for i := range n {
			keys = append(keys, shardKey(sku, i))
		}
	}
	items, err := s.batchGet(ctx, s.tables.SKUs, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]shardRecord, len(counts))
	for _, item := range items {
		var rec shardRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return nil, fmt.Errorf("decode shard item: %w", err)
		}
		s.catalog.noteShard(rec.SKU, rec.Shard, rec.Available)
		out[rec.SKU] = append(out[rec.SKU], rec)
	}
	return out, nil
}

// maxBatchGetRounds bounds how often batchGet re-asks for UnprocessedKeys (the
// BatchGetItem API returns them under throttling; DynamoDB API Reference,
// BatchGetItem).
const maxBatchGetRounds = 4

// maxBatchGetKeys is BatchGetItem's limit on keys per request (DynamoDB API Reference,
// BatchGetItem: "up to 100 items").
const maxBatchGetKeys = 100

// batchGet reads items by pk with ConsistentRead, 100 keys per BatchGetItem, re-asking
// for unprocessed keys a bounded number of times; it fails with an error wrapping
// inventory.ErrBusy when keys stay unprocessed.
func (s *Store) batchGet(ctx context.Context, table string, keys []string) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for chunk := range slices.Chunk(keys, maxBatchGetKeys) {
		items, err := s.batchGetChunk(ctx, table, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (s *Store) batchGetChunk(ctx context.Context, table string, keys []string) ([]map[string]types.AttributeValue, error) {
	req := types.KeysAndAttributes{ConsistentRead: aws.Bool(true)}
	for _, k := range keys {
		req.Keys = append(req.Keys, pkOf(k))
	}
	var out []map[string]types.AttributeValue
	for round := 0; round < maxBatchGetRounds && len(req.Keys) > 0; round++ {
		if round > 0 {
			if err := sleep(ctx, round); err != nil {
				return nil, err
			}
		}
		resp, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: req}})
		if err != nil {
			return nil, s.storeError("batch get", err)
		}
		out = append(out, resp.Responses[table]...)
		req.Keys = resp.UnprocessedKeys[table].Keys
	}
	if len(req.Keys) > 0 {
		return nil, fmt.Errorf("batch get: %d keys unprocessed: %w", len(req.Keys), inventory.ErrBusy)
	}
	return out, nil
}

// storeError wraps a failed read with context, marking it inventory.ErrBusy when
// DynamoDB was throttled, conflicted or unavailable (a server fault or no answer at
// all after the SDK's retries): nothing was written, so the caller may answer "busy,
// retry". Client faults stay plain errors: they are bugs.
func (s *Store) storeError(op string, err error) error {
	if ferr := definiteFailure(op, err); ferr != nil {
		return ferr // busy when throttled or conflicted; a plain error for other 4xx
	}
	return fmt.Errorf("%s: %w (%w)", op, inventory.ErrBusy, err)
}

// allocate splits qty over shards given each shard's available count (-1 = unknown,
// taken as enough). When shards can cover the whole line alone, one of them is picked
// at random. Otherwise the line is split: over shards in random order, so that
// concurrent buyers rarely aim at the same units, or, with fewest, over the fullest
// shards first, so that it needs as few shards (transaction actions) as possible. It
// reports false when the counts cannot cover qty.
func allocate(qty int, avail []int, fewest bool) (map[int]int, bool) {
	var whole []int
	for n, have := range avail {
		if have < 0 || have >= qty {
			whole = append(whole, n)
		}
	}
	if len(whole) > 0 {
		return map[int]int{whole[rand.IntN(len(whole))]: qty}, true
	}
	order := rand.Perm(len(avail))
	if fewest {
		slices.SortStableFunc(order, func(a, b int) int { return avail[b] - avail[a] })
	}
	alloc := map[int]int{}
	left := qty
	for _, n := range order {
		if take := min(avail[n], left); take > 0 {
			alloc[n] = take
			left -= take
		}
	}
	return alloc, left == 0
}

func recordSKU(rec skuRecord, shards []shardRecord) *inventory.SKU {
	sku := &inventory.SKU{
		ID: rec.SKU, Name: rec.Name, Price: rec.Price, Currency: rec.Currency,
		OnSale: rec.OnSale, Shards: rec.Shards, LimitPerUser: rec.LimitPerUser,
	}
	for _, sh := range shards {
		sku.OnHand += sh.OnHand
		sku.Available += sh.Available
	}
	return sku
}

// SKU returns the SKU with its stock summed over its shards, read with one strongly
// consistent BatchGetItem of the SKU record and its shard items (the shard count comes
// from the catalog cache and is re-read if it changed). With one shard the count is
// exact at the read. With N shards it is the sum of N exact reads taken one after the
// other: while stock only falls during the read (reservations), the sum is never above
// the true count at the read's start; a release landing on a shard between the reads
// can be counted a moment early. A serializable TransactGetItems would be exact but
// fails against every in-flight reservation of a hot SKU (TransactionConflict), which
// is when buyers read the most. It returns an error wrapping inventory.ErrSKUNotFound
// for an unknown id.
func (s *Store) SKU(ctx context.Context, id string) (*inventory.SKU, error) {
	for range 2 {
		shards := 1
		if e, ok := s.catalog.get(id, s.now()); ok {
			shards = e.rec.Shards
		}
		keys := []string{skuKey(id)}
		for i := range shards {
			keys = append(keys, shardKey(id, i))
		}
		items, err := s.batchGet(ctx, s.tables.SKUs, keys)
		if err != nil {
			return nil, err
		}
		var rec skuRecord
		var shardRecs []shardRecord
		found := false
		for _, item := range items {
			var probe struct {
				Kind string `dynamodbav:"kind"`
			}
			if err := attributevalue.UnmarshalMap(item, &probe); err != nil {
				return nil, fmt.Errorf("decode SKU %s: %w", id, err)
			}
			switch probe.Kind {
			case kindSKU:
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					return nil, fmt.Errorf("decode SKU %s: %w", id, err)
				}
				found = true
			case kindShard:
				var sh shardRecord
				if err := attributevalue.UnmarshalMap(item, &sh); err != nil {
					return nil, fmt.Errorf("decode SKU %s: %w", id, err)
				}
				shardRecs = append(shardRecs, sh)
			}
		}
		if !found {
			return nil, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: id}
		}
		s.catalog.put(rec, s.now())
		if rec.Shards != shards {
			continue // the shard count changed since it was cached: read again
		}
		for _, sh := range shardRecs {
			s.catalog.noteShard(id, sh.Shard, sh.Available)
		}
		return recordSKU(rec, shardRecs), nil
	}
	return nil, fmt.Errorf("read SKU %s: shard count keeps changing: %w", id, inventory.ErrBusy)
}
