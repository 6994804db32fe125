package dynamo

import (
	"context"
	"fmt"
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
// them, or those of the shards that moved written since a time, through the
// LedgerByShard index), and REPAIR
// transactions. The open orders are read in pending.go.

const (
	kindCheckpoint = "CHECKPOINT"
	kindWatermark  = "WATERMARK"
	watermarkKey   = "reconcile#watermark"
)

// Stock reads every SKU's counters and checkpoint, and the watermark, with one
// strongly consistent Scan of the skus table: its size follows the catalogue, not the
// history. read, when not nil, is told each page's item count.
func (s *BookStore) Stock(ctx context.Context, read func(items int)) ([]inventory.SKUState, inventory.Watermark, error) {
	scan := stockScan{byID: map[string]*inventory.SKUState{}}
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.tables.SKUs), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, inventory.Watermark{}, s.storeError("scan stock", err)
		}
		if read != nil {
			read(len(page.Items))
		}
		for _, item := range page.Items {
			if err := scan.add(item); err != nil {
				return nil, inventory.Watermark{}, err
			}
		}
	}
	out := make([]inventory.SKUState, 0, len(scan.byID))
	for _, id := range slices.Sorted(maps.Keys(scan.byID)) {
		out = append(out, *scan.byID[id])
	}
	return out, scan.watermark, nil
}

// stockScan gathers the items of the skus table by SKU.
type stockScan struct {
	byID      map[string]*inventory.SKUState
	watermark inventory.Watermark
}

func (sc *stockScan) state(sku string) *inventory.SKUState {
	if sc.byID[sku] == nil {
		sc.byID[sku] = &inventory.SKUState{SKU: sku, Shards: map[int]inventory.ShardCounters{}, Marks: map[int]inventory.ShardMark{}}
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
		st := sc.state(rec.SKU)
		st.ShardCount = rec.Shards
		for k, m := range rec.Retired {
			n, err := strconv.Atoi(k)
			if err != nil {
				return fmt.Errorf("decode SKU %s: retired shard %q", rec.SKU, k)
			}
			if st.Retired == nil {
				st.Retired = map[int]inventory.ShardMark{}
			}
			st.Retired[n] = inventory.ShardMark{Seq: m.Seq, Epoch: m.Epoch}
		}
	case kindShard:
		var rec shardRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode shard: %w", err)
		}
		sc.state(rec.SKU).Shards[rec.Shard] = inventory.ShardCounters{Available: rec.Available, Reserved: rec.Reserved, OnHand: rec.OnHand}
		sc.state(rec.SKU).Marks[rec.Shard] = inventory.ShardMark{Seq: rec.Seq, Epoch: rec.Epoch}
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
		sc.watermark = inventory.Watermark{Through: time.UnixMilli(rec.Through).UTC()}
		if rec.FullCheck != 0 {
			sc.watermark.FullCheck = time.UnixMilli(rec.FullCheck).UTC()
		}
	}
	return nil
}

// checkpointRecord keeps the per-shard sums as maps of numbers (shard → value).
type checkpointRecord struct {
	PK        string         `dynamodbav:"pk"`
	Kind      string         `dynamodbav:"kind"`
	SKU       string         `dynamodbav:"skuId"`
	Version   int            `dynamodbav:"version"`
	Available map[string]int `dynamodbav:"available,omitempty"`
	OnHand    map[string]int `dynamodbav:"onHand,omitempty"`
	Adjusted  map[string]int `dynamodbav:"adjusted,omitempty"`
	Committed map[string]int `dynamodbav:"committed,omitempty"`
	Returned  map[string]int `dynamodbav:"returned,omitempty"`
	Epoch     map[string]int `dynamodbav:"epoch,omitempty"`
	Seq       map[string]int `dynamodbav:"seq,omitempty"`
}

// fields pairs each per-shard map of the record with its ShardBooks field.
func (rec *checkpointRecord) fields() []struct {
	m   *map[string]int
	get func(*inventory.ShardBooks) *int
} {
	type field = struct {
		m   *map[string]int
		get func(*inventory.ShardBooks) *int
	}
	return []field{
		{&rec.Available, func(b *inventory.ShardBooks) *int { return &b.Available }},
		{&rec.OnHand, func(b *inventory.ShardBooks) *int { return &b.OnHand }},
		{&rec.Adjusted, func(b *inventory.ShardBooks) *int { return &b.Adjusted }},
		{&rec.Committed, func(b *inventory.ShardBooks) *int { return &b.Committed }},
		{&rec.Returned, func(b *inventory.ShardBooks) *int { return &b.Returned }},
		{&rec.Epoch, func(b *inventory.ShardBooks) *int { return &b.Epoch }},
		{&rec.Seq, func(b *inventory.ShardBooks) *int { return &b.Seq }},
	}
}

// checkpoint decodes the record.
func (rec checkpointRecord) checkpoint() (*inventory.Checkpoint, error) {
	cp := &inventory.Checkpoint{SKU: rec.SKU, Version: rec.Version, Shards: map[int]inventory.ShardBooks{}}
	for _, f := range rec.fields() {
		values, err := shardsFromRecord(*f.m)
		if err != nil {
			return nil, fmt.Errorf("decode checkpoint of %s: %w", rec.SKU, err)
		}
		for n, v := range values {
			b := cp.Shards[n]
			*f.get(&b) = v
			cp.Shards[n] = b
		}
	}
	return cp, nil
}

