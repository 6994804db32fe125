package inventory_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// paidOrder is pendingOrder paid: 3 cups and 1 saucer.
func paidOrder() *inventory.Order {
	o := pendingOrder()
	o.Status, o.TransactionID = inventory.StatusPaid, "4200000000000000000000000001"
	return o
}

var parcel = inventory.Shipment{ID: "p1", Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "YT1",
	Items: []inventory.ShippedItem{{SKU: "cup", Qty: 2}}}

// shipped applies c to o as the store would, returning the order after.
func shipped(t *testing.T, o *inventory.Order, s inventory.Shipment) *inventory.Order {
	t.Helper()
	c, err := o.Ship(s)
	if err != nil || c.Kind != inventory.ChangeShip || c.From != inventory.StatusPaid || c.Guards != inventory.GuardShipping|inventory.GuardRefunds {
		t.Fatalf("Ship %s = %+v, %v", s.ID, c, err)
	}
	return c.Order
}

func TestShip_Decisions(t *testing.T) {
	o := shipped(t, paidOrder(), parcel)
	if o.Status != inventory.StatusPaid || o.Shipping.Status != inventory.ShippingQueued || len(o.Shipping.Shipments) != 1 {
		t.Fatalf("after the first parcel: %+v", o.Shipping)
	}
	if left := o.Unshipped(); fmt.Sprint(left) != "map[cup:1 saucer:1]" {
		t.Errorf("unshipped %v", left)
	}
	if c, err := o.Ship(parcel); err != nil || !c.None() {
		t.Errorf("the same shipment again: %v, %v; want NoChange", c.Kind, err)
	}
	other := parcel
	other.TrackingNo = "YT2"
	if _, err := o.Ship(other); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("the id with another tracking number: %v", err)
	}
	rest := inventory.Shipment{ID: "p2", Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "YT3"}
	all := shipped(t, o, rest)
	if got := all.Shipping.Shipments[1].Items; fmt.Sprint(got) != "[{cup 1} {saucer 1}]" {
		t.Errorf("a shipment without items holds what was left: %v", got)
	}
	if c, err := all.Ship(rest); err != nil || !c.None() {
		t.Errorf("its replay without items: %v, %v; want NoChange", c.Kind, err)
	}
	third := rest
	third.ID = "p3"
	if _, err := all.Ship(third); !errors.Is(err, inventory.ErrNotShippable) {
		t.Errorf("shipping a fully shipped order: %v", err)
	}
}

func TestShip_Refusals(t *testing.T) {
	whole := inventory.Shipment{ID: "w", Logistics: inventory.LogisticsSameCity}
	tests := []struct {
		name    string
		order   func() *inventory.Order
		s       inventory.Shipment
		invalid bool  // an *InvalidRequestError
		want    error // else this sentinel
	}{
		{"Unpaid", pendingOrder, parcel, false, inventory.ErrNotShippable},
		{"Refunding", func() *inventory.Order { o := paidOrder(); o.Status = inventory.StatusRefunding; return o }, parcel, false, inventory.ErrNotShippable},
		{"Refunded", func() *inventory.Order { o := paidOrder(); o.Status = inventory.StatusRefunded; return o }, parcel, false, inventory.ErrNotShippable},
		{"Cancelled", func() *inventory.Order { o := pendingOrder(); o.Status = inventory.StatusCancelled; return o }, parcel, false, inventory.ErrNotShippable},
		{"SKUNotInOrder", paidOrder, inventory.Shipment{ID: "x", Logistics: inventory.LogisticsExpress, Carrier: "SF", TrackingNo: "1", Contact: "189****1234",
			Items: []inventory.ShippedItem{{SKU: "mug", Qty: 1}}}, true, nil},
		{"MoreThanOrdered", paidOrder, inventory.Shipment{ID: "x", Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "1",
			Items: []inventory.ShippedItem{{SKU: "cup", Qty: 4}}}, true, nil},
		{"SameCityPart", paidOrder, inventory.Shipment{ID: "x", Logistics: inventory.LogisticsSameCity, Items: []inventory.ShippedItem{{SKU: "cup", Qty: 3}}}, true, nil},
		{"SameCityAfterAParcel", func() *inventory.Order { return shipped(t, paidOrder(), parcel) }, whole, true, nil},
		{"ExpressAfterWholeSameCity", func() *inventory.Order {
			o := shipped(t, paidOrder(), inventory.Shipment{ID: "w", Logistics: inventory.LogisticsSameCity,
				Items: []inventory.ShippedItem{{SKU: "cup", Qty: 3}, {SKU: "saucer", Qty: 1}}})
			return o
		}, parcel, false, inventory.ErrNotShippable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.order().Ship(tt.s)
			var inv *inventory.InvalidRequestError
			if tt.invalid && !errors.As(err, &inv) || !tt.invalid && !errors.Is(err, tt.want) {
				t.Errorf("err %v", err)
			}
		})
	}
}

