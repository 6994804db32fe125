package ddblimits

import (
	"fmt"
	"testing"
	"time"
)

// The tests in this file drive shared partitions and split for heat on an explicit
// clock, as model_test.go does: counts are exact.

// keyedPut is a 1 KB plain Put of item pk of table T, whose key attribute is pk.
func keyedPut(pk string) access {
	key := rawItem{"pk": s(pk)}
	return access{table: "T", item: "T|" + canonical(key), key: key, write: true, factor: 1}
}

// sharing returns two keys that m hashes onto one partition of table (index "" for
// the table itself), and that partition's name.
func sharing(t *testing.T, m *Model, table, index string) (a, b, part string) {
	t.Helper()
	seen := map[string]string{}
	for i := range 1000 {
		k := fmt.Sprint("k", i)
		p := m.partitionName(table, index, k)
		if other, ok := seen[p]; ok {
			return other, k, p
		}
		seen[p] = k
	}
	t.Fatal("no two keys share a partition")
	return "", "", ""
}

// putMany offers n Puts of item pk at now and returns how many the model admitted.
func putMany(m *Model, now time.Time, pk string, n int) int {
	admitted := 0
	for range n {
		if !m.admit(now, "PutItem", request{accesses: []access{keyedPut(pk)}}).refused() {
			admitted++
		}
	}
	return admitted
}

func TestPartitionCount_FromWarmThroughput(t *testing.T) {
	for _, tc := range []struct {
		name, index string
		cfg         Config
		want        int // partitions
	}{
		{"new on-demand table", "", Config{WarmWriteUnits: NewTableWriteUnits, WarmReadUnits: NewTableReadUnits}, 4},
		{"warm to the quota", "", Config{}, 40},
		{"reads bind", "", Config{WarmWriteUnits: 1000, WarmReadUnits: 30000}, 10},
		{"pre-warmed writes, reads to a raised quota", "", Config{WarmWriteUnits: 266250, TableReadUnits: 400000}, 267},
		{"new on-demand index", "I", Config{IndexWarmWriteUnits: NewTableWriteUnits}, 4},
		{"index warm to the quota", "I", Config{}, 40},
		{"pre-warmed index", "I", Config{IndexWarmWriteUnits: 75000}, 75},
		{"tiny", "", Config{WarmWriteUnits: 1, WarmReadUnits: 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.IsolateAfter = time.Minute
			if got := New(tc.cfg).partitions(tc.index); got != tc.want {
				t.Errorf("partitions = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestModel_KeysOnOnePartitionShareItsUnits(t *testing.T) {
	// Two partitions, each banking a full second: the table's 2,000 WU/s warm
	// throughput never binds, one partition's 1,000 does.
	cfg := Config{Keys: map[string][]string{"T": {"pk"}}, WarmWriteUnits: 2000, WarmReadUnits: 1, Burst: time.Second, IsolateAfter: time.Minute}
	m := New(cfg)
	a, b, part := sharing(t, m, "T", "")
	if got := putMany(m, t0, a, 600); got != 600 {
		t.Fatalf("first key: %d of 600 writes admitted", got)
	}
	if got := putMany(m, t0, b, 600); got != 400 {
		t.Errorf("second key on the same partition: %d of 600 writes admitted, want 400 (the partition's 1,000 less the first key's 600)", got)
	}
	if got, want := m.Throttled(), "partition "+part+" "+b; len(got) != 1 || got[want] != 200 {
		t.Errorf("throttled %v, want 200 on %q", got, want)
	}
	if counts, isolated := m.Partitions(); counts["T"] != 2 || isolated != 0 {
		t.Errorf("partitions %v, %d isolated; want T 2, none", counts, isolated)
	}
	// Each key alone (IsolateAfter 0, the model before shared partitions): 600 each.
	cfg.IsolateAfter = 0
	m = New(cfg)
	if got := putMany(m, t0, a, 600) + putMany(m, t0, b, 600); got != 1200 {
		t.Errorf("keys on partitions of their own: %d of 1,200 writes admitted", got)
	}
}

func TestModel_SplitForHeatIsolatesAHotKeyAfterIsolateAfter(t *testing.T) {
	cfg := Config{Keys: map[string][]string{"T": {"pk"}}, WarmWriteUnits: 2000, WarmReadUnits: 1, IsolateAfter: 3 * time.Second}
	m := New(cfg)
	a, b, _ := sharing(t, m, "T", "")
	// Both keys ask for 600 WU/s (6 every 10 ms), 1,200 of the partition's 1,000.
	refused := map[int]int{} // by second
	step := 10 * time.Millisecond
	for now := t0; now.Before(t0.Add(6 * time.Second)); now = now.Add(step) {
		sec := int(now.Sub(t0) / time.Second)
		refused[sec] += 12 - putMany(m, now, a, 6) - putMany(m, now, b, 6)
	}
	for sec := range 6 {
		if hot := sec < 3; hot != (refused[sec] > 0) {
			t.Errorf("second %d: %d writes refused (isolated from 3 s on)", sec, refused[sec])
		}
	}
	if _, isolated := m.Partitions(); isolated != 2 {
		t.Errorf("%d keys isolated, want 2", isolated)
	}
	if got := m.Throttled(); len(got) == 0 {
		t.Error("nothing throttled before isolation")
	}
}

func TestModel_ACoolKeyIsNeverIsolated(t *testing.T) {
	cfg := Config{Keys: map[string][]string{"T": {"pk"}}, WarmWriteUnits: 2000, WarmReadUnits: 1, Burst: time.Second, IsolateAfter: time.Second}
	m := New(cfg)
	// 400 WU/s: less than half a partition's 1,000.
	for now := t0; now.Before(t0.Add(5 * time.Second)); now = now.Add(10 * time.Millisecond) {
		putMany(m, now, "cool", 4)
	}
	if _, isolated := m.Partitions(); isolated != 0 {
		t.Errorf("%d keys isolated, want none", isolated)
	}
}

func TestModel_IndexKeysShareTheirIndexPartitionForGood(t *testing.T) {
	cfg := ledger
	cfg.IndexWarmWriteUnits, cfg.Burst, cfg.IsolateAfter = 2000, time.Second, time.Second
	m := New(cfg)
	a, b, part := sharing(t, m, "L", "ByTime")
	i := 0
	entries := func(now time.Time, bucket string, n int) int {
		admitted := 0
		for range n {
			i++
			if write(m, now, "PutItem", putEntry(fmt.Sprint("e", i), bucket, i)) {
				admitted++
			}
		}
		return admitted
	}
	if got := entries(t0, a, 600); got != 600 {
		t.Fatalf("first index key: %d of 600 entries admitted", got)
	}
	if got := entries(t0, b, 600); got != 400 {
		t.Errorf("second index key on the same partition: %d of 600 entries admitted, want 400", got)
	}
	if got, want := m.Throttled(), "partition "+part+" "+b; got[want] != 200 {
		t.Errorf("throttled %v, want 200 on %q", got, want)
	}
	// Hot for far longer than IsolateAfter, the keys still share the partition.
	for sec := 1; sec < 5; sec++ {
		now := t0.Add(time.Duration(sec) * time.Second)
		if got := entries(now, a, 600) + entries(now, b, 600); got != 1000 {
			t.Errorf("second %d: %d of 1,200 entries admitted, want the partition's 1,000", sec, got)
		}
	}
	if counts, _ := m.Partitions(); counts["L.ByTime"] != 2 {
		t.Errorf("partitions %v, want L.ByTime 2", counts)
	}
}
