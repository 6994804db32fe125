package inventory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// An order's receipt is absent before any shipment, WAITING once something shipped,
// CONFIRMED once WeChat reported it; a cancelled shipment waits for nothing.
func TestReceiptState(t *testing.T) {
	paid := paidOrder()
	if s := paid.ReceiptState(); s != "" {
		t.Errorf("before any shipment: %q", s)
	}
	o := shipped(t, paid, parcel)
	if s := o.ReceiptState(); s != inventory.ReceiptWaiting {
		t.Errorf("shipped: %q", s)
	}
	cancelled := *o
	sh := *o.Shipping
	sh.Status = inventory.ShippingCancelled
	cancelled.Shipping = &sh
	if s := cancelled.ReceiptState(); s != "" {
		t.Errorf("shipment cancelled: %q", s)
	}
	o.Receipt = &inventory.Receipt{ConfirmedAt: time.Unix(1700000000, 0), Method: inventory.ReceiptByBuyer}
	if s := o.ReceiptState(); s != inventory.ReceiptConfirmed {
		t.Errorf("confirmed: %q", s)
	}
}

// WeChat's settlement of the order's own payment records the receipt once, whatever
// the order's status, conditioned on none recorded yet; a repeat, or a later event
// with another time or method, changes nothing; a settlement of another payment, or
// of an order with no shipment, is refused.
func TestConfirmReceipt_Decisions(t *testing.T) {
	at := time.Date(2026, 11, 20, 8, 30, 15, 0, time.FixedZone("CST", 8*3600))
	o := shipped(t, paidOrder(), parcel)
	c, err := o.ConfirmReceipt(o.TransactionID, inventory.Receipt{ConfirmedAt: at, Method: inventory.ReceiptByBuyer})
	if err != nil || c.Kind != inventory.ChangeReceipt || c.From != inventory.StatusPaid || c.Guards != inventory.GuardReceipt {
		t.Fatalf("ConfirmReceipt = %+v, %v", c, err)
	}
	r := c.Order.Receipt
	if r == nil || !r.ConfirmedAt.Equal(at) || r.ConfirmedAt.Location() != time.UTC || r.Method != inventory.ReceiptByBuyer || o.Receipt != nil {
		t.Fatalf("receipt %+v (the order read keeps none: %v)", r, o.Receipt)
	}
	for _, again := range []inventory.Receipt{*r, {ConfirmedAt: at.Add(time.Hour), Method: inventory.ReceiptAuto}} {
		if c, err := c.Order.ConfirmReceipt(o.TransactionID, again); err != nil || !c.None() {
			t.Errorf("again %+v: %v, %v; want NoChange", again, c.Kind, err)
		}
	}

	if _, err := paidOrder().ConfirmReceipt(o.TransactionID, inventory.Receipt{ConfirmedAt: at}); !errors.Is(err, inventory.ErrNothingShipped) {
		t.Errorf("a paid order with no shipment: %v, want ErrNothingShipped", err)
	}
	refunding := shipped(t, paidOrder(), parcel)
	refunding.Status = inventory.StatusRefunding
	if c, err := refunding.ConfirmReceipt(refunding.TransactionID, inventory.Receipt{ConfirmedAt: at, Method: inventory.ReceiptAuto}); err != nil || c.From != inventory.StatusRefunding || c.Order.Status != inventory.StatusRefunding {
		t.Errorf("a refunding order: %+v, %v", c, err)
	}

	unpaid := pendingOrder()
	for _, tc := range []struct {
		o  *inventory.Order
		tx string
	}{{o, "4200000000000000000000000999"}, {o, ""}, {unpaid, ""}, {unpaid, "4200000000000000000000000001"}} {
		if _, err := tc.o.ConfirmReceipt(tc.tx, inventory.Receipt{ConfirmedAt: at}); !errors.Is(err, inventory.ErrOtherPayment) {
			t.Errorf("order %s (%s) settled as %q: %v, want ErrOtherPayment", tc.o.ID, tc.o.Status, tc.tx, err)
		}
	}
}

// Each shipment shows when WeChat first accepted an upload holding it: a later upload
// of more shipments leaves the earlier ones' time alone.
func TestShippingResult_StampsEachShipmentOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	queued := shipped(t, paidOrder(), parcel)
	one := queued.ShippingResult(1, "", false, t0).Order
	if queued.Shipping.Shipments[0].UploadedAt != nil {
		t.Fatalf("the order read changed")
	}
	if at := one.Shipping.Shipments[0].UploadedAt; at == nil || !at.Equal(t0) {
		t.Fatalf("first shipment uploadedAt %v", at)
	}
	two := shipped(t, one, inventory.Shipment{ID: "p2", Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "YT9"})
	if two.Shipping.Shipments[1].UploadedAt != nil {
		t.Fatalf("a queued shipment has an uploadedAt")
	}
	two = two.ShippingResult(2, "", false, t0.Add(time.Hour)).Order
	if a, b := two.Shipping.Shipments[0].UploadedAt, two.Shipping.Shipments[1].UploadedAt; !a.Equal(t0) || !b.Equal(t0.Add(time.Hour)) {
		t.Errorf("uploadedAt %v, %v", a, b)
	}
}
