package dynamo

// The waiting room's items (docs/design.md, "Waiting room"): tickets in the orders
// table and each queued SKU's admission frontier in the skus table.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// QueueStore is Store's part for the waiting room: tickets and admission frontiers.
type QueueStore struct{ *store }

// Waiting-room keys and sizes.
const (
	// ArrivalIndex is the orders table's GSI of tickets by arrival: hash
	// arrivalBucket ("<skuId>#<sale start, Unix ms>#<b>", or "<skuId>#<b>" for a
	// SKU without a start; b = bucket(ticket id, ArrivalBuckets)), range arrivedMs,
	// KEYS_ONLY. The admitter reads its sale's buckets since its watermark, so a
	// new sale's line never reads the last one's tickets.
	ArrivalIndex = "TicketsByArrival"
	// ArrivalBuckets is how many index keys one SKU's arrivals spread over: each
	// takes 1,000 write units a second, so 128 take 128,000 arrivals a second.
	ArrivalBuckets = 128
	// FrontierCacheTTL is how long a function instance reuses a SKU's frontier
	// (FrontierOf) before reading it again.
	FrontierCacheTTL = 500 * time.Millisecond
	// frontierStepBytes is one encoded inventory.AdmissionStep: Through and At (Unix
	// milliseconds), 8 bytes each, big-endian.
	frontierStepBytes = 16
	// MaxFrontierSteps is the most steps a frontier item holds: the design's bound
	// ((inventory.AdmissionSeconds + inventory.UsedBucketSeconds) /
	// inventory.FrontierStepSeconds + 1 = 191 steps, 3,056 bytes), so the item stays
	// under 4 KB, one read unit strongly consistent.
	MaxFrontierSteps = (inventory.AdmissionSeconds+inventory.UsedBucketSeconds)/inventory.FrontierStepSeconds + 1
	// ticketTTL is how long a ticket is kept after its sale's start (or its
	// arrival, if later): the table's TTL then deletes it.
	ticketTTL = 24 * time.Hour
)

// ErrFrontierMoved is returned by AdvanceFrontier when the frontier is no longer at
// the version the admitter read: another admitter wrote it. Read it again.
var ErrFrontierMoved = errors.New("admission frontier moved since it was read")

func ticketKey(id string) string { return "ticket#" + id }

func frontierKey(sku string) string { return sku + "#queue" }

// arrivalBucket is the TicketsByArrival hash key of bucket b of the arrivals of
// sku's sale starting at start (zero: none).
func arrivalBucket(sku string, start time.Time, b string) string {
	if start.IsZero() {
		return sku + "#" + b
	}
	return sku + "#" + strconv.FormatInt(start.UnixMilli(), 10) + "#" + b
}

// ticketRecord is a ticket as the orders table keeps it (about 200 bytes). It has no
// userId nor createdMs, so it never enters OrdersByUser.
type ticketRecord struct {
	PK            string `dynamodbav:"pk"`
	Kind          string `dynamodbav:"kind"`
	SKU           string `dynamodbav:"skuId"`
	Buyer         string `dynamodbav:"buyer"`
	ArrivedMs     int64  `dynamodbav:"arrivedMs"`     // TicketsByArrival range key
	ArrivalBucket string `dynamodbav:"arrivalBucket"` // TicketsByArrival hash key
	Position      int    `dynamodbav:"position,omitempty"`
	UsedBy        string `dynamodbav:"usedBy,omitempty"`
	TTL           int64  `dynamodbav:"ttl"` // Unix seconds
}

const kindTicket = "TICKET"

func (r ticketRecord) ticket() inventory.Ticket {
	return inventory.Ticket{
		ID: r.PK[len("ticket#"):], SKU: r.SKU, User: r.Buyer, ArrivedAt: fromMilli(r.ArrivedMs),
		Position: r.Position, UsedBy: r.UsedBy,
	}
}

