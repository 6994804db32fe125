package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// staffRequest is a console request for routeKey with the claims API Gateway's JWT
// authorizer passes on.
func staffRequest(routeKey string, claims map[string]string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{RouteKey: routeKey, RequestContext: events.APIGatewayV2HTTPRequestContext{
		Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims},
		},
	}}
}

func accessClaims(username, groups string) map[string]string {
	return map[string]string{"token_use": "access", "username": username, "sub": "9f1c-" + username,
		"client_id": "console", GroupsClaim: groups}
}

// Each role reaches exactly its routes, whatever form the groups claim arrives in; the
// route runs only when allowed, with the staff member's name as the recorded caller.
func TestAsMerchant_StaffRoles(t *testing.T) {
	routes := []struct {
		key  string
		need Role
	}{
		{"GET /admin/skus", RoleViewer}, {"GET /admin/orders/{orderId}", RoleViewer}, {"GET /admin/reconcile/latest", RoleViewer},
		{"POST /admin/orders/{orderId}/refund", RoleOperator}, {"POST /admin/orders/{orderId}/shipments", RoleOperator},
		{"POST /admin/orders/{orderId}/refunds/{outRefundNo}/settle", RoleOperator}, {"POST /admin/orders/{orderId}/presale", RoleOperator},
		{"POST /admin/skus", RoleOwner}, {"POST /admin/skus/{skuId}/adjustments", RoleOwner}, {"PATCH /admin/skus/{skuId}", RoleOwner},
		{"PUT /admin/skus/{skuId}/shards", RoleOwner}, {"POST /admin/reconcile", RoleOwner},
	}
	for _, groups := range []struct {
		claim string
		role  Role
	}{
		{"[viewer]", RoleViewer}, {`["viewer"]`, RoleViewer}, {"viewer", RoleViewer},
		{"[operator]", RoleOperator}, {"[buyers operator]", RoleOperator}, {`["viewer","operator"]`, RoleOperator},
		{"[owner]", RoleOwner}, {"[viewer owner]", RoleOwner},
		{"", RoleNone}, {"[buyers]", RoleNone}, {"[Owner]", RoleNone},
	} {
		for _, rt := range routes {
			ran := ""
			route := AsMerchant(func(_ context.Context, _ events.APIGatewayV2HTTPRequest, by string) (events.APIGatewayV2HTTPResponse, error) {
				ran = by
				return JSON(http.StatusOK, map[string]string{}), nil
			})
			resp, err := route(context.Background(), staffRequest(rt.key, accessClaims("mei", groups.claim)))
			if err != nil {
				resp = Answer(err)
			}
			allowed := groups.role >= rt.need && groups.role != RoleNone
			switch {
			case allowed && (resp.StatusCode != http.StatusOK || ran != "staff:mei"):
				t.Errorf("%s with groups %q: %d, by %q; want 200 by staff:mei", rt.key, groups.claim, resp.StatusCode, ran)
			case !allowed && (resp.StatusCode != http.StatusForbidden || ran != ""):
				t.Errorf("%s with groups %q: %d (route ran: %v); want 403 and the route not run", rt.key, groups.claim, resp.StatusCode, ran != "")
			case !allowed && errorCode(t, resp) != "ROLE_FORBIDDEN":
				t.Errorf("%s with groups %q: %s; want code ROLE_FORBIDDEN", rt.key, groups.claim, resp.Body)
			}
		}
	}
}

// A token that is not a user pool access token never gets through, whatever groups it
// claims: a buyer's login token (no token_use), an ID token, one without a name.
func TestAsMerchant_RefusesTokensThatAreNotStaffAccessTokens(t *testing.T) {
	for name, claims := range map[string]map[string]string{
		"buyer login token": {"sub": "o-alice", "aud": "wx0000000000000001", GroupsClaim: "[owner]"},
		"ID token":          {"token_use": "id", "cognito:username": "mei", "aud": "console", GroupsClaim: "[owner]"},
		"no name":           {"token_use": "access", GroupsClaim: "[owner]"},
		"no claims":         nil,
	} {
		route := AsMerchant(func(context.Context, events.APIGatewayV2HTTPRequest, string) (events.APIGatewayV2HTTPResponse, error) {
			t.Errorf("%s: the route ran", name)
			return events.APIGatewayV2HTTPResponse{}, nil
		})
		_, err := route(context.Background(), staffRequest("GET /admin/skus", claims))
		if resp := Answer(err); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s; want 401", name, resp.StatusCode, resp.Body)
		}
	}
}

// stockctl's callers keep their IAM identity and every route.
func TestCaller_IAMPrincipalIsRecordedByARN(t *testing.T) {
	const arn = "arn:aws:iam::000000000000:user/ops"
	req := events.APIGatewayV2HTTPRequest{RouteKey: "POST /admin/skus", RequestContext: events.APIGatewayV2HTTPRequestContext{
		Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: arn}},
	}}
	if by, err := Caller(req); err != nil || by != arn {
		t.Errorf("Caller = %q, %v; want %s", by, err, arn)
	}
}

func errorCode(t *testing.T, resp events.APIGatewayV2HTTPResponse) string {
	t.Helper()
	var body struct{ Code string }
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("error body %q: %v", resp.Body, err)
	}
	return body.Code
}
