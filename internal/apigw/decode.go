package apigw

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/stockguard/stockguard/internal/inventory"
)

// decodeCart parses a POST /orders body strictly: one JSON object with exactly the
// field "items" (an array), each line exactly the fields "skuId" (string) and "qty"
// (integer); field names match case-sensitively, unknown fields and trailing data are
// rejected. The lines are then validated and merged by inventory.NewCart. Every error
// wraps inventory.ErrInvalidRequest.
func decodeCart(body []byte) (inventory.Cart, error) {
	var top map[string]json.RawMessage
	if err := decodeStrict(body, &top); err != nil || top == nil {
		return nil, inventory.InvalidError("body must be a JSON object like {\"items\":[{\"skuId\":\"cup-01\",\"qty\":1}]}")
	}
	if err := onlyFields(top, "items"); err != nil {
		return nil, err
	}
	var raw []map[string]json.RawMessage
	if err := decodeStrict(top["items"], &raw); err != nil {
		return nil, inventory.InvalidError("items must be an array of {\"skuId\",\"qty\"} objects")
	}
	if len(raw) > inventory.MaxLines*20 {
		return nil, inventory.InvalidError("items must hold 1 to %d distinct SKUs", inventory.MaxLines)
	}
	lines := make([]inventory.Line, len(raw))
	for i, fields := range raw {
		if fields == nil {
			return nil, inventory.InvalidError("items[%d] must be an object", i)
		}
		if err := onlyFields(fields, "skuId", "qty"); err != nil {
			return nil, err
		}
		if err := decodeStrict(fields["skuId"], &lines[i].SKU); err != nil {
			return nil, inventory.InvalidError("items[%d].skuId must be a string", i)
		}
		if err := decodeStrict(fields["qty"], &lines[i].Qty); err != nil {
			return nil, inventory.InvalidError("items[%d].qty must be an integer from 1 to %d", i, inventory.MaxQty)
		}
	}
	return inventory.NewCart(lines)
}

// onlyFields requires fields to hold exactly the names given, all of them.
func onlyFields(fields map[string]json.RawMessage, names ...string) error {
	for name := range fields {
		if !slices.Contains(names, name) {
			return inventory.InvalidError("unknown field %q", truncate(name, 32))
		}
	}
	for _, name := range names {
		if _, ok := fields[name]; !ok {
			return inventory.InvalidError("missing field %q", name)
		}
	}
	return nil
}

// decodeStrict decodes exactly one JSON value (no trailing data) into v; JSON null is
// rejected so that a missing value cannot pass as a zero.
func decodeStrict(data []byte, v any) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return errors.New("null")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
