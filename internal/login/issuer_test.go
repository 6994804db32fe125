package login

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
)

func testKeys(t *testing.T) idtoken.JWKSet {
	t.Helper()
	signer, err := idtoken.GenerateKeySigner()
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := idtoken.NewJWK("key-1", signer.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}
}

// newIssuerRoutes is the issuer documents' routes behind an httpapi.Handler, as the
// jwks function serves them.
func newIssuerRoutes(issuer string, keys idtoken.JWKSet, log *slog.Logger) (*httpapi.Handler, error) {
	d, err := NewDocuments(issuer, keys)
	if err != nil {
		return nil, err
	}
	return httpapi.New("jwks", log, map[string]httpapi.Route{RouteDiscovery: d.Discovery, RouteJWKS: d.JWKS}), nil
}

// discover asks h for the discovery document as the JWT authorizer does, at domain
// with rawPath, and returns the status and the document.
func discover(t *testing.T, h *httpapi.Handler, domain, rawPath string) (int, idtoken.Discovery) {
	t.Helper()
	resp, err := h.Handle(context.Background(), events.APIGatewayV2HTTPRequest{
		RouteKey: RouteDiscovery, RawPath: rawPath,
		RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: RouteDiscovery, DomainName: domain, RequestID: "r-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var d idtoken.Discovery
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal([]byte(resp.Body), &d); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, d
}

// Deployed without TOKEN_ISSUER, the discovery document names the URL it was fetched
// from, which is the issuer the authorizer was given (it fetches
// <issuer>/.well-known/openid-configuration); jwks_uri follows it.
func TestIssuerRoutes_WithoutIssuerNameTheURLTheDocumentWasFetchedFrom(t *testing.T) {
	h, err := newIssuerRoutes("", testKeys(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ domain, rawPath, want string }{
		{"x1y2z3.execute-api.ap-east-1.amazonaws.com", idtoken.DiscoveryPath, "https://x1y2z3.execute-api.ap-east-1.amazonaws.com"},
		{"id.example.com", "/tokens" + idtoken.DiscoveryPath, "https://id.example.com/tokens"},
	} {
		status, d := discover(t, h, tt.domain, tt.rawPath)
		if status != http.StatusOK || d.Issuer != tt.want || d.JWKSURI != tt.want+idtoken.JWKSPath {
			t.Errorf("%s%s: %d issuer %q jwks_uri %q, want %s", tt.domain, tt.rawPath, status, d.Issuer, d.JWKSURI, tt.want)
		}
	}
	if status, _ := discover(t, h, "", idtoken.DiscoveryPath); status != http.StatusInternalServerError {
		t.Errorf("no domainName: %d, want 500", status)
	}
	if status, _ := discover(t, h, "id.example.com", "/other"); status != http.StatusInternalServerError {
		t.Errorf("rawPath not ending in the discovery path: %d, want 500", status)
	}
}

// With an issuer (the local stack's), the document names it wherever it is fetched.
func TestIssuerRoutes_WithIssuerNameIt(t *testing.T) {
	h, err := newIssuerRoutes("http://127.0.0.1:3000", testKeys(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if status, d := discover(t, h, "127.0.0.1", idtoken.DiscoveryPath); status != http.StatusOK || d.Issuer != "http://127.0.0.1:3000" {
		t.Errorf("%d %+v, want issuer http://127.0.0.1:3000", status, d)
	}
	for _, bad := range []string{"http://example.com", "https://example.com?x=1"} {
		if _, err := newIssuerRoutes(bad, testKeys(t), slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("issuer %q accepted", bad)
		}
	}
	if _, err := newIssuerRoutes("", idtoken.JWKSet{Keys: []idtoken.JWK{{Kid: "k", Kty: "EC"}}}, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a bad key set accepted without an issuer")
	}
}
