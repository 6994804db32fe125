package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
	"golang.org/x/sync/errgroup"
)

// Sold out as a state of the SKU (docs/design.md, "Sell-out: the SKU record says
// sold out"). The SKU record may carry soldOut (Unix ms of the entry) and unsells (how
// many times the state was left); a shard item may carry soldOut (true), a mark. They
// keep one rule:
//
//	the record says soldOut ⇒ every shard of its layout is marked and holds no
//	available unit.
//
//   - Entering (enterSoldOut): a reservation that read the record strongly (not sold
//     out: unsells u, moves m, n shards), then every shard strongly, each at 0 and
//     unmoved, claims the entry on the record, marks each shard not yet marked (an
//     UpdateItem conditioned on available = 0) and sets soldOut on the record,
//     conditioned on unsells u, moves m and n shards.
//   - Crediting: every transaction that adds available units to a shard (txn.shard
//     with a positive delta) is conditioned on the shard carrying no mark. When a
//     mark refuses it, send first leaves the state (unsell: one transaction removes
//     soldOut from the record, adds 1 to unsells and removes the refusing shards'
//     marks), then sends the credit again. A mark therefore stays only while soldOut
//     may stand, and no credit lands while the record says soldOut.
//   - Moving the layout: every reshard transaction removes soldOut (layoutUpdate).
//
// So a strongly consistent read of the record that shows soldOut shows that no shard
// held an available unit at that instant: STOCK_OUT from one read. Nobody writes the
// record while the SKU sells; a release after the sell-out pays one transaction more.

// claimMillis is how long a claim of the sold-out entry (the record's entering) holds
// off other entrants, in milliseconds, unless its entrant drops it first (an entry that
// failed drops its claim).
const claimMillis = 2000

// markRounds is how many times a shard's mark is sent while a transaction holds the
// shard: a plain write to an item a transaction is writing is refused with
// TransactionConflictException ("Transaction conflict handling in DynamoDB", Amazon
// DynamoDB Developer Guide), which the SDK's standard retryer does not retry, and as a
// SKU sells out the buyers in flight send their refused transactions to its empty
// shards, each holding them a few milliseconds.
const markRounds = 4

// notMarked holds on a shard that carries no sold-out mark.
func notMarked() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name("soldOut"))
}

// andCond is a and b, or b alone when a is not set.
func andCond(a, b expression.ConditionBuilder) expression.ConditionBuilder {
	if !a.IsSet() {
		return b
	}
	return a.And(b)
}

// enterSoldOut sets soldOut on rec's SKU after shards, every shard of rec's layout
// read strongly after rec was read (at any earlier moment: cached, eventually
// consistent or not), were found at 0 and unmoved: a claim (one conditional
// UpdateItem of the record, 1 write unit), one conditional UpdateItem per shard not
// yet marked (markShards: 1 write unit each, sent at once), and the entry itself (one
// more). It reports whether it entered. Best effort: a refused step leaves the SKU out
// of the state and drops the claim (1 write unit more; a mark without the record's
// soldOut only costs the shard's next credit an unsell), and the refusal stands on its
// own read whatever this returns.
//
// Why it is right: the entry is conditioned on unsells being what rec showed; a
// credit of a shard after its read or its mark must unsell first (moving unsells
// on), and one before its mark makes the mark's condition (available = 0) fail. So
// when the entry applies, every shard, empty when read or marked, is empty still
// (reservations only take units) and marked.
func (s *store) enterSoldOut(ctx context.Context, rec skuRecord, shards []shardRecord) (bool, error) {
	now := s.now().UnixMilli()
	if rec.SoldOut > 0 || rec.Entering > now-claimMillis || !unmoved(shards, rec) || slices.ContainsFunc(shards, func(sh shardRecord) bool { return sh.Available != 0 }) {
		return false, nil
	}
	entering := expression.Name("entering")
	claim := expression.AttributeNotExists(expression.Name("soldOut")).And(equalOrAbsent("unsells", rec.Unsells)).
		And(expression.AttributeNotExists(entering).Or(entering.LessThan(expression.Value(now - claimMillis))))
	if err := s.updateItem(ctx, skuKey(rec.SKU), expression.Set(entering, expression.Value(now)), claim); err != nil {
		return false, err
	}
	err := s.markShards(ctx, rec, shards)
	if err == nil {
		same := equalOrAbsent("unsells", rec.Unsells).And(expression.Name("moves").Equal(expression.Value(rec.Moves))).
			And(expression.Name("shards").Equal(expression.Value(rec.Shards)))
		upd := expression.Set(expression.Name("soldOut"), expression.Value(now)).Remove(entering)
		for k := range rec.Shards {
			upd = upd.Set(expression.Name(markName(k)), expression.Value(true))
		}
		err = s.updateItem(ctx, skuKey(rec.SKU), upd, same)
	}
	if err != nil {
		// Drop the claim (1 write unit), so that the next buyer to find every shard
		// empty enters at once instead of after claimMillis; the marks made stay, and
		// it skips them.
		s.updateItem(ctx, skuKey(rec.SKU), expression.Remove(entering), entering.Equal(expression.Value(now)))
	}
	return err == nil, err
}

