package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stockguard/stockguard/internal/inventory"
)

// txn is one TransactWriteItems under construction: its actions and, for each, the
// part it plays, so that a cancellation reason at index i reads back as the order,
// a purchase counter, a stock shard or a ledger entry. Every
// write of stock goes through txn.lineStock or txn.shard, which take the change to
// the counters from inventory.Op.Effect. Shard updates and ledger entries are built
// only when the txn is sent (see cut.go): every shard update also advances the
// shard's seq by the number of the txn's ledger entries on it and is conditioned on
// the shard's epoch, which those entries carry.
type txn struct {
	s       *store
	what    string // "reserve order …", "release order …" for errors
	token   string // ClientRequestToken; "" lets the SDK make one
	acts    []func() (types.TransactWriteItem, error)
	parts   []part
	entries []*ledgerRecord // the ledger entries, for the shards' seq
	fresh   map[string]int  // shard items this txn creates → the epoch they start at
	epochs  map[string]int  // shard key → the epoch the last build conditioned on
	moves   int             // a MOVE's number, stamped on every shard it touches (0: none)
	// used is, per shard key, the admission claim units an order's use of its
	// admission credits to the shard's counter of its bucket (claimCredit).
	used map[string]usedClaim
	err  error // the first build error
}

type partKind int

const (
	partOrder partKind = iota
	partLimit
	partShard
	partLedger
	partSKU
	partTicket // the waiting-room ticket an order's admission uses (QueueStore)
	partWait   // a waitlist entry (WaitlistStore)
)

// part says what one action of a txn is.
type part struct {
	kind   partKind
	line   int // the order line (reservations), else 0
	sku    string
	shard  int
	credit bool // a shard update adding available units (conditioned on no sold-out mark)
}

func (p part) String() string {
	switch p.kind {
	case partShard:
		return fmt.Sprintf("shard %d of %s", p.shard, p.sku)
	case partLedger:
		return "the ledger entry of " + p.sku + " (already written)"
	case partLimit:
		return "the purchase counter of " + p.sku
	case partSKU:
		return "the SKU record of " + p.sku
	case partTicket:
		return "the waiting-room ticket for " + p.sku
	case partWait:
		return "the waitlist entry for " + p.sku
	default:
		return "the order"
	}
}

func (s *store) newTxn(what string) *txn { return &txn{s: s, what: what} }

// add appends a built action playing p, keeping the first build error.
func (t *txn) add(p part, it types.TransactWriteItem, err error) {
	if t.err == nil && err != nil {
		t.err = err
	}
	t.acts = append(t.acts, func() (types.TransactWriteItem, error) { return it, nil })
	t.parts = append(t.parts, p)
}

// put adds a Put of rec into table that fails when the item exists, unless
// orReplace holds (see putNew).
func (t *txn) put(p part, table string, rec any, orReplace *expression.ConditionBuilder) {
	it, err := t.s.putNew(table, rec, orReplace)
	t.add(p, it, err)
}

// update adds an Update of the item pk of table (see update).
func (t *txn) update(p part, table, pk string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) {
	it, err := update(table, pk, upd, cond)
	t.add(p, it, err)
}

// remove adds a Delete of the item pk of table, unconditioned (deleting what is
// already gone changes nothing).
func (t *txn) remove(p part, table, pk string) {
	t.add(p, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table), Key: pkOf(pk)}}, nil)
}

// counter adds an update of the user's purchase counter for line's SKU.
func (t *txn) counter(line int, sku, user string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) {
	t.update(part{kind: partLimit, line: line, sku: sku}, t.s.tables.Orders, limitKey(sku, user), upd, cond)
}

// shard adds the update of one stock shard item by d, under cond; at send time it
// also advances the shard's seq and is conditioned on its epoch (see sequenced). A
// credit (d adds available units) is also conditioned on the shard carrying no
// sold-out mark (soldout.go).
func (t *txn) shard(line int, sku string, n int, d inventory.Delta, cond expression.ConditionBuilder) {
	key := shardKey(sku, n)
	credit := d.Available > 0
	if credit {
		cond = andCond(cond, notMarked())
	}
	t.parts = append(t.parts, part{kind: partShard, line: line, sku: sku, shard: n, credit: credit})
	t.acts = append(t.acts, func() (types.TransactWriteItem, error) {
		// Built afresh at every send: an UpdateBuilder's Add changes the builder.
		avail, onHand, reserved := expression.Name("available"), expression.Name("onHand"), expression.Name("reserved")
		upd := expression.Add(avail, expression.Value(d.Available)).
			Add(onHand, expression.Value(d.OnHand)).
			Add(reserved, expression.Value(d.Reserved))
		if t.moves > 0 {
			upd = upd.Set(expression.Name("moves"), expression.Value(t.moves))
		}
		if u, ok := t.used[key]; ok {
			upd = upd.Add(expression.Name(usedAttr(u.key)), expression.Value(u.units))
		}
		upd, cond := t.sequenced(sku, n, upd, cond)
		return update(t.s.tables.SKUs, key, upd, cond)
	})
}

