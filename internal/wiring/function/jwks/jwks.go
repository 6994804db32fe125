// Package jwks is the token issuer's function's wiring: the OpenID discovery document
// and the JWK set the HTTP API's JWT authorizer fetches.
package jwks

import (
	"log/slog"

	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/wiring"
)

// Config is jwks' configuration (template.yaml, JwksFunction's Environment).
type Config struct {
	// KeyID is SIGNING_KEY_ID: the KMS key login signs with, published first.
	KeyID string
	// OtherKeyID is OTHER_SIGNING_KEY_ID (optional, "" for none): the second KMS key the
	// JWK set publishes during a key rotation, the next signing key before login signs
	// with it or the previous one until its tokens have expired (README, "Upgrading a
	// deployed stack to RS256 tokens / rotating the signing key").
	OtherKeyID string
	// Issuer is TOKEN_ISSUER, optional: unset, the URL each discovery request reached.
	Issuer string
}

// KeyIDs are the keys the JWK set publishes: KeyID, then OtherKeyID when set.
func (c Config) KeyIDs() []string {
	if c.OtherKeyID == "" {
		return []string{c.KeyID}
	}
	return []string{c.KeyID, c.OtherKeyID}
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid. OTHER_SIGNING_KEY_ID naming SIGNING_KEY_ID's key is
// refused (it would be published twice).
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, wiring.KeyID(&c.KeyID), wiring.Optional(&c.OtherKeyID, "OTHER_SIGNING_KEY_ID"),
		func(envvar.Lookup) error {
			if c.OtherKeyID != "" && c.OtherKeyID == c.KeyID {
				return &envvar.Error{Name: "OTHER_SIGNING_KEY_ID", Value: c.OtherKeyID, Want: "a key other than SIGNING_KEY_ID's (the other key of a rotation), or empty"}
			}
			return nil
		},
		wiring.Optional(&c.Issuer, "TOKEN_ISSUER"))
}

var table = wiring.Define("JwksFunction", "jwks",
	wiring.Route(login.RouteDiscovery, func(d *login.Documents) httpapi.Route { return d.Discovery }),
	wiring.Route(login.RouteJWKS, func(d *login.Documents) httpapi.Route { return d.JWKS }),
)

// Function is jwks as template.yaml declares it.
var Function = table.Function

// Build returns jwks' handler publishing keys (the public keys of cfg.KeyIDs), logging
// to log. Errors: an invalid issuer or key set.
func Build(cfg Config, log *slog.Logger, keys idtoken.JWKSet) (*lambdaevent.Function, error) {
	d, err := login.NewDocuments(cfg.Issuer, keys)
	if err != nil {
		return nil, err
	}
	return table.Bind(log, d), nil
}
