package dynamo

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
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

// Sums are ledger sums for one shard, in units.
type Sums struct {
	Available, OnHand int
}

// Checkpoint holds one SKU's ledger sums over every entry written at or before Through.
type Checkpoint struct {
	SKU       string       // SKU id
	Through   time.Time    // entries at or before this instant are summed in
	Shards    map[int]Sums // per shard: Σ available and on-hand deltas
	Adjusted  int          // Σ ADJUST on-hand deltas (units ever stocked, net)
	Committed int          // Σ COMMIT units
	Returned  int          // Σ RETURN units
}

// SKUState is one SKU as a reconcile run finds it.
type SKUState struct {
	SKU        string                // SKU id
	Shards     map[int]ShardCounters // shard number → counters; missing shards are absent
	ShardCount int                   // shards the SKU record declares
	Checkpoint *Checkpoint           // nil before the SKU's first checkpoint
}

// checkpointRecord keeps the per-shard sums as two maps of numbers (shard → units).
type checkpointRecord struct {
	PK        string         `dynamodbav:"pk"`
	Kind      string         `dynamodbav:"kind"`
	SKU       string         `dynamodbav:"skuId"`
	Through   int64          `dynamodbav:"through"` // Unix milliseconds
	Available map[string]int `dynamodbav:"available,omitempty"`
	OnHand    map[string]int `dynamodbav:"onHand,omitempty"`
	Adjusted  int            `dynamodbav:"adjusted"`
	Committed int            `dynamodbav:"committed"`
	Returned  int            `dynamodbav:"returned"`
}

// Stock reads every SKU's counters and checkpoint, and the watermark (zero before the
// first run), with one strongly consistent Scan of the skus table: its size follows the
// catalogue, not the history. read, when not nil, is told each page's item count.
func (s *Store) Stock(ctx context.Context, read func(items int)) ([]SKUState, time.Time, error) {
	byID := map[string]*SKUState{}
	state := func(sku string) *SKUState {
		if byID[sku] == nil {
			byID[sku] = &SKUState{SKU: sku, Shards: map[int]ShardCounters{}}
		}
		return byID[sku]
	}
	var watermark time.Time
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.tables.SKUs), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, time.Time{}, s.storeError("scan stock", err)
		}
		if read != nil {
			read(len(page.Items))
		}
		for _, item := range page.Items {
			var probe struct {
				Kind string `dynamodbav:"kind"`
			}
			if err := attributevalue.UnmarshalMap(item, &probe); err != nil {
				return nil, time.Time{}, fmt.Errorf("decode stock item: %w", err)
			}
			switch probe.Kind {
			case kindSKU:
				var rec skuRecord
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					return nil, time.Time{}, fmt.Errorf("decode SKU: %w", err)
				}
				state(rec.SKU).ShardCount = rec.Shards
			case kindShard:
				var rec shardRecord
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					return nil, time.Time{}, fmt.Errorf("decode shard: %w", err)
				}
				state(rec.SKU).Shards[rec.Shard] = ShardCounters{Available: rec.Available, Reserved: rec.Reserved, OnHand: rec.OnHand}
			case kindCheckpoint:
				var rec checkpointRecord
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					return nil, time.Time{}, fmt.Errorf("decode checkpoint: %w", err)
				}
				cp := &Checkpoint{SKU: rec.SKU, Through: time.UnixMilli(rec.Through).UTC(), Shards: map[int]Sums{},
					Adjusted: rec.Adjusted, Committed: rec.Committed, Returned: rec.Returned}
				for field, m := range map[string]map[string]int{"available": rec.Available, "onHand": rec.OnHand} {
					for k, v := range m {
						n, err := strconv.Atoi(k)
						if err != nil {
							return nil, time.Time{}, fmt.Errorf("decode checkpoint of %s: shard %q", rec.SKU, k)
						}
						sums := cp.Shards[n]
						if field == "available" {
							sums.Available = v
						} else {
							sums.OnHand = v
						}
						cp.Shards[n] = sums
					}
				}
				state(rec.SKU).Checkpoint = cp
			case kindWatermark:
				var rec struct {
					Through int64 `dynamodbav:"through"`
				}
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					return nil, time.Time{}, fmt.Errorf("decode watermark: %w", err)
				}
				watermark = time.UnixMilli(rec.Through).UTC()
			}
		}
	}
	out := make([]SKUState, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, *byID[id])
	}
	return out, watermark, nil
}

// SaveCheckpoint writes cp, conditioned on the stored checkpoint still being the one
// read (through = prev; absent when prev is zero). It returns an error wrapping ErrMoved
// when another run moved it first.
func (s *Store) SaveCheckpoint(ctx context.Context, cp Checkpoint, prev time.Time) error {
	rec := checkpointRecord{
		PK: cp.SKU + "#checkpoint", Kind: kindCheckpoint, SKU: cp.SKU, Through: cp.Through.UnixMilli(),
		Adjusted: cp.Adjusted, Committed: cp.Committed, Returned: cp.Returned,
	}
	if len(cp.Shards) > 0 { // an empty map is left out: minidyn mangles empty maps
		rec.Available, rec.OnHand = map[string]int{}, map[string]int{}
	}
	for n, sums := range cp.Shards {
		rec.Available[strconv.Itoa(n)], rec.OnHand[strconv.Itoa(n)] = sums.Available, sums.OnHand
	}
	return s.putIf(ctx, "checkpoint of "+cp.SKU, rec, prev)
}

// SaveWatermark records that every SKU's checkpoint covers the entries written at or
// before through, conditioned like SaveCheckpoint on the watermark read (prev).
func (s *Store) SaveWatermark(ctx context.Context, through, prev time.Time) error {
	rec := struct {
		PK      string `dynamodbav:"pk"`
		Kind    string `dynamodbav:"kind"`
		Through int64  `dynamodbav:"through"`
	}{watermarkKey, kindWatermark, through.UnixMilli()}
	return s.putIf(ctx, "watermark", rec, prev)
}

