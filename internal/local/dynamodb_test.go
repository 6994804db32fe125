package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/server"
)

// startDynamoDB starts a DynamoDB server on a free port for the test and
// returns it with a client that does not retry (tests see every failure).
func startDynamoDB(t *testing.T, opts DynamoDBOptions) (*DynamoDBServer, *dynamodb.Client) {
	t.Helper()
	srv, err := StartDynamoDB(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatalf("StartDynamoDB: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	client := NewDynamoDBClient(srv.URL(), func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	return srv, client
}

// skusTable is a small table with a hash key "pk" and a GSI, shaped like
// the ones template.yaml declares.
func skusTable(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("status"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("byStatus"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("status"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	}
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}
}

func putSKU(ctx context.Context, client *dynamodb.Client, table, pk string, available string) error {
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item: map[string]types.AttributeValue{
			"pk":        &types.AttributeValueMemberS{Value: pk},
			"status":    &types.AttributeValueMemberS{Value: "ON_SALE"},
			"available": &types.AttributeValueMemberN{Value: available},
		},
	})
	return err
}

func TestDynamoDB_ServesTablesAndItemsThroughSDK(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, client := startDynamoDB(t, DynamoDBOptions{})
	if err := CreateTables(ctx, client, []*dynamodb.CreateTableInput{skusTable("SkusTable"), skusTable("OrdersTable")}); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	tests := []struct {
		name, table, pk, available string
	}{
		{"first table", "SkusTable", "cup-01", "7"},
		{"second table", "OrdersTable", "ord-1", "0"},
		{"large number", "SkusTable", "saucer-02", "9999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := putSKU(ctx, client, tt.table, tt.pk, tt.available); err != nil {
				t.Fatalf("PutItem: %v", err)
			}
			out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tt.table), Key: key(tt.pk), ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatalf("GetItem: %v", err)
			}
			got, ok := out.Item["available"].(*types.AttributeValueMemberN)
			if !ok || got.Value != tt.available {
				t.Errorf("available = %#v, want N %s", out.Item["available"], tt.available)
			}
		})
	}
}

func TestCreateTables_WrapsFailureWithTableName(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, client := startDynamoDB(t, DynamoDBOptions{})
	err := CreateTables(ctx, client, []*dynamodb.CreateTableInput{skusTable("SkusTable"), skusTable("SkusTable")})
	if err == nil {
		t.Fatal("CreateTables with a duplicate table: got nil error")
	}
	if want := "create table SkusTable: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want prefix %q", err, want)
	}
	if _, ok := errors.AsType[*types.ResourceInUseException](err); !ok {
		t.Errorf("error = %v, want a *types.ResourceInUseException inside", err)
	}
}

func TestDynamoDB_EmulatedFailureReachesClient(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv, client := startDynamoDB(t, DynamoDBOptions{})
	if err := CreateTables(ctx, client, []*dynamodb.CreateTableInput{skusTable("SkusTable")}); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	srv.Minidyn().EmulateFailure(server.FailureConditionInternalServerError)
	err := putSKU(ctx, client, "SkusTable", "cup-01", "1")
	if _, ok := errors.AsType[*types.InternalServerError](err); !ok {
		t.Fatalf("PutItem during emulated failure: err = %v, want *types.InternalServerError", err)
	}
	srv.Minidyn().EmulateFailure(server.FailureConditionNone)
	if err := putSKU(ctx, client, "SkusTable", "cup-01", "1"); err != nil {
		t.Fatalf("PutItem after clearing the failure: %v", err)
	}
}

// dropFirstPutItemResponse applies the first PutItem, then aborts the
// connection instead of answering: the write happened, the caller cannot know.
func dropFirstPutItemResponse(dropped *atomic.Bool) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.PutItem" || !dropped.CompareAndSwap(false, true) {
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(httptest.NewRecorder(), r)
			panic(http.ErrAbortHandler)
		})
	}
}

func TestDynamoDB_WrapCanDropResponseAfterApplying(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var dropped atomic.Bool
	_, client := startDynamoDB(t, DynamoDBOptions{Wrap: dropFirstPutItemResponse(&dropped)})
	if err := CreateTables(ctx, client, []*dynamodb.CreateTableInput{skusTable("SkusTable")}); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	if err := putSKU(ctx, client, "SkusTable", "cup-01", "5"); err == nil {
		t.Fatal("PutItem whose response was dropped: got nil error")
	}
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("SkusTable"), Key: key("cup-01"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if out.Item == nil {
		t.Error("item missing: the dropped PutItem should still have been applied")
	}
}

// The server applies the TransactWriteItems rules of DynamoDB that minidyn lacks.
func TestDynamoDB_EnforcesTransactWriteItemsRules(t *testing.T) {
	ctx := t.Context()
	_, client := startDynamoDB(t, DynamoDBOptions{})
	if _, err := client.CreateTable(ctx, skusTable("t")); err != nil {
		t.Fatal(err)
	}
	add := func(token string, q string) error {
		_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			ClientRequestToken: aws.String(token),
			TransactItems: []types.TransactWriteItem{{Update: &types.Update{
				TableName: aws.String("t"), Key: key("cup"), UpdateExpression: aws.String("ADD available :q"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: q}},
			}}},
		})
		return err
	}
	available := func() string {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key("cup"), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := out.Item["available"].(*types.AttributeValueMemberN)
		if n == nil {
			return ""
		}
		return n.Value
	}
	token := strings.Repeat("t", 36)
	if err := add(token+"x", "1"); err == nil || !strings.Contains(err.Error(), "ValidationException") {
		t.Errorf("37-character token: %v, want ValidationException", err)
	}
	if got := available(); got != "" {
		t.Fatalf("a refused request was applied: available %s", got)
	}
	if err := add(token, "1"); err != nil {
		t.Fatal(err)
	}
	if err := add(token, "1"); err != nil {
		t.Errorf("same token, same parameters: %v, want the first answer", err)
	}
	if got := available(); got != "1" {
		t.Errorf("available %s after a repeated token, want 1 (applied once)", got)
	}
	if err := add(token, "2"); err == nil || !strings.Contains(err.Error(), "IdempotentParameterMismatch") {
		t.Errorf("same token, other parameters: %v, want IdempotentParameterMismatchException", err)
	}
	if err := add("another-token", "1"); err != nil || available() != "2" {
		t.Errorf("a new token: %v, available %s; want applied (2)", err, available())
	}
	// At most 100 actions per transaction.
	wide := make([]types.TransactWriteItem, 101)
	for i := range wide {
		wide[i] = types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String("t"), Key: key(fmt.Sprintf("sku-%d", i)), UpdateExpression: aws.String("ADD available :q"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: "1"}},
		}}
	}
	if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: wide}); err == nil || !strings.Contains(err.Error(), "ValidationException") {
		t.Errorf("101 actions: %v, want ValidationException", err)
	}
	if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: wide[:100]}); err != nil {
		t.Errorf("100 actions: %v", err)
	}
}