// newShard adds the Put of a new shard item, starting at rec's epoch; its seq is
// rec's plus the txn's ledger entries on it.
func (t *txn) newShard(rec shardRecord) {
	if t.fresh == nil {
		t.fresh = map[string]int{}
	}
	t.fresh[rec.PK] = rec.Epoch
	t.parts = append(t.parts, part{kind: partShard, sku: rec.SKU, shard: rec.Shard})
	base := rec.Seq
	t.acts = append(t.acts, func() (types.TransactWriteItem, error) {
		rec.Seq = base + t.weight(rec.SKU, rec.Shard)
		return t.s.putNew(t.s.tables.SKUs, rec, nil)
	})
}

// ledger adds a ledger entry Put that fails if the entry exists; at send time the
// entry is stamped with the epoch of each shard it moves (see stamp).
func (t *txn) ledger(line int, e ledgerRecord) {
	e.ShardKey = ledgerShard(e.SKU, e.Shards, e.Shard)
	rec := &e
	t.entries = append(t.entries, rec)
	t.parts = append(t.parts, part{kind: partLedger, line: line, sku: e.SKU})
	t.acts = append(t.acts, func() (types.TransactWriteItem, error) {
		return t.s.putNew(t.s.tables.StockLog, t.stamp(*rec), nil)
	})
}

// entryRef names the ledger entries a line writes: key is the first part of their
// key (ref#op#skuId), ref the order or adjustment they belong to.
type entryRef struct {
	key, ref, reason string
	at               int64  // Unix milliseconds
	by               string // operator entries: the caller's principal
}

// lineStock applies ops to one order line: each shard the line uses is updated once
// by the ops' summed effect on its units, under cond(units), and each op writes its
// ledger entry, whose deltas are the op's effect on the line's units.
func (t *txn) lineStock(line int, it inventory.OrderItem, ref entryRef, cond func(q int) expression.ConditionBuilder, ops ...inventory.Op) {
	for _, n := range slices.Sorted(maps.Keys(it.Shards)) {
		q := it.Shards[n]
		var d inventory.Delta
		for _, op := range ops {
			e, _ := op.Effect(q)
			d = d.Plus(e)
		}
		t.shard(line, it.SKU, n, d, cond(q))
	}
	for _, op := range ops {
		t.ledger(line, newEntry(ref, op, it.SKU, it.Qty, it.Shards))
	}
}

// newEntry is the ledger entry of op moving qty units of sku spread over shards.
func newEntry(ref entryRef, op inventory.Op, sku string, qty int, shards map[int]int) ledgerRecord {
	d, _ := op.Effect(qty)
	return ledgerRecord{
		PK: ledgerKey(ref.key, op, sku), Ref: ref.ref, Op: op, SKU: sku, Qty: qty,
		DAvailable: d.Available, DOnHand: d.OnHand, Shards: shardsToRecord(shards), At: ref.at, Reason: ref.reason, By: ref.by,
	}
}

// outcome is what sending a txn came to when it was not refused outright.
type outcome struct {
	applied bool
	// unknown, when set, is the failure after which the write may or may not have
	// applied (a timeout, a 5xx after the SDK's retries): read back to know.
	unknown error
	failed  []failure // the conditions that failed: nothing was applied
}

// failure is one failed condition: the part and the item as it was (ALL_OLD).
type failure struct {
	part
	old map[string]types.AttributeValue
}

// parts lists the parts of the failures.
func (o outcome) parts() parts {
	out := make(parts, len(o.failed))
	for i, f := range o.failed {
		out[i] = f.part
	}
	return out
}

// has reports whether a condition of a part of kind k failed.
func (o outcome) has(k partKind) bool { return o.parts().has(k) }

// parts are the parts of failed conditions.
type parts []part

// has reports whether one of ps is of kind k.
func (ps parts) has(k partKind) bool {
	return slices.ContainsFunc(ps, func(p part) bool { return p.kind == k })
}

// send sends t. Cancellations are read from their CancellationReasons (DynamoDB API
// Reference, TransactWriteItems: "TransactionCanceledException"), never from error
// text. It returns an error wrapping inventory.ErrBusy when DynamoDB was throttled or
// conflicted, a plain error for other refusals that are bugs (validation), and else
// the outcome.
//
// A txn refused only because a shard's epoch moved on (a reconcile cut since the
// epoch was cached) is built again with the epoch the refusal returned and sent
// again, up to maxEpochRounds times, under a ClientRequestToken derived from its own.
// So is a txn whose credit a shard's sold-out mark refused, once the SKU has left
// the sold-out state (unsellMarked).
func (s *store) send(ctx context.Context, t *txn) (outcome, error) {
	if t.err != nil {
		return outcome{}, t.err
	}
	for round := 0; ; round++ {
		out, err := s.sendOnce(ctx, t, round)
		if err != nil || round+1 >= maxEpochRounds {
			return out, err
		}
		stale := t.staleEpochs(out.failed)
		unsold, err := s.unsellMarked(ctx, out.failed)
		if err != nil || !(stale || unsold) {
			return out, err
		}
	}
}

