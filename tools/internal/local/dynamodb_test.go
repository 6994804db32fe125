package local

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/server"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// closeAtEnd closes srv when the test ends and fails the test if that fails.
func closeAtEnd(t *testing.T, srv io.Closer) {
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// startDynamoDB starts a DynamoDB server on a free port for the test and
// returns it with a client that does not retry (tests see every failure).
func startDynamoDB(t *testing.T, opts DynamoDBOptions) (*DynamoDBServer, *dynamodb.Client) {
	t.Helper()
	srv, err := StartDynamoDB(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatalf("StartDynamoDB: %v", err)
	}
	closeAtEnd(t, srv)
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

// touchedItems returns the items a failing transaction names, read strongly consistent,
// and the items the byStatus index lists under status "ON_SALE".
func touchedItems(t *testing.T, client *dynamodb.Client, keys []string) (map[string]string, []string) {
	t.Helper()
	items := map[string]string{}
	for _, k := range keys {
		out, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key(k), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		items[k] = fmt.Sprint(out.Item["available"], out.Item["status"], len(out.Item))
	}
	q, err := client.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String("t"), IndexName: aws.String("byStatus"),
		KeyConditionExpression:    aws.String("#s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "ON_SALE"}},
	})
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	var listed []string
	for _, it := range q.Items {
		listed = append(listed, it["pk"].(*types.AttributeValueMemberS).Value)
	}
	slices.Sort(listed)
	return items, listed
}

// A transaction whose last condition fails leaves every item it touched (updated,
// put, deleted, checked) exactly as it was, in the table and in its index, and no
// other request ever sees it half applied, while other transactions and single-item
// writes run at the same time.
func TestDynamoDB_FailedTransactionLeavesTouchedItemsAsTheyWere(t *testing.T) {
	eachDynamoDB(t, failedTransactionLeavesTouchedItemsAsTheyWere)
}

func failedTransactionLeavesTouchedItemsAsTheyWere(t *testing.T, impl string, client *dynamodb.Client) {
	ctx := t.Context()
	for _, k := range []string{"upd-1", "upd-2", "del", "check"} {
		if err := putSKU(ctx, client, "t", k, "5"); err != nil {
			t.Fatal(err)
		}
	}
	touched := []string{"upd-1", "upd-2", "new", "del", "check", "absent"}
	wantItems, wantListed := touchedItems(t, client, touched)
	n := func(v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: v}}
	}
	upd := func(k string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: aws.String("t"), Key: key(k),
			UpdateExpression: aws.String("SET available = available - :q, #s = :off"), ConditionExpression: aws.String("available >= :q"),
			ExpressionAttributeNames: map[string]string{"#s": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":q": &types.AttributeValueMemberN{Value: "1"}, ":off": &types.AttributeValueMemberS{Value: "OFF_SALE"}},
		}}
	}
	failing := []types.TransactWriteItem{
		upd("upd-1"), upd("upd-2"),
		{Put: &types.Put{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "new"}, "status": &types.AttributeValueMemberS{Value: "ON_SALE"}}}},
		{Delete: &types.Delete{TableName: aws.String("t"), Key: key("del")}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String("t"), Key: key("check"), ConditionExpression: aws.String("attribute_exists(pk)")}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String("t"), Key: key("absent"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{TableName: aws.String("t"), Key: key("check-fails"), UpdateExpression: aws.String("ADD available :q"),
			ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: n("1"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}
	rounds := 50
	if impl == moto {
		// moto_server answers one request at a time and slowly (most of this test's time
		// was moto's 50 rounds): 15 rounds still interleave 30 failing transactions with
		// 60 successful writes and 30 reads of every touched item, for the same checks.
		rounds = 15
	}
	var cancelled, added atomic.Int64
	testkit.Parallel(8, func(g int) {
		for range rounds {
			switch g % 4 {
			case 0: // the failing transaction
				_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: failing})
				tce, ok := errors.AsType[*types.TransactionCanceledException](err)
				if !ok || len(tce.CancellationReasons) != len(failing) || aws.ToString(tce.CancellationReasons[len(failing)-1].Code) != "ConditionalCheckFailed" ||
					aws.ToString(tce.CancellationReasons[0].Code) != "None" {
					t.Errorf("failing transaction: %v", err)
					return
				}
				cancelled.Add(1)
			case 1: // a transaction that succeeds, on other items
				_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: aws.String("t"), Key: key(fmt.Sprint("other-", g)), UpdateExpression: aws.String("ADD available :q"), ExpressionAttributeValues: n("1")}},
					{ConditionCheck: &types.ConditionCheck{TableName: aws.String("t"), Key: key("absent-too"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
				}})
				if err != nil {
					t.Error(err)
					return
				}
				added.Add(1)
			case 2: // single-item writes
				if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key(fmt.Sprint("other-", g)),
					UpdateExpression: aws.String("ADD available :q"), ExpressionAttributeValues: n("1")}); err != nil {
					t.Error(err)
					return
				}
				added.Add(1)
			case 3: // readers never see a half-applied transaction
				items, listed := touchedItems(t, client, touched)
				if fmt.Sprint(items) != fmt.Sprint(wantItems) || !slices.Equal(listed, wantListed) {
					t.Errorf("mid-run read: items %v listed %v, want %v %v", items, listed, wantItems, wantListed)
					return
				}
			}
		}
	})
	if got := cancelled.Load(); got != int64(2*rounds) {
		t.Errorf("%d failing transactions cancelled, want %d", got, 2*rounds)
	}
	items, listed := touchedItems(t, client, touched)
	if fmt.Sprint(items) != fmt.Sprint(wantItems) || !slices.Equal(listed, wantListed) {
		t.Errorf("after: items %v listed %v, want %v %v", items, listed, wantItems, wantListed)
	}
	var sum int
	for _, g := range []int{1, 2, 5, 6} {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key(fmt.Sprint("other-", g)), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(out.Item["available"].(*types.AttributeValueMemberN).Value)
		sum += v
	}
	if int64(sum) != added.Load() || sum != 4*rounds {
		t.Errorf("other items counted %d, want %d writes applied once each", sum, 4*rounds)
	}
	for _, k := range []string{"absent", "absent-too", "check-fails", "new"} {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key(k), ConsistentRead: aws.Bool(true)})
		if err != nil || out.Item != nil {
			t.Errorf("%s: %v %v, want no item", k, out.Item, err)
		}
	}
}

// Every answer, success or error, carries the CRC32 of its body, as DynamoDB's do.
func TestDynamoDB_AnswersCarryTheirCRC32(t *testing.T) {
	t.Parallel()
	srv, client := startDynamoDB(t, DynamoDBOptions{})
	if _, err := client.CreateTable(t.Context(), skusTable("t")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ op, body string }{
		{"DescribeTable", `{"TableName":"t"}`},
		{"GetItem", `{"TableName":"missing","Key":{"pk":{"S":"a"}}}`},
		{"TransactWriteItems", `{"TransactItems":[{"Update":{"TableName":"t","Key":{"pk":{"S":"a"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}]}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(tt.body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+tt.op)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, want := resp.Header.Get("X-Amz-Crc32"), strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10); got != want {
			t.Errorf("%s: X-Amz-Crc32 %q, want %q for %s", tt.op, got, want, body)
		}
	}
}
