package dynamo

// The waitlist (docs/design.md, "Waiting room", "The waitlist"): one entry per buyer
// and SKU in the orders table, listed by SKU in joining order through the
// TicketsByArrival index, and holds: units taken off the SKU's shards into an entry
// (HOLD) and put back (UNHOLD) or taken by the buyer's order.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// WaitlistStore is Store's part for the waitlist: entries, holds and the pass.
type WaitlistStore struct{ *store }

// Waitlist keys and bounds.
const (
	kindWait      = "WAIT"
	kindWaitlists = "WAITLISTS"
	// waitlistsKey is the skus table's item listing the SKUs that ever had a
	// waitlist entry (string set skus) and those a pass found sold out (string set
	// soldOut): what the sweep passes over.
	waitlistsKey = "waitlist#skus"
	// MaxPassEntries bounds the entries one pass reads per SKU (head of the line
	// first): one Query page of the index's keys and a BatchGetItem per 100. One page
	// holds them all: a keys-only entry is at most 138 bytes as DynamoDB counts it
	// (pk wait#<32 hex>, arrivalBucket <SKU id of at most 64>#wait, arrivedMs;
	// Developer Guide, "DynamoDB item sizes and formats"), so 1,000 are under 140 KB,
	// within the 1 MB one Query returns before a LastEvaluatedKey
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html).
	MaxPassEntries = 1000
	// waitlistKeep is how long a finished entry (PASSED, DONE) is kept before the
	// table's TTL deletes it.
	waitlistKeep = 7 * 24 * time.Hour
	// WaitlistLead is how long a SKU record must have said waitlist before a hold
	// may be granted on it: longer than an order's view of the record can lag (the
	// catalog cache, DefaultCatalogTTL 5 s, plus createOrder's 10 s timeout, plus
	// 15 s for a replica behind an eventually consistent read), so every order that
	// could meet the hold looks for it (docs/design.md, "The orders' flag").
	WaitlistLead = 30 * time.Second
)

func waitKey(id string) string { return "wait#" + id }

// waitBucket is the TicketsByArrival hash key of sku's waiting and held entries: one
// key per SKU (the admitter's ticket buckets are numbers, so they never meet it).
func waitBucket(sku string) string { return sku + "#wait" }

// waitRecord is a waitlist entry as the orders table keeps it (about 250 bytes). Like
// a ticket it has buyer, not userId, so it never enters OrdersByUser; it is in the
// TicketsByArrival index (arrivalBucket, arrivedMs) only while WAITING or HELD.
type waitRecord struct {
	PK            string         `dynamodbav:"pk"`
	Kind          string         `dynamodbav:"kind"`
	SKU           string         `dynamodbav:"skuId"`
	Buyer         string         `dynamodbav:"buyer"`
	ArrivedMs     int64          `dynamodbav:"arrivedMs"`               // joined, Unix ms
	ArrivalBucket string         `dynamodbav:"arrivalBucket,omitempty"` // waitBucket while WAITING or HELD
	State         string         `dynamodbav:"state"`
	Subscribed    bool           `dynamodbav:"subscribed,omitempty"`
	Ref           string         `dynamodbav:"ref"` // the hold's ledger reference
	Units         int            `dynamodbav:"units,omitempty"`
	HoldUntilMs   int64          `dynamodbav:"holdUntilMs,omitempty"`
	Shards        map[string]int `dynamodbav:"shards,omitempty"`
	Moved         int            `dynamodbav:"moved,omitempty"` // reshards that moved the hold
	OrderID       string         `dynamodbav:"orderId,omitempty"`
	TTL           int64          `dynamodbav:"ttl,omitempty"` // finished entries only
}

func (r waitRecord) entry() (inventory.WaitlistEntry, error) {
	shards, err := shardsFromRecord(r.Shards)
	if err != nil {
		return inventory.WaitlistEntry{}, fmt.Errorf("decode waitlist entry: %w", err)
	}
	e := inventory.WaitlistEntry{
		ID: r.PK[len("wait#"):], SKU: r.SKU, User: r.Buyer, State: inventory.WaitState(r.State),
		JoinedAt: fromMilli(r.ArrivedMs), Subscribed: r.Subscribed, Units: r.Units, Shards: shards,
		Ref: r.Ref, OrderID: r.OrderID, Moved: r.Moved,
	}
	if r.HoldUntilMs > 0 {
		e.HoldUntil = fromMilli(r.HoldUntilMs)
	}
	return e, nil
}