// SaveCheckpoint writes cp with version prev+1, conditioned on the stored checkpoint
// still having version prev (absent when prev is 0). It returns an error wrapping
// ErrMoved when another run saved it first.
func (s *BookStore) SaveCheckpoint(ctx context.Context, cp inventory.Checkpoint, prev int) error {
	rec := checkpointRecord{PK: cp.SKU + "#checkpoint", Kind: kindCheckpoint, SKU: cp.SKU, Version: prev + 1}
	for _, f := range rec.fields() {
		if len(cp.Shards) == 0 { // an empty map is left out: minidyn mangles empty maps
			break
		}
		*f.m = map[string]int{}
		for n, b := range cp.Shards {
			(*f.m)[strconv.Itoa(n)] = *f.get(&b)
		}
	}
	cond := expression.AttributeNotExists(expression.Name("pk"))
	if prev != 0 {
		cond = expression.Name("version").Equal(expression.Value(prev))
	}
	return s.putIf(ctx, "checkpoint of "+cp.SKU, rec, cond)
}

// watermarkRecord is the Watermark item (times in Unix milliseconds).
type watermarkRecord struct {
	PK        string `dynamodbav:"pk"`
	Kind      string `dynamodbav:"kind"`
	Through   int64  `dynamodbav:"through"`
	FullCheck int64  `dynamodbav:"fullCheck,omitempty"`
}

// SaveWatermark records w, conditioned like SaveCheckpoint on the watermark read
// (its Through was prev; zero: none yet).
func (s *BookStore) SaveWatermark(ctx context.Context, w inventory.Watermark, prev time.Time) error {
	rec := watermarkRecord{PK: watermarkKey, Kind: kindWatermark, Through: w.Through.UnixMilli()}
	if !w.FullCheck.IsZero() {
		rec.FullCheck = w.FullCheck.UnixMilli()
	}
	return s.putIf(ctx, "watermark", rec, throughWas(prev))
}

// throughWas is the condition that an item's through is still prev (absent when
// prev is zero).
func throughWas(prev time.Time) expression.ConditionBuilder {
	if prev.IsZero() {
		return expression.AttributeNotExists(expression.Name("pk"))
	}
	return expression.Name("through").Equal(expression.Value(prev.UnixMilli()))
}

// Repair applies fixes to one SKU's shards in one TransactWriteItems: per shard a
// REPAIR ledger entry (ref run, keyed run#REPAIR#sku#shard, recording the counter
// change in fixAvailable/fixOnHand and its ledger deltas in dAvailable/dOnHand), and
// an update setting the counters, conditioned on available, onHand and reserved still
// holding the values read and on seq still being the cut's (f.Seq: no ledger entry
// moved the shard since, so no order or waitlist hold came, went or changed hands) —
// never a blind SET. Errors: ErrMoved when the shard moved (nothing written), ErrBusy,
// or another store error.
func (s *BookStore) Repair(ctx context.Context, run, sku, reason string, fixes []inventory.ShardFix) error {
	t := s.newTxn("repair " + sku)
	at := s.now().UnixMilli()
	avail, onHand, reserved := expression.Name("available"), expression.Name("onHand"), expression.Name("reserved")
	for _, f := range fixes {
		seen := avail.Equal(expression.Value(f.Seen.Available)).
			And(onHand.Equal(expression.Value(f.Seen.OnHand))).
			And(reserved.Equal(expression.Value(f.Seen.Reserved))).
			And(equalOrAbsent("seq", f.Seq))
		// Conditioned on the exact counters read, adding the change sets the values.
		fix := inventory.Delta{
			Available: f.Available - f.Seen.Available, OnHand: f.OnHand - f.Seen.OnHand,
			Reserved: f.OnHand - f.Available - f.Seen.Reserved,
		}
		t.shard(0, sku, f.Shard, fix, seen)
		shard := f.Shard
		t.ledger(0, ledgerRecord{
			PK: ledgerKey(run, inventory.OpRepair, sku+"#"+strconv.Itoa(f.Shard)), Ref: run, Op: inventory.OpRepair, SKU: sku,
			DAvailable: f.LedgerAvailable, DOnHand: f.LedgerOnHand, Shard: &shard,
			FixAvailable: fix.Available, FixOnHand: fix.OnHand, At: at, Reason: reason,
		})
	}
	return s.apply(ctx, t, inventory.ErrMoved)
}

// The latest reconcile report, kept in the skus table (pk reconcile#report) for the
// merchant API.
const (
	kindReport = "REPORT"
	reportKey  = "reconcile#report"
)

type reportRecord struct {
	PK     string `dynamodbav:"pk"`
	Kind   string `dynamodbav:"kind"`
	At     int64  `dynamodbav:"at"`     // Unix milliseconds of the run
	Report string `dynamodbav:"report"` // the report's JSON
}

// SaveReport keeps report (a reconcile report's JSON) as the latest one.
func (s *BookStore) SaveReport(ctx context.Context, report []byte) error {
	item, err := attributevalue.MarshalMap(reportRecord{PK: reportKey, Kind: kindReport, At: s.now().UnixMilli(), Report: string(report)})
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.SKUs), Item: item}); err != nil {
		return s.storeError("save report", err)
	}
	return nil
}

// LatestReport returns the JSON of the last report SaveReport kept, nil when none.
func (s *BookStore) LatestReport(ctx context.Context) ([]byte, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(reportKey), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, s.storeError("read report", err)
	}
	var rec reportRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if rec.Report == "" {
		return nil, nil
	}
	return []byte(rec.Report), nil
}
