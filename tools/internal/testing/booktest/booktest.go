// Package booktest checks, for tests, that stockguard's books balance: it scans the
// skus, orders and stock_log tables whole and checks the conservation rules (docs/design.md, "Conservation")
// for every SKU and every shard, each order's ledger entries against its status, and
// every purchase counter against the orders that count on it. It is the brute-force
// oracle that tests hold the store (and the reconcile function) against; it reads
// everything, so it is no tool for production tables.
package booktest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Check fails t with every rule the tables break; see Problems.
func Check(t testing.TB, db *dynamodb.Client, tables dynamo.Tables) {
	t.Helper()
	problems, err := Problems(context.Background(), db, tables)
	if err != nil {
		t.Fatalf("books: %v", err)
	}
	for _, p := range problems {
		t.Errorf("books: %s", p)
	}
}

// counts are one SKU's or one shard's quantities, in units.
type counts struct {
	available, onHand, reserved   int // the counters on the shard items
	ledgerAvailable, ledgerOnHand int // Σ of the ledger's deltas
	pending                       int // Σ qty in PENDING orders
	adjusted, committed, returned int // Σ ADJUST (signed, on-hand), Σ COMMIT, Σ RETURN
}

type item = map[string]any

// Problems scans the three tables (strongly consistent) and returns one line per
// broken rule, empty when the books balance:
//   - per SKU and per shard: available = Σ ledger dAvailable and onHand = Σ ledger
//     dOnHand, each entry's deltas matching its op (inventory.Op.Effect: RESERVE −q/0,
//     RELEASE +q/0, COMMIT 0/−q, RETURN +q/+q, ADJUST and MOVE ±q/±q);
//   - onHand − available = reserved = Σ qty of PENDING orders + Σ units of HELD
//     waitlist entries;
//   - 0 ≤ available ≤ onHand; Σ COMMIT − Σ RETURN ≤ Σ ADJUST;
//   - each order line has a RESERVE entry; a CANCELLED order a RELEASE entry and no
//     COMMIT; a PAID order a COMMIT entry; a PENDING order neither; RETURN entries of
//     exactly the units its restocking refunds cover, of goods the order committed;
//   - a HELD waitlist entry has a HOLD entry and no UNHOLD; every other HOLD its UNHOLD;
//   - each purchase counter equals the units of its user's PENDING and PAID orders
//     counted on it, less the units their refunds gave back.
func Problems(ctx context.Context, db *dynamodb.Client, tables dynamo.Tables) ([]string, error) {
	var skus, orders, ledger []item
	for _, read := range []struct {
		table string
		into  *[]item
	}{{tables.SKUs, &skus}, {tables.Orders, &orders}, {tables.StockLog, &ledger}} {
		items, err := Scan(ctx, db, read.table)
		if err != nil {
			return nil, err
		}
		*read.into = items
	}
	a := &audit{bySKU: map[string]*counts{}, byShard: map[string]*counts{}, entries: map[string]map[string]bool{}, returns: map[string]map[string]int{}, bought: map[string]int{}}
	a.counters(skus)
	for _, e := range ledger {
		a.entry(e)
	}
	held := map[string]bool{}
	for _, o := range orders {
		switch o["kind"] {
		case "ORDER":
			a.order(o)
		case "WAIT":
			a.wait(o, held)
		}
	}
	a.holds(held)
	a.purchaseCounters(orders)
	a.balance()
	return a.problems, nil
}

// audit is one Problems run: what the tables add up to, and what is wrong.
type audit struct {
	bySKU    map[string]*counts
	byShard  map[string]*counts         // "sku#n"
	entries  map[string]map[string]bool // order id → "op#sku" present
	returns  map[string]map[string]int  // order id → sku → Σ RETURN units (one entry per restocking refund)
	bought   map[string]int             // limit#sku#user → units counted by orders
	problems []string
}

func (a *audit) bad(format string, args ...any) {
	a.problems = append(a.problems, fmt.Sprintf(format, args...))
}

