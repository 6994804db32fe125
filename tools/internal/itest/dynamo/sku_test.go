package dynamo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

func TestCreateSKU_RejectsBadFieldsAndWritesNothing(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	ok := inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Name: "cup", Price: 100, Stock: 5}
	for _, tc := range []struct {
		name string
		edit func(*inventory.NewSKU)
	}{
		// Every bound is tested on inventory.NewSKU.Validate; these show the store
		// applies them before writing.
		{"bad id", func(s *inventory.NewSKU) { s.ID = "cup#1" }},
		{"too many shards", func(s *inventory.NewSKU) { s.Shards = inventory.MaxShards + 1 }},
	} {
		sku := ok
		tc.edit(&sku)
		if err := e.store.CreateSKU(context.Background(), sku); !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", tc.name, err)
		}
	}
	if n := len(e.Scan(t, e.Tables.SKUs)) + len(e.Scan(t, e.Tables.StockLog)); n != 0 {
		t.Errorf("rejected SKUs wrote %d items", n)
	}
	if err := e.store.CreateSKU(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	ok.Stock = 500
	if err := e.store.CreateSKU(context.Background(), ok); !errors.Is(err, dynamo.ErrSKUExists) {
		t.Errorf("second create: %v, want ErrSKUExists", err)
	}
	e.books(t, "cup").checkBalanced(t, 5)
}

func TestEnsureSKU_SizedFromThePeakIgnoresTheShardCountItWasCreatedWith(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, dynamo.Options{}, nil)
	// Created when the sizing rule gave 4 shards for this peak (the rule now gives 5).
	old := inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Name: "cup", Price: 100, Stock: 5, PeakOrdersPerSecond: 1000, Shards: 4}
	if err := e.store.CreateSKU(ctx, old); err != nil {
		t.Fatal(err)
	}
	seed := old
	seed.Shards = 0
	if created, err := e.store.EnsureSKU(ctx, seed); created || err != nil {
		t.Errorf("same body sized from the peak: %v, %v, want false, nil", created, err)
	}
	for name, edit := range map[string]func(*inventory.NewSKU){
		"explicit other shard count": func(s *inventory.NewSKU) { s.Shards = 5 },
		"sized, other price":         func(s *inventory.NewSKU) { s.Shards, s.Price = 0, 200 },
	} {
		other := old
		edit(&other)
		if _, err := e.store.EnsureSKU(ctx, other); !errors.Is(err, dynamo.ErrSKUExists) {
			t.Errorf("%s: %v, want ErrSKUExists", name, err)
		}
	}
	if sku, err := e.store.SKU(ctx, "cup"); err != nil || sku.Shards != 4 || sku.OnHand != 5 {
		t.Errorf("SKU after the repeats: %+v, %v, want 4 shards, 5 on hand", sku, err)
	}
	e.books(t, "cup").checkBalanced(t, 5)
}
