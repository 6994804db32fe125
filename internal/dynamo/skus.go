package dynamo

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// SKUDetail reads sku's record and every shard (steady: no unit in transit, see
// steadyShards). Errors wrap inventory.ErrSKUNotFound or ErrBusy.
func (s *StockStore) SKUDetail(ctx context.Context, sku string) (*inventory.SKUDetail, error) {
	for range steadyRounds {
		shards, rec, err := s.steadyShards(ctx, sku)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			return detailOf(*rec, shards), nil
		}
	}
	return nil, fmt.Errorf("read SKU %s: shards kept moving: %w", sku, inventory.ErrBusy)
}

// steadySKU is SKU read through SKUDetail.
func (s *StockStore) steadySKU(ctx context.Context, id string) (*inventory.SKU, error) {
	d, err := s.SKUDetail(ctx, id)
	if err != nil {
		return nil, err
	}
	return &d.SKU, nil
}

func detailOf(rec skuRecord, shards []shardRecord) *inventory.SKUDetail {
	d := &inventory.SKUDetail{SKU: *recordSKU(rec, shards), UpdatedBy: rec.UpdatedBy, UpdatedAt: fromMilli(rec.UpdatedAt)}
	for _, sh := range shards {
		d.PerShard = append(d.PerShard, inventory.ShardDetail{Shard: sh.Shard, Available: sh.Available, Reserved: sh.Reserved, OnHand: sh.OnHand, UsedClaims: sh.UsedClaims})
	}
	slices.SortFunc(d.PerShard, func(a, b inventory.ShardDetail) int { return cmp.Compare(a.Shard, b.Shard) })
	return d
}

// SKUs lists up to PageSize SKUs after the cursor with their stock summed over their
// shards, the cursor of the next page ("" at the end), and the keys of the SKU items
// of the page it skipped as unreadable (an attribute of the wrong type, an invalid id
// or shard count: written by hand or by a bug), so that one such item never fails the
// whole list; the caller logs them. It scans the skus table (its size follows the
// catalogue). Errors wrap inventory.ErrInvalidRequest for a cursor this store did not
// issue for this list.
func (s *StockStore) SKUs(ctx context.Context, after string) ([]*inventory.SKUDetail, string, []string, error) {
	return s.skuPage(ctx, "skus", after, expression.Name("kind").Equal(expression.Value(kindSKU)))
}

// SKUsOnSale is SKUs of the SKUs on sale (onSale set: on sale now, upcoming or sold
// out), for the buyer's list; a SKU put off sale is not in it.
func (s *StockStore) SKUsOnSale(ctx context.Context, after string) ([]*inventory.SKUDetail, string, []string, error) {
	return s.skuPage(ctx, "skus on sale", after, expression.Name("kind").Equal(expression.Value(kindSKU)).
		And(expression.Name("onSale").Equal(expression.Value(true))))
}

func (s *StockStore) skuPage(ctx context.Context, listing, after string, filter expression.ConditionBuilder) ([]*inventory.SKUDetail, string, []string, error) {
	start, err := decodeCursor(listing, after)
	if err != nil {
		return nil, "", nil, err
	}
	items, next, err := s.scanPage(ctx, s.tables.SKUs, listing, filter, start)
	if err != nil {
		return nil, "", nil, err
	}
	counts := map[string]int{}
	var recs []skuRecord
	var unreadable []string
	for _, item := range items {
		var rec skuRecord
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil || !inventory.ValidSKUID(rec.SKU) || rec.Shards < 1 || rec.Shards > inventory.MaxShards {
			pk, _ := item["pk"].(*types.AttributeValueMemberS)
			if pk != nil {
				unreadable = append(unreadable, pk.Value)
			} else {
				unreadable = append(unreadable, "?")
			}
			continue
		}
		recs = append(recs, rec)
		counts[rec.SKU] = rec.Shards
	}
	shards, err := s.shardRecords(ctx, counts)
	if err != nil {
		return nil, "", nil, err
	}
	out := make([]*inventory.SKUDetail, len(recs))
	for i, rec := range recs {
		out[i] = detailOf(rec, shards[rec.SKU])
	}
	return out, next, unreadable, nil
}

