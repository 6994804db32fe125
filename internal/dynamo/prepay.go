package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
)

// SetPrepay stores on order the WeChat Pay prepay_id of its JSAPI order and when it
// was obtained (at, UTC), so that repeated taps reuse one WeChat Pay order
// (inventory.Order.ReusablePrepay) and every release first asks WeChat Pay about it.
// It is one UpdateItem conditioned on the order still being PENDING (DynamoDB API
// Reference, UpdateItem, ConditionExpression).
//
// Errors: inventory.ErrNotPayable (the order left PENDING meanwhile: nothing stored);
// inventory.ErrBusy (throttled or unavailable); another store error.
func (s *Store) SetPrepay(ctx context.Context, order *inventory.Order, prepayID string, at time.Time) error {
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("prepayId"), expression.Value(prepayID)).
			Set(expression.Name("prepayAt"), expression.Value(formatTime(at)))).
		WithCondition(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending)))).
		Build()
	if err != nil {
		return fmt.Errorf("build prepay update of %s: %w", order.ID, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(order.ID),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("store prepay of order %s: no longer PENDING: %w", order.ID, inventory.ErrNotPayable)
	case err != nil:
		return s.storeError("store prepay of order "+order.ID, err)
	}
	return nil
}
