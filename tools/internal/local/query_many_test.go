package local

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// arrivalsTable is a table keyed by pk (string) and n (number) with an index byB keyed
// by b (string) and at (number), projecting the keys only: the shape of the orders
// table and its TicketsByArrival index.
func arrivalsTable(name string) *dynamodb.CreateTableInput {
	def := func(n string, typ types.ScalarAttributeType) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: typ}
	}
	schema := func(hash, rng string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(rng), KeyType: types.KeyTypeRange}}
	}
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{def("pk", types.ScalarAttributeTypeS), def("n", types.ScalarAttributeTypeN),
			def("b", types.ScalarAttributeTypeS), def("at", types.ScalarAttributeTypeN)},
		KeySchema: schema("pk", "n"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String("byB"), KeySchema: schema("b", "at"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	}
}

// arrival is one item of arrivalsTable; b "" has no index key (not in byB).
type arrival struct {
	pk     string
	n, at  int
	b      string
	filled bool // has f, the table queries' filter's attribute
}

func (a arrival) id() string { return a.pk + "/" + strconv.Itoa(a.n) }

// keyTerm is a sort key condition and what it keeps.
type keyTerm struct {
	expr string
	vals []int
	keep func(v int) bool
}

// DynamoDB API Reference, Query: a Query reads the items of one partition key value
// that its sort key condition matches (=, <, <=, >, >=, BETWEEN), in sort key order
// — numbers by value — descending with ScanIndexForward false; Limit counts the items
// evaluated before the FilterExpression, and LastEvaluatedKey resumes after the last
// one. 800 items over 4 partitions of the table and 6 of an index (with numbers of
// 1 to 6 digits, so their text order is not their order), then a third of them moved,
// rewritten or deleted, are queried every way and each answer is compared with the
// same items picked and sorted here.
func TestDynamoDB_QueryManyKeysAnswersAsAReference(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, _ string, client *dynamodb.Client) {
		ctx := t.Context()
		if _, err := client.CreateTable(ctx, arrivalsTable("a")); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(38, 1))
		items := map[string]arrival{}
		ats := rng.Perm(200_000)
		for i := range 800 {
			a := arrival{pk: fmt.Sprint("p", i%4), n: rng.IntN(1_000_000), at: ats[i], filled: rng.IntN(3) == 0}
			if rng.IntN(10) > 0 {
				a.b = fmt.Sprint("b", rng.IntN(6))
			}
			items[a.id()] = a
		}
		for _, a := range items {
			putArrival(ctx, t, client, a)
		}
		for i, id := range slices.Sorted(mapKeys(items)) {
			switch a := items[id]; i % 9 {
			case 0: // deleted
				delete(items, id)
				if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("a"), Key: arrivalKey(a)}); err != nil {
					t.Fatal(err)
				}
			case 1: // moved to another partition of the index and another time
				a.b, a.at = fmt.Sprint("b", rng.IntN(6)), 200_000+i
				items[id] = a
				putArrival(ctx, t, client, a)
			case 2: // out of the index
				a.b = ""
				items[id] = a
				putArrival(ctx, t, client, a)
			}
		}
		terms := []keyTerm{
			{"", nil, func(int) bool { return true }},
			{" AND #s = :a", []int{100}, func(v int) bool { return v == 100 }},
			{" AND #s < :a", []int{50_000}, func(v int) bool { return v < 50_000 }},
			{" AND #s <= :a", []int{99_999}, func(v int) bool { return v <= 99_999 }},
			{" AND #s > :a", []int{150_000}, func(v int) bool { return v > 150_000 }},
			{" AND #s >= :a", []int{9_999}, func(v int) bool { return v >= 9_999 }},
			{" AND #s BETWEEN :a AND :b", []int{1_000, 120_000}, func(v int) bool { return v >= 1_000 && v <= 120_000 }},
		}
		for _, term := range terms {
			for _, forward := range []bool{true, false} {
				for _, limit := range []int32{0, 19} {
					for p := range 5 { // p4 has no items
						pk := fmt.Sprint("p", p)
						for _, filtered := range []bool{false, true} {
							want := reference(items, func(a arrival) (bool, int) { return a.pk == pk && term.keep(a.n), a.n }, forward, filtered)
							in := arrivalQuery("", "pk", pk, "n", term, forward)
							if filtered {
								in.FilterExpression = aws.String("attribute_exists(f)")
							}
							if got := queryArrivals(ctx, t, client, in, limit); !slices.Equal(got, want) {
								t.Errorf("Query pk = %s%s forward %v limit %d filtered %v: %d items %v, want %d %v", pk, term.expr, forward, limit, filtered, len(got), head(got), len(want), head(want))
							}
						}
					}
					for b := range 7 { // b6 has no items
						bucket := fmt.Sprint("b", b)
						want := reference(items, func(a arrival) (bool, int) { return a.b == bucket && term.keep(a.at), a.at }, forward, false)
						in := arrivalQuery("byB", "b", bucket, "at", term, forward)
						if got := queryArrivals(ctx, t, client, in, limit); !slices.Equal(got, want) {
							t.Errorf("Query byB b = %s%s forward %v limit %d: %d items %v, want %d %v", bucket, term.expr, forward, limit, len(got), head(got), len(want), head(want))
						}
					}
				}
			}
		}
	})
}

