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
	ok := inventory.NewSKU{ID: "cup", Name: "cup", Price: 100, Stock: 5}
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
