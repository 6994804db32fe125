package dynamo

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A SKU record lists a marked shard k with the attribute mk<k> = true; a record
// decodes its listings into Marked, in order, and nothing else: not another
// attribute starting with the prefix, not a number written with a leading zero or a
// sign.
func TestSKURecord_DecodesTheShardsItListsAsMarked(t *testing.T) {
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "cup"}, "skuId": &types.AttributeValueMemberS{Value: "cup"},
		"shards": &types.AttributeValueMemberN{Value: "12"}, "moves": &types.AttributeValueMemberN{Value: "0"},
		markName(11): &types.AttributeValueMemberBOOL{Value: true},
		markName(0):  &types.AttributeValueMemberBOOL{Value: true},
		markName(3):  &types.AttributeValueMemberBOOL{Value: true},
		"mk07":       &types.AttributeValueMemberBOOL{Value: true},
		"mk-1":       &types.AttributeValueMemberBOOL{Value: true},
		"mkx":        &types.AttributeValueMemberBOOL{Value: true},
	}
	var rec skuRecord
	if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 3, 11}; !slices.Equal(rec.Marked, want) || rec.SKU != "cup" || rec.Shards != 12 {
		t.Errorf("decoded %q with %d shards, marked %v; want cup, 12, %v", rec.SKU, rec.Shards, rec.Marked, want)
	}
	if back, err := attributevalue.MarshalMap(rec); err != nil || back[markName(0)] != nil {
		t.Errorf("encoded back: %v (error %v); want no listing written by a Put", back[markName(0)], err)
	}
}
