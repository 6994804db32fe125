// Package idtoken issues the JWTs that POST /auth/wechat answers (docs/contract.md):
// RS256 (RFC 7518 §3.3: RSASSA-PKCS1-v1_5 with SHA-256, a 2048-bit RSA key, a 256-byte
// signature), sub = the buyer's openid, aud = the mini-program app id, iss = the issuer
// URL, iat, exp = iat + 7200 s, kid naming the key. RS256 because API Gateway's HTTP API
// JWT authorizer checks a token's signature with RSA-based algorithms only ("Control
// access to HTTP APIs with JWT authorizers in API Gateway", step 3 of its workflow). The
// private key never sits in the function: a Signer signs a digest, with AWS KMS
// (kmssign.Signer: kms:Sign on an RSA_2048 key with RSASSA_PKCS1_V1_5_SHA_256) when
// deployed or an in-memory key (KeySigner) locally.
//
// An issuer URL must serve OpenID discovery (OpenID Connect Discovery 1.0 §4: Issuer +
// "/.well-known/openid-configuration", whose jwks_uri lists the public keys as JWKs,
// RFC 7517) for API Gateway's JWT authorizer to accept the tokens; Discovery and JWKSet
// are those documents. Nothing here checks tokens: the local gateway's authorizer
// (tools/internal/apigw) is written from API Gateway's rules, not from this package.
package idtoken

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Algorithm is the JWS alg of every token (RFC 7518 §3.3, RS256).
const Algorithm = "RS256"

// KeyBits is the size of the signing key's modulus: 2048 bits (KMS KeySpec RSA_2048).
const KeyBits = 2048

// DefaultTTL is a token's lifetime when IssuerConfig.TTL is zero: 7200 seconds
// (docs/contract.md: "expiresIn": 7200).
const DefaultTTL = 7200 * time.Second

// signatureSize is the length of an RS256 signature under a 2048-bit key: 256 bytes,
// big-endian, as long as the modulus (RFC 8017 §8.2.1).
const signatureSize = KeyBits / 8

// Signer signs a SHA-256 digest (32 bytes) with RSASSA-PKCS1-v1_5 under a 2048-bit RSA
// private key and returns the signature (256 bytes, RFC 8017 §8.2.1), which is the JWS
// signature as it is (RFC 7518 §3.3). kmssign.Signer and KeySigner implement it.
type Signer interface {
	Sign(ctx context.Context, digest []byte) ([]byte, error)
}

