package httpapi

import (
	"fmt"
	"maps"
	"slices"

	"github.com/stockguard/stockguard/internal/inventory"
)

// CheckPath checks every path parameter of a request (API Gateway's pathParameters)
// with the rule of its kind of id, the same check a body's id of that kind gets:
// skuId, orderId, ticket, outRefundNo, aftersaleId (inventory), openid (a buyer's
// openid, which is the sub claim of stockguard's own tokens: UserID's rule; only the
// local stack's POST /_local/riskrank/{openid} has one in its path). Handler runs it
// before any route, and the local stack before its own routes, so an id no record can
// have is answered 400 INVALID_REQUEST (an *inventory.InvalidRequestError) naming the
// parameter, not its value, and nothing is read or written (docs/contract.md,
// "Errors"). A parameter name without a rule is a wiring mistake: an error Answer
// makes 500 INTERNAL, so that a new route cannot skip the check unnoticed.
func CheckPath(params map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if err := checkPathParameter(name, params[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkPathParameter checks one path parameter by its name (see CheckPath).
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
	case "openid":
		if validUserID(value) {
			return nil
		}
		return inventory.InvalidError("%s must be 1-%d bytes of UTF-8 without control characters", name, maxUserIDBytes)
	}
	return fmt.Errorf("path parameter %q has no rule in httpapi.checkPathParameter", name)
}
