package hotsku

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// conditional is a container that reserves the seeds' way: a conditional UpdateItem
// takes the unit from one shard (available >= q, on sale, at the price), then one
// TransactWriteItems writes the order and its RESERVE ledger entry; if that fails the
// unit is given back with a second UpdateItem. Between the two writes the unit is
// reserved with no order holding it: a crash there strands it (counted as Leaked).
// Items are written in the shapes the dynamo package uses, so the same checks read
// both strategies' orders. One order at a time, like a Lambda container.
type conditional struct {
	db     *dynamodb.Client
	tables dynamo.Tables
	queue  *closeq.Queue
	ttl    time.Duration // how long the SKU record read is reused
	read   time.Time     // when it was read
	shards int
	price  int64
	hint   []int // last seen available per shard, -1 = unknown
}

func newConditional(db *dynamodb.Client, tables dynamo.Tables, queue *closeq.Queue, ttl time.Duration) *conditional {
	return &conditional{db: db, tables: tables, queue: queue, ttl: ttl}
}

// maxTries bounds the shards one order tries, as dynamo.Options.MaxRounds does.
const maxTries = 12

func (c *conditional) order(ctx context.Context, user string) outcome {
	o := outcome{start: time.Now()}
	o.status, o.code, o.orderID = c.place(ctx, user)
	o.end = time.Now()
	return o
}

// place answers like createOrder: 201 with the order id, 409 STOCK_OUT, 503 BUSY, or
// 500 for anything else.
func (c *conditional) place(ctx context.Context, user string) (int, string, string) {
	answer := func(err error) (int, string, string) {
		switch {
		case errors.Is(err, inventory.ErrStockOut):
			return http.StatusConflict, "STOCK_OUT", ""
		case errors.Is(err, inventory.ErrBusy) || transient(err):
			return http.StatusServiceUnavailable, "BUSY", ""
		default:
			return http.StatusInternalServerError, "INTERNAL", ""
		}
	}
	if c.shards == 0 || time.Since(c.read) > c.ttl {
		if err := c.readSKU(ctx); err != nil {
			return answer(err)
		}
	}
	id, err := inventory.NewOrderID()
	if err != nil {
		return answer(err)
	}
	created := time.Now().UTC()
	sent := c.schedule(ctx, id, created)
	defer func() { <-sent }()
	shard, err := c.take(ctx, 1)
	if err != nil {
		return answer(err)
	}
	if err := c.record(ctx, id, user, shard, 1, created); err != nil {
		c.giveBack(ctx, shard, 1) // a failure here strands the unit: the check counts it
		return answer(err)
	}
	return http.StatusCreated, "", id
}

// schedule sends the order's close message while the reservation runs, as createOrder
// does, so that both strategies pay the SQS round trip the same way; the returned
// channel is closed once the send is over.
func (c *conditional) schedule(ctx context.Context, id string, created time.Time) <-chan struct{} {
	done := make(chan struct{})
	if c.queue == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		c.queue.Schedule(sctx, closeq.Message{OrderID: id, ExpiresAt: created.Add(15 * time.Minute)})
	}()
	return done
}

func (c *conditional) warm(ctx context.Context) error { return c.readSKU(ctx) }

