package inventory

// Transfer moves Units available units from shard From to shard To (a MOVE: −Units
// on From, +Units on To, nothing for the SKU).
type Transfer struct {
	From, To, Units int
}

// Rebalance plans how to spread a SKU's available units (per shard, as read) over
// its first target shards: shards at or past target are emptied, the others brought
// to an even share of the total (the remainder one unit each on the lowest). A shard
// within max(1, share/10) units of its share is left alone, so buyers draining
// shards meanwhile do not set off endless small moves; an emptied shard is always
// emptied. Reserved units never move: they belong to the orders holding them.
func (s ShardStock) Rebalance(target int) []Transfer {
	total := 0
	for _, a := range s {
		total += max(a, 0)
	}
	goal := func(n int) int {
		if n >= target {
			return 0
		}
		g := total / target
		if n < total%target {
			g++
		}
		return g
	}
	var give, take []Transfer // From/To filled, Units = how many
	for n, a := range s {
		a = max(a, 0)
		g := goal(n)
		slack := max(1, g/10)
		switch {
		case n >= target && a > 0:
			give = append(give, Transfer{From: n, Units: a})
		case n < target && a > g+slack:
			give = append(give, Transfer{From: n, Units: a - g})
		case n < target && a < g-slack || n < target && a < g && len(s) > target:
			take = append(take, Transfer{To: n, Units: g - a})
		}
	}
	var out []Transfer
	for len(give) > 0 && len(take) > 0 {
		q := min(give[0].Units, take[0].Units)
		out = append(out, Transfer{From: give[0].From, To: take[0].To, Units: q})
		if give[0].Units -= q; give[0].Units == 0 {
			give = give[1:]
		}
		if take[0].Units -= q; take[0].Units == 0 {
			take = take[1:]
		}
	}
	for _, g := range give { // units on emptied shards with no shard short of its share
		if g.From >= target {
			out = append(out, Transfer{From: g.From, To: g.From % target, Units: g.Units})
		}
	}
	return out
}
