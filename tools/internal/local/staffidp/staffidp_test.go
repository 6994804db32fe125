package staffidp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/apigw"
	"github.com/stockguard/stockguard/tools/internal/local/staffidp"
)

const prefix = "/_local/oidc"

var accounts = []staffidp.Account{
	{Username: "mei", Password: "owner-pass-1", Groups: []string{"owner"}},
	{Username: "li", Password: "viewer-pass-1", Groups: []string{"viewer"}},
}

// provider serves a staff provider at <server>/_local/oidc.
func provider(t *testing.T) (issuer string) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	issuer = srv.URL + prefix
	p, err := staffidp.New(staffidp.Config{Issuer: issuer, Accounts: accounts, RedirectPath: "/console/"})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(prefix+"/", http.StripPrefix(prefix, p))
	return issuer
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// signIn walks the browser's part of the flow: the authorization request with
// challenge, the login page's form, the callback; it returns the redirect to the
// console, or the status where the walk stopped.
func signIn(t *testing.T, issuer, challenge, username, password string) (*url.URL, int) {
	t.Helper()
	q := url.Values{"client_id": {staffidp.ClientID}, "response_type": {"code"}, "scope": {"openid"},
		"redirect_uri": {"http://127.0.0.1:3000/console/"}, "state": {"s1"}}
	if challenge != "" {
		q.Set("code_challenge", challenge)
		q.Set("code_challenge_method", "S256")
	}
	resp, err := noRedirects.Get(issuer + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	login, err := resp.Location()
	if err != nil || !strings.HasPrefix(login.String(), issuer+"/login?") {
		return login, resp.StatusCode
	}
	resp, err = noRedirects.PostForm(issuer+"/login", url.Values{"authRequestID": {login.Query().Get("authRequestID")},
		"username": {username}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, resp.StatusCode
	}
	callback, _ := resp.Location()
	if resp, err = noRedirects.Get(callback.String()); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := resp.Location()
	return back, resp.StatusCode
}

// exchange posts the code with verifier to the token endpoint, as a public client.
func exchange(t *testing.T, issuer, code, verifier string) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(issuer+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {"http://127.0.0.1:3000/console/"}, "client_id": {staffidp.ClientID}, "code_verifier": {verifier}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// userinfo asks the userinfo endpoint with the access token.
func userinfo(t *testing.T, issuer, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", issuer+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// The whole flow: the code reaches the console's page with its state, is exchanged
// once with the right verifier, and the access token passes API Gateway's JWT
// authorizer with the console's client id, carrying the Cognito access token's claims.
func TestSignIn_CodeWithPKCEGivesAnAccessTokenTheAuthorizerTakes(t *testing.T) {
	issuer := provider(t)
	const verifier = "a-verifier-of-at-least-43-characters-0123456789"
	back, status := signIn(t, issuer, s256(verifier), "mei", "owner-pass-1")
	if back == nil || back.Query().Get("code") == "" || back.Query().Get("state") != "s1" || back.Path != "/console/" {
		t.Fatalf("redirect %v (%d); want the console's page with a code and the state", back, status)
	}
	code := back.Query().Get("code")
	if st, body := exchange(t, issuer, code, "another-verifier-of-at-least-43-characters-0123"); st != http.StatusBadRequest {
		t.Errorf("wrong verifier: %d %v; want 400", st, body)
	}
	st, body := exchange(t, issuer, code, verifier)
	if st != http.StatusOK {
		t.Fatalf("token: %d %v", st, body)
	}
	auth, err := apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: issuer, Audience: []string{staffidp.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := auth.Authorize(context.Background(), "Bearer "+body["access_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"token_use": "access", "username": "mei", "client_id": staffidp.ClientID, "cognito:groups": `["owner"]`, "iss": issuer}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %q, want %q (claims %v)", k, claims[k], v, claims)
		}
	}
	if st, _ := exchange(t, issuer, code, verifier); st != http.StatusBadRequest {
		t.Errorf("the code again: %d; want 400 (a code is used once)", st)
	}
	for token, want := range map[string]int{body["access_token"].(string): http.StatusOK, "not-a-token": http.StatusUnauthorized} {
		st, info := userinfo(t, issuer, token)
		if st != want || (want == http.StatusOK && fmt.Sprint(info["cognito:groups"]) != "[owner]") {
			t.Errorf("userinfo with %.12s…: %d %v, want %d (and mei's groups)", token, st, info, want)
		}
	}
	other, _ := apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: issuer, Audience: []string{"wx0000000000000001"}})
	if _, err := other.Authorize(context.Background(), "Bearer "+body["access_token"].(string)); err == nil {
		t.Error("an authorizer for another audience took the console's token")
	}
}

// A wrong password signs nobody in; an authorization request without a PKCE challenge
// is refused before any login page.
func TestSignIn_RefusesWrongPasswordsAndRequestsWithoutPKCE(t *testing.T) {
	issuer := provider(t)
	if back, status := signIn(t, issuer, s256("v-0123456789012345678901234567890123456789"), "mei", "viewer-pass-1"); status != http.StatusUnauthorized {
		t.Errorf("wrong password: %v %d; want 401 on the login page", back, status)
	}
	back, _ := signIn(t, issuer, "", "mei", "owner-pass-1")
	if back == nil || back.Query().Get("error") != "invalid_request" || back.Query().Get("code") != "" {
		t.Errorf("without PKCE: redirect %v; want error=invalid_request and no code", back)
	}
}

func TestLoadAccounts_NamesTheBadEntry(t *testing.T) {
	for body, want := range map[string]string{
		`[{"username":"a","password":"12345678","groups":["owner"]}]`:                                                           "",
		`[{"username":"a","password":"1234567","groups":["owner"]}]`:                                                            "at least 8",
		`[{"username":"a","password":"12345678","groups":["admin"]}]`:                                                           "groups",
		`[{"username":"a","password":"12345678","groups":[]}]`:                                                                  "groups",
		`[{"username":"a","password":"12345678","groups":["owner"]},{"username":"a","password":"12345678","groups":["owner"]}]`: "not repeated",
		`[{"username":"a b","password":"12345678","groups":["owner"]}]`:                                                         "username",
		`[{"username":"a","password":"12345678","groups":["owner"],"role":"x"}]`:                                                "unknown field",
	} {
		_, err := staffidp.LoadAccounts(strings.NewReader(body))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v; want %q", body, err, want)
		}
	}
}
