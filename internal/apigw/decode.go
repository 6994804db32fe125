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
// (integer); field names match case-sensitively, and unknown fields, fields named twice
// and trailing data are rejected. The lines are then validated and merged by inventory.NewCart. Every error
// wraps inventory.ErrInvalidRequest.
func decodeCart(body []byte) (inventory.Cart, error) {
	var top map[string]json.RawMessage
	if err := decodeStrict(body, &top); err != nil || top == nil {
		return nil, inventory.InvalidError("body must be a JSON object like {\"items\":[{\"skuId\":\"cup-01\",\"qty\":1}]}")
	}
	if err := noDuplicateKeys(body); err != nil {
		return nil, err
	}
	if err := onlyFields(top, "items"); err != nil {
		return nil, err
	}
	var raw []map[string]json.RawMessage
	if err := decodeStrict(top["items"], &raw); err != nil {
		return nil, inventory.InvalidError("items must be an array of {\"skuId\",\"qty\"} objects")
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

// noDuplicateKeys rejects a JSON document in which an object names a key twice:
// encoding/json would silently keep the last value, while a proxy or log reader may
// keep the first, so the request would mean two things. data must be valid JSON.
func noDuplicateKeys(data []byte) error {
	type frame struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return inventory.InvalidError("body is not valid JSON")
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].keys != nil && stack[n-1].expectKey {
				if stack[n-1].keys[t] {
					return inventory.InvalidError("field %q appears twice", truncate(t, 32))
				}
				stack[n-1].keys[t] = true
				stack[n-1].expectKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}
