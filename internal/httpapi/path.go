package httpapi

import (
	"fmt"
	"maps"
	"slices"

	"github.com/stockguard/stockguard/internal/inventory"
)

// checkPath checks every path parameter of a request (API Gateway's pathParameters)
// with the rule of its kind of id, the same inventory check a body's id of that kind
// gets: skuId, orderId, ticket, outRefundNo, aftersaleId. Handler runs it before any
// route, so an id no record can have is answered 400 INVALID_REQUEST naming the
// parameter, not its value, and nothing is read or written (docs/contract.md,
// "Errors"). A parameter name without a rule is a wiring mistake: an error Answer
// makes 500 INTERNAL, so that a new route cannot skip the check unnoticed.
func checkPath(params map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if err := checkPathParameter(name, params[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkPathParameter checks one path parameter by its name (see checkPath).
func checkPathParameter(name, value string) error {
	switch name {
	case "skuId":
		return inventory.CheckSKUID(name, value)
	case "orderId":
		return inventory.CheckOrderID(name, value)
	case "ticket":
		return inventory.CheckTicketID(name, value)
	case "outRefundNo":
		return inventory.CheckOutRefundNo(name, value)
	case "aftersaleId":
		return inventory.CheckAftersaleID(name, value)
	}
	return fmt.Errorf("path parameter %q has no rule in httpapi.checkPathParameter", name)
}
