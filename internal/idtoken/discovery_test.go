package idtoken_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/idtoken"
)

func TestNewDiscovery_NamesTheJWKSetAndRS256(t *testing.T) {
	d := idtoken.NewDiscovery(issuer + "/")
	if d.Issuer != issuer+"/" || d.JWKSURI != issuer+"/.well-known/jwks.json" {
		t.Errorf("discovery %+v", d)
	}
	if algs := d.IDTokenSigningAlgValuesSupported; len(algs) != 1 || algs[0] != "RS256" {
		t.Errorf("algorithms %v", algs)
	}
}

func TestJWK_RoundTripAndRejections(t *testing.T) {
	f := newFixture(t)
	jwk := f.jwks.Keys[0]
	// RFC 7518 §6.3.1: n is the 256-octet modulus (342 base64url characters), e 65537.
	if jwk.Kty != "RSA" || jwk.Alg != "RS256" || jwk.Use != "sig" || jwk.Kid != kid || len(jwk.N) != 342 || jwk.E != "AQAB" {
		t.Fatalf("JWK %+v", jwk)
	}
	pub, err := jwk.PublicKey()
	if err != nil || !pub.Equal(f.signer.PublicKey()) {
		t.Fatalf("PublicKey = %v", err)
	}
	leadingZero := func(s string) string {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return base64.RawURLEncoding.EncodeToString(append([]byte{0}, b...))
	}
	tests := map[string]func(k *idtoken.JWK){
		"EC":               func(k *idtoken.JWK) { k.Kty = "EC" },
		"EncUse":           func(k *idtoken.JWK) { k.Use = "enc" },
		"ES256Alg":         func(k *idtoken.JWK) { k.Alg = "ES256" },
		"ShortN":           func(k *idtoken.JWK) { k.N = k.N[:340] },
		"PaddedN":          func(k *idtoken.JWK) { k.N += "==" },
		"NWithLeadingZero": func(k *idtoken.JWK) { k.N = leadingZero(k.N) },
		"EWithLeadingZero": func(k *idtoken.JWK) { k.E = leadingZero(k.E) },
		"EvenExponent":     func(k *idtoken.JWK) { k.E = "AQAA" },
		"ExponentOne":      func(k *idtoken.JWK) { k.E = "AQ" },
		"NoExponent":       func(k *idtoken.JWK) { k.E = "" },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			k := jwk
			edit(&k)
			if _, err := k.PublicKey(); err == nil {
				t.Error("PublicKey accepted it")
			}
			if err := (idtoken.JWKSet{Keys: []idtoken.JWK{k}}).Check(); err == nil {
				t.Error("Check accepted it")
			}
		})
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idtoken.NewJWK(kid, &small.PublicKey); err == nil {
		t.Error("NewJWK accepted an RSA 1024 key")
	}
	if _, err := idtoken.NewJWK("", f.signer.PublicKey()); err == nil {
		t.Error("NewJWK accepted an empty kid")
	}
	other, err := idtoken.NewJWK("kms-2027-01", f.other.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if err := (idtoken.JWKSet{Keys: []idtoken.JWK{jwk, other}}).Check(); err != nil {
		t.Errorf("two keys during a rotation: %v", err)
	}
	if err := (idtoken.JWKSet{}).Check(); err == nil {
		t.Error("Check accepted an empty set")
	}
	if err := (idtoken.JWKSet{Keys: []idtoken.JWK{jwk, jwk}}).Check(); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("Check with a repeated kid: %v", err)
	}
}