// putIf puts rec into the skus table if the item's through is still prev (absent when
// prev is zero).
func (s *Store) putIf(ctx context.Context, what string, rec any, prev time.Time) error {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	cond := expression.AttributeNotExists(expression.Name("pk"))
	if !prev.IsZero() {
		cond = expression.Name("through").Equal(expression.Value(prev.UnixMilli()))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build %s condition: %w", what, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.tables.SKUs), Item: item, ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("save %s: %w", what, ErrMoved)
	}
	if err != nil {
		return s.storeError("save "+what, err)
	}
	return nil
}

// OpenOrder is a PENDING order as the PendingByExpiry index shows it.
type OpenOrder struct {
	ID        string                // order id
	UserID    string                // owner
	ExpiresAt time.Time             // end of its payment window
	Items     []inventory.OrderItem // SKU, Qty and Shards (no prices)
}

// OpenOrders yields every order the PendingByExpiry index shows as PENDING, bucket by
// bucket, a page at a time: their number follows open orders, not history. The index
// is eventually consistent: an order paid or released a moment ago may still show.
func (s *Store) OpenOrders(ctx context.Context, read func(items int)) iter.Seq2[OpenOrder, error] {
	return func(yield func(OpenOrder, error) bool) {
		for b := range PendingBuckets {
			expr, err := expression.NewBuilder().
				WithKeyCondition(expression.Key("pendingBucket").Equal(expression.Value("P" + strconv.Itoa(b)))).
				WithFilter(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending)))).Build()
			if err != nil {
				yield(OpenOrder{}, fmt.Errorf("build open-order query: %w", err))
				return
			}
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName: aws.String(s.tables.Orders), IndexName: aws.String(PendingIndex),
				KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			})
			for pages.HasMorePages() {
				page, err := pages.NextPage(ctx)
				if err != nil {
					yield(OpenOrder{}, s.storeError("query open orders", err))
					return
				}
				if read != nil { // what a Query pays for: the items read before the filter
					read(max(int(page.ScannedCount), len(page.Items)))
				}
				for _, item := range page.Items {
					var rec orderRecord
					if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
						yield(OpenOrder{}, fmt.Errorf("decode open order: %w", err))
						return
					}
					o := OpenOrder{ID: rec.PK, UserID: rec.UserID, ExpiresAt: time.UnixMilli(rec.PendingExpiresAt).UTC()}
					for _, it := range rec.Items {
						shards, err := shardsFromRecord(it.Shards)
						if err != nil {
							yield(OpenOrder{}, fmt.Errorf("decode open order %s: %w", rec.PK, err))
							return
						}
						o.Items = append(o.Items, inventory.OrderItem{SKU: it.SKU, Qty: it.Qty, Shards: shards, Limited: it.Limited})
					}
					if !yield(o, nil) {
						return
					}
				}
			}
		}
	}
}

// ShardFix is one shard's repair: the counters as read (the condition), the counters
// to set, and the ledger deltas of its REPAIR entry.
type ShardFix struct {
	Shard int           // shard number
	Seen  ShardCounters // counters as read; the repair applies only if they still hold
	// Available and OnHand are the counters to set (reserved becomes OnHand −
	// Available); equal to Seen when only the ledger is fixed.
	Available, OnHand int
	// LedgerAvailable and LedgerOnHand are the REPAIR entry's deltas, which count in
	// the ledger sums (non-zero when the ledger, not the counters, was wrong).
	LedgerAvailable, LedgerOnHand int
}

// Repair applies fixes to one SKU's shards in one TransactWriteItems: per shard a
// REPAIR ledger entry (ref run, keyed run#REPAIR#sku#shard, recording the counter
// change in fixAvailable/fixOnHand and its ledger deltas in dAvailable/dOnHand), and
// an update setting the counters, conditioned on available, onHand and reserved still
// holding the values read — never a blind SET. Errors: ErrMoved when a counter moved
// (nothing written), ErrBusy, or another store error.
func (s *Store) Repair(ctx context.Context, run, sku, reason string, fixes []ShardFix) error {
	t := &transition{verb: "repair", orderID: sku}
	now := s.now()
	avail, onHand, reserved := expression.Name("available"), expression.Name("onHand"), expression.Name("reserved")
	for _, f := range fixes {
		cond := avail.Equal(expression.Value(f.Seen.Available)).
			And(onHand.Equal(expression.Value(f.Seen.OnHand))).
			And(reserved.Equal(expression.Value(f.Seen.Reserved)))
		upd := expression.Set(avail, expression.Value(f.Available)).
			Set(onHand, expression.Value(f.OnHand)).
			Set(reserved, expression.Value(f.OnHand-f.Available))
		t.shard(s, sku, f.Shard, upd, cond)
		shard := f.Shard
		t.ledger(s, ledgerRecord{
			PK: ledgerKey(run, OpRepair, sku+"#"+strconv.Itoa(f.Shard)), Ref: run, Op: OpRepair, SKU: sku,
			DAvailable: f.LedgerAvailable, DOnHand: f.LedgerOnHand, Shard: &shard,
			FixAvailable: f.Available - f.Seen.Available, FixOnHand: f.OnHand - f.Seen.OnHand,
			At: now.UnixMilli(), Reason: reason,
		})
	}
	if t.err != nil {
		return t.err
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
	var tce *types.TransactionCanceledException
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tce) && len(conditionFailures(tce, len(t.items))) > 0:
		return fmt.Errorf("repair %s: %w", sku, ErrMoved)
	default:
		return s.storeError("repair "+sku, err)
	}
}
