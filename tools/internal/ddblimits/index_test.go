package ddblimits

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests in this file drive the model's index, table and query limits on an
// explicit clock, as model_test.go does for items: counts are exact.

// ledger is a table like stock_log: key pk, one index by a hash bucket and a time.
var ledger = Config{
	Keys: map[string][]string{"L": {"pk"}, "O": {"pk"}},
	Indexes: map[string][]Index{
		"L": {{Name: "ByTime", Hash: "bucket", Range: "at", Projection: "ALL"}},
		"O": {{Name: "Pending", Hash: "pb", Range: "exp", Projection: "INCLUDE", Include: []string{"status"}}},
	},
}

func s(v string) json.RawMessage { return json.RawMessage(`{"S":"` + v + `"}`) }
func n(v int) json.RawMessage    { return json.RawMessage(fmt.Sprintf(`{"N":"%d"}`, v)) }

// putEntry is a plain Put of ledger entry pk into index bucket b.
func putEntry(pk, b string, at int) request {
	item := rawItem{"pk": s(pk), "bucket": s(b), "at": n(at)}
	return request{accesses: []access{{table: "L", item: "L|" + canonical(rawItem{"pk": s(pk)}), key: rawItem{"pk": s(pk)}, write: true, factor: 1, checksHold: true, putSize: itemSize(item), change: &change{put: item}}}}
}

// write admits r at now and, when admitted, applies it as the server would.
func write(m *Model, now time.Time, op string, r request) bool {
	if m.admit(now, op, r).refused() {
		return false
	}
	m.applied(now, op, r)
	return true
}

func TestModel_IndexKeyTopsOutAtItsCeiling(t *testing.T) {
	span := 2 * time.Second
	for _, tc := range []struct {
		name     string
		cfg      Config
		op       string
		factor   float64
		perSec   float64 // entries per second the index key's ceiling allows
		depthReq float64
	}{
		// Every entry is a new item (no item limit binds) in one index partition: 1
		// index unit each, whatever the base write costs.
		{"plain puts", ledger, "PutItem", 1, 1000, 10},
		{"transactional puts", ledger, "TransactWriteItems", 2, 1000, 10},
		{"slowed down 10×", func() Config { c := ledger; c.Slowdown = 10; return c }(), "PutItem", 1, 100, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.cfg)
			i := 0
			admitted := 0
			for now := t0; now.Before(t0.Add(span)); now = now.Add(100 * time.Microsecond) {
				for {
					r := putEntry(fmt.Sprint("e", i), "H#0", i)
					r.accesses[0].factor = tc.factor
					i++
					if !write(m, now, tc.op, r) {
						break
					}
					admitted++
				}
			}
			ceiling := tc.perSec * span.Seconds()
			if float64(admitted) > ceiling+tc.depthReq+1 || float64(admitted) < ceiling-1 {
				t.Errorf("admitted %d entries in %v, want the ceiling %.0f (+ burst %.0f)", admitted, span, ceiling, tc.depthReq)
			}
			if got := m.Throttled(); len(got) != 1 || got["index L.ByTime H#0"] == 0 {
				t.Errorf("throttled %v, want only the index key", got)
			}
			st := m.Stats()[tc.op]
			if st.IndexWriteUnits != float64(admitted) || st.WriteUnits != float64(admitted)*(1+tc.factor) {
				t.Errorf("stats %+v for %d admitted entries: want 1 index unit and %.0f base units each", st, admitted, tc.factor)
			}
			// Another index key is not throttled by the hot one.
			if !write(m, t0.Add(span), tc.op, putEntry("cold", "H#1", 0)) {
				t.Error("an entry on another index key was refused")
			}
		})
	}
}

