package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
)

// MaxShards is the most stock shard items one SKU may be split into, so that one
// order line's shards plus the order fit in one transaction.
const MaxShards = 64

// MaxPrice is the highest unit price, in fen (¥10,000,000), so that no order amount
// (at most 20 lines × 9,999 units) can overflow.
const MaxPrice = 1_000_000_000

// ErrSKUExists is returned by CreateSKU when the SKU id is taken.
var ErrSKUExists = errors.New("SKU already exists")

// NewSKU describes a SKU to put on sale.
type NewSKU struct {
	ID           string // 1-64 of [0-9A-Za-z_.:-]
	Name         string // shown to buyers
	Price        int64  // fen, 1..MaxPrice
	Stock        int    // initial on-hand units, ≥ 0
	LimitPerUser int    // most units per user over all their orders, 0 = no limit
	Shards       int    // stock shard items, 1..MaxShards; 0 means 1
	Ref          string // adjustment id naming the initial ADJUST ledger entry; "" means "init"
}

// CreateSKU writes the SKU record, its shard items (stock split evenly, remainder on
// the lowest shards) and the initial ADJUST ledger entry in one transaction; the SKU
// starts on sale. It returns an error wrapping inventory.ErrInvalidRequest for bad
// fields and ErrSKUExists when the id is taken.
func (s *Store) CreateSKU(ctx context.Context, in NewSKU) error {
	if in.Shards == 0 {
		in.Shards = 1
	}
	if in.Ref == "" {
		in.Ref = "init"
	}
	switch {
	case !inventory.ValidSKUID(in.ID):
		return inventory.InvalidError("skuId %q must be 1-64 characters of [0-9A-Za-z_.:-]", in.ID)
	case in.Name == "":
		return inventory.InvalidError("SKU %s needs a name", in.ID)
	case in.Price < 1 || in.Price > MaxPrice:
		return inventory.InvalidError("SKU %s price must be 1 to %d fen", in.ID, int64(MaxPrice))
	case in.Stock < 0 || in.LimitPerUser < 0:
		return inventory.InvalidError("SKU %s stock and limitPerUser must not be negative", in.ID)
	case in.Shards < 1 || in.Shards > MaxShards:
		return inventory.InvalidError("SKU %s shards must be 1 to %d", in.ID, MaxShards)
	}
	rec := skuRecord{
		PK: skuKey(in.ID), Kind: kindSKU, SKU: in.ID, Name: in.Name, Price: in.Price,
		Currency: inventory.Currency, OnSale: true, Shards: in.Shards, LimitPerUser: in.LimitPerUser,
	}
	put, err := s.putNew(s.tables.SKUs, rec, nil)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{put}
	split := map[string]int{}
	for n := range in.Shards {
		units := in.Stock / in.Shards
		if n < in.Stock%in.Shards {
			units++
		}
		split[fmt.Sprint(n)] = units
		put, err := s.putNew(s.tables.SKUs, shardRecord{
			PK: shardKey(in.ID, n), Kind: kindShard, SKU: in.ID, Shard: n,
			Available: units, OnHand: units, Price: in.Price, OnSale: true,
		}, nil)
		if err != nil {
			return err
		}
		items = append(items, put)
	}
	entry := ledgerRecord{
		PK: ledgerKey(in.Ref, OpAdjust, in.ID), Ref: in.Ref, Op: OpAdjust, SKU: in.ID, Qty: in.Stock,
		DAvailable: in.Stock, DOnHand: in.Stock, Shards: split, At: s.now().UnixMilli(), Reason: "initial stock",
	}
	if put, err = s.putLedger(entry); err != nil {
		return err
	}
	items = append(items, put)
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && len(conditionFailures(tce, len(items))) > 0 {
		return fmt.Errorf("create SKU %s: %w", in.ID, ErrSKUExists)
	}
	if err != nil {
		return s.storeError("create SKU "+in.ID, err)
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
	keys := []string{skuKey(sku)}
	for n := range e.rec.Shards {
		keys = append(keys, shardKey(sku, n))
	}
	items := make([]types.TransactWriteItem, 0, len(keys))
	for _, k := range keys {
		upd, err := update(s.tables.SKUs, k, set, exists)
		if err != nil {
			return err
		}
		items = append(items, upd)
	}
	if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
		return s.storeError("set on-sale of "+sku, err)
	}
	s.catalog.forget(sku)
	return nil
}
