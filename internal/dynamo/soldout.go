package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A sold-out SKU refuses from one item (docs/design.md, "Sell-out: one summary
// item"). Each SKU may have a summary item, pk "<skuId>#sum", kind SUMMARY, in the
// skus table. It holds no units (they stay on the shards, so the ledger and
// reconcile never see it), only:
//
//   - credits, counting the transactions that ever added available units to a shard
//     of the SKU: every one of them (txn.shard with a positive Available delta: a
//     release, a refund's RETURN, an ADJUST up, a MOVE's credit, a REPAIR) adds 1 and
//     removes soldOut in the same transaction (txn.summary);
//   - soldOut, set only by enterSoldOut: one conditional UpdateItem, applied only
//     while credits is what a reservation read before it read every shard empty.
//
// So soldOut present at a strongly consistent read means no shard held an available
// unit at that instant, and a buyer is refused from that one read.

const kindSummary = "SUMMARY"

func summaryKey(sku string) string { return sku + "#sum" }

// summaryRecord is a summary item as read.
type summaryRecord struct {
	Kind    string       `dynamodbav:"kind"`
	SKU     string       `dynamodbav:"skuId"`
	Credits int          `dynamodbav:"credits"`
	SoldOut *soldOutMark `dynamodbav:"soldOut"`
}

// soldOutMark is the soldOut attribute: the SKU record's move counter and shard count
// the shards were read under when the state was entered, and when (Unix ms).
type soldOutMark struct {
	Moves  int   `dynamodbav:"moves"`
	Shards int   `dynamodbav:"shards"`
	At     int64 `dynamodbav:"at"`
}

// summaryOf reads sku's summary item with one strongly consistent GetItem (1 read
// unit: the item is under 4 KB); a missing item reads as no credits, not sold out. An
// eventually consistent read (half a unit) could miss a release a moment before,
// and answer a false STOCK_OUT.
func (s *store) summaryOf(ctx context.Context, sku string) (summaryRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(summaryKey(sku)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return summaryRecord{}, s.storeError("read the summary of "+sku, err)
	}
	var rec summaryRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return summaryRecord{}, fmt.Errorf("decode the summary of %s: %w", sku, err)
	}
	return rec, nil
}

// enterSoldOut sets soldOut on rec's SKU after a strongly consistent read of its
// shards, made after a read of its summary that showed credits and no soldOut, found
// every shard at available 0 and trusted them (unmoved). It is one conditional
// UpdateItem of the summary (1 write unit), applied only while soldOut is absent and
// credits unchanged: no unit came back to any shard since the summary was read, so
// each shard, empty when read, is empty still (reservations only take units). It is
// best effort: a refusal stands on its own read whatever this returns.
func (s *store) enterSoldOut(ctx context.Context, rec skuRecord, credits int) error {
	mark := soldOutMark{Moves: rec.Moves, Shards: rec.Shards, At: s.now().UnixMilli()}
	cond := expression.AttributeNotExists(expression.Name("soldOut")).And(equalOrAbsent("credits", credits))
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("soldOut"), expression.Value(mark)).
			Set(expression.Name("kind"), expression.Value(kindSummary)).
			Set(expression.Name("skuId"), expression.Value(rec.SKU))).
		WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build the sold-out entry of %s: %w", rec.SKU, err)
	}
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(summaryKey(rec.SKU)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}); err != nil {
		return s.storeError("enter the sold-out state of "+rec.SKU, err)
	}
	return nil
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

// summary adds, once per SKU, the Update of sku's summary item that a transaction
// adding available units to a shard of sku takes: credits + 1, soldOut removed,
// unconditioned. It is one more item of the transaction, and DynamoDB performs two
// underlying writes of every item in a transaction ("Capacity management for
// transactions", DynamoDB Developer Guide): 2 write units under 1 KB.
func (t *txn) summary(sku string) {
	if t.summaries[sku] {
		return
	}
	if t.summaries == nil {
		t.summaries = map[string]bool{}
	}
	t.summaries[sku] = true
	upd := expression.Add(expression.Name("credits"), expression.Value(1)).
		Remove(expression.Name("soldOut")).
		Set(expression.Name("kind"), expression.Value(kindSummary)).
		Set(expression.Name("skuId"), expression.Value(sku))
	t.parts = append(t.parts, part{kind: partSummary, sku: sku})
	t.acts = append(t.acts, func() (types.TransactWriteItem, error) {
		return update(t.s.tables.SKUs, summaryKey(sku), upd, expression.ConditionBuilder{})
	})
}
