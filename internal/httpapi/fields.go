package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
)

// DecodeFields parses req's body (at most maxBytes) strictly into v (a struct of
// pointer fields): one JSON object whose field names are all in allowed (matched
// exactly, each at most once), with values of the fields' types, and nothing after
// it. It returns the object's raw fields. Every error is an
// *inventory.InvalidRequestError whose reason shows example.
func DecodeFields(req events.APIGatewayV2HTTPRequest, maxBytes int, v any, example string, allowed ...string) (map[string]json.RawMessage, error) {
	body, err := Body(req, maxBytes)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := DecodeStrict(body, &fields); err != nil || fields == nil {
		return nil, inventory.InvalidError("body must be a JSON object like %s", example)
	}
	if err := NoDuplicateKeys(body); err != nil {
		return nil, err
	}
	for name := range fields {
		if !slices.Contains(allowed, name) {
			return nil, inventory.InvalidError("unknown field %q; the fields are %s", truncate(name, 32), strings.Join(allowed, ", "))
		}
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			// The bodies are flat objects, so the key is the path's last element (an
			// embedded struct adds its Go name before it).
			key := typeErr.Field[strings.LastIndex(typeErr.Field, ".")+1:]
			return nil, inventory.InvalidError("field %q has a value of the wrong type or size; example: %s", truncate(key, 32), example)
		}
		return nil, inventory.InvalidError("body must be a JSON object like %s", example)
	}
	return fields, nil
}

// NotNull refuses, with an *inventory.InvalidRequestError, a field given as JSON null
// (other than those in except): the contract's bodies give a field a value or leave it
// out.
func NotNull(fields map[string]json.RawMessage, except ...string) error {
	for name, raw := range fields {
		if string(bytes.TrimSpace(raw)) == "null" && !slices.Contains(except, name) {
			return inventory.InvalidError("field %q must not be null", name)
		}
	}
	return nil
}

// MerchantRoute serves one route of the merchant API (/admin/: AWS_IAM for stockctl,
// the console's JWT authorizer for staff) for the caller by: an IAM principal ARN, or
// StaffPrefix and a staff member's user name (Caller).
type MerchantRoute func(ctx context.Context, req events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error)

// AsMerchant is route for callers with an IAM principal or a staff role that allows
// the route (Caller): any other request is answered 401 UNAUTHORIZED or 403
// ROLE_FORBIDDEN and route does not run.
func AsMerchant(route MerchantRoute) Route {
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		by, err := Caller(req)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return route(ctx, req, by)
	}
}

// DecodeLines reads raw, the value of the body's field (POST /orders' "items", a
// refund's "lines"), as an array of exactly {"skuId": string, "qty": integer}
// objects, in order and not yet merged or range-checked (inventory.NewCart does
// that). Errors are *inventory.InvalidRequestError values naming the field and the
// element, e.g. "lines[1].qty must be an integer from 1 to 9999".
func DecodeLines(raw json.RawMessage, field string) ([]inventory.Line, error) {
	var objs []map[string]json.RawMessage
	if err := DecodeStrict(raw, &objs); err != nil {
		return nil, inventory.InvalidError("%s must be an array of {\"skuId\",\"qty\"} objects", field)
	}
	lines := make([]inventory.Line, len(objs))
	for i, fields := range objs {
		if fields == nil {
			return nil, inventory.InvalidError("%s[%d] must be an object", field, i)
		}
		if err := OnlyFields(fields, "skuId", "qty"); err != nil {
			return nil, err
		}
		if err := DecodeStrict(fields["skuId"], &lines[i].SKU); err != nil {
			return nil, inventory.InvalidError("%s[%d].skuId must be a string", field, i)
		}
		if err := DecodeStrict(fields["qty"], &lines[i].Qty); err != nil {
			return nil, inventory.InvalidError("%s[%d].qty must be an integer from 1 to %d", field, i, inventory.MaxQty)
		}
	}
	return lines, nil
}
