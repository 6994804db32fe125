package sam

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
)

// Route is one HTTP API route and the function behind it.
type Route struct {
	// Method is the HTTP method in upper case, or ANY.
	Method string
	// Path is the route path with {parameters}, e.g. /orders/{orderId}.
	Path string
	// Function is the logical id of the function that serves the route.
	Function string
	// Event is the name of the function's HttpApi event that declares the route.
	Event string
	// Public reports that the route has no authorizer: its event sets
	// Auth.Authorizer NONE, or sets none and its API has no DefaultAuthorizer.
	Public bool
	// IAM reports that the route uses AWS_IAM authorization (SigV4): its event sets
	// Auth.Authorizer AWS_IAM.
	IAM bool
	// API is the logical id of the HTTP API the route belongs to.
	API string
	// Throttle is the route's throttle: its event's RouteSettings, else its API's
	// DefaultRouteSettings; nil when neither sets one.
	Throttle *Throttle
}

// Routes returns the routes of every HttpApi event of every AWS::Serverless::Function,
// sorted by Path, then Method, Function and API. It returns an error when an event's ApiId names no
// AWS::Serverless::HttpApi of the template or two events declare the same method and
// path on the same API (API Gateway rejects duplicate route keys).
func (t *Template) Routes() ([]Route, error) {
	functions, err := t.Functions()
	if err != nil {
		return nil, err
	}
	defaults, err := t.defaultAuthorizers()
	if err != nil {
		return nil, err
	}
	var routes []Route
	seen := map[[3]string]string{}
	for _, f := range functions {
		for _, ev := range f.Events.HTTPAPI {
			defaultAuthorizer, ok := defaults[ev.API]
			if !ok {
				return nil, fmt.Errorf("function %s event %s: ApiId %s is not an AWS::Serverless::HttpApi of the template", f.Name, ev.Name, ev.API)
			}
			key := [3]string{ev.API, ev.Method, ev.Path}
			if other, dup := seen[key]; dup {
				return nil, fmt.Errorf("route %s %s declared twice: %s and %s.%s", ev.Method, ev.Path, other, f.Name, ev.Name)
			}
			seen[key] = f.Name + "." + ev.Name
			authorizer := cmp.Or(ev.Authorizer, defaultAuthorizer.authorizer)
			routes = append(routes, Route{
				Method:   ev.Method,
				Path:     ev.Path,
				Function: f.Name,
				Event:    ev.Name,
				Public:   authorizer == "" || authorizer == "NONE",
				IAM:      authorizer == "AWS_IAM",
				API:      ev.API,
				Throttle: cmp.Or(ev.Throttle, defaultAuthorizer.throttle),
			})
		}
	}
	slices.SortFunc(routes, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Function, b.Function), cmp.Compare(a.API, b.API))
	})
	return routes, nil
}

// apiDefaults are what an HTTP API gives the routes that set nothing of their own.
type apiDefaults struct {
	authorizer string    // DefaultAuthorizer
	throttle   *Throttle // DefaultRouteSettings' throttle
}

// defaultAuthorizers maps each HTTP API's logical id, and "" for SAM's implicit API
// (configured by Globals.HttpApi), to its DefaultAuthorizer and default route throttle.
func (t *Template) defaultAuthorizers() (map[string]apiDefaults, error) {
	apis, err := t.HTTPAPIs()
	if err != nil {
		return nil, err
	}
	defaults := map[string]apiDefaults{"": {}}
	if _, ok := t.cf.Globals["HttpApi"]; ok {
		g, err := t.cf.GetServerlessGlobalHttpApi()
		if err != nil {
			return nil, fmt.Errorf("Globals.HttpApi: %w", err)
		}
		if g.Auth != nil {
			defaults[""] = apiDefaults{authorizer: aws.ToString(g.Auth.DefaultAuthorizer)}
		}
	}
	for _, api := range apis {
		defaults[api.Name] = apiDefaults{authorizer: api.DefaultAuthorizer, throttle: api.Throttle}
	}
	return defaults, nil
}

