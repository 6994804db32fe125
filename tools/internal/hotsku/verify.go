package hotsku

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
)

// janitor checks each answered order against the tables (its order item and its
// RESERVE ledger entry), tallies the units the entries say each shard gave, and then
// deletes both items, so that the embedded server's tables stay small. It reads and
// deletes through a client that bypasses the model: it is the test's eye, not load.
type janitor struct {
	db     *dynamodb.Client
	tables dynamo.Tables
	ids    chan string
	done   chan struct{}
	got    checked
	err    error
}

// checked is what the janitor found.
type checked struct {
	orders   int         // orders found whole
	unbacked int         // orders missing or wrong
	shards   map[int]int // shard → units the orders' ledger entries say it gave
}

func newJanitor(db *dynamodb.Client, tables dynamo.Tables) *janitor {
	return &janitor{db: db, tables: tables, ids: make(chan string, 1<<16), done: make(chan struct{}), got: checked{shards: map[int]int{}}}
}

// verify queues an order answered 201.
func (j *janitor) verify(orderID string) { j.ids <- orderID }

// finish waits until every queued order is checked and returns the findings.
func (j *janitor) finish(ctx context.Context) (checked, error) {
	close(j.ids)
	select {
	case <-j.done:
	case <-ctx.Done():
		return checked{}, ctx.Err()
	}
	return j.got, j.err
}

// run checks queued orders in batches of 12 (24 keys: BatchGetItem takes 100, and
// BatchWriteItem 25) until the queue is closed and drained.
func (j *janitor) run(ctx context.Context) {
	defer close(j.done)
	var batch []string
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	flush := func() {
		if len(batch) > 0 && j.err == nil {
			j.err = j.check(ctx, batch)
		}
		batch = batch[:0]
	}
	for {
		select {
		case id, ok := <-j.ids:
			if !ok {
				flush()
				return
			}
			if batch = append(batch, id); len(batch) == 12 {
				flush()
			}
		case <-tick.C:
			flush()
		case <-ctx.Done():
			j.err = ctx.Err()
			return
		}
	}
}

type orderRecord struct {
	Status string `dynamodbav:"status"`
	Items  []struct {
		SKU string `dynamodbav:"skuId"`
		Qty int    `dynamodbav:"qty"`
	} `dynamodbav:"items"`
}

type ledgerRecord struct {
	Op         string         `dynamodbav:"op"`
	SKU        string         `dynamodbav:"skuId"`
	Qty        int            `dynamodbav:"qty"`
	DAvailable int            `dynamodbav:"dAvailable"`
	Shards     map[string]int `dynamodbav:"shards"`
}

func ledgerPK(orderID string) string { return orderID + "#" + string(inventory.OpReserve) + "#" + SKU }

func pk(v string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: v}}
}

