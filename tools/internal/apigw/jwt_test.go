package apigw_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/apigw"
)

const audience = "wx0000000000000001"

// issuer serves an OpenID discovery document and a JWK set written here by hand from
// RFC 7517 and RFC 7518 §6, not by the code that issues stockguard's tokens, and counts
// the fetches. Its keys may change while it runs.
type issuer struct {
	srv               *httptest.Server
	mu                sync.Mutex
	keys              []map[string]string
	discoveryIssuer   string // "" means the server's own URL
	down              bool
	discovery, jwkset int
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.discovery++
		if is.down {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		iss := is.discoveryIssuer
		if iss == "" {
			iss = is.srv.URL
		}
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": is.srv.URL + "/keys"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.jwkset++
		json.NewEncoder(w).Encode(map[string]any{"keys": is.keys})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// publish adds pub (RSA or EC P-256) to the key set under kid.
func (is *issuer) publish(kid string, pub any) {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	k := map[string]string{"kid": kid, "use": "sig"}
	switch pub := pub.(type) {
	case *rsa.PublicKey:
		k["kty"], k["n"], k["e"] = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		raw, _ := pub.Bytes()
		k["kty"], k["crv"], k["x"], k["y"] = "EC", "P-256", b64(raw[1:33]), b64(raw[33:])
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append(is.keys, k)
}

func (is *issuer) fetches() (int, int) {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.discovery, is.jwkset
}

var rsaKeys = sync.OnceValues(func() ([3]*rsa.PrivateKey, error) {
	var keys [3]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return keys, err
		}
		keys[i] = k
	}
	return keys, nil
})

// world is an issuer publishing RSA key "k1" and EC key "ec1", an authorizer trusting
// it on a clock at t0, and the private keys.
type world struct {
	is         *issuer
	auth       *apigw.JWTAuthorizer
	clock      *testkit.Clock
	k1, k2, k3 *rsa.PrivateKey
	ec         *ecdsa.PrivateKey
	iss        string
	t0         time.Time
}

func newWorld(t *testing.T) *world {
	t.Helper()
	keys, err := rsaKeys()
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{is: newIssuer(t), clock: testkit.NewClock(), k1: keys[0], k2: keys[1], k3: keys[2], ec: ec}
	w.iss, w.t0 = w.is.srv.URL, w.clock.Now()
	w.is.publish("k1", &w.k1.PublicKey)
	w.is.publish("ec1", &ec.PublicKey)
	w.auth, err = apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: w.iss, Audience: []string{audience, "other-client"}, Client: w.is.srv.Client(), Now: w.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// claims are a good token's claims, edited.
func (w *world) claims(edit func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{"iss": w.iss, "sub": "o-alice", "aud": audience, "iat": w.t0.Unix(), "exp": w.t0.Unix() + 7200}
	if edit != nil {
		edit(c)
	}
	return c
}

// sign makes a token of method with kid ("" for none) over claims, signed with key.
func sign(t *testing.T, method jwt.SigningMethod, kid string, claims jwt.MapClaims, key any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *world) authorize(token string) (map[string]string, error) {
	return w.auth.Authorize(context.Background(), token)
}

// Each rule of "Control access to HTTP APIs with JWT authorizers in API Gateway", one
// token against it at a time.
func TestAuthorize_TheRulesOfTheHTTPAPIJWTAuthorizer(t *testing.T) {
	w := newWorld(t)
	rs256 := func(edit func(jwt.MapClaims)) string {
		return sign(t, jwt.SigningMethodRS256, "k1", w.claims(edit), w.k1)
	}
	good := rs256(nil)
	pubDER, _ := x509.MarshalPKIXPublicKey(&w.k1.PublicKey)
	for _, tc := range []struct {
		name, identity string
		at             time.Duration // after t0
		ok             bool
	}{
		{"BearerToken", "Bearer " + good, 0, true},
		{"BareToken", good, time.Minute, true},
		{"RS512", sign(t, jwt.SigningMethodRS512, "k1", w.claims(nil), w.k1), 0, true},
		{"LowercaseBearer", "bearer " + good, 0, false},
		{"BearerAlone", "Bearer ", 0, false},
		{"NoToken", "", 0, false},
		{"Garbage", "not.a.token", 0, false},
		{"ES256WithTheRightKidAndClaims", sign(t, jwt.SigningMethodES256, "ec1", w.claims(nil), w.ec), 0, false},
		{"ES256UnderAnRSAKid", sign(t, jwt.SigningMethodES256, "k1", w.claims(nil), w.ec), 0, false},
		{"PS256", sign(t, jwt.SigningMethodPS256, "k1", w.claims(nil), w.k1), 0, false},
		{"RS256SignedByAnotherKeyWithTheRightKid", sign(t, jwt.SigningMethodRS256, "k1", w.claims(nil), w.k2), 0, false},
		{"AlgNone", sign(t, jwt.SigningMethodNone, "k1", w.claims(nil), jwt.UnsafeAllowNoneSignatureType), 0, false},
		{"HS256KeyedWithThePublicKey", sign(t, jwt.SigningMethodHS256, "k1", w.claims(nil), pubDER), 0, false},
		{"NoKid", sign(t, jwt.SigningMethodRS256, "", w.claims(nil), w.k1), 0, false},
		{"UnknownKid", sign(t, jwt.SigningMethodRS256, "k9", w.claims(nil), w.k1), 0, false},
		{"OtherIssuer", rs256(func(c jwt.MapClaims) { c["iss"] = w.iss + "/" }), 0, false},
		{"NoIssuer", rs256(func(c jwt.MapClaims) { delete(c, "iss") }), 0, false},
		{"SecondAudience", rs256(func(c jwt.MapClaims) { c["aud"] = "other-client" }), 0, true},
		{"AudienceArrayWithOneOfThem", rs256(func(c jwt.MapClaims) { c["aud"] = []string{"x", audience} }), 0, true},
		{"OtherAudience", rs256(func(c jwt.MapClaims) { c["aud"] = "wx0000000000000000" }), 0, false},
		{"ClientIDWhenNoAud", rs256(func(c jwt.MapClaims) { delete(c, "aud"); c["client_id"] = audience }), 0, true},
		{"OtherClientIDWhenNoAud", rs256(func(c jwt.MapClaims) { delete(c, "aud"); c["client_id"] = "x" }), 0, false},
		{"NeitherAudNorClientID", rs256(func(c jwt.MapClaims) { delete(c, "aud") }), 0, false},
		{"AudWinsOverClientID", rs256(func(c jwt.MapClaims) { c["aud"] = "x"; c["client_id"] = audience }), 0, false},
		{"LastSecondBeforeExp", good, 7199 * time.Second, true},
		{"AtExp", good, 7200 * time.Second, false},
		{"NoExp", rs256(func(c jwt.MapClaims) { delete(c, "exp") }), 0, false},
		{"NotBeforeInThePast", rs256(func(c jwt.MapClaims) { c["nbf"] = w.t0.Unix() - 1 }), 0, true},
		{"NotBeforeInTheFuture", rs256(func(c jwt.MapClaims) { c["nbf"] = w.t0.Unix() + 60 }), 0, false},
		{"IssuedInTheFuture", rs256(func(c jwt.MapClaims) { c["iat"] = w.t0.Unix() + 60 }), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: w.iss, Audience: []string{audience, "other-client"}, Client: w.is.srv.Client(),
				Now: func() time.Time { return w.t0.Add(tc.at) }})
			if err != nil {
				t.Fatal(err)
			}
			claims, err := a.Authorize(context.Background(), tc.identity)
			if tc.ok && (err != nil || claims["sub"] != "o-alice") {
				t.Errorf("Authorize = %v, %v; want the claims", claims, err)
			}
			if !tc.ok && (!errors.Is(err, apigw.ErrUnauthorized) || claims != nil) {
				t.Errorf("Authorize = %v, %v; want ErrUnauthorized", claims, err)
			}
		})
	}
}

