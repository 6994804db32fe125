package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// The scalper check's store (docs/design.md, "Waiting room", "The scalper check"):
// the SKUs' thresholds, read from the catalog cache the reservation reads too, and
// each buyer's getUserRiskRank answer, kept in the orders table for a day.

// RiskAnswerTTL is how long a buyer's risk answer is kept: a day, longer than a sale,
// so a buyer costs one WeChat call per sale however often they order.
const RiskAnswerTTL = 24 * time.Hour

// kindRisk marks a buyer's kept risk answer.
const kindRisk = "RISK"

// riskKey is the item key of user's risk answer: a hash of the user, so the item names
// no openid.
func riskKey(user string) string {
	sum := sha256.Sum256([]byte("risk\x00" + user))
	return "risk#" + hex.EncodeToString(sum[:16])
}

// RiskThresholds returns the scalper check's threshold of each SKU of ids that has
// one (above 0); SKUs without one, or unknown, are absent. It reads the SKU records
// through the catalog cache the reservation plans from (Options.CatalogTTL): a record
// it reads is the one the reservation then uses, so an order costs no read it did not
// cost before, and a changed threshold applies within CatalogTTL.
func (s *OrderStore) RiskThresholds(ctx context.Context, ids []string) (map[string]int, error) {
	entries, err := s.skuRecords(ctx, ids, cacheFirst)
	if err != nil {
		return nil, err
	}
	var out map[string]int
	for id, e := range entries {
		if t := e.rec.queue().RiskThreshold; t > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[id] = t
		}
	}
	return out, nil
}

// RiskAnswer returns the risk answer kept for user (KeepRiskAnswer) and whether one
// is kept and unexpired: one eventually consistent GetItem (half a read unit; a read
// that misses a keep made just before costs the caller one more WeChat call). Errors:
// inventory.ErrBusy or another store error.
func (s *OrderStore) RiskAnswer(ctx context.Context, user string) (inventory.RiskAnswer, bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(riskKey(user)),
		ProjectionExpression: aws.String("#r, #t"), ExpressionAttributeNames: map[string]string{"#r": "rank", "#t": "ttl"},
	})
	if err != nil {
		return inventory.RiskAnswer{}, false, s.storeError("read risk answer", err)
	}
	rank, rok := number(out.Item["rank"])
	ttl, tok := number(out.Item["ttl"])
	// DynamoDB's TTL deletes expired items within days, not at once ("Using time to
	// live (TTL) in DynamoDB"): an expired item is no answer.
	if !rok || !tok || ttl <= s.now().Unix() {
		return inventory.RiskAnswer{}, false, nil
	}
	return inventory.RiskAnswer{Rank: int(rank), Known: true}, true, nil
}

// KeepRiskAnswer keeps a, a rank WeChat gave for user, for RiskAnswerTTL: one PutItem
// of an item under 1 KB (1 write unit), keyed by a hash of user. An answer without a
// rank is not kept (nil, nothing written): the next order asks WeChat again. Errors:
// inventory.ErrBusy or another store error.
func (s *OrderStore) KeepRiskAnswer(ctx context.Context, user string, a inventory.RiskAnswer) error {
	if !a.Known {
		return nil
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.tables.Orders),
		Item: map[string]types.AttributeValue{
			"pk":   &types.AttributeValueMemberS{Value: riskKey(user)},
			"kind": &types.AttributeValueMemberS{Value: kindRisk},
			"rank": &types.AttributeValueMemberN{Value: strconv.Itoa(a.Rank)},
			"ttl":  &types.AttributeValueMemberN{Value: strconv.FormatInt(s.now().Add(RiskAnswerTTL).Unix(), 10)},
		},
	})
	if err != nil {
		return s.storeError("keep risk answer", err)
	}
	return nil
}

// number reads a number attribute as an int64.
func number(av types.AttributeValue) (int64, bool) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}
