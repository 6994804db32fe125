// Package ddblimits is a model of DynamoDB's limits for benchmarks and tests: an
// aws-sdk-go-v2 HTTP client (transport) that sits in front of any DynamoDB API (the
// embedded minidyn server in practice) and does to each request what DynamoDB would
// do to it under load, before and after passing it on:
//
//   - Throughput per item. An item lives in one partition, and one partition serves at
//     most 1,000 write units and 3,000 read units per second (Developer Guide,
//     "Understanding DynamoDB warm throughput in different scenarios": "each
//     individual partition is limited to 1000 write units per second and 3000 read
//     units per second"; in on-demand mode too, per the "DynamoDB throttling
//     resolution guide", key range throughput exceeded). A plain write costs 1 unit
//     per KB of item, a transactional write 2 per KB per item, a strongly consistent
//     read 1 per 4 KB, an eventually consistent read half that, a transactional read
//     2 per 4 KB (Developer Guide, "DynamoDB read and write capacity" and "Amazon
//     DynamoDB Transactions: How it works", "Capacity management for transactions").
//     Each item has a token bucket per kind, refilled at that rate and Burst deep; a
//     request that would overdraw a bucket is refused with ThrottlingException
//     (reason TableWriteKeyRangeThroughputExceeded or
//     TableReadKeyRangeThroughputExceeded, as DynamoDB API Reference,
//     ThrottlingReason, describes a hot key), and a TransactWriteItems with a
//     TransactionCanceledException whose reason for that item is ThrottlingError (API
//     Reference, TransactWriteItems).
//   - Shared partitions and split for heat (Config.IsolateAfter > 0). DynamoDB hashes
//     each partition key value onto one of its table's partitions ("Partitions and
//     data distribution in DynamoDB"), and the keys on one partition share its 1,000
//     write and 3,000 read units per second. A table or index has the partitions its
//     warm throughput implies (PartitionCount: 4 for a new on-demand table, 40 for one
//     warm to the default quota); the model places each item's partition key value and
//     each index hash key value by an FNV hash, and a refusal on a partition another
//     key shares names the partition and the refused key ("partition T#17 sku-004").
//     Adaptive capacity isolates frequently accessed items, moving a hot item onto a
//     partition of its own ("Burst and adaptive capacity",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html,
//     "Isolate frequently accessed items"; split for heat in "1- Key range throughput
//     exceeded (hot partitions)",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html),
//     after a while AWS does not state. The model's rule: an item whose requests
//     asked for more than half of its partition's units in every second of model time
//     for Config.IsolateAfter (admitted or refused) gets a partition of its own, still
//     1,000/3,000 units deep. An index key is never isolated: its entries are written
//     with a sort key that only grows (below), so the model takes it that no split
//     point spreads them. A Query takes its units from its key's partition.
//     IsolateAfter 0 gives every key a partition of its own from the start.
//   - Global secondary indexes. Every write of an item is also a write of its entries
//     in the table's indexes (Config.Indexes): a new entry one write, an entry whose
//     index key changed two (delete and put), an entry updated in place (an update
//     naming a projected attribute, or a Put over it) one, an entry removed (the item
//     deleted or its index key removed) one, 1 unit per KB of the entry (Developer
//     Guide, "Using Global Secondary Indexes in DynamoDB", "Provisioned throughput
//     considerations for Global Secondary Indexes"). The model reads an update's
//     effect from its UpdateExpression and keeps each item's index keys, and its size
//     (a Put's whole item, then each attribute an update sets or removes), as its
//     writes leave them: an item an update grew costs its new size on its next write. An index partition key (the value of the index's hash key) is one
//     partition with the same 1,000 write units per second: entries written with a
//     sort key that only grows (a time) all land at the end of the key's range, so
//     DynamoDB cannot split it by heat ("Understanding DynamoDB warm throughput":
//     split for heat does not help a range written in key order). When an index key
//     cannot take a write, DynamoDB throttles the base-table write (Developer Guide,
//     "Understanding GSI write throttling and back-pressure in DynamoDB"): the model
//     refuses the base write with ThrottlingException, reason
//     IndexWriteKeyRangeThroughputExceeded and the index's ARN as resource (a
//     transaction: ThrottlingError on that item). Assumption: index writes cost
//     standard units even for a transactional base write (index maintenance is
//     asynchronous, outside the transaction), and a write whose condition failed
//     writes no index entry.
//   - Per-table quotas: an on-demand table serves at most 40,000 read request units
//     and 40,000 write request units per second (Developer Guide, "Quotas in Amazon
//     DynamoDB", "Throughput default quotas", per table, on-demand), refused with
//     reason TableWriteAccountLimitExceeded or TableReadAccountLimitExceeded
//     (ThrottlingReason's AccountLimitExceeded).
//   - A cold table. Below its quota a table serves at once only its warm throughput:
//     a new on-demand table "will be able to sustain up to 4,000 writes per second
//     and 12,000 reads per second", and "throttling can still occur if the throughput
//     exceeds twice the previous peak within the same 30 minutes" (Developer Guide,
//     "Pre-warming a table for on-demand capacity mode",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html;
//     "Understanding DynamoDB warm throughput",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html:
//     the values a table "can instantaneously support", raised ahead of a sale by
//     pre-warming, WarmThroughput in CreateTable/UpdateTable). With
//     Config.WarmWriteUnits/WarmReadUnits set, each table's ceiling per second is
//     min(quota, max(warm, 2 × the highest units it served in one second so far)),
//     refused with the table quota's reason; the model's whole run is taken as one
//     30-minute window. Unset, the table is warm up to its quota (pre-warmed).
//     A global secondary index has its own warm throughput, with the same values for a
//     new on-demand index and raised apart from its table's (WarmThroughput on the
//     GlobalSecondaryIndex; API Reference, "GlobalSecondaryIndexWarmThroughputDescription";
//     "Understanding DynamoDB warm throughput": "available by default for all tables
//     and global secondary indexes"): with Config.IndexWarmWriteUnits set, each index's
//     writes in one second are held to WarmCeiling(IndexWarmWriteUnits, its busiest
//     second, the table's write quota), and a base write whose index entries pass it is
//     refused as a GSI's back-pressure is, reason IndexWriteAccountLimitExceeded with the
//     index's ARN ("Understanding GSI write throttling and back-pressure in DynamoDB").
//     Unset, an index is warm up to its quota and only its keys' partitions bind.
//   - Reads of Query and Scan cost what their answer holds: the items' total size
//     rounded up to 4 KB, 1 unit per 4 KB strongly consistent and half that
//     eventually consistent (index queries are always eventually consistent;
//     Developer Guide, "Query operations in DynamoDB", "Read capacity unit
//     consumption for Query"), taken from the partition the key condition names
//     (refused with IndexReadKeyRangeThroughputExceeded when it is already empty).
//   - Transaction conflicts (Developer Guide, "Transaction conflict handling in
//     DynamoDB"): an item inside a TransactWriteItems that another in-flight
//     TransactWriteItems holds cancels the newcomer with TransactionConflict; a
//     PutItem, UpdateItem or DeleteItem (or a BatchWriteItem write) of such an item
//     fails with TransactionConflictException; a TransactGetItems of it is cancelled
//     with TransactionConflict. A transaction holds its items for TransactionHold from
//     the moment it reaches the server: DynamoDB does not document how long its
//     two-phase commit keeps an item, so that window is a setting of the model.
//   - Latency: every call takes RoundTrip (half before the server sees it, half after
//     it answers), plus TransactionHold for a TransactWriteItems.
//
// Every unit a request consumes is counted per operation (Stats), per limit that
// refused it (Throttled) and on each Meter its context carries (WithMeter), so that a
// caller can say what one buyer's page view or order cost.
//
// The model runs on a scaled clock so that a small machine can stand in for a large
// fleet: with Slowdown s, every duration above lasts s times longer in real time and
// every rate is s times lower; a benchmark multiplies the rates it measures by s and
// divides the latencies by s to report them at 1×.
//
// A BatchGetItem is answered in part, as DynamoDB answers it: each read is taken on its
// own, the reads over budget come back as UnprocessedKeys, and only a batch with none
// admitted is refused whole (DynamoDB API Reference, BatchGetItem: "If at least one of
// the items is successfully processed, then BatchGetItem completes successfully, while
// returning the keys of the unread items in UnprocessedKeys").
//
// What it leaves out: partitions added as a table's throughput grows past its warm
// throughput, splits by size, partial BatchWriteItem answers (a batch with any item
// over budget is throttled whole), conflicts between TransactGetItems and plain writes, and the index entries
// of items written while the model was bypassed. A request refused by the model
// consumes nothing; one it admits consumes its base units whatever its conditions
// decide (the model's assumption: the item was read and locked either way).
package ddblimits

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stockguard/stockguard/internal/clock"
)