// JoinWaitlist puts user on sku's waitlist, or returns the entry they already hold
// (one per buyer and SKU: one conditional PutItem, 1 write unit plus 1 in the index,
// of an item whose id is inventory.WaitlistEntryID(user, sku); concurrent requests of
// one buyer make one entry, as TakeTicket's do). subscribed says whether the buyer
// accepted the waitlist's one-time subscribe message. An entry of a SKU whose record
// (as the catalog cache shows it) is not flagged waitlist also flags it and lists
// the SKU for the sweep's pass: 2 more write units, once per flagging (a join the
// cache misleads leaves the flag to the pass, see PassWaitlist), and a new entry of a
// SKU in the sold-out state notes it sold out (noteSoldOut). It reports whether
// the entry is new. Errors: a *SKUError wrapping inventory.ErrSKUNotFound,
// inventory.ErrBusy.
func (s *WaitlistStore) JoinWaitlist(ctx context.Context, user, sku string, subscribed bool) (inventory.WaitlistEntry, bool, error) {
	e, err := s.skuEntry(ctx, sku)
	if err != nil {
		return inventory.WaitlistEntry{}, false, err
	}
	if !e.rec.Waitlist {
		if err := s.markWaitlisted(ctx, sku); err != nil {
			return inventory.WaitlistEntry{}, false, err
		}
	}
	id, now := inventory.WaitlistEntryID(user, sku), s.now()
	rec := waitRecord{
		PK: waitKey(id), Kind: kindWait, SKU: sku, Buyer: user, ArrivedMs: now.UnixMilli(), ArrivalBucket: waitBucket(sku),
		State: string(inventory.WaitWaiting), Subscribed: subscribed, Ref: "wait." + id + "." + strconv.FormatInt(now.UnixMilli(), 36),
	}
	var old waitRecord
	fresh, err := s.putOnce(ctx, s.tables.Orders, rec, rec.PK, "waitlist entry", &old)
	if err != nil {
		return inventory.WaitlistEntry{}, false, err
	}
	if fresh {
		old = rec
		if err := s.noteSoldOut(ctx, e.rec); err != nil {
			return inventory.WaitlistEntry{}, false, err
		}
	} else if old.Kind != kindWait {
		return inventory.WaitlistEntry{}, false, fmt.Errorf("join waitlist of %s: refused, then not found: %w", sku, inventory.ErrBusy)
	}
	got, err := old.entry()
	return got, fresh, err
}

// noteSoldOut notes rec's SKU sold out for the sweep's pass (the waitlists item's
// soldOut set: 1 write unit) when rec, as the catalog cache shows it (5 s old at
// most), is in the sold-out state (soldout.go: every shard was empty and marked), so
// that units coming back before the next pass go to the waitlist, not on open sale.
func (s *WaitlistStore) noteSoldOut(ctx context.Context, rec skuRecord) error {
	if rec.SoldOut == 0 {
		return nil
	}
	return s.listWaitlist(ctx, "soldOut", rec.SKU)
}

// markWaitlisted flags sku's record (flag) and lists sku for the sweep: two
// UpdateItems that change nothing when done already.
func (s *WaitlistStore) markWaitlisted(ctx context.Context, sku string) error {
	if err := s.flag(ctx, sku); err != nil {
		return err
	}
	return s.listWaitlist(ctx, "skus", sku)
}

