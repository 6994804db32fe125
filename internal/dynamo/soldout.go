package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A sold-out SKU refuses from one item (docs/design.md, "Sell-out: one summary
// item"). Each SKU may have a summary item, pk "<skuId>#sum", kind SUMMARY, in the
// skus table. It holds no units (they stay on the shards, so the ledger and
// reconcile never see it); its attribute soldOut, when present, says that every
// shard of the SKU has available 0:
//
//   - it is set only by enterSoldOut's transaction, conditioned on every shard
//     holding available 0 and on the layout the shards were read under;
//   - every transaction that adds available units to a shard (txn.shard with a
//     positive Available delta: a release, a refund's RETURN, an ADJUST up, a MOVE's
//     credit, a REPAIR) also checks that soldOut is absent, or removes it
//     (txn.summary), in the same transaction.
//
// So soldOut present at a strongly consistent read means no shard held an available
// unit at that instant, and a buyer is refused from that one read.

const kindSummary = "SUMMARY"

// entryClaim is how long one environment's claim to enter a SKU's sold-out state
// keeps the others from sending the entry's transaction (enterSoldOut).
const entryClaim = time.Second

func summaryKey(sku string) string { return sku + "#sum" }

// soldOutMark is the soldOut attribute: the SKU record's move counter and shard count
// the shards were read under when the state was entered, and when (Unix ms).
type soldOutMark struct {
	Moves  int   `dynamodbav:"moves"`
	Shards int   `dynamodbav:"shards"`
	At     int64 `dynamodbav:"at"`
}

// soldOut reads sku's summary item with one strongly consistent GetItem of its
// soldOut attribute (1 read unit: the item is under 4 KB) and reports whether it is
// there. An eventually consistent read (half a unit) could miss the removal of a
// release a moment before, and answer a false STOCK_OUT.
func (s *store) soldOut(ctx context.Context, sku string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(summaryKey(sku)), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("soldOut"),
	})
	if err != nil {
		return false, s.storeError("read the summary of "+sku, err)
	}
	_, ok := out.Item["soldOut"]
	return ok, nil
}

// enterSoldOut sets soldOut on rec's SKU after a strongly consistent read of its
// shards found every one at available 0 and trusted them (unmoved), in one
// TransactWriteItems: the summary's Update (conditioned on soldOut being absent), a
// ConditionCheck of each of the rec.Shards shards (available 0, shard count
// rec.Shards, no MOVE after rec.Moves) and one of the SKU record (move counter and
// shard count unchanged). A unit that came back meanwhile fails a check and nothing
// is written. It is best effort: a refusal stands on its own read whatever this
// returns; the error only says why the state was not entered.
//
// Many environments refuse at once when a SKU sells out, and each would send that
// transaction (n + 2 items, 2 write units each). So each first claims the entry with
// one conditional UpdateItem of the summary (1 write unit, charged whether or not it
// applies): it applies only while soldOut is absent and no claim was made in the
// last entryClaim; only the one whose claim applied sends the transaction.
func (s *store) enterSoldOut(ctx context.Context, rec skuRecord) error {
	now := s.now().UnixMilli()
	entering := expression.Name("entering")
	claim, err := expression.NewBuilder().
		WithUpdate(expression.Set(entering, expression.Value(now)).
			Set(expression.Name("kind"), expression.Value(kindSummary)).
			Set(expression.Name("skuId"), expression.Value(rec.SKU))).
		WithCondition(expression.AttributeNotExists(expression.Name("soldOut")).
			And(expression.AttributeNotExists(entering).Or(entering.LessThan(expression.Value(now - entryClaim.Milliseconds()))))).
		Build()
	if err != nil {
		return fmt.Errorf("build the sold-out claim of %s: %w", rec.SKU, err)
	}
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(summaryKey(rec.SKU)),
		UpdateExpression: claim.Update(), ConditionExpression: claim.Condition(),
		ExpressionAttributeNames: claim.Names(), ExpressionAttributeValues: claim.Values(),
	}); err != nil {
		return s.storeError("claim the sold-out entry of "+rec.SKU, err)
	}
	t := s.newTxn("enter sold out " + rec.SKU)
	mark := soldOutMark{Moves: rec.Moves, Shards: rec.Shards, At: now}
	upd := expression.Set(expression.Name("soldOut"), expression.Value(mark)).
		Set(expression.Name("kind"), expression.Value(kindSummary)).
		Set(expression.Name("skuId"), expression.Value(rec.SKU))
	t.update(part{kind: partSummary, sku: rec.SKU}, s.tables.SKUs, summaryKey(rec.SKU), upd, expression.AttributeNotExists(expression.Name("soldOut")))
	moves := expression.Name("moves")
	for n := range rec.Shards {
		cond := expression.Name("available").Equal(expression.Value(0)).
			And(expression.Name("shardCount").Equal(expression.Value(rec.Shards))).
			And(expression.AttributeNotExists(moves).Or(moves.LessThanEqual(expression.Value(rec.Moves))))
		t.check(part{kind: partShard, sku: rec.SKU, shard: n}, s.tables.SKUs, shardKey(rec.SKU, n), cond)
	}
	t.check(part{kind: partSKU, sku: rec.SKU}, s.tables.SKUs, skuKey(rec.SKU),
		moves.Equal(expression.Value(rec.Moves)).And(expression.Name("shards").Equal(expression.Value(rec.Shards))))
	return s.apply(ctx, t, errGone)
}

