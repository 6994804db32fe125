package ddblimits

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// The tests in this file drive the model's admission on an explicit clock, so their
// counts are exact whatever the machine's speed.

var t0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func put(table, key string) access {
	return access{table: table, item: table + "|pk=" + key, write: true, factor: 1, checksHold: true}
}

func txPut(table, key string) access {
	a := put(table, key)
	a.factor = 2
	return a
}

func read(table, key string, factor float64, checksHold bool) access {
	return access{table: table, item: table + "|pk=" + key, factor: factor, checksHold: checksHold}
}

// loop offers one kind of request on one item as fast as the model takes it, every
// step for span, and returns how many it admitted.
func loop(m *Model, op string, a access, span, step time.Duration) int {
	admitted := 0
	for now := t0; now.Before(t0.Add(span)); now = now.Add(step) {
		for !m.admit(now, op, request{accesses: []access{a}}).refused() {
			admitted++
		}
	}
	return admitted
}

func TestModel_SingleItemLoopTopsOutAtTheCeiling(t *testing.T) {
	span := 2 * time.Second
	for _, tc := range []struct {
		name     string
		cfg      Config
		op       string
		a        access
		perSec   float64 // requests per second the ceiling allows
		depthReq float64 // requests the burst allows on top
	}{
		{"plain write 1 KB", Config{}, "PutItem", put("T", "x"), 1000, 10},
		// A 1 ns hold keeps conflicts out of the way of the throughput ceiling.
		{"transactional write 1 KB", Config{TransactionHold: time.Nanosecond}, "TransactWriteItems", txPut("T", "x"), 500, 5},
		{"strongly consistent read", Config{}, "GetItem", read("T", "x", 1, false), 3000, 30},
		{"eventually consistent read", Config{}, "GetItem", read("T", "x", 0.5, false), 6000, 60},
		{"transactional read", Config{}, "TransactGetItems", read("T", "x", 2, true), 1500, 15},
		{"plain write 3 KB", Config{}, "PutItem", access{table: "T", item: "T|pk=x", write: true, factor: 1, checksHold: true, putSize: 3000}, 1000.0 / 3, 10.0 / 3},
		{"plain write, slowed down 10×", Config{Slowdown: 10}, "PutItem", put("T", "x"), 100, 10},
		{"plain write, ceiling 200/s", Config{WriteUnits: 200, Burst: 50 * time.Millisecond}, "PutItem", put("T", "x"), 200, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.cfg)
			got := loop(m, tc.op, tc.a, span, 100*time.Microsecond)
			ceiling := tc.perSec * span.Seconds()
			if float64(got) > ceiling+tc.depthReq+1 {
				t.Errorf("admitted %d requests in %v, more than the ceiling %.0f plus the burst %.0f", got, span, ceiling, tc.depthReq)
			}
			if float64(got) < ceiling-1 {
				t.Errorf("admitted %d requests in %v, below the ceiling %.0f", got, span, ceiling)
			}
			st := m.Stats()[tc.op]
			if st.Requests != got+st.Throttles+st.Conflicts || st.Throttles == 0 {
				t.Errorf("stats %+v for %d admitted", st, got)
			}
		})
	}
}

func TestModel_ThrottlesOnlyTheHotItem(t *testing.T) {
	m := New(Config{})
	loop(m, "PutItem", put("T", "hot"), time.Second, time.Millisecond)
	last := t0.Add(time.Second - time.Millisecond) // the loop's last step
	if !m.admit(last, "PutItem", request{accesses: []access{put("T", "hot")}}).refused() {
		t.Fatal("the saturated item took another write")
	}
	for i := range 10 {
		if v := m.admit(last, "PutItem", request{accesses: []access{put("T", fmt.Sprint("cold", i))}}); v.refused() {
			t.Fatalf("cold item %d refused: %+v", i, v)
		}
	}
	// A transaction touching the hot item is cancelled for it alone, and takes nothing
	// from the cold one.
	v := m.admit(last, "TransactWriteItems", request{accesses: []access{txPut("T", "cold0"), txPut("T", "hot")}})
	if !slices.Equal(v.throttle, []int{1}) || len(v.conflict) != 0 {
		t.Fatalf("verdict %+v, want throttle at index 1", v)
	}
}