func TestModel_IndexWritesFollowWhatTheWriteDoesToTheEntry(t *testing.T) {
	order := func(c *change) request {
		return request{accesses: []access{{table: "O", item: "O|o1", key: rawItem{"pk": s("o1")}, write: true, factor: 2, change: c}}}
	}
	upd := func(expr string, values rawItem) *change {
		return parseUpdate(expr, map[string]string{"#s": "status"}, values)
	}
	pending := rawItem{"pk": s("o1"), "pb": s("P3"), "exp": n(100), "status": s("PENDING"), "userId": s("u")}
	steps := []struct {
		name   string
		c      *change
		writes map[string]float64 // index hash → units
	}{
		{"new PENDING order: an entry put", &change{put: pending}, map[string]float64{"P3": 1}},
		{"an attribute the index does not project: nothing", upd("SET prepayId = :p", rawItem{":p": s("x")}), nil},
		{"a projected attribute: the entry rewritten", upd("SET #s = :s", rawItem{":s": s("PENDING")}), map[string]float64{"P3": 1}},
		{"its hash key moved: delete and put", upd("SET pb = :b", rawItem{":b": s("P4")}), map[string]float64{"P3": 1, "P4": 1}},
		{"its range key changed: delete and put in the same partition", upd("SET exp = :e", rawItem{":e": n(200)}), map[string]float64{"P4": 2}},
		{"paid: status set and keys removed, the entry deleted", upd("SET #s = :s REMOVE pb, exp", rawItem{":s": s("PAID")}), map[string]float64{"P4": 1}},
		{"outside the index before and after: nothing", upd("SET #s = :s", rawItem{":s": s("REFUNDED")}), nil},
		{"put back with keys: an entry put", &change{put: pending}, map[string]float64{"P3": 1}},
		{"a key set to a value the model cannot read", upd("SET pb = if_not_exists(pb, :b)", rawItem{":b": s("P9")}), map[string]float64{"P3": 1, "?": 1}},
		{"deleted: the entry deleted", &change{delete: true}, map[string]float64{"?": 1}},
	}
	m := New(ledger)
	for i, st := range steps {
		// A second apart, so every bucket is full again: what a step takes shows.
		now := t0.Add(time.Duration(i) * time.Second)
		for _, b := range m.limits {
			b.refill(now, 1000, 10)
		}
		before := map[string]float64{}
		for name, b := range m.limits {
			before[name] = b.tokens
		}
		if !write(m, now, "UpdateItem", order(st.c)) {
			t.Fatalf("%s: refused", st.name)
		}
		got := map[string]float64{}
		for name, b := range m.limits {
			hash, ok := strings.CutPrefix(name, "index O.Pending ")
			if !ok {
				continue
			}
			was, seen := before[name]
			if !seen {
				was = 10 // a new bucket starts full: 10 ms of 1,000 units
			}
			if d := was - b.tokens; d > 0 {
				got[hash] = d
			}
		}
		if !maps.Equal(got, st.writes) && !(len(got) == 0 && len(st.writes) == 0) {
			t.Errorf("%s: index writes %v, want %v", st.name, got, st.writes)
		}
	}
}

func TestModel_TableQuotaTopsOutAtItsCeiling(t *testing.T) {
	// A low quota, so a loop over distinct items (no item limit binds) reaches it.
	for _, tc := range []struct {
		name string
		a    func(i int) access
		op   string
		want float64 // requests per second the quota allows
	}{
		{"writes", func(i int) access { return put("T", fmt.Sprint("w", i)) }, "PutItem", 300},
		{"transactional writes", func(i int) access { return txPut("T", fmt.Sprint("w", i)) }, "TransactWriteItems", 150},
		{"strongly consistent reads", func(i int) access { return read("T", fmt.Sprint("r", i), 1, false) }, "GetItem", 300},
		{"eventually consistent reads", func(i int) access { return read("T", fmt.Sprint("r", i), 0.5, false) }, "GetItem", 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{TableWriteUnits: 300, TableReadUnits: 300, TransactionHold: time.Nanosecond})
			span := 2 * time.Second
			i, admitted := 0, 0
			for now := t0; now.Before(t0.Add(span)); now = now.Add(time.Millisecond) {
				for ; !m.admit(now, tc.op, request{accesses: []access{tc.a(i)}}).refused(); i++ {
					admitted++
				}
				i++
			}
			// The quota banks one second: the first second serves twice.
			ceiling := tc.want * (span.Seconds() + 1)
			if float64(admitted) > ceiling+1 || float64(admitted) < ceiling-tc.want/100-1 {
				t.Errorf("admitted %d in %v, want the quota's %.0f (%.0f/s plus one second banked)", admitted, span, ceiling, tc.want)
			}
			for name := range m.Throttled() {
				if name != "table T writes" && name != "table T reads" {
					t.Errorf("throttled by %q, want only the table quota", name)
				}
			}
		})
	}
}

