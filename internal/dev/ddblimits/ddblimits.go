// Package ddblimits is a model of DynamoDB's per-item limits for benchmarks and tests:
// an aws-sdk-go-v2 HTTP client (transport) that sits in front of any DynamoDB API
// (the embedded minidyn server in practice) and does to each request what DynamoDB
// would do to it on a hot key, before and after passing it on:
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
// The model runs on a scaled clock so that a small machine can stand in for a large
// fleet: with Slowdown s, every duration above lasts s times longer in real time and
// every rate is s times lower; a benchmark multiplies the rates it measures by s and
// divides the latencies by s to report them at 1×.
//
// What it leaves out: admission control above the item (table and account quotas,
// adaptive capacity splitting a partition), Query and Scan (passed through unmetered),
// partial BatchGetItem/BatchWriteItem answers (a batch with any item over budget is
// throttled whole), and conflicts between TransactGetItems and plain writes. A
// request refused by the model consumes nothing; one it admits consumes its units
// whatever its conditions decide (the model's assumption: the item was read and
// locked either way).
package ddblimits

import (
	"bytes"
	"context"
	"io"
	"maps"
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

// Config sets the model's limits. Durations and rates are at 1× (real DynamoDB); the
// zero value of each field takes the default noted.
type Config struct {
	// WriteUnits is each item's write ceiling in write units per second; default
	// PartitionWriteUnits (1,000).
	WriteUnits float64
	// ReadUnits is each item's read ceiling in read units per second; default
	// PartitionReadUnits (3,000).
	ReadUnits float64
	// Burst is how much unused capacity an item may bank, as time at its full rate;
	// default 10 ms (10 write units). DynamoDB does not document a partition's burst
	// depth; over a window T an item never serves more than rate × (T + Burst).
	Burst time.Duration
	// RoundTrip is the network round trip of every call; default 5 ms.
	RoundTrip time.Duration
	// TransactionHold is how long a TransactWriteItems holds its items once it
	// reaches the server (and adds to its latency); default 2 ms.
	TransactionHold time.Duration
	// Slowdown is the clock scale s ≥ 1: durations last s times longer, rates are s
	// times lower; default 1.
	Slowdown float64
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
}

func (c Config) withDefaults() Config {
	if c.WriteUnits <= 0 {
		c.WriteUnits = PartitionWriteUnits
	}
	if c.ReadUnits <= 0 {
		c.ReadUnits = PartitionReadUnits
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
	cfg    Config
	now    func() time.Time
	bypass atomic.Bool
	mu     sync.Mutex
	items  map[string]*itemState
	stats  map[string]Counts
	writes atomic.Int64 // applied write calls, for LoseAnswerEvery
}

// Counts are what the model did with one operation's requests.
type Counts struct {
	Requests  int // requests seen (each SDK attempt is one)
	Conflicts int // refused for a transaction conflict
	Throttles int // refused for throughput
	Lost      int // applied, but answered InternalServerError (Config.LoseAnswerEvery)
}

// New returns a model enforcing cfg (defaults filled in).
func New(cfg Config) *Model {
	return &Model{cfg: cfg.withDefaults(), now: time.Now, items: map[string]*itemState{}, stats: map[string]Counts{}}
}

// Config returns the configuration in force, defaults filled in.
func (m *Model) Config() Config { return m.cfg }

// Stats returns the counts so far by operation name ("TransactWriteItems", ...).
func (m *Model) Stats() map[string]Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.stats)
}

// Bypass switches the model off (on = true: requests pass straight through, with no
// latency, limits or counts) or back on. Benchmarks bring their fleet up with it off,
// as a fleet warmed before the measured traffic would be.
func (m *Model) Bypass(on bool) { m.bypass.Store(on) }

// real converts a model duration to real time.
func (m *Model) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) * m.cfg.Slowdown)
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
		o.Retryer = slowRetryer{RetryerV2: retryerV2(o.Retryer), slowdown: m.cfg.Slowdown}
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
	slowdown float64
}

