package sam_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/sam"
)

// consoleAPI is the HTTP API of the merchant console's routes.
const consoleAPI = "ConsoleApi"

// The console's API serves exactly the merchant routes HttpApi serves with AWS_IAM, each
// to the admin function, behind a JWT authorizer whose issuer is the staff user pool and
// whose audience is the console's app client (Cognito access tokens name it in
// client_id); no other route, and nothing public.
func TestConsole_ApiServesEveryMerchantRouteForTheUserPool(t *testing.T) {
	routes, err := loadRealTemplate(t).Routes()
	if err != nil {
		t.Fatal(err)
	}
	var iam, console []string
	for _, r := range routes {
		key := r.Method + " " + r.Path + " → " + r.Function
		switch {
		case r.API == consoleAPI && (r.IAM || r.Public):
			t.Errorf("%s on %s: IAM %v, public %v; want the JWT authorizer", key, consoleAPI, r.IAM, r.Public)
		case r.API == consoleAPI:
			console = append(console, key)
		case r.IAM:
			iam = append(iam, key)
		}
	}
	slices.Sort(iam)
	slices.Sort(console)
	if len(iam) == 0 || !slices.Equal(iam, console) {
		t.Errorf("%s routes %v, want HttpApi's AWS_IAM routes %v", consoleAPI, console, iam)
	}
	apis := realByName(t, (*sam.Template).HTTPAPIs, func(a sam.HTTPAPI) string { return a.Name })
	api := apis[consoleAPI]
	a := api.Authorizers[api.DefaultAuthorizer]
	if !a.JWT || a.IdentitySource != "$request.header.Authorization" || !strings.Contains(a.Issuer, "ConsoleUserPool") ||
		!strings.HasPrefix(a.Issuer, "https://cognito-idp.") || !slices.Equal(a.Audience, []string{"ConsoleUserPoolClient"}) {
		t.Errorf("%s default authorizer %q = %+v; want a JWT authorizer of the ConsoleUserPool issuer for ConsoleUserPoolClient", consoleAPI, api.DefaultAuthorizer, a)
	}
	if api.AccessLogs == nil {
		t.Errorf("%s writes no access log", consoleAPI)
	}
}