// layoutRounds bounds how often an operator's write is tried again when the SKU's
// shards changed under it (a reshard, a buyer taking the units it counted on).
const layoutRounds = 8

// PatchSKU applies p to the SKU record and copies price, on-sale and sale start onto
// every shard item, in one transaction conditioned on the shard count it read, so
// reservations see the change at once; the record keeps by (the caller's principal)
// and the time. Orders already placed keep their prices. It returns the SKU as it is
// then, and errors wrapping inventory.ErrInvalidRequest (SKUPatch.Validate),
// inventory.ErrSKUNotFound, inventory.ErrSaleInProgress (SKUPatch.MidSale, on the
// record as read; the transaction is also conditioned on its sale fields unchanged,
// so a patch racing another is read again), or inventory.ErrBusy (the shards kept
// changing, or DynamoDB stayed throttled).
func (s *StockStore) PatchSKU(ctx context.Context, sku string, p inventory.SKUPatch, by string) (*inventory.SKU, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	for range layoutRounds {
		rec, err := s.skuRecordOf(ctx, sku)
		if err != nil {
			return nil, err
		}
		now := s.now()
		if err := p.MidSale(rec.sale(), now); err != nil {
			return nil, err
		}
		t := s.newTxn("update SKU " + sku)
		recUpd, shardUpd, touchShards := patchUpdates(p, by, now.UnixMilli())
		if p.Queue != nil || p.FairWindowSeconds != nil || p.RiskThreshold != nil {
			q, err := p.ApplyQueue(rec.queue())
			if err != nil {
				return nil, err
			}
			recUpd = recUpd.Set(expression.Name("queue"), expression.Value(q.Queue)).
				Set(expression.Name("fairWindowSeconds"), expression.Value(q.FairWindowSeconds)).
				Set(expression.Name("riskThreshold"), expression.Value(q.RiskThreshold))
		}
		count := expression.Name("shards").Equal(expression.Value(rec.Shards)).And(rec.saleAsRead())
		t.update(part{kind: partSKU, sku: sku}, s.tables.SKUs, skuKey(sku), recUpd, count)
		if touchShards {
			for n := range rec.Shards {
				t.update(part{kind: partShard, sku: sku, shard: n}, s.tables.SKUs, shardKey(sku, n), shardUpd, expression.AttributeExists(expression.Name("pk")))
			}
		}
		err = s.apply(ctx, t, errGone)
		s.catalog.forget(sku)
		if errors.Is(err, errGone) {
			continue // the shard count or the sale changed meanwhile: read it again
		}
		if err != nil {
			return nil, err
		}
		return s.SKU(ctx, sku)
	}
	return nil, fmt.Errorf("update SKU %s: shards kept changing: %w", sku, inventory.ErrBusy)
}

// patchUpdates builds the update of the SKU record and of its shard items for p, and
// reports whether the shards need it (price, on-sale or sale start change).
func patchUpdates(p inventory.SKUPatch, by string, at int64) (rec, shard expression.UpdateBuilder, touchShards bool) {
	rec = expression.Set(expression.Name("updatedAt"), expression.Value(at))
	if by != "" {
		rec = rec.Set(expression.Name("updatedBy"), expression.Value(by))
	}
	both := func(name string, v any) {
		rec = rec.Set(expression.Name(name), expression.Value(v))
		shard = shard.Set(expression.Name(name), expression.Value(v))
		touchShards = true
	}
	if p.Name != nil {
		rec = rec.Set(expression.Name("name"), expression.Value(*p.Name))
	}
	if p.LimitPerUser != nil {
		rec = rec.Set(expression.Name("limitPerUser"), expression.Value(*p.LimitPerUser))
	}
	if p.Delivery != nil {
		rec = rec.Set(expression.Name("delivery"), expression.Value(deliveryAttr(*p.Delivery)))
	}
	if p.Price != nil {
		both("price", *p.Price)
	}
	if p.OnSale != nil {
		both("onSale", *p.OnSale)
	}
	if p.SaleStartsAt != nil {
		both("saleStartsAt", unixMilli(*p.SaleStartsAt)) // 0: no start time
	}
	return rec, shard, touchShards
}