// Documented per-partition ceilings (Developer Guide, "Understanding DynamoDB warm
// throughput in different scenarios": "each individual partition is limited to 1000
// write units per second and 3000 read units per second").
const (
	// PartitionWriteUnits is the most write units one partition serves per second.
	PartitionWriteUnits = 1000
	// PartitionReadUnits is the most read units one partition serves per second.
	PartitionReadUnits = 3000
)

// TableRequestUnits is the default per-table throughput quota of an on-demand table,
// read request units and write request units per second each (Developer Guide,
// "Quotas in Amazon DynamoDB", "Throughput default quotas": 40,000 per table).
const TableRequestUnits = 40000

// The warm throughput of a new on-demand table, units per second ("Pre-warming a
// table for on-demand capacity mode": "New on-demand tables will be able to sustain
// up to 4,000 writes per second and 12,000 reads per second").
const (
	NewTableWriteUnits = 4000
	NewTableReadUnits  = 12000
)

// WarmCeiling is what a table whose warm throughput is warm (units per second) serves
// in one second at once after serving at most peak in any second before: up to twice
// its previous peak, never below its warm throughput ("Pre-warming a table for
// on-demand capacity mode"), never above quota.
func WarmCeiling(warm, peak, quota float64) float64 {
	return min(quota, max(warm, 2*peak))
}

// warmth is one table's (or index's) traffic per second of model time, for its warm
// ceiling.
type warmth struct {
	window time.Time // start of the current second (real time)
	units  float64   // units served in it
	peak   float64   // most units served in one earlier second
}

