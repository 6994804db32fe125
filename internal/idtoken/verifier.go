package idtoken

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrInvalidToken: a token Verifier refuses. docs/contract.md: 401 UNAUTHORIZED.
var ErrInvalidToken = errors.New("idtoken: invalid token")

// VerifierConfig is what a Verifier trusts, as an API Gateway JWT authorizer is configured.
type VerifierConfig struct {
	Issuer    string   // the one accepted iss, compared exactly
	Audiences []string // accepted aud values; at least one
	Keys      JWKSet   // the issuer's keys (see FetchJWKS)
	Now       func() time.Time
}

// Verifier checks tokens the way API Gateway's HTTP API JWT authorizer does
// ("Control access to HTTP APIs with JWT authorizers": the token's kid must name a key of
// the issuer's JWK set and its signature verify under it; iss must match; aud must hold one
// of the audiences; exp must be after now; nbf and iat, when present, not after now), with
// the algorithm pinned to ES256. Unlike the authorizer it does not fall back to a
// client_id claim when aud is absent (stockguard's tokens always carry aud), and it checks
// no scopes (no route of docs/contract.md requires any). It is immutable and safe for concurrent
// use.
type Verifier struct {
	issuer    string
	audiences []string
	keys      map[string]*ecdsa.PublicKey
	now       func() time.Time
}

// NewVerifier validates cfg: an issuer URL (see IssuerConfig.Issuer), at least one
// non-empty audience, and a JWK set of valid, uniquely named P-256 keys (at least one).
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	if err := checkIssuerURL(cfg.Issuer); err != nil {
		return nil, err
	}
	if len(cfg.Audiences) == 0 {
		return nil, errors.New("idtoken: config: at least one audience is required")
	}
	for _, a := range cfg.Audiences {
		if a == "" {
			return nil, errors.New("idtoken: config: empty audience")
		}
	}
	keys, err := cfg.Keys.keys()
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("idtoken: config: the JWK set is empty")
	}
	v := &Verifier{issuer: cfg.Issuer, audiences: append([]string(nil), cfg.Audiences...), keys: keys, now: cfg.Now}
	if v.now == nil {
		v.now = time.Now
	}
	return v, nil
}

// Claims are a verified token's claims.
type Claims struct {
	Subject string // sub: the buyer's openid for stockguard's own tokens
	// All holds every claim as API Gateway hands them to integrations in
	// requestContext.authorizer.jwt.claims: strings as they are, numbers in decimal, other
	// values as compact JSON.
	All map[string]string
}

// Verify checks token, with or without a "Bearer " prefix (the authorizer's identity
// source accepts both). Every error wraps ErrInvalidToken and says why.
func (v *Verifier) Verify(token string) (*Claims, error) {
	token = strings.TrimPrefix(token, "Bearer ")
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{Algorithm}),
		jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.audiences...),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(v.now),
		jwt.WithJSONNumber(),
	)
	claims := jwt.MapClaims{}
	_, err := parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		key, ok := v.keys[kid]
		if !ok {
			return nil, fmt.Errorf("kid %.64q is not in the issuer's key set", kid)
		}
		return key, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	out := &Claims{All: make(map[string]string, len(claims))}
	for name, value := range claims {
		switch x := value.(type) {
		case string:
			out.All[name] = x
		case json.Number:
			out.All[name] = x.String()
		default:
			b, _ := json.Marshal(x)
			out.All[name] = string(b)
		}
	}
	out.Subject, _ = claims["sub"].(string)
	return out, nil
}
