package idtoken_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/stockguard/stockguard/internal/idtoken"
)

const (
	issuer   = "https://abc123.execute-api.cn-north-1.amazonaws.com.cn"
	audience = "wxd678efh567hg6787"
	kid      = "kms-2026-11"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type fixture struct {
	signer *idtoken.KeySigner
	other  *idtoken.KeySigner
	issuer *idtoken.Issuer
	jwks   idtoken.JWKSet
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	var f fixture
	var err error
	if f.signer, err = idtoken.GenerateKeySigner(); err != nil {
		t.Fatal(err)
	}
	if f.other, err = idtoken.GenerateKeySigner(); err != nil {
		t.Fatal(err)
	}
	if f.issuer, err = idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: issuer, Audience: audience, KeyID: kid, Now: func() time.Time { return t0 }}, f.signer); err != nil {
		t.Fatal(err)
	}
	jwk, err := idtoken.NewJWK(kid, f.signer.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	f.jwks = idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}
	return f
}

func (f fixture) issue(t *testing.T, sub string) string {
	t.Helper()
	tok, err := f.issuer.Issue(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

func segment(t *testing.T, s string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestIssue_TokenHasDocumentedShape checks a token with plain crypto, apart from the JWT
// library: header, claims, and an RS256 signature (RSASSA-PKCS1-v1_5, SHA-256, 256
// bytes) over header.payload that verifies under the signer's key and under the key
// its JWK publishes.
func TestIssue_TokenHasDocumentedShape(t *testing.T) {
	f := newFixture(t)
	tok, err := f.issuer.Issue(context.Background(), "o-alice")
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 7200 {
		t.Errorf("expiresIn %d", tok.ExpiresIn)
	}
	parts := strings.Split(tok.Token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok.Token)
	}
	h, c := segment(t, parts[0]), segment(t, parts[1])
	if h["alg"] != "RS256" || h["kid"] != kid || h["typ"] != "JWT" || len(h) != 3 {
		t.Errorf("header %v", h)
	}
	want := map[string]any{"iss": issuer, "sub": "o-alice", "aud": audience, "iat": float64(t0.Unix()), "exp": float64(t0.Unix() + 7200)}
	if len(c) != len(want) {
		t.Errorf("claims %v, want %v", c, want)
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %v, want %v", k, c[k], v)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 256 {
		t.Fatalf("signature %d bytes, %v", len(sig), err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	published, err := f.jwks.Keys[0].PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, pub := range []*rsa.PublicKey{f.signer.PublicKey(), published} {
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
			t.Errorf("signature does not verify: %v", err)
		}
	}
	if err := rsa.VerifyPKCS1v15(f.other.PublicKey(), crypto.SHA256, sum[:], sig); err == nil {
		t.Error("signature verifies under another key")
	}
}

func TestNewIssuer_RejectsBadConfig(t *testing.T) {
	s, err := idtoken.GenerateKeySigner()
	if err != nil {
		t.Fatal(err)
	}
	ok := idtoken.IssuerConfig{Issuer: issuer, Audience: audience, KeyID: kid}
	tests := map[string]func(c *idtoken.IssuerConfig){
		"HTTPIssuer":      func(c *idtoken.IssuerConfig) { c.Issuer = "http://issuer.example.com" },
		"IssuerWithQuery": func(c *idtoken.IssuerConfig) { c.Issuer = issuer + "?a=b" },
		"RelativeIssuer":  func(c *idtoken.IssuerConfig) { c.Issuer = "/issuer" },
		"NoAudience":      func(c *idtoken.IssuerConfig) { c.Audience = "" },
		"NoKeyID":         func(c *idtoken.IssuerConfig) { c.KeyID = "" },
		"NegativeTTL":     func(c *idtoken.IssuerConfig) { c.TTL = -time.Second },
		"FractionalTTL":   func(c *idtoken.IssuerConfig) { c.TTL = 1500 * time.Millisecond },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := ok
			edit(&cfg)
			if _, err := idtoken.NewIssuer(cfg, s); err == nil {
				t.Error("NewIssuer accepted it")
			}
		})
	}
	if _, err := idtoken.NewIssuer(ok, nil); err == nil {
		t.Error("NewIssuer accepted a nil signer")
	}
	local := ok
	local.Issuer = "http://127.0.0.1:3000/issuer"
	if _, err := idtoken.NewIssuer(local, s); err != nil {
		t.Errorf("local http issuer refused: %v", err)
	}
	for _, bits := range []int{1024, 3072} {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := idtoken.NewKeySigner(k); err == nil {
			t.Errorf("NewKeySigner accepted an RSA %d key", bits)
		}
	}
	if _, err := s.Sign(context.Background(), []byte("short")); err == nil {
		t.Error("KeySigner signed a 5-byte digest")
	}
}

// badSigner returns a signature of the wrong size.
type badSigner struct{ n int }

func (b badSigner) Sign(context.Context, []byte) ([]byte, error) { return make([]byte, b.n), nil }

func TestIssue_RefusesAWrongSizeSignatureOrSubject(t *testing.T) {
	for _, n := range []int{0, 64, 255, 257, 512} {
		iss, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: issuer, Audience: audience, KeyID: kid}, badSigner{n})
		if err != nil {
			t.Fatal(err)
		}
		if tok, err := iss.Issue(context.Background(), "o-alice"); err == nil {
			t.Errorf("%d-byte signature: issued %q", n, tok.Token)
		}
	}
	f := newFixture(t)
	for _, sub := range []string{"", strings.Repeat("o", 129)} {
		if _, err := f.issuer.Issue(context.Background(), sub); err == nil {
			t.Errorf("subject of %d bytes accepted", len(sub))
		}
	}
}

