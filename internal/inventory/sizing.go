package inventory

// Sizing a SKU's shards from the expected peak of a sale.
//
// DynamoDB serves at most 1,000 write capacity units per second on one partition
// (Amazon DynamoDB Developer Guide, "Throughput default quotas" / partition limits),
// and one shard item lives in one partition. A reservation writes its shard item
// inside TransactWriteItems, and a transactional write costs 2 WCU per KB of item
// (Developer Guide, "Capacity unit consumption for transactional operations"); a
// shard item is well under 1 KB, so one reservation costs its shard 2 WCU, and one
// shard can take at most 1,000 / 2 = 500 orders per second.
const (
	// ShardCeilingOrdersPerSecond is the most orders per second one shard item takes,
	// from DynamoDB's documented per-partition limit as worked out above. It is the
	// documented ceiling, not a measured one: replace it with the figure a sweep under
	// DynamoDB's limits measures (transaction conflicts on one item cost more).
	ShardCeilingOrdersPerSecond = 500
	// ShardHeadroom is how far below the ceiling shards are planned to run at the
	// peak: 2 means each shard expects at most half its ceiling, leaving room for the
	// peak to be underestimated, for uneven spreading over the shards and for retried
	// conflicts.
	ShardHeadroom = 2
)

// ShardsForPeak is the shard count for a SKU expected to take peak orders per second
// at most: ceil(peak × ShardHeadroom / ShardCeilingOrdersPerSecond), at least 1 and at
// most MaxShards (64, so 64 × 500 / 2 = 16,000 orders/s at the planned load). A peak
// of 0 or less means no expectation: 1 shard.
func ShardsForPeak(peak int) int {
	if peak <= 0 {
		return 1
	}
	n := (peak*ShardHeadroom + ShardCeilingOrdersPerSecond - 1) / ShardCeilingOrdersPerSecond
	return min(max(n, 1), MaxShards)
}
