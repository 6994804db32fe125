package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/inventory"
)

// layoutRounds bounds how often an operator's write is tried again when the SKU's
// shards changed under it (a reshard, a buyer taking the units it counted on).
const layoutRounds = 8

// PatchSKU applies p to the SKU record and copies price, on-sale and sale start onto
// every shard item, in one transaction conditioned on the shard count it read, so
// reservations see the change at once; the record keeps by (the caller's principal)
// and the time. Orders already placed keep their prices. It returns the SKU as it is
// then, and errors wrapping inventory.ErrInvalidRequest (SKUPatch.Validate),
// inventory.ErrSKUNotFound, or inventory.ErrBusy (the shards kept changing, or
// DynamoDB stayed throttled).
func (s *Store) PatchSKU(ctx context.Context, sku string, p inventory.SKUPatch, by string) (*inventory.SKU, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	for range layoutRounds {
		rec, err := s.skuRecordOf(ctx, sku)
		if err != nil {
			return nil, err
		}
		t := s.newTxn("update SKU " + sku)
		recUpd, shardUpd, touchShards := patchUpdates(p, by, s.now().UnixMilli())
		count := expression.Name("shards").Equal(expression.Value(rec.Shards))
		t.update(part{kind: partSKU, sku: sku}, s.tables.SKUs, skuKey(sku), recUpd, count)
		if touchShards {
			for n := range rec.Shards {
				t.update(part{kind: partShard, sku: sku, shard: n}, s.tables.SKUs, shardKey(sku, n), shardUpd, expression.AttributeExists(expression.Name("pk")))
			}
		}
		err = s.apply(ctx, t, errGone)
		s.catalog.forget(sku)
		if errors.Is(err, errGone) {
			continue // the shard count changed meanwhile: read it again
		}
		if err != nil {
			return nil, err
		}
		return s.SKU(ctx, sku)
	}
	return nil, fmt.Errorf("update SKU %s: shards kept changing: %w", sku, inventory.ErrBusy)
}

// patchUpdates builds the update of the SKU record and of its shard items for p, and
// reports whether the shards need it (price, on-sale or sale start change).
func patchUpdates(p inventory.SKUPatch, by string, at int64) (rec, shard expression.UpdateBuilder, touchShards bool) {
	rec = expression.Set(expression.Name("updatedAt"), expression.Value(at))
	if by != "" {
		rec = rec.Set(expression.Name("updatedBy"), expression.Value(by))
	}
	both := func(name string, v any) {
		rec = rec.Set(expression.Name(name), expression.Value(v))
		shard = shard.Set(expression.Name(name), expression.Value(v))
		touchShards = true
	}
	if p.Name != nil {
		rec = rec.Set(expression.Name("name"), expression.Value(*p.Name))
	}
	if p.LimitPerUser != nil {
		rec = rec.Set(expression.Name("limitPerUser"), expression.Value(*p.LimitPerUser))
	}
	if p.Price != nil {
		both("price", *p.Price)
	}
	if p.OnSale != nil {
		both("onSale", *p.OnSale)
	}
	if p.SaleStartsAt != nil {
		both("saleStartsAt", unixMilli(*p.SaleStartsAt)) // 0: no start time
	}
	return rec, shard, touchShards
}

// skuRecordOf reads the SKU record of sku (strongly consistent). It returns an error
// wrapping inventory.ErrSKUNotFound when there is none.
func (s *Store) skuRecordOf(ctx context.Context, sku string) (*skuRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(skuKey(sku)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, s.storeError("read SKU "+sku, err)
	}
	var rec skuRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return nil, fmt.Errorf("decode SKU %s: %w", sku, err)
	}
	if rec.Kind != kindSKU || rec.Shards < 1 {
		return nil, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	return &rec, nil
}
