package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

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
