package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// kindShaping marks a user's request-shaping window item on the orders table.
const kindShaping = "SHAPING"

// digest is 22 URL-safe characters of the SHA-256 of s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// shapingKey names user's window item for the window starting at unix seconds start.
func shapingKey(user string, start int64) string {
	return "shape#" + digest(user) + "#" + strconv.FormatInt(start, 10)
}

// shapingCount is the attribute of a window item counting the requests naming sku,
// and shapingToken the one marking that the keyed request tok was counted for sku.
// SKU ids may hold dots, so these names are never split at them.
func shapingCount(sku string) string { return "n:" + sku }

func shapingToken(sku, tok string) string { return "k:" + sku + ":" + tok }

// shape admits one order request of user under Options.Shaping, before any stock is
// touched: one conditional UpdateItem of the user's item for the current window. Per
// SKU of cart it adds 1 to the SKU's request count, on condition that the count is
// still below PerMinute, or that the request's idempotency key was counted for the
// SKU in this window already (a copy or replay of an admitted request is always
// admitted). DynamoDB applies conditional writes on one item one at a time, so
// concurrent requests are counted exactly. The item expires (ttl) one window after
// its own ends. key is the request's idempotency key, "" for none.
//
// It returns a *inventory.RateLimitedError (wrapping inventory.ErrRateLimited) for
// the first SKU whose window is full, an error wrapping inventory.ErrBusy when
// DynamoDB was throttled or unavailable, and nil when admitted.
func (s *store) shape(ctx context.Context, user, key string, cart inventory.Cart) error {
	rule, now := s.opts.Shaping, s.now()
	start, end := rule.Window(now)
	tok := ""
	if key != "" {
		tok = digest(key)
	}
	upd := expression.Set(expression.Name("kind"), expression.Value(kindShaping)).
		Set(expression.Name("ttl"), expression.Value(end.Add(inventory.ShapingWindow).Unix()))
	var cond expression.ConditionBuilder
	for i, l := range cart {
		count := expression.NameNoDotSplit(shapingCount(l.SKU))
		upd = upd.Add(count, expression.Value(1))
		c := expression.AttributeNotExists(count).Or(count.LessThan(expression.Value(rule.PerMinute)))
		if tok != "" {
			mark := expression.NameNoDotSplit(shapingToken(l.SKU, tok))
			upd = upd.Set(mark, expression.Value(true))
			c = expression.AttributeExists(mark).Or(c)
		}
		if i == 0 {
			cond = c
		} else {
			cond = cond.And(c)
		}
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build shaping update: %w", err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(shapingKey(user, start.Unix())),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return rule.Refuse(now, fullSKU(ccf.Item, cart, tok, rule.PerMinute))
	}
	if err != nil {
		return s.storeError("shape order requests", err)
	}
	return nil
}

// fullSKU is the first SKU of cart whose count in the window item old is full and
// that has not counted tok.
func fullSKU(old map[string]types.AttributeValue, cart inventory.Cart, tok string, per int) string {
	for _, l := range cart {
		n, ok := old[shapingCount(l.SKU)].(*types.AttributeValueMemberN)
		if !ok {
			continue
		}
		if count, _ := strconv.Atoi(n.Value); count >= per && (tok == "" || old[shapingToken(l.SKU, tok)] == nil) {
			return l.SKU
		}
	}
	return cart[0].SKU
}