// Config sets the model's limits. Durations and rates are at 1× (real DynamoDB); the
// zero value of each field takes the default noted.
type Config struct {
	// WriteUnits is each partition's write ceiling in write units per second (an
	// item's, and an index partition key's); default PartitionWriteUnits (1,000).
	WriteUnits float64
	// ReadUnits is each partition's read ceiling in read units per second; default
	// PartitionReadUnits (3,000).
	ReadUnits float64
	// TableWriteUnits and TableReadUnits are each table's quotas in request units per
	// second; default TableRequestUnits (40,000) each.
	TableWriteUnits, TableReadUnits float64
	// WarmWriteUnits and WarmReadUnits are each table's warm throughput at the start,
	// units per second (NewTableWriteUnits and NewTableReadUnits for a new on-demand
	// table, or what it was pre-warmed to); 0: warm up to the quota. See the package
	// doc, "A cold table".
	WarmWriteUnits, WarmReadUnits float64
	// IndexWarmWriteUnits is each global secondary index's warm write throughput at the
	// start, units per second (NewTableWriteUnits for a new on-demand index, or what it
	// was pre-warmed to); 0: warm up to its quota. See the package doc, "A cold table".
	IndexWarmWriteUnits float64
	// Burst is how much unused capacity a partition may bank, as time at its full
	// rate; default 10 ms (10 write units). DynamoDB does not document a partition's
	// burst depth; over a window T a partition never serves more than rate × (T +
	// Burst). The table quotas bank one second.
	Burst time.Duration
	// RoundTrip is the network round trip of every call; default 5 ms.
	RoundTrip time.Duration
	// TransactionHold is how long a TransactWriteItems holds its items once it
	// reaches the server (and adds to its latency); default 2 ms.
	TransactionHold time.Duration
	// Slowdown is the clock scale s ≥ 1: durations last s times longer, rates are s
	// times lower; default 1.
	Slowdown float64
	// Now, when set, is the model's clock (a virtual one, which a tool moves itself):
	// rates and buckets are on it, no call waits in real time (the round trip and a
	// transaction's hold are not slept) and a transaction holds no item against
	// others (the clock does not move during a call); Slowdown should then be 1.
	// Default: time.Now, with the waits.
	Now func() time.Time
	// IsolateAfter, when above 0, puts keys on shared partitions: each table and index
	// has the partitions its warm throughput implies (PartitionCount), each item's
	// partition key value and each index hash key value is hashed onto one of them, and
	// the keys on one partition share its units. Split for heat gives an item key a
	// partition of its own once it has asked for more than half of its partition's
	// units in every second of model time for IsolateAfter (an index key never: see the
	// package doc). AWS does not document how long that takes; DefaultIsolateAfter is
	// the model's guess. 0: every key on a partition of its own from the start.
	IsolateAfter time.Duration
	// LoseAnswerEvery n > 0 drops the answer of every nth write call (PutItem,
	// UpdateItem, DeleteItem, TransactWriteItems) that the server applied, answering
	// it with HTTP 500 InternalServerError instead: the ambiguous outcome of a write
	// whose answer is lost (API Reference, Common Errors), which the SDK retries.
	// 0 loses nothing.
	LoseAnswerEvery int
	// Keys names each table's key attributes (table name → attribute names), which a
	// PutItem's item is identified by; Update, Delete and Get name their key outright.
	// A Put into a table not listed here passes unmetered. See KeysOf.
	Keys map[string][]string
	// Indexes lists each table's global secondary indexes (table name → indexes); a
	// table not listed has none. See IndexesOf.
	Indexes map[string][]Index
	// OnThrottle, when set, is called with the name of the limit (as Throttled names
	// it) and the time of every request a limit refuses; it must be quick and must not
	// call the model.
	OnThrottle func(limit string, at time.Time)
}

func (c Config) withDefaults() Config {
	if c.WriteUnits <= 0 {
		c.WriteUnits = PartitionWriteUnits
	}
	if c.ReadUnits <= 0 {
		c.ReadUnits = PartitionReadUnits
	}
	if c.TableWriteUnits <= 0 {
		c.TableWriteUnits = TableRequestUnits
	}
	if c.TableReadUnits <= 0 {
		c.TableReadUnits = TableRequestUnits
	}
	if c.Burst <= 0 {
		c.Burst = 10 * time.Millisecond
	}
	if c.RoundTrip <= 0 {
		c.RoundTrip = 5 * time.Millisecond
	}
	if c.TransactionHold <= 0 {
		c.TransactionHold = 2 * time.Millisecond
	}
	if c.Slowdown < 1 {
		c.Slowdown = 1
	}
	return c
}

// KeysOf lists the key attributes of tables as Config.Keys wants them, from their
// CreateTable inputs (e.g. sam.Template.Tables).
func KeysOf(tables []*dynamodb.CreateTableInput) map[string][]string {
	keys := make(map[string][]string, len(tables))
	for _, t := range tables {
		for _, k := range t.KeySchema {
			keys[aws.ToString(t.TableName)] = append(keys[aws.ToString(t.TableName)], aws.ToString(k.AttributeName))
		}
	}
	return keys
}

// Model enforces Config on the requests of every client built with its
// ClientOptions. It is safe for concurrent use; one Model is one DynamoDB.
type Model struct {
	cfg       Config
	now       func() time.Time
	bypass    atomic.Bool
	mu        sync.Mutex
	items     map[string]*itemState
	limits    map[string]*bucket // index partitions and tables, by limit name
	warm      map[string]*warmth // tables' traffic per second, by limit name
	stats     map[string]Counts
	throttled map[string]int
	first     map[string]time.Time  // when each limit first refused a request
	keyAttrs  map[string][]string   // table → the attributes that key its indexes
	parts     map[string]*partition // shared partitions by name ("T#17", "T.I#3"), Config.IsolateAfter > 0
	indexKeys map[string]bool       // index hash keys placed on their partitions ("T.I hash")
	isolated  int                   // item keys split for heat has isolated
	writes    atomic.Int64          // applied write calls, for LoseAnswerEvery
	slow      atomic.Uint64         // the clock scale in force (float64 bits): Config.Slowdown until SetSlowdown
}

// Counts are what the model did with one operation's requests.
type Counts struct {
	Requests  int // requests seen (each SDK attempt is one)
	Conflicts int // refused for a transaction conflict
	Throttles int // refused for throughput
	Partial   int // BatchGetItem answered in part: some reads over budget left unprocessed
	Lost      int // applied, but answered InternalServerError (Config.LoseAnswerEvery)
	// WriteUnits are the write units consumed: the base items' and, once applied,
	// their index entries' (IndexWriteUnits of them). ReadUnits are the read units.
	WriteUnits, IndexWriteUnits, ReadUnits float64
}

// New returns a model enforcing cfg (defaults filled in).
func New(cfg Config) *Model {
	m := &Model{
		cfg: cfg.withDefaults(), now: time.Now, items: map[string]*itemState{}, limits: map[string]*bucket{}, warm: map[string]*warmth{},
		stats: map[string]Counts{}, throttled: map[string]int{}, first: map[string]time.Time{}, keyAttrs: map[string][]string{},
		parts: map[string]*partition{}, indexKeys: map[string]bool{},
	}
	if cfg.Now != nil {
		m.now = cfg.Now
	}
	m.slow.Store(math.Float64bits(m.cfg.Slowdown))
	for table, indexes := range m.cfg.Indexes {
		for _, ix := range indexes {
			for _, a := range ix.keyAttributes() {
				if !slices.Contains(m.keyAttrs[table], a) {
					m.keyAttrs[table] = append(m.keyAttrs[table], a)
				}
			}
		}
	}
	return m
}

