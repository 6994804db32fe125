package idtoken_test

import (
	"context"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/idtoken"
)

// TestHandler_ServesWhatTheAuthorizerFetches: an issuer URL with a path serves discovery
// and the JWK set; FetchJWKS follows jwks_uri as API Gateway does, and the keys it gets
// verify the issuer's tokens.
func TestHandler_ServesWhatTheAuthorizerFetches(t *testing.T) {
	f := newFixture(t)
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer srv.Close()
	iss := srv.URL + "/issuer"
	var err error
	if h, err = idtoken.Handler(iss, f.jwks); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(iss + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var d map[string]any
	if err := json.Unmarshal(body, &d); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("discovery %s (%s): %v", body, resp.Header.Get("Content-Type"), err)
	}
	if d["issuer"] != iss || d["jwks_uri"] != iss+"/.well-known/jwks.json" {
		t.Errorf("discovery %s", body)
	}
	if algs, _ := d["id_token_signing_alg_values_supported"].([]any); len(algs) != 1 || algs[0] != "ES256" {
		t.Errorf("algorithms %v", d["id_token_signing_alg_values_supported"])
	}
	set, err := idtoken.FetchJWKS(context.Background(), srv.Client(), iss)
	if err != nil {
		t.Fatal(err)
	}
	v, err := idtoken.NewVerifier(idtoken.VerifierConfig{Issuer: issuer, Audiences: []string{audience}, Keys: set, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(f.issue(t, "o-alice")); err != nil {
		t.Errorf("fetched keys do not verify the issuer's token: %v", err)
	}
	for _, path := range []string{"/.well-known/jwks.json", "/issuer/.well-known/other"} {
		if resp, err := http.Get(srv.URL + path); err != nil || resp.StatusCode != 404 {
			t.Errorf("GET %s: %v %v", path, resp.StatusCode, err)
		}
	}
	if _, err := idtoken.FetchJWKS(context.Background(), srv.Client(), iss+"/"); err == nil {
		t.Error("FetchJWKS accepted a discovery document naming another issuer")
	}
}

func TestJWK_RoundTripAndRejections(t *testing.T) {
	f := newFixture(t)
	jwk := f.jwks.Keys[0]
	if jwk.Kty != "EC" || jwk.Crv != "P-256" || jwk.Alg != "ES256" || jwk.Use != "sig" || jwk.Kid != kid ||
		len(jwk.X) != 43 || len(jwk.Y) != 43 {
		t.Fatalf("JWK %+v", jwk)
	}
	pub, err := jwk.PublicKey()
	if err != nil || !pub.Equal(f.signer.PublicKey()) {
		t.Fatalf("PublicKey = %v", err)
	}
	flip := func(s string) string {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		b[31] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := map[string]func(k *idtoken.JWK){
		"RSA":         func(k *idtoken.JWK) { k.Kty = "RSA" },
		"P384":        func(k *idtoken.JWK) { k.Crv = "P-384" },
		"EncUse":      func(k *idtoken.JWK) { k.Use = "enc" },
		"RS256Alg":    func(k *idtoken.JWK) { k.Alg = "RS256" },
		"ShortX":      func(k *idtoken.JWK) { k.X = k.X[:40] },
		"PaddedY":     func(k *idtoken.JWK) { k.Y += "=" },
		"OffTheCurve": func(k *idtoken.JWK) { k.Y = flip(k.Y) },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			k := jwk
			edit(&k)
			if _, err := k.PublicKey(); err == nil {
				t.Error("PublicKey accepted it")
			}
			if _, err := idtoken.NewVerifier(idtoken.VerifierConfig{Issuer: issuer, Audiences: []string{audience}, Keys: idtoken.JWKSet{Keys: []idtoken.JWK{k}}}); err == nil {
				t.Error("NewVerifier accepted it")
			}
		})
	}
	if _, err := idtoken.NewJWK(kid, &mustKey(t, elliptic.P384()).PublicKey); err == nil {
		t.Error("NewJWK accepted a P-384 key")
	}
	twice := idtoken.JWKSet{Keys: []idtoken.JWK{jwk, jwk}}
	if _, err := idtoken.Handler(issuer, twice); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("Handler with a repeated kid: %v", err)
	}
}