func (a *audit) sku(sku string) *counts { return at(a.bySKU, sku) }

func (a *audit) shard(sku, n string) *counts { return at(a.byShard, sku+"#"+n) }

func at(m map[string]*counts, k string) *counts {
	if m[k] == nil {
		m[k] = &counts{}
	}
	return m[k]
}

// counters adds up the shard items' counters.
func (a *audit) counters(skus []item) {
	for _, it := range skus {
		if it["kind"] != "SHARD" {
			continue
		}
		sku, shard := str(it["skuId"]), strconv.Itoa(num(it["shard"]))
		for _, c := range []*counts{a.sku(sku), a.shard(sku, shard)} {
			c.available += num(it["available"])
			c.onHand += num(it["onHand"])
			c.reserved += num(it["reserved"])
		}
	}
}

// entry checks one ledger entry's deltas against its op and adds them up.
func (a *audit) entry(e item) {
	sku, op, q := str(e["skuId"]), inventory.Op(str(e["op"])), num(e["qty"])
	da, dh := num(e["dAvailable"]), num(e["dOnHand"])
	if want, fixed := op.Effect(q); fixed && (da != want.Available || dh != want.OnHand) {
		a.bad("ledger %s: deltas (%d, %d), want (%d, %d) for %s of %d", e["pk"], da, dh, want.Available, want.OnHand, op, q)
	}
	c := a.sku(sku)
	c.ledgerAvailable += da
	c.ledgerOnHand += dh
	switch op {
	case inventory.OpAdjust:
		c.adjusted += dh
	case inventory.OpCommit:
		c.committed += q
	case inventory.OpReturn:
		c.returned += q
	}
	if n, ok := e["shard"].(float64); ok { // a REPAIR entry: signed deltas on one shard
		sc := a.shard(sku, strconv.Itoa(int(n)))
		sc.ledgerAvailable += da
		sc.ledgerOnHand += dh
	}
	sign := 1
	if da < 0 || dh < 0 {
		sign = -1
	}
	shardSum := 0
	for n, units := range shards(e["shards"]) {
		shardSum += units
		sc := a.shard(sku, n)
		if da != 0 {
			sc.ledgerAvailable += sign * units
		}
		if dh != 0 {
			sc.ledgerOnHand += sign * units
		}
	}
	if shardSum != abs(q) && op != inventory.OpAdjust && op != inventory.OpRepair {
		a.bad("ledger %s: shards hold %d units, qty is %d", e["pk"], shardSum, q)
	}
	ref := str(e["ref"])
	if a.entries[ref] == nil {
		a.entries[ref] = map[string]bool{}
	}
	a.entries[ref][string(op)+"#"+sku] = true
	if op == inventory.OpReturn {
		if a.returns[ref] == nil {
			a.returns[ref] = map[string]int{}
		}
		a.returns[ref][sku] += q
	}
}

// order checks an order's lines against its ledger entries and counts what it holds.
func (a *audit) order(o item) {
	id, status := str(o["pk"]), inventory.Status(str(o["status"]))
	for _, raw := range list(o["items"]) {
		line := raw.(item)
		sku, q := str(line["skuId"]), num(line["qty"])
		has := func(op inventory.Op) bool { return a.entries[id][string(op)+"#"+sku] }
		if !has(inventory.OpReserve) {
			a.bad("order %s (%s): no RESERVE entry for %s", id, status, sku)
		}
		switch {
		case status == inventory.StatusCancelled && !has(inventory.OpRelease):
			a.bad("order %s (CANCELLED): no RELEASE entry for %s", id, sku)
		case status == inventory.StatusPending && (has(inventory.OpRelease) || has(inventory.OpCommit)):
			a.bad("order %s (PENDING): has a RELEASE or COMMIT entry for %s", id, sku)
		case status == inventory.StatusPaid && !has(inventory.OpCommit):
			a.bad("order %s (PAID): no COMMIT entry for %s", id, sku)
		case status == inventory.StatusCancelled && has(inventory.OpCommit):
			a.bad("order %s (CANCELLED): has a COMMIT entry for %s", id, sku)
		}
		a.returned(o, sku, q, has)
		if status == inventory.StatusPending {
			a.sku(sku).pending += q
			for n, units := range shards(line["shards"]) {
				a.shard(sku, n).pending += units
			}
		}
		if line["limited"] == true && (status == inventory.StatusPending || status == inventory.StatusPaid) {
			a.bought["limit#"+sku+"#"+str(o["userId"])] += q - refundedUnits(o, sku, false)
		}
	}
}

