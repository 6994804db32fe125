package dynamo

import (
	"context"
	"fmt"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Cancel is a user's cancel of their own order, as the cancel route makes it: the
// order read as userID's, released with reason USER, and CANCELLED afterwards (else
// inventory.ErrNotCancellable).
func (s *Store) Cancel(ctx context.Context, userID, orderID string) (*inventory.Order, bool, error) {
	order, err := s.Order(ctx, userID, orderID)
	if err != nil {
		return nil, false, err
	}
	order, released, err := s.Release(ctx, order, inventory.CancelUser)
	if err != nil {
		return nil, false, err
	}
	if err := order.CheckCancelled(); err != nil {
		return nil, false, err
	}
	return order, released, nil
}

// Expire reads order orderID and releases it if its payment window has ended.
func (s *Store) Expire(ctx context.Context, orderID string) (*inventory.Order, bool, error) {
	order, err := s.order(ctx, orderID)
	if err != nil {
		return nil, false, err
	}
	if order == nil {
		return nil, false, fmt.Errorf("expire order %s: %w", orderID, inventory.ErrOrderNotFound)
	}
	return s.Release(ctx, order, inventory.CancelTimeout)
}