// flag sets waitlist on sku's record, so that its orders look for holds, and
// waitlistSince to now unless the flag stands already (one UpdateItem, 1 write unit).
func (s *WaitlistStore) flag(ctx context.Context, sku string) error {
	err := s.updateItem(ctx, skuKey(sku),
		expression.Set(expression.Name("waitlist"), expression.Value(true)).
			Set(expression.Name("waitlistSince"), expression.IfNotExists(expression.Name("waitlistSince"), expression.Value(s.now().UnixMilli()))),
		expression.AttributeExists(expression.Name("pk")))
	if errors.As(err, new(*types.ConditionalCheckFailedException)) {
		return &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	if err != nil {
		return err
	}
	s.catalog.forget(sku)
	return nil
}

// unflag clears the waitlist flag of sku, whose line a pass found empty, once the
// last hold granted has ended: one UpdateItem conditioned on that (a hold granted
// meanwhile keeps the flag), sent only when the catalog cache shows the flag and
// its holds ended. A join that lands after the clear flags the SKU again, or, if
// the cache misled it, the next pass does (PassWaitlist).
func (s *WaitlistStore) unflag(ctx context.Context, sku string) error {
	e, err := s.skuEntry(ctx, sku)
	if errors.Is(err, inventory.ErrSKUNotFound) {
		return nil
	}
	now := s.now().UnixMilli()
	if err != nil || !e.rec.Waitlist || e.rec.WaitlistHoldsUntil > now {
		return err
	}
	until := expression.Name("waitlistHoldsUntil")
	err = s.updateItem(ctx, skuKey(sku),
		expression.Remove(expression.Name("waitlist")).Remove(expression.Name("waitlistSince")).Remove(until),
		expression.Name("waitlist").Equal(expression.Value(true)).
			And(expression.AttributeNotExists(until).Or(until.LessThanEqual(expression.Value(now)))))
	if err != nil && !errors.As(err, new(*types.ConditionalCheckFailedException)) {
		return err
	}
	s.catalog.forget(sku)
	return nil
}

// flagReady says why no hold may be granted on rec's SKU now ("" when one may): the
// record not flagged (flag sets it: holds come WaitlistLead later), or flagged
// less than WaitlistLead ago.
func (s *WaitlistStore) flagReady(ctx context.Context, rec *skuRecord, now time.Time) (string, error) {
	switch {
	case !rec.Waitlist:
		return "orders not flagged yet", s.flag(ctx, rec.SKU)
	case now.Before(fromMilli(rec.WaitlistSince).Add(WaitlistLead)):
		return "orders flagged too recently", nil
	}
	return "", nil
}

// flaggedBefore holds on a SKU record flagged waitlist since cutoff or earlier.
func flaggedBefore(cutoff time.Time) expression.ConditionBuilder {
	since := expression.Name("waitlistSince")
	return expression.Name("waitlist").Equal(expression.Value(true)).
		And(expression.AttributeNotExists(since).Or(since.LessThanEqual(expression.Value(cutoff.UnixMilli()))))
}

// listWaitlist adds sku to the string set set of the waitlists item.
func (s *WaitlistStore) listWaitlist(ctx context.Context, set, sku string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(waitlistsKey),
		UpdateExpression:          aws.String("SET kind = :k ADD #s :sku"),
		ExpressionAttributeNames:  map[string]string{"#s": set},
		ExpressionAttributeValues: map[string]types.AttributeValue{":k": &types.AttributeValueMemberS{Value: kindWaitlists}, ":sku": &types.AttributeValueMemberSS{Value: []string{sku}}},
	})
	if err != nil {
		return s.storeError("list "+sku+" in the waitlists", err)
	}
	return nil
}

// WaitlistSKUs lists the SKUs that ever had a waitlist entry: one strongly consistent
// GetItem (1 read unit per 4 KB: about 200 SKUs of 20 characters). Errors:
// inventory.ErrBusy.
func (s *WaitlistStore) WaitlistSKUs(ctx context.Context) ([]inventory.WaitlistSKU, error) {
	var rec struct {
		SKUs    []string `dynamodbav:"skus,stringset"`
		SoldOut []string `dynamodbav:"soldOut,stringset"`
	}
	if err := s.get(ctx, s.tables.SKUs, waitlistsKey, "waitlists", &rec); err != nil {
		return nil, err
	}
	slices.Sort(rec.SKUs)
	out := make([]inventory.WaitlistSKU, len(rec.SKUs))
	for i, sku := range rec.SKUs {
		out[i] = inventory.WaitlistSKU{SKU: sku, SoldOut: slices.Contains(rec.SoldOut, sku)}
	}
	return out, nil
}

// WaitlistEntryOf reads user's entry on sku's waitlist: one strongly consistent
// GetItem (1 read unit). Errors: inventory.ErrWaitlistNotFound, inventory.ErrBusy.
func (s *WaitlistStore) WaitlistEntryOf(ctx context.Context, user, sku string) (inventory.WaitlistEntry, error) {
	return s.waitEntry(ctx, user, sku)
}

func (s *store) waitEntry(ctx context.Context, user, sku string) (inventory.WaitlistEntry, error) {
	e, err := s.waitEntryByID(ctx, inventory.WaitlistEntryID(user, sku))
	if err == nil && (e.User != user || e.SKU != sku) {
		return inventory.WaitlistEntry{}, inventory.ErrWaitlistNotFound
	}
	return e, err
}

