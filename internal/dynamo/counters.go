package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What reconcile reads and writes besides the ledger: the counters of every SKU, the
// per-SKU checkpoints of ledger sums and the run watermark (both kept in the skus
// table: pk skuId#checkpoint and reconcile#watermark), the open orders, and REPAIR
// transactions.

const (
	kindCheckpoint = "CHECKPOINT"
	kindWatermark  = "WATERMARK"
	watermarkKey   = "reconcile#watermark"
)

// ErrMoved is returned by SaveCheckpoint, SaveWatermark and Repair when what they were
// conditioned on changed since it was read (another run, or live traffic): nothing
// was written.
var ErrMoved = errors.New("changed since read")

// ShardCounters are one shard item's counters, in units.
type ShardCounters struct {
	Available, Reserved, OnHand int
}

// ShardMark is where a shard stands in the ledger (see Cut): the ledger entries that
// ever moved it (Seq) and its current epoch.
type ShardMark struct {
	Seq, Epoch int
}

// SKUState is one SKU as a reconcile run finds it.
type SKUState struct {
	SKU        string                // SKU id
	Shards     map[int]ShardCounters // shard number → counters; missing shards are absent
	Marks      map[int]ShardMark     // shard number → its seq and epoch, read with the counters
	ShardCount int                   // shards the SKU record declares
	Checkpoint *Checkpoint           // nil before the SKU's first checkpoint
}

// Watermark is reconcile's progress: every ledger entry not yet summed in a checkpoint
// was written after Through (zero before the first run), and the last full re-check
// of the ledger ran at FullCheck (zero: never).
type Watermark struct {
	Through, FullCheck time.Time
}

// Stock reads every SKU's counters and checkpoint, and the watermark, with one
// strongly consistent Scan of the skus table: its size follows the catalogue, not the
// history. read, when not nil, is told each page's item count.
func (s *Store) Stock(ctx context.Context, read func(items int)) ([]SKUState, Watermark, error) {
	scan := stockScan{byID: map[string]*SKUState{}}
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.tables.SKUs), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, Watermark{}, s.storeError("scan stock", err)
		}
		if read != nil {
			read(len(page.Items))
		}
		for _, item := range page.Items {
			if err := scan.add(item); err != nil {
				return nil, Watermark{}, err
			}
		}
	}
	out := make([]SKUState, 0, len(scan.byID))
	for _, id := range slices.Sorted(maps.Keys(scan.byID)) {
		out = append(out, *scan.byID[id])
	}
	return out, scan.watermark, nil
}

// stockScan gathers the items of the skus table by SKU.
type stockScan struct {
	byID      map[string]*SKUState
	watermark Watermark
}

func (sc *stockScan) state(sku string) *SKUState {
	if sc.byID[sku] == nil {
		sc.byID[sku] = &SKUState{SKU: sku, Shards: map[int]ShardCounters{}, Marks: map[int]ShardMark{}}
	}
	return sc.byID[sku]
}

// add decodes one item of the skus table by its kind.
func (sc *stockScan) add(item map[string]types.AttributeValue) error {
	var probe struct {
		Kind string `dynamodbav:"kind"`
	}
	if err := attributevalue.UnmarshalMap(item, &probe); err != nil {
		return fmt.Errorf("decode stock item: %w", err)
	}
	switch probe.Kind {
	case kindSKU:
		var rec skuRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode SKU: %w", err)
		}
		sc.state(rec.SKU).ShardCount = rec.Shards
	case kindShard:
		var rec shardRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode shard: %w", err)
		}
		sc.state(rec.SKU).Shards[rec.Shard] = ShardCounters{Available: rec.Available, Reserved: rec.Reserved, OnHand: rec.OnHand}
		sc.state(rec.SKU).Marks[rec.Shard] = ShardMark{Seq: rec.Seq, Epoch: rec.Epoch}
	case kindCheckpoint:
		var rec checkpointRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode checkpoint: %w", err)
		}
		cp, err := rec.checkpoint()
		if err != nil {
			return err
		}
		sc.state(rec.SKU).Checkpoint = cp
	case kindWatermark:
		var rec watermarkRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode watermark: %w", err)
		}
		sc.watermark = Watermark{Through: time.UnixMilli(rec.Through).UTC()}
		if rec.FullCheck != 0 {
			sc.watermark.FullCheck = time.UnixMilli(rec.FullCheck).UTC()
		}
	}
	return nil
}
