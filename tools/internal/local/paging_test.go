package local

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB returns at most 1 MB of data per Query or Scan, counted over the items read
// before the FilterExpression (for an index, its entries), then a LastEvaluatedKey
// (Developer Guide, "Paginating table query results in DynamoDB"; API Reference,
// Query and Scan). Ten items of 300 KB in one partition: a page holds three of them
// (a fourth would take it past 1 MB), Limit still ends a page sooner, a filter that
// drops every item still ends the first page after three, LastEvaluatedKey resumes
// after the last one (for an index, with the index key), following it reads all ten,
// and an index projecting the keys only answers all ten in one page.
func TestDynamoDB_QueryAndScanReadAtMost1MBAPage(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, impl string, client *dynamodb.Client) {
		ctx := t.Context()
		in := pairsTable("p")
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String("keysByG"), KeySchema: in.GlobalSecondaryIndexes[0].KeySchema,
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		})
		if _, err := client.CreateTable(ctx, in); err != nil {
			t.Fatal(err)
		}
		var all []string
		for i := range 10 {
			sk := fmt.Sprintf("%02d", i)
			all = append(all, "a/"+sk)
			if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("p"), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: sk}, "g": &types.AttributeValueMemberS{Value: "G"},
				"pad": &types.AttributeValueMemberS{Value: strings.Repeat("x", 300<<10)},
			}}); err != nil {
				t.Fatal(err)
			}
		}
		partition := dynamodb.QueryInput{TableName: aws.String("p"), KeyConditionExpression: aws.String("pk = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "a"}}}
		byG := dynamodb.QueryInput{TableName: aws.String("p"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "G"}}}

		checkPage(t, "Query", query(t, client, partition), 3, "a/02", "")
		if got := queryKeys(ctx, t, client, partition, 0); !slices.Equal(got, all) {
			t.Errorf("Query page by page: %v, want %v", got, all)
		}
		limited := partition
		limited.Limit = aws.Int32(2)
		checkPage(t, "Query, Limit 2", query(t, client, limited), 2, "a/01", "")
		checkPage(t, "Query of byG", query(t, client, byG), 3, "a/02", "G")
		scan, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("p")})
		if err != nil {
			t.Fatal(err)
		}
		checkPage(t, "Scan", page{scan.Items, scan.LastEvaluatedKey}, 3, "a/02", "")

		deviation(t, impl, "moto counts the items the filter kept, whole also when an index projects less, and 1 MB as 1,000,000 bytes", "Query - Amazon DynamoDB")
		filtered := partition
		filtered.FilterExpression = aws.String("attribute_not_exists(#pad)")
		filtered.ExpressionAttributeNames = map[string]string{"#pad": "pad"}
		checkPage(t, "Query, filter dropping every item", query(t, client, filtered), 0, "a/02", "")
		keysOnly := byG
		keysOnly.IndexName = aws.String("keysByG")
		checkPage(t, "Query of keysByG (keys only)", query(t, client, keysOnly), 10, "", "")
	})
}

// page is one answer of a Query or Scan.
type page struct {
	items []map[string]types.AttributeValue
	last  map[string]types.AttributeValue
}

func query(t *testing.T, client *dynamodb.Client, in dynamodb.QueryInput) page {
	t.Helper()
	out, err := client.Query(t.Context(), &in)
	if err != nil {
		t.Fatal(err)
	}
	return page{out.Items, out.LastEvaluatedKey}
}

// checkPage checks that p has n items and a LastEvaluatedKey of pk/sk last ("" none),
// with g g when g is not "" (an index's key), and no other attribute.
func checkPage(t *testing.T, what string, p page, n int, last, g string) {
	t.Helper()
	got := ""
	if len(p.last) > 0 {
		got = p.last["pk"].(*types.AttributeValueMemberS).Value + "/" + p.last["sk"].(*types.AttributeValueMemberS).Value
	}
	want := 0
	if last != "" {
		want = 2
	}
	if g != "" {
		want = 3
		if v, _ := p.last["g"].(*types.AttributeValueMemberS); v == nil || v.Value != g {
			t.Errorf("%s: LastEvaluatedKey %v, want g %s in it", what, p.last, g)
		}
	}
	if len(p.items) != n || got != last || len(p.last) != want {
		t.Errorf("%s: %d items, LastEvaluatedKey %q (%d attributes); want %d items, %q (%d)", what, len(p.items), got, len(p.last), n, last, want)
	}
}
