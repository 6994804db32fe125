package inventory

// Sizing a SKU's shards from the expected peak of a sale.
//
// DynamoDB serves at most 1,000 write capacity units per second on one partition
// (Amazon DynamoDB Developer Guide, "Throughput default quotas" / partition limits),
// and one shard item lives in one partition. A reservation writes its shard item
// inside TransactWriteItems, and a transactional write costs 2 WCU per KB of item
// (Developer Guide, "Capacity unit consumption for transactional operations"); a
// shard item is well under 1 KB, so the documented bound is 1,000 / 2 = 500 orders
// per second per shard. Reservations racing for one shard item also cancel each
// other (TransactionConflict), so the figure used is the one measured: the hot-SKU
// sweep (tools/cmd/hotsku: createOrder through tools/internal/ddblimits, a model of
// those limits) served 400 to 430 orders/s per shard at twice that load, on 1 to 64
// shards.
const (
	// ShardCeilingOrdersPerSecond is the most orders per second one shard item took
	// in the hot-SKU sweep, rounded down (the documented bound is 500; conflicts cost
	// the rest).
	ShardCeilingOrdersPerSecond = 400
	// ShardHeadroom is how far below the ceiling shards are planned to run at the
	// peak: 2 means each shard expects at most half its ceiling (200 orders/s), where
	// the sweep saw almost no BUSY answers (at most 1.8 % at 250 orders/s per shard, on
	// one shard), leaving room for an underestimated peak and uneven spreading. Over
	// an order's whole life a shard takes 4 write units (the reservation, then the
	// payment's commit or the release, 2 each), so its documented bound is 250
	// orders/s when payments and releases come in the same second: 200 still fits
	// (the whole-sale rehearsal, tools/internal/rehearse, and its planner,
	// internal/stockctl/plan, which sizes shards with this function as POST /admin/skus
	// does).
	ShardHeadroom = 2
)

// ShardsForPeak is the shard count for a SKU expected to take peak orders per second
// at most: ceil(peak × ShardHeadroom / ShardCeilingOrdersPerSecond), at least 1 and at
// most MaxShards (64, so 64 × 400 / 2 = 12,800 orders/s at the planned load). A peak
// of 0 or less means no expectation: 1 shard. Any peak up to math.MaxInt is sized
// without overflow.
func ShardsForPeak(peak int) int {
	if peak <= 0 {
		return 1
	}
	// A peak at or above what MaxShards plan for gets MaxShards before the product
	// below can overflow int.
	if peak >= MaxShards*ShardCeilingOrdersPerSecond/ShardHeadroom {
		return MaxShards
	}
	n := (peak*ShardHeadroom + ShardCeilingOrdersPerSecond - 1) / ShardCeilingOrdersPerSecond
	return max(n, 1)
}