// HTTPAPI is an AWS::Serverless::HttpApi's authorization setup (SAM HttpApiAuth).
type HTTPAPI struct {
	// Name is the logical id.
	Name string
	// DefaultAuthorizer names the authorizer of routes that set none; "" for none.
	DefaultAuthorizer string
	// Authorizers maps each authorizer name to its configuration.
	Authorizers map[string]Authorizer
	// IAMAuthorizer is Auth.EnableIamAuthorizer: routes may choose AWS_IAM.
	IAMAuthorizer bool
	// AccessLogs is AccessLogSettings (SAM HttpApi: the stage's access logs); nil when
	// the API writes none.
	AccessLogs *AccessLogs
	// Throttle is DefaultRouteSettings' throttle, applied to every route of the stage
	// that sets no RouteSettings of its own; nil when the API sets none (API Gateway
	// then applies only the account's throttle).
	Throttle *Throttle
}

// AccessLogs is an HTTP API stage's AccessLogSettings (API Gateway V2
// Stage.AccessLogSettings): where the lines go and their format, a template of
// $context variables.
type AccessLogs struct {
	DestinationArn string
	Format         string
}

// Authorizer is one entry of an HTTP API's Auth.Authorizers (SAM HttpApiAuthorizer).
type Authorizer struct {
	// JWT reports a JWT authorizer (JwtConfiguration set); false for a Lambda one.
	JWT bool
	// IdentitySource is where the token is read, e.g. $request.header.Authorization.
	IdentitySource string
	// Issuer is JwtConfiguration.issuer, the iss claim tokens must carry.
	Issuer string
	// Audience is JwtConfiguration.audience: tokens must carry one of these in aud.
	Audience []string
}

// HTTPAPIs returns every AWS::Serverless::HttpApi of the template, sorted by Name.
// Parameters resolve as in [LoadWithParameters], so loading with distinctive values
// shows which settings come from which parameter. It returns an error naming the API
// when Auth.Authorizers is not a map of authorizer objects.
func (t *Template) HTTPAPIs() ([]HTTPAPI, error) {
	return inIDOrder("HTTP API", t.cf.GetAllServerlessHttpApiResources(), func(id string, r *serverless.HttpApi) (HTTPAPI, error) {
		api, err := newHTTPAPI(id, r.Auth)
		if err != nil {
			return HTTPAPI{}, err
		}
		var raw struct {
			Auth                 struct{ EnableIamAuthorizer bool }
			AccessLogSettings    *AccessLogs
			DefaultRouteSettings routeSettings
		}
		if props := t.resources[id].Properties; len(props) > 0 {
			if err := json.Unmarshal(props, &raw); err != nil {
				return HTTPAPI{}, fmt.Errorf("Auth.EnableIamAuthorizer or AccessLogSettings: %w", err)
			}
		}
		api.IAMAuthorizer, api.AccessLogs = raw.Auth.EnableIamAuthorizer, raw.AccessLogSettings
		api.Throttle = throttle(raw.DefaultRouteSettings.ThrottlingRateLimit, raw.DefaultRouteSettings.ThrottlingBurstLimit)
		return api, nil
	})
}

func newHTTPAPI(id string, auth *serverless.HttpApi_HttpApiAuth) (HTTPAPI, error) {
	api := HTTPAPI{Name: id, Authorizers: map[string]Authorizer{}}
	if auth == nil {
		return api, nil
	}
	api.DefaultAuthorizer = aws.ToString(auth.DefaultAuthorizer)
	if auth.Authorizers == nil {
		return api, nil
	}
	// goformation leaves Authorizers untyped; decode the SAM shape from it.
	var raw map[string]struct {
		IdentitySource   string
		JwtConfiguration *struct {
			Issuer   string   `json:"issuer"`
			Audience []string `json:"audience"`
		}
	}
	encoded, err := json.Marshal(auth.Authorizers)
	if err != nil {
		return HTTPAPI{}, fmt.Errorf("encode Auth.Authorizers: %w", err)
	}
	if err := json.Unmarshal(encoded, &raw); err != nil {
		return HTTPAPI{}, fmt.Errorf("decode Auth.Authorizers: %w", err)
	}
	for name, a := range raw {
		authorizer := Authorizer{IdentitySource: a.IdentitySource}
		if jwt := a.JwtConfiguration; jwt != nil {
			authorizer.JWT, authorizer.Issuer, authorizer.Audience = true, jwt.Issuer, jwt.Audience
		}
		api.Authorizers[name] = authorizer
	}
	return api, nil
}
