package local

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// A transaction once received is applied whole or not at all, whatever becomes of the
// client that sent it, as on DynamoDB (Developer Guide, "Amazon DynamoDB Transactions:
// How it works", Isolation levels for DynamoDB transactions): 8 buyers each send 30
// orders, each one TransactWriteItems of 52 actions that puts the order, counts it on
// a shared counter and takes a unit from each of 50 stock items of 100 units (the
// conditions refuse the 101st order onwards, after the first two actions were written,
// so refusals roll back). Three requests in four have their context cancelled after a
// random moment of up to 30 ms (about what 8 such transactions queued one behind the
// other take here), so some are cut before they are sent, some while they wait for
// the transactor, some while it runs them, some after. The clients are the SDK's over
// TCP (a cancel closes the connection) and in process (the handler runs under the
// caller's own context). Afterwards the books must add up exactly: every stock item
// lost one unit per order item, the counter counts every order item, every applied
// answer has its order and every refused one has none. A transactor that stops at
// its request's cancelled context between two actions fails it on every run.
func TestDynamoDB_CancelledTransactionsApplyWholeOrNotAtAll(t *testing.T) {
	srv, tcp := startDynamoDB(t, DynamoDBOptions{})
	inproc := NewDynamoDBClient(srv.URL(), func(o *dynamodb.Options) {
		o.RetryMaxAttempts, o.HTTPClient = 1, inProcess{srv.http.h.ServeHTTP}
	})
	ctx := t.Context()
	if _, err := tcp.CreateTable(ctx, skusTable("t")); err != nil {
		t.Fatal(err)
	}
	const stocks, units, buyers, rounds = 50, 100, 8, 30
	for s := range stocks {
		if err := putSKU(ctx, tcp, "t", fmt.Sprint("stock-", s), strconv.Itoa(units)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	answered := map[string]bool{} // order id → applied (true) or refused (false)
	testkit.Parallel(buyers, func(g int) {
		client := []*dynamodb.Client{tcp, inproc}[g%2]
		for i := range rounds {
			id := fmt.Sprintf("order-%d-%d", g, i)
			applied, err := cancelledOrder(ctx, client, id, stocks)
			if err != nil {
				t.Errorf("%s: %v", id, err)
				return
			}
			if applied != nil {
				mu.Lock()
				answered[id] = *applied
				mu.Unlock()
			}
		}
	})
	checkOrderBooks(t, tcp, stocks, units, answered)
}

// cancelledOrder sends the order transaction of id, taking a unit of each of the
// stock items, under a context cancelled after a random moment (or not at all, one
// time in four). It returns whether the order was applied, nil when the answer was
// lost to the cancel, and an error for any other answer.
func cancelledOrder(ctx context.Context, client *dynamodb.Client, id string, stocks int) (*bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if rand.N(4) > 0 {
		time.AfterFunc(rand.N(30*time.Millisecond), cancel)
	}
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("t"), ConditionExpression: aws.String("attribute_not_exists(pk)"),
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}, "order": n("1")}}},
		{Update: &types.Update{TableName: aws.String("t"), Key: key("orders"), UpdateExpression: aws.String("ADD n :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")}}},
	}
	for s := range stocks {
		items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: aws.String("t"), Key: key(fmt.Sprint("stock-", s)),
			UpdateExpression: aws.String("ADD available :minus"), ConditionExpression: aws.String("available >= :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1"), ":minus": n("-1")}}})
	}
	_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	applied := err == nil
	switch _, refused := errors.AsType[*types.TransactionCanceledException](err); {
	case err == nil, refused:
		return &applied, nil
	case errors.Is(err, context.Canceled):
		return nil, nil
	}
	return nil, err
}

// checkOrderBooks reads every item back and checks the books of the orders: each
// stock item lost exactly one unit per order item, the counter counts every order
// item, and the answers agree with the order items.
func checkOrderBooks(t *testing.T, client *dynamodb.Client, stocks, units int, answered map[string]bool) {
	t.Helper()
	out, err := client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	num := func(it map[string]types.AttributeValue, name string) int {
		v, _ := it[name].(*types.AttributeValueMemberN)
		if v == nil {
			return 0
		}
		n, _ := strconv.Atoi(v.Value)
		return n
	}
	orders, available, counted := map[string]bool{}, map[string]int{}, 0
	for _, it := range out.Items {
		switch pk := it["pk"].(*types.AttributeValueMemberS).Value; {
		case it["order"] != nil:
			orders[pk] = true
		case pk == "orders":
			counted = num(it, "n")
		default:
			available[pk] = num(it, "available")
		}
	}
	if counted != len(orders) || len(orders) > units {
		t.Errorf("counter says %d orders, %d order items; want equal, at most %d", counted, len(orders), units)
	}
	for s := range stocks {
		if k := fmt.Sprint("stock-", s); units-available[k] != len(orders) {
			t.Errorf("%s: available %d with %d orders, want %d", k, available[k], len(orders), units-len(orders))
		}
	}
	for id, applied := range answered {
		if applied != orders[id] {
			t.Errorf("%s answered applied=%v, order item present=%v", id, applied, orders[id])
		}
	}
	t.Logf("%d orders; %d answers applied or refused, the rest lost to a cancel", len(orders), len(answered))
}
