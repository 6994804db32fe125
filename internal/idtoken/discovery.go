package idtoken

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Paths an issuer URL serves, relative to the issuer (OpenID Connect Discovery 1.0 §4; the
// JWK set path is ours, named by jwks_uri).
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/.well-known/jwks.json"
)

// Discovery is the OpenID provider metadata an issuer serves at DiscoveryPath (OpenID
// Connect Discovery 1.0 §3). API Gateway's JWT authorizer reads issuer and jwks_uri; the
// other fields say what the tokens are. There is no authorization_endpoint: tokens come
// from POST /auth/wechat, not from an OAuth flow.
type Discovery struct {
	Issuer                           string   `json:"issuer"`
	JWKSURI                          string   `json:"jwks_uri"`
	ResponseTypesSupported           []string `json:"response_types_supported"`
	SubjectTypesSupported            []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported"`
	ClaimsSupported                  []string `json:"claims_supported"`
}

// NewDiscovery returns the metadata of issuer: jwks_uri = issuer + JWKSPath, RS256 only,
// public subjects, claims iss, sub, aud, iat, exp.
func NewDiscovery(issuer string) Discovery {
	return Discovery{
		Issuer:                           issuer,
		JWKSURI:                          strings.TrimSuffix(issuer, "/") + JWKSPath,
		ResponseTypesSupported:           []string{"id_token"},
		SubjectTypesSupported:            []string{"public"},
		IDTokenSigningAlgValuesSupported: []string{Algorithm},
		ClaimsSupported:                  []string{"iss", "sub", "aud", "iat", "exp"},
	}
}

// JWK is an RSA public key as a JSON Web Key (RFC 7517 §4, RFC 7518 §6.3.1): n and e
// are the modulus and the public exponent, big-endian in the fewest octets, base64url
// without padding (for a 2048-bit key, n is 342 characters and e is "AQAB", 65537).
type JWK struct {
	Kty string `json:"kty"` // "RSA"
	N   string `json:"n"`
	E   string `json:"e"`
	Kid string `json:"kid"`
	Use string `json:"use"` // "sig"
	Alg string `json:"alg"` // "RS256"
}

// JWKSet is a JWK set document (RFC 7517 §5), served at JWKSPath: the signing key's
// JWK, and during a key rotation the other key's (README, "Upgrading a deployed stack
// to RS256 tokens / rotating the signing key").
type JWKSet struct {
	Keys []JWK `json:"keys"`
}

// NewJWK renders pub (RSA 2048) as the JWK named kid; an error for another key size or
// an empty kid.
func NewJWK(kid string, pub *rsa.PublicKey) (JWK, error) {
	if kid == "" {
		return JWK{}, errors.New("idtoken: JWK needs a kid")
	}
	if err := CheckRSA2048(pub); err != nil {
		return JWK{}, err
	}
	return JWK{
		Kty: "RSA", Kid: kid, Use: "sig", Alg: Algorithm,
		N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}, nil
}

// PublicKey parses k back into an RSA 2048 key. Errors: kty other than RSA, use other
// than sig or alg other than RS256 when present, n that is not 256 octets of unpadded
// base64url with a non-zero first octet, e that is not 1 to 4 octets without a leading
// zero, or an even or too small exponent.
func (k JWK) PublicKey() (*rsa.PublicKey, error) {
	switch {
	case k.Kty != "RSA":
		return nil, fmt.Errorf("idtoken: JWK %q is %s, want RSA", k.Kid, k.Kty)
	case k.Use != "" && k.Use != "sig":
		return nil, fmt.Errorf("idtoken: JWK %q has use %q", k.Kid, k.Use)
	case k.Alg != "" && k.Alg != Algorithm:
		return nil, fmt.Errorf("idtoken: JWK %q has alg %q", k.Kid, k.Alg)
	}
	n, errN := base64.RawURLEncoding.DecodeString(k.N)
	e, errE := base64.RawURLEncoding.DecodeString(k.E)
	if errN != nil || errE != nil || len(n) != KeyBits/8 || n[0] == 0 || len(e) == 0 || len(e) > 4 || e[0] == 0 {
		return nil, fmt.Errorf("idtoken: JWK %q: n must be %d octets and e 1 to 4, base64url, no leading zero", k.Kid, KeyBits/8)
	}
	exp := new(big.Int).SetBytes(e).Int64()
	if exp < 3 || exp%2 == 0 {
		return nil, fmt.Errorf("idtoken: JWK %q: exponent %d is not an odd number of 3 or more", k.Kid, exp)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp)}, nil
}

// Check reports whether s is a JWK set the JWT authorizer can use: an error for an
// empty set, a bad key (see JWK.PublicKey), an empty or a repeated kid.
func (s JWKSet) Check() error {
	if len(s.Keys) == 0 {
		return errors.New("idtoken: JWK set: no key")
	}
	seen := make(map[string]bool, len(s.Keys))
	for _, k := range s.Keys {
		if k.Kid == "" || seen[k.Kid] {
			return fmt.Errorf("idtoken: JWK set: kid %q empty or repeated", k.Kid)
		}
		seen[k.Kid] = true
		if _, err := k.PublicKey(); err != nil {
			return err
		}
	}
	return nil
}