// check reads the orders and ledger entries of ids, tallies them and deletes them.
func (j *janitor) check(ctx context.Context, ids []string) error {
	var orderKeys, ledgerKeys []map[string]types.AttributeValue
	for _, id := range ids {
		orderKeys = append(orderKeys, pk(id))
		ledgerKeys = append(ledgerKeys, pk(ledgerPK(id)))
	}
	found := map[string]map[string]types.AttributeValue{}
	req := map[string]types.KeysAndAttributes{
		j.tables.Orders:   {Keys: orderKeys, ConsistentRead: aws.Bool(true)},
		j.tables.StockLog: {Keys: ledgerKeys, ConsistentRead: aws.Bool(true)},
	}
	for len(req) > 0 {
		out, err := j.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return fmt.Errorf("read back orders: %w", err)
		}
		for _, items := range out.Responses {
			for _, it := range items {
				if k, ok := it["pk"].(*types.AttributeValueMemberS); ok {
					found[k.Value] = it
				}
			}
		}
		req = out.UnprocessedKeys
	}
	deletes := map[string][]types.WriteRequest{}
	for _, id := range ids {
		var o orderRecord
		var l ledgerRecord
		oi, li := found[id], found[ledgerPK(id)]
		if oi == nil || li == nil || attributevalue.UnmarshalMap(oi, &o) != nil || attributevalue.UnmarshalMap(li, &l) != nil ||
			o.Status != string(inventory.StatusPending) || len(o.Items) != 1 || o.Items[0].SKU != SKU || o.Items[0].Qty != 1 ||
			l.Op != string(inventory.OpReserve) || l.Qty != 1 || l.DAvailable != -1 || sum(l.Shards) != 1 {
			j.got.unbacked++
		} else {
			j.got.orders++
			for s, q := range l.Shards {
				n, _ := strconv.Atoi(s)
				j.got.shards[n] += q
			}
		}
		deletes[j.tables.Orders] = append(deletes[j.tables.Orders], types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: pk(id)}})
		deletes[j.tables.StockLog] = append(deletes[j.tables.StockLog], types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: pk(ledgerPK(id))}})
	}
	for len(deletes) > 0 {
		out, err := j.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: deletes})
		if err != nil {
			return fmt.Errorf("delete checked orders: %w", err)
		}
		deletes = out.UnprocessedItems
	}
	return nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// check fills the checks of r from the janitor's findings, the tables as they are
// left (what the janitor did not delete was written for refused orders) and the
// answers.
func (r *Result) check(ctx context.Context, db *dynamodb.Client, tables dynamo.Tables, got checked, outcomes []outcome) error {
	r.Unbacked = got.unbacked + (r.Orders - got.orders - got.unbacked)
	orders, err := booktest.Scan(ctx, db, tables.Orders)
	if err != nil {
		return err
	}
	for _, it := range orders {
		if it["kind"] == "ORDER" {
			r.Orphans++
		}
	}
	ledger, err := booktest.Scan(ctx, db, tables.StockLog)
	if err != nil {
		return err
	}
	for _, it := range ledger {
		if it["op"] == string(inventory.OpReserve) {
			r.Orphans++
		}
	}
	skus, err := booktest.Scan(ctx, db, tables.SKUs)
	if err != nil {
		return err
	}
	onHand := 0
	for _, it := range skus {
		if it["kind"] != "SHARD" || it["skuId"] != SKU {
			continue
		}
		n := func(k string) int { f, _ := it[k].(float64); return int(f) }
		shard, available, reserved := n("shard"), n("available"), n("reserved")
		onHand += n("onHand")
		if available < 0 {
			r.Oversold -= available
		}
		if available+reserved != n("onHand") {
			return fmt.Errorf("shard %d: available %d + reserved %d != onHand %d", shard, available, reserved, n("onHand"))
		}
		switch d := reserved - got.shards[shard]; {
		case d > 0:
			r.Leaked += d
		case d < 0:
			r.Oversold -= d
		}
	}
	if onHand != r.Stock {
		return fmt.Errorf("shards hold %d units on hand, the SKU was stocked with %d", onHand, r.Stock)
	}
	r.Oversold += max(0, r.Orders-r.Stock)
	r.FalseStockOut = falseStockOuts(outcomes, r.Stock)
	return nil
}

// falseStockOuts counts the STOCK_OUT answers given while the shards together surely
// held the unit (booktest.FalseStockOuts): stock only falls during a run, and a unit
// can only have been taken by an order that started before the answer and succeeded.
func falseStockOuts(outcomes []outcome, stock int) int {
	var takes []time.Time
	var stockOuts []booktest.Window
	for _, o := range outcomes {
		switch {
		case o.status == http.StatusCreated:
			takes = append(takes, o.start)
		case o.code == "STOCK_OUT":
			stockOuts = append(stockOuts, booktest.Window{Start: o.start, End: o.end})
		}
	}
	return booktest.FalseStockOuts(stock, stockOuts, takes, nil)
}
