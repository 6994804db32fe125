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
	rec skuRecord
	// fetched is when rec was known current: the time of a strongly consistent read,
	// or the zero time for an eventually consistent one (rec is then the record as it
	// was at some earlier moment, as a cached one is). readAt is when it was read,
	// which its TTL counts from.
	fetched, readAt time.Time
	hint            inventory.ShardStock // last seen available per shard, or inventory.UnknownStock
}

func newCatalog(ttl time.Duration) *catalog {
	return &catalog{ttl: ttl, entries: map[string]catalogEntry{}}
}

func (c *catalog) get(sku string, now time.Time) (catalogEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[sku]
	return e, ok && now.Sub(e.readAt) < c.ttl
}

// put keeps rec, read strongly consistent at now.
func (c *catalog) put(rec skuRecord, now time.Time) { c.keep(rec, now, true) }

// keep keeps rec, read at now, strongly consistent or not; the shards its record
// lists as marked are noted empty in the hints.
func (c *catalog) keep(rec skuRecord, now time.Time, consistent bool) {
	fetched := now
	if !consistent {
		fetched = time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hint := c.entries[rec.SKU].hint
	if len(hint) != rec.Shards {
		hint = make(inventory.ShardStock, rec.Shards)
		for i := range hint {
			hint[i] = inventory.UnknownStock
		}
	}
	if len(rec.Marked) > 0 {
		// The record's marked shards were empty when it was read: plans skip them.
		hint = slices.Clone(hint)
		for _, k := range rec.Marked {
			if k >= 0 && k < len(hint) {
				hint[k] = 0
			}
		}
	}
	c.entries[rec.SKU] = catalogEntry{rec: rec, fetched: fetched, readAt: now, hint: hint}
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
	cacheFirst source = iota // the catalog cache while its entries last, else an eventually consistent read
	tableOnly                // a strongly consistent read, the cache refreshed
)

// skuRecords returns the SKU records for ids, from the cache when from allows and it
// holds them. Those it reads: with tableOnly, one strongly consistent BatchGetItem;
// with cacheFirst, one eventually consistent BatchGetItem (half a read unit each, so
// a partition serves twice as many: the first order of each new createOrder
// environment reads the record of a hot SKU), then a strongly consistent one of the
// ids it did not find (a SKU created a moment ago may not show yet). A record read
// eventually consistent may be a moment old, as a cached one is, and is kept as one
// (catalogEntry.fetched zero): nothing that holds on a SKU record is decided from it
// (docs/design.md, "Sell-out": the transaction's conditions, a refusal re-read
// afresh, the shards' move stamps). Missing ids are absent from the map.
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
	consistent := from == tableOnly
	if err := s.readSKURecords(ctx, missing, consistent, out); err != nil {
		return nil, err
	}
	if !consistent {
		missing = slices.DeleteFunc(missing, func(id string) bool { _, ok := out[id]; return ok })
		if len(missing) > 0 {
			if err := s.readSKURecords(ctx, missing, true, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// readSKURecords reads the SKU records of ids with one BatchGetItem (strongly
// consistent or not) into out and the cache; ids without one are left out.
func (s *store) readSKURecords(ctx context.Context, ids []string, consistent bool, out map[string]catalogEntry) error {
	now := s.now()
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = skuKey(id)
	}
	items, err := s.batchGetRead(ctx, s.tables.SKUs, keys, consistent)
	if err != nil {
		return err
	}
	for _, item := range items {
		var rec skuRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode SKU record: %w", err)
		}
		if rec.Kind != kindSKU || rec.Shards < 1 {
			continue
		}
		s.catalog.keep(rec, now, consistent)
		e, _ := s.catalog.get(rec.SKU, now)
		out[rec.SKU] = e
	}
	return nil
}

// skuEntry is sku's record from the catalog cache (Options.CatalogTTL old at most).
// Errors: a *inventory.SKUError wrapping inventory.ErrSKUNotFound, inventory.ErrBusy.
func (s *store) skuEntry(ctx context.Context, sku string) (catalogEntry, error) {
	entries, err := s.skuRecords(ctx, []string{sku}, cacheFirst)
	if err != nil {
		return catalogEntry{}, err
	}
	e, ok := entries[sku]
	if !ok {
		return catalogEntry{}, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	return e, nil
}