// SetSlowdown changes the clock scale from now on (below 1: 1): the round trips, a
// transaction's hold, the retryers' backoff and the rates of every limit follow the
// new scale, while the buckets keep the units they hold and every request is still
// metered and counted. A rehearsal runs what comes after its sale (the last sweep,
// reconcile) at 1× this way, which on the sale's slowed clock would take the slowdown
// times longer in wall time for nothing it measures.
func (m *Model) SetSlowdown(s float64) { m.slow.Store(math.Float64bits(max(s, 1))) }

// slowdown is the clock scale in force.
func (m *Model) slowdown() float64 { return math.Float64frombits(m.slow.Load()) }

// Config returns the configuration the model was made with, defaults filled in
// (Slowdown as made, whatever SetSlowdown set since).
func (m *Model) Config() Config { return m.cfg }

// Stats returns the counts so far by operation name ("TransactWriteItems", ...).
func (m *Model) Stats() map[string]Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.stats)
}

// Throttled returns how many requests each limit refused so far, by the limit's
// name: "item <table> <key>" for an item's partition, "index <table>.<index> <hash
// key value>" for an index partition, "partition <table>#<n> <key>" (or
// "partition <table>.<index>#<n> <hash key value>") for a partition the refused key
// shares with others (Config.IsolateAfter), "table <table> writes" (or reads) for a
// table's quota. A request refused by several limits counts once, on the first.
func (m *Model) Throttled() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.throttled)
}

// FirstThrottled returns when each limit of Throttled first refused a request (real
// time).
func (m *Model) FirstThrottled() map[string]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.first)
}

// Bypass switches the model off (on = true: requests pass straight through, with no
// latency, limits or counts) or back on. Benchmarks bring their fleet up with it off,
// as a fleet warmed before the measured traffic would be.
func (m *Model) Bypass(on bool) { m.bypass.Store(on) }

// real converts a model duration to real time.
func (m *Model) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) * m.slowdown())
}

// wait is how long a call waits in real time for model duration d: 0 on a virtual
// clock (Config.Now).
func (m *Model) wait(d time.Duration) time.Duration {
	if m.cfg.Now != nil {
		return 0
	}
	return m.real(d)
}

// Meter adds up what the requests made with a context carrying it (WithMeter)
// consumed: write and read units (index writes included once applied), requests
// (each SDK attempt), refusals for throughput, and write requests that did not apply
// (refused by the model for throughput or a transaction conflict, or answered with an
// error by the server: a failed condition, a cancelled transaction). Safe for
// concurrent use.
type Meter struct {
	write, read                    atomic.Int64 // micro-units
	requests, throttles, unapplied atomic.Int64
	byOp                           [len(MeteredOperations)]atomic.Int64 // micro-units, write and read
}

// MeteredOperations are the DynamoDB operations a Meter counts apart
// (Meter.OperationUnits takes an index into it): the write operations' units are
// write units (their index entries' included), the others' read units.
var MeteredOperations = [...]string{"TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem",
	"GetItem", "BatchGetItem", "TransactGetItems", "Query", "Scan"}

// OperationUnits returns the units counted so far for MeteredOperations[i]: write
// units for a write operation, read units for a read.
func (m *Meter) OperationUnits(i int) float64 { return float64(m.byOp[i].Load()) / 1e6 }

// WithMeter returns ctx carrying m as well as the meters ctx already carries.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	outer, _ := ctx.Value(meterKey{}).([]*Meter)
	return context.WithValue(ctx, meterKey{}, append(slices.Clip(outer), m))
}

type meterKey struct{}

// WriteUnits returns the write units counted so far.
func (m *Meter) WriteUnits() float64 { return float64(m.write.Load()) / 1e6 }

// ReadUnits returns the read units counted so far.
func (m *Meter) ReadUnits() float64 { return float64(m.read.Load()) / 1e6 }

// Requests returns the requests counted so far (retries included).
func (m *Meter) Requests() int64 { return m.requests.Load() }

// Throttles returns the requests refused for throughput so far.
func (m *Meter) Throttles() int64 { return m.throttles.Load() }

// Unapplied returns the write requests that did not apply so far: each was sent
// again or decided otherwise, so the units of a request that had one are more than
// one clean send's.
func (m *Meter) Unapplied() int64 { return m.unapplied.Load() }

// unapplied counts a write request that did not apply on every meter of ctx.
func unapplied(ctx context.Context) {
	ms, _ := ctx.Value(meterKey{}).([]*Meter)
	for _, m := range ms {
		m.unapplied.Add(1)
	}
}

// meters adds write and read units, a request and a refusal to every meter of ctx.
func meters(ctx context.Context, op string, write, read float64, request, throttled bool) {
	ms, _ := ctx.Value(meterKey{}).([]*Meter)
	i := slices.Index(MeteredOperations[:], op)
	for _, m := range ms {
		m.write.Add(int64(write * 1e6))
		m.read.Add(int64(read * 1e6))
		if i >= 0 {
			m.byOp[i].Add(int64((write + read) * 1e6))
		}
		if request {
			m.requests.Add(1)
		}
		if throttled {
			m.throttles.Add(1)
		}
	}
}

// ClientOptions makes a DynamoDB client go through the model: its HTTP client is
// wrapped by the model's transport, and its retryer's backoff is stretched by
// Slowdown so that retries keep their 1× pacing. Apply it after the client's own
// options, e.g. local.NewDynamoDBClient(url, dynamo.ClientOptions, m.ClientOptions).
func (m *Model) ClientOptions(o *dynamodb.Options) {
	next := o.HTTPClient
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	o.HTTPClient = &transport{m: m, next: next}
	if o.Retryer != nil {
		o.Retryer = slowRetryer{RetryerV2: retryerV2(o.Retryer), m: m}
	}
}

// Delay returns an HTTP client that adds roundTrip × slowdown of latency (half before
// the request, half after the answer) to every call through next (nil: the SDK's
// default client): the network of a service the model does not meter, such as SQS.
func Delay(next aws.HTTPClient, roundTrip time.Duration, slowdown float64) aws.HTTPClient {
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	return delayed{next: next, half: time.Duration(float64(roundTrip) * max(slowdown, 1) / 2)}
}

type delayed struct {
	next aws.HTTPClient
	half time.Duration
}