// markShards marks every shard of shards not yet marked (an UpdateItem conditioned on
// available = 0 and rec's shard count, 1 write unit each, sent at once), sending a mark
// again after a jittered wait while a transaction holds its shard, markRounds times at
// most (a throttled mark is not: the SDK's retryer already sent it again).
// Errors: the first mark that failed.
func (s *store) markShards(ctx context.Context, rec skuRecord, shards []shardRecord) error {
	var g errgroup.Group
	for _, sh := range shards {
		if sh.SoldOut {
			continue // marked: only an unsell, which moves unsells on, removes it
		}
		empty := expression.Name("available").Equal(expression.Value(0)).And(sameShardCount(rec.Shards))
		g.Go(func() error {
			for round := 0; ; round++ {
				err := s.updateItem(ctx, sh.PK, expression.Set(expression.Name("soldOut"), expression.Value(true)), empty)
				var conflict *types.TransactionConflictException
				if !errors.As(err, &conflict) || round+1 == markRounds {
					return err
				}
				if err := clock.Sleep(ctx, jitter(round)); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}

// updateItem sends one UpdateItem of the skus table's item pk under cond (1 write unit
// under 1 KB, charged whether the condition holds or not).
func (s *store) updateItem(ctx context.Context, pk string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) error {
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build update of %s: %w", pk, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(pk),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return s.storeError("update "+pk, err)
	}
	return nil
}

// unsellMarked leaves the sold-out state of each SKU one of failed's credits found
// marked (unsell), and reports whether there was one: the txn may then be sent again.
func (s *store) unsellMarked(ctx context.Context, failed []failure) (bool, error) {
	marked := map[string][]int{}
	for _, f := range failed {
		if f.kind != partShard || !f.credit || len(f.old) == 0 {
			continue
		}
		var sh shardRecord
		if err := attributevalue.UnmarshalMap(f.old, &sh); err == nil && sh.SoldOut {
			marked[f.sku] = append(marked[f.sku], f.shard)
		}
	}
	for sku, shards := range marked {
		if err := s.unsell(ctx, sku, shards); err != nil {
			return false, err
		}
	}
	return len(marked) > 0, nil
}

// unsell takes sku out of the sold-out state before a credit of its marked shards:
// one transaction removes soldOut and the listing of shards from the record and adds 1
// to its unsells (an entry under way, conditioned on unsells, then fails), and removes
// the marks of shards (2 write units per item). Removing a claim is always safe; what
// matters is that the record stops saying soldOut, and listing a shard, no later than
// the shard's mark goes.
func (s *store) unsell(ctx context.Context, sku string, shards []int) error {
	exists := expression.AttributeExists(expression.Name("pk"))
	t := s.newTxn("leave the sold-out state of " + sku)
	upd := expression.Add(expression.Name("unsells"), expression.Value(1)).Remove(expression.Name("soldOut"))
	for _, n := range shards {
		upd = upd.Remove(expression.Name(markName(n)))
	}
	t.update(part{kind: partSKU, sku: sku}, s.tables.SKUs, skuKey(sku), upd, exists)
	for _, n := range shards {
		t.update(part{kind: partShard, sku: sku, shard: n}, s.tables.SKUs, shardKey(sku, n), expression.Remove(expression.Name("soldOut")), exists)
	}
	return s.apply(ctx, t, &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku})
}

// soldOutCheck answers ErrStockOut when line i's SKU is in the sold-out state, before
// any read of its shards or a transaction. A record this reservation has not read
// (from the cache, or read before a refused transaction) that does not say soldOut is
// read again eventually consistent (half a read unit under 4 KB; kept in the cache):
// another environment may have entered the state since. A record that says soldOut,
// however read, is read strongly (soldOutRead): only that read refuses. So is one
// that lists marked shards (the state was left by an unsell): the shards the strong
// read lists as marked need no read (unmarkedShards). nil: the SKU was not seen sold
// out, and the shards decide.
func (r *reservation) soldOutCheck(ctx context.Context, i int) error {
	lp := &r.lines[i]
	if !lp.seen && lp.rec.SoldOut == 0 {
		got := map[string]catalogEntry{}
		if err := r.s.readSKURecords(ctx, []string{lp.line.SKU}, false, got); err != nil {
			return err
		}
		if cur, ok := got[lp.line.SKU]; ok {
			lp.rec, lp.seen = cur.rec, true
		}
	}
	if lp.rec.SoldOut == 0 && len(lp.rec.Marked) == 0 {
		return nil
	}
	return r.soldOutRead(ctx, i)
}

// soldOutRead reads line i's SKU record strongly (1 read unit under 4 KB) unless
// this reservation already did, plans the line on it, and answers ErrStockOut when
// it says soldOut: then no shard of the SKU held a unit at the read.
func (r *reservation) soldOutRead(ctx context.Context, i int) error {
	lp := &r.lines[i]
	if !lp.fresh {
		rec, err := r.s.skuRecordOf(ctx, lp.line.SKU)
		if err != nil {
			return err
		}
		r.s.catalog.put(*rec, r.s.now())
		lp.rec, lp.fresh, lp.seen = *rec, true, true
	}
	if lp.rec.SoldOut > 0 {
		return &inventory.SKUError{Err: inventory.ErrStockOut, SKU: lp.line.SKU}
	}
	return nil
}

// enter enters the sold-out state of line i's SKU after shards, read after the
// line's record, could not cover it (enterSoldOut). A record not read by this
// reservation is read again first, eventually consistent (half a read unit: the
// refusers of a sell-out all come here at once), to skip an entry already made or
// claimed: one that says sold out is kept (this environment's next buyers are refused
// from the record), and one whose unsells, moves or shards differ from the line's
// leaves the state alone (a stale read only makes the entry's conditions fail). The
// errors are dropped: the refusal stands on the shards' read.
func (r *reservation) enter(ctx context.Context, i int, shards []shardRecord) {
	lp := &r.lines[i]
	rec := lp.rec
	if !lp.fresh {
		got := map[string]catalogEntry{}
		if err := r.s.readSKURecords(ctx, []string{rec.SKU}, false, got); err != nil {
			return
		}
		cur, ok := got[rec.SKU]
		if !ok || cur.rec.SoldOut > 0 || cur.rec.Unsells != rec.Unsells || cur.rec.Moves != rec.Moves || cur.rec.Shards != rec.Shards {
			return
		}
		rec = cur.rec
	}
	if ok, _ := r.s.enterSoldOut(ctx, rec, shards); ok {
		rec.SoldOut = r.s.now().UnixMilli()
		r.s.catalog.put(rec, r.s.now())
	}
}

// markPrefix starts the name of a SKU record's attribute listing one shard as
// marked ("mk" and the shard number, true): one top-level attribute per shard, so an
// unsell removes its shards' with REMOVE, which takes an attribute off an item
// whether it is there or not (DynamoDB API Reference, UpdateItem, UpdateExpression).
const markPrefix = "mk"

// markName is the record's attribute listing shard k as marked.
func markName(k int) string { return markPrefix + strconv.Itoa(k) }

// markedOf lists the shards item (a SKU record) lists as marked, in order.
func markedOf(item map[string]types.AttributeValue) []int {
	var out []int
	for name := range item {
		if rest, ok := strings.CutPrefix(name, markPrefix); ok {
			if k, err := strconv.Atoi(rest); err == nil && k >= 0 && strconv.Itoa(k) == rest {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// unmarkedShards reads rec's shards strongly, less those its record lists as marked
// when rec was read strongly by this reservation (fresh): each of those held no
// available unit and carried the mark at that read, so it stands in the answer as
// read then (markedShard), and a refusal after an unsell reads the unmarked shards
// only, not all of them ("Sell-out: the SKU record says sold out", 5.). Each line of
// lines names a SKU once.
func (r *reservation) unmarkedShards(ctx context.Context, lines []int) (map[string][]shardRecord, error) {
	counts, skip := map[string]int{}, map[string][]int{}
	for _, i := range lines {
		lp := &r.lines[i]
		counts[lp.rec.SKU] = lp.rec.Shards
		if lp.fresh {
			skip[lp.rec.SKU] = lp.rec.Marked
		}
	}
	shards, err := r.s.shardRecordsExcept(ctx, counts, skip)
	if err != nil {
		return nil, err
	}
	for _, i := range lines {
		rec := r.lines[i].rec
		for _, k := range skip[rec.SKU] {
			if k >= 0 && k < rec.Shards {
				shards[rec.SKU] = append(shards[rec.SKU], markedShard(rec, k))
			}
		}
	}
	return shards, nil
}

// markedShard is shard k of rec's SKU as rec's marked set shows it: no available
// unit, marked, of rec's layout and moved by no MOVE after rec.
func markedShard(rec skuRecord, k int) shardRecord {
	return shardRecord{PK: shardKey(rec.SKU, k), SKU: rec.SKU, Shard: k, Price: rec.Price, OnSale: rec.OnSale,
		SaleStartsAt: rec.SaleStartsAt, ShardCount: rec.Shards, SoldOut: true}
}
