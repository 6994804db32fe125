// Package booktest checks, for tests, that stockguard's books balance: it scans the
// skus, orders and stock_log tables whole and checks DESIGN.md's conservation rules
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
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/dynamo"
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
//     dOnHand, each entry's deltas matching its op (RESERVE −q/0, RELEASE +q/0, COMMIT
//     0/−q, RETURN +q/+q);
//   - onHand − available = reserved = Σ qty of PENDING orders;
//   - 0 ≤ available ≤ onHand; Σ COMMIT − Σ RETURN ≤ Σ ADJUST;
//   - each order line has a RESERVE entry; a CANCELLED order a RELEASE entry and no
//     COMMIT; a PAID order a COMMIT entry; a PENDING order neither;
//   - each purchase counter equals the units of its user's PENDING and PAID orders
//     counted on it.
func Problems(ctx context.Context, db *dynamodb.Client, tables dynamo.Tables) ([]string, error) {
	skus, err := Scan(ctx, db, tables.SKUs)
	if err != nil {
		return nil, err
	}
	orders, err := Scan(ctx, db, tables.Orders)
	if err != nil {
		return nil, err
	}
	ledger, err := Scan(ctx, db, tables.StockLog)
	if err != nil {
		return nil, err
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	bySKU := map[string]*counts{}
	byShard := map[string]*counts{} // "sku#n"
	at := func(m map[string]*counts, k string) *counts {
		if m[k] == nil {
			m[k] = &counts{}
		}
		return m[k]
	}
	for _, it := range skus {
		if it["kind"] != "SHARD" {
			continue
		}
		sku, shard := str(it["skuId"]), num(it["shard"])
		for _, c := range []*counts{at(bySKU, sku), at(byShard, sku+"#"+strconv.Itoa(shard))} {
			c.available += num(it["available"])
			c.onHand += num(it["onHand"])
			c.reserved += num(it["reserved"])
		}
	}
	entries := map[string]map[string]bool{} // order id → "op#sku" present
	for _, e := range ledger {
		sku, op, q := str(e["skuId"]), str(e["op"]), num(e["qty"])
		da, dh := num(e["dAvailable"]), num(e["dOnHand"])
		want, fixed := map[string][2]int{
			dynamo.OpReserve: {-q, 0}, dynamo.OpRelease: {q, 0}, dynamo.OpCommit: {0, -q}, dynamo.OpReturn: {q, q},
		}[op]
		if fixed && (da != want[0] || dh != want[1]) {
			bad("ledger %s: deltas (%d, %d), want (%d, %d) for %s of %d", e["pk"], da, dh, want[0], want[1], op, q)
		}
		c := at(bySKU, sku)
		c.ledgerAvailable += da
		c.ledgerOnHand += dh
		switch op {
		case dynamo.OpAdjust:
			c.adjusted += dh
		case dynamo.OpCommit:
			c.committed += q
		case dynamo.OpReturn:
			c.returned += q
		}
		if n, ok := e["shard"].(float64); ok { // a REPAIR entry: signed deltas on one shard
			sc := at(byShard, sku+"#"+strconv.Itoa(int(n)))
			sc.ledgerAvailable += da
			sc.ledgerOnHand += dh
		}
		shardSum := 0
		for n, units := range shards(e["shards"]) {
			shardSum += units
			sc := at(byShard, sku+"#"+n)
			sign := 1
			if da < 0 || dh < 0 {
				sign = -1
			}
			if da != 0 {
				sc.ledgerAvailable += sign * units
			}
			if dh != 0 {
				sc.ledgerOnHand += sign * units
			}
		}
		if shardSum != abs(q) && op != dynamo.OpAdjust && op != dynamo.OpRepair {
			bad("ledger %s: shards hold %d units, qty is %d", e["pk"], shardSum, q)
		}
		ref := str(e["ref"])
		if entries[ref] == nil {
			entries[ref] = map[string]bool{}
		}
		entries[ref][op+"#"+sku] = true
	}
	bought := map[string]int{} // limit#sku#user → units counted by orders
	for _, o := range orders {
		if o["kind"] != "ORDER" {
			continue
		}
		id, status := str(o["pk"]), str(o["status"])
		for _, raw := range list(o["items"]) {
			line := raw.(item)
			sku, q := str(line["skuId"]), num(line["qty"])
			has := func(op string) bool { return entries[id][op+"#"+sku] }
			if !has(dynamo.OpReserve) {
				bad("order %s (%s): no RESERVE entry for %s", id, status, sku)
			}
			switch {
			case status == "CANCELLED" && !has(dynamo.OpRelease):
				bad("order %s (CANCELLED): no RELEASE entry for %s", id, sku)
			case status == "PENDING" && (has(dynamo.OpRelease) || has(dynamo.OpCommit)):
				bad("order %s (PENDING): has a RELEASE or COMMIT entry for %s", id, sku)
			case status == "PAID" && !has(dynamo.OpCommit):
				bad("order %s (PAID): no COMMIT entry for %s", id, sku)
			case status == "CANCELLED" && has(dynamo.OpCommit):
				bad("order %s (CANCELLED): has a COMMIT entry for %s", id, sku)
			}
			if status == "PENDING" {
				at(bySKU, sku).pending += q
				for n, units := range shards(line["shards"]) {
					at(byShard, sku+"#"+n).pending += units
				}
			}
			if line["limited"] == true && (status == "PENDING" || status == "PAID") {
				bought["limit#"+sku+"#"+str(o["userId"])] += q
			}
		}
	}
	for _, o := range orders {
		if o["kind"] == "LIMIT" {
			k := str(o["pk"])
			if got := num(o["bought"]); got != bought[k] {
				bad("counter %s: bought %d, orders count %d", k, got, bought[k])
			}
			delete(bought, k)
		}
	}
	for k, n := range bought {
		if n != 0 {
			bad("counter %s: missing, orders count %d", k, n)
		}
	}
	check := func(name string, c *counts, whole bool) {
		if c.available != c.ledgerAvailable {
			bad("%s: available %d, ledger says %d", name, c.available, c.ledgerAvailable)
		}
		if c.onHand != c.ledgerOnHand {
			bad("%s: onHand %d, ledger says %d", name, c.onHand, c.ledgerOnHand)
		}
		if c.onHand-c.available != c.reserved || c.reserved != c.pending {
			bad("%s: onHand − available = %d, reserved counter %d, PENDING orders hold %d", name, c.onHand-c.available, c.reserved, c.pending)
		}
		if c.available < 0 || c.available > c.onHand {
			bad("%s: available %d outside 0..onHand %d", name, c.available, c.onHand)
		}
		if whole && c.committed-c.returned > c.adjusted {
			bad("%s: committed %d − returned %d exceeds stocked %d", name, c.committed, c.returned, c.adjusted)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(bySKU)) {
		check("SKU "+k, bySKU[k], true)
	}
	for _, k := range slices.Sorted(maps.Keys(byShard)) {
		check("shard "+k, byShard[k], false)
	}
	return problems, nil
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
