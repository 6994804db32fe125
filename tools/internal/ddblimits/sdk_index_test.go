package ddblimits_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// newIndexedClient starts minidyn with table "E" (key pk) and its index ByBucket
// (hash bucket, range at, ALL), and returns a single-attempt client through a model
// with cfg.
func newIndexedClient(t *testing.T, cfg ddblimits.Config) (*dynamodb.Client, *ddblimits.Model) {
	t.Helper()
	srv, err := local.StartDynamoDB(context.Background(), "127.0.0.1:0", local.DynamoDBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	s := func(n string) *string { return aws.String(n) }
	tables := []*dynamodb.CreateTableInput{{
		TableName: s("E"),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: s("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: s("bucket"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: s("at"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema:   []types.KeySchemaElement{{AttributeName: s("pk"), KeyType: types.KeyTypeHash}},
		BillingMode: types.BillingModePayPerRequest,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  s("ByBucket"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: s("bucket"), KeyType: types.KeyTypeHash}, {AttributeName: s("at"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	}}
	if err := local.CreateTables(context.Background(), local.NewDynamoDBClient(srv.URL()), tables); err != nil {
		t.Fatal(err)
	}
	cfg.Keys, cfg.Indexes = ddblimits.KeysOf(tables), ddblimits.IndexesOf(tables)
	m := ddblimits.New(cfg)
	return local.NewDynamoDBClient(srv.URL(), dynamo.ClientOptions, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }, m.ClientOptions), m
}

func entry(pk, bucket, at string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "bucket": &types.AttributeValueMemberS{Value: bucket},
		"at": &types.AttributeValueMemberN{Value: at},
	}
}

// TestModel_SDKIndexThrottlesTheBaseWrite: an index partition with room for one entry
// takes the first write and throttles the base-table write of the second, to another
// item, as DynamoDB does when an index cannot keep up: a ThrottlingException naming
// IndexWriteKeyRangeThroughputExceeded and the index's ARN for a PutItem, a
// ThrottlingError reason for a transaction. Nothing refused is written; the meter
// of each call's context counts its base and index units.
func TestModel_SDKIndexThrottlesTheBaseWrite(t *testing.T) {
	// 10 units a second with 100 ms of burst: one entry, then nothing for 100 ms.
	db, m := newIndexedClient(t, ddblimits.Config{RoundTrip: time.Millisecond, WriteUnits: 10, Burst: 100 * time.Millisecond})
	var meter ddblimits.Meter
	ctx := ddblimits.WithMeter(context.Background(), &meter)
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("E"), Item: entry("a", "H#0", "1")}); err != nil {
		t.Fatalf("first entry: %v", err)
	}
	if meter.WriteUnits() != 2 || meter.Requests() != 1 {
		t.Errorf("the first put metered %.1f write units in %d requests, want 2 (item and index entry) in 1", meter.WriteUnits(), meter.Requests())
	}
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("E"), Item: entry("b", "H#0", "2")})
	var te *types.ThrottlingException
	if !errors.As(err, &te) || len(te.ThrottlingReasons) != 1 ||
		aws.ToString(te.ThrottlingReasons[0].Reason) != "IndexWriteKeyRangeThroughputExceeded" ||
		!strings.HasSuffix(aws.ToString(te.ThrottlingReasons[0].Resource), "table/E/index/ByBucket") {
		t.Fatalf("second entry on the same index key: %v, want an index throttle naming the index", err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("E"), Item: entry("c", "H#1", "3")}},
		{Put: &types.Put{TableName: aws.String("E"), Item: entry("d", "H#0", "4")}},
	}})
	if got := reasons(err); strings.Join(got, ",") != "None,ThrottlingError" {
		t.Fatalf("a transaction with an entry on the busy key: %v (reasons %v), want [None ThrottlingError]", err, got)
	}
	// Another index key takes writes.
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("E"), Item: entry("e", "H#2", "5")}); err != nil {
		t.Fatalf("an entry on another key: %v", err)
	}
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("E")})
	if err != nil || out.Count != 2 {
		t.Fatalf("the table holds %d items (%v), want 2: nothing refused was written", out.Count, err)
	}
	if got := m.Throttled(); got["index E.ByBucket H#0"] != 2 || len(got) != 1 {
		t.Errorf("throttled %v, want 2 on the index key H#0", got)
	}
	if meter.WriteUnits() != 4 || meter.Throttles() != 2 || meter.Requests() != 4 {
		t.Errorf("meter: %.1f write units, %d throttles, %d requests; want 4, 2, 4", meter.WriteUnits(), meter.Throttles(), meter.Requests())
	}
	// Per operation: the puts' items and index entries, the refused transaction nothing
	// (the model refused it before the server).
	if put, txn := meter.OperationUnits(opIndex(t, "PutItem")), meter.OperationUnits(opIndex(t, "TransactWriteItems")); put != 4 || txn != 0 {
		t.Errorf("meter by operation: PutItem %.1f, TransactWriteItems %.1f write units; want 4 and 0", put, txn)
	}
	// A query of the index reads what it answers, eventually consistent: two small
	// entries are half a unit.
	var q ddblimits.Meter
	res, err := db.Query(ddblimits.WithMeter(context.Background(), &q), &dynamodb.QueryInput{
		TableName: aws.String("E"), IndexName: aws.String("ByBucket"), KeyConditionExpression: aws.String("#b = :b"),
		ExpressionAttributeNames:  map[string]string{"#b": "bucket"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: "H#0"}},
	})
	if err != nil || res.Count != 1 || q.ReadUnits() != 0.5 || q.OperationUnits(opIndex(t, "Query")) != 0.5 {
		t.Errorf("query: %v, %d items, %.2f read units (%.2f as Query); want 1 item, 0.5 units", err, res.Count, q.ReadUnits(), q.OperationUnits(opIndex(t, "Query")))
	}
}

