package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stockguard/stockguard/internal/inventory"
)

// A consistent cut of the books, shard by shard.
//
// Every shard item carries two numbers besides its counters:
//   - seq, the number of ledger entries that ever moved the shard: every txn that
//     updates a shard adds its own entries on that shard (ADD seq :k);
//   - epoch, moved on (ADD epoch :1) only by reconcile's Cut. Every txn that updates a
//     shard is conditioned on the shard's epoch being the one it stamps on its ledger
//     entries (attribute epochs: shard → epoch).
//
// Cut moves a shard's epoch on and returns, atomically, the counters, seq and epoch
// the shard held just before: the entries stamped with that epoch or an earlier one
// are exactly the entries applied before the cut (a txn still carrying the old
// epoch can no longer apply), and there are seq − (seq at the previous checkpoint)
// of them since then, a count that tells reconcile when its read of the ledger is
// complete. So counters and ledger are compared at one instant, whatever the traffic.
//
// Why an epoch moved by reconcile and not a sequence number the writers predict: a
// writer that stamps the shard's next seq on its entries must know the current one,
// so every write would be conditioned on seq = the value read — a reservation would
// need a read first (two round trips instead of one) and any two orders on the same
// shard would refuse each other between one's read and the other's write. The epoch
// changes once per reconcile run: writers keep the epoch they last saw per shard, and
// only the first write of a shard after a cut is refused and sent again at once with
// the epoch the refusal returned (ALL_OLD), inside send. Orders never refuse each
// other, and the reservation stays one TransactWriteItems.

// maxEpochRounds bounds how many times send builds and sends one txn whose shard
// epochs moved on meanwhile.
const maxEpochRounds = 6

// epochCache keeps the last epoch seen per shard item key. Safe for concurrent use.
type epochCache struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *epochCache) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *epochCache) note(key string, epoch int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	if epoch > c.m[key] {
		c.m[key] = epoch
	}
}

// epochOf is the epoch t's current build conditions shard key on and stamps on the
// entries that move it: the starting epoch of a shard it creates, else the cached
// epoch, read once per build so that the condition and the stamps agree.
func (t *txn) epochOf(key string) int {
	if e, ok := t.epochs[key]; ok {
		return e
	}
	e, ok := t.fresh[key]
	if !ok {
		e = t.s.epochs.get(key)
	}
	if t.epochs == nil {
		t.epochs = map[string]int{}
	}
	t.epochs[key] = e
	return e
}

// sequenced adds to a shard update the seq of the txn's entries on shard n of sku,
// and the condition that the shard's epoch is the one its entries carry.
func (t *txn) sequenced(sku string, n int, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (expression.UpdateBuilder, expression.ConditionBuilder) {
	e := t.epochOf(shardKey(sku, n))
	upd = upd.Add(expression.Name("seq"), expression.Value(t.weight(sku, n)))
	same := equalOrAbsent("epoch", e)
	if cond.IsSet() {
		return upd, cond.And(same)
	}
	return upd, same
}

// equalOrAbsent holds when the number attribute name equals v, or, for v = 0, is
// absent (items written before it existed).
func equalOrAbsent(name string, v int) expression.ConditionBuilder {
	same := expression.Name(name).Equal(expression.Value(v))
	if v == 0 {
		return expression.AttributeNotExists(expression.Name(name)).Or(same)
	}
	return same
}

// weight counts t's ledger entries that move shard n of sku.
func (t *txn) weight(sku string, n int) int {
	k := 0
	for _, e := range t.entries {
		if e.SKU == sku && slices.Contains(entryShards(*e), n) {
			k++
		}
	}
	return k
}

// entryShards lists the shards a ledger record moves.
func entryShards(e ledgerRecord) []int {
	if e.Shard != nil {
		return []int{*e.Shard}
	}
	out := make([]int, 0, len(e.Shards))
	for k := range e.Shards {
		if n, err := strconv.Atoi(k); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// stamp is e with the epochs of the shards it moves.
func (t *txn) stamp(e ledgerRecord) ledgerRecord {
	e.Epochs = map[string]int{}
	for _, n := range entryShards(e) {
		e.Epochs[strconv.Itoa(n)] = t.epochOf(shardKey(e.SKU, n))
	}
	return e
}

// staleEpochs notes the epochs of refused shards whose epoch moved on since t was
// built, and reports whether there was one: then t may be sent again.
func (t *txn) staleEpochs(failed []failure) bool {
	stale := false
	for _, f := range failed {
		if f.kind != partShard || len(f.old) == 0 {
			continue
		}
		var rec shardRecord
		if err := attributevalue.UnmarshalMap(f.old, &rec); err != nil {
			continue
		}
		key := shardKey(f.sku, f.shard)
		if used, ok := t.epochs[key]; ok && rec.Epoch != used {
			t.s.epochs.note(key, rec.Epoch)
			stale = true
		}
	}
	return stale
}

// roundToken is the ClientRequestToken of round of a txn with token: the token
// itself first, then a UUID derived from it (DynamoDB refuses a token reused with
// other parameters: IdempotentParameterMismatchException). "" stays "".
func roundToken(token string, round int) string {
	if token == "" || round == 0 {
		return token
	}
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(token+"#"+strconv.Itoa(round))).String()
}

// Cut moves shard n of sku to its next epoch with one UpdateItem (ADD epoch :1,
// conditioned on the item existing) and returns the shard as it was just before
// (ReturnValues ALL_OLD: DynamoDB API Reference, UpdateItem). It returns an error
// wrapping ErrMoved when the shard item does not exist.
func (s *BookStore) Cut(ctx context.Context, sku string, n int) (inventory.ShardCut, error) {
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Add(expression.Name("epoch"), expression.Value(1))).
		WithCondition(expression.AttributeExists(expression.Name("pk"))).Build()
	if err != nil {
		return inventory.ShardCut{}, fmt.Errorf("build cut: %w", err)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(shardKey(sku, n)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return inventory.ShardCut{}, fmt.Errorf("cut shard %d of %s: %w", n, sku, inventory.ErrMoved)
	}
	if err != nil {
		return inventory.ShardCut{}, s.storeError("cut shard "+strconv.Itoa(n)+" of "+sku, err)
	}
	var rec shardRecord
	if err := attributevalue.UnmarshalMap(out.Attributes, &rec); err != nil {
		return inventory.ShardCut{}, fmt.Errorf("decode shard %d of %s: %w", n, sku, err)
	}
	s.epochs.note(shardKey(sku, n), rec.Epoch+1)
	return inventory.ShardCut{Counters: inventory.ShardCounters{Available: rec.Available, Reserved: rec.Reserved, OnHand: rec.OnHand}, Epoch: rec.Epoch, Seq: rec.Seq}, nil
}