// WaitlistEntryByID reads the waitlist entry id (inventory.WaitlistEntryID): one
// strongly consistent GetItem (1 read unit). The wechat function reads a held entry
// so. Errors: inventory.ErrWaitlistNotFound, inventory.ErrBusy.
func (s *WaitlistStore) WaitlistEntryByID(ctx context.Context, id string) (inventory.WaitlistEntry, error) {
	return s.waitEntryByID(ctx, id)
}

func (s *store) waitEntryByID(ctx context.Context, id string) (inventory.WaitlistEntry, error) {
	var rec waitRecord
	if err := s.get(ctx, s.tables.Orders, waitKey(id), "waitlist entry", &rec); err != nil {
		return inventory.WaitlistEntry{}, err
	}
	if rec.Kind != kindWait {
		return inventory.WaitlistEntry{}, inventory.ErrWaitlistNotFound
	}
	return rec.entry()
}

// LeaveWaitlist takes user off sku's waitlist: the entry is deleted, and a HELD
// entry's units go back to the shards (UNHOLD) in the same TransactWriteItems. No
// entry is no error. Each try reads the entry (1 read unit) and deletes it
// conditioned on the state read (1 write unit; with a hold, 2 per shard held and 1 for
// the ledger entry, doubled as a transaction). Errors: inventory.ErrBusy.
func (s *WaitlistStore) LeaveWaitlist(ctx context.Context, user, sku string) error {
	for range maxEntryRounds {
		e, err := s.waitEntry(ctx, user, sku)
		if errors.Is(err, inventory.ErrWaitlistNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		t := s.newTxn("leave the waitlist of " + sku)
		cond := expression.Name("state").Equal(expression.Value(string(e.State))).And(expression.Name("ref").Equal(expression.Value(e.Ref))).
			And(equalOrAbsent("moved", e.Moved))
		t.removeIf(part{kind: partWait, sku: sku}, s.tables.Orders, waitKey(e.ID), cond)
		if e.State == inventory.WaitHeld {
			t.unhold(e, s.now().UnixMilli())
		}
		err = s.apply(ctx, t, errEntryMoved)
		if !errors.Is(err, errEntryMoved) {
			return err
		}
	}
	return fmt.Errorf("leave the waitlist of %s: the entry kept changing: %w", sku, inventory.ErrBusy)
}

// maxEntryRounds bounds the rounds of a write conditioned on an entry as read.
const maxEntryRounds = 4

// errEntryMoved: an entry (or a shard it holds on) was not as read; read again.
var errEntryMoved = errors.New("waitlist entry changed since read")

// removeIf adds a Delete of the item pk of table, conditioned on cond.
func (t *txn) removeIf(p part, table, pk string, cond expression.ConditionBuilder) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	t.add(p, types.TransactWriteItem{Delete: &types.Delete{
		TableName: aws.String(table), Key: pkOf(pk), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, err)
}

// hold takes e.Units units of e.SKU off shards (shard → units) into entry e: HOLD
// on each shard (conditioned on available and on sale) and its ledger entry.
func (t *txn) hold(e inventory.WaitlistEntry, shards map[int]int, at int64) {
	ref := entryRef{key: e.Ref, ref: e.Ref, at: at}
	t.lineStock(0, inventory.OrderItem{SKU: e.SKU, Qty: e.Units, Shards: shards}, ref, availableOnSale, inventory.OpHold)
}

// unhold puts held entry e's units back on the shards they were taken from: UNHOLD
// (conditioned on reserved) and its ledger entry, which exists once per hold.
func (t *txn) unhold(e inventory.WaitlistEntry, at int64) {
	ref := entryRef{key: e.Ref, ref: e.Ref, at: at}
	t.lineStock(0, inventory.OrderItem{SKU: e.SKU, Qty: e.Units, Shards: e.Shards}, ref, reservedAtLeast, inventory.OpUnhold)
}

// reservedAtLeast is the condition of a shard update that gives back q reserved units.
func reservedAtLeast(q int) expression.ConditionBuilder {
	return expression.Name("reserved").GreaterThanEqual(expression.Value(q))
}

// finish sets e's entry to state (PASSED or DONE, with the order) out of the index,
// conditioned on it still being the hold read (and, for an order, on the hold not
// having run out at the order's time), and keeps it waitlistKeep.
func (t *txn) finish(line int, e inventory.WaitlistEntry, state inventory.WaitState, order string, at time.Time) {
	cond := heldAsRead(e)
	upd := expression.Set(expression.Name("state"), expression.Value(string(state))).
		Set(expression.Name("ttl"), expression.Value(at.Add(waitlistKeep).Unix())).
		Remove(expression.Name("arrivalBucket")).Remove(expression.Name("shards")).Remove(expression.Name("units")).Remove(expression.Name("moved")).
		Remove(expression.Name("holdUntilMs"))
	if order != "" {
		upd = upd.Set(expression.Name("orderId"), expression.Value(order))
		cond = cond.And(expression.Name("holdUntilMs").GreaterThan(expression.Value(at.UnixMilli())))
	}
	t.update(part{kind: partWait, line: line, sku: e.SKU}, t.s.tables.Orders, waitKey(e.ID), upd, cond)
}

// heldAsRead holds on an entry still holding the hold e read, on the shards read (no
// reshard moved it since).
func heldAsRead(e inventory.WaitlistEntry) expression.ConditionBuilder {
	return expression.Name("state").Equal(expression.Value(string(inventory.WaitHeld))).
		And(expression.Name("ref").Equal(expression.Value(e.Ref))).
		And(expression.Name("holdUntilMs").Equal(expression.Value(e.HoldUntil.UnixMilli()))).
		And(equalOrAbsent("moved", e.Moved))
}

// waitingEntries reads sku's WAITING and HELD entries in line order (joining time,
// ties by id), at most MaxPassEntries: one Query of the index (keys only) and
// strongly consistent BatchGetItems of the entries (1 read unit each).
func (s *WaitlistStore) waitingEntries(ctx context.Context, sku string) ([]inventory.WaitlistEntry, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.tables.Orders), IndexName: aws.String(ArrivalIndex),
		KeyConditionExpression:    aws.String("arrivalBucket = :b"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: waitBucket(sku)}},
		Limit:                     aws.Int32(MaxPassEntries),
	})
	if err != nil {
		return nil, s.storeError("read the waitlist of "+sku, err)
	}
	keys := make([]string, 0, len(out.Items))
	for _, it := range out.Items {
		if pk, ok := it["pk"].(*types.AttributeValueMemberS); ok {
			keys = append(keys, pk.Value)
		}
	}
	items, err := s.batchGet(ctx, s.tables.Orders, keys)
	if err != nil {
		return nil, err
	}
	var entries []inventory.WaitlistEntry
	for _, it := range items {
		var rec waitRecord
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return nil, fmt.Errorf("decode waitlist entry: %w", err)
		}
		st := inventory.WaitState(rec.State)
		if rec.Kind != kindWait || rec.SKU != sku || (st != inventory.WaitWaiting && st != inventory.WaitHeld) {
			continue
		}
		e, err := rec.entry()
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b inventory.WaitlistEntry) int {
		return cmp.Or(a.JoinedAt.Compare(b.JoinedAt), cmp.Compare(a.ID, b.ID))
	})
	return entries, nil
}

