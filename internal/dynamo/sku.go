package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/stockguard/stockguard/internal/inventory"
)

// ErrSKUExists is returned by CreateSKU when the SKU id is taken.
var ErrSKUExists = errors.New("SKU already exists")

// errGone: an item a write was conditioned on no longer exists.
var errGone = errors.New("item gone")

// CreateSKU writes the SKU record, its shard items (stock split by inventory.NewSKU.Split) and
// the initial ADJUST ledger entry in one transaction; the SKU starts on sale. It
// returns an error wrapping inventory.ErrInvalidRequest for fields outside the SKU
// bounds (inventory.NewSKU.Validate) and ErrSKUExists when the id is taken.
func (s *Store) CreateSKU(ctx context.Context, in inventory.NewSKU) error {
	in = in.WithDefaults()
	if err := in.Validate(); err != nil {
		return err
	}
	t := s.newTxn("create SKU " + in.ID)
	t.put(part{kind: partSKU, sku: in.ID}, s.tables.SKUs, skuRecord{
		PK: skuKey(in.ID), Kind: kindSKU, SKU: in.ID, Name: in.Name, Price: in.Price,
		Currency: inventory.Currency, OnSale: true, Shards: in.Shards, LimitPerUser: in.LimitPerUser,
	}, nil)
	split := in.Split()
	for n := range in.Shards {
		t.put(part{kind: partShard, sku: in.ID, shard: n}, s.tables.SKUs, shardRecord{
			PK: shardKey(in.ID, n), Kind: kindShard, SKU: in.ID, Shard: n,
			Available: split[n], OnHand: split[n], Price: in.Price, OnSale: true,
		}, nil)
	}
	ref := entryRef{key: in.Ref, ref: in.Ref, reason: "initial stock", at: s.now().UnixMilli()}
	t.ledger(0, newEntry(ref, inventory.OpAdjust, in.ID, in.Stock, split))
	if err := s.apply(ctx, t, ErrSKUExists); err != nil {
		return err
	}
	s.catalog.forget(in.ID)
	return nil
}

// SetOnSale puts a SKU on sale or takes it off sale, on its record and every shard in
// one transaction, so reservations see the change at once. It returns an error
// wrapping inventory.ErrSKUNotFound for an unknown SKU.
func (s *Store) SetOnSale(ctx context.Context, sku string, onSale bool) error {
	entries, err := s.skuRecords(ctx, []string{sku}, true)
	if err != nil {
		return err
	}
	e, ok := entries[sku]
	if !ok {
		return &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	exists := expression.AttributeExists(expression.Name("pk"))
	set := expression.Set(expression.Name("onSale"), expression.Value(onSale))
	t := s.newTxn("set on-sale of " + sku)
	t.update(part{kind: partSKU, sku: sku}, s.tables.SKUs, skuKey(sku), set, exists)
	for n := range e.rec.Shards {
		t.update(part{kind: partShard, sku: sku, shard: n}, s.tables.SKUs, shardKey(sku, n), set, exists)
	}
	if err := s.apply(ctx, t, errGone); err != nil {
		return err
	}
	s.catalog.forget(sku)
	return nil
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