func (d delayed) Do(req *http.Request) (*http.Response, error) {
	if err := clock.Sleep(req.Context(), d.half); err != nil {
		return nil, err
	}
	resp, err := d.next.Do(req)
	if err != nil {
		return nil, err
	}
	if err := clock.Sleep(req.Context(), d.half); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// slowRetryer stretches the SDK retryer's backoff by the clock scale.
type slowRetryer struct {
	aws.RetryerV2
	m *Model
}

func (r slowRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	d, err := r.RetryerV2.RetryDelay(attempt, err)
	return time.Duration(float64(d) * r.m.slowdown()), err
}

// retryerV2 adapts an aws.Retryer that lacks the context-aware GetAttemptToken.
func retryerV2(r aws.Retryer) aws.RetryerV2 {
	if v2, ok := r.(aws.RetryerV2); ok {
		return v2
	}
	return v1Retryer{r}
}

type v1Retryer struct{ aws.Retryer }

func (r v1Retryer) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.Retryer.GetInitialToken(), nil
}

// transport is the model in front of one DynamoDB API endpoint.
type transport struct {
	m    *Model
	next aws.HTTPClient
}

const targetPrefix = "DynamoDB_20120810."

// Do plays one call: half a round trip out, admission, the server (and the hold of a
// transaction), the index writes and reads its answer says it made, half a round trip
// back.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	m := t.m
	ctx := req.Context()
	if m.bypass.Load() {
		return t.next.Do(req)
	}
	op, ok := strings.CutPrefix(req.Header.Get("X-Amz-Target"), targetPrefix)
	if !ok {
		return delayed{next: t.next, half: m.wait(m.cfg.RoundTrip) / 2}.Do(req)
	}
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	half := m.wait(m.cfg.RoundTrip) / 2
	if err := clock.Sleep(ctx, half); err != nil {
		return nil, err
	}
	r, perr := parseRequest(op, body, m.cfg.Keys, m.cfg.Indexes)
	arrived := m.now()
	var v verdict
	if perr == nil {
		v = m.admit(arrived, op, r)
	} else {
		m.count(op, verdict{})
	}
	meters(ctx, op, v.write, v.read, true, len(v.throttle) > 0 || len(v.unprocessed) > 0)
	if writeOps[op] && v.refused() {
		unapplied(ctx)
	}
	var resp *http.Response
	var err error
	if v.refused() {
		resp = v.response(op, r)
	} else if resp, err = t.serveAdmitted(req, body, op, r, v, arrived); err != nil {
		return nil, err
	}
	if err := clock.Sleep(ctx, half); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// serveAdmitted serves an admitted call whose body is body: a BatchGetItem answered
// in part is sent without its unprocessed reads, which its answer then lists in
// UnprocessedKeys.
func (t *transport) serveAdmitted(req *http.Request, body []byte, op string, r request, v verdict, arrived time.Time) (*http.Response, error) {
	if len(v.unprocessed) == 0 {
		return t.serve(req, op, r, arrived)
	}
	sent, left, err := splitBatchGet(body, v.unprocessed)
	if err != nil {
		return nil, err
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(sent)), int64(len(sent))
	resp, err := t.serve(req, op, r, arrived)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	return withUnprocessed(resp, left)
}

// serve sends an admitted call, which arrived at arrived, to the server and returns
// its answer as the model shapes it: the index writes and reads an OK answer says it
// made, the hold of a transaction, and a lost answer (Config.LoseAnswerEvery).
func (t *transport) serve(req *http.Request, op string, r request, arrived time.Time) (*http.Response, error) {
	m, ctx := t.m, req.Context()
	resp, err := t.next.Do(req)
	if err != nil {
		return nil, err
	}
	if writeOps[op] && resp.StatusCode != http.StatusOK {
		unapplied(ctx)
	}
	if resp.StatusCode == http.StatusOK {
		if resp, err = m.answered(ctx, op, r, resp); err != nil {
			return nil, err
		}
	}
	if op == "TransactWriteItems" && m.cfg.Now == nil {
		if err := clock.Sleep(ctx, time.Until(arrived.Add(m.real(m.cfg.TransactionHold)))); err != nil {
			resp.Body.Close()
			return nil, err
		}
	}
	return m.maybeLose(op, resp), nil
}

// writeOps are the write calls LoseAnswerEvery counts.
var writeOps = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true, "TransactWriteItems": true}

// maybeLose returns resp, or, when it answers the nth applied write call of
// Config.LoseAnswerEvery, an InternalServerError in its place (counted as Lost).
func (m *Model) maybeLose(op string, resp *http.Response) *http.Response {
	every := int64(m.cfg.LoseAnswerEvery)
	if every <= 0 || !writeOps[op] || resp.StatusCode != http.StatusOK || m.writes.Add(1)%every != 0 {
		return resp
	}
	resp.Body.Close()
	m.mu.Lock()
	c := m.stats[op]
	c.Lost++
	m.stats[op] = c
	m.mu.Unlock()
	return lostAnswer()
}

// itemState is one item's buckets, transaction hold and index entries, in real time.
type itemState struct {
	write, read bucket
	heldUntil   time.Time
	size        int                     // bytes: the item's last written size as the model estimates it
	attrs       fields[int]             // bytes of each top-level attribute (name and value), as its writes left them
	whole       bool                    // attrs cover the whole item: it was Put through the model
	keyAttrs    fields[json.RawMessage] // the item's index key attributes, as its writes left them
	entries     fields[indexEntry]      // index name → the item's entry there
	heat        *keyHeat                // its traffic for split for heat (Config.IsolateAfter > 0)
}

// bucket is a token bucket of capacity units.
type bucket struct {
	tokens float64
	at     time.Time
	primed bool
}

// refill brings the bucket to now at rate per second, depth deep (full the first
// time).
func (b *bucket) refill(now time.Time, rate, depth float64) {
	if !b.primed {
		b.tokens, b.at, b.primed = depth, now, true
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(depth, b.tokens+dt*rate)
		b.at = now
	}
}

