package dynamo_test

import (
	"context"
	"fmt"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// store is the store under test with the few whole operations the tests drive in one
// call, each made of dynamo.Store's exported methods as the routes make it.
type store struct{ *dynamo.Store }

// Cancel is a user's cancel of their own order, as the cancel route makes it: the
// order read as userID's, released with reason USER, and CANCELLED afterwards (else
// inventory.ErrNotCancellable).
func (s store) Cancel(ctx context.Context, userID, orderID string) (*inventory.Order, bool, error) {
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
func (s store) Expire(ctx context.Context, orderID string) (*inventory.Order, bool, error) {
	order, err := s.Lookup(ctx, orderID)
	if err != nil {
		return nil, false, fmt.Errorf("expire order %s: %w", orderID, err)
	}
	return s.Release(ctx, order, inventory.CancelTimeout)
}

// CreateSKU is EnsureSKU that also refuses an identical SKU already there: it
// returns an error wrapping ErrSKUExists whenever the id is taken.
func (s store) CreateSKU(ctx context.Context, in inventory.NewSKU) error {
	created, err := s.EnsureSKU(ctx, in)
	if err == nil && !created {
		err = fmt.Errorf("create SKU %s: %w", in.ID, dynamo.ErrSKUExists)
	}
	return err
}

// SetOnSale puts a SKU on sale or takes it off sale (PatchSKU with OnSale only).
func (s store) SetOnSale(ctx context.Context, sku string, onSale bool) error {
	_, err := s.PatchSKU(ctx, sku, inventory.SKUPatch{OnSale: &onSale}, "")
	return err
}
