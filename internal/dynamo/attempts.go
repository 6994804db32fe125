package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CountAttempt counts one attempt of key (e.g. "login-ip#203.0.113.9") in the fixed
// window of length window that holds now, and reports whether it is within limit: the
// first limit attempts of a window are allowed, the rest refused. One UpdateItem on the
// orders table (item "attempts#<sha256 of key>#<window start, Unix seconds>", ADD n 1,
// conditioned on n < limit; DynamoDB API Reference, UpdateItem) so the count holds
// across every container of a function; the item expires by the table's TTL attribute
// (ttl, Unix seconds) one window after its window ends. A refused attempt is not
// counted. Errors: inventory.ErrBusy (throttled or unavailable) or another store error;
// a limit below 1 or a window under a second refuses everything.
func (s *SessionStore) CountAttempt(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (bool, error) {
	if limit < 1 || window < time.Second {
		return false, nil
	}
	secs := int64(window / time.Second)
	start := now.Unix() / secs * secs
	sum := sha256.Sum256([]byte(key))
	pk := "attempts#" + hex.EncodeToString(sum[:16]) + "#" + strconv.FormatInt(start, 10)
	n := expression.Name("n")
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Add(n, expression.Value(1)).Set(expression.Name("ttl"), expression.Value(start+2*secs)).
			Set(expression.Name("kind"), expression.Value("ATTEMPTS"))).
		WithCondition(expression.AttributeNotExists(n).Or(n.LessThan(expression.Value(limit)))).
		Build()
	if err != nil {
		return false, fmt.Errorf("build attempt count: %w", err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(pk),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, s.storeError("count attempt", err)
	}
	return true, nil
}

// SaveSession keeps sealed (a login's token, sealed by package login; under 1 KB) as
// the item "session#<key>" of the orders table until expires: one PutItem (1 write
// unit), replacing what was kept, the item expiring by the table's TTL attribute (ttl,
// Unix seconds; DynamoDB removes expired items within days, so LoadSession does not
// rely on it). Errors: inventory.ErrBusy (throttled or unavailable) or another store
// error.
func (s *SessionStore) SaveSession(ctx context.Context, key string, sealed []byte, expires time.Time) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.tables.Orders),
		Item: map[string]types.AttributeValue{
			"pk":     &types.AttributeValueMemberS{Value: "session#" + key},
			"kind":   &types.AttributeValueMemberS{Value: "SESSION"},
			"sealed": &types.AttributeValueMemberB{Value: sealed},
			"ttl":    &types.AttributeValueMemberN{Value: strconv.FormatInt(expires.Unix(), 10)},
		},
	})
	if err != nil {
		return s.storeError("keep session", err)
	}
	return nil
}

// LoadSession returns what SaveSession kept under key, or nil when nothing is: one
// eventually consistent GetItem (half a read unit; a read that misses a save made
// just before only costs the caller a new token). Errors: inventory.ErrBusy or
// another store error.
func (s *SessionStore) LoadSession(ctx context.Context, key string) ([]byte, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf("session#" + key),
		ProjectionExpression: aws.String("sealed"),
	})
	if err != nil {
		return nil, s.storeError("read session", err)
	}
	if b, ok := out.Item["sealed"].(*types.AttributeValueMemberB); ok {
		return b.Value, nil
	}
	return nil, nil
}
