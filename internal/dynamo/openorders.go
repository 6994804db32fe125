package dynamo

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/inventory"
)

// OpenOrder is a PENDING order as the PendingByExpiry index shows it.
type OpenOrder struct {
	ID        string                // order id
	UserID    string                // owner
	ExpiresAt time.Time             // end of its payment window
	Items     []inventory.OrderItem // SKU, Qty and Shards (no prices)
}

// OpenOrders yields every order the PendingByExpiry index shows as PENDING, bucket by
// bucket, a page at a time: their number follows open orders, not history. The index
// is eventually consistent: an order paid or released a moment ago may still show.
func (s *Store) OpenOrders(ctx context.Context, read func(items int)) iter.Seq2[OpenOrder, error] {
	return func(yield func(OpenOrder, error) bool) {
		for b := range PendingBuckets {
			expr, err := expression.NewBuilder().
				WithKeyCondition(expression.Key("pendingBucket").Equal(expression.Value("P" + strconv.Itoa(b)))).
				WithFilter(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending)))).Build()
			if err != nil {
				yield(OpenOrder{}, fmt.Errorf("build open-order query: %w", err))
				return
			}
			pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
				TableName: aws.String(s.tables.Orders), IndexName: aws.String(PendingIndex),
				KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			})
			for pages.HasMorePages() {
				page, err := pages.NextPage(ctx)
				if err != nil {
					yield(OpenOrder{}, s.storeError("query open orders", err))
					return
				}
				if read != nil { // what a Query pays for: the items read before the filter
					read(max(int(page.ScannedCount), len(page.Items)))
				}
				for _, item := range page.Items {
					var rec orderRecord
					if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
						yield(OpenOrder{}, fmt.Errorf("decode open order: %w", err))
						return
					}
					o := OpenOrder{ID: rec.PK, UserID: rec.UserID, ExpiresAt: time.UnixMilli(rec.PendingExpiresAt).UTC()}
					for _, it := range rec.Items {
						shards, err := shardsFromRecord(it.Shards)
						if err != nil {
							yield(OpenOrder{}, fmt.Errorf("decode open order %s: %w", rec.PK, err))
							return
						}
						o.Items = append(o.Items, inventory.OrderItem{SKU: it.SKU, Qty: it.Qty, Shards: shards, Limited: it.Limited})
					}
					if !yield(o, nil) {
						return
					}
				}
			}
		}
	}
}
