package orders

import (
	"encoding/json"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// decodeCart parses a POST /orders body strictly: one JSON object with exactly the
// field "items" (an array), each line exactly the fields "skuId" (string) and "qty"
// (integer); field names match case-sensitively, and unknown fields, fields named twice
// and trailing data are rejected. The lines are then validated and merged by
// inventory.NewCart. Every error is an *inventory.InvalidRequestError.
func decodeCart(body []byte) (inventory.Cart, error) {
	var top map[string]json.RawMessage
	if err := httpapi.DecodeStrict(body, &top); err != nil || top == nil {
		return nil, inventory.InvalidError("body must be a JSON object like {\"items\":[{\"skuId\":\"cup-01\",\"qty\":1}]}")
	}
	if err := httpapi.NoDuplicateKeys(body); err != nil {
		return nil, err
	}
	if err := httpapi.OnlyFields(top, "items"); err != nil {
		return nil, err
	}
	var raw []map[string]json.RawMessage
	if err := httpapi.DecodeStrict(top["items"], &raw); err != nil {
		return nil, inventory.InvalidError("items must be an array of {\"skuId\",\"qty\"} objects")
	}
	lines := make([]inventory.Line, len(raw))
	for i, fields := range raw {
		if fields == nil {
			return nil, inventory.InvalidError("items[%d] must be an object", i)
		}
		if err := httpapi.OnlyFields(fields, "skuId", "qty"); err != nil {
			return nil, err
		}
		if err := httpapi.DecodeStrict(fields["skuId"], &lines[i].SKU); err != nil {
			return nil, inventory.InvalidError("items[%d].skuId must be a string", i)
		}
		if err := httpapi.DecodeStrict(fields["qty"], &lines[i].Qty); err != nil {
			return nil, inventory.InvalidError("items[%d].qty must be an integer from 1 to %d", i, inventory.MaxQty)
		}
	}
	return inventory.NewCart(lines)
}
