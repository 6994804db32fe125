package idtoken_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

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

func (f fixture) verifier(t *testing.T, now time.Time) *idtoken.Verifier {
	t.Helper()
	v, err := idtoken.NewVerifier(idtoken.VerifierConfig{Issuer: issuer, Audiences: []string{audience}, Keys: f.jwks, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return v
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
// library: header, claims, and an ES256 signature (r||s) over header.payload.
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
	if h["alg"] != "ES256" || h["kid"] != kid || h["typ"] != "JWT" || len(h) != 3 {
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
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %d bytes, %v", len(sig), err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(f.signer.PublicKey(), sum[:], r, s) {
		t.Error("signature does not verify under the signer's public key")
	}
}

// craft builds a token from raw parts, signed by sign over header.payload.
func craft(t *testing.T, header, claims map[string]any, sign func(input string) []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(claims)
	return input + "." + base64.RawURLEncoding.EncodeToString(sign(input))
}

func es256(t *testing.T, s *idtoken.KeySigner) func(string) []byte {
	return func(input string) []byte {
		sum := sha256.Sum256([]byte(input))
		sig, err := s.Sign(context.Background(), sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
}

var rsaKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// TestVerify_AsTheJWTAuthorizerDoes: the issuer's own token passes; everything the
// authorizer refuses is ErrInvalidToken.
func TestVerify_AsTheJWTAuthorizerDoes(t *testing.T) {
	f := newFixture(t)
	good := f.issue(t, "o-alice")
	header := func(edit func(h map[string]any)) map[string]any {
		h := map[string]any{"alg": "ES256", "typ": "JWT", "kid": kid}
		if edit != nil {
			edit(h)
		}
		return h
	}
	claims := func(edit func(c map[string]any)) map[string]any {
		c := map[string]any{"iss": issuer, "sub": "o-alice", "aud": audience, "iat": t0.Unix(), "exp": t0.Unix() + 7200}
		if edit != nil {
			edit(c)
		}
		return c
	}
	pubDER := f.signer.PublicKey()
	tampered := strings.Split(good, ".")
	tampered[1] = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(mustDecode(t, tampered[1])), "o-alice", "o-mallo", 1)))
	tests := []struct {
		name  string
		token string
		now   time.Time
		ok    bool
	}{
		{"IssuedToken", good, t0.Add(time.Minute), true},
		{"IssuedTokenWithBearer", "Bearer " + good, t0.Add(time.Minute), true},
		{"AudienceAsArray", craft(t, header(nil), claims(func(c map[string]any) { c["aud"] = []string{"other", audience} }), es256(t, f.signer)), t0, true},
		{"LastSecondBeforeExp", good, t0.Add(7200*time.Second - time.Second), true},
		{"AtExp", good, t0.Add(7200 * time.Second), false},
		{"Expired", good, t0.Add(3 * time.Hour), false},
		{"IssuedInTheFuture", good, t0.Add(-time.Minute), false},
		{"NotYetValid", craft(t, header(nil), claims(func(c map[string]any) { c["nbf"] = t0.Unix() + 60 }), es256(t, f.signer)), t0, false},
		{"NoExp", craft(t, header(nil), claims(func(c map[string]any) { delete(c, "exp") }), es256(t, f.signer)), t0, false},
		{"OtherIssuer", craft(t, header(nil), claims(func(c map[string]any) { c["iss"] = issuer + "/" }), es256(t, f.signer)), t0, false},
		{"OtherAudience", craft(t, header(nil), claims(func(c map[string]any) { c["aud"] = "wx0000000000000000" }), es256(t, f.signer)), t0, false},
		{"NoAudience", craft(t, header(nil), claims(func(c map[string]any) { delete(c, "aud") }), es256(t, f.signer)), t0, false},
		{"UnknownKid", craft(t, header(func(h map[string]any) { h["kid"] = "other" }), claims(nil), es256(t, f.signer)), t0, false},
		{"NoKid", craft(t, header(func(h map[string]any) { delete(h, "kid") }), claims(nil), es256(t, f.signer)), t0, false},
		{"SignedByAnotherKey", craft(t, header(nil), claims(nil), es256(t, f.other)), t0, false},
		{"TamperedClaims", strings.Join(tampered, "."), t0, false},
		{"AlgNone", craft(t, header(func(h map[string]any) { h["alg"] = "none" }), claims(nil), func(string) []byte { return nil }), t0, false},
		{"HS256WithThePublicKey", craft(t, header(func(h map[string]any) { h["alg"] = "HS256" }), claims(nil), func(in string) []byte {
			b, _ := pubDER.Bytes()
			m := hmac.New(sha256.New, b)
			m.Write([]byte(in))
			return m.Sum(nil)
		}), t0, false},
		{"RS256", craft(t, header(func(h map[string]any) { h["alg"] = "RS256" }), claims(nil), func(in string) []byte {
			k, err := rsaKey()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(in))
			sig, _ := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:])
			return sig
		}), t0, false},
		{"Garbage", "not.a.token", t0, false},
		{"Empty", "", t0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := f.verifier(t, tt.now).Verify(tt.token)
			if tt.ok {
				if err != nil || c.Subject != "o-alice" {
					t.Fatalf("Verify = %+v, %v", c, err)
				}
				return
			}
			if !errors.Is(err, idtoken.ErrInvalidToken) || c != nil {
				t.Fatalf("Verify = %+v, %v; want ErrInvalidToken", c, err)
			}
		})
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerify_ClaimsAsTheAuthorizerPassesThem(t *testing.T) {
	f := newFixture(t)
	c, err := f.verifier(t, t0).Verify(f.issue(t, "o-bob"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"iss": issuer, "sub": "o-bob", "aud": audience, "iat": "1796040000", "exp": "1796047200"}
	if len(c.All) != len(want) {
		t.Errorf("claims %v", c.All)
	}
	for k, v := range want {
		if c.All[k] != v {
			t.Errorf("claim %s = %q, want %q", k, c.All[k], v)
		}
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
	if _, err := idtoken.NewKeySigner(mustKey(t, elliptic.P384())); err == nil {
		t.Error("NewKeySigner accepted a P-384 key")
	}
}

// badSigner returns a signature of the wrong size.
type badSigner struct{ n int }

func (b badSigner) Sign(context.Context, []byte) ([]byte, error) { return make([]byte, b.n), nil }

func TestIssue_RefusesAWrongSizeSignatureOrSubject(t *testing.T) {
	for _, n := range []int{0, 63, 65, 72} {
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

func mustKey(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
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
}