// wait checks a waitlist entry against its hold's ledger entries (ref): a HELD
// entry has HOLD and no UNHOLD, and its units count as reserved like a PENDING
// order's; it records the refs of held entries in held.
func (a *audit) wait(o item, held map[string]bool) {
	ref, sku, units := str(o["ref"]), str(o["skuId"]), num(o["units"])
	has := func(op inventory.Op) bool { return a.entries[ref][string(op)+"#"+sku] }
	if inventory.WaitState(str(o["state"])) != inventory.WaitHeld {
		return
	}
	held[ref] = true
	if !has(inventory.OpHold) || has(inventory.OpUnhold) {
		a.bad("waitlist entry %s (HELD): HOLD %t, UNHOLD %t for %s", o["pk"], has(inventory.OpHold), has(inventory.OpUnhold), sku)
	}
	a.sku(sku).pending += units
	for n, q := range shards(o["shards"]) {
		a.shard(sku, n).pending += q
	}
}

// holds checks that every hold the ledger shows (HOLD) was given back (UNHOLD) or
// is still held by an entry (held: the refs of HELD entries).
func (a *audit) holds(held map[string]bool) {
	for _, ref := range slices.Sorted(maps.Keys(a.entries)) {
		for k := range a.entries[ref] {
			op, sku, _ := strings.Cut(k, "#")
			if inventory.Op(op) == inventory.OpHold && !a.entries[ref][string(inventory.OpUnhold)+"#"+sku] && !held[ref] {
				a.bad("hold %s of %s: HOLD without UNHOLD and no HELD entry", ref, sku)
			}
		}
	}
}

// returned checks an order line's RETURN entries (has tells the entries of the order):
// exactly the units its restocking refunds cover, of goods it committed; an order
// refunded before refunds came in parts restocked its whole line or nothing.
func (a *audit) returned(o item, sku string, q int, has func(op inventory.Op) bool) {
	id, status := str(o["pk"]), inventory.Status(str(o["status"]))
	want := refundedUnits(o, sku, true)
	if o["refunds"] == nil && o["restocked"] == true && (status == inventory.StatusRefunding || status == inventory.StatusRefunded) {
		want = q
	}
	switch got := a.returns[id][sku]; {
	case got != want:
		a.bad("order %s (%s): RETURN entries of %d units of %s, its restocking refunds cover %d", id, status, got, sku, want)
	case got > 0 && !has(inventory.OpCommit):
		a.bad("order %s (%s): a RETURN entry for %s it never committed", id, status, sku)
	}
}

// refundedUnits is how many units of sku the refunds on order o cover (restocked:
// only those that went back to stock).
func refundedUnits(o item, sku string, restocked bool) int {
	n := 0
	for _, raw := range list(o["refunds"]) {
		r := raw.(item)
		if restocked && r["restocked"] != true {
			continue
		}
		for _, l := range list(r["lines"]) {
			if line := l.(item); str(line["skuId"]) == sku {
				n += num(line["qty"])
			}
		}
	}
	return n
}

// purchaseCounters checks every purchase counter against the orders counted on it.
func (a *audit) purchaseCounters(orders []item) {
	for _, o := range orders {
		if o["kind"] == "LIMIT" {
			k := str(o["pk"])
			if got := num(o["bought"]); got != a.bought[k] {
				a.bad("counter %s: bought %d, orders count %d", k, got, a.bought[k])
			}
			delete(a.bought, k)
		}
	}
	for k, n := range a.bought {
		if n != 0 {
			a.bad("counter %s: missing, orders count %d", k, n)
		}
	}
}

