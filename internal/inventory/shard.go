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

// Allocate splits qty units over the shards (shard → units), on as few shards as
// cover the line, since each shard a line uses is one more transaction action
// (CheckCartSize). When shards can cover the whole line alone (an UnknownStock shard
// counts as able), one of them is picked at random, so concurrent buyers spread over
// the shards. Otherwise the line is split over the fullest shards first (ties in
// random order), which takes the fewest shards any split can. It reports false when
// the counts together cannot cover qty.
func (s ShardStock) Allocate(qty int) (map[int]int, bool) {
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
	slices.SortStableFunc(order, func(a, b int) int { return s[b] - s[a] })
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
