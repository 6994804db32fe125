package inventory

import "time"

// ReshardResult is what one reshard call did (stock.Catalog's Reshard) (units).
type ReshardResult struct {
	SKU    string `json:"skuId"`
	Shards int    `json:"shards"`       // shard items the SKU has now
	Target int    `json:"targetShards"` // shard count asked for
	Moved  int    `json:"moved"`        // available units moved between shards by this call
	// Complete is false when shards past Target still hold units reserved by PENDING
	// orders: they stay (buyers may still use them) until those orders are paid or
	// released; call Reshard again then. Waitlist holds there move with their units
	// (docs/design.md, "A shrinking reshard moves a hold with its units").
	Complete bool `json:"complete"`
}

// ShardDetail is one shard item's counters (units).
type ShardDetail struct {
	Shard     int `json:"shard"`
	Available int `json:"available"`
	Reserved  int `json:"reserved"`
	OnHand    int `json:"onHand"`
	// UsedClaims is the shard's counters of admission claims used by orders
	// (units, AdmissionCredit): a SKU with a waiting room only; not shown.
	UsedClaims map[UsedKey]int `json:"-"`
}

// SKUDetail is a SKU with its stock per shard and its last change.
type SKUDetail struct {
	SKU
	PerShard  []ShardDetail // by shard number
	UpdatedBy string        // principal of the last change ("" when unknown)
	UpdatedAt time.Time     // when (zero when unknown)
}