// balance checks the conservation rules for every SKU and every shard.
func (a *audit) balance() {
	for _, k := range slices.Sorted(maps.Keys(a.bySKU)) {
		a.check("SKU "+k, a.bySKU[k], true)
	}
	for _, k := range slices.Sorted(maps.Keys(a.byShard)) {
		a.check("shard "+k, a.byShard[k], false)
	}
}

// check applies the rules to one SKU (whole) or shard.
func (a *audit) check(name string, c *counts, whole bool) {
	if c.available != c.ledgerAvailable {
		a.bad("%s: available %d, ledger says %d", name, c.available, c.ledgerAvailable)
	}
	if c.onHand != c.ledgerOnHand {
		a.bad("%s: onHand %d, ledger says %d", name, c.onHand, c.ledgerOnHand)
	}
	if c.onHand-c.available != c.reserved || c.reserved != c.pending {
		a.bad("%s: onHand − available = %d, reserved counter %d, PENDING orders and holds hold %d", name, c.onHand-c.available, c.reserved, c.pending)
	}
	if c.available < 0 || c.available > c.onHand {
		a.bad("%s: available %d outside 0..onHand %d", name, c.available, c.onHand)
	}
	if whole && c.committed-c.returned > c.adjusted {
		a.bad("%s: committed %d − returned %d exceeds stocked %d", name, c.committed, c.returned, c.adjusted)
	}
}

// Scan reads every item of table, strongly consistent, page by page, decoded to
// plain maps (numbers as float64).
func Scan(ctx context.Context, db *dynamodb.Client, table string) ([]map[string]any, error) {
	var out []item
	pages := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		var items []item
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode %s: %w", table, err)
		}
		out = append(out, items...)
	}
	return out, nil
}

func str(v any) string { s, _ := v.(string); return s }

func num(v any) int { f, _ := v.(float64); return int(f) }

func list(v any) []any { l, _ := v.([]any); return l }

func abs(n int) int { return max(n, -n) }

// shards reads a ledger entry's or order line's shard map (shard number → units).
func shards(v any) map[string]int {
	out := map[string]int{}
	m, _ := v.(item)
	for k, u := range m {
		if _, err := strconv.Atoi(k); err == nil {
			out[k] = num(u)
		}
	}
	return out
}

// Window is when a request ran, by the clock of the store that served it: it was sent
// at Start and answered at End.
type Window struct{ Start, End time.Time }

// FalseStockOuts counts the STOCK_OUT answers (stockOuts, one unit asked each) that
// were given while the SKU surely held a unit. The SKU starts with stock units; takes
// are the earliest moments at which each unit was taken (a reservation cannot take
// effect before the request that made it started, nor before its ledger entry's at);
// gives are the latest moments by which each unit given back was available again (a
// release is done when the invocation that wrote it ended). At any moment t in a
// STOCK_OUT's window the SKU held at least stock − (takes before End) + (gives
// before Start) units, since units taken later or given back earlier only add to
// that; an answer whose bound is still one unit or more is false. The check is
// conservative: it never calls a true STOCK_OUT false, and misses a false one only
// when it cannot prove the unit was there.
func FalseStockOuts(stock int, stockOuts []Window, takes, gives []time.Time) int {
	sorted := func(ts []time.Time) []time.Time {
		ts = slices.Clone(ts)
		slices.SortFunc(ts, time.Time.Compare)
		return ts
	}
	takes, gives = sorted(takes), sorted(gives)
	before := func(ts []time.Time, t time.Time) int {
		n, _ := slices.BinarySearchFunc(ts, t, time.Time.Compare)
		return n
	}
	n := 0
	for _, w := range stockOuts {
		if stock-before(takes, w.End)+before(gives, w.Start) >= 1 {
			n++
		}
	}
	return n
}
