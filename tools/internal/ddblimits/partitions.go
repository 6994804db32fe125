package ddblimits

import (
	"hash/fnv"
	"math"
	"strconv"
	"time"
)

// DefaultIsolateAfter is a documented guess at how long DynamoDB takes to give a hot
// key a partition of its own (Config.IsolateAfter): AWS says only that split for
// heat adapts to a hot partition after a short while ("1- Key range throughput
// exceeded (hot partitions)"), so the model takes a few minutes of model time.
const DefaultIsolateAfter = 5 * time.Minute

// partition is one partition of a table or an index, shared by the keys hashed onto
// it until split for heat isolates one of them (Config.IsolateAfter).
type partition struct {
	write, read bucket
	keys        int // keys placed on it and not isolated since
}

// keyHeat is one item key's traffic, second by second of model time, for split for
// heat.
type keyHeat struct {
	window   time.Time // start of the current second (real time)
	load     float64   // share of a partition's per-second units asked for in it
	hotSince time.Time // start of the run of hot seconds before it (zero: none)
	isolated bool      // on a partition of its own
}

// shared reports whether keys share partitions (Config.IsolateAfter > 0).
func (m *Model) shared() bool { return m.cfg.IsolateAfter > 0 }

// PartitionCount is how many partitions a table or index whose warm throughput is
// write and read units per second has: as many as it takes to serve both at
// perWrite and perRead units per partition, at least 1 ("Understanding DynamoDB warm
// throughput": a partition serves at most 1,000 write and 3,000 read units per
// second, so a table warm to 4,000 writes and 12,000 reads has 4).
func PartitionCount(write, read, perWrite, perRead float64) int {
	return max(1, int(math.Ceil(write/perWrite)), int(math.Ceil(read/perRead)))
}

// partitions is how many partitions the table (index "") or index has: from its warm
// throughput (Config.WarmWriteUnits and WarmReadUnits, IndexWarmWriteUnits: an
// index's reads are taken as warm as its writes allow), or from its quotas when
// unset. The count stays as it starts: the model does not split a partition that
// grew its warm throughput.
func (m *Model) partitions(index string) int {
	c := m.cfg
	if index != "" {
		w := c.IndexWarmWriteUnits
		if w <= 0 {
			w = c.TableWriteUnits
		}
		return PartitionCount(w, 0, c.WriteUnits, c.ReadUnits)
	}
	w, r := c.WarmWriteUnits, c.WarmReadUnits
	if w <= 0 {
		w = c.TableWriteUnits
	}
	if r <= 0 {
		r = c.TableReadUnits
	}
	return PartitionCount(w, r, c.WriteUnits, c.ReadUnits)
}

// partitionName is the partition that key (an item's partition key value, or an
// index's hash key value) hashes onto in the table (index "") or index: "T#17" or
// "T.I#3", by FNV-1a of the table, index and key.
func (m *Model) partitionName(table, index, key string) string {
	h := fnv.New32a()
	h.Write([]byte(table + "\x00" + index + "\x00" + key))
	name := table
	if index != "" {
		name += "." + index
	}
	return name + "#" + strconv.Itoa(int(h.Sum32()%uint32(m.partitions(index))))
}

// partition is the named partition, created empty on first use. m.mu is held.
func (m *Model) partition(name string) *partition { return entry(m.parts, name) }

// partitionKey is the value of an access's partition key (the table's first key
// attribute), or its whole item key when the model does not know the table's keys.
func (m *Model) partitionKey(a access) string {
	if keys := m.cfg.Keys[a.table]; len(keys) > 0 {
		if v, ok := a.key[keys[0]]; ok {
			return attrString(v)
		}
	}
	return a.item
}

// heat is the item's heat, placed on its partition on first use. m.mu is held.
func (m *Model) heat(s *itemState, a access) *keyHeat {
	if s.heat == nil {
		s.heat = &keyHeat{}
		m.partition(m.partitionName(a.table, "", m.partitionKey(a))).keys++
	}
	return s.heat
}

