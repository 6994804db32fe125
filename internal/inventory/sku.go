package inventory

// SKU bounds.
const (
	// MaxShards is the most stock shard items one SKU may be split into, so that one
	// order line's shards plus the order fit in one transaction.
	MaxShards = 64
	// MaxPrice is the highest unit price, in fen (¥10,000,000), so that no order amount
	// (at most MaxLines lines × MaxQty units) can overflow.
	MaxPrice = 1_000_000_000
)

// NewSKU describes a SKU to put on sale.
type NewSKU struct {
	ID           string // 1-64 of [0-9A-Za-z_.:-]
	Name         string // shown to buyers
	Price        int64  // fen, 1..MaxPrice
	Stock        int    // initial on-hand units, ≥ 0
	LimitPerUser int    // most units per user over all their orders, 0 = no limit
	Shards       int    // stock shard items, 1..MaxShards; 0 means ShardsForPeak(PeakOrdersPerSecond)
	Ref          string // adjustment id naming the initial ADJUST ledger entry; "" means "init"
	// PeakOrdersPerSecond is the operator's expected peak of orders per second for
	// the SKU's sale, ≥ 0; it sizes Shards when Shards is 0 (0: no expectation, 1 shard).
	PeakOrdersPerSecond int
}

// WithDefaults fills the zero fields that have defaults: Shards
// ShardsForPeak(PeakOrdersPerSecond) (1 without a peak), Ref "init".
func (n NewSKU) WithDefaults() NewSKU {
	if n.Shards == 0 {
		n.Shards = ShardsForPeak(n.PeakOrdersPerSecond)
	}
	if n.Ref == "" {
		n.Ref = "init"
	}
	return n
}

// Validate checks n (defaults filled) against the SKU bounds. It returns an error
// wrapping ErrInvalidRequest, with a message safe to show, for a bad id, an empty
// name, a price outside 1..MaxPrice fen, a negative stock, limit or peak, or a shard count
// outside 1..MaxShards.
func (n NewSKU) Validate() error {
	switch {
	case !ValidSKUID(n.ID):
		return InvalidError("skuId %q must be 1-64 characters of [0-9A-Za-z_.:-]", n.ID)
	case n.Name == "":
		return InvalidError("SKU %s needs a name", n.ID)
	case n.Price < 1 || n.Price > MaxPrice:
		return InvalidError("SKU %s price must be 1 to %d fen", n.ID, int64(MaxPrice))
	case n.Stock < 0 || n.LimitPerUser < 0 || n.PeakOrdersPerSecond < 0:
		return InvalidError("SKU %s stock, limitPerUser and peakOrdersPerSecond must not be negative", n.ID)
	case n.Shards < 1 || n.Shards > MaxShards:
		return InvalidError("SKU %s shards must be 1 to %d", n.ID, MaxShards)
	}
	return nil
}

// Split spreads the initial stock over the shards (shard → units): evenly, the
// remainder one unit each on the lowest shards.
func (n NewSKU) Split() map[int]int {
	out := make(map[int]int, n.Shards)
	for i := range n.Shards {
		out[i] = n.Stock / n.Shards
		if i < n.Stock%n.Shards {
			out[i]++
		}
	}
	return out
}
