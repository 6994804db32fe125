package local_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/local"
)

// benchStack starts the local stack with a SKU that cannot sell out during a benchmark
// and counts the DynamoDB requests its client sends (retries included).
func benchStack(b *testing.B) (*local.Stack, *atomic.Int64) {
	b.Helper()
	var sent atomic.Int64
	stack, err := local.Start(context.Background(), local.StackConfig{Template: "../../template.yaml", DynamoDBOptions: []func(*dynamodb.Options){local.CountRequests(func(string) { sent.Add(1) })}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stack.Close() })
	if err := stack.Seed(context.Background(), strings.NewReader(`[{"skuId":"cup-01","name":"cup","price":39900,"stock":100000000}]`)); err != nil {
		b.Fatal(err)
	}
	return stack, &sent
}

// BenchmarkCreateOrder_LocalHTTP places one-line orders through the whole local path:
// HTTP → gateway → API Gateway event JSON → createOrder handler → DynamoDB API.
// ddb-requests/order is the number of DynamoDB requests per order.
func BenchmarkCreateOrder_LocalHTTP(b *testing.B) {
	stack, sent := benchStack(b)
	api := httptest.NewServer(stack.API)
	defer api.Close()
	client := api.Client()
	body := `{"items":[{"skuId":"cup-01","qty":1}]}`
	// One order to warm the SKU cache, as a warm Lambda container has.
	post := func(user string) {
		req, _ := http.NewRequest(http.MethodPost, api.URL+"/orders", strings.NewReader(body))
		req.Header.Set("X-User-Id", user)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	post("warm-up")
	sent.Store(0)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		post("buyer-" + strconv.Itoa(i))
	}
	b.ReportMetric(float64(sent.Load())/float64(b.N), "ddb-requests/order")
}

// BenchmarkTransactWriteItems_Bare sends the same three writes a one-line order makes
// (shard update with its condition, order put, ledger put) straight through the SDK to
// the same embedded server: the floor under BenchmarkCreateOrder_LocalHTTP.
func BenchmarkTransactWriteItems_Bare(b *testing.B) {
	stack, _ := benchStack(b)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("bare%028d", i)
		_, err := stack.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(stack.Tables.Orders), Item: map[string]types.AttributeValue{"pk": s(id), "kind": s("ORDER"), "status": s("PENDING")}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			{Update: &types.Update{TableName: aws.String(stack.Tables.SKUs), Key: map[string]types.AttributeValue{"pk": s("cup-01#shard#0")},
				UpdateExpression: aws.String("SET available = available - :q"), ConditionExpression: aws.String("available >= :q"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":q": n(1)}}},
			{Put: &types.Put{TableName: aws.String(stack.Tables.StockLog), Item: map[string]types.AttributeValue{"pk": s(id + "#RESERVE#cup-01"), "qty": n(1)}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
}