func TestModel_QueryReadsWhatItsAnswerHolds(t *testing.T) {
	m := New(ledger)
	q := &query{table: "L", index: "ByTime", hash: "H#0", factor: 0.5}
	for _, tc := range []struct {
		size int
		want float64
	}{{0, 0.5}, {4096, 0.5}, {4097, 1}, {40000, 5}} {
		if got := m.queried(t0, "Query", q, tc.size); got != tc.want {
			t.Errorf("a query answering %d bytes took %.1f units, want %.1f", tc.size, got, tc.want)
		}
	}
	// One index partition serves 3,000 read units a second: queries of 4 KB answers
	// (0.5 units each) top out at 6,000 a second (plus the burst's 60).
	m = New(ledger)
	admitted := 0
	for now := t0; now.Before(t0.Add(time.Second)); now = now.Add(100 * time.Microsecond) {
		for !m.admit(now, "Query", request{query: q}).refused() {
			m.queried(now, "Query", q, 4096)
			admitted++
		}
	}
	if admitted < 6000-1 || admitted > 6000+60+1 {
		t.Errorf("admitted %d index queries in 1 s, want 6,000 (+ burst 60)", admitted)
	}
	if got := m.Throttled(); got["index L.ByTime H#0 reads"] == 0 || len(got) != 1 {
		t.Errorf("throttled %v, want the index partition's reads", got)
	}
}

func TestParseUpdate_NamesSetsAndRemoves(t *testing.T) {
	names := map[string]string{"#0": "available", "#1": "reserved", "#2": "pendingBucket", "#3": "items"}
	values := rawItem{":0": n(1), ":b": s("P1")}
	c := parseUpdate("SET #0 = #0 - :0, #1 = #1 + :0, #2 = :b, #3[0].qty = :0 REMOVE pendingExpiresAt, refundBucket ADD seq :0", names, values)
	if got := slices.Sorted(maps.Keys(c.named)); !slices.Equal(got, []string{"available", "items", "pendingBucket", "pendingExpiresAt", "refundBucket", "reserved", "seq"}) {
		t.Errorf("named %v", got)
	}
	if string(c.set["pendingBucket"]) != string(s("P1")) || c.set["available"] != nil {
		t.Errorf("set %v: want pendingBucket P1, available unknown", c.set)
	}
	if !c.remove["pendingExpiresAt"] || !c.remove["refundBucket"] || len(c.remove) != 2 {
		t.Errorf("removed %v", c.remove)
	}
	// Clauses in another order and case, a function with a comma inside.
	c = parseUpdate("remove a set b = list_append(b, :0), c = :b", nil, values)
	if !c.remove["a"] || c.set["b"] != nil || string(c.set["c"]) != string(s("P1")) || len(c.named) != 3 {
		t.Errorf("parsed %+v", c)
	}
}

func TestNewQuery_ReadsThePartitionOfTheKeyCondition(t *testing.T) {
	r, err := parseRequest("Query", []byte(`{"TableName":"L","IndexName":"ByTime",
		"KeyConditionExpression":"#0 = :0 AND #1 >= :1","ExpressionAttributeNames":{"#0":"bucket","#1":"at"},
		"ExpressionAttributeValues":{":0":{"S":"2026-11-11T00#7"},":1":{"N":"5"}}}`), ledger.Keys, ledger.Indexes)
	if err != nil || r.query == nil || *r.query != (query{table: "L", index: "ByTime", hash: "2026-11-11T00#7", factor: 0.5}) {
		t.Errorf("parsed %+v, %v", r.query, err)
	}
}

