// Package apigw plays what API Gateway does in front of the functions that is not
// routing: the HTTP API's JWT authorizer (JWTAuthorizer), for the local stack's
// gateway and the deploy tests. It is written from the API Gateway Developer Guide's
// "Control access to HTTP APIs with JWT authorizers in API Gateway", not from the code
// that issues stockguard's tokens (package idtoken): it reads the issuer's documents
// over HTTP as API Gateway does, and refuses what that page says API Gateway refuses.
package apigw

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// KeyCacheTTL is how long the authorizer keeps the issuer's public keys: two hours
// ("API Gateway can cache the public key for two hours", step 3 of the page's
// workflow). The page says "can": the cache is modelled at its longest.
const KeyCacheTTL = 2 * time.Hour

// Methods are the JWS algorithms the authorizer accepts: "Currently, only RSA-based
// algorithms are supported" (step 3). The page names no list; RSASSA-PKCS1-v1_5 with
// SHA-256, -384 and -512 (RFC 7518 §3.3) are taken, and RSASSA-PSS (PS256…), which the
// page neither names nor excludes, is refused, so that the model is never kinder than
// the service.
var Methods = []string{"RS256", "RS384", "RS512"}

// DiscoveryPath is where the authorizer reads an issuer's OpenID provider metadata:
// issuer + "/.well-known/openid-configuration" (OpenID Connect Discovery 1.0 §4), whose
// jwks_uri names the key set.
const DiscoveryPath = "/.well-known/openid-configuration"

// maxDocumentBytes bounds a fetched discovery document or key set (1 MiB): a local
// safeguard, not a rule of the page.
const maxDocumentBytes = 1 << 20

// ErrUnauthorized is every refusal of JWTAuthorizer.Authorize: API Gateway then answers
// 401 {"message":"Unauthorized"} and invokes no function. The wrapped text says why,
// for tests and logs.
var ErrUnauthorized = errors.New("apigw: unauthorized")

// JWTConfig is an HTTP API JWT authorizer's configuration (AWS::ApiGatewayV2::Authorizer
// JwtConfiguration) and what it runs on.
type JWTConfig struct {
	// Issuer is JwtConfiguration.issuer: the iss tokens must carry, exactly, and the
	// URL whose discovery document names the key set.
	Issuer string
	// Audience is JwtConfiguration.audience: a token's aud, or its client_id when it
	// has no aud, must be one of these. At least one.
	Audience []string
	// Client fetches the discovery document and the key set; nil means
	// http.DefaultClient.
	Client *http.Client
	// Now is the clock of exp, nbf, iat and the key cache (the local stack's clock);
	// nil means time.Now.
	Now func() time.Time
}

// JWTAuthorizer checks tokens as API Gateway's HTTP API JWT authorizer does. It is safe
// for concurrent use: one fetch of the keys at a time, as one cache.
type JWTAuthorizer struct {
	cfg     JWTConfig
	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey // the cached key set's RSA keys by kid
	fetched time.Time                 // when keys were fetched; zero: never
}

// NewJWTAuthorizer returns an authorizer for cfg. Errors: no issuer, no audience or an
// empty one. The keys are fetched at the first token, not here.
func NewJWTAuthorizer(cfg JWTConfig) (*JWTAuthorizer, error) {
	if cfg.Issuer == "" || len(cfg.Audience) == 0 || slices.Contains(cfg.Audience, "") {
		return nil, errors.New("apigw: a JWT authorizer needs an issuer and non-empty audiences")
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &JWTAuthorizer{cfg: cfg}, nil
}

// Authorize checks identitySource, the value of the authorizer's identity source (the
// Authorization header), as the page's workflow does, and returns the token's claims as
// API Gateway hands them to the integration (requestContext.authorizer.jwt.claims:
// strings as they are, numbers in decimal, other values as compact JSON). The rules:
//
//  1. the identity source holds the token alone or prefixed with "Bearer ";
//  2. the token decodes as a compact JWS;
//  3. its alg is one of Methods, and its signature verifies under the key of the
//     issuer's key set (fetched through the discovery document's jwks_uri, cached
//     KeyCacheTTL) whose kid is the token's kid; a token without a kid, or whose kid is
//     not in the cached set, is refused, and the set is not fetched again before the
//     cache expires;
//  4. claims: iss equals the issuer; aud holds one of the audiences, or, only when
//     there is no aud, client_id is one of them; exp is after now (and present); nbf
//     and iat, when present, are not after now.
//
// Scopes (step 4's scope/scp) are not checked: no route of the template requires any.
// Every error wraps ErrUnauthorized.
func (a *JWTAuthorizer) Authorize(ctx context.Context, identitySource string) (map[string]string, error) {
	token, _ := strings.CutPrefix(identitySource, "Bearer ")
	if token == "" {
		return nil, fmt.Errorf("%w: no token in the identity source", ErrUnauthorized)
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods(Methods),
		jwt.WithIssuer(a.cfg.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(a.cfg.Now),
		jwt.WithJSONNumber(),
	)
	claims := jwt.MapClaims{}
	if _, err := parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) { return a.key(ctx, t) }); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnauthorized, err)
	}
	if err := a.checkAudience(claims); err != nil {
		return nil, err
	}
	return passedOn(claims), nil
}

