package dynamo

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
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
	hint    inventory.ShardStock // last seen available per shard, or inventory.UnknownStock
	// summary: the SKU's summary as read with rec by this very call of skuRecords
	// (never from the cache; nil when not read).
	summary *summaryRecord
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
		hint = make(inventory.ShardStock, rec.Shards)
		for i := range hint {
			hint[i] = inventory.UnknownStock
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
	hint := slices.Clone(e.hint)
	hint[shard] = available
	e.hint = hint
	c.entries[sku] = e
}

// source says where SKU records may come from.
type source int

const (
	cacheFirst source = iota // the catalog cache while its entries last
	tableOnly                // a strongly consistent read, the cache refreshed
)

// skuRecords returns the SKU records for ids, from the cache when from allows and it
// holds them, otherwise read with one strongly consistent BatchGetItem. Missing ids
// are absent from the map. With cacheFirst (a reservation's plan) the records read
// come with their SKUs' summary items in the same BatchGetItem (1 read unit more
// each, no round trip more): a sold-out SKU's entry says soldOut, and its shard hints
// are noted empty, so that an environment that never saw the SKU refuses its buyers
// without a transaction (docs/design.md, "Sell-out: one summary item").
func (s *store) skuRecords(ctx context.Context, ids []string, from source) (map[string]catalogEntry, error) {
	now := s.now()
	out := make(map[string]catalogEntry, len(ids))
	var missing []string
	for _, id := range ids {
		if e, ok := s.catalog.get(id, now); ok && from == cacheFirst {
			out[id] = e
			continue
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return out, nil
	}
	keys := make([]string, 0, 2*len(missing))
	for _, id := range missing {
		keys = append(keys, skuKey(id))
		if from == cacheFirst {
			keys = append(keys, summaryKey(id))
		}
	}
	items, err := s.batchGet(ctx, s.tables.SKUs, keys)
	if err != nil {
		return nil, err
	}
	sums := map[string]*summaryRecord{}
	for _, item := range items {
		var rec skuRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return nil, fmt.Errorf("decode SKU record: %w", err)
		}
		if rec.Kind == kindSummary {
			var sum summaryRecord
			if err := attributevalue.UnmarshalMap(item, &sum); err != nil {
				return nil, fmt.Errorf("decode the summary of %s: %w", rec.SKU, err)
			}
			sums[sum.SKU] = &sum
		}
		if rec.Kind != kindSKU || rec.Shards < 1 {
			continue
		}
		s.catalog.put(rec, now)
	}
	for _, id := range missing {
		sum := sums[id]
		if sum == nil && from == cacheFirst {
			sum = &summaryRecord{} // read, and not there: no credits, not sold out
		}
		if sum != nil && sum.SoldOut != nil {
			s.catalog.noteEmpty(id)
		}
		if e, ok := s.catalog.get(id, now); ok {
			e.summary = sum
			out[id] = e
		}
	}
	return out, nil
}

// noteEmpty records every shard of sku as holding no available unit (its summary
// says sold out).
func (c *catalog) noteEmpty(sku string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[sku]; ok {
		e.hint = make(inventory.ShardStock, len(e.hint))
		c.entries[sku] = e
	}
}
