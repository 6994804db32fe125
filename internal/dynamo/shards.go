package dynamo

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// shardRecords reads every shard item of the SKUs in counts (SKU id → shard count)
// with strongly consistent reads, refreshes the shard hints, and groups the items by SKU.
func (s *store) shardRecords(ctx context.Context, counts map[string]int) (map[string][]shardRecord, error) {
	return s.shardRecordsExcept(ctx, counts, nil)
}

// shardRecordsExcept is shardRecords less the shards skip lists per SKU (shard
// numbers), which it does not read.
func (s *store) shardRecordsExcept(ctx context.Context, counts map[string]int, skip map[string][]int) (map[string][]shardRecord, error) {
	var keys []string
	for sku, n := range counts {
		for i := range n {
			if !slices.Contains(skip[sku], i) {
				keys = append(keys, shardKey(sku, i))
			}
		}
	}
	out := make(map[string][]shardRecord, len(counts))
	if len(keys) == 0 {
		return out, nil
	}
	items, err := s.batchGet(ctx, s.tables.SKUs, keys)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		rec, err := s.shardRead(item)
		if err != nil {
			return nil, err
		}
		out[rec.SKU] = append(out[rec.SKU], rec)
	}
	return out, nil
}

// shardRead decodes a shard item read strongly consistently and notes what it shows:
// its available units (the shard hints) and its epoch.
func (s *store) shardRead(item map[string]types.AttributeValue) (shardRecord, error) {
	var rec shardRecord
	if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
		return shardRecord{}, fmt.Errorf("decode shard item: %w", err)
	}
	rec.UsedClaims = usedClaims(item)
	s.catalog.noteShard(rec.SKU, rec.Shard, rec.Available)
	s.epochs.note(rec.PK, rec.Epoch)
	return rec, nil
}

type shardRecord struct {
	PK        string `dynamodbav:"pk"`
	Kind      string `dynamodbav:"kind"`
	SKU       string `dynamodbav:"skuId"`
	Shard     int    `dynamodbav:"shard"`
	Available int    `dynamodbav:"available"`
	Reserved  int    `dynamodbav:"reserved"` // units held by PENDING orders: always onHand − available
	OnHand    int    `dynamodbav:"onHand"`
	Price     int64  `dynamodbav:"price"`
	OnSale    bool   `dynamodbav:"onSale"`
	// Copies of the SKU record's sale start (Unix ms, 0: none) and shard count, so the
	// reservation's condition reads them on the one item it updates.
	SaleStartsAt int64 `dynamodbav:"saleStartsAt,omitempty"`
	ShardCount   int   `dynamodbav:"shardCount,omitempty"`
	// Seq counts the ledger entries that ever moved the shard; Epoch is moved on only
	// by reconcile's cuts (see cut.go).
	Seq   int `dynamodbav:"seq"`
	Epoch int `dynamodbav:"epoch"`
	// Moves is the number of the last MOVE transaction that touched the shard (the SKU
	// record's move counter it set; 0: none since stamps began).
	Moves int `dynamodbav:"moves,omitempty"`
	// SoldOut marks a shard of a SKU in the sold-out state (soldout.go): a credit of
	// the shard first takes the SKU out of it.
	SoldOut bool `dynamodbav:"soldOut,omitempty"`
	// UsedClaims is the counters of admission claims used by orders
	// ("used<bucket>_<per>" attributes: usedClaims), read by shardRead; a Put of the
	// record drops them, which only makes the admitter admit less until those
	// admissions expire.
	UsedClaims map[inventory.UsedKey]int `dynamodbav:"-"`
}

// unmoved reports whether shards, read after rec (the SKU record a line was planned
// on), are every shard of rec's layout and no MOVE after rec touched any of them:
// then no unit was in transit between them while they were read, so their counts
// cannot have missed one (docs/design.md, "Sell-out", gives the proof). Every shard
// must carry the shard count (items from before the count was copied do not).
func unmoved(shards []shardRecord, rec skuRecord) bool {
	if len(shards) != rec.Shards {
		return false
	}
	for _, sh := range shards {
		if sh.ShardCount != rec.Shards || sh.Moves > rec.Moves {
			return false
		}
	}
	return true
}

// steadyShards reads sku's record, then every one of its shards, then the record
// again (all strongly consistent). When the record's move counter and shard count are
// the same both times it returns the shards and the record; otherwise a nil record
// (read again).
func (s *store) steadyShards(ctx context.Context, sku string) ([]shardRecord, *skuRecord, error) {
	before, err := s.skuRecordOf(ctx, sku)
	if err != nil {
		return nil, nil, err
	}
	shards, err := s.shardRecords(ctx, map[string]int{sku: before.Shards})
	if err != nil {
		return nil, nil, err
	}
	after, err := s.skuRecordOf(ctx, sku)
	if err != nil {
		return nil, nil, err
	}
	if after.Moves != before.Moves || after.Shards != before.Shards {
		return nil, nil, nil
	}
	return shards[sku], after, nil
}

// shardCounts lists a SKU's shard items by shard number.
func shardCounts(shards []shardRecord) map[int]shardRecord {
	out := make(map[int]shardRecord, len(shards))
	for _, sh := range shards {
		out[sh.Shard] = sh
	}
	return out
}