// sendOnce builds t and sends it once (see send).
func (s *store) sendOnce(ctx context.Context, t *txn, round int) (outcome, error) {
	t.epochs = nil // read the cached epochs afresh
	items := make([]types.TransactWriteItem, len(t.acts))
	for i, act := range t.acts {
		it, err := act()
		if err != nil {
			return outcome{}, err
		}
		items[i] = it
	}
	token := roundToken(t.token, round)
	if token == "" {
		token = uuid.NewString() // 36 characters: DynamoDB's maximum
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(token)}
	_, err := s.db.TransactWriteItems(ctx, in)
	if err != nil && !errors.As(err, new(*types.TransactionCanceledException)) && definiteFailure(t.what, err) == nil {
		err = s.resend(ctx, in, err)
	}
	if err == nil {
		return outcome{applied: true}, nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		if ferr := definiteFailure(t.what, err); ferr != nil {
			return outcome{}, ferr
		}
		return outcome{unknown: err}, nil
	}
	var out outcome
	for i, r := range tce.CancellationReasons {
		if i < len(t.parts) && aws.ToString(r.Code) == "ConditionalCheckFailed" {
			out.failed = append(out.failed, failure{part: t.parts[i], old: r.Item})
		}
	}
	switch {
	case len(out.failed) == 0 && isTransient(err):
		return outcome{}, inventory.Busy(t.what, err)
	case len(out.failed) == 0:
		return outcome{}, fmt.Errorf("%s: %w", t.what, err)
	}
	return out, nil
}

// resend sends in again, with its ClientRequestToken, after the first send's outcome
// became unknown (cause: a timeout, a 5xx after the SDK's retries, the invocation's
// deadline), on a context detached from ctx with its own convergeTimeout. Within 10
// minutes DynamoDB answers a repeat of a token it applied with the first answer and
// applies nothing twice; while the first copy still runs it answers
// TransactionInProgressException (DynamoDB API Reference, TransactWriteItems,
// ClientRequestToken: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html;
// Developer Guide, "Idempotency":
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html).
// So a success, or a cancellation naming a failed condition, settles the outcome and
// is returned; anything else leaves it unknown: the error returned then wraps cause,
// not the repeat's error, so that definiteFailure still reads it as unknown.
func (s *store) resend(ctx context.Context, in *dynamodb.TransactWriteItemsInput, cause error) error {
	cctx, cancel := convergeContext(ctx)
	defer cancel()
	_, err := s.db.TransactWriteItems(cctx, in)
	var tce *types.TransactionCanceledException
	if err == nil || errors.As(err, &tce) && slices.ContainsFunc(tce.CancellationReasons, func(r types.CancellationReason) bool {
		return aws.ToString(r.Code) == "ConditionalCheckFailed"
	}) {
		return err
	}
	return fmt.Errorf("%w; sent again: %v", cause, err)
}

// apply sends t, a write that has no order to read back. A failed condition gives
// an error wrapping refused; other errors wrap inventory.ErrBusy when DynamoDB was
// throttled or conflicted; an outcome still unknown after resend is outcomeUnknown.
func (s *store) apply(ctx context.Context, t *txn, refused error) error {
	out, err := s.send(ctx, t)
	switch {
	case err != nil:
		return err
	case out.unknown != nil:
		return outcomeUnknown(t.what, out.unknown)
	case len(out.failed) > 0:
		return fmt.Errorf("%s: %v failed its condition: %w", t.what, out.parts(), refused)
	}
	return nil
}

// readBack reads order id after a write whose outcome is unknown (cause), on a short
// deadline of its own; mine reports whether the order shows the write applied. It
// returns outcomeUnknown when the order cannot be read or is not there.
func (s *store) readBack(ctx context.Context, what, id string, cause error, mine func(*inventory.Order) bool) (*inventory.Order, bool, error) {
	cctx, cancel := convergeContext(ctx)
	defer cancel()
	order, err := s.order(cctx, id)
	if err != nil || order == nil {
		return nil, false, outcomeUnknown(what, cause)
	}
	return order, mine(order), nil
}

// putNew is a transactional Put of rec that fails when an item with its pk exists,
// unless orReplace (a condition on the existing item) holds.
func (s *store) putNew(table string, rec any, orReplace *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode item for %s: %w", table, err)
	}
	cond := expression.AttributeNotExists(expression.Name("pk"))
	if orReplace != nil {
		cond = cond.Or(*orReplace)
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build put condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(table), Item: item,
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// update is a transactional Update of the item with key pk, returning the old item when
// its condition fails; a zero cond means no condition.
func update(table, pk string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	b := expression.NewBuilder().WithUpdate(upd)
	if cond.IsSet() {
		b = b.WithCondition(cond)
	}
	expr, err := b.Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build update of %s: %w", pk, err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: pkOf(pk),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}