func mapKeys(m map[string]arrival) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func head(ids []string) []string { return ids[:min(len(ids), 5)] }

// reference picks the items keep takes, ordered by the sort key value it returns
// (then by pk/n, all distinct here), descending when not forward.
func reference(items map[string]arrival, keep func(arrival) (bool, int), forward, filtered bool) []string {
	type kept struct {
		sk int
		id string
	}
	var got []kept
	for _, a := range items {
		if ok, sk := keep(a); ok && (!filtered || a.filled) {
			got = append(got, kept{sk, a.id()})
		}
	}
	slices.SortFunc(got, func(x, y kept) int { return cmp.Or(cmp.Compare(x.sk, y.sk), cmp.Compare(x.id, y.id)) })
	if !forward {
		slices.Reverse(got)
	}
	ids := make([]string, len(got))
	for i, k := range got {
		ids[i] = k.id
	}
	return ids
}

func arrivalKey(a arrival) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: a.pk}, "n": &types.AttributeValueMemberN{Value: strconv.Itoa(a.n)}}
}

func putArrival(ctx context.Context, t *testing.T, client *dynamodb.Client, a arrival) {
	t.Helper()
	item := arrivalKey(a)
	item["at"] = &types.AttributeValueMemberN{Value: strconv.Itoa(a.at)}
	if a.b != "" {
		item["b"] = &types.AttributeValueMemberS{Value: a.b}
	}
	if a.filled {
		item["f"] = &types.AttributeValueMemberBOOL{Value: true}
	}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("a"), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// arrivalQuery is a Query of index (or the table) for partition key hash = value and
// the sort key term on rng.
func arrivalQuery(index, hash, value, rng string, term keyTerm, forward bool) dynamodb.QueryInput {
	in := dynamodb.QueryInput{TableName: aws.String("a"), KeyConditionExpression: aws.String("#h = :h" + term.expr),
		ExpressionAttributeNames:  map[string]string{"#h": hash},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: value}},
		ScanIndexForward:          aws.Bool(forward)}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	if term.expr != "" {
		in.ExpressionAttributeNames["#s"] = rng
	}
	for i, v := range term.vals {
		in.ExpressionAttributeValues[[]string{":a", ":b"}[i]] = &types.AttributeValueMemberN{Value: strconv.Itoa(v)}
	}
	return in
}

// queryArrivals queries in with Limit limit (0: none) page by page and returns the
// pk/n of every item returned, in order.
func queryArrivals(ctx context.Context, t *testing.T, client *dynamodb.Client, in dynamodb.QueryInput, limit int32) []string {
	t.Helper()
	return queryPages(ctx, t, client, in, limit, func(it map[string]types.AttributeValue) string {
		return it["pk"].(*types.AttributeValueMemberS).Value + "/" + it["n"].(*types.AttributeValueMemberN).Value
	})
}
