package local

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pairsTable is a table keyed by pk and sk (strings) with an index byG keyed by g
// and sk, projecting every attribute.
func pairsTable(name string) *dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	schema := func(hash, rng string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(rng), KeyType: types.KeyTypeRange}}
	}
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s("pk"), s("sk"), s("g")},
		KeySchema:            schema("pk", "sk"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String("byG"), KeySchema: schema("g", "sk"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	}
}

// queryKeys queries in with Limit limit (0: none) page by page, following
// LastEvaluatedKey, and returns the pk/sk of every item returned, in order.
func queryKeys(ctx context.Context, t *testing.T, client *dynamodb.Client, in dynamodb.QueryInput, limit int32) []string {
	t.Helper()
	return queryPages(ctx, t, client, in, limit, func(it map[string]types.AttributeValue) string {
		return it["pk"].(*types.AttributeValueMemberS).Value + "/" + it["sk"].(*types.AttributeValueMemberS).Value
	})
}

// queryPages queries in with Limit limit (0: none) page by page, following
// LastEvaluatedKey (at most 1,000 pages), and returns id of every item returned, in
// order.
func queryPages(ctx context.Context, t *testing.T, client *dynamodb.Client, in dynamodb.QueryInput, limit int32, id func(map[string]types.AttributeValue) string) []string {
	t.Helper()
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	var got []string
	for range 1_000 {
		out, err := client.Query(ctx, &in)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			got = append(got, id(it))
		}
		if len(out.LastEvaluatedKey) == 0 {
			return got
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	t.Fatal("more than 1,000 pages")
	return nil
}

// DynamoDB API Reference, Query: the items of one partition key value, in sort key
// order (ScanIndexForward false: descending); Limit is "the maximum number of items to
// evaluate (not necessarily the number of matching items)", counted before the
// FilterExpression, and LastEvaluatedKey resumes after the last item evaluated. An
// item whose index key attribute is removed leaves the index ("Take advantage of
// sparse indexes", DynamoDB Developer Guide). Partition values that share a prefix
// with the one queried ("a.b", "ab", "a/") and one sorting before it ("0") are in the
// table.
func TestDynamoDB_QueryReadsOnePartitionInSortKeyOrder(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, _ string, client *dynamodb.Client) {
		ctx := t.Context()
		if _, err := client.CreateTable(ctx, pairsTable("q")); err != nil {
			t.Fatal(err)
		}
		put := func(pk, sk, g string) {
			item := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
			if g != "" {
				item["g"] = &types.AttributeValueMemberS{Value: g}
			}
			if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("q"), Item: item}); err != nil {
				t.Fatal(err)
			}
		}
		for _, sk := range []string{"3", "1", "2"} {
			put("0", sk, "G")
			put("a", sk, "G")
		}
		put("a.b", "1", "G")
		put("ab", "1", "")
		put("a/", "1", "")
		partition := func(pk string) dynamodb.QueryInput {
			return dynamodb.QueryInput{TableName: aws.String("q"), KeyConditionExpression: aws.String("#p = :p"),
				ExpressionAttributeNames:  map[string]string{"#p": "pk"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}}
		}
		a := []string{"a/1", "a/2", "a/3"}

		if got := queryKeys(ctx, t, client, partition("a"), 0); !slices.Equal(got, a) {
			t.Errorf("Query pk = a: %v, want %v", got, a)
		}
		backward := partition("a")
		backward.ScanIndexForward = aws.Bool(false)
		if got, want := queryKeys(ctx, t, client, backward, 0), []string{"a/3", "a/2", "a/1"}; !slices.Equal(got, want) {
			t.Errorf("Query pk = a backward: %v, want %v", got, want)
		}
		if got := queryKeys(ctx, t, client, partition("a"), 1); !slices.Equal(got, a) {
			t.Errorf("Query pk = a one item a page: %v, want %v", got, a)
		}
		ranged := partition("a")
		ranged.KeyConditionExpression = aws.String("#p = :p AND #s > :s")
		ranged.ExpressionAttributeNames["#s"] = "sk"
		ranged.ExpressionAttributeValues[":s"] = &types.AttributeValueMemberS{Value: "1"}
		if got, want := queryKeys(ctx, t, client, ranged, 0), []string{"a/2", "a/3"}; !slices.Equal(got, want) {
			t.Errorf("Query pk = a AND sk > 1: %v, want %v", got, want)
		}
		if got, want := queryKeys(ctx, t, client, partition("a.b"), 0), []string{"a.b/1"}; !slices.Equal(got, want) {
			t.Errorf("Query pk = a.b: %v, want %v", got, want)
		}
		if got := queryKeys(ctx, t, client, partition("none"), 0); len(got) != 0 {
			t.Errorf("Query pk = none: %v, want nothing", got)
		}

		// Limit counts the partition's items the filter then drops: two items
		// evaluated, one returned, and the page ends after the second.
		filtered := partition("a")
		filtered.Limit = aws.Int32(2)
		filtered.FilterExpression = aws.String("#s <> :s")
		filtered.ExpressionAttributeNames["#s"] = "sk"
		filtered.ExpressionAttributeValues[":s"] = &types.AttributeValueMemberS{Value: "1"}
		out, err := client.Query(ctx, &filtered)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Items) != 1 || out.LastEvaluatedKey["sk"].(*types.AttributeValueMemberS).Value != "2" {
			t.Errorf("Query pk = a, Limit 2, sk <> 1: %d items, LastEvaluatedKey %v; want 1 item and a/2", len(out.Items), out.LastEvaluatedKey)
		}

		byG := dynamodb.QueryInput{TableName: aws.String("q"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "G"}}}
		want := []string{"0/1", "a/1", "a.b/1", "0/2", "a/2", "0/3", "a/3"}
		if got := queryKeys(ctx, t, client, byG, 0); !sameItems(got, want) {
			t.Errorf("Query byG g = G: %v, want %v in sk order", got, want)
		}
		if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("q"), UpdateExpression: aws.String("REMOVE g"),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "2"}}}); err != nil {
			t.Fatal(err)
		}
		put("0", "3", "H")
		want = []string{"0/1", "a/1", "a.b/1", "0/2", "a/3"}
		if got := queryKeys(ctx, t, client, byG, 2); !sameItems(got, want) {
			t.Errorf("Query byG g = G after a/2 lost g and 0/3 moved to H, two a page: %v, want %v in sk order", got, want)
		}
	})
}

