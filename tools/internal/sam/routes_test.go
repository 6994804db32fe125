package sam

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestRoutes_ListsHttpApiEventsByPathThenMethod(t *testing.T) {
	got, err := load(t, "api.yaml").Routes()
	if err != nil {
		t.Fatal(err)
	}
	want := []Route{
		// AdminApi has no DefaultAuthorizer, so its routes are public,
		// and no throttle.
		{Method: "GET", Path: "/health", Function: "AdminFunction", Event: "Health", Public: true, API: "AdminApi"},
		// No ApiId: SAM's implicit API, which has no authorizer here.
		{Method: "POST", Path: "/notify", Function: "AdminFunction", Event: "Notify", Public: true},
		// Its own RouteSettings override the API's DefaultRouteSettings.
		{Method: "POST", Path: "/orders", Function: "OrdersFunction", Event: "CreateOrder", Public: false, API: "HttpApi", Throttle: &Throttle{Rate: 50, Burst: 100}},
		{Method: "GET", Path: "/orders/{orderId}", Function: "OrdersFunction", Event: "GetOrder", Public: false, API: "HttpApi", Throttle: &Throttle{Burst: 1000}},
		// Auth.Authorizer NONE; the method is upper-cased.
		{Method: "GET", Path: "/skus/{skuId}", Function: "OrdersFunction", Event: "GetSku", Public: true, API: "HttpApi", Throttle: &Throttle{Burst: 1000}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestHTTPAPIs_ResolvesAuthorizerSettingsFromParameters(t *testing.T) {
	tests := []struct {
		name       string
		parameters map[string]string
		want       Authorizer
	}{
		{
			name: "Defaults",
			want: Authorizer{JWT: true, IdentitySource: "$request.header.Authorization", Issuer: "", Audience: []string{"default-audience"}},
		},
		{
			name:       "Overridden",
			parameters: map[string]string{"JwtIssuer": "https://issuer.example", "JwtAudience": "client-1"},
			want:       Authorizer{JWT: true, IdentitySource: "$request.header.Authorization", Issuer: "https://issuer.example", Audience: []string{"client-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := LoadWithParameters(filepath.Join("testdata", "api.yaml"), tt.parameters)
			if err != nil {
				t.Fatal(err)
			}
			apis, err := tpl.HTTPAPIs()
			if err != nil {
				t.Fatal(err)
			}
			want := []HTTPAPI{
				{Name: "AdminApi", Authorizers: map[string]Authorizer{}},
				{Name: "HttpApi", DefaultAuthorizer: "JwtAuthorizer", Authorizers: map[string]Authorizer{"JwtAuthorizer": tt.want}, Throttle: &Throttle{Burst: 1000}},
			}
			if !reflect.DeepEqual(apis, want) {
				t.Errorf("HTTPAPIs:\ngot  %+v\nwant %+v", apis, want)
			}
		})
	}
}
