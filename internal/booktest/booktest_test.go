package booktest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/booktest"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/local"
)

// Each drift an operator, a bug or a lost write could cause is named; untouched
// books have no problem.
func TestProblems_NamesEveryInjectedDrift(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drift func(d *drifter)
		want  string // a problem line containing this
	}{
		{"none", nil, ""},
		{"available bumped", func(d *drifter) {
			d.exec(setNumber(d.tables.SKUs, "cup#shard#1", "available", 99))
		}, "shard cup#1: available"},
		{"on-hand lowered", func(d *drifter) {
			d.exec(setNumber(d.tables.SKUs, "cup#shard#0", "onHand", 1))
		}, "SKU cup: onHand"},
		{"ledger entry deleted", func(d *drifter) {
			d.del(d.tables.StockLog, d.order+"#RESERVE#cup")
		}, "no RESERVE entry for cup"},
		{"order cancelled without release", func(d *drifter) {
			d.exec(setString(d.tables.Orders, d.order, "status", "CANCELLED"))
		}, "no RELEASE entry for cup"},
		{"purchase counter changed", func(d *drifter) {
			d.exec(setNumber(d.tables.Orders, "limit#cup#u1", "bought", 0))
		}, "counter limit#cup#u1: bought 0, orders count 2"},
		{"reserved counter changed", func(d *drifter) {
			d.exec(setNumber(d.tables.SKUs, "cup#shard#0", "reserved", 7))
		}, "reserved counter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			stack, err := local.Start(ctx, local.StackConfig{Template: "../../template.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			defer stack.Close()
			if err := stack.Seed(ctx, strings.NewReader(`[{"skuId":"cup","name":"cup","price":100,"stock":20,"shards":2,"limitPerUser":5}]`)); err != nil {
				t.Fatal(err)
			}
			c, _ := inventory.NewCart([]inventory.Line{{SKU: "cup", Qty: 2}})
			order, _, err := stack.Store.Reserve(ctx, dynamo.ReserveRequest{UserID: "u1", Cart: c})
			if err != nil {
				t.Fatal(err)
			}
			if tc.drift != nil {
				tc.drift(&drifter{t: t, stack: stack, tables: stack.Tables, order: order.ID})
			}
			problems, err := booktest.Problems(ctx, stack.DB, stack.Tables)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range problems {
				found = found || tc.want != "" && strings.Contains(p, tc.want)
			}
			if tc.want == "" && len(problems) > 0 || tc.want != "" && !found {
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
}

// drifter changes the books behind the store's back.
type drifter struct {
	t      *testing.T
	stack  *local.Stack
	tables dynamo.Tables
	order  string // the one order's id
}

func (d *drifter) exec(in *dynamodb.UpdateItemInput) {
	if _, err := d.stack.DB.UpdateItem(context.Background(), in); err != nil {
		d.t.Fatal(err)
	}
}

func (d *drifter) del(table, pk string) {
	if _, err := d.stack.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key(pk)}); err != nil {
		d.t.Fatal(err)
	}
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}
}

func setNumber(table, pk, name string, v int) *dynamodb.UpdateItemInput {
	return set(table, pk, name, &types.AttributeValueMemberN{Value: strconv.Itoa(v)})
}

func setString(table, pk, name, v string) *dynamodb.UpdateItemInput {
	return set(table, pk, name, &types.AttributeValueMemberS{Value: v})
}

func set(table, pk, name string, v types.AttributeValue) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: key(pk), UpdateExpression: aws.String("SET #n = :v"),
		ExpressionAttributeNames: map[string]string{"#n": name}, ExpressionAttributeValues: map[string]types.AttributeValue{":v": v},
	}
}
