package idtoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Paths an issuer URL serves, relative to the issuer (OpenID Connect Discovery 1.0 §4; the
// JWK set path is ours, named by jwks_uri).
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/.well-known/jwks.json"
)

// maxDocumentBytes bounds a fetched discovery document or JWK set.
const maxDocumentBytes = 64 << 10

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

// NewDiscovery returns the metadata of issuer: jwks_uri = issuer + JWKSPath, ES256 only,
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

// JWK is a P-256 public key as a JSON Web Key (RFC 7517 §4, RFC 7518 §6.2.1): x and y are
// the base64url (no padding) 32-byte big-endian coordinates.
type JWK struct {
	Kty string `json:"kty"` // "EC"
	Crv string `json:"crv"` // "P-256"
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Use string `json:"use"` // "sig"
	Alg string `json:"alg"` // "ES256"
}

// JWKSet is a JWK set document (RFC 7517 §5), served at JWKSPath.
type JWKSet struct {
	Keys []JWK `json:"keys"`
}

// NewJWK renders pub (P-256) as the JWK named kid; an error for another curve or an empty kid.
func NewJWK(kid string, pub *ecdsa.PublicKey) (JWK, error) {
	if kid == "" {
		return JWK{}, errors.New("idtoken: JWK needs a kid")
	}
	if err := CheckP256(pub); err != nil {
		return JWK{}, err
	}
	raw, err := pub.Bytes() // 0x04 || X || Y
	if err != nil {
		return JWK{}, fmt.Errorf("idtoken: JWK: %w", err)
	}
	return JWK{
		Kty: "EC", Crv: "P-256", Kid: kid, Use: "sig", Alg: Algorithm,
		X: base64.RawURLEncoding.EncodeToString(raw[1:33]),
		Y: base64.RawURLEncoding.EncodeToString(raw[33:]),
	}, nil
}

// PublicKey parses k back into a P-256 key. Errors: kty other than EC, crv other than
// P-256, use other than sig or alg other than ES256 when present, coordinates that are not
// 32 bytes of unpadded base64url, or a point not on the curve.
func (k JWK) PublicKey() (*ecdsa.PublicKey, error) {
	switch {
	case k.Kty != "EC" || k.Crv != "P-256":
		return nil, fmt.Errorf("idtoken: JWK %q is %s/%s, want EC/P-256", k.Kid, k.Kty, k.Crv)
	case k.Use != "" && k.Use != "sig":
		return nil, fmt.Errorf("idtoken: JWK %q has use %q", k.Kid, k.Use)
	case k.Alg != "" && k.Alg != Algorithm:
		return nil, fmt.Errorf("idtoken: JWK %q has alg %q", k.Kid, k.Alg)
	}
	x, errX := base64.RawURLEncoding.DecodeString(k.X)
	y, errY := base64.RawURLEncoding.DecodeString(k.Y)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return nil, fmt.Errorf("idtoken: JWK %q: x and y must be 32 bytes of base64url", k.Kid)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, fmt.Errorf("idtoken: JWK %q: not a P-256 point", k.Kid)
	}
	return pub, nil
}

// Check reports whether s is a JWK set the JWT authorizer can use: an error for a bad
// key (see JWK.PublicKey), an empty or a repeated kid.
func (s JWKSet) Check() error {
	_, err := s.keys()
	return err
}

// keys parses every key of s by kid; an error for a bad key, an empty or a repeated kid.
func (s JWKSet) keys() (map[string]*ecdsa.PublicKey, error) {
	out := make(map[string]*ecdsa.PublicKey, len(s.Keys))
	for _, k := range s.Keys {
		if k.Kid == "" || out[k.Kid] != nil {
			return nil, fmt.Errorf("idtoken: JWK set: kid %q empty or repeated", k.Kid)
		}
		pub, err := k.PublicKey()
		if err != nil {
			return nil, err
		}
		out[k.Kid] = pub
	}
	return out, nil
}

// Handler serves the documents of issuer: GET <issuer path>/.well-known/openid-configuration
// (NewDiscovery(issuer)) and GET <issuer path>/.well-known/jwks.json (set), as
// application/json, cacheable for an hour; 404 otherwise. It is for the local stack and
// tests; deployed, a small HTTP API answers the same two documents.
func Handler(issuer string, set JWKSet) (http.Handler, error) {
	if err := checkIssuerURL(issuer); err != nil {
		return nil, err
	}
	if _, err := set.keys(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(issuer)
	base := strings.TrimSuffix(u.Path, "/")
	discovery, err := json.Marshal(NewDiscovery(issuer))
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for path, doc := range map[string][]byte{base + DiscoveryPath: discovery, base + JWKSPath: jwks} {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "public, max-age=3600")
			w.Write(doc)
		})
	}
	return mux, nil
}

// FetchJWKS does what API Gateway does with an issuer URL: it reads the discovery document
// at issuer + DiscoveryPath, checks that its issuer is exactly issuer, and reads the JWK
// set at its jwks_uri. Errors: transport failures, non-200 answers, documents over 64 KiB
// or not the documented JSON, an issuer mismatch, a bad key.
func FetchJWKS(ctx context.Context, hc *http.Client, issuer string) (JWKSet, error) {
	var d Discovery
	if err := getJSON(ctx, hc, strings.TrimSuffix(issuer, "/")+DiscoveryPath, &d); err != nil {
		return JWKSet{}, err
	}
	if d.Issuer != issuer {
		return JWKSet{}, fmt.Errorf("idtoken: discovery names issuer %q, want %q", d.Issuer, issuer)
	}
	var set JWKSet
	if err := getJSON(ctx, hc, d.JWKSURI, &set); err != nil {
		return JWKSet{}, err
	}
	if _, err := set.keys(); err != nil {
		return JWKSet{}, err
	}
	return set, nil
}

func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("idtoken: GET %q: %w", u, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("idtoken: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("idtoken: GET %s: HTTP %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil || len(body) > maxDocumentBytes || json.Unmarshal(body, v) != nil {
		return fmt.Errorf("idtoken: GET %s: not a JSON document of at most %d bytes", u, maxDocumentBytes)
	}
	return nil
}
