package login

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
)

// Route keys of the token issuer's public documents (template.yaml, JwksFunction on
// IssuerApi): OpenID Connect Discovery 1.0 §4 and the JWK set its jwks_uri names.
const (
	RouteDiscovery = "GET " + idtoken.DiscoveryPath
	RouteJWKS      = "GET " + idtoken.JWKSPath
)

// Documents serves the issuer's public documents: RouteDiscovery and RouteJWKS.
type Documents struct {
	issuer string
	keys   idtoken.JWKSet
}

// NewDocuments returns the issuer's documents: the discovery document
// (idtoken.NewDiscovery) and keys, the JWK set the JWT authorizer verifies tokens
// with. Both answer 200 JSON, cacheable for an hour. The discovery document names
// issuer; with issuer "", the https URL the request reached (httpapi.BaseURL: the
// IssuerApi host, or a custom domain and mapping, before the discovery path), which is
// the URL the JWT authorizer was configured with, since it fetches
// <issuer>/.well-known/openid-configuration and requires the document's issuer to be
// that same URL (OpenID Connect Discovery 1.0 §4.3). Deriving it keeps IssuerApi's id
// out of the function's configuration: IssuerApi integrates the function, so the
// function cannot also depend on the API (README, Deploy). A request whose context
// gives no such URL is answered 500. keys holds the signing key and, during a key
// rotation, the other key (README, "Upgrading a deployed stack to RS256 tokens /
// rotating the signing key"). Errors: an issuer that is set but not a valid issuer URL
// (idtoken.CheckIssuer), or an invalid key set (idtoken.JWKSet.Check).
func NewDocuments(issuer string, keys idtoken.JWKSet) (*Documents, error) {
	if issuer != "" {
		if err := idtoken.CheckIssuer(issuer); err != nil {
			return nil, fmt.Errorf("issuer documents: %w", err)
		}
	}
	if err := keys.Check(); err != nil {
		return nil, fmt.Errorf("issuer documents: %w", err)
	}
	return &Documents{issuer: issuer, keys: keys}, nil
}

// cacheable lets clients and the authorizer keep an answer for an hour.
func cacheable(resp events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
	resp.Headers["Cache-Control"] = "public, max-age=3600"
	return resp
}

// Discovery serves RouteDiscovery.
func (d *Documents) Discovery(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	iss := d.issuer
	if iss == "" {
		var err error
		if iss, err = httpapi.BaseURL(req, idtoken.DiscoveryPath); err != nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("discovery: issuer: %w", err)
		}
	}
	return cacheable(httpapi.JSON(http.StatusOK, idtoken.NewDiscovery(iss))), nil
}

// JWKS serves RouteJWKS.
func (d *Documents) JWKS(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return cacheable(httpapi.JSON(http.StatusOK, d.keys)), nil
}
