package httpapi

import (
	"cmp"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// Role is what a member of the shop's staff may do through the merchant console
// (docs/contract.md, "Merchant API", staff roles). Roles are ordered: each may do what
// the ones below it may.
type Role int

const (
	// RoleNone is a caller in no staff group: the console's routes refuse it.
	RoleNone Role = iota
	// RoleViewer reads everything and changes nothing.
	RoleViewer
	// RoleOperator also refunds, retries and settles refunds, ships and declares
	// presales: the POST routes under /admin/orders/.
	RoleOperator
	// RoleOwner may do everything, SKU stock, sale times, reshards and reconcile runs
	// included.
	RoleOwner
)

// GroupsClaim is the access-token claim that lists the user's groups: Amazon Cognito
// puts a user pool's group names in cognito:groups (Amazon Cognito Developer Guide,
// "Understanding the access token"). The groups named by the Role names below make a
// staff member's role; other groups are ignored.
const GroupsClaim = "cognito:groups"

// roleGroups maps each staff group name to its Role.
var roleGroups = map[string]Role{"viewer": RoleViewer, "operator": RoleOperator, "owner": RoleOwner}

// maxStaffNameBytes bounds the user name recorded with a change (Amazon Cognito user
// names are at most 128 characters: Amazon Cognito API Reference, SignUp, Username).
const maxStaffNameBytes = 128

// StaffPrefix starts the by of every change a staff member makes through the console:
// "staff:" and the access token's username (an IAM caller is recorded by its ARN).
const StaffPrefix = "staff:"

// errRole is the cause of a 403 ROLE_FORBIDDEN.
var errRole = errors.New("the staff member's role does not allow this route")

// Caller is the identity a merchant route records with its changes, and the check that
// it may call the route at all:
//
//   - an IAM principal (the /admin/ routes of HttpApi, AWS_IAM: stockctl) is recorded
//     by its ARN (Principal) and may call every route its IAM policy lets it reach;
//   - a staff member signed in to the console (the /admin/ routes of ConsoleApi,
//     whose JWT authorizer checked the user pool's access token: iss, exp and
//     client_id) is recorded as StaffPrefix + the token's username, and must hold a
//     role (GroupsClaim) that allows the route (RequiredRole).
//
// Errors, answered by Answer: no identity, or claims of a token that is not a user
// pool access token with a username → 401 UNAUTHORIZED (a buyer's login token
// carries no token_use and never passes); a role too low or none → 403
// ROLE_FORBIDDEN (a *Failure).
func Caller(req events.APIGatewayV2HTTPRequest) (string, error) {
	auth := req.RequestContext.Authorizer
	if auth == nil || auth.JWT == nil || auth.IAM != nil {
		return Principal(req)
	}
	claims := auth.JWT.Claims
	name := cmp.Or(claims["username"], claims["sub"])
	if claims["token_use"] != "access" || name == "" || len(name) > maxStaffNameBytes || !utf8.ValidString(name) {
		return "", ErrUnauthorized
	}
	need, have := RequiredRole(req.RouteKey), StaffRole(claims[GroupsClaim])
	if have < need {
		return "", &Failure{Status: http.StatusForbidden, Code: "ROLE_FORBIDDEN", Level: slog.LevelWarn, Err: errRole,
			Message: "your role (" + have.String() + ") may not do this; it needs " + need.String()}
	}
	return StaffPrefix + name, nil
}

// RequiredRole is the least role that may call the merchant route routeKey ("POST
// /admin/skus"): reads (GET, HEAD) need RoleViewer, the POST routes under
// /admin/orders/ (refunds, their retry and settlement, shipments, presales, and the
// order's after-sales as they come) RoleOperator, everything else (creating and
// changing SKUs, restocks and write-offs, reshards, a reconcile run) RoleOwner.
func RequiredRole(routeKey string) Role {
	method, path, _ := strings.Cut(routeKey, " ")
	switch {
	case method == http.MethodGet || method == http.MethodHead:
		return RoleViewer
	case method == http.MethodPost && strings.HasPrefix(path, "/admin/orders/"):
		return RoleOperator
	}
	return RoleOwner
}

// StaffRole is the highest Role among the groups of a GroupsClaim value as API
// Gateway's JWT authorizer passes it to the function: claims reach the function as
// strings, and an array claim such as cognito:groups arrives as "[owner viewer]"
// (bracketed, separated by spaces; the HTTP API developer guide does not say how
// arrays are passed, so a JSON array ["owner","viewer"] and a single name are read
// too). RoleNone when no group is a role's.
func StaffRole(groups string) Role {
	var names []string
	if json.Unmarshal([]byte(groups), &names) != nil {
		names = strings.Fields(strings.Trim(groups, "[]"))
	}
	best := RoleNone
	for _, n := range names {
		best = max(best, roleGroups[n])
	}
	return best
}

// String is the role's group name ("owner"), "none" for RoleNone.
func (r Role) String() string {
	for name, role := range roleGroups {
		if role == r {
			return name
		}
	}
	return "none"
}
