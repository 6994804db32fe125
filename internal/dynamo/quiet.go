package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// kindQuiet marks a quiet-period claim on the orders table.
const kindQuiet = "QUIET"

// QuietKeyPrefix starts the pk of every quiet-period claim ("quiet#" + a digest of the
// key): the alert function's policy may write only items whose key starts with it.
const QuietKeyPrefix = "quiet#"

// quietItem is what a claim's check reads back: who holds it.
type quietItem struct {
	Token string `dynamodbav:"token"`
}

// ClaimQuiet claims the quiet period of key (e.g. one alarm going to one chat bot)
// for period from now, so that whatever container asks, only one caller acts on key
// per period. It reports true with the claim's token when no claim of key was in force
// at now, false when one was. One UpdateItem on the orders table (item "quiet#<digest of
// key>", conditioned on attribute_not_exists(pk) OR until <= now; DynamoDB applies
// conditional writes on one item one at a time, so of concurrent claims exactly one
// wins: DynamoDB Developer Guide, "Condition expressions"). A claim whose answer was
// lost and whose retry then found its own item (same token) is reported as won. The
// item expires through the table's TTL attribute (ttl, Unix seconds) a period after it
// lapses; TTL deletion is late by up to days, which the condition on until makes
// harmless. Errors: a period under a second; inventory.ErrBusy (throttled or
// unavailable) or another store error.
func (s *SessionStore) ClaimQuiet(ctx context.Context, key string, period time.Duration, now time.Time) (token string, won bool, err error) {
	if period < time.Second {
		return "", false, fmt.Errorf("claim quiet period: %v is under a second", period)
	}
	random := make([]byte, 16)
	rand.Read(random)
	token = hex.EncodeToString(random)
	until := now.Add(period)
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("kind"), expression.Value(kindQuiet)).
			Set(expression.Name("token"), expression.Value(token)).
			Set(expression.Name("until"), expression.Value(until.UnixMilli())).
			Set(expression.Name("ttl"), expression.Value(until.Add(period).Unix()))).
		WithCondition(expression.AttributeNotExists(expression.Name("pk")).
			Or(expression.Name("until").LessThanEqual(expression.Value(now.UnixMilli())))).
		Build()
	if err != nil {
		return "", false, fmt.Errorf("build quiet claim: %w", err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(QuietKeyPrefix + digest(key)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		var held quietItem
		if attributevalue.UnmarshalMap(ccf.Item, &held) == nil && held.Token == token {
			return token, true, nil // our own write, applied before its answer was lost
		}
		return "", false, nil
	case err != nil:
		return "", false, s.storeError("claim quiet period", err)
	}
	return token, true, nil
}

// ReleaseQuiet gives up the claim of key that token names (ClaimQuiet's), so that the
// next claim wins at once: for an action that failed after its claim. One DeleteItem
// conditioned on the token; a claim that lapsed and was taken by another caller since
// is left alone, and that is not an error. Errors: inventory.ErrBusy or another store
// error.
func (s *SessionStore) ReleaseQuiet(ctx context.Context, key, token string) error {
	expr, err := expression.NewBuilder().WithCondition(expression.Name("token").Equal(expression.Value(token))).Build()
	if err != nil {
		return fmt.Errorf("build quiet release: %w", err)
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(QuietKeyPrefix + digest(key)),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return s.storeError("release quiet period", err)
	}
	return nil
}