// allEmpty reports whether every shard read holds no available unit.
func allEmpty(shards []shardRecord) bool {
	for _, sh := range shards {
		if sh.Available != 0 {
			return false
		}
	}
	return true
}

// summary adds, once per SKU, the action on sku's summary item that a transaction
// adding available units to a shard of sku takes: a ConditionCheck that soldOut is
// absent, or, once that check failed (t.unsold), an Update removing it. A
// ConditionCheck inside TransactWriteItems is one of the transaction's items, and
// DynamoDB performs two underlying writes of every item in a transaction ("Capacity
// management for transactions", DynamoDB Developer Guide): 2 write units under 1 KB,
// what the Update would cost; it leaves the item unchanged, so a SKU that is not
// sold out gets no summary item from its releases.
func (t *txn) summary(sku string) {
	if t.summaries[sku] {
		return
	}
	if t.summaries == nil {
		t.summaries = map[string]bool{}
	}
	t.summaries[sku] = true
	t.parts = append(t.parts, part{kind: partSummary, sku: sku})
	t.acts = append(t.acts, func() (types.TransactWriteItem, error) {
		if t.unsold[sku] {
			upd := expression.Remove(expression.Name("soldOut")).
				Set(expression.Name("kind"), expression.Value(kindSummary)).
				Set(expression.Name("skuId"), expression.Value(sku))
			return update(t.s.tables.SKUs, summaryKey(sku), upd, expression.ConditionBuilder{})
		}
		return conditionCheck(t.s.tables.SKUs, summaryKey(sku), expression.AttributeNotExists(expression.Name("soldOut")))
	})
}

// soldOutFailed reports whether a summary's check failed among failed, and marks
// those SKUs so that the next build removes soldOut instead of checking it.
func (t *txn) soldOutFailed(failed []failure) bool {
	found := false
	for _, f := range failed {
		if f.kind == partSummary {
			if t.unsold == nil {
				t.unsold = map[string]bool{}
			}
			t.unsold[f.sku], found = true, true
		}
	}
	return found
}

// check adds a ConditionCheck of the item pk of table under cond.
func (t *txn) check(p part, table, pk string, cond expression.ConditionBuilder) {
	it, err := conditionCheck(table, pk, cond)
	t.add(p, it, err)
}

// conditionCheck is a transactional ConditionCheck of the item with key pk, returning
// the item when cond fails.
func conditionCheck(table, pk string, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build check of %s: %w", pk, err)
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(table), Key: pkOf(pk),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}
