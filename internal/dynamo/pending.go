package dynamo

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/inventory"
)

// DuePending lists the ids of orders that the PendingByExpiry index shows as PENDING
// with pendingExpiresAt at or before `before`, bucket by bucket (starting at a random
// bucket, so a sweep cut short by its deadline does not always favour the same
// buckets), a page (up to 1 MB, DynamoDB API Reference, Query) at a time. The index is
// eventually consistent and may still show an order that has just been paid or
// cancelled: callers act through Expire, which reads the order first. Iteration stops
// at the first error.
func (s *Store) DuePending(ctx context.Context, before time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		first := rand.IntN(PendingBuckets)
		for i := range PendingBuckets {
			b := (first + i) % PendingBuckets
			key := expression.Key("pendingBucket").Equal(expression.Value("P" + strconv.Itoa(b))).
				And(expression.Key("pendingExpiresAt").LessThanEqual(expression.Value(before.UnixMilli())))
			// The status filter drops what the index still shows after a release or a
			// payment (index lag; see the package doc on sparse-index removal).
			expr, err := expression.NewBuilder().WithKeyCondition(key).
				WithFilter(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending)))).
				WithProjection(expression.NamesList(expression.Name("pk"))).Build()
			if err != nil {
				yield("", fmt.Errorf("build pending query: %w", err))
				return
			}
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName: aws.String(s.tables.Orders), IndexName: aws.String(PendingIndex),
				KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(), FilterExpression: expr.Filter(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			})
			for pages.HasMorePages() {
				page, err := pages.NextPage(ctx)
				if err != nil {
					yield("", s.storeError("query pending orders", err))
					return
				}
				for _, item := range page.Items {
					var rec struct {
						PK string `dynamodbav:"pk"`
					}
					if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
						yield("", fmt.Errorf("decode pending order key: %w", err))
						return
					}
					if !yield(rec.PK, nil) {
						return
					}
				}
			}
		}
	}
}
