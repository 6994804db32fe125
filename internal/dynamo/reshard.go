package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// reshardRounds bounds the transactions one Reshard call sends.
const reshardRounds = 64

// maxMoveShards bounds the shards one MOVE transaction touches: each takes an update
// and a ledger entry, and the SKU record one more action, within DynamoDB's 100.
const maxMoveShards = 49

// Reshard splits sku's stock over target shard items (1..inventory.MaxShards) while
// buyers keep buying. Growing adds empty shards in one transaction with the new count
// on the SKU record and every shard; then available units move between shards in
// MOVE transactions (inventory.ShardStock.Rebalance), each conditioned on the SKU
// record's move counter and on the units still being available on the shards they
// leave, with one MOVE ledger entry per shard touched. Shrinking empties the shards
// past target the same way and deletes them, with the count change, in one
// transaction conditioned on their on-hand being 0; live waitlist holds on them move
// with their units to the shards that stay first (moveHolds). Every shard a MOVE touches is
// stamped with the move's number, so that units in transit are never seen missing by
// a reservation deciding STOCK_OUT (see unmoved), and units reserved by orders never move. by (the caller's principal) is recorded on every entry and the record.
// Errors wrap inventory.ErrInvalidRequest (target out of range), ErrSKUNotFound, or
// ErrBusy (the shards kept changing for reshardRounds transactions).
func (s *StockStore) Reshard(ctx context.Context, sku string, target int, by string) (*inventory.ReshardResult, error) {
	if target < 1 || target > inventory.MaxShards {
		return nil, inventory.InvalidError("shards must be an integer from 1 to %d", inventory.MaxShards)
	}
	res := &inventory.ReshardResult{SKU: sku, Target: target}
	for range reshardRounds {
		rec, err := s.skuRecordOf(ctx, sku)
		if err != nil {
			return nil, err
		}
		res.Shards = rec.Shards
		done, err := s.reshardStep(ctx, rec, target, by, res)
		s.catalog.forget(sku)
		switch {
		case errors.Is(err, errGone):
			continue // raced a buyer or another operator: read again
		case err != nil:
			return nil, err
		case done:
			return res, nil
		}
	}
	return nil, fmt.Errorf("reshard %s: shards kept changing: %w", sku, inventory.ErrBusy)
}

// reshardStep sends the next transaction of a reshard of rec to target, or reports
// done: the layout is as asked, or only reserved units hold shards past target.
func (s *StockStore) reshardStep(ctx context.Context, rec *skuRecord, target int, by string, res *inventory.ReshardResult) (bool, error) {
	if rec.Shards < target {
		return false, s.growShards(ctx, rec, target, by)
	}
	shards, err := s.shardRecords(ctx, map[string]int{rec.SKU: rec.Shards})
	if err != nil {
		return false, err
	}
	byNumber := shardCounts(shards[rec.SKU])
	avail := make(inventory.ShardStock, rec.Shards)
	for n, sh := range byNumber {
		if n < len(avail) {
			avail[n] = sh.Available
		}
	}
	if plan := avail.Rebalance(target); len(plan) > 0 {
		moved, err := s.move(ctx, rec, plan, by, target)
		res.Moved += moved
		return false, err
	}
	if rec.Shards == target {
		res.Complete = true
		return true, nil
	}
	if moved, err := s.moveHolds(ctx, rec, target, by); moved || err != nil {
		return false, err
	}
	for n := target; n < rec.Shards; n++ {
		if byNumber[n].OnHand > 0 {
			return true, nil // reserved units still there: draining
		}
	}
	if err := s.dropShards(ctx, rec, target, by, byNumber); err != nil {
		return false, err
	}
	res.Shards, res.Complete = target, true
	return true, nil
}

// layoutUpdate bumps the record's move counter from rec's, conditioned on it and on
// the shard count being rec's, records by, and takes the SKU out of the sold-out
// state (a new shard carries no mark: soldout.go), every shard's listing as marked
// removed.
func (s *StockStore) layoutUpdate(t *txn, rec *skuRecord, by string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) {
	upd = upd.Remove(expression.Name("soldOut")).Set(expression.Name("moves"), expression.Value(rec.Moves+1)).
		Set(expression.Name("updatedAt"), expression.Value(s.now().UnixMilli()))
	for k := range inventory.MaxShards {
		// Every listing, not only rec's: an entry may have listed shards since rec was
		// read (it moves neither moves nor shards).
		upd = upd.Remove(expression.Name(markName(k)))
	}
	if by != "" {
		upd = upd.Set(expression.Name("updatedBy"), expression.Value(by))
	}
	cond = cond.And(expression.Name("moves").Equal(expression.Value(rec.Moves))).
		And(expression.Name("shards").Equal(expression.Value(rec.Shards)))
	t.update(part{kind: partSKU, sku: rec.SKU}, s.tables.SKUs, skuKey(rec.SKU), upd, cond)
}