// HeldUnits sums sku's live waitlist holds per shard (shard → units): its HELD
// entries, whether or not their end has passed, since their units stay reserved until
// a pass writes their UNHOLD. Reconcile's repair counts them as reserved like an open
// order's. complete is false when the line filled MaxPassEntries (holds past it
// unread). Reads as waitingEntries: one Query of the eventually consistent
// TicketsByArrival index (keys only; a hold granted a moment ago may be missing, as an
// order may be from PendingByExpiry) and 1 read unit per entry waiting or held, which
// read is told. Errors: inventory.ErrBusy.
func (s *WaitlistStore) HeldUnits(ctx context.Context, sku string, read func(items int)) (map[int]int, bool, error) {
	entries, err := s.waitingEntries(ctx, sku)
	if err != nil {
		return nil, false, err
	}
	read(len(entries))
	held := map[int]int{}
	for _, e := range entries {
		if e.State == inventory.WaitHeld {
			for n, q := range e.Shards {
				held[n] += q
			}
		}
	}
	return held, len(entries) < MaxPassEntries, nil
}

// PassWaitlist runs one pass over sku's waitlist (inventory.Waitlist.PassHolds) at
// the store's clock, after the sale only: the SKU on sale with its sale started, its
// waiting room's line empty (the frontier says sold out) or no waiting room, and a
// pass having once found nothing available (soldOut, from WaitlistSKUs; this pass
// records it when it finds so). Holds that ran out pass (their units back, UNHOLD),
// and the units available on the shards go to the waiting entries in order, at most
// the per-user limit each (1 without one), each hold one TransactWriteItems (the
// entry, HOLD on each shard, the ledger entry) conditioned on the entry as read and
// on the shards' available units, so units held never exceed units available, and a
// pass racing another holds nothing twice (an entry or shard found changed ends the
// pass: the next one goes on). Holds are granted only on a SKU record flagged
// waitlist WaitlistLead ago or earlier (flagReady; the pass flags an unflagged one
// and grants nothing then), each grant conditioned on that and setting
// waitlistHoldsUntil. Reads: the index and entries (waitingEntries), the SKU record
// and its shards (1 read unit each). A SKU with no entry waiting or held costs the
// index Query only, and clears the SKU's flag once its last hold ended (unflag).
// Errors: inventory.ErrBusy.
func (s *WaitlistStore) PassWaitlist(ctx context.Context, sku string, soldOut bool) (inventory.WaitlistPass, error) {
	p := inventory.WaitlistPass{SKU: sku}
	entries, err := s.waitingEntries(ctx, sku)
	if err != nil {
		return p, err
	}
	if len(entries) == 0 {
		return p, s.unflag(ctx, sku)
	}
	p.Waiting = len(entries)
	rec, err := s.skuRecordOf(ctx, sku)
	if err != nil || rec == nil {
		return p, err
	}
	now := s.now()
	if p.Skipped, err = s.passBlocked(ctx, rec, now); p.Skipped != "" || err != nil {
		return p, err
	}
	shards, err := s.shardRecords(ctx, map[string]int{sku: rec.Shards})
	if err != nil {
		return p, err
	}
	stock := make(inventory.ShardStock, rec.Shards)
	free := 0
	for _, sh := range shards[sku] {
		if sh.Shard >= 0 && sh.Shard < len(stock) {
			stock[sh.Shard] = sh.Available
			free += sh.Available
		}
	}
	if !soldOut {
		if free > 0 {
			p.Skipped = "not sold out yet"
			return p, nil
		}
		if err := s.listWaitlist(ctx, "soldOut", sku); err != nil {
			return p, err
		}
	}
	if p.Skipped, err = s.flagReady(ctx, rec, now); p.Skipped != "" || err != nil {
		return p, err
	}
	return s.pass(ctx, p, entries, stock, free, max(rec.LimitPerUser, 1), now)
}

