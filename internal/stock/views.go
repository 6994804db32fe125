package stock

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// skuJSON is the merchant API's SKU: the buyer's view plus the stock per shard
// (units), the limit, the shard count and the last change. Times are RFC 3339 UTC,
// money fen.
type skuJSON struct {
	SKU          string `json:"skuId"`
	Name         string `json:"name"`
	Price        int64  `json:"price"`
	Currency     string `json:"currency"`
	OnSale       bool   `json:"onSale"`
	Status       string `json:"status"`
	SaleStartsAt string `json:"saleStartsAt,omitempty"`
	LimitPerUser int    `json:"limitPerUser"`
	Delivery     string `json:"delivery"` // "express" or "none"
	// RiskThreshold is the scalper check's threshold: buyers whose WeChat risk rank is
	// at or above it get 403 RISK_REJECTED; 0: no check.
	RiskThreshold int                     `json:"riskThreshold"`
	Shards        int                     `json:"shards"`
	Available     int                     `json:"available"`
	Reserved      int                     `json:"reserved"`
	OnHand        int                     `json:"onHand"`
	PerShard      []inventory.ShardDetail `json:"perShard"`
	UpdatedBy     string                  `json:"updatedBy,omitempty"`
	UpdatedAt     string                  `json:"updatedAt,omitempty"`
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func skuView(d *inventory.SKUDetail, now time.Time) skuJSON {
	return skuJSON{
		SKU: d.ID, Name: d.Name, Price: d.Price, Currency: d.Currency, OnSale: d.OnSale,
		Status: string(d.Status(now)), SaleStartsAt: rfc3339(d.SaleStartsAt), LimitPerUser: d.LimitPerUser,
		Delivery: d.Delivery, RiskThreshold: d.RiskThreshold,
		Shards: d.Shards, Available: d.Available, Reserved: d.OnHand - d.Available, OnHand: d.OnHand,
		PerShard: d.PerShard, UpdatedBy: d.UpdatedBy, UpdatedAt: rfc3339(d.UpdatedAt),
	}
}

type skuPage struct {
	SKUs []skuJSON `json:"skus"`
	Next string    `json:"next,omitempty"` // the after= of the next page; absent on the last
}

type adjustmentJSON struct {
	AdjustmentID string  `json:"adjustmentId"`
	Delta        int     `json:"delta"`
	Reason       string  `json:"reason"`
	Replayed     bool    `json:"replayed"` // applied by an earlier request with the same body
	SKU          skuJSON `json:"sku"`
}

// entryJSON is one stock_log entry: deltas in units, shards shard → units.
type entryJSON struct {
	Key        string         `json:"key"`
	Ref        string         `json:"ref"`
	Op         string         `json:"op"`
	SKU        string         `json:"skuId"`
	Qty        int            `json:"qty"`
	DAvailable int            `json:"dAvailable"`
	DOnHand    int            `json:"dOnHand"`
	Shards     map[string]int `json:"shards,omitempty"`
	At         string         `json:"at"`
	Reason     string         `json:"reason,omitempty"`
	By         string         `json:"by,omitempty"`
}

func entryView(e inventory.LedgerEntry) entryJSON {
	v := entryJSON{Key: e.Key, Ref: e.Ref, Op: string(e.Op), SKU: e.SKU, Qty: e.Qty, DAvailable: e.DAvailable, DOnHand: e.DOnHand,
		At: rfc3339(e.At), Reason: e.Reason, By: e.By}
	if len(e.Shards) > 0 {
		v.Shards = map[string]int{}
		for _, n := range slices.Sorted(maps.Keys(e.Shards)) {
			v.Shards[strconv.Itoa(n)] = e.Shards[n]
		}
	}
	return v
}

type ledgerPage struct {
	Entries []entryJSON `json:"entries"`
	Next    string      `json:"next,omitempty"`
}
