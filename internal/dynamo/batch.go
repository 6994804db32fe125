package dynamo

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
)

// maxBatchGetRounds bounds how often batchGet re-asks for UnprocessedKeys (the
// BatchGetItem API returns them under throttling; DynamoDB API Reference,
// BatchGetItem).
const maxBatchGetRounds = 4

// maxBatchGetKeys is BatchGetItem's limit on keys per request (DynamoDB API Reference,
// BatchGetItem: "up to 100 items").
const maxBatchGetKeys = 100

// batchGet reads items by pk with ConsistentRead, 100 keys per BatchGetItem, re-asking
// for unprocessed keys a bounded number of times; it fails with an error wrapping
// inventory.ErrBusy when keys stay unprocessed.
func (s *Store) batchGet(ctx context.Context, table string, keys []string) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for chunk := range slices.Chunk(keys, maxBatchGetKeys) {
		items, err := s.batchGetChunk(ctx, table, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (s *Store) batchGetChunk(ctx context.Context, table string, keys []string) ([]map[string]types.AttributeValue, error) {
	req := types.KeysAndAttributes{ConsistentRead: aws.Bool(true)}
	for _, k := range keys {
		req.Keys = append(req.Keys, pkOf(k))
	}
	var out []map[string]types.AttributeValue
	for round := 0; round < maxBatchGetRounds && len(req.Keys) > 0; round++ {
		if round > 0 {
			if err := clock.Sleep(ctx, jitter(round)); err != nil {
				return nil, err
			}
		}
		resp, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: req}})
		if err != nil {
			return nil, s.storeError("batch get", err)
		}
		out = append(out, resp.Responses[table]...)
		req.Keys = resp.UnprocessedKeys[table].Keys
	}
	if len(req.Keys) > 0 {
		return nil, fmt.Errorf("batch get: %d keys unprocessed: %w", len(req.Keys), inventory.ErrBusy)
	}
	return out, nil
}
