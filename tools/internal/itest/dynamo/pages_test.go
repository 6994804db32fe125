package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// DynamoDB answers a Query or Scan 1 MB at a time, then a LastEvaluatedKey (Developer
// Guide, "Paginating table query results in DynamoDB"). The store's reads of whole
// tables and of a shard's ledger follow every page: with every item of the skus and
// stock_log tables padded to 300 KB (an attribute the store ignores), reconcile's
// stock Scan, its ledger Scan and LedgerByShard Query, and the merchant's SKU list
// each take several pages, and each still answers every SKU and every entry.
func TestStoreReads_FollowEveryPageOfOneMegabyte(t *testing.T) {
	ctx := context.Background()
	var skus []inventory.NewSKU
	for i := range 3 {
		skus = append(skus, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: fmt.Sprint("cup", i), Stock: 100, Shards: 1})
	}
	e := newEnv(t, dynamo.Options{}, nil, skus...)
	for i := range 6 {
		e.reserve(t, fmt.Sprint("u", i), inventory.Line{SKU: "cup0", Qty: 1})
	}
	nSKUItems, nLedger := e.pad(t, e.Tables.SKUs), e.pad(t, e.Tables.StockLog)
	if nSKUItems*300<<10 <= 1<<20 || nLedger*300<<10 <= 1<<20 {
		t.Fatalf("%d skus items, %d ledger entries: not over 1 MB each", nSKUItems, nLedger)
	}

	states, _, err := e.store.Stock(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range states {
		got = append(got, fmt.Sprintf("%s:%d/%d", s.SKU, len(s.Shards), s.ShardCount))
	}
	if want := "[cup0:1/1 cup1:1/1 cup2:1/1]"; fmt.Sprint(got) != want {
		t.Errorf("Stock: SKU:shards read/declared %v, want %s", got, want)
	}
	list, next, _, err := e.store.SKUs(ctx, "")
	if err != nil || len(list) != 3 || next != "" {
		t.Errorf("SKUs: %d SKUs, next %q, %v; want all 3 on one list page", len(list), next, err)
	}
	if n := count(t, e.store.LedgerAll(ctx, nil)); n != nLedger {
		t.Errorf("LedgerAll: %d entries, want the table's %d", n, nLedger)
	}
	since := e.store.LedgerSince(ctx, map[string][]int{"cup0": {0}}, time.UnixMilli(0), time.Now().Add(time.Hour), nil)
	if n := count(t, since); n != 7 { // the initial ADJUST and 6 RESERVEs
		t.Errorf("LedgerSince cup0 shard 0: %d entries, want 7", n)
	}
}

// pad sets a 300 KB attribute pad on every item of table and returns how many there
// are.
func (e *env) pad(t *testing.T, table string) int {
	t.Helper()
	items := e.Scan(t, table)
	for _, it := range items {
		if _, err := e.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: it["pk"].(string)}},
			UpdateExpression:          aws.String("SET #pad = :pad"),
			ExpressionAttributeNames:  map[string]string{"#pad": "pad"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pad": &types.AttributeValueMemberS{Value: strings.Repeat("x", 300<<10)}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	return len(items)
}

// count counts the entries of seq, failing t on an error.
func count(t *testing.T, seq func(func(inventory.LedgerEntry, error) bool)) int {
	t.Helper()
	n := 0
	for _, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}
