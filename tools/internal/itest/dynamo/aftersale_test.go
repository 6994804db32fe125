package dynamo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// A return-refund's goods received after a shrinking reshard deleted the shards the
// order committed on go back on the live shard, once, in the same transaction as its
// refund's goods step; nothing moves at approval.
func TestReceiveAftersale_AfterAShrinkingReshardReturnsUnitsToALiveShard(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 4, Shards: 4})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 4})
	if len(order.Items[0].Shards) < 2 {
		t.Fatalf("order committed on %v, want several shards", order.Items[0].Shards)
	}
	ctx := context.Background()
	if _, created, err := e.store.RequestAftersale(ctx, "u1", order.ID, inventory.AftersaleRequest{ID: "as-1", Kind: inventory.AftersaleReturnRefund, Reason: "cracked"}); err != nil || !created {
		t.Fatalf("RequestAftersale: %v %v", created, err)
	}
	if _, _, err := e.store.RequestAftersale(ctx, "u2", order.ID, inventory.AftersaleRequest{ID: "as-2", Kind: inventory.AftersaleRefund, Reason: "x"}); !errors.Is(err, inventory.ErrOrderNotFound) {
		t.Errorf("another user's request: %v, want ErrOrderNotFound", err)
	}
	if _, started, err := e.store.DecideAftersale(ctx, order.ID, "as-1", true, operator.By, ""); err != nil || started != "" {
		t.Fatalf("DecideAftersale: %q %v; want approved, no refund before the goods are back", started, err)
	}
	if b := e.books(t, "cup"); b.onHand != 0 {
		t.Fatalf("cup onHand %d after approval, want 0", b.onHand)
	}
	if res, err := e.store.Reshard(ctx, "cup", 1, "arn:aws:iam::000000000000:user/op"); err != nil || !res.Complete {
		t.Fatalf("Reshard: %+v %v", res, err)
	}
	got, started, err := e.store.ReceiveAftersale(ctx, order.ID, "as-1", operator.By)
	if err != nil || started == "" || got.Status != inventory.StatusRefunding || got.Aftersale("as-1").OutRefundNo != started {
		t.Fatalf("ReceiveAftersale: %+v %q %v", got, started, err)
	}
	if _, again, err := e.store.ReceiveAftersale(ctx, order.ID, "as-1", operator.By); err != nil || again != "" {
		t.Errorf("received again: %q %v, want no second refund", again, err)
	}
	if b := e.books(t, "cup"); b.onHand != 4 || b.available != 4 {
		t.Errorf("cup onHand %d available %d, want 4 and 4 back on the live shard", b.onHand, b.available)
	}
	if ops := e.Ops(t, order.ID); ops[string(inventory.OpReturn)] != 1 {
		t.Errorf("ledger %v, want one RETURN", ops)
	}
	e.Check(t)
}