// IssuerConfig is what an Issuer stamps on every token.
type IssuerConfig struct {
	// Issuer is the iss claim: an https URL (http only for 127.0.0.1/localhost) without
	// query or fragment, the same string API Gateway's authorizer is configured with.
	Issuer string
	// Audience is the aud claim: the mini-program app id.
	Audience string
	// KeyID is the kid header: the kid of the signing key in the issuer's JWK set.
	KeyID string
	// TTL is exp − iat; zero means DefaultTTL. Whole seconds.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Issuer mints tokens. It is immutable and safe for concurrent use.
type Issuer struct {
	cfg    IssuerConfig
	signer Signer
}

// NewIssuer validates cfg (Issuer a URL as described, Audience and KeyID non-empty, TTL
// non-negative whole seconds) and returns an Issuer signing with signer.
func NewIssuer(cfg IssuerConfig, signer Signer) (*Issuer, error) {
	if err := CheckIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	switch {
	case cfg.Audience == "":
		return nil, errors.New("idtoken: config: Audience is required")
	case cfg.KeyID == "":
		return nil, errors.New("idtoken: config: KeyID is required")
	case cfg.TTL < 0 || cfg.TTL%time.Second != 0:
		return nil, fmt.Errorf("idtoken: config: TTL %v must be non-negative whole seconds", cfg.TTL)
	case signer == nil:
		return nil, errors.New("idtoken: config: a Signer is required")
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Issuer{cfg: cfg, signer: signer}, nil
}

// CheckIssuer returns an error unless issuer is an https URL without query, fragment
// or user info (an http one only on 127.0.0.1 or localhost, for the local stack): the
// issuers API Gateway's JWT authorizer accepts.
func CheckIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	local := u != nil && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost")
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		!(u.Scheme == "https" || u.Scheme == "http" && local) {
		return fmt.Errorf("idtoken: config: issuer %q must be an https URL without query or fragment (http only on 127.0.0.1)", issuer)
	}
	return nil
}

// Token is a minted token and its lifetime, the body of POST /auth/wechat's answer.
type Token struct {
	Token     string `json:"token"`     // compact JWS
	ExpiresIn int64  `json:"expiresIn"` // seconds until exp
}

// Issue mints a token for subject (the buyer's openid; 1..128 bytes). Errors: a bad
// subject; the Signer's error, wrapped; a signature that is not 256 bytes.
func (i *Issuer) Issue(ctx context.Context, subject string) (Token, error) {
	if subject == "" || len(subject) > 128 {
		return Token{}, errors.New("idtoken: subject must be 1..128 bytes")
	}
	now := i.cfg.Now().Truncate(time.Second)
	// aud is a single string (RFC 7519 §4.1.3 allows it), as the claim API Gateway passes on.
	claims := jwt.MapClaims{
		"iss": i.cfg.Issuer,
		"sub": subject,
		"aud": i.cfg.Audience,
		"iat": now.Unix(),
		"exp": now.Add(i.cfg.TTL).Unix(),
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = i.cfg.KeyID
	signingInput, err := t.SigningString()
	if err != nil {
		return Token{}, fmt.Errorf("idtoken: encode: %w", err)
	}
	digest := sha256.Sum256([]byte(signingInput))
	sig, err := i.signer.Sign(ctx, digest[:])
	if err != nil {
		return Token{}, fmt.Errorf("idtoken: sign: %w", err)
	}
	if len(sig) != signatureSize {
		return Token{}, fmt.Errorf("idtoken: signer returned %d bytes, want %d", len(sig), signatureSize)
	}
	return Token{
		Token:     signingInput + "." + base64.RawURLEncoding.EncodeToString(sig),
		ExpiresIn: int64(i.cfg.TTL / time.Second),
	}, nil
}

// CheckRSA2048 returns an error unless pub is an RSA public key with a 2048-bit modulus.
func CheckRSA2048(pub *rsa.PublicKey) error {
	if pub == nil || pub.N == nil || pub.N.BitLen() != KeyBits {
		return errors.New("idtoken: key is not RSA 2048")
	}
	return nil
}

// Reusable reports whether token, one this Issuer minted earlier for subject (the
// caller vouches for where it was kept), may be answered again at now: its header is
// RS256 with this Issuer's kid (a token signed by another key or with another
// algorithm, as before a key rotation or the move from ES256, is not: a new one is
// signed), its iss, aud and sub are this Issuer's and subject, and at least half its
// lifetime (TTL/2) is left, and no more than all of it. It returns the token with
// ExpiresIn the whole seconds left. The signature is not checked (the Issuer made it);
// a token that does not parse is not reusable.
func (i *Issuer) Reusable(token, subject string) (Token, bool) {
	var claims jwt.RegisteredClaims
	t, _, err := jwt.NewParser().ParseUnverified(token, &claims)
	if err != nil || t.Method.Alg() != Algorithm || t.Header["kid"] != i.cfg.KeyID ||
		claims.Issuer != i.cfg.Issuer || claims.Subject != subject ||
		len(claims.Audience) != 1 || claims.Audience[0] != i.cfg.Audience || claims.ExpiresAt == nil {
		return Token{}, false
	}
	left := claims.ExpiresAt.Sub(i.cfg.Now().Truncate(time.Second))
	if left < i.cfg.TTL/2 || left > i.cfg.TTL {
		return Token{}, false
	}
	return Token{Token: token, ExpiresIn: int64(left / time.Second)}, true
}
