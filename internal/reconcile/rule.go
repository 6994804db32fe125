package reconcile

import (
	"fmt"
	"strconv"
	"strings"
)

// Check is a quantity reconcile compares (package doc, "What is checked").
type Check int

// Checks.
const (
	CheckShards                Check = iota + 1 // shard items found vs. the shard count the SKU record declares
	CheckAvailable                              // available vs. Σ of the ledger's available deltas
	CheckOnHand                                 // on-hand vs. Σ of the ledger's on-hand deltas
	CheckReserved                               // on-hand − available vs. the units of open orders
	CheckReservedCounter                        // the shard's reserved counter vs. the units of open orders
	CheckAvailableNonNegative                   // 0 ≤ available
	CheckAvailableWithinOnHand                  // available ≤ on-hand
	CheckSoldWithinStocked                      // Σ COMMIT − Σ RETURN ≤ Σ ADJUST
)

// checkNames are the rule names of the JSON report (docs/contract.md,
// "Merchant API": differences[].rule).
var checkNames = map[Check]string{
	CheckShards:                "shards",
	CheckAvailable:             "available",
	CheckOnHand:                "onHand",
	CheckReserved:              "reserved",
	CheckReservedCounter:       "reserved counter",
	CheckAvailableNonNegative:  "available >= 0",
	CheckAvailableWithinOnHand: "available <= onHand",
	CheckSoldWithinStocked:     "committed <= stocked",
}

func (c Check) String() string { return checkNames[c] }

// Bound reports whether c is an inequality: a bound need only stay broken to be
// confirmed, while an equality must keep its gap (actual − expected).
func (c Check) Bound() bool {
	return c == CheckAvailableNonNegative || c == CheckAvailableWithinOnHand || c == CheckSoldWithinStocked
}

// Rule is one rule a Difference breaks: a Check on a SKU as a whole, or on one of
// its shards (OnShard). Build it with SKURule or ShardRule. In JSON it is the
// contract's rule string: the check's name, prefixed with "shard <n> " on a shard.
type Rule struct {
	Check   Check
	Shard   int  // the shard number, when OnShard
	OnShard bool // false: the SKU's totals
}

// SKURule is c on a SKU's totals.
func SKURule(c Check) Rule { return Rule{Check: c} }

// ShardRule is c on shard n.
func ShardRule(n int, c Check) Rule { return Rule{Check: c, Shard: n, OnShard: true} }

func (r Rule) String() string {
	if r.OnShard {
		return "shard " + strconv.Itoa(r.Shard) + " " + r.Check.String()
	}
	return r.Check.String()
}

// MarshalText writes the rule's contract name.
func (r Rule) MarshalText() ([]byte, error) {
	if r.Check.String() == "" {
		return nil, fmt.Errorf("reconcile rule: unknown check %d", r.Check)
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a contract name written by MarshalText.
func (r *Rule) UnmarshalText(b []byte) error {
	name := string(b)
	*r = Rule{}
	if first, rest, ok := strings.Cut(name, " "); ok && first == "shard" {
		num, check, _ := strings.Cut(rest, " ")
		n, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("reconcile rule %q: shard %q", name, num)
		}
		r.Shard, r.OnShard, name = n, true, check
	}
	for c, s := range checkNames {
		if s == name {
			r.Check = c
			return nil
		}
	}
	return fmt.Errorf("reconcile rule %q: unknown", string(b))
}
