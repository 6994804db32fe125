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

// The books as reconcile reads and writes them: the counters of every SKU, the
// per-SKU checkpoints of ledger sums and the run watermark (both kept in the skus
// table: pk skuId#checkpoint and reconcile#watermark), the ledger entries (all of
// them, or those written since a time through the LedgerByTime index), and REPAIR
// transactions. The open orders are read in pending.go.

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

// SKUState is one SKU as a reconcile run finds it.
type SKUState struct {
	SKU        string                // SKU id
	Shards     map[int]ShardCounters // shard number → counters; missing shards are absent
	ShardCount int                   // shards the SKU record declares
	Checkpoint *Checkpoint           // nil before the SKU's first checkpoint
}

// Stock reads every SKU's counters and checkpoint, and the watermark (zero before the
// first run), with one strongly consistent Scan of the skus table: its size follows the
// catalogue, not the history. read, when not nil, is told each page's item count.
func (s *Store) Stock(ctx context.Context, read func(items int)) ([]SKUState, time.Time, error) {
	scan := stockScan{byID: map[string]*SKUState{}}
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
			if err := scan.add(item); err != nil {
				return nil, time.Time{}, err
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
	watermark time.Time
}

func (sc *stockScan) state(sku string) *SKUState {
	if sc.byID[sku] == nil {
		sc.byID[sku] = &SKUState{SKU: sku, Shards: map[int]ShardCounters{}}
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
		var rec struct {
			Through int64 `dynamodbav:"through"`
		}
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode watermark: %w", err)
		}
		sc.watermark = time.UnixMilli(rec.Through).UTC()
	}
	return nil
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

// checkpoint decodes the record.
func (rec checkpointRecord) checkpoint() (*Checkpoint, error) {
	cp := &Checkpoint{SKU: rec.SKU, Through: time.UnixMilli(rec.Through).UTC(), Shards: map[int]Sums{},
		Adjusted: rec.Adjusted, Committed: rec.Committed, Returned: rec.Returned}
	available, err := shardsFromRecord(rec.Available)
	if err != nil {
		return nil, fmt.Errorf("decode checkpoint of %s: %w", rec.SKU, err)
	}
	onHand, err := shardsFromRecord(rec.OnHand)
	if err != nil {
		return nil, fmt.Errorf("decode checkpoint of %s: %w", rec.SKU, err)
	}
	for n, v := range available {
		cp.Shards[n] = Sums{Available: v, OnHand: cp.Shards[n].OnHand}
	}
	for n, v := range onHand {
		cp.Shards[n] = Sums{Available: cp.Shards[n].Available, OnHand: v}
	}
	return cp, nil
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

// LedgerIndex is the GSI of the stock_log table that finds entries by when they were
// written: hash key ledgerBucket, "<UTC hour>#<k>" (e.g. "2026-11-11T00#7", k =
// 0..LedgerBuckets-1 from a hash of the entry's key), range key at (Unix
// milliseconds). Reading the entries written since a time costs one Query per bucket
// per hour since then (the range key skips the older entries of the first hour), plus
// the entries themselves: it follows activity, not history. The k spreads an hour's
// writes over LedgerBuckets index partitions, so a flash sale's ledger writes do not
// throttle one partition (DynamoDB Developer Guide, "Partitions and data
// distribution"; a throttled GSI throttles its table's writes).
const LedgerIndex = "LedgerByTime"

// LedgerBuckets is how many index partitions one hour's ledger entries spread over.
const LedgerBuckets = 16

const hourLayout = "2006-01-02T15"

// ledgerBucket is the LedgerByTime hash key of the entry with key pk written at at.
func ledgerBucket(pk string, at time.Time) string {
	return at.UTC().Format(hourLayout) + "#" + bucket(pk, LedgerBuckets)
}

// LedgerEntry is one stock_log entry as reconcile reads it. Quantities are units.
type LedgerEntry struct {
	Key        string      // the entry's key: ref#op#skuId (REPAIR: ref#REPAIR#skuId#shard)
	Ref        string      // order id, adjustment id or repair run id
	Op         string      // OpReserve, OpRelease, OpCommit, OpReturn, OpAdjust, OpRepair
	SKU        string      // SKU id
	Qty        int         // units of the line (REPAIR: 0)
	DAvailable int         // change to the SKU's available units
	DOnHand    int         // change to the SKU's on-hand units
	Shards     map[int]int // shard → units of Qty on it (REPAIR: nil, see Shard)
	Shard      int         // REPAIR only: the one shard DAvailable and DOnHand apply to
	At         time.Time   // when the entry was written (writer's clock, ms)
	Reason     string      // ADJUST, MOVE and REPAIR entries: why
	By         string      // operator entries: the caller's IAM principal ARN
}

// ShardDeltas returns the entry's change to each shard's available and on-hand
// units: a REPAIR entry's signed deltas on its one shard, any other entry's units on
// each of its shards in the direction of its deltas.
func (e LedgerEntry) ShardDeltas() map[int]Sums {
	if e.Op == OpRepair {
		return map[int]Sums{e.Shard: {Available: e.DAvailable, OnHand: e.DOnHand}}
	}
	out := make(map[int]Sums, len(e.Shards))
	for n, units := range e.Shards {
		out[n] = Sums{Available: units * sign(e.DAvailable), OnHand: units * sign(e.DOnHand)}
	}
	return out
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}

func (r ledgerRecord) entry() (LedgerEntry, error) {
	shards, err := shardsFromRecord(r.Shards)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("decode ledger entry %s: %w", r.PK, err)
	}
	e := LedgerEntry{
		Key: r.PK, Ref: r.Ref, Op: r.Op, SKU: r.SKU, Qty: r.Qty, DAvailable: r.DAvailable, DOnHand: r.DOnHand,
		Shards: shards, At: time.UnixMilli(r.At).UTC(), Reason: r.Reason, By: r.By,
	}
	if r.Shard != nil {
		e.Shard = *r.Shard
	}
	return e, nil
}

// LedgerSince yields every ledger entry the LedgerByTime index holds with at after
// `after` and at or before `until`: one Query per bucket per hour in between, a page at
// a time (DynamoDB API Reference, Query). The index is eventually consistent, so
// entries written in the last moments may be missing; callers keep a margin (see
// package reconcile). read, when not nil, is told how many items each page returned.
func (s *Store) LedgerSince(ctx context.Context, after, until time.Time, read func(items int)) iter.Seq2[LedgerEntry, error] {
	return func(yield func(LedgerEntry, error) bool) {
		for h := after.UTC().Truncate(time.Hour); !h.After(until); h = h.Add(time.Hour) {
			for k := range LedgerBuckets {
				key := expression.Key("ledgerBucket").Equal(expression.Value(h.Format(hourLayout) + "#" + strconv.Itoa(k))).
					And(expression.Key("at").Between(expression.Value(after.UnixMilli()+1), expression.Value(until.UnixMilli())))
				expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
				if err != nil {
					yield(LedgerEntry{}, fmt.Errorf("build ledger query: %w", err))
					return
				}
				pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
					TableName: aws.String(s.tables.StockLog), IndexName: aws.String(LedgerIndex),
					KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
				})
				if !s.yieldPages(ctx, pages.HasMorePages, func(ctx context.Context) ([]map[string]types.AttributeValue, error) {
					page, err := pages.NextPage(ctx)
					if err != nil {
						return nil, err
					}
					return page.Items, nil
				}, read, yield) {
					return
				}
			}
		}
	}
}

