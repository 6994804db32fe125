package httpapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// The parcel's path shows each shipment's own upload time; a shipment uploaded before
// shipments kept one shows the shipping's last upload, a queued one none. The receipt
// is absent before a shipment, WAITING after, CONFIRMED with its time and method.
func TestOrderView_ShipmentsAndReceipt(t *testing.T) {
	t1, t2 := time.Date(2026, 11, 12, 1, 0, 0, 0, time.UTC), time.Date(2026, 11, 13, 1, 0, 0, 0, time.UTC)
	o := &inventory.Order{ID: "order-1", Status: inventory.StatusPaid, Currency: "CNY"}
	if v := httpapi.Order(o); v.Shipments != nil || v.Receipt != nil {
		t.Fatalf("before shipping: %+v, %+v", v.Shipments, v.Receipt)
	}
	o.Shipping = &inventory.Shipping{Status: inventory.ShippingQueued, Uploaded: 2, UploadedAt: &t2, Shipments: []inventory.Shipment{
		{ID: "legacy", Logistics: inventory.LogisticsExpress, Carrier: "YTO", TrackingNo: "YT1", Items: []inventory.ShippedItem{{SKU: "cup", Qty: 1}}},
		{ID: "p2", Logistics: inventory.LogisticsExpress, Carrier: "SF", TrackingNo: "SF1", ReceiverContact: "189****1234", UploadedAt: &t1},
		{ID: "p3", Logistics: inventory.LogisticsExpress, Carrier: "SF", TrackingNo: "SF2"},
	}}
	v := httpapi.Order(o)
	if len(v.Shipments) != 3 || v.Shipments[0].UploadedAt != "2026-11-13T01:00:00Z" || v.Shipments[1].UploadedAt != "2026-11-12T01:00:00Z" ||
		v.Shipments[2].UploadedAt != "" || v.Shipments[1].ReceiverContact != "189****1234" || v.Receipt == nil || *v.Receipt != (httpapi.ReceiptJSON{Status: "WAITING"}) {
		t.Fatalf("shipped: %+v, %+v", v.Shipments, v.Receipt)
	}
	o.Receipt = &inventory.Receipt{ConfirmedAt: t2, Method: inventory.ReceiptByBuyer}
	b, _ := json.Marshal(httpapi.MerchantOrder(o))
	var m struct {
		Receipt   map[string]string `json:"receipt"`
		Shipments []map[string]any  `json:"shipments"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Shipments) != 3 ||
		m.Receipt["status"] != "CONFIRMED" || m.Receipt["confirmedAt"] != "2026-11-13T01:00:00Z" || m.Receipt["method"] != "buyer" {
		t.Errorf("the merchant's view: %s", b)
	}
}
