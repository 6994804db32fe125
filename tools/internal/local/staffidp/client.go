package staffidp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// RedirectURI is the console page SignIn asks the code to be sent to (any loopback
// port is allowed; this one is never fetched).
const RedirectURI = "http://127.0.0.1:3000/console/"

// SignIn signs username in at the provider at issuer as the console does in a
// browser, without one: the authorization request with a fresh PKCE S256 challenge
// (RFC 7636 §4.1-4.2), the login page's form, the provider's callback, then the code
// exchanged with the verifier at the token endpoint (RFC 6749 §4.1.3). It returns the
// access token. Errors name the step that failed (a wrong password: the login page's
// 401). For tests and tools.
func SignIn(ctx context.Context, issuer, username, password string) (string, error) {
	verifier := rand.Text() + rand.Text() // 52 base32 characters, within RFC 7636's 43-128
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {ClientID}, "response_type": {"code"}, "scope": {"openid"}, "redirect_uri": {RedirectURI},
		"state": {rand.Text()}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	login, err := follow(ctx, http.MethodGet, issuer+"/authorize?"+q.Encode(), nil)
	if err != nil || login.Query().Get("authRequestID") == "" {
		return "", fmt.Errorf("staffidp: authorize: %v %v", login, err)
	}
	callback, err := follow(ctx, http.MethodPost, issuer+"/login", url.Values{"authRequestID": {login.Query().Get("authRequestID")},
		"username": {username}, "password": {password}})
	if err != nil {
		return "", fmt.Errorf("staffidp: login as %s: %w", username, err)
	}
	back, err := follow(ctx, http.MethodGet, callback.String(), nil)
	if err != nil || back.Query().Get("code") == "" {
		return "", fmt.Errorf("staffidp: callback: %v %v", back, err)
	}
	return exchange(ctx, issuer, back.Query().Get("code"), verifier)
}

// follow sends one request and returns where its redirect points; an answer that is
// not a redirect is an error.
func follow(ctx context.Context, method, u string, form url.Values) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("%s %s: HTTP %d", method, u, resp.StatusCode)
	}
	return resp.Location()
}

// exchange trades code and its verifier for the access token.
func exchange(ctx context.Context, issuer, code, verifier string) (string, error) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {RedirectURI},
		"client_id": {ClientID}, "code_verifier": {verifier}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		return "", fmt.Errorf("staffidp: token: HTTP %d %s %v", resp.StatusCode, body.Error, err)
	}
	return body.AccessToken, nil
}