// LedgerAll yields every ledger entry with a consistent Scan of the stock_log table: it
// reads all history, for the first reconcile run only.
func (s *Store) LedgerAll(ctx context.Context, read func(items int)) iter.Seq2[LedgerEntry, error] {
	return func(yield func(LedgerEntry, error) bool) {
		pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.tables.StockLog), ConsistentRead: aws.Bool(true)})
		s.yieldPages(ctx, pages.HasMorePages, func(ctx context.Context) ([]map[string]types.AttributeValue, error) {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			return page.Items, nil
		}, read, yield)
	}
}

// yieldPages decodes the ledger items of each page and yields them; false means stop.
func (s *Store) yieldPages(ctx context.Context, more func() bool, next func(context.Context) ([]map[string]types.AttributeValue, error),
	read func(int), yield func(LedgerEntry, error) bool) bool {
	for more() {
		items, err := next(ctx)
		if err != nil {
			yield(LedgerEntry{}, s.storeError("read ledger", err))
			return false
		}
		if read != nil {
			read(len(items))
		}
		for _, item := range items {
			var rec ledgerRecord
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				yield(LedgerEntry{}, fmt.Errorf("decode ledger entry: %w", err))
				return false
			}
			e, err := rec.entry()
			if err != nil {
				yield(LedgerEntry{}, err)
				return false
			}
			if !yield(e, nil) {
				return false
			}
		}
	}
	return true
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
	t := s.newTxn("repair " + sku)
	at := s.now().UnixMilli()
	avail, onHand, reserved := expression.Name("available"), expression.Name("onHand"), expression.Name("reserved")
	for _, f := range fixes {
		seen := avail.Equal(expression.Value(f.Seen.Available)).
			And(onHand.Equal(expression.Value(f.Seen.OnHand))).
			And(reserved.Equal(expression.Value(f.Seen.Reserved)))
		// Conditioned on the exact counters read, adding the change sets the values.
		fix := inventory.Delta{
			Available: f.Available - f.Seen.Available, OnHand: f.OnHand - f.Seen.OnHand,
			Reserved: f.OnHand - f.Available - f.Seen.Reserved,
		}
		t.shard(0, sku, f.Shard, fix, seen)
		shard := f.Shard
		t.ledger(0, ledgerRecord{
			PK: ledgerKey(run, string(inventory.OpRepair), sku+"#"+strconv.Itoa(f.Shard)), Ref: run, Op: string(inventory.OpRepair), SKU: sku,
			DAvailable: f.LedgerAvailable, DOnHand: f.LedgerOnHand, Shard: &shard,
			FixAvailable: fix.Available, FixOnHand: fix.OnHand, At: at, Reason: reason,
		})
	}
	return s.apply(ctx, t, ErrMoved)
}