// opIndex is op's index in ddblimits.MeteredOperations.
func opIndex(t *testing.T, op string) int {
	t.Helper()
	i := slices.Index(ddblimits.MeteredOperations[:], op)
	if i < 0 {
		t.Fatalf("%s is not metered apart", op)
	}
	return i
}

// An item grown by an update costs what it has grown to on its next write (DynamoDB
// charges a write 1 unit per KB of the item, "DynamoDB read and write capacity"), and
// a nested path's value is not taken for its whole attribute: the model learns an
// item's size from its updates, not only from its Put.
func TestModel_SDKUpdatesGrowTheItemsNextWrites(t *testing.T) {
	db, _ := newIndexedClient(t, ddblimits.Config{RoundTrip: time.Millisecond})
	ctx := context.Background()
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("E"), Item: entry("a", "H#0", "1")}); err != nil {
		t.Fatal(err)
	}
	update := func(expr string, values map[string]types.AttributeValue) float64 {
		t.Helper()
		var meter ddblimits.Meter
		if _, err := db.UpdateItem(ddblimits.WithMeter(ctx, &meter), &dynamodb.UpdateItemInput{
			TableName: aws.String("E"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}},
			UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
		}); err != nil {
			t.Fatal(err)
		}
		return meter.WriteUnits()
	}
	big := map[string]types.AttributeValue{":v": &types.AttributeValueMemberL{Value: []types.AttributeValue{
		&types.AttributeValueMemberS{Value: strings.Repeat("x", 2500)}, &types.AttributeValueMemberN{Value: "1"}}}}
	// The item under 1 KB before, its entry (ALL) about 2.6 KB after.
	if got := update("SET refunds = :v", big); got != 1+3 {
		t.Errorf("the update that grows the item: %.0f write units, want 1 for the item (its size before) and 3 for its entry", got)
	}
	// Now about 2.6 KB: 3 units for the item, 3 for its entry.
	small := map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "2"}}
	if got := update("SET n = :n", small); got != 3+3 {
		t.Errorf("the next write of the 2.6 KB item: %.0f write units, want 6", got)
	}
	if got := update("SET refunds[1] = :n", small); got != 3+3 {
		t.Errorf("a nested update of it: %.0f write units, want 6 (the list keeps its size)", got)
	}
	if got := update("REMOVE refunds", nil); got != 3+1 {
		t.Errorf("the update that shrinks it: %.0f write units, want 3 for the item and 1 for its entry", got)
	}
	if got := update("SET n = :n", small); got != 2 {
		t.Errorf("the next write after the list went: %.0f write units, want 2", got)
	}
}