// WeChat splits a payment into at most 15 parcels ("发货信息录入", 注意事项 5).
func TestShip_AtMostFifteenParcels(t *testing.T) {
	o := paidOrder()
	o.Items[0].Qty = 20
	for i := range inventory.MaxShipments {
		o = shipped(t, o, inventory.Shipment{ID: fmt.Sprint("p", i), Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "1",
			Items: []inventory.ShippedItem{{SKU: "cup", Qty: 1}}})
	}
	var inv *inventory.InvalidRequestError
	if _, err := o.Ship(inventory.Shipment{ID: "p15", Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "1"}); !errors.As(err, &inv) {
		t.Errorf("a 16th parcel: %v", err)
	}
}

func TestShipment_Check(t *testing.T) {
	for _, s := range []inventory.Shipment{
		{ID: "", Logistics: inventory.LogisticsVirtual},
		{ID: "a b", Logistics: inventory.LogisticsVirtual},
		{ID: "x", Logistics: "drone"},
		{ID: "x", Logistics: inventory.LogisticsExpress, Carrier: "YTO"},
		{ID: "x", Logistics: inventory.LogisticsExpress, TrackingNo: "1"},
		{ID: "x", Logistics: inventory.LogisticsExpress, Carrier: "SF", TrackingNo: "1", Contact: "13912345678"},
		{ID: "x", Logistics: inventory.LogisticsVirtual, Items: []inventory.ShippedItem{{SKU: "cup", Qty: 0}}},
		{ID: "x", Logistics: inventory.LogisticsVirtual, Items: []inventory.ShippedItem{{SKU: "cup", Qty: 1}, {SKU: "cup", Qty: 1}}},
	} {
		var inv *inventory.InvalidRequestError
		if err := s.Check(); !errors.As(err, &inv) {
			t.Errorf("%+v: %v", s, err)
		}
	}
	if err := (inventory.Shipment{ID: "x", Logistics: inventory.LogisticsExpress, Carrier: "SF", TrackingNo: "SF1", Contact: "021-****1234"}).Check(); err != nil {
		t.Errorf("valid SF shipment: %v", err)
	}
}

func TestShippingResult(t *testing.T) {
	o := shipped(t, paidOrder(), parcel)
	retry := o.ShippingResult(1, "not stored yet", false, t0)
	if retry.Kind != inventory.ChangeShippingResult || retry.Order.Shipping.Status != inventory.ShippingQueued || retry.Order.Shipping.Error != "not stored yet" {
		t.Fatalf("a retried failure: %+v", retry.Order.Shipping)
	}
	if c := retry.Order.ShippingResult(1, "not stored yet", false, t0); !c.None() {
		t.Errorf("the same retried failure again writes %v", c.Kind)
	}
	ok := retry.Order.ShippingResult(1, "", false, t0)
	if s := ok.Order.Shipping; s.Status != inventory.ShippingUploaded || s.Error != "" || s.Uploaded != 1 || !s.UploadedAt.Equal(t0) {
		t.Errorf("accepted: %+v", s)
	}
	if s := o.ShippingResult(1, "refused", true, t0).Order.Shipping; s.Status != inventory.ShippingFailed {
		t.Errorf("refused for good: %+v", s)
	}
	refunding := *ok.Order
	refunding.Status = inventory.StatusRefunding
	if c := refunding.ShippingResult(1, "", false, t0); !c.None() {
		t.Errorf("a result on an order no longer PAID writes %v", c.Kind)
	}
}