// A cold table serves at once only its warm throughput, then up to twice its
// previous peak each second ("Pre-warming a table for on-demand capacity mode",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html:
// a new on-demand table sustains 4,000 writes and 12,000 reads per second; throttling
// "if the throughput exceeds twice the previous peak within the same 30 minutes";
// "Understanding DynamoDB warm throughput": pre-warming raises what it serves at once),
// never past its quota (40,000 per table, "Quotas in Amazon DynamoDB").
func TestModel_ColdTableServesItsWarmThroughputThenDoubles(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		a    func(i int) access
		op   string
		want []int // units admitted in each second
	}{
		{"a new on-demand table's writes", Config{WarmWriteUnits: NewTableWriteUnits}, func(i int) access { return put("T", fmt.Sprint("w", i)) }, "PutItem",
			[]int{4000, 8000, 16000, 32000, 40000}},
		{"a new on-demand table's reads", Config{WarmReadUnits: NewTableReadUnits}, func(i int) access { return read("T", fmt.Sprint("r", i), 1, false) }, "GetItem",
			[]int{12000, 24000, 40000, 40000}},
		{"writes of a table pre-warmed to 30,000", Config{WarmWriteUnits: 30000}, func(i int) access { return put("T", fmt.Sprint("w", i)) }, "PutItem",
			[]int{30000, 40000, 40000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.TransactionHold = time.Nanosecond
			m := New(tc.cfg)
			got := make([]int, len(tc.want))
			i := 0
			for now := t0; now.Before(t0.Add(time.Duration(len(tc.want)) * time.Second)); now = now.Add(time.Millisecond) {
				for ; !m.admit(now, tc.op, request{accesses: []access{tc.a(i)}}).refused(); i++ {
					got[now.Sub(t0)/time.Second]++
				}
				i++
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("admitted per second %v, want %v", got, tc.want)
			}
			for name := range m.Throttled() {
				if name != "table T writes" && name != "table T reads" {
					t.Errorf("throttled by %q, want only the table's ceiling", name)
				}
			}
		})
	}
}

func TestWarmCeiling(t *testing.T) {
	for _, tc := range []struct{ warm, peak, quota, want float64 }{
		{4000, 0, 40000, 4000},      // new: the warm throughput
		{4000, 3000, 40000, 6000},   // twice the previous peak
		{4000, 30000, 40000, 40000}, // never past the quota
		{30000, 0, 40000, 30000},    // pre-warmed
	} {
		if got := WarmCeiling(tc.warm, tc.peak, tc.quota); got != tc.want {
			t.Errorf("WarmCeiling(%v, %v, %v) = %v, want %v", tc.warm, tc.peak, tc.quota, got, tc.want)
		}
	}
}

// A new on-demand index serves at once only its own warm throughput, 4,000 writes a
// second, then twice its busiest second, whatever its table's ("Understanding DynamoDB
// warm throughput": tables and global secondary indexes each have one); a base write
// whose entry would pass it is refused as the index's back-pressure. Pre-warmed to
// 6,000 it serves 6,000 at once. Entries spread over 100 index keys, and the base
// table's quota and the partitions are raised, so only the index's warmth binds.
func TestModel_ColdIndexServesItsWarmThroughputThenDoubles(t *testing.T) {
	for _, tc := range []struct {
		name string
		warm float64
		want []int // entries admitted in each second
	}{
		{"a new on-demand index", NewTableWriteUnits, []int{4000, 8000, 16000}},
		{"an index pre-warmed to 6,000", 6000, []int{6000, 12000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ledger
			cfg.IndexWarmWriteUnits, cfg.TransactionHold = tc.warm, time.Nanosecond
			cfg.TableWriteUnits = 1e9 // the base table never binds
			cfg.WriteUnits = 1e6      // nor an item's or index key's partition
			m := New(cfg)
			got := make([]int, len(tc.want))
			i := 0
			for now := t0; now.Before(t0.Add(time.Duration(len(tc.want)) * time.Second)); now = now.Add(time.Millisecond) {
				for write(m, now, "PutItem", putEntry(fmt.Sprint("e", i), fmt.Sprint("H#", i%100), i)) {
					got[now.Sub(t0)/time.Second]++
					i++
				}
				i++
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("admitted per second %v, want %v", got, tc.want)
			}
			for name := range m.Throttled() {
				if name != "index L.ByTime writes" {
					t.Errorf("throttled by %q, want only the index's warm throughput", name)
				}
			}
		})
	}
}