// passBlocked says why the waitlist of rec's SKU gets no pass now ("" when it does).
func (s *WaitlistStore) passBlocked(ctx context.Context, rec *skuRecord, now time.Time) (string, error) {
	switch {
	case !rec.OnSale:
		return "off sale", nil
	case rec.SaleStartsAt > now.UnixMilli():
		return "sale not started", nil
	case !rec.Queue:
		return "", nil
	}
	f, _, err := (&QueueStore{s.store}).FrontierOf(ctx, rec.SKU)
	if err != nil {
		return "", err
	}
	if !f.ForSale(fromMilli(rec.SaleStartsAt), now).SoldOut { // a new sale's line is not the last one's
		return "waiting room line not empty", nil
	}
	return "", nil
}

// pass writes what PassHolds decides: the holds that ran out first, then the grants
// from the shards' available units (stock, updated as units move).
func (s *WaitlistStore) pass(ctx context.Context, p inventory.WaitlistPass, entries []inventory.WaitlistEntry, stock inventory.ShardStock, free, perBuyer int, now time.Time) (inventory.WaitlistPass, error) {
	w := make(inventory.Waitlist, len(entries))
	for i, e := range entries {
		w[i] = inventory.WaitEntry{Buyer: e.ID, State: e.State, Units: e.Units, HoldUntil: e.HoldUntil}
	}
	c := w.PassHolds(free, perBuyer, now)
	for _, i := range c.Passed {
		e := entries[i]
		t := s.newTxn("pass the hold of a waitlist entry of " + e.SKU)
		t.finish(0, e, inventory.WaitPassed, "", now)
		t.unhold(e, now.UnixMilli())
		if err := s.apply(ctx, t, errEntryMoved); errors.Is(err, errEntryMoved) {
			continue // its buyer ordered with it or left meanwhile
		} else if err != nil {
			return p, err
		}
		for n, q := range e.Shards {
			if n < len(stock) {
				stock[n] += q
			}
		}
		p.Passed++
	}
	for _, i := range c.Granted {
		e := entries[i]
		e.State, e.Units, e.HoldUntil = inventory.WaitHeld, c.Entries[i].Units, c.Entries[i].HoldUntil
		alloc, ok := stock.Allocate(e.Units)
		if !ok {
			break
		}
		e.Shards = alloc
		if err := s.grant(ctx, e, now); errors.Is(err, errEntryMoved) {
			break // the entry left, or an order took the units: the next pass goes on
		} else if err != nil {
			return p, err
		}
		for n, q := range alloc {
			stock[n] -= q
		}
		p.Granted = append(p.Granted, e)
		p.Units += e.Units
	}
	return p, nil
}