// TakeTicket gives user a ticket for sku's waiting room, or the ticket they already
// hold (one per buyer and sale: a SKU put on sale again with a new start gives a new
// one): one conditional PutItem (attribute_not_exists(pk)) of an item whose id is
// inventory.TicketID(user, sku, the sale's start); a second request reads the
// first's ticket back from the refusal (ALL_OLD), so concurrent requests of one buyer
// make one ticket (a refusal without the old item, as the embedded DynamoDB answers,
// costs one strongly consistent read instead). It reports whether the ticket is new. Errors: a *SKUError wrapping
// inventory.ErrSKUNotFound or inventory.ErrQueueNotEnabled (the SKU record, from the
// catalog cache: a SKU put in the queue takes up to Options.CatalogTTL to issue
// tickets), inventory.ErrBusy.
func (s *QueueStore) TakeTicket(ctx context.Context, user, sku string) (inventory.Ticket, bool, error) {
	e, err := s.skuEntry(ctx, sku)
	if err != nil {
		return inventory.Ticket{}, false, err
	}
	if !e.rec.Queue {
		return inventory.Ticket{}, false, &inventory.SKUError{Err: inventory.ErrQueueNotEnabled, SKU: sku}
	}
	start, now := fromMilli(e.rec.SaleStartsAt), s.now()
	id, keep := inventory.TicketID(user, sku, start), now
	if start.After(now) {
		keep = start
	}
	keep = keep.Add(ticketTTL)
	rec := ticketRecord{
		PK: ticketKey(id), Kind: kindTicket, SKU: sku, Buyer: user, ArrivedMs: now.UnixMilli(),
		ArrivalBucket: arrivalBucket(sku, start, bucket(id, ArrivalBuckets)), TTL: keep.Unix(),
	}
	var old ticketRecord
	fresh, err := s.putOnce(ctx, s.tables.Orders, rec, ticketKey(id), "ticket", &old)
	switch {
	case err != nil:
		return inventory.Ticket{}, false, err
	case fresh:
		return rec.ticket(), true, nil
	case old.Kind != kindTicket:
		return inventory.Ticket{}, false, fmt.Errorf("take ticket of %s: refused, then not found: %w", sku, inventory.ErrBusy)
	}
	return old.ticket(), false, nil
}

// TicketOf reads user's ticket id: one eventually consistent GetItem (0.5 read
// units). A ticket just taken may not show yet; the caller got it from TakeTicket.
// Errors: inventory.ErrTicketNotFound for an unknown id or another buyer's ticket,
// inventory.ErrBusy.
func (s *QueueStore) TicketOf(ctx context.Context, user, id string) (inventory.Ticket, error) {
	if !inventory.ValidTicketID(id) {
		return inventory.Ticket{}, inventory.ErrTicketNotFound
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.tables.Orders), Key: pkOf(ticketKey(id))})
	if err != nil {
		return inventory.Ticket{}, s.storeError("read ticket", err)
	}
	var rec ticketRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return inventory.Ticket{}, fmt.Errorf("decode ticket: %w", err)
	}
	if rec.Kind != kindTicket || rec.Buyer != user {
		return inventory.Ticket{}, inventory.ErrTicketNotFound
	}
	return rec.ticket(), nil
}

// QueueSKUOf reads sku's inventory.QueueSKU from the catalog cache (Options.CatalogTTL old at
// most; Known set when the cache's read was strongly consistent). Errors: a *SKUError
// wrapping inventory.ErrSKUNotFound, inventory.ErrBusy.
func (s *QueueStore) QueueSKUOf(ctx context.Context, sku string) (inventory.QueueSKU, error) {
	e, err := s.skuEntry(ctx, sku)
	return queueSKU(e), err
}