// take refills the bucket and takes units when it holds them (a request larger than
// the whole depth passes on a full bucket and leaves it in debt). It reports whether
// it took them; without commit it only checks.
func (b *bucket) take(now time.Time, rate, depth, units float64, commit bool) bool {
	b.refill(now, rate, depth)
	if b.tokens < min(units, depth) {
		return false
	}
	if commit {
		b.tokens -= units
	}
	return true
}

// charge refills the bucket and takes units whatever it holds (it may go into debt):
// units spent by a request admitted earlier.
func (b *bucket) charge(now time.Time, rate, depth, units float64) {
	b.refill(now, rate, depth)
	b.tokens -= units
}

// verdict is the model's answer to one request.
type verdict struct {
	conflict []int // indexes of accesses refused for a transaction conflict
	throttle []int // indexes of accesses refused for throughput
	// unprocessed are the indexes of a BatchGetItem's reads over budget when others
	// were admitted: the request goes on without them, answered as UnprocessedKeys.
	unprocessed []int
	limits      map[int]limit // the limit that refused each throttled access
	// write and read are the units an admitted request took (0 when refused).
	write, read float64
}

func (v verdict) refused() bool { return len(v.conflict) > 0 || len(v.throttle) > 0 }

func (v *verdict) throttled(i int, l limit) {
	if v.limits == nil {
		v.limits = map[int]limit{}
	}
	if _, ok := v.limits[i]; !ok {
		v.throttle = append(v.throttle, i)
		v.limits[i] = l
	}
}

// admit decides one request arriving at now: conflicts first, then throughput (the
// item's partition, the table's quota, the partitions of the index entries a write
// would write, the partition a Query reads); an admitted request takes its units from
// every item and table it touches, and a TransactWriteItems holds its items for
// TransactionHold. Index units are taken once the write is applied (answered).
func (m *Model) admit(now time.Time, op string, r request) verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v verdict
	m.checkHolds(now, r, &v)
	if q := r.query; q != nil {
		m.checkQueryPartition(now, q, &v)
	}
	var write, read float64
	switch {
	case len(v.conflict) > 0 || len(v.throttle) > 0:
	case op == "BatchGetItem":
		read = m.takeEach(now, r, &v)
	default:
		write, read = m.takeThroughput(now, r, &v)
	}
	if len(v.throttle) > 0 {
		m.recordThrottleLocked(now, v)
	}
	if len(v.throttle) > 0 && len(v.throttle) < len(r.accesses) && op == "BatchGetItem" {
		v.unprocessed, v.throttle = v.throttle, nil // answered in part: not refused
	}
	if !v.refused() && op == "TransactWriteItems" {
		until := now.Add(m.real(m.cfg.TransactionHold))
		for _, a := range r.accesses {
			m.state(a.item).heldUntil = until
		}
	}
	if v.refused() {
		write, read = 0, 0
	}
	m.countLocked(op, v)
	m.addUnitsLocked(op, write, 0, read)
	v.write, v.read = write, read
	return v
}

// checkHolds marks in v as conflicts the accesses of r that check a transaction's
// hold on an item still held at now. m.mu is held.
func (m *Model) checkHolds(now time.Time, r request, v *verdict) {
	if m.cfg.Now != nil {
		return
	}
	for i, a := range r.accesses {
		if a.checksHold && m.state(a.item).heldUntil.After(now) {
			v.conflict = append(v.conflict, i)
		}
	}
}

// checkQueryPartition marks in v the Query or Scan q throttled when the partition it
// reads has less than half a unit left at now (a read takes at least half a unit).
// It takes nothing. m.mu is held.
func (m *Model) checkQueryPartition(now time.Time, q *query, v *verdict) {
	if b, l := m.queryBucket(q); !b.take(now, m.cfg.ReadUnits/m.slowdown(), m.cfg.ReadUnits*m.cfg.Burst.Seconds(), 0.5, false) {
		v.throttled(0, l)
	}
}

// takeThroughput checks every access of r against its item's partition, its table's
// quota and (for a write) the index partitions it would write, marking in v the ones
// throttled; when none is, it takes the units. It returns the write and read units
// of r's accesses. m.mu is held.
func (m *Model) takeThroughput(now time.Time, r request, v *verdict) (write, read float64) {
	for commit := range 2 {
		write, read = 0, 0
		for i, a := range r.accesses {
			s := m.state(a.item)
			if a.putSize > 0 {
				s.size = a.putSize
			}
			units := m.units(s, a)
			if commit == 0 && m.shared() {
				m.offer(s, a, now, units)
			}
			if a.write {
				write += units
			} else {
				read += units
			}
			if l, ok := m.takeBase(s, now, a, units, commit == 1); !ok {
				v.throttled(i, l)
			} else if commit == 0 && a.change != nil {
				m.checkIndexWrites(now, s, i, a, v)
			}
		}
		if len(v.throttle) > 0 {
			break
		}
	}
	return write, read
}

// takeEach takes the units of each read of a BatchGetItem on its own: a read over its
// partition's or its table's budget is marked throttled in v and takes nothing, the
// others take theirs (the package comment's BatchGetItem rule). It returns the read
// units taken. m.mu is held.
func (m *Model) takeEach(now time.Time, r request, v *verdict) (read float64) {
	for i, a := range r.accesses {
		s := m.state(a.item)
		units := m.units(s, a)
		if m.shared() {
			m.offer(s, a, now, units)
		}
		if l, ok := m.takeBase(s, now, a, units, false); !ok {
			v.throttled(i, l)
			continue
		}
		m.takeBase(s, now, a, units, true)
		read += units
	}
	return read
}

