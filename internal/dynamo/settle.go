package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/stockguard/stockguard/internal/inventory"
)

// settleRounds bounds how often a STOCK_OUT answer is re-checked while units are on
// the move between shards.
const settleRounds = 6

// settle confirms a STOCK_OUT that line i's allocation answered from shard reads
// taken one after the other. While a reshard moves units between shards, such reads
// can miss units in transit (read on their new shard before they arrive, on their old
// one after they left), so STOCK_OUT is only answered from reads of every shard that
// the SKU record's move counter brackets unchanged: no unit moved meanwhile, and the
// sum is the stock. Other errors, and nil, pass through.
func (r *reservation) settle(ctx context.Context, i int, err error) error {
	if !errors.Is(err, inventory.ErrStockOut) {
		return err
	}
	sku := r.lines[i].line.SKU
	for range settleRounds {
		shards, rec, err := r.s.settledShards(ctx, sku)
		if err != nil {
			return err
		}
		if rec == nil {
			continue // units moved while the shards were read
		}
		r.s.catalog.put(*rec, r.s.now())
		r.lines[i].rec = *rec
		return r.allocateFrom(i, shards)
	}
	return fmt.Errorf("reserve order %s: the shards of %s kept moving: %w", r.id, sku, inventory.ErrBusy)
}

// settledShards reads sku's record, then every one of its shards, then the record
// again (all strongly consistent). When the record's move counter and shard count are
// the same both times it returns the shards and the record; otherwise a nil record
// (read again).
func (s *Store) settledShards(ctx context.Context, sku string) ([]shardRecord, *skuRecord, error) {
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

// sortedShards lists the shard numbers of m in order.
func sortedShards(m map[int]shardRecord) []int { return slices.Sorted(maps.Keys(m)) }