// readSKU reads the SKU record (shard count, price), as a container's cache would.
func (c *conditional) readSKU(ctx context.Context) error {
	out, err := c.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.tables.SKUs), Key: pk(SKU), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return err
	}
	var rec struct {
		Shards int   `dynamodbav:"shards"`
		Price  int64 `dynamodbav:"price"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil || rec.Shards < 1 {
		return fmt.Errorf("read SKU %s: %v", SKU, err)
	}
	if len(c.hint) != rec.Shards {
		c.hint = make([]int, rec.Shards)
		for i := range c.hint {
			c.hint[i] = -1
		}
	}
	c.shards, c.price, c.read = rec.Shards, rec.Price, time.Now()
	return nil
}

func shardPK(n int) string { return SKU + "#shard#" + strconv.Itoa(n) }

// take reserves q units on one shard that the hints say can cover them, picked at
// random; when none can, it reads every shard (strongly consistent) and answers
// ErrStockOut only if they together cannot cover q.
func (c *conditional) take(ctx context.Context, q int) (int, error) {
	avail := expression.Name("available")
	cond := avail.GreaterThanEqual(expression.Value(q)).
		And(expression.Name("onSale").Equal(expression.Value(true))).
		And(expression.Name("price").Equal(expression.Value(c.price)))
	upd := expression.Set(avail, avail.Minus(expression.Value(q))).Add(expression.Name("reserved"), expression.Value(q))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return 0, err
	}
	for range maxTries {
		var able []int
		for n, h := range c.hint {
			if h < 0 || h >= q {
				able = append(able, n)
			}
		}
		if len(able) == 0 {
			total, err := c.readShards(ctx)
			if err != nil {
				return 0, err
			}
			if total < q {
				return 0, inventory.ErrStockOut
			}
			continue
		}
		n := able[rand.IntN(len(able))]
		out, err := c.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(c.tables.SKUs), Key: pk(shardPK(n)),
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValues:                        types.ReturnValueUpdatedNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			c.hint[n] = availableOf(out.Attributes)
			return n, nil
		case errors.As(err, &ccf):
			c.hint[n] = availableOf(ccf.Item)
		default:
			return 0, err
		}
	}
	return 0, inventory.ErrBusy
}

func availableOf(item map[string]types.AttributeValue) int {
	var rec struct {
		Available int `dynamodbav:"available"`
	}
	attributevalue.UnmarshalMap(item, &rec)
	return rec.Available
}

// readShards reads every shard with one strongly consistent BatchGetItem, refreshes
// the hints and returns the units available in all.
func (c *conditional) readShards(ctx context.Context) (int, error) {
	keys := make([]map[string]types.AttributeValue, c.shards)
	for n := range keys {
		keys[n] = pk(shardPK(n))
	}
	req := map[string]types.KeysAndAttributes{c.tables.SKUs: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	total := 0
	for len(req) > 0 {
		out, err := c.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return 0, err
		}
		for _, it := range out.Responses[c.tables.SKUs] {
			var rec struct {
				Shard     int `dynamodbav:"shard"`
				Available int `dynamodbav:"available"`
			}
			if attributevalue.UnmarshalMap(it, &rec) == nil && rec.Shard >= 0 && rec.Shard < c.shards {
				c.hint[rec.Shard] = rec.Available
				total += rec.Available
			}
		}
		req = out.UnprocessedKeys
	}
	return total, nil
}

// record writes the order and its RESERVE ledger entry, each only if new, in one
// transaction (ClientRequestToken = order id, so the SDK's retries apply it once).
func (c *conditional) record(ctx context.Context, id, user string, shard, q int, created time.Time) error {
	shards := map[string]int{strconv.Itoa(shard): q}
	order := map[string]any{
		"pk": id, "kind": "ORDER", "userId": user, "status": string(inventory.StatusPending), "currency": inventory.Currency,
		"items":     []map[string]any{{"skuId": SKU, "qty": q, "unitPrice": c.price, "shards": shards}},
		"amount":    int64(q) * c.price,
		"createdAt": created.Format(time.RFC3339Nano), "expiresAt": created.Add(15 * time.Minute).Format(time.RFC3339Nano),
		"pendingBucket": "P" + strconv.Itoa(rand.IntN(dynamo.PendingBuckets)), "pendingExpiresAt": created.Add(15 * time.Minute).UnixMilli(),
	}
	entry := map[string]any{
		"pk": ledgerPK(id), "ref": id, "op": string(inventory.OpReserve), "skuId": SKU, "qty": q, "dAvailable": -q, "dOnHand": 0,
		"shards": shards, "at": created.UnixMilli(), "ledgerShard": SKU + "#" + strconv.Itoa(shard),
	}
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("pk"))).Build()
	if err != nil {
		return err
	}
	var items []types.TransactWriteItem
	for _, put := range []struct {
		table string
		item  map[string]any
	}{{c.tables.Orders, order}, {c.tables.StockLog, entry}} {
		av, err := attributevalue.MarshalMap(put.item)
		if err != nil {
			return err
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(put.table), Item: av, ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
		}})
	}
	_, err = c.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(id)})
	if ownRetry(err) {
		return nil // an earlier attempt whose answer was lost wrote both
	}
	return err
}

// ownRetry reports a cancellation of record's transaction because its order item
// exists already: the order id is new, so only an earlier attempt of this same call
// (an SDK retry after a lost answer) can have written it, with its ledger entry.
func ownRetry(err error) bool {
	var tce *types.TransactionCanceledException
	return errors.As(err, &tce) && len(tce.CancellationReasons) > 0 &&
		aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed"
}

// giveBack returns q units to a shard (reserved >= q).
func (c *conditional) giveBack(ctx context.Context, shard, q int) error {
	reserved := expression.Name("reserved")
	expr, err := expression.NewBuilder().
		WithCondition(reserved.GreaterThanEqual(expression.Value(q))).
		WithUpdate(expression.Set(reserved, reserved.Minus(expression.Value(q))).Add(expression.Name("available"), expression.Value(q))).
		Build()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err = c.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(c.tables.SKUs), Key: pk(shardPK(shard)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	return err
}

// transient reports an answer that means "nothing applied, try later": throttling or
// a transaction conflict, as DynamoDB names them (API Reference, Common Errors and
// TransactWriteItems).
func transient(err error) bool {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "None", "", "TransactionConflict", "ThrottlingError":
			default:
				return false
			}
		}
		return true
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded", "TransactionConflictException":
		return true
	}
	return false
}