// A refund of the whole order cancels a shipment nothing of which was uploaded, and
// leaves one WeChat holds alone; either way the refund is guarded by the shipping read.
func TestStartRefund_CancelsAShipmentNotUploaded(t *testing.T) {
	req := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "r"}
	queued := shipped(t, paidOrder(), parcel)
	c, err := queued.StartRefund(req, 0, t0, inventory.Retry{})
	if err != nil || c.Order.Shipping.Status != inventory.ShippingCancelled || !c.Guards.Has(inventory.GuardShipping) {
		t.Errorf("refund of a queued shipment: %+v %v", c.Order.Shipping, err)
	}
	uploaded := queued.ShippingResult(1, "", false, t0).Order
	if c, _ := uploaded.StartRefund(req, 0, t0, inventory.Retry{}); c.Order.Shipping.Status != inventory.ShippingUploaded {
		t.Errorf("refund of an uploaded shipment: %+v", c.Order.Shipping)
	}
	// Shipping as read even when there is none: a shipment recorded meanwhile makes
	// the refund decide again (and cancel it), never overwrites it.
	if c, _ := paidOrder().StartRefund(req, 0, t0, inventory.Retry{}); c.Order.Shipping != nil || !c.Guards.Has(inventory.GuardShipping|inventory.GuardPresale) {
		t.Errorf("refund of an order never shipped: %+v guards %v", c.Order.Shipping, c.Guards)
	}
}

// A presale ships 15 to 330 days after payment ("特殊发货报备"); it is declared before
// anything ships.
func TestDeclarePresale(t *testing.T) {
	paid := paidOrder()
	at := t0.Add(time.Hour)
	paid.PaidAt = &at
	day := 24 * time.Hour
	var inv *inventory.InvalidRequestError
	for _, d := range []time.Duration{15*day - time.Second, 330*day + time.Second} {
		if _, err := paid.DeclarePresale(at.Add(d)); !errors.As(err, &inv) {
			t.Errorf("ship %v after payment: %v", d, err)
		}
	}
	c, err := paid.DeclarePresale(at.Add(15 * day))
	if err != nil || c.Kind != inventory.ChangePresale || c.Guards != inventory.GuardPresale || c.Order.Presale.Status != inventory.ShippingQueued {
		t.Fatalf("a presale in 15 days: %+v %v", c, err)
	}
	if again, err := c.Order.DeclarePresale(at.Add(15 * day)); err != nil || !again.None() {
		t.Errorf("the same presale again: %v %v", again.Kind, err)
	}
	done := c.Order.PresaleResult("", false, t0)
	if done.Order.Presale.Status != inventory.PresaleDeclared || !done.Order.Presale.DeclaredAt.Equal(t0) {
		t.Errorf("accepted: %+v", done.Order.Presale)
	}
	if c := done.Order.PresaleResult("", false, t0); !c.None() {
		t.Errorf("a result after DECLARED writes %v", c.Kind)
	}
	if _, err := pendingOrder().DeclarePresale(at.Add(20 * day)); !errors.Is(err, inventory.ErrNotShippable) {
		t.Errorf("an unpaid order: %v", err)
	}
	if _, err := shipped(t, paid, parcel).DeclarePresale(at.Add(20 * day)); !errors.Is(err, inventory.ErrNotShippable) {
		t.Errorf("an order partly shipped: %v", err)
	}
}

