package login

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
)

// Route keys of the token issuer's public documents (template.yaml, JwksFunction on
// IssuerApi): OpenID Connect Discovery 1.0 §4 and the JWK set its jwks_uri names.
const (
	RouteDiscovery = "GET " + idtoken.DiscoveryPath
	RouteJWKS      = "GET " + idtoken.JWKSPath
)

// IssuerFunctionName names the JWK set function in logs.
const IssuerFunctionName = "jwks"

// IssuerConfig is the JWK set function's configuration, read by LoadIssuerConfig.
type IssuerConfig struct {
	KeyID string // SIGNING_KEY_ID: the KMS key whose public key is published, and its kid
	// Issuer is TOKEN_ISSUER, optional: the issuer URL the discovery document names.
	// Unset (as template.yaml deploys it): the URL each discovery request reached,
	// see NewIssuerRoutes.
	Issuer string
}

// LoadIssuerConfig reads the JWK set function's variables (template.yaml,
// JwksFunction); an *envvar.Error names the first one missing.
func LoadIssuerConfig(get envvar.Lookup) (c IssuerConfig, err error) {
	c.KeyID, err = envvar.Required(get, "SIGNING_KEY_ID", "the KMS key id of the token signing key")
	c.Issuer = get("TOKEN_ISSUER")
	return c, err
}

// NewIssuerRoutes returns the handler of the issuer's documents: the discovery document
// (idtoken.NewDiscovery) and keys, the JWK set the JWT authorizer verifies tokens
// with. Both answer 200 JSON, cacheable for an hour. The discovery document names
// issuer; with issuer "", the https URL the request reached (httpapi.BaseURL: the
// IssuerApi host, or a custom domain and mapping, before the discovery path), which is
// the URL the JWT authorizer was configured with, since it fetches
// <issuer>/.well-known/openid-configuration and requires the document's issuer to be
// that same URL (OpenID Connect Discovery 1.0 §4.3). Deriving it keeps IssuerApi's id
// out of the function's configuration: IssuerApi integrates the function, so the
// function cannot also depend on the API (README, Deploy). A request whose context
// gives no such URL is answered 500. Errors: an issuer that is set but not a valid
// issuer URL, or an invalid key set.
func NewIssuerRoutes(issuer string, keys idtoken.JWKSet, log *slog.Logger) (*httpapi.Handler, error) {
	if issuer != "" {
		if _, err := idtoken.Handler(issuer, keys); err != nil { // the same checks as the local issuer
			return nil, fmt.Errorf("issuer documents: %w", err)
		}
	} else if err := keys.Check(); err != nil {
		return nil, fmt.Errorf("issuer documents: %w", err)
	}
	cacheable := func(resp events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
		resp.Headers["Cache-Control"] = "public, max-age=3600"
		return resp
	}
	return httpapi.New(IssuerFunctionName, log, map[string]httpapi.Route{
		RouteDiscovery: func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			iss := issuer
			if iss == "" {
				var err error
				if iss, err = httpapi.BaseURL(req, idtoken.DiscoveryPath); err != nil {
					return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("discovery: issuer: %w", err)
				}
			}
			return cacheable(httpapi.JSON(http.StatusOK, idtoken.NewDiscovery(iss))), nil
		},
		RouteJWKS: func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return cacheable(httpapi.JSON(http.StatusOK, keys)), nil
		},
	}), nil
}
