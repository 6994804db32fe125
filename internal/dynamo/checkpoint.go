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

// ShardBooks are one shard's ledger sums over the entries of a cut (see Cut), in units.
type ShardBooks struct {
	Available, OnHand int // Σ available and on-hand deltas
	Adjusted          int // Σ ADJUST on-hand deltas on the shard (units stocked, net)
	Committed         int // Σ COMMIT units on the shard
	Returned          int // Σ RETURN units on the shard
	Epoch             int // entries stamped with this epoch or an earlier one are summed in
	Seq               int // how many entries that is: the shard's seq at the cut
}

// Checkpoint holds one SKU's ledger sums, per shard, through a cut of each shard.
type Checkpoint struct {
	SKU     string             // SKU id
	Version int                // saves are conditioned on it; each save adds one
	Shards  map[int]ShardBooks // shard number → sums through its cut
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
	get func(*ShardBooks) *int
} {
	type field = struct {
		m   *map[string]int
		get func(*ShardBooks) *int
	}
	return []field{
		{&rec.Available, func(b *ShardBooks) *int { return &b.Available }},
		{&rec.OnHand, func(b *ShardBooks) *int { return &b.OnHand }},
		{&rec.Adjusted, func(b *ShardBooks) *int { return &b.Adjusted }},
		{&rec.Committed, func(b *ShardBooks) *int { return &b.Committed }},
		{&rec.Returned, func(b *ShardBooks) *int { return &b.Returned }},
		{&rec.Epoch, func(b *ShardBooks) *int { return &b.Epoch }},
		{&rec.Seq, func(b *ShardBooks) *int { return &b.Seq }},
	}
}

// checkpoint decodes the record.
func (rec checkpointRecord) checkpoint() (*Checkpoint, error) {
	cp := &Checkpoint{SKU: rec.SKU, Version: rec.Version, Shards: map[int]ShardBooks{}}
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
func (s *Store) SaveCheckpoint(ctx context.Context, cp Checkpoint, prev int) error {
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
func (s *Store) SaveWatermark(ctx context.Context, w Watermark, prev time.Time) error {
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

// putIf puts rec into the skus table if cond holds.
func (s *Store) putIf(ctx context.Context, what string, rec any, cond expression.ConditionBuilder) error {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
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