// The claims reach the integration as strings: numbers in decimal, others as JSON.
func TestAuthorize_ClaimsAsAPIGatewayPassesThem(t *testing.T) {
	w := newWorld(t)
	claims, err := w.authorize(sign(t, jwt.SigningMethodRS256, "k1", w.claims(func(c jwt.MapClaims) { c["groups"] = []string{"a", "b"} }), w.k1))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"iss": w.iss, "sub": "o-alice", "aud": audience, "iat": itoa(w.t0.Unix()), "exp": itoa(w.t0.Unix() + 7200), "groups": `["a","b"]`}
	if len(claims) != len(want) {
		t.Errorf("claims %v, want %v", claims, want)
	}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %q, want %q", k, claims[k], v)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// The key set is cached two hours on the authorizer's clock: a key published after the
// first fetch is not seen, and its tokens are refused, until the cache expires; the
// set is fetched once per two hours, not per token or per unknown kid.
func TestAuthorize_KeysAreCachedTwoHoursOnTheClock(t *testing.T) {
	w := newWorld(t)
	if _, err := w.authorize(sign(t, jwt.SigningMethodRS256, "k1", w.claims(nil), w.k1)); err != nil {
		t.Fatal(err)
	}
	w.is.publish("k3", &w.k3.PublicKey)
	at := func(d time.Duration) string {
		return sign(t, jwt.SigningMethodRS256, "k3", jwt.MapClaims{"iss": w.iss, "aud": audience, "sub": "o-bob", "exp": w.t0.Add(d).Unix() + 600}, w.k3)
	}
	if _, err := w.authorize(at(0)); !errors.Is(err, apigw.ErrUnauthorized) {
		t.Errorf("a key published after the fetch: %v, want refused until the cache expires", err)
	}
	w.clock.Advance(apigw.KeyCacheTTL - time.Second)
	if _, err := w.authorize(at(apigw.KeyCacheTTL)); !errors.Is(err, apigw.ErrUnauthorized) {
		t.Errorf("one second before the cache expires: %v, want refused", err)
	}
	if d, k := w.is.fetches(); d != 1 || k != 1 {
		t.Errorf("%d discovery and %d key set fetches before the cache expired, want 1 and 1", d, k)
	}
	w.clock.Advance(time.Second)
	if claims, err := w.authorize(at(apigw.KeyCacheTTL)); err != nil || claims["sub"] != "o-bob" {
		t.Errorf("once the cache expired: %v, %v; want the new key seen", claims, err)
	}
	if d, k := w.is.fetches(); d != 2 || k != 2 {
		t.Errorf("%d discovery and %d key set fetches, want 2 and 2", d, k)
	}
}