// FreshQueueSKUOf reads sku's inventory.QueueSKU from the table, strongly consistent
// (1 read unit: the record is under 4 KB), Known the read's time, and keeps it in the
// catalog cache. Errors: as QueueSKUOf.
func (s *QueueStore) FreshQueueSKUOf(ctx context.Context, sku string) (inventory.QueueSKU, error) {
	entries, err := s.skuRecords(ctx, []string{sku}, tableOnly)
	if err != nil {
		return inventory.QueueSKU{}, err
	}
	e, ok := entries[sku]
	if !ok {
		return inventory.QueueSKU{}, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	return queueSKU(e), nil
}

// queueSKU is what a poll needs of e's record.
func queueSKU(e catalogEntry) inventory.QueueSKU {
	return inventory.QueueSKU{Queue: e.rec.queue(), SaleStartsAt: fromMilli(e.rec.SaleStartsAt), Shards: e.rec.Shards, Known: e.fetched}
}

// frontierRecord is the frontier item: pk <skuId>#queue in the skus table, the
// steps encoded by encodeSteps, the version the admitter advances from. The steps
// are left out while there are none: an empty binary value is valid in DynamoDB, but
// the local stack's minidyn answers it as an empty attribute the SDK cannot decode.
type frontierRecord struct {
	PK      string `dynamodbav:"pk"`
	Kind    string `dynamodbav:"kind"`
	SKU     string `dynamodbav:"skuId"`
	Steps   []byte `dynamodbav:"steps,omitempty"`
	SoldOut bool   `dynamodbav:"soldOut"`
	Version int64  `dynamodbav:"version"`
	// The admitter's line (inventory.LineState); absent before its first write.
	Placed      int   `dynamodbav:"placed,omitempty"`
	Queued      int   `dynamodbav:"queued,omitempty"`
	Rate        int   `dynamodbav:"arrivalsPerSecond,omitempty"`
	WatermarkMs int64 `dynamodbav:"watermarkMs,omitempty"`
	Drawn       bool  `dynamodbav:"drawn,omitempty"`
	Late        int   `dynamodbav:"late,omitempty"`
	Unwritten   int   `dynamodbav:"unwritten,omitempty"`
	// The sale (inventory.Frontier.Sale, Replaced, Prior); absent for a SKU
	// without a start, and on items written before frontiers named their sale.
	SaleStartsMs int64 `dynamodbav:"saleStartsMs,omitempty"`
	ReplacedMs   int64 `dynamodbav:"replacedMs,omitempty"`
	Prior        int   `dynamodbav:"prior,omitempty"`
}

// frontier is the record's inventory.Frontier.
func (r frontierRecord) frontier() (inventory.Frontier, error) {
	steps, err := decodeSteps(r.Steps)
	if err != nil {
		return inventory.Frontier{}, fmt.Errorf("decode frontier of %s: %w", r.SKU, err)
	}
	return inventory.Frontier{Steps: steps, SoldOut: r.SoldOut, Line: inventory.LineState{
		Placed: r.Placed, Queued: r.Queued, ArrivalsPerSecond: r.Rate, Watermark: fromMilli(r.WatermarkMs), Drawn: r.Drawn, Late: r.Late,
		Unwritten: r.Unwritten,
	}, Sale: fromMilli(r.SaleStartsMs), Replaced: fromMilli(r.ReplacedMs), Prior: r.Prior}, nil
}

const kindFrontier = "FRONTIER"

// encodeSteps is the frontier's binary form: per step Through then At in Unix
// milliseconds, each a big-endian uint64, 16 bytes. It refuses more than
// MaxFrontierSteps steps, or a step that does not fit. No steps encode as nil, which
// frontierRecord leaves out.
func encodeSteps(steps []inventory.AdmissionStep) ([]byte, error) {
	if len(steps) > MaxFrontierSteps {
		return nil, fmt.Errorf("frontier of %d steps is more than %d", len(steps), MaxFrontierSteps)
	}
	if len(steps) == 0 {
		return nil, nil
	}
	out := make([]byte, 0, len(steps)*frontierStepBytes)
	for _, st := range steps {
		if st.Through < 0 || st.At.UnixMilli() < 0 {
			return nil, fmt.Errorf("frontier step %+v is out of range", st)
		}
		out = binary.BigEndian.AppendUint64(out, uint64(st.Through))
		out = binary.BigEndian.AppendUint64(out, uint64(st.At.UnixMilli()))
	}
	return out, nil
}

// decodeSteps reads encodeSteps' form back.
func decodeSteps(b []byte) ([]inventory.AdmissionStep, error) {
	if len(b)%frontierStepBytes != 0 || len(b) > MaxFrontierSteps*frontierStepBytes {
		return nil, fmt.Errorf("frontier of %d bytes is not a whole number of steps within the bound", len(b))
	}
	steps := make([]inventory.AdmissionStep, 0, len(b)/frontierStepBytes)
	for i := 0; i < len(b); i += frontierStepBytes {
		through, at := binary.BigEndian.Uint64(b[i:]), binary.BigEndian.Uint64(b[i+8:])
		steps = append(steps, inventory.AdmissionStep{Through: int(through), At: time.UnixMilli(int64(at)).UTC()})
	}
	return steps, nil
}

// frontierCache keeps each SKU's frontier read for FrontierCacheTTL, so that polls
// of one function instance read it at most twice a second, not once per poll.
type frontierCache struct {
	mu      sync.Mutex
	entries map[string]frontierEntry
}

type frontierEntry struct {
	f       inventory.Frontier
	version int64
	at      time.Time
}

// FrontierOf returns sku's admission frontier and its version (0: none written
// yet; the zero Frontier, nobody admitted). It is read strongly consistently (1
// read unit: the item is under 4 KB) at most once per FrontierCacheTTL per store
// (function instance), the other calls answered from that read. Errors:
// inventory.ErrBusy, or a store error for an item that does not decode.
func (s *QueueStore) FrontierOf(ctx context.Context, sku string) (inventory.Frontier, int64, error) {
	now := s.now()
	c := s.frontiers
	c.mu.Lock()
	e, ok := c.entries[sku]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < FrontierCacheTTL && !now.Before(e.at) {
		return e.f, e.version, nil
	}
	f, version, err := s.ReadFrontier(ctx, sku)
	if err != nil {
		return inventory.Frontier{}, 0, err
	}
	e = frontierEntry{f: f, version: version, at: now}
	c.mu.Lock()
	c.entries[sku] = e
	c.mu.Unlock()
	return e.f, e.version, nil
}

// AdvanceFrontier writes f as sku's frontier, the version after prev (what
// FrontierOf returned; 0 when none was written), in one conditional PutItem: the
// item must still be at prev, so two admitters never both advance from one read.
// Errors: ErrFrontierMoved when it is not, an error for a frontier over
// MaxFrontierSteps steps (inventory.Frontier.Advance keeps it within), inventory.ErrBusy.
func (s *QueueStore) AdvanceFrontier(ctx context.Context, sku string, prev int64, f inventory.Frontier) error {
	steps, err := encodeSteps(f.Steps)
	if err != nil {
		return fmt.Errorf("advance frontier of %s: %w", sku, err)
	}
	l := f.Line
	rec := frontierRecord{PK: frontierKey(sku), Kind: kindFrontier, SKU: sku, Steps: steps, SoldOut: f.SoldOut, Version: prev + 1,
		Placed: l.Placed, Queued: l.Queued, Rate: l.ArrivalsPerSecond, Drawn: l.Drawn, Late: l.Late, Unwritten: l.Unwritten,
		SaleStartsMs: unixMilli(f.Sale), ReplacedMs: unixMilli(f.Replaced), Prior: f.Prior}
	if !l.Watermark.IsZero() {
		rec.WatermarkMs = l.Watermark.UnixMilli()
	}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return fmt.Errorf("encode frontier of %s: %w", sku, err)
	}
	cond := expression.AttributeNotExists(expression.Name("pk"))
	if prev > 0 {
		cond = expression.Name("version").Equal(expression.Value(prev))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build frontier condition: %w", err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.tables.SKUs), Item: item, ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("advance frontier of %s from version %s: %w", sku, strconv.FormatInt(prev, 10), ErrFrontierMoved)
	case err != nil:
		return s.storeError("advance frontier of "+sku, err)
	}
	s.frontiers.mu.Lock()
	delete(s.frontiers.entries, sku)
	s.frontiers.mu.Unlock()
	return nil
}

