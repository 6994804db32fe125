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
	KeyID  string // SIGNING_KEY_ID: the KMS key whose public key is published, and its kid
	Issuer string // TOKEN_ISSUER: the issuer URL the discovery document names
}

// LoadIssuerConfig reads the JWK set function's variables (template.yaml,
// JwksFunction); an *envvar.Error names the first one missing.
func LoadIssuerConfig(get envvar.Lookup) (c IssuerConfig, err error) {
	if c.KeyID, err = envvar.Required(get, "SIGNING_KEY_ID", "the KMS key id of the token signing key"); err == nil {
		c.Issuer, err = envvar.Required(get, "TOKEN_ISSUER", "the token issuer URL")
	}
	return c, err
}

// NewIssuerRoutes returns the handler of the issuer's documents: the discovery document
// of issuer (idtoken.NewDiscovery) and keys, the JWK set the JWT authorizer verifies
// tokens with. Both answer 200 JSON, cacheable for an hour. Errors: an issuer that is
// not a valid issuer URL, or an invalid key set.
func NewIssuerRoutes(issuer string, keys idtoken.JWKSet, log *slog.Logger) (*httpapi.Handler, error) {
	if _, err := idtoken.Handler(issuer, keys); err != nil { // the same checks as the local issuer
		return nil, fmt.Errorf("issuer documents: %w", err)
	}
	serve := func(v any) httpapi.Route {
		return func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			resp := httpapi.JSON(http.StatusOK, v)
			resp.Headers["Cache-Control"] = "public, max-age=3600"
			return resp, nil
		}
	}
	return httpapi.New(IssuerFunctionName, log, map[string]httpapi.Route{
		RouteDiscovery: serve(idtoken.NewDiscovery(issuer)),
		RouteJWKS:      serve(keys),
	}), nil
}
