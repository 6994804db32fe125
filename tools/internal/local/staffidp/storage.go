package staffidp

import (
	"context"
	"crypto/rsa"
	"errors"
	"path"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The storage implements what zitadel/oidc's provider asks of its user (op.Storage).
var _ op.Storage = (*storage)(nil)

func newStorage(cfg Config, key *rsa.PrivateKey) *storage {
	st := &storage{cfg: cfg, key: key, keyID: uuid.NewString(), accounts: map[string]Account{},
		requests: map[string]*authRequest{}, codes: map[string]string{}, tokens: map[string]token{}}
	for _, a := range cfg.Accounts {
		st.accounts[a.Username] = a
	}
	return st
}

// errNotFound is the answer for an unknown request, code, client or token.
var errNotFound = oidc.ErrInvalidRequest().WithDescription("unknown or expired")

// authRequest is one authorization request (RFC 6749 §4.1.1) until its code is
// exchanged: what the console asked for, and the staff member once signed in.
type authRequest struct {
	id, clientID, redirectURI, state, nonce string
	scopes                                  []string
	responseType                            oidc.ResponseType
	responseMode                            oidc.ResponseMode
	challenge                               *oidc.CodeChallenge
	subject                                 string
	authTime                                time.Time
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return []string{a.clientID} }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.subject != "" }

// token is an issued access token: whose, for which client, until when.
type token struct {
	subject, clientID string
	scopes            []string
	expires           time.Time
}

// CreateAuthRequest keeps a new authorization request, refusing one without a PKCE
// S256 challenge: the console is a public client (RFC 7636 §4.2, RFC 9700 §2.1.1).
func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("a PKCE code_challenge with code_challenge_method S256 is required")
	}
	a := &authRequest{id: uuid.NewString(), clientID: req.ClientID, redirectURI: req.RedirectURI, state: req.State,
		nonce: req.Nonce, scopes: req.Scopes, responseType: req.ResponseType, responseMode: req.ResponseMode,
		challenge: &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.requests[id]; ok {
		return a, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errNotFound
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest forgets a request and its codes: a code is exchanged once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// signIn marks the request id as signed in by username; false for an unknown request.
func (s *storage) signIn(id, username string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.requests[id]
	if ok {
		a.subject, a.authTime = username, time.Now()
	}
	return ok
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, expires := uuid.NewString(), time.Now().Add(TokenLifetime)
	clientID := ClientID
	if a, ok := req.(*authRequest); ok {
		clientID = a.clientID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id] = token{subject: req.GetSubject(), clientID: clientID, scopes: req.GetScopes(), expires: expires}
	return id, expires, nil
}

// errNoRefresh: the console's client has no refresh_token grant.
var errNoRefresh = errors.New("staffidp: refresh tokens are not issued")

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errNoRefresh
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(_ context.Context, tokenID, _, _ string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, tokenID)
	return nil
}

// signingKey is the provider's RSA key for op.SigningKey and op.Key.
type signingKey struct {
	id  string
	key any
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k signingKey) Use() string                                 { return "sig" }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return signingKey{s.keyID, s.key}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{signingKey{s.keyID, &s.key.PublicKey}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if id != ClientID {
		return nil, errNotFound
	}
	return client{issuer: s.cfg.Issuer, redirectPath: s.cfg.RedirectPath}, nil
}

// AuthorizeClientIDSecret refuses: the console's client is public, it has no secret.
func (s *storage) AuthorizeClientIDSecret(context.Context, string, string) error {
	return oidc.ErrInvalidClient().WithDescription("the console's client is public: no client secret")
}

// SetUserinfoFromScopes sets nothing: the ID token carries the claims of
// SetUserinfoFromRequest.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills the ID token's claims (op.CanSetUserinfoFromRequest).
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	s.setUserinfo(info, req.GetSubject())
	return nil
}

// liveToken returns the access token of this id unless it is unknown or expired.
func (s *storage) liveToken(id string) (token, bool) {
	s.mu.Lock()
	t, ok := s.tokens[id]
	s.mu.Unlock()
	return t, ok && !time.Now().After(t.expires)
}

// SetUserinfoFromToken fills the userinfo endpoint's answer for a live access token.
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	t, ok := s.liveToken(tokenID)
	if !ok {
		return errNotFound
	}
	s.setUserinfo(info, t.subject)
	return nil
}

// setUserinfo is what the ID token and the userinfo endpoint say of username: as a
// Cognito ID token, cognito:username and cognito:groups beside sub and name.
func (s *storage) setUserinfo(info *oidc.UserInfo, username string) {
	a := s.accounts[username]
	info.Subject, info.Name, info.PreferredUsername = username, a.Name, username
	info.AppendClaims("cognito:username", username)
	info.AppendClaims("cognito:groups", a.Groups)
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, r *oidc.IntrospectionResponse, tokenID, _, _ string) error {
	t, ok := s.liveToken(tokenID)
	if !ok {
		return errNotFound
	}
	r.Active, r.Subject, r.ClientID, r.Scope, r.Expiration = true, t.subject, t.clientID, t.scopes, oidc.FromTime(t.expires)
	return nil
}

// GetPrivateClaimsFromScopes is what the access token carries besides the standard
// claims: a Cognito user pool access token's token_use, username, scope and
// cognito:groups.
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, username, _ string, scopes []string) (map[string]any, error) {
	return map[string]any{"token_use": "access", "username": username, "scope": strings.Join(scopes, " "),
		"cognito:groups": s.accounts[username].Groups}, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

func (s *storage) ValidateJWTProfileScopes(_ context.Context, _ string, scopes []string) ([]string, error) {
	return scopes, nil
}

func (s *storage) Health(context.Context) error { return nil }

// client is the console's client: public, authorization code only, JWT access tokens,
// redirect URIs the console's page on any loopback host and port.
type client struct{ issuer, redirectPath string }

func (c client) GetID() string                       { return ClientID }
func (c client) RedirectURIs() []string              { return nil }
func (c client) PostLogoutRedirectURIs() []string    { return nil }
func (c client) ApplicationType() op.ApplicationType { return op.ApplicationTypeUserAgent }
func (c client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodNone }
func (c client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c client) GrantTypes() []oidc.GrantType                                 { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c client) LoginURL(id string) string                                    { return c.issuer + "/login?authRequestID=" + id }
func (c client) AccessTokenType() op.AccessTokenType                          { return op.AccessTokenTypeJWT }
func (c client) IDTokenLifetime() time.Duration                               { return TokenLifetime }
func (c client) DevMode() bool                                                { return true } // http redirect URIs: loopback only, see RedirectURIGlobs
func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string     { return same }
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string { return same }
func (c client) IsScopeAllowed(string) bool                                   { return false }
func (c client) IDTokenUserinfoClaimsAssertion() bool                         { return true }
func (c client) ClockSkew() time.Duration                                     { return 0 }

// RedirectURIGlobs lets the code go to the console's page on a loopback address at any
// port (op.HasRedirectGlobs; RFC 8252 §7.3), and the sign-out return there too.
func (c client) RedirectURIGlobs() []string {
	p := path.Clean("/" + c.redirectPath)
	if strings.HasSuffix(c.redirectPath, "/") {
		p += "/"
	}
	return []string{"http://127.0.0.1:*" + p, "http://localhost:*" + p}
}

func (c client) PostLogoutRedirectURIGlobs() []string { return c.RedirectURIGlobs() }

func same(scopes []string) []string { return scopes }