// ticketUse marks the admission's ticket used by order inside the reservation's
// transaction: conditioned on the ticket existing for that SKU and buyer and not
// used yet, so one admission opens one order.
func (t *txn) ticketUse(a *inventory.Admission, order string) {
	cond := expression.AttributeExists(expression.Name("pk")).
		And(expression.AttributeNotExists(expression.Name("usedBy"))).
		And(expression.Name("skuId").Equal(expression.Value(a.SKU))).
		And(expression.Name("buyer").Equal(expression.Value(a.User)))
	t.update(part{kind: partTicket, sku: a.SKU}, t.s.tables.Orders, ticketKey(a.Ticket),
		expression.Set(expression.Name("usedBy"), expression.Value(order)), cond)
}

// PlaceTicket writes ticket id's place in line, once (the admitter, head of the line
// first): one conditional UpdateItem, 1 write unit; the TicketsByArrival entry is
// KEYS_ONLY, so it is not rewritten. It reports false when the ticket already had a
// position (a second admitter's write changes nothing). Errors: inventory.ErrTicketNotFound
// (no such ticket), inventory.ErrBusy.
func (s *QueueStore) PlaceTicket(ctx context.Context, id string, position int) (bool, error) {
	if position < 1 {
		return false, inventory.InvalidError("a position is 1 or more")
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(ticketKey(id)),
		UpdateExpression:          aws.String("SET #p = :p"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND attribute_not_exists(#p)"),
		ExpressionAttributeNames:  map[string]string{"#p": "position"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberN{Value: strconv.Itoa(position)}},
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		var old ticketRecord
		if err := s.get(ctx, s.tables.Orders, ticketKey(id), "ticket", &old); err != nil {
			return false, err
		}
		if old.Kind != kindTicket {
			return false, inventory.ErrTicketNotFound
		}
		return false, nil
	case err != nil:
		return false, s.storeError("place ticket", err)
	}
	return true, nil
}

// ReindexTicket gives ticket id, still without a position and still arrived at
// arrived, a new arrival time, now (store clock), so that its TicketsByArrival entry
// moves to now and the admitter, reading since its watermark, finds it as a new
// arrival (inventory.LineState.Missed: its first entry showed too late to be read).
// One conditional UpdateItem, 1 write unit, and 2 in the index (the entry's range key
// changes: a delete and a put). A ticket placed meanwhile, or indexed again by
// another poll, is left as it is: no error. Errors: inventory.ErrBusy.
func (s *QueueStore) ReindexTicket(ctx context.Context, id string, arrived time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(ticketKey(id)),
		UpdateExpression:         aws.String("SET #a = :now"),
		ConditionExpression:      aws.String("attribute_exists(pk) AND attribute_not_exists(#p) AND #a = :was"),
		ExpressionAttributeNames: map[string]string{"#a": "arrivedMs", "#p": "position"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(s.now().UnixMilli(), 10)},
			":was": &types.AttributeValueMemberN{Value: strconv.FormatInt(arrived.UnixMilli(), 10)},
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return s.storeError("index ticket again", err)
	}
	return nil
}

// usedPrefix names a shard item's counters of admission claims used by orders: the
// counter of bucket b (inventory.AdmissionBucket) credited at p units an admission
// (inventory.UsedKey) is the number attribute "used<b>_<p>", added to by the
// reservations that use admissions of that bucket (txn.claimCredit) and removed by
// the admitter once the bucket has long expired (QueueStore.DropUsedClaims).
const usedPrefix = "used"

// usedAttr is the attribute name of counter k.
func usedAttr(k inventory.UsedKey) string {
	return usedPrefix + strconv.FormatInt(k.Bucket, 10) + "_" + strconv.Itoa(k.Per)
}

// usedKey reads a counter's name back (usedAttr); ok is false for any other name.
func usedKey(name string) (inventory.UsedKey, bool) {
	rest, ok := strings.CutPrefix(name, usedPrefix)
	b, p, found := strings.Cut(rest, "_")
	if !ok || !found {
		return inventory.UsedKey{}, false
	}
	bucket, err1 := strconv.ParseInt(b, 10, 64)
	per, err2 := strconv.Atoi(p)
	return inventory.UsedKey{Bucket: bucket, Per: per}, err1 == nil && err2 == nil && per >= 1
}

// usedClaim is one counter add: units to counter key.
type usedClaim struct {
	key   inventory.UsedKey
	units int
}

// usedClaims reads a shard item's counters (nil: none). An attribute that only
// looks like one (not a whole number) is skipped.
func usedClaims(item map[string]types.AttributeValue) map[inventory.UsedKey]int {
	var out map[inventory.UsedKey]int
	for name, v := range item {
		k, ok := usedKey(name)
		n, isNum := v.(*types.AttributeValueMemberN)
		if !ok || !isNum {
			continue
		}
		units, err := strconv.Atoi(n.Value)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[inventory.UsedKey]int{}
		}
		out[k] = units
	}
	return out
}