// sameItems reports whether got holds want's items with their sort keys (after the
// "/") in want's order: items of one sort key may come in any order (an index's items
// of equal keys are in no documented order).
func sameItems(got, want []string) bool {
	sk := func(keys []string) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = k[len(k)-1:]
		}
		return out
	}
	a, b := slices.Clone(got), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b) && slices.Equal(sk(got), sk(want))
}

// BenchmarkDynamoDB_QueryOnePartition queries one partition of a table of many
// (the rehearsal's shape: a SKU's shards, a user's orders, a PendingByExpiry bucket
// among every order), through the SDK and the embedded server.
func BenchmarkDynamoDB_QueryOnePartition(b *testing.B) {
	for _, items := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(items, " items"), func(b *testing.B) {
			srv, err := StartDynamoDB(b.Context(), "127.0.0.1:0", DynamoDBOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			client := NewDynamoDBClient(srv.URL())
			if _, err := client.CreateTable(b.Context(), pairsTable("q")); err != nil {
				b.Fatal(err)
			}
			for i := range items {
				if _, err := client.PutItem(b.Context(), &dynamodb.PutItemInput{TableName: aws.String("q"), Item: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: fmt.Sprint("p", i%100)}, "sk": &types.AttributeValueMemberS{Value: fmt.Sprint(i)},
					"g": &types.AttributeValueMemberS{Value: fmt.Sprint("g", i%100)},
				}}); err != nil {
					b.Fatal(err)
				}
			}
			in := &dynamodb.QueryInput{TableName: aws.String("q"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "g7"}}}
			b.ResetTimer()
			for b.Loop() {
				out, err := client.Query(b.Context(), in)
				if err != nil || len(out.Items) != items/100 {
					b.Fatal(len(out.Items), err)
				}
			}
		})
	}
}
