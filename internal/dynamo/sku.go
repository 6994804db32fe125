package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/stockguard/stockguard/internal/inventory"
)

// ErrSKUExists is returned by CreateSKU and EnsureSKU when a different SKU has the id
// (it is inventory.ErrSKUExists).
var ErrSKUExists = inventory.ErrSKUExists

// errGone: an item a write was conditioned on no longer exists.
var errGone = errors.New("item gone")

// CreateSKU is EnsureSKU that also refuses an identical SKU already there: it
// returns an error wrapping ErrSKUExists whenever the id is taken.
func (s *Store) CreateSKU(ctx context.Context, in inventory.NewSKU) error {
	created, err := s.EnsureSKU(ctx, in)
	if err == nil && !created {
		err = fmt.Errorf("create SKU %s: %w", in.ID, ErrSKUExists)
	}
	return err
}

// EnsureSKU writes the SKU record, its shard items (stock split by inventory.NewSKU.Split) and
// the initial ADJUST ledger entry (recording in.By) in one transaction, and reports
// true. When the SKU was already created by the same request (same fields; any shard
// count when in gives none, see madeBy), nothing is written and it reports false: that is what makes POST /admin/skus idempotent. It
// returns an error wrapping inventory.ErrInvalidRequest for fields outside the SKU
// bounds (inventory.NewSKU.Validate), ErrSKUExists when a different SKU has the id, and
// inventory.ErrBusy when DynamoDB stayed throttled or the outcome cannot be read back.
func (s *Store) EnsureSKU(ctx context.Context, in inventory.NewSKU) (bool, error) {
	sized := in.Shards == 0
	in = in.WithDefaults()
	if err := in.Validate(); err != nil {
		return false, err
	}
	hash, now := createHash(in), s.now()
	t := s.newTxn("create SKU " + in.ID)
	t.put(part{kind: partSKU, sku: in.ID}, s.tables.SKUs, skuRecord{
		PK: skuKey(in.ID), Kind: kindSKU, SKU: in.ID, Name: in.Name, Price: in.Price,
		Currency: inventory.Currency, OnSale: !in.OffSale, Shards: in.Shards, LimitPerUser: in.LimitPerUser,
		SaleStartsAt: unixMilli(in.SaleStartsAt), CreateHash: hash, UpdatedBy: in.By, UpdatedAt: now.UnixMilli(),
	}, nil)
	split := in.Split()
	for n := range in.Shards {
		t.newShard(shardRecord{
			PK: shardKey(in.ID, n), Kind: kindShard, SKU: in.ID, Shard: n,
			Available: split[n], OnHand: split[n], Price: in.Price, OnSale: !in.OffSale,
			SaleStartsAt: unixMilli(in.SaleStartsAt), ShardCount: in.Shards,
		})
	}
	ref := entryRef{key: in.Ref, ref: in.Ref, reason: "initial stock", at: now.UnixMilli(), by: in.By}
	t.ledger(0, newEntry(ref, inventory.OpAdjust, in.ID, in.Stock, split))
	out, err := s.send(ctx, t)
	s.catalog.forget(in.ID)
	switch {
	case err != nil:
		return false, err
	case out.applied:
		return true, nil
	case out.unknown != nil:
		rec, err := s.skuRecordOf(ctx, in.ID)
		if err != nil || !madeBy(rec, in, sized) {
			return false, fmt.Errorf("create SKU %s: outcome unknown after %v: %w", in.ID, out.unknown, inventory.ErrBusy)
		}
		return true, nil // ours, or an identical request's: the SKU is as asked
	}
	if rec, err := s.skuRecordOf(ctx, in.ID); err == nil && madeBy(rec, in, sized) {
		return false, nil // created before by the same request
	}
	return false, fmt.Errorf("create SKU %s: %v failed its condition: %w", in.ID, out.parts(), ErrSKUExists)
}

// madeBy reports whether rec was created by a request identical to in (defaults
// filled). When in was sized from its peak (sized: no shard count given), the shard
// count is left out of the comparison, since the sizing rule may have given another
// count when the SKU was created (or it was resharded since): the digest is one-way,
// so each count from 1 to inventory.MaxShards is tried.
func madeBy(rec *skuRecord, in inventory.NewSKU, sized bool) bool {
	switch {
	case rec == nil:
		return false
	case !sized:
		return rec.CreateHash == createHash(in)
	}
	for in.Shards = 1; in.Shards <= inventory.MaxShards; in.Shards++ {
		if rec.CreateHash == createHash(in) {
			return true
		}
	}
	return false
}

// createHash digests the fields of a create request (defaults filled) that make a
// SKU, so that a repeated request can be told from a different one.
func createHash(in inventory.NewSKU) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%q|%q|%d|%d|%d|%d|%t|%d|%q",
		in.ID, in.Name, in.Price, in.Stock, in.LimitPerUser, in.Shards, in.OffSale, unixMilli(in.SaleStartsAt), in.Ref))
	return hex.EncodeToString(sum[:])
}

// unixMilli is t in Unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMilli is the UTC time of Unix milliseconds ms, the zero time for 0.
func fromMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// SetOnSale puts a SKU on sale or takes it off sale (PatchSKU with OnSale only). It
// returns an error wrapping inventory.ErrSKUNotFound for an unknown SKU.
func (s *Store) SetOnSale(ctx context.Context, sku string, onSale bool) error {
	_, err := s.PatchSKU(ctx, sku, inventory.SKUPatch{OnSale: &onSale}, "")
	return err
}

func recordSKU(rec skuRecord, shards []shardRecord) *inventory.SKU {
	sku := &inventory.SKU{
		ID: rec.SKU, Name: rec.Name, Price: rec.Price, Currency: rec.Currency,
		OnSale: rec.OnSale, Shards: rec.Shards, LimitPerUser: rec.LimitPerUser,
		SaleStartsAt: fromMilli(rec.SaleStartsAt),
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
// is when buyers read the most. A SKU that has been resharded is read as SKUDetail
// reads it (the record, the shards, the record again, until no unit moved meanwhile),
// so that units in transit are never counted twice. It returns an error wrapping
// inventory.ErrSKUNotFound for an unknown id.
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
		if rec.Moves > 0 {
			return s.settledSKU(ctx, id) // resharded: units may be in transit between shards
		}
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
