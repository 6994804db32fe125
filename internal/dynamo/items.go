package dynamo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
)

// PageSize is how many items one page of a merchant API list holds at most.
const PageSize = 50

// scanPage scans table for up to PageSize items matching filter from start, and
// returns them with the cursor of the next page ("" at the end): the key of the last
// item returned, where a Scan resumes (DynamoDB API Reference, Scan: ExclusiveStartKey).
func (s *store) scanPage(ctx context.Context, table, listing string, filter expression.ConditionBuilder, start map[string]types.AttributeValue) ([]map[string]types.AttributeValue, string, error) {
	expr, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return nil, "", fmt.Errorf("build scan filter: %w", err)
	}
	var items []map[string]types.AttributeValue
	for {
		out, err := s.db.Scan(ctx, &dynamodb.ScanInput{
			TableName: aws.String(table), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
			Limit: aws.Int32(scanLimit), FilterExpression: expr.Filter(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		})
		if err != nil {
			return nil, "", s.storeError("scan "+table, err)
		}
		items, start = append(items, out.Items...), out.LastEvaluatedKey
		switch {
		case len(items) > PageSize:
			items = items[:PageSize]
			next, err := encodeCursor(listing, items[PageSize-1]["pk"])
			return items, next, err
		case len(start) == 0:
			return items, "", nil
		case len(items) == PageSize:
			next, err := encodeCursor(listing, start["pk"])
			return items, next, err
		}
	}
}

// scanLimit is how many items one Scan of a merchant API list examines.
const scanLimit = 200

// pagesOf yields the ledger entries of pages (see yieldPages).
func (s *store) pagesOf(ctx context.Context, more func() bool, next func(context.Context) ([]map[string]types.AttributeValue, error)) func(func(inventory.LedgerEntry, error) bool) {
	return func(yield func(inventory.LedgerEntry, error) bool) { s.yieldPages(ctx, more, next, nil, yield) }
}

var errBadCursor = inventory.InvalidError("after is not a cursor from a previous page of this list: leave it out to start from the first page")

// maxCursorKey bounds a cursor's key, in bytes: the tables' keys are printable ASCII
// ids far shorter (DynamoDB's own bound on a partition key is 2048 bytes; DynamoDB
// Developer Guide, "Service, account, and table quotas": partition key length).
const maxCursorKey = 1024

// pageCursor is a scan cursor as its page gives it: the listing it belongs to and the
// pk of the last item read.
type pageCursor struct {
	Listing string `json:"l"`
	PK      string `json:"pk"`
}

// encodeCursor makes an opaque cursor of the listing (e.g. "skus") and pk, the key of
// the last item a scan read (a string attribute).
func encodeCursor(listing string, pk types.AttributeValue) (string, error) {
	s, ok := pk.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("encode cursor: the key is a %T, not a string", pk)
	}
	data, err := json.Marshal(pageCursor{Listing: listing, PK: s.Value})
	if err != nil {
		return "", fmt.Errorf("encode cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// decodeCursor reads a cursor encodeCursor made for listing as the ExclusiveStartKey
// of a scan; "" is the first page (nil key). Anything else (not base64, not its JSON,
// another listing's, a key that no table holds the like of) is errBadCursor, before
// DynamoDB is asked. A well-formed cursor made by hand is a position in the same
// list, which its caller may read anyway.
func decodeCursor(listing, cursor string) (map[string]types.AttributeValue, error) {
	if cursor == "" {
		return nil, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, errBadCursor
	}
	var c pageCursor
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || dec.More() || c.Listing != listing || c.PK == "" || len(c.PK) > maxCursorKey ||
		strings.ContainsFunc(c.PK, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return nil, errBadCursor
	}
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: c.PK}}, nil
}

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
func (s *store) batchGet(ctx context.Context, table string, keys []string) ([]map[string]types.AttributeValue, error) {
	return s.batchGetRead(ctx, table, keys, true)
}

// batchGetRead is batchGet, strongly consistent or not (an eventually consistent read
// costs half a read unit per 4 KB and may miss the latest writes).
func (s *store) batchGetRead(ctx context.Context, table string, keys []string, consistent bool) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for chunk := range slices.Chunk(keys, maxBatchGetKeys) {
		items, err := s.batchGetChunk(ctx, table, chunk, consistent)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (s *store) batchGetChunk(ctx context.Context, table string, keys []string, consistent bool) ([]map[string]types.AttributeValue, error) {
	req := types.KeysAndAttributes{ConsistentRead: aws.Bool(consistent)}
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

// putIf puts rec into the skus table if cond holds.
func (s *store) putIf(ctx context.Context, what string, rec any, cond expression.ConditionBuilder) error {
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
		return fmt.Errorf("save %s: %w", what, inventory.ErrMoved)
	}
	if err != nil {
		return s.storeError("save "+what, err)
	}
	return nil
}

// yieldPages decodes the ledger items of each page and yields them; false means stop.
func (s *store) yieldPages(ctx context.Context, more func() bool, next func(context.Context) ([]map[string]types.AttributeValue, error),
	read func(int), yield func(inventory.LedgerEntry, error) bool) bool {
	for more() {
		items, err := next(ctx)
		if err != nil {
			yield(inventory.LedgerEntry{}, s.storeError("read ledger", err))
			return false
		}
		if read != nil {
			read(len(items))
		}
		for _, item := range items {
			var rec ledgerRecord
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				yield(inventory.LedgerEntry{}, fmt.Errorf("decode ledger entry: %w", err))
				return false
			}
			e, err := rec.entry()
			if err != nil {
				yield(inventory.LedgerEntry{}, err)
				return false
			}
			if !yield(e, nil) {
				return false
			}
		}
	}
	return true
}

// get reads the item pk of table strongly consistently into rec, which it leaves as
// it is when there is no such item; what names the item in errors.
func (s *store) get(ctx context.Context, table, pk, what string, rec any) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), Key: pkOf(pk), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return s.storeError("get "+what, err)
	}
	if len(out.Item) == 0 {
		return nil
	}
	if err := attributevalue.UnmarshalMap(out.Item, rec); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// putOnce puts rec (an item with a pk) into table unless an item with its pk exists:
// one conditional PutItem (attribute_not_exists(pk)) returning the existing item on
// refusal (ALL_OLD), decoded into old; a refusal without the item (the embedded
// DynamoDB answers so for a single-item write) costs one strongly consistent read of
// it instead. It reports whether rec was written. A write whose answer was lost is
// read back the same way: old then holds what is there (rec itself if it applied).
// Errors: inventory.ErrBusy, or a plain error for what does not encode or decode.
func (s *store) putOnce(ctx context.Context, table string, rec any, pk, what string, old any) (bool, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", what, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(table), Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ccf) && len(ccf.Item) > 0:
		if err := attributevalue.UnmarshalMap(ccf.Item, old); err != nil {
			return false, fmt.Errorf("decode %s: %w", what, err)
		}
		return false, nil
	case errors.As(err, &ccf):
		return false, s.get(ctx, table, pk, what, old)
	}
	if rerr := s.get(ctx, table, pk, what, old); rerr == nil {
		return false, nil
	}
	return false, s.storeError("put "+what, err)
}