// A kept token is reusable for its own subject while at least half its lifetime is
// left, and never when another issuer, audience or key would have minted it.
func TestReusable_OnlyThisIssuersTokenForItsSubjectWithHalfItsLifeLeft(t *testing.T) {
	f := newFixture(t)
	token := f.issue(t, "o-alice")
	at := func(now time.Time, cfg func(*idtoken.IssuerConfig)) *idtoken.Issuer {
		c := idtoken.IssuerConfig{Issuer: issuer, Audience: audience, KeyID: kid, Now: func() time.Time { return now }}
		if cfg != nil {
			cfg(&c)
		}
		iss, err := idtoken.NewIssuer(c, f.signer)
		if err != nil {
			t.Fatal(err)
		}
		return iss
	}
	for _, tc := range []struct {
		name    string
		issuer  *idtoken.Issuer
		subject string
		left    int64 // 0: not reusable
	}{
		{"at once", at(t0, nil), "o-alice", 7200},
		{"with half its life left", at(t0.Add(3600*time.Second), nil), "o-alice", 3600},
		{"with less than half left", at(t0.Add(3601*time.Second), nil), "o-alice", 0},
		{"expired", at(t0.Add(7201*time.Second), nil), "o-alice", 0},
		{"issued in the future (a clock set back)", at(t0.Add(-time.Second), nil), "o-alice", 0},
		{"another subject", at(t0, nil), "o-bob", 0},
		{"another key id", at(t0, func(c *idtoken.IssuerConfig) { c.KeyID = "kms-2026-12" }), "o-alice", 0},
		{"another audience", at(t0, func(c *idtoken.IssuerConfig) { c.Audience = "wx0000000000000000" }), "o-alice", 0},
		{"another issuer", at(t0, func(c *idtoken.IssuerConfig) { c.Issuer = "https://other.example.com" }), "o-alice", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.issuer.Reusable(token, tc.subject)
			if ok != (tc.left > 0) || ok && (got.Token != token || got.ExpiresIn != tc.left) {
				t.Errorf("Reusable: %v, expiresIn %d; want reusable %v with %d s left", ok, got.ExpiresIn, tc.left > 0, tc.left)
			}
		})
	}
	if _, ok := at(t0, nil).Reusable("not.a.token", "o-alice"); ok {
		t.Error("a malformed token is reusable")
	}
	// A token kept from before the move to RS256: ES256, this issuer's kid and claims.
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	es256 := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": issuer, "sub": "o-alice", "aud": audience, "iat": t0.Unix(), "exp": t0.Unix() + 7200})
	es256.Header["kid"] = kid
	old, err := es256.SignedString(ec)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := at(t0, nil).Reusable(old, "o-alice"); ok {
		t.Error("an ES256 token is reusable: the buyer would keep a token the JWT authorizer refuses")
	}
}
