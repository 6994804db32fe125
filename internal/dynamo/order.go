package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Order returns the order with id if it belongs to userID, read strongly consistently.
// Anyone else's order, an unknown id or a malformed id gives an error wrapping
// inventory.ErrOrderNotFound, so callers cannot probe for other users' orders.
func (s *Store) Order(ctx context.Context, userID, id string) (*inventory.Order, error) {
	if !inventory.ValidOrderID(id) {
		return nil, inventory.ErrOrderNotFound
	}
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil || order.UserID != userID {
		return nil, inventory.ErrOrderNotFound
	}
	return order, nil
}

// Lookup returns the order with id whoever owns it, read strongly consistently, for
// trusted callers (payment notifications, operators, the local runner); a user's
// request must go through Order. Errors: inventory.ErrOrderNotFound, or a store error.
func (s *Store) Lookup(ctx context.Context, id string) (*inventory.Order, error) {
	if !inventory.ValidOrderID(id) {
		return nil, inventory.ErrOrderNotFound
	}
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, inventory.ErrOrderNotFound
	}
	return order, nil
}

// order reads an order by id; nil without error when there is none.
func (s *Store) order(ctx context.Context, id string) (*inventory.Order, error) {
	var rec orderRecord
	if err := s.get(ctx, s.tables.Orders, id, "order "+id, &rec); err != nil {
		return nil, err
	}
	if rec.Kind != kindOrder {
		return nil, nil
	}
	order, err := rec.order()
	if err != nil {
		return nil, fmt.Errorf("decode order %s: %w", id, err)
	}
	return order, nil
}

// get reads the item pk of table strongly consistently into rec, which it leaves as
// it is when there is no such item; what names the item in errors.
func (s *Store) get(ctx context.Context, table, pk, what string, rec any) error {
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