// offer adds to an item's heat the load of one access at now (its units as a share
// of a partition's per-second units), and isolates the item when every second of
// model time for Config.IsolateAfter asked for more than half its partition's units.
// m.mu is held.
func (m *Model) offer(s *itemState, a access, now time.Time, units float64) {
	h := m.heat(s, a)
	if h.isolated {
		return
	}
	second := m.real(time.Second)
	if h.window.IsZero() {
		h.window = now
	}
	if d := now.Sub(h.window); d >= second {
		switch hot := h.load > 0.5 && d < 2*second; {
		case !hot:
			h.hotSince = time.Time{}
		case h.hotSince.IsZero():
			h.hotSince = h.window
		}
		h.load, h.window = 0, h.window.Add(d.Truncate(second))
	}
	if a.write {
		h.load += units / m.cfg.WriteUnits
	} else {
		h.load += units / m.cfg.ReadUnits
	}
	if !h.hotSince.IsZero() && now.Sub(h.hotSince) >= m.real(m.cfg.IsolateAfter) {
		h.isolated = true
		m.isolated++
		m.partition(m.partitionName(a.table, "", m.partitionKey(a))).keys--
	}
}

// itemBucket is the bucket an access of the item takes its units from (its own while
// it is on a partition of its own, else its partition's) and the limit that names a
// refusal: "item <table> <key>" for a key alone on its partition, "partition
// <table>#<n> <key>" for a key sharing one. m.mu is held.
func (m *Model) itemBucket(s *itemState, a access) (*bucket, limit) {
	l := limit{name: "item " + a.table + " " + keyName(a.key), reason: "TableWriteKeyRangeThroughputExceeded", resource: arn(a.table, "")}
	if !a.write {
		l.reason = "TableReadKeyRangeThroughputExceeded"
	}
	if !m.shared() || m.heat(s, a).isolated {
		if a.write {
			return &s.write, l
		}
		return &s.read, l
	}
	name := m.partitionName(a.table, "", m.partitionKey(a))
	p := m.partition(name)
	if p.keys > 1 {
		l.name = "partition " + name + " " + keyName(a.key)
	}
	if a.write {
		return &p.write, l
	}
	return &p.read, l
}

// indexBucket is the bucket of an index hash key's writes and the limit that names a
// refusal: its own ("index <table>.<index> <hash>") when keys do not share
// partitions, else its index partition's, which it never leaves (an index key is
// written in key order: see the package doc), named "partition <table>.<index>#<n>
// <hash>" once another key shares it. m.mu is held.
func (m *Model) indexBucket(table, index, hash string) (*bucket, limit) {
	l := limit{name: "index " + table + "." + index + " " + hash, reason: "IndexWriteKeyRangeThroughputExceeded", resource: arn(table, index)}
	if !m.shared() {
		return m.limit(l.name), l
	}
	name := m.partitionName(table, index, hash)
	p := m.partition(name)
	if key := table + "." + index + " " + hash; !m.indexKeys[key] {
		m.indexKeys[key] = true
		p.keys++
	}
	if p.keys > 1 {
		l.name = "partition " + name + " " + hash
	}
	return &p.write, l
}

// Partitions returns, while keys share partitions (Config.IsolateAfter > 0), how many
// partitions each table and index the model knows has ("T", "T.I"), and how many
// item keys split for heat has put on a partition of their own so far; nil and 0
// otherwise (every key on its own).
func (m *Model) Partitions() (counts map[string]int, isolated int) {
	if !m.shared() {
		return nil, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	counts = map[string]int{}
	for table := range m.cfg.Keys {
		counts[table] = m.partitions("")
	}
	for table, indexes := range m.cfg.Indexes {
		for _, ix := range indexes {
			counts[table+"."+ix.Name] = m.partitions(ix.Name)
		}
	}
	return counts, m.isolated
}