// key is the cached key named by t's kid, fetching the key set when the cache is empty
// or older than KeyCacheTTL.
func (a *JWTAuthorizer) key(ctx context.Context, t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return nil, errors.New("the token has no kid")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if now := a.cfg.Now(); a.fetched.IsZero() || !now.Before(a.fetched.Add(KeyCacheTTL)) {
		keys, err := a.fetch(ctx)
		if err != nil {
			return nil, err // nothing cached: the next token fetches again
		}
		a.keys, a.fetched = keys, now
	}
	key, ok := a.keys[kid]
	if !ok {
		return nil, fmt.Errorf("kid %.64q is not an RSA key of the cached key set", kid)
	}
	return key, nil
}

// checkAudience applies step 4's aud / client_id rule: aud when the token has one,
// client_id only when it has none.
func (a *JWTAuthorizer) checkAudience(claims jwt.MapClaims) error {
	if _, has := claims["aud"]; has {
		aud, err := claims.GetAudience()
		if err == nil && slices.ContainsFunc(aud, func(s string) bool { return slices.Contains(a.cfg.Audience, s) }) {
			return nil
		}
		return fmt.Errorf("%w: aud %v is none of the audiences", ErrUnauthorized, claims["aud"])
	}
	if id, ok := claims["client_id"].(string); ok && slices.Contains(a.cfg.Audience, id) {
		return nil
	}
	return fmt.Errorf("%w: no aud, and client_id %v is none of the audiences", ErrUnauthorized, claims["client_id"])
}

// passedOn renders claims as API Gateway passes them to the integration.
func passedOn(claims jwt.MapClaims) map[string]string {
	out := make(map[string]string, len(claims))
	for name, value := range claims {
		switch x := value.(type) {
		case string:
			out[name] = x
		case json.Number:
			out[name] = x.String()
		default:
			b, _ := json.Marshal(x)
			out[name] = string(b)
		}
	}
	return out
}

// fetch reads the issuer's discovery document and the key set its jwks_uri names, and
// returns the set's RSA keys by kid (keys of another type, or without a kid, can verify
// no token the authorizer accepts). The document's issuer must be the configured issuer
// (OpenID Connect Discovery 1.0 §4.3).
func (a *JWTAuthorizer) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	var d struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := a.getJSON(ctx, strings.TrimSuffix(a.cfg.Issuer, "/")+DiscoveryPath, &d); err != nil {
		return nil, err
	}
	if d.Issuer != a.cfg.Issuer || d.JWKSURI == "" {
		return nil, fmt.Errorf("the discovery document names issuer %q and jwks_uri %q, want issuer %q and a key set", d.Issuer, d.JWKSURI, a.cfg.Issuer)
	}
	var set jose.JSONWebKeySet
	if err := a.getJSON(ctx, d.JWKSURI, &set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if pub, ok := k.Key.(*rsa.PublicKey); ok && k.KeyID != "" {
			keys[k.KeyID] = pub
		}
	}
	return keys, nil
}

// getJSON GETs u and decodes its 200 answer of at most maxDocumentBytes into v.
func (a *JWTAuthorizer) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("GET %q: %w", u, err)
	}
	resp, err := a.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	case err != nil || len(body) > maxDocumentBytes:
		return fmt.Errorf("GET %s: no document of at most %d bytes", u, maxDocumentBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}