// skuRecordOf reads the SKU record of sku (strongly consistent). It returns an error
// wrapping inventory.ErrSKUNotFound when there is none.
func (s *store) skuRecordOf(ctx context.Context, sku string) (*skuRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(skuKey(sku)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, s.storeError("read SKU "+sku, err)
	}
	var rec skuRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return nil, fmt.Errorf("decode SKU %s: %w", sku, err)
	}
	if rec.Kind != kindSKU || rec.Shards < 1 {
		return nil, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	return &rec, nil
}

type skuRecord struct {
	PK           string `dynamodbav:"pk"`
	Kind         string `dynamodbav:"kind"`
	SKU          string `dynamodbav:"skuId"`
	Name         string `dynamodbav:"name"`
	Price        int64  `dynamodbav:"price"`
	Currency     string `dynamodbav:"currency"`
	OnSale       bool   `dynamodbav:"onSale"`
	Shards       int    `dynamodbav:"shards"`
	LimitPerUser int    `dynamodbav:"limitPerUser"`
	SaleStartsAt int64  `dynamodbav:"saleStartsAt,omitempty"` // Unix milliseconds; 0: none
	// Moves counts changes of where the SKU's units lie (shard count changes and MOVE
	// transactions); a reader that sees it unchanged around its shard reads saw no
	// unit in transit (see steadyShards).
	Moves      int    `dynamodbav:"moves"`
	CreateHash string `dynamodbav:"createHash,omitempty"` // digest of the create request (EnsureSKU)
	// Retired keeps, per shard number a reshard deleted, the shard's seq and epoch at
	// the deletion: reconcile's cut of the deleted shard, and where the shard carries
	// on if it is grown again (see dropShards).
	Retired   map[string]markRecord `dynamodbav:"retired,omitempty"`
	UpdatedBy string                `dynamodbav:"updatedBy,omitempty"` // principal of the last change
	UpdatedAt int64                 `dynamodbav:"updatedAt,omitempty"` // Unix milliseconds of the last change
	// Delivery is inventory.DeliveryNone, or "" for inventory.DeliveryExpress (SKUs
	// created before deliveries were kept ship by express).
	Delivery string `dynamodbav:"delivery,omitempty"`
	// Queue, FairWindowSeconds and RiskThreshold are the SKU's
	// inventory.QueueSettings (absent on SKUs created before: none).
	Queue             bool `dynamodbav:"queue,omitempty"`
	FairWindowSeconds int  `dynamodbav:"fairWindowSeconds,omitempty"`
	RiskThreshold     int  `dynamodbav:"riskThreshold,omitempty"`
	// Waitlist says the SKU's orders read the buyer's waitlist entry for a hold
	// (1 read unit); orders of a SKU without it read nothing more. A join or the
	// sweep's pass sets it, with WaitlistSince, when the SKU has entries; the pass
	// clears all three once the line is empty and every hold has ended
	// (docs/design.md, "The waitlist", "The orders' flag").
	Waitlist bool `dynamodbav:"waitlist,omitempty"`
	// WaitlistSince is when (Unix ms) Waitlist was last set; a hold is granted only
	// WaitlistLead after it (absent on records flagged before: long ago).
	WaitlistSince int64 `dynamodbav:"waitlistSince,omitempty"`
	// WaitlistHoldsUntil is the end (Unix ms) of the last hold granted: the flag
	// stays until then.
	WaitlistHoldsUntil int64 `dynamodbav:"waitlistHoldsUntil,omitempty"`
	// SoldOut, when set, is when (Unix ms) the SKU entered the sold-out state:
	// every shard marked and empty (soldout.go); Unsells counts the times it left
	// it, and Entering is a claim of an entry under way (Unix ms).
	SoldOut  int64 `dynamodbav:"soldOut,omitempty"`
	Unsells  int   `dynamodbav:"unsells,omitempty"`
	Entering int64 `dynamodbav:"entering,omitempty"`
	// Marked lists shards known marked and empty (attributes mk<k>, markName): every
	// shard of the layout when the state is entered, less the shards each unsell
	// unmarks, none after a layout change. k in Marked ⇒ shard k carries the mark and
	// holds no available unit (soldout.go), so a refusal planned on a record it read
	// strongly reads only the other shards. Decoded by UnmarshalDynamoDBAttributeValue;
	// never written by a Put.
	Marked []int `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes a SKU record item (attributevalue's
// Unmarshaler): its attributes as tagged, and Marked from its mk<k> attributes.
// Errors: those of attributevalue.Unmarshal, for an item that is not a record.
func (r *skuRecord) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain skuRecord // without this method
	var p plain
	if err := attributevalue.Unmarshal(av, &p); err != nil {
		return err
	}
	*r = skuRecord(p)
	if m, ok := av.(*types.AttributeValueMemberM); ok {
		r.Marked = markedOf(m.Value)
	}
	return nil
}

// sale is what inventory.SKUPatch.MidSale reads of r.
func (r skuRecord) sale() inventory.SKU {
	return inventory.SKU{ID: r.SKU, OnSale: r.OnSale, LimitPerUser: r.LimitPerUser, SaleStartsAt: fromMilli(r.SaleStartsAt), Queue: r.queue()}
}

// saleAsRead conditions the SKU record on the fields sale reads being as in r (a
// zero value also matches the attribute's absence: omitempty fields).
func (r skuRecord) saleAsRead() expression.ConditionBuilder {
	is := func(name string, v any, zero bool) expression.ConditionBuilder {
		c := expression.Name(name).Equal(expression.Value(v))
		if zero {
			c = c.Or(expression.AttributeNotExists(expression.Name(name)))
		}
		return c
	}
	return is("queue", r.Queue, !r.Queue).And(is("onSale", r.OnSale, false),
		is("limitPerUser", r.LimitPerUser, r.LimitPerUser == 0), is("saleStartsAt", r.SaleStartsAt, r.SaleStartsAt == 0))
}

// queue is the SKU's waiting-room settings.
func (r skuRecord) queue() inventory.QueueSettings {
	return inventory.QueueSettings{Queue: r.Queue, FairWindowSeconds: r.FairWindowSeconds, RiskThreshold: r.RiskThreshold}
}

// delivery is the SKU's inventory delivery.
func (r skuRecord) delivery() string {
	if r.Delivery == "" {
		return inventory.DeliveryExpress
	}
	return r.Delivery
}

// deliveryAttr is the stored form of delivery d: "" for the default, express.
func deliveryAttr(d string) string {
	if d == inventory.DeliveryExpress {
		return ""
	}
	return d
}

// markRecord is an inventory.ShardMark as the SKU record keeps it.
type markRecord struct {
	Seq   int `dynamodbav:"seq"`
	Epoch int `dynamodbav:"epoch"`
}

// ErrSKUExists is returned by CreateSKU and EnsureSKU when a different SKU has the id
// (it is inventory.ErrSKUExists).
var ErrSKUExists = inventory.ErrSKUExists

// errGone: an item a write was conditioned on no longer exists.
var errGone = errors.New("item gone")

// EnsureSKU writes the SKU record, its shard items (stock split by inventory.NewSKU.Split) and
// the initial ADJUST ledger entry (recording in.By) in one transaction, and reports
// true. When the SKU was already created by the same request (same fields; any shard
// count when in gives none, see madeBy), nothing is written and it reports false: that is what makes POST /admin/skus idempotent. It
// returns an error wrapping inventory.ErrInvalidRequest for fields outside the SKU
// bounds (inventory.NewSKU.Validate), ErrSKUExists when a different SKU has the id, and
// inventory.ErrBusy when DynamoDB stayed throttled or the outcome cannot be read back.
func (s *StockStore) EnsureSKU(ctx context.Context, in inventory.NewSKU) (bool, error) {
	count := shardCountOf(in)
	in = in.WithDefaults()
	if err := in.Validate(); err != nil {
		return false, err
	}
	hash, now := createHash(in), s.now()
	t := s.newTxn("create SKU " + in.ID)
	t.put(part{kind: partSKU, sku: in.ID}, s.tables.SKUs, skuRecord{
		PK: skuKey(in.ID), Kind: kindSKU, SKU: in.ID, Name: in.Name, Price: in.Price,
		Currency: inventory.Currency, OnSale: !in.OffSale, Shards: in.Shards, LimitPerUser: in.LimitPerUser,
		SaleStartsAt: unixMilli(in.SaleStartsAt), CreateHash: hash, UpdatedBy: in.By, UpdatedAt: now.UnixMilli(),
		Delivery: deliveryAttr(in.Delivery),
		Queue:    in.Queue.Queue, FairWindowSeconds: in.Queue.FairWindowSeconds, RiskThreshold: in.Queue.RiskThreshold,
	}, nil)
	split := in.Split()
	for n := range in.Shards {
		t.newShard(shardRecord{
			PK: shardKey(in.ID, n), Kind: kindShard, SKU: in.ID, Shard: n,
			Available: split[n], OnHand: split[n], Price: in.Price, OnSale: !in.OffSale,
			SaleStartsAt: unixMilli(in.SaleStartsAt), ShardCount: in.Shards,
		})
	}
	ref := entryRef{key: in.Ref, ref: in.Ref, reason: "initial stock", at: now.UnixMilli(), by: in.By}
	t.ledger(0, newEntry(ref, inventory.OpAdjust, in.ID, in.Stock, split))
	out, err := s.send(ctx, t)
	s.catalog.forget(in.ID)
	switch {
	case err != nil:
		return false, err
	case out.applied:
		return true, nil
	case out.unknown != nil:
		rec, err := s.skuRecordOf(ctx, in.ID)
		if err != nil || !madeBy(rec, in, count) {
			return false, outcomeUnknown("create SKU "+in.ID, out.unknown)
		}
		return true, nil // ours, or an identical request's: the SKU is as asked
	}
	if rec, err := s.skuRecordOf(ctx, in.ID); err == nil && madeBy(rec, in, count) {
		return false, nil // created before by the same request
	}
	return false, fmt.Errorf("create SKU %s: %v failed its condition: %w", in.ID, out.parts(), ErrSKUExists)
}

// shardCount says where a new SKU's shard count comes from.
type shardCount int

const (
	countGiven shardCount = iota // the request gives it
	countSized                   // sized from the peak (inventory.NewSKU.WithDefaults)
)

// shardCountOf is where in's shard count comes from, before defaults are filled.
func shardCountOf(in inventory.NewSKU) shardCount {
	if in.Shards == 0 {
		return countSized
	}
	return countGiven
}

// madeBy reports whether rec was created by a request identical to in (defaults
// filled). When in was sized from its peak (countSized: no shard count given), the
// shard count is left out of the comparison, since the sizing rule may have given
// another count when the SKU was created (or it was resharded since): the digest is
// one-way, so each count from 1 to inventory.MaxShards is tried.
func madeBy(rec *skuRecord, in inventory.NewSKU, count shardCount) bool {
	switch {
	case rec == nil:
		return false
	case count == countGiven:
		return rec.CreateHash == createHash(in)
	}
	for in.Shards = 1; in.Shards <= inventory.MaxShards; in.Shards++ {
		if rec.CreateHash == createHash(in) {
			return true
		}
	}
	return false
}

// createHash digests the fields of a create request (defaults filled) that make a
// SKU, so that a repeated request can be told from a different one.
func createHash(in inventory.NewSKU) string {
	text := fmt.Appendf(nil, "%q|%q|%d|%d|%d|%d|%t|%d|%q",
		in.ID, in.Name, in.Price, in.Stock, in.LimitPerUser, in.Shards, in.OffSale, unixMilli(in.SaleStartsAt), in.Ref)
	if d := deliveryAttr(in.Delivery); d != "" { // the default adds nothing: digests of SKUs made before stay valid
		text = fmt.Appendf(text, "|%q", d)
	}
	if in.Queue != (inventory.QueueSettings{}) { // likewise: no waiting room adds nothing
		text = fmt.Appendf(text, "|queue %t %d %d", in.Queue.Queue, in.Queue.FairWindowSeconds, in.Queue.RiskThreshold)
	}
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

func recordSKU(rec skuRecord, shards []shardRecord) *inventory.SKU {
	sku := &inventory.SKU{
		ID: rec.SKU, Name: rec.Name, Price: rec.Price, Currency: rec.Currency,
		OnSale: rec.OnSale, Shards: rec.Shards, LimitPerUser: rec.LimitPerUser,
		SaleStartsAt: fromMilli(rec.SaleStartsAt), Delivery: rec.delivery(), Queue: rec.queue(),
	}
	for _, sh := range shards {
		sku.OnHand += sh.OnHand
		sku.Available += sh.Available
	}
	return sku
}

// SKU returns the SKU with its stock summed over its shards, read with one strongly
// consistent BatchGetItem of the SKU record and its shard items (the shard count comes
// from the catalog cache and is re-read if it changed). With one shard the count is
// exact at the read. With N shards it is the sum of N exact reads taken one after the
// other: while stock only falls during the read (reservations), the sum is never above
// the true count at the read's start; a release landing on a shard between the reads
// can be counted a moment early. A serializable TransactGetItems would be exact but
// fails against every in-flight reservation of a hot SKU (TransactionConflict), which
// is when buyers read the most. A SKU that has been resharded is read as SKUDetail
// reads it (the record, the shards, the record again, until no unit moved meanwhile),
// so that units in transit are never counted twice. It returns an error wrapping
// inventory.ErrSKUNotFound for an unknown id.
func (s *StockStore) SKU(ctx context.Context, id string) (*inventory.SKU, error) {
	for range 2 {
		shards := 1
		if e, ok := s.catalog.get(id, s.now()); ok {
			shards = e.rec.Shards
		}
		keys := []string{skuKey(id)}
		for i := range shards {
			keys = append(keys, shardKey(id, i))
		}
		items, err := s.batchGet(ctx, s.tables.SKUs, keys)
		if err != nil {
			return nil, err
		}
		var rec skuRecord
		var shardRecs []shardRecord
		found := false
		for _, item := range items {
			var probe struct {
				Kind string `dynamodbav:"kind"`
			}
			if err := attributevalue.UnmarshalMap(item, &probe); err != nil {
				return nil, fmt.Errorf("decode SKU %s: %w", id, err)
			}
			switch probe.Kind {
			case kindSKU:
				if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
					return nil, fmt.Errorf("decode SKU %s: %w", id, err)
				}
				found = true
			case kindShard:
				var sh shardRecord
				if err := attributevalue.UnmarshalMap(item, &sh); err != nil {
					return nil, fmt.Errorf("decode SKU %s: %w", id, err)
				}
				shardRecs = append(shardRecs, sh)
			}
		}
		if !found {
			return nil, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: id}
		}
		s.catalog.put(rec, s.now())
		if rec.Moves > 0 {
			return s.steadySKU(ctx, id) // resharded: units may be in transit between shards
		}
		if rec.Shards != shards {
			continue // the shard count changed since it was cached: read again
		}
		for _, sh := range shardRecs {
			s.catalog.noteShard(id, sh.Shard, sh.Available)
		}
		return recordSKU(rec, shardRecs), nil
	}
	return nil, fmt.Errorf("read SKU %s: shard count keeps changing: %w", id, inventory.ErrBusy)
}
