package orders

import (
	"encoding/json"
	"slices"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// MaxSubscriptions is how many template ids one order may carry: what one
// wx.requestSubscribeMessage call may ask for ("wx.requestSubscribeMessage": tmplIds,
// "一次性模板 id 和永久模板 id 不可同时使用 … 最多为3个").
const MaxSubscriptions = 3

// decodeCart parses a POST /orders body strictly: one JSON object with the field
// "items" (an array), each line exactly the fields "skuId" (string) and "qty"
// (integer), and optionally "subscriptions"; field names match case-sensitively, and
// unknown fields, fields named twice and trailing data are rejected. The lines are
// then validated and merged by inventory.NewCart. Every error is an
// *inventory.InvalidRequestError.
func decodeCart(body []byte) (inventory.Cart, error) {
	cart, _, err := decodeOrder(body, nil)
	return cart, err
}

// decodeOrder is decodeCart that also reads "subscriptions": the subscribe-message
// template ids the buyer accepted at checkout, an array of distinct strings, each one
// of allowed (the configured templates), at most MaxSubscriptions.
func decodeOrder(body []byte, allowed []string) (inventory.Cart, []string, error) {
	var top map[string]json.RawMessage
	if err := httpapi.DecodeStrict(body, &top); err != nil || top == nil {
		return nil, nil, inventory.InvalidError("body must be a JSON object like {\"items\":[{\"skuId\":\"cup-01\",\"qty\":1}]}")
	}
	if err := httpapi.NoDuplicateKeys(body); err != nil {
		return nil, nil, err
	}
	subs, err := subscriptions(top, allowed)
	if err != nil {
		return nil, nil, err
	}
	delete(top, "subscriptions")
	if err := httpapi.OnlyFields(top, "items"); err != nil {
		return nil, nil, err
	}
	cart, err := decodeLines(top)
	return cart, subs, err
}

// subscriptions reads and checks top's optional "subscriptions".
func subscriptions(top map[string]json.RawMessage, allowed []string) ([]string, error) {
	raw, ok := top["subscriptions"]
	if !ok {
		return nil, nil
	}
	var subs []string
	if err := httpapi.DecodeStrict(raw, &subs); err != nil {
		return nil, inventory.InvalidError("subscriptions must be an array of template ids")
	}
	if len(subs) > MaxSubscriptions {
		return nil, inventory.InvalidError("subscriptions holds at most %d template ids", MaxSubscriptions)
	}
	for i, id := range subs {
		if !slices.Contains(allowed, id) || slices.Index(subs, id) != i {
			return nil, inventory.InvalidError("subscriptions[%d] is not a subscribe-message template of this shop, or named twice", i)
		}
	}
	return subs, nil
}

// decodeLines reads the cart of top's "items".
func decodeLines(top map[string]json.RawMessage) (inventory.Cart, error) {
	lines, err := httpapi.DecodeLines(top["items"], "items")
	if err != nil {
		return nil, err
	}
	return inventory.NewCart(lines)
}
