package inventory

import (
	"math/rand/v2"
	"slices"
)

// UnknownStock marks a shard whose available count has not been seen; allocation
// counts it as able to serve any line (the reservation's condition decides).
const UnknownStock = -1

// ShardStock is one SKU's available units per shard: index n is shard n.
type ShardStock []int

// Allocate splits qty units over the shards (shard → units). When shards can cover
// the whole line alone (an UnknownStock shard counts as able), one of them is picked
// at random, so concurrent buyers spread over the shards. Otherwise the line is
// split: over the shards in random order, or, with fewest, over the fullest shards
// first, so that it needs as few shards (transaction actions) as possible. It reports
// false when the counts together cannot cover qty.
func (s ShardStock) Allocate(qty int, fewest bool) (map[int]int, bool) {
	var whole []int
	for n, have := range s {
		if have < 0 || have >= qty { // UnknownStock (or a count gone negative)
			whole = append(whole, n)
		}
	}
	if len(whole) > 0 {
		return map[int]int{whole[rand.IntN(len(whole))]: qty}, true
	}
	order := rand.Perm(len(s))
	if fewest {
		slices.SortStableFunc(order, func(a, b int) int { return s[b] - s[a] })
	}
	alloc := map[int]int{}
	left := qty
	for _, n := range order {
		if take := min(s[n], left); take > 0 {
			alloc[n] = take
			left -= take
		}
	}
	return alloc, left == 0
}