func TestModel_ConflictsOnlyOnOverlappingItems(t *testing.T) {
	m := New(Config{TransactionHold: 2 * time.Millisecond})
	tx := func(at time.Duration, keys ...string) verdict {
		r := request{}
		for _, k := range keys {
			r.accesses = append(r.accesses, txPut("T", k))
		}
		return m.admit(t0.Add(at), "TransactWriteItems", r)
	}
	one := func(at time.Duration, op string, a access) verdict {
		return m.admit(t0.Add(at), op, request{accesses: []access{a}})
	}
	ms := time.Millisecond
	if v := tx(0, "x", "y"); v.refused() {
		t.Fatalf("first transaction refused: %+v", v)
	}
	if v := tx(ms/2, "y", "z"); !slices.Equal(v.conflict, []int{0}) {
		t.Errorf("transaction on y, z while x, y is in flight: conflicts %v, want [0] (y only)", v.conflict)
	}
	if v := tx(ms/2, "z", "w"); v.refused() {
		t.Errorf("transaction on disjoint items z, w refused: %+v (the cancelled one must hold nothing)", v)
	}
	if v := one(ms, "UpdateItem", put("T", "x")); len(v.conflict) != 1 {
		t.Errorf("plain write of held x: %+v, want a conflict", v)
	}
	if v := one(ms, "UpdateItem", put("T", "v")); v.refused() {
		t.Errorf("plain write of free v refused: %+v", v)
	}
	if v := one(ms, "GetItem", read("T", "x", 1, false)); v.refused() {
		t.Errorf("plain read of held x refused: %+v (only transactional reads conflict)", v)
	}
	if v := one(ms, "TransactGetItems", read("T", "x", 2, true)); len(v.conflict) != 1 {
		t.Errorf("transactional read of held x: %+v, want a conflict", v)
	}
	// Plain writes hold nothing: a transaction right after one goes through.
	if v := tx(ms, "v"); v.refused() {
		t.Errorf("transaction on v after a plain write of v refused: %+v", v)
	}
	if v := tx(2*ms+time.Microsecond, "x", "y"); v.refused() {
		t.Errorf("transaction on x, y after the hold ended refused: %+v", v)
	}
	st := m.Stats()
	if st["TransactWriteItems"].Conflicts != 1 || st["UpdateItem"].Conflicts != 1 || st["TransactGetItems"].Conflicts != 1 {
		t.Errorf("conflict counts %+v, want one per operation", st)
	}
}

func TestModel_HoldLastsSlowdownTimesLonger(t *testing.T) {
	m := New(Config{TransactionHold: 2 * time.Millisecond, Slowdown: 10})
	a := request{accesses: []access{txPut("T", "x")}}
	if m.admit(t0, "TransactWriteItems", a).refused() {
		t.Fatal("first transaction refused")
	}
	if !m.admit(t0.Add(19*time.Millisecond), "TransactWriteItems", a).refused() {
		t.Error("a transaction 19 ms later (1.9 ms at 1×) was not refused")
	}
	if m.admit(t0.Add(21*time.Millisecond), "TransactWriteItems", a).refused() {
		t.Error("a transaction 21 ms later (2.1 ms at 1×) was refused")
	}
}

func TestModel_SetSlowdownChangesTheRatesFromThen(t *testing.T) {
	m := New(Config{Slowdown: 10, TransactionHold: 2 * time.Millisecond})
	slowed := loop(m, "PutItem", put("T", "x"), time.Second, 100*time.Microsecond)
	m.SetSlowdown(1)
	// The loop starts again at t0, behind the bucket's clock: run it on the next second.
	after := 0
	for now := t0.Add(time.Second); now.Before(t0.Add(2 * time.Second)); now = now.Add(100 * time.Microsecond) {
		for !m.admit(now, "PutItem", request{accesses: []access{put("T", "x")}}).refused() {
			after++
		}
	}
	// 1,000 write units a second of model time: 100 in a real second at 10×, 1,000 at 1×
	// (each with the 10-unit burst at most on top).
	if slowed < 99 || slowed > 111 {
		t.Errorf("admitted %d writes in a real second at 10×, want about 100", slowed)
	}
	if after < 999 || after > 1011 {
		t.Errorf("admitted %d writes in a real second after SetSlowdown(1), want about 1,000", after)
	}
	// A transaction's hold lasts 2 ms of real time again.
	tx := request{accesses: []access{txPut("T", "y")}}
	at := t0.Add(3 * time.Second)
	if m.admit(at, "TransactWriteItems", tx).refused() || m.admit(at.Add(3*time.Millisecond), "TransactWriteItems", tx).refused() {
		t.Error("a transaction 3 ms after another on the same item was refused at 1×")
	}
}

func TestParseRequest_ItemsInRequestOrder(t *testing.T) {
	keys := map[string][]string{"A": {"pk"}, "B": {"pk"}}
	body := `{"TransactItems":[
		{"Put":{"TableName":"A","Item":{"pk":{"S":"o1"},"n":{"N":"1"}}}},
		{"Update":{"TableName":"B","Key":{"pk":{"S":"s#0"}}}},
		{"ConditionCheck":{"TableName":"B","Key":{"pk":{ "S" : "s#1"}}}}]}`
	r, err := parseRequest("TransactWriteItems", []byte(body), keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, a := range r.accesses {
		items = append(items, a.item)
		if !a.write || a.factor != 2 || !a.checksHold {
			t.Errorf("access %+v is not a transactional write", a)
		}
	}
	want := []string{`A|pk={"S":"o1"};`, `B|pk={"S":"s#0"};`, `B|pk={"S":"s#1"};`}
	if !slices.Equal(items, want) {
		t.Errorf("items %q, want %q", items, want)
	}
	r, err = parseRequest("BatchGetItem", []byte(`{"RequestItems":{"B":{"Keys":[{"pk":{"S":"s#0"}},{"pk":{"S":"s#1"}}],"ConsistentRead":true}}}`), keys, nil)
	if err != nil || len(r.accesses) != 2 || r.accesses[1].factor != 1 || r.accesses[1].write {
		t.Errorf("BatchGetItem parsed to %+v, %v", r, err)
	}
	r, err = parseRequest("PutItem", []byte(`{"TableName":"C","Item":{"pk":{"S":"x"}}}`), keys, nil)
	if err != nil || len(r.accesses) != 0 {
		t.Errorf("a put into a table of unknown keys parsed to %+v, %v; want it unmetered", r, err)
	}
}