// checkIndexWrites marks in v the write a (the i-th access) throttled when an index
// partition it would write has not the units left at now. It takes nothing (index
// units are taken once the write is applied). m.mu is held.
func (m *Model) checkIndexWrites(now time.Time, s *itemState, i int, a access, v *verdict) {
	perIndex := map[string]float64{}
	for _, w := range m.plannedIndexWrites(s, a) {
		if b, l := m.indexBucket(a.table, w.index, w.hash); !b.take(now, m.cfg.WriteUnits/m.slowdown(), m.cfg.WriteUnits*m.cfg.Burst.Seconds(), w.units, false) {
			v.throttled(i, l)
		}
		perIndex[w.index] += w.units
	}
	if m.cfg.IndexWarmWriteUnits <= 0 {
		return
	}
	for _, index := range slices.Sorted(maps.Keys(perIndex)) {
		l := indexWritesLimit(a.table, index)
		if w := m.warmth(now, l.name); w.units+perIndex[index] > WarmCeiling(m.cfg.IndexWarmWriteUnits, w.peak, m.cfg.TableWriteUnits) {
			v.throttled(i, l)
		}
	}
}

// indexWritesLimit is the limit of all writes to one index (its warm throughput).
func indexWritesLimit(table, index string) limit {
	return limit{name: "index " + table + "." + index + " writes", reason: "IndexWriteAccountLimitExceeded", resource: arn(table, index)}
}

// warmth is the traffic of the table or index limit name in the current second of
// model time at now, the second before rolled into its peak.
func (m *Model) warmth(now time.Time, name string) *warmth {
	w := m.warm[name]
	if w == nil {
		w = &warmth{window: now}
		m.warm[name] = w
	}
	second := time.Duration(float64(time.Second) * m.slowdown())
	if now.Sub(w.window) >= second {
		w.peak = max(w.peak, w.units)
		w.units = 0
		w.window = w.window.Add(now.Sub(w.window).Truncate(second))
	}
	return w
}

// recordThrottleLocked counts the throttle of the throttled verdict v against the
// limit that refused its first throttled access, notes when that limit first
// throttled and tells OnThrottle. m.mu is held.
func (m *Model) recordThrottleLocked(now time.Time, v verdict) {
	name := v.limits[v.throttle[0]].name
	m.throttled[name]++
	if _, ok := m.first[name]; !ok {
		m.first[name] = now
	}
	if m.cfg.OnThrottle != nil {
		m.cfg.OnThrottle(name, now)
	}
}

// state is the item's state, created empty on first use.
func (m *Model) state(item string) *itemState { return entry(m.items, item) }

// entry is the value of name in byName, created empty on first use.
func entry[V any](byName map[string]*V, name string) *V {
	v := byName[name]
	if v == nil {
		v = new(V)
		byName[name] = v
	}
	return v
}

// limit is the bucket of a named limit (an index partition or a table quota).
func (m *Model) limit(name string) *bucket { return entry(m.limits, name) }

// units is what one access costs: per KB of the item written (transactional twice),
// per 4 KB read (eventually consistent half, transactional twice).
func (m *Model) units(s *itemState, a access) float64 {
	size := max(s.size, a.putSize, 1)
	if a.write {
		return float64((size+1023)/1024) * a.factor
	}
	return float64((size+4095)/4096) * a.factor
}

// takeBase checks (and with commit, takes) one access's units from its item's bucket
// and its table's quota, and names the limit that refused it.
func (m *Model) takeBase(s *itemState, now time.Time, a access, units float64, commit bool) (limit, bool) {
	slow := m.slowdown()
	b, key := m.itemBucket(s, a)
	if a.write {
		if !b.take(now, m.cfg.WriteUnits/slow, m.cfg.WriteUnits*m.cfg.Burst.Seconds(), units, commit) {
			return key, false
		}
		l := limit{name: "table " + a.table + " writes", reason: "TableWriteAccountLimitExceeded", resource: arn(a.table, "")}
		return l, m.takeTable(now, l.name, m.cfg.TableWriteUnits, m.cfg.WarmWriteUnits, units, commit)
	}
	if !b.take(now, m.cfg.ReadUnits/slow, m.cfg.ReadUnits*m.cfg.Burst.Seconds(), units, commit) {
		return key, false
	}
	l := limit{name: "table " + a.table + " reads", reason: "TableReadAccountLimitExceeded", resource: arn(a.table, "")}
	return l, m.takeTable(now, l.name, m.cfg.TableReadUnits, m.cfg.WarmReadUnits, units, commit)
}

// takeTable checks (and with commit, takes) units from the table limit name: its
// quota's bucket and, when warm > 0, its warm ceiling for the current second
// (WarmCeiling of the busiest second before it).
func (m *Model) takeTable(now time.Time, name string, quota, warm, units float64, commit bool) bool {
	slow := m.slowdown()
	if warm > 0 {
		w := m.warmth(now, name)
		if w.units+units > WarmCeiling(warm, w.peak, quota) {
			return false
		}
		if !m.limit(name).take(now, quota/slow, quota, units, commit) {
			return false
		}
		if commit {
			w.units += units
		}
		return true
	}
	return m.limit(name).take(now, quota/slow, quota, units, commit)
}

// queryLimit names the partition a Query reads (a Scan: its table's quota).
func (m *Model) queryLimit(q *query) limit {
	if q.index != "" {
		return limit{name: "index " + q.table + "." + q.index + " " + q.hash + " reads", reason: "IndexReadKeyRangeThroughputExceeded", resource: arn(q.table, q.index)}
	}
	if q.hash != "" {
		return limit{name: "item " + q.table + " " + q.hash + " reads", reason: "TableReadKeyRangeThroughputExceeded", resource: arn(q.table, "")}
	}
	return limit{name: "table " + q.table + " reads", reason: "TableReadAccountLimitExceeded", resource: arn(q.table, "")}
}

// queryBucket is the bucket a Query or Scan takes its read units from and the limit
// that names a refusal: queryLimit's own, or, while keys share partitions, the read
// bucket of the partition its key hashes onto (named "partition <name> <key> reads"
// once another key shares it). m.mu is held.
func (m *Model) queryBucket(q *query) (*bucket, limit) {
	l := m.queryLimit(q)
	if !m.shared() || q.hash == "" {
		return m.limit(l.name), l
	}
	name := m.partitionName(q.table, q.index, q.hash)
	p := m.partition(name)
	if p.keys > 1 {
		l.name = "partition " + name + " " + q.hash + " reads"
	}
	return &p.read, l
}