// grant writes e's new hold: the entry from WAITING to HELD (conditioned on it still
// waiting under the same ref) with HOLD on its shards, and the hold's end on the SKU
// record, conditioned on the record flagged WaitlistLead ago (flaggedBefore): an
// unflag that came first refuses the grant, one that comes after finds the hold.
func (s *WaitlistStore) grant(ctx context.Context, e inventory.WaitlistEntry, now time.Time) error {
	t := s.newTxn("hold units for a waitlist entry of " + e.SKU)
	t.update(part{kind: partSKU, sku: e.SKU}, s.tables.SKUs, skuKey(e.SKU),
		expression.Set(expression.Name("waitlistHoldsUntil"), expression.Value(e.HoldUntil.UnixMilli())), flaggedBefore(now.Add(-WaitlistLead)))
	upd := expression.Set(expression.Name("state"), expression.Value(string(inventory.WaitHeld))).
		Set(expression.Name("units"), expression.Value(e.Units)).
		Set(expression.Name("holdUntilMs"), expression.Value(e.HoldUntil.UnixMilli())).
		Set(expression.Name("shards"), expression.Value(shardsToRecord(e.Shards)))
	cond := expression.Name("state").Equal(expression.Value(string(inventory.WaitWaiting))).
		And(expression.Name("ref").Equal(expression.Value(e.Ref)))
	t.update(part{kind: partWait, sku: e.SKU}, s.tables.Orders, waitKey(e.ID), upd, cond)
	t.hold(e, e.Shards, now.UnixMilli())
	return s.apply(ctx, t, errEntryMoved)
}

// heldLine is a reservation line's use of its buyer's hold (heldTake): per shard
// the order's units reserved and the hold's units given back in one update (RESERVE
// and UNHOLD: a shard whose held units cover the order's loses none available), the
// order's RESERVE ledger entry, the hold's UNHOLD entry (all of it: what the order
// does not take becomes available), and the entry DONE with the order.
func (t *txn) heldLine(line int, it inventory.OrderItem, hold inventory.WaitlistEntry, ref entryRef, cond func(q int) expression.ConditionBuilder, at time.Time) {
	shards := maps.Clone(it.Shards)
	maps.Copy(shards, hold.Shards)
	for _, n := range slices.Sorted(maps.Keys(shards)) {
		o, h := it.Shards[n], hold.Shards[n]
		rd, _ := inventory.OpReserve.Effect(o)
		ud, _ := inventory.OpUnhold.Effect(h)
		c := cond(max(o-h, 0))
		if h > 0 {
			c = c.And(reservedAtLeast(h))
		}
		t.shard(line, it.SKU, n, rd.Plus(ud), c)
	}
	t.ledger(line, newEntry(ref, inventory.OpReserve, it.SKU, it.Qty, it.Shards))
	t.ledger(line, newEntry(entryRef{key: hold.Ref, ref: hold.Ref, at: ref.at}, inventory.OpUnhold, it.SKU, hold.Units, hold.Shards))
	t.finish(line, hold, inventory.WaitDone, ref.ref, at)
}

// heldTake is the part of a line of qty units its hold covers: up to qty of the
// hold's units, taken shard by shard in shard order.
func heldTake(hold inventory.WaitlistEntry, qty int) map[int]int {
	out := map[int]int{}
	for _, n := range slices.Sorted(maps.Keys(hold.Shards)) {
		if q := min(hold.Shards[n], qty); q > 0 {
			out[n] = q
			qty -= q
		}
	}
	return out
}