func (r slowRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	d, err := r.RetryerV2.RetryDelay(attempt, err)
	return time.Duration(float64(d) * r.slowdown), err
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
// transaction), half a round trip back.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	m := t.m
	ctx := req.Context()
	if m.bypass.Load() {
		return t.next.Do(req)
	}
	op, ok := strings.CutPrefix(req.Header.Get("X-Amz-Target"), targetPrefix)
	if !ok {
		return delayed{next: t.next, half: m.real(m.cfg.RoundTrip) / 2}.Do(req)
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
	half := m.real(m.cfg.RoundTrip) / 2
	if err := clock.Sleep(ctx, half); err != nil {
		return nil, err
	}
	r, perr := parseRequest(op, body, m.cfg.Keys)
	arrived := m.now()
	var v verdict
	if perr == nil {
		v = m.admit(arrived, op, r)
	} else {
		m.count(op, verdict{})
	}
	var resp *http.Response
	if v.refused() {
		resp = v.response(op, r)
	} else {
		var err error
		if resp, err = t.next.Do(req); err != nil {
			return nil, err
		}
		if op == "TransactWriteItems" {
			if err := clock.Sleep(ctx, time.Until(arrived.Add(m.real(m.cfg.TransactionHold)))); err != nil {
				resp.Body.Close()
				return nil, err
			}
		}
		resp = m.maybeLose(op, resp)
	}
	if err := clock.Sleep(ctx, half); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
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

// itemState is one item's buckets and transaction hold, in real time.
type itemState struct {
	write, read bucket
	heldUntil   time.Time
	size        int // bytes: the item's last written size as the model estimates it
}

// bucket is a token bucket of capacity units.
type bucket struct {
	tokens float64
	at     time.Time
	primed bool
}

// take refills the bucket to now at rate per second (capacity depth) and takes units
// when it holds them (a request larger than the whole depth passes on a full bucket
// and leaves it in debt). It reports whether it took them.
func (b *bucket) take(now time.Time, rate, depth, units float64, commit bool) bool {
	if !b.primed {
		b.tokens, b.at, b.primed = depth, now, true
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(depth, b.tokens+dt*rate)
		b.at = now
	}
	if b.tokens < min(units, depth) {
		return false
	}
	if commit {
		b.tokens -= units
	}
	return true
}

// verdict is the model's answer to one request.
type verdict struct {
	conflict []int // indexes of accesses refused for a transaction conflict
	throttle []int // indexes of accesses refused for throughput
}

func (v verdict) refused() bool { return len(v.conflict) > 0 || len(v.throttle) > 0 }

// admit decides one request arriving at now: conflicts first, then throughput; an
// admitted request takes its units from every item it touches, and a
// TransactWriteItems holds its items for TransactionHold.
func (m *Model) admit(now time.Time, op string, r request) verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v verdict
	state := func(a access) *itemState {
		s := m.items[a.item]
		if s == nil {
			s = &itemState{}
			m.items[a.item] = s
		}
		return s
	}
	for i, a := range r.accesses {
		s := state(a)
		if a.checksHold && s.heldUntil.After(now) {
			v.conflict = append(v.conflict, i)
		}
	}
	if len(v.conflict) == 0 {
		for commit := range 2 {
			for i, a := range r.accesses {
				s := state(a)
				if a.putSize > 0 {
					s.size = a.putSize
				}
				ok := m.take(s, now, a, commit == 1)
				if !ok {
					v.throttle = append(v.throttle, i)
				}
			}
			if len(v.throttle) > 0 {
				break
			}
		}
	}
	if !v.refused() && op == "TransactWriteItems" {
		until := now.Add(m.real(m.cfg.TransactionHold))
		for _, a := range r.accesses {
			state(a).heldUntil = until
		}
	}
	m.countLocked(op, v)
	return v
}

// take checks (and with commit, takes) one access's units from its item's bucket.
func (m *Model) take(s *itemState, now time.Time, a access, commit bool) bool {
	size := max(s.size, a.putSize, 1)
	if a.write {
		units := float64((size+1023)/1024) * a.factor
		rate := m.cfg.WriteUnits / m.cfg.Slowdown
		return s.write.take(now, rate, m.cfg.WriteUnits*m.cfg.Burst.Seconds(), units, commit)
	}
	units := float64((size+4095)/4096) * a.factor
	rate := m.cfg.ReadUnits / m.cfg.Slowdown
	return s.read.take(now, rate, m.cfg.ReadUnits*m.cfg.Burst.Seconds(), units, commit)
}

func (m *Model) count(op string, v verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.countLocked(op, v)
}

func (m *Model) countLocked(op string, v verdict) {
	c := m.stats[op]
	c.Requests++
	switch {
	case len(v.conflict) > 0:
		c.Conflicts++
	case len(v.throttle) > 0:
		c.Throttles++
	}
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
