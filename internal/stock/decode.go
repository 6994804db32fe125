package stock

import (
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Bounds of saleStartsAt: a year DynamoDB numbers and every client can represent.
var (
	earliestStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latestStart   = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// parseStart reads a saleStartsAt value: RFC 3339 in UTC ("…Z"), 2000 to 9999.
func parseStart(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.HasSuffix(s, "Z") || t.Before(earliestStart) || t.After(latestStart) {
		return time.Time{}, inventory.InvalidError("saleStartsAt must be an RFC 3339 time in UTC (ending in Z) between the years 2000 and 9999, e.g. 2026-11-11T10:00:00Z")
	}
	// Starts are kept in whole milliseconds: a finer one rounds up, never opening early.
	if ms := t.Truncate(time.Millisecond); !ms.Equal(t) {
		t = ms.Add(time.Millisecond)
	}
	return t.UTC(), nil
}

// newSKUBody is a POST /admin/skus body: the fields a PATCH may change and those
// fixed at creation.
type newSKUBody struct {
	patchBody
	SKU      *string `json:"skuId"`
	Currency *string `json:"currency"`
	Stock    *int    `json:"stock"`
	Shards   *int    `json:"shards"`
	// PeakOrdersPerSecond is the expected peak of orders per second; without shards
	// it sizes them (inventory.ShardsForPeak).
	PeakOrdersPerSecond *int `json:"peakOrdersPerSecond"`
}

const newSKUExample = `{"skuId":"cup-01","name":"Cup","price":39900,"stock":100,"limitPerUser":2,"shards":1,"onSale":true,"saleStartsAt":"2026-11-11T10:00:00Z"}`

// decodeNewSKU parses a POST /admin/skus body (docs/contract.md, "Merchant API"): skuId, name and price
// required; currency CNY when given; onSale true and delivery "express" when not given; no field null. Bounds are checked by
// inventory.NewSKU.Validate.
func decodeNewSKU(req events.APIGatewayV2HTTPRequest) (inventory.NewSKU, error) {
	var b newSKUBody
	fields, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, newSKUExample,
		"skuId", "name", "price", "currency", "stock", "limitPerUser", "shards", "onSale", "saleStartsAt", "peakOrdersPerSecond", "delivery")
	if err != nil {
		return inventory.NewSKU{}, err
	}
	if err := httpapi.NotNull(fields); err != nil {
		return inventory.NewSKU{}, err
	}
	switch {
	case b.SKU == nil || b.Name == nil || b.Price == nil:
		return inventory.NewSKU{}, inventory.InvalidError("skuId, name and price are required; example: %s", newSKUExample)
	case b.Currency != nil && *b.Currency != inventory.Currency:
		return inventory.NewSKU{}, inventory.InvalidError("currency must be %s", inventory.Currency)
	case b.Shards != nil && *b.Shards == 0:
		return inventory.NewSKU{}, inventory.InvalidError("shards must be 1 to %d", inventory.MaxShards)
	}
	in := inventory.NewSKU{ID: *b.SKU, Name: *b.Name, Price: *b.Price, OffSale: b.OnSale != nil && !*b.OnSale}
	if b.Delivery != nil {
		if in.Delivery = *b.Delivery; in.Delivery == "" { // "" would be taken as the default
			return inventory.NewSKU{}, inventory.InvalidError("delivery must be %q or %q", inventory.DeliveryExpress, inventory.DeliveryNone)
		}
	}
	for _, f := range []struct {
		dst *int
		src *int
	}{{&in.Stock, b.Stock}, {&in.LimitPerUser, b.LimitPerUser}, {&in.Shards, b.Shards}, {&in.PeakOrdersPerSecond, b.PeakOrdersPerSecond}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	start, err := b.start()
	if err != nil {
		return inventory.NewSKU{}, err
	}
	in.SaleStartsAt = start
	in = in.WithDefaults()
	return in, in.Validate()
}

// patchBody is a PATCH /admin/skus/{skuId} body.
type patchBody struct {
	Name         *string `json:"name"`
	Price        *int64  `json:"price"`
	LimitPerUser *int    `json:"limitPerUser"`
	OnSale       *bool   `json:"onSale"`
	SaleStartsAt *string `json:"saleStartsAt"`
	Delivery     *string `json:"delivery"` // "express" (the default) or "none"
	// RiskThreshold is the scalper check's threshold, 0 (off) to inventory.MaxRiskRank.
	RiskThreshold *int `json:"riskThreshold"`
}

// start is SaleStartsAt parsed (see parseStart), the zero time when not given or null.
func (b patchBody) start() (time.Time, error) {
	if b.SaleStartsAt == nil {
		return time.Time{}, nil
	}
	return parseStart(*b.SaleStartsAt)
}

const patchExample = `{"price":29900,"onSale":true,"saleStartsAt":"2026-11-11T10:00:00Z"}`

// decodePatch parses a PATCH /admin/skus/{skuId} body: any of name, price,
// limitPerUser, onSale, saleStartsAt (null clears the start time), delivery,
// riskThreshold. Bounds are checked
// by inventory.SKUPatch.Validate.
func decodePatch(req events.APIGatewayV2HTTPRequest) (inventory.SKUPatch, error) {
	var b patchBody
	fields, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, patchExample, "name", "price", "limitPerUser", "onSale", "saleStartsAt", "delivery", "riskThreshold")
	if err != nil {
		return inventory.SKUPatch{}, err
	}
	if err := httpapi.NotNull(fields, "saleStartsAt"); err != nil {
		return inventory.SKUPatch{}, err
	}
	p := inventory.SKUPatch{Name: b.Name, Price: b.Price, LimitPerUser: b.LimitPerUser, OnSale: b.OnSale, Delivery: b.Delivery, RiskThreshold: b.RiskThreshold}
	if _, ok := fields["saleStartsAt"]; ok {
		t, err := b.start()
		if err != nil {
			return inventory.SKUPatch{}, err
		}
		p.SaleStartsAt = &t
	}
	return p, p.Validate()
}

type adjustmentBody struct {
	ID     *string `json:"adjustmentId"`
	Delta  *int    `json:"delta"`
	Reason *string `json:"reason"`
}

const adjustmentExample = `{"adjustmentId":"restock-2026-11-10","delta":50,"reason":"restock from the warehouse"}`

// decodeAdjustment parses a POST /admin/skus/{skuId}/adjustments body: adjustmentId,
// delta and reason, all required. Bounds are checked by inventory.Adjustment.Validate.
func decodeAdjustment(req events.APIGatewayV2HTTPRequest) (inventory.Adjustment, error) {
	var b adjustmentBody
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, adjustmentExample, "adjustmentId", "delta", "reason"); err != nil {
		return inventory.Adjustment{}, err
	}
	if b.ID == nil || b.Delta == nil || b.Reason == nil {
		return inventory.Adjustment{}, inventory.InvalidError("adjustmentId, delta and reason are required; example: %s", adjustmentExample)
	}
	a := inventory.Adjustment{ID: *b.ID, Delta: *b.Delta, Reason: *b.Reason}
	return a, a.Validate()
}

// decodeShards parses a PUT /admin/skus/{skuId}/shards body: {"shards": 1..64}.
func decodeShards(req events.APIGatewayV2HTTPRequest) (int, error) {
	var b struct {
		Shards *int `json:"shards"`
	}
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, `{"shards":4}`, "shards"); err != nil {
		return 0, err
	}
	if b.Shards == nil || *b.Shards < 1 || *b.Shards > inventory.MaxShards {
		return 0, inventory.InvalidError("shards must be an integer from 1 to %d", inventory.MaxShards)
	}
	return *b.Shards, nil
}