// A partly refunded order ships what the buyer still paid for, and its partial refund
// leaves a queued shipment as it is; the refund of the rest cancels it.
func TestShip_AfterAPartialRefund(t *testing.T) {
	one := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "r",
		Lines: []inventory.RefundLine{{SKU: "cup", Qty: 1}}}
	c, err := paidOrder().StartRefund(one, 0, t0, inventory.Retry{})
	if err != nil || c.Order.Status != inventory.StatusPaid {
		t.Fatalf("refund of one cup: %+v, %v", c.Order, err)
	}
	if left := c.Order.Unshipped(); fmt.Sprint(left) != "map[cup:2 saucer:1]" {
		t.Errorf("unshipped after refunding one cup: %v", left)
	}
	whole := inventory.Shipment{ID: "w", Logistics: inventory.LogisticsSameCity}
	if got := shipped(t, c.Order, whole).Shipping.Shipments[0].Items; fmt.Sprint(got) != "[{cup 2} {saucer 1}]" {
		t.Errorf("a same-city shipment of the rest holds %v", got)
	}
	queued := shipped(t, paidOrder(), parcel)
	c, err = queued.StartRefund(one, 0, t0, inventory.Retry{})
	if err != nil || c.Order.Shipping.Status != inventory.ShippingQueued {
		t.Errorf("a partial refund of a queued shipment: %+v, %v", c.Order.Shipping, err)
	}
	rest := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "r"}
	c, err = c.Order.StartRefund(rest, 0, t0, inventory.Retry{})
	if err != nil || c.Order.Status != inventory.StatusRefunding || c.Order.Shipping.Status != inventory.ShippingCancelled {
		t.Errorf("the refund of the rest: %s %+v, %v", c.Order.Status, c.Order.Shipping, err)
	}
}

// The refund of the whole order cancels a presale declaration not made yet; one
// WeChat accepted stays DECLARED.
func TestStartRefund_CancelsAPresaleNotDeclared(t *testing.T) {
	at := t0
	paid := paidOrder()
	paid.PaidAt = &at
	c, err := paid.DeclarePresale(at.Add(20 * 24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	req := inventory.RefundRequest{Requester: inventory.Merchant, Goods: inventory.ReturnGoods, By: "op", Reason: "r"}
	r, err := c.Order.StartRefund(req, 0, t0, inventory.Retry{})
	if err != nil || r.Order.Presale.Status != inventory.ShippingCancelled {
		t.Errorf("refund of a queued presale: %+v %v", r.Order.Presale, err)
	}
	declared := c.Order.PresaleResult("", false, t0).Order
	if r, _ := declared.StartRefund(req, 0, t0, inventory.Retry{}); r.Order.Presale.Status != inventory.PresaleDeclared {
		t.Errorf("refund of a declared presale: %+v", r.Order.Presale)
	}
}

// An SF parcel without the merchant's contact takes the order address's phone, masked,
// as contact.receiver_contact; the same request again is the same shipment; an order
// without an address cannot fill it.
func TestShip_SFContactFilledFromTheAddressMasked(t *testing.T) {
	sf := inventory.Shipment{ID: "sf1", Logistics: inventory.LogisticsExpress, Carrier: "SF", TrackingNo: "SF1",
		Items: []inventory.ShippedItem{{SKU: "cup", Qty: 1}}}
	o := paidOrder()
	o.Address = &inventory.Address{UserName: "张三", TelNumber: "18912341234", ProvinceName: "广东省", CityName: "广州市", DetailInfo: "新港中路397号"}
	after := shipped(t, o, sf)
	got, _ := after.Shipment("sf1")
	if got.ReceiverContact != "189****1234" || got.Contact != "" {
		t.Fatalf("shipment %+v, want receiverContact 189****1234", got)
	}
	if c, err := after.Ship(sf); err != nil || !c.None() {
		t.Errorf("the same SF shipment again: %v %v, want no change", c, err)
	}
	var inv *inventory.InvalidRequestError
	if _, err := paidOrder().Ship(sf); !errors.As(err, &inv) {
		t.Errorf("SF without contact nor address: %v, want an invalid request", err)
	}
}