// A failed fetch caches nothing: tokens are refused while the issuer fails, and the
// first token after it recovers fetches again. A discovery document naming another
// issuer is a failed fetch.
func TestAuthorize_AFailedFetchIsRefusedAndNotCached(t *testing.T) {
	w := newWorld(t)
	token := sign(t, jwt.SigningMethodRS256, "k1", w.claims(func(c jwt.MapClaims) { c["exp"] = w.t0.Add(3 * apigw.KeyCacheTTL).Unix() }), w.k1)
	for _, fail := range []func(on bool){
		func(on bool) { w.is.down = on },
		func(on bool) { w.is.discoveryIssuer = map[bool]string{true: w.iss + "/other", false: ""}[on] },
	} {
		w.is.mu.Lock()
		fail(true)
		w.is.mu.Unlock()
		if _, err := w.authorize(token); !errors.Is(err, apigw.ErrUnauthorized) {
			t.Errorf("while the issuer fails: %v, want refused", err)
		}
		w.is.mu.Lock()
		fail(false)
		w.is.mu.Unlock()
		if _, err := w.authorize(token); err != nil {
			t.Errorf("once the issuer answers: %v", err)
		}
		w.clock.Advance(apigw.KeyCacheTTL)
	}
}

// Many requests at once on a cold cache fetch the key set once.
func TestAuthorize_ConcurrentTokensFetchTheKeysOnce(t *testing.T) {
	w := newWorld(t)
	token := sign(t, jwt.SigningMethodRS256, "k1", w.claims(nil), w.k1)
	var mu sync.Mutex
	accepted := 0
	testkit.Parallel(32, func(int) {
		if _, err := w.authorize("Bearer " + token); err == nil {
			mu.Lock()
			accepted++
			mu.Unlock()
		}
	})
	if d, k := w.is.fetches(); accepted != 32 || d != 1 || k != 1 {
		t.Errorf("%d of 32 accepted with %d discovery and %d key set fetches, want 32 with 1 and 1", accepted, d, k)
	}
}

func TestNewJWTAuthorizer_RefusesAnIncompleteConfiguration(t *testing.T) {
	for _, cfg := range []apigw.JWTConfig{
		{Audience: []string{audience}},
		{Issuer: "https://issuer.example"},
		{Issuer: "https://issuer.example", Audience: []string{""}},
	} {
		if _, err := apigw.NewJWTAuthorizer(cfg); err == nil {
			t.Errorf("NewJWTAuthorizer(%+v) accepted it", cfg)
		}
	}
}