// plannedIndexWrites are the index writes a (not yet applied) write would make.
func (m *Model) plannedIndexWrites(s *itemState, a access) []indexWrite {
	indexes := m.cfg.Indexes[a.table]
	if len(indexes) == 0 {
		return nil
	}
	after := entries(indexes, m.cfg.Keys[a.table], s.entries, m.nextKeyAttrs(s, a), a.change, max(s.size, a.putSize))
	return indexWrites(indexes, s.entries, after, a.change)
}

// nextKeyAttrs are the index key attributes an item has after write a.
func (m *Model) nextKeyAttrs(s *itemState, a access) fields[json.RawMessage] {
	c := a.change
	var next fields[json.RawMessage]
	for _, name := range m.keyAttrs[a.table] {
		switch {
		case c.delete:
		case c.put != nil:
			if v, ok := c.put[name]; ok {
				next.set(name, v)
			}
		case c.remove[name]:
		default:
			if v, ok := c.set[name]; ok {
				next.set(name, v)
			} else if v, ok := s.keyAttrs.get(name); ok {
				next.set(name, v)
			}
		}
	}
	return next
}

// answered accounts for a request the server answered 200: a write's index entries
// are written (applied), a Query's or Scan's answer is read for the units it cost
// (queried). It returns the answer, whose body it may have read and replaced.
func (m *Model) answered(ctx context.Context, op string, r request, resp *http.Response) (*http.Response, error) {
	if r.query == nil {
		if units := m.applied(m.now(), op, r); units > 0 {
			meters(ctx, op, units, 0, false, false)
		}
		return resp, nil
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	var out struct{ Items []rawItem }
	_ = json.Unmarshal(raw, &out)
	size := 0
	for _, it := range out.Items {
		size += itemSize(it)
	}
	meters(ctx, op, 0, m.queried(m.now(), op, r.query, size), false, false)
	return resp, nil
}

// applied writes the index entries of an applied write request at now: each write's
// entries move from what the item had to what the write leaves, and the index writes
// that takes are charged to their index partitions (possibly into debt: the request
// was admitted when they had room). It returns the index write units.
func (m *Model) applied(now time.Time, op string, r request) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	units := 0.0
	for _, a := range r.accesses {
		if a.change == nil {
			continue
		}
		s := m.state(a.item)
		s.learn(a.change)
		indexes := m.cfg.Indexes[a.table]
		if len(indexes) == 0 {
			continue
		}
		next := m.nextKeyAttrs(s, a)
		after := entries(indexes, m.cfg.Keys[a.table], s.entries, next, a.change, max(s.size, a.putSize))
		for _, w := range indexWrites(indexes, s.entries, after, a.change) {
			b, _ := m.indexBucket(a.table, w.index, w.hash)
			b.charge(now, m.cfg.WriteUnits/m.slowdown(), m.cfg.WriteUnits*m.cfg.Burst.Seconds(), w.units)
			if m.cfg.IndexWarmWriteUnits > 0 {
				m.warmth(now, indexWritesLimit(a.table, w.index).name).units += w.units
			}
			units += w.units
		}
		s.keyAttrs, s.entries = next, after
	}
	m.addUnitsLocked(op, units, units, 0)
	return units
}

// learn keeps the item's size as the applied write c leaves it, so that its next write
// costs what the item has grown (or shrunk) to: a Put's whole item; an Update's
// attributes set to a value it names, each replacing the attribute's size, and those
// it removes (a nested path, an ADD or an expression leaves the attribute's size as it
// was). An item never Put through the model is at least its last size and what its
// updates set. The write itself was charged at the size before it (DynamoDB charges an
// update the larger of before and after: the model under-charges the write that grows
// an item, not those after it).
func (s *itemState) learn(c *change) {
	switch {
	case c.put != nil:
		s.attrs, s.whole = make(fields[int], 0, len(c.put)), true
		for n, v := range c.put {
			s.attrs.set(n, len(n)+len(v))
		}
	case c.delete:
		s.attrs, s.whole, s.size = nil, false, 0
		return
	default:
		for n, v := range c.set {
			if v != nil {
				s.attrs.set(n, len(n)+len(v))
			}
		}
		for n := range c.remove {
			s.attrs.del(n)
		}
	}
	n := 0
	for _, b := range s.attrs {
		n += b.v
	}
	if s.whole {
		s.size = n
	} else {
		s.size = max(s.size, n)
	}
}

// queried charges a Query or Scan whose answer held size bytes of items at now: the
// size rounded up to 4 KB (at least one 4 KB unit), times its read factor, taken from
// the partition it read. It returns the read units.
func (m *Model) queried(now time.Time, op string, q *query, size int) float64 {
	units := float64(max((size+4095)/4096, 1)) * q.factor
	m.mu.Lock()
	defer m.mu.Unlock()
	b, _ := m.queryBucket(q)
	b.charge(now, m.cfg.ReadUnits/m.slowdown(), m.cfg.ReadUnits*m.cfg.Burst.Seconds(), units)
	m.addUnitsLocked(op, 0, 0, units)
	return units
}

func (m *Model) count(op string, v verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.countLocked(op, v)
}

// countLocked counts one request of op and what the model did with it.
func (m *Model) countLocked(op string, v verdict) {
	c := m.stats[op]
	c.Requests++
	switch {
	case len(v.conflict) > 0:
		c.Conflicts++
	case len(v.throttle) > 0:
		c.Throttles++
	case len(v.unprocessed) > 0:
		c.Partial++
	}
	m.stats[op] = c
}

// addUnitsLocked adds units consumed by requests of op: write units (index of them
// for index entries) and read units.
func (m *Model) addUnitsLocked(op string, write, index, read float64) {
	if write == 0 && read == 0 {
		return
	}
	c := m.stats[op]
	c.WriteUnits += write
	c.IndexWriteUnits += index
	c.ReadUnits += read
	m.stats[op] = c
}

// Held lists the items (as "table|key") that an in-flight transaction holds at now,
// sorted: for tests that want to know a transaction has reached the server.
func (m *Model) Held(now time.Time) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var held []string
	for k, s := range m.items {
		if s.heldUntil.After(now) {
			held = append(held, k)
		}
	}
	slices.Sort(held)
	return held
}