// claimCredit has the reservation's shard updates of a line of sku that uses
// admission a add the line's claim credit (inventory.AdmissionCredit of the SKU's
// per-user limit, 1 without one, over shards: shard → units) to the counter of a's
// bucket and that limit: in the same update of the same item, so it costs no write
// unit while the shard item stays under 1 KB.
func (t *txn) claimCredit(a inventory.Admission, limit int, sku string, shards map[int]int) {
	if t.used == nil {
		t.used = map[string]usedClaim{}
	}
	k := inventory.UsedKey{Bucket: inventory.AdmissionBucket(a.Expires), Per: max(limit, 1)}
	for n, units := range inventory.AdmissionCredit(k.Per, shards) {
		t.used[shardKey(sku, n)] = usedClaim{key: k, units: units}
	}
}

// DropUsedClaims removes counters from shard n of sku (the admitter, for buckets
// expired long ago): one UpdateItem, 1 write unit, conditioned on the shard
// existing. A reservation that adds to a removed counter late makes it again,
// harmlessly: the admitter counts no bucket whose admissions have expired. Errors:
// inventory.ErrBusy or a store failure.
func (s *QueueStore) DropUsedClaims(ctx context.Context, sku string, n int, counters []inventory.UsedKey) error {
	if len(counters) == 0 {
		return nil
	}
	var upd expression.UpdateBuilder
	for _, k := range counters {
		upd = upd.Remove(expression.Name(usedAttr(k)))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(expression.AttributeExists(expression.Name("pk"))).Build()
	if err != nil {
		return fmt.Errorf("build used-claims removal: %w", err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(shardKey(sku, n)), UpdateExpression: expr.Update(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf): // the shard is gone
		return nil
	case err != nil:
		return s.storeError("drop used admission claims of "+sku, err)
	}
	return nil
}