// growShards adds empty shards rec.Shards..target-1, carrying the record's price,
// on-sale and sale start (conditioned on them being unchanged), and sets the new count
// on the record and every shard, in one transaction. A shard deleted before carries on
// from its retired seq, one epoch on (see dropShards).
func (s *StockStore) growShards(ctx context.Context, rec *skuRecord, target int, by string) error {
	t := s.newTxn("grow " + rec.SKU + " to " + strconv.Itoa(target) + " shards")
	same := expression.Name("price").Equal(expression.Value(rec.Price)).
		And(expression.Name("onSale").Equal(expression.Value(rec.OnSale))).
		And(sameStart(rec.SaleStartsAt))
	s.layoutUpdate(t, rec, by, expression.Set(expression.Name("shards"), expression.Value(target)), same)
	count := expression.Set(expression.Name("shardCount"), expression.Value(target))
	for n := range rec.Shards {
		t.update(part{kind: partShard, sku: rec.SKU, shard: n}, s.tables.SKUs, shardKey(rec.SKU, n), count,
			expression.AttributeExists(expression.Name("pk")).And(sameShardCount(rec.Shards)))
	}
	for n := rec.Shards; n < target; n++ {
		sh := shardRecord{
			PK: shardKey(rec.SKU, n), Kind: kindShard, SKU: rec.SKU, Shard: n, Price: rec.Price,
			OnSale: rec.OnSale, SaleStartsAt: rec.SaleStartsAt, ShardCount: target,
		}
		if m, ok := rec.Retired[strconv.Itoa(n)]; ok {
			sh.Seq, sh.Epoch = m.Seq, m.Epoch+1
		}
		t.newShard(sh)
	}
	return s.apply(ctx, t, errGone)
}

// sameStart holds on an item whose saleStartsAt is ms (Unix milliseconds; 0 or
// absent: none).
func sameStart(ms int64) expression.ConditionBuilder {
	starts := expression.Name("saleStartsAt")
	if ms == 0 {
		return expression.AttributeNotExists(starts).Or(starts.Equal(expression.Value(0)))
	}
	return starts.Equal(expression.Value(ms))
}

// move sends the first transfers of plan that fit in one transaction (at most
// maxMoveShards shards): each shard touched is updated once by its net change,
// conditioned on the units it gives still being available, with its MOVE ledger
// entry. It returns the units moved.
func (s *StockStore) move(ctx context.Context, rec *skuRecord, plan []inventory.Transfer, by string, target int) (int, error) {
	net, moved := map[int]int{}, 0
	for _, tr := range plan {
		_, from := net[tr.From]
		_, to := net[tr.To]
		if len(net)+btoi(!from)+btoi(!to) > maxMoveShards {
			break
		}
		net[tr.From] -= tr.Units
		net[tr.To] += tr.Units
		moved += tr.Units
	}
	ref := "move." + strconv.Itoa(rec.Moves+1)
	t := s.newTxn("reshard " + rec.SKU + ": " + ref)
	t.moves = rec.Moves + 1 // what a reservation reading the shards checks (unmoved)
	s.layoutUpdate(t, rec, by, expression.UpdateBuilder{}, expression.AttributeExists(expression.Name("pk")))
	at := s.now().UnixMilli()
	for _, n := range slices.Sorted(maps.Keys(net)) {
		q := net[n]
		if q == 0 {
			continue
		}
		d, _ := inventory.OpMove.Effect(q)
		cond := expression.AttributeExists(expression.Name("pk")).And(sameShardCount(rec.Shards))
		if q < 0 {
			cond = cond.And(expression.Name("available").GreaterThanEqual(expression.Value(-q)))
		}
		t.shard(0, rec.SKU, n, d, cond)
		e := newEntry(entryRef{key: ref, ref: ref, reason: "reshard to " + strconv.Itoa(target) + " shards", at: at, by: by},
			inventory.OpMove, rec.SKU, q, map[int]int{n: abs(q)})
		e.PK += "#" + strconv.Itoa(n)
		t.ledger(0, e)
	}
	if err := s.apply(ctx, t, errGone); err != nil {
		return 0, err
	}
	return moved, nil
}

// dropShards deletes the shards target..rec.Shards-1, each conditioned on holding no
// unit and on the seq and epoch read (shards), and sets the count target on the
// record and the remaining shards, in one transaction. The record keeps each deleted
// shard's seq and epoch (retired): every ledger entry of the shard is stamped with
// that epoch or an earlier one, so reconcile can sum them without a shard item to cut,
// and a shard grown again starts one epoch later.
func (s *StockStore) dropShards(ctx context.Context, rec *skuRecord, target int, by string, shards map[int]shardRecord) error {
	t := s.newTxn("shrink " + rec.SKU + " to " + strconv.Itoa(target) + " shards")
	retired := maps.Clone(rec.Retired)
	if retired == nil {
		retired = map[string]markRecord{}
	}
	for n := target; n < rec.Shards; n++ {
		retired[strconv.Itoa(n)] = markRecord{Seq: shards[n].Seq, Epoch: shards[n].Epoch}
	}
	upd := expression.Set(expression.Name("shards"), expression.Value(target)).Set(expression.Name("retired"), expression.Value(retired))
	s.layoutUpdate(t, rec, by, upd, expression.AttributeExists(expression.Name("pk")))
	count := expression.Set(expression.Name("shardCount"), expression.Value(target))
	for n := range target {
		t.update(part{kind: partShard, sku: rec.SKU, shard: n}, s.tables.SKUs, shardKey(rec.SKU, n), count,
			expression.AttributeExists(expression.Name("pk")).And(sameShardCount(rec.Shards)))
	}
	empty := expression.Name("onHand").Equal(expression.Value(0)).And(expression.Name("available").Equal(expression.Value(0)))
	for n := target; n < rec.Shards; n++ {
		t.deleteIf(part{kind: partShard, sku: rec.SKU, shard: n}, s.tables.SKUs, shardKey(rec.SKU, n),
			empty.And(equalOrAbsent("seq", shards[n].Seq)).And(equalOrAbsent("epoch", shards[n].Epoch)))
	}
	return s.apply(ctx, t, errGone)
}

// deleteIf adds a Delete of the item pk of table under cond.
func (t *txn) deleteIf(p part, table, pk string, cond expression.ConditionBuilder) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		err = fmt.Errorf("build delete of %s: %w", pk, err)
	}
	t.add(p, types.TransactWriteItem{Delete: &types.Delete{
		TableName: aws.String(table), Key: pkOf(pk),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, err)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func abs(n int) int { return max(n, -n) }
