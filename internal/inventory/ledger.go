package inventory

// Op is a stock_log ledger operation (docs/design.md, "The ledger"). Every write of
// stock takes what it does to the counters from Op.Effect, so the design's table
// exists once in code, here.
type Op string

// Ledger operations.
const (
	OpReserve Op = "RESERVE" // createOrder: units leave available for a PENDING order
	OpRelease Op = "RELEASE" // closeOrder (timeout, cancel, sweep): reserved units back to available
	OpCommit  Op = "COMMIT"  // payCallback: reserved units leave on-hand (sold)
	OpReturn  Op = "RETURN"  // refund after payment: units come back, sellable again
	OpAdjust  Op = "ADJUST"  // operator restock (q > 0) or write-off (q < 0)
	OpMove    Op = "MOVE"    // reshard: −q on the shard units leave, +q on the one they reach
	OpRepair  Op = "REPAIR"  // reconcile auto-repair: deltas found, not given by the table
	// OpHold and OpUnhold are the waitlist's (docs/design.md, "Waiting room"): units
	// leave available into a waitlisted buyer's exclusive hold (a reservation without
	// an order), and come back out of it, to available when the hold runs out or its
	// buyer leaves, or into the buyer's order (with that order's RESERVE).
	OpHold   Op = "HOLD"
	OpUnhold Op = "UNHOLD"
)

// Delta is a change to stock counters, in units. Reserved is always OnHand −
// Available for a ledger op's effect; only a repair of a drifted reserved counter
// sets it apart.
type Delta struct {
	Available, OnHand, Reserved int
}

// Plus is the sum of two changes, e.g. the one shard update that carries both the
// RESERVE and the COMMIT of a late payment.
func (d Delta) Plus(e Delta) Delta {
	return Delta{Available: d.Available + e.Available, OnHand: d.OnHand + e.OnHand, Reserved: d.Reserved + e.Reserved}
}

// Times scales d by q units.
func (d Delta) Times(q int) Delta {
	return Delta{Available: d.Available * q, OnHand: d.OnHand * q, Reserved: d.Reserved * q}
}

// perUnit is the ledger table (docs/design.md, "The ledger"): what each op does to available, on-hand and reserved
// per unit it moves. REPAIR has no row: its deltas are what reconcile found.
var perUnit = map[Op]Delta{
	OpReserve: {Available: -1, Reserved: +1},
	OpRelease: {Available: +1, Reserved: -1},
	OpCommit:  {OnHand: -1, Reserved: -1},
	OpReturn:  {Available: +1, OnHand: +1},
	OpAdjust:  {Available: +1, OnHand: +1},
	OpMove:    {Available: +1, OnHand: +1},
	OpHold:    {Available: -1, Reserved: +1},
	OpUnhold:  {Available: +1, Reserved: -1},
}

// Effect is what op does to the counters when it moves q units: for RESERVE,
// RELEASE, COMMIT and RETURN q is the line's units (≥ 0); for ADJUST and MOVE q is
// signed (a write-off, or units leaving a shard, is negative); for HOLD and UNHOLD q is
// the hold's units (≥ 0). It reports false for
// REPAIR and unknown ops, whose deltas are recorded rather than derived.
func (op Op) Effect(q int) (Delta, bool) {
	d, ok := perUnit[op]
	return d.Times(q), ok
}
