package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// UserIndex is the GSI of the buyer's own orders on the orders table: hash key userId,
// range key createdMs (the order's creation, Unix milliseconds). Only order records
// carry createdMs, so it lists orders and nothing else. It projects KEYS_ONLY: an
// order's status changes never touch userId or createdMs, so they never rewrite the
// index entry (DynamoDB Developer Guide, "Provisioned throughput considerations for
// global secondary indexes": an update writes the index only when an attribute it
// holds changes); an order's life writes it once, about 100 bytes, 1 write unit.
const UserIndex = "OrdersByUser"

// UserPageSize is how many orders one page of a buyer's order list holds at most.
const UserPageSize = 20

// UserOrders returns a page of userID's orders, newest first, from the cursor after
// ("" for the first page), and the cursor of the next page ("" on the last). The
// OrdersByUser index gives the ids (one Query of at most UserPageSize keys, eventually
// consistent); the orders themselves are read strongly consistently with BatchGetItem,
// so the statuses are those of the read. An order created in the last instant may be
// missing from the first page until the index has it. Errors wrap
// inventory.ErrInvalidRequest for a cursor this store did not issue for userID, or
// inventory.ErrBusy.
func (s *OrderStore) UserOrders(ctx context.Context, userID, after string) ([]*inventory.Order, string, error) {
	start, err := decodeUserCursor(userID, after)
	if err != nil {
		return nil, "", err
	}
	expr, err := expression.NewBuilder().
		WithKeyCondition(expression.Key("userId").Equal(expression.Value(userID))).Build()
	if err != nil {
		return nil, "", fmt.Errorf("build order list query: %w", err)
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.tables.Orders), IndexName: aws.String(UserIndex),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(false),
		Limit: aws.Int32(UserPageSize), ExclusiveStartKey: start,
	})
	if err != nil {
		return nil, "", s.storeError("query orders of a user", err)
	}
	ids := make([]string, 0, len(out.Items))
	for _, item := range out.Items {
		var k struct {
			PK string `dynamodbav:"pk"`
		}
		if err := attributevalue.UnmarshalMap(item, &k); err != nil {
			return nil, "", fmt.Errorf("decode order list key: %w", err)
		}
		ids = append(ids, k.PK)
	}
	orders, err := s.ordersByID(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	next, err := encodeUserCursor(out.LastEvaluatedKey)
	return orders, next, err
}

// ordersByID reads the orders ids name, strongly consistently, in the order of ids.
func (s *OrderStore) ordersByID(ctx context.Context, ids []string) ([]*inventory.Order, error) {
	items, err := s.batchGet(ctx, s.tables.Orders, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*inventory.Order, len(items))
	for _, item := range items {
		var rec orderRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return nil, fmt.Errorf("decode order: %w", err)
		}
		o, err := rec.order()
		if err != nil {
			return nil, fmt.Errorf("decode order %s: %w", rec.PK, err)
		}
		byID[o.ID] = o
	}
	orders := make([]*inventory.Order, 0, len(ids))
	for _, id := range ids {
		if o, ok := byID[id]; ok {
			orders = append(orders, o)
		}
	}
	return orders, nil
}

// userCursor is a position in one user's order list: the last order's id and
// createdMs, and a hash of the user it was issued to. The user is not in it: the
// caller's own id is put back on decoding, so a cursor never reaches another user's
// orders, and one issued to another user (its hash differs) is refused, as the
// contract says.
type userCursor struct {
	ID        string `json:"id"`
	CreatedMs int64  `json:"at"`
	User      string `json:"u"`
}

// cursorUser is the hash of userID that its cursors carry: 16 hex digits of SHA-256.
func cursorUser(userID string) string {
	sum := sha256.Sum256([]byte("cursor\x00" + userID))
	return hex.EncodeToString(sum[:8])
}

func encodeUserCursor(key map[string]types.AttributeValue) (string, error) {
	if len(key) == 0 {
		return "", nil
	}
	var k struct {
		PK        string `dynamodbav:"pk"`
		UserID    string `dynamodbav:"userId"`
		CreatedMs int64  `dynamodbav:"createdMs"`
	}
	if err := attributevalue.UnmarshalMap(key, &k); err != nil {
		return "", fmt.Errorf("encode order list cursor: %w", err)
	}
	data, err := json.Marshal(userCursor{ID: k.PK, CreatedMs: k.CreatedMs, User: cursorUser(k.UserID)})
	if err != nil {
		return "", fmt.Errorf("encode order list cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

func decodeUserCursor(userID, cursor string) (map[string]types.AttributeValue, error) {
	if cursor == "" {
		return nil, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(cursor)
	var c userCursor
	if err != nil || json.Unmarshal(data, &c) != nil || !inventory.ValidOrderID(c.ID) || c.CreatedMs <= 0 || c.User != cursorUser(userID) {
		return nil, errBadCursor
	}
	return map[string]types.AttributeValue{
		"pk":        &types.AttributeValueMemberS{Value: c.ID},
		"userId":    &types.AttributeValueMemberS{Value: userID},
		"createdMs": &types.AttributeValueMemberN{Value: strconv.FormatInt(c.CreatedMs, 10)},
	}, nil
}
