// Package staffidp is the local stack's sign-in for the shop's staff: an OpenID
// Connect provider that plays the deployed Amazon Cognito user pool's managed login
// for the merchant console, so that the console signs in locally exactly as deployed
// (authorization code with PKCE, a login page, an RS256 access token that the gateway
// checks with the same JWT authorizer as API Gateway's).
//
// The protocol is zitadel/oidc's OpenID Provider (package op: the authorization,
// token, discovery and key set endpoints, the code's PKCE check, RFC 6749 §4.1 and
// RFC 7636); this package holds only what the library leaves to its user: the staff
// accounts (a seed file, local-only passwords), the login page, and the claims of the
// access token, which follow a Cognito user pool access token's ("Understanding the
// access token", Amazon Cognito Developer Guide): token_use "access", username,
// client_id, scope, and cognito:groups holding the user's groups, whose names owner,
// operator and viewer are the console's roles (httpapi.StaffRole). zitadel also puts
// aud (the client id) in access tokens, which Cognito's do not; API Gateway's JWT
// authorizer accepts either (aud, else client_id: tools/internal/apigw).
//
// Only the console's client exists: a public client (no secret) that must send a
// PKCE S256 code challenge (RFC 7636 §4.2; OAuth 2.0 Security Best Current Practice,
// RFC 9700 §2.1.1), whose redirect URI is the console's page on a loopback address at
// any port (RFC 8252 §7.3 allows the port of a loopback redirect URI to vary).
// Nothing here is ever deployed.
package staffidp

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// ClientID is the console's client id at the local provider (deployed: the user
// pool's app client id, ConsoleUserPoolClient).
const ClientID = "stockguard-console-local"

// Tokens are stamped with the wall clock (zitadel/oidc reads time.Now for iat and nbf),
// so a JWT authorizer on a clock behind it refuses them as not yet issued: a stack that
// signs staff in runs on the wall clock.

// TokenLifetime is how long an access or ID token lasts: an hour, a Cognito app
// client's default (AccessTokenValidity).
const TokenLifetime = time.Hour

// Groups are the staff groups the console knows, the user pool's groups deployed.
var Groups = []string{"owner", "operator", "viewer"}

// Account is one staff member of the seed file (examples/staff.json):
// {"username","password","groups":["owner"|"operator"|"viewer"],"name"?}. Passwords
// are local-only and kept in memory as given.
type Account struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Groups   []string `json:"groups"`
	Name     string   `json:"name,omitempty"`
}

// usernameShape is what the seed file's usernames may be: 1–128 letters, digits and
// ._@+- (within what a Cognito username may be).
var usernameShape = regexp.MustCompile(`^[A-Za-z0-9._@+-]{1,128}$`)

// LoadAccounts reads a seed file of staff accounts: a JSON array of Account. Errors
// name the entry: an unknown field, a bad or repeated username, a password shorter
// than 8 characters, no group or one not in Groups.
func LoadAccounts(r io.Reader) ([]Account, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var accounts []Account
	if err := dec.Decode(&accounts); err != nil {
		return nil, fmt.Errorf("staff accounts: %w", err)
	}
	seen := map[string]bool{}
	for i, a := range accounts {
		switch {
		case !usernameShape.MatchString(a.Username) || seen[a.Username]:
			return nil, fmt.Errorf("staff account %d: username %q must be 1-128 letters, digits or ._@+- and not repeated", i+1, a.Username)
		case len(a.Password) < 8:
			return nil, fmt.Errorf("staff account %d (%s): the password must have at least 8 characters", i+1, a.Username)
		case len(a.Groups) == 0 || slices.ContainsFunc(a.Groups, func(g string) bool { return !slices.Contains(Groups, g) }):
			return nil, fmt.Errorf("staff account %d (%s): groups %q must be some of %q", i+1, a.Username, a.Groups, Groups)
		}
		seen[a.Username] = true
	}
	return accounts, nil
}

// Config configures New.
type Config struct {
	// Issuer is the provider's URL (the iss of its tokens), e.g.
	// http://127.0.0.1:3000/_local/oidc; the handler New returns serves the paths
	// under it (the caller strips the issuer's path).
	Issuer string
	// Accounts are the staff who may sign in.
	Accounts []Account
	// RedirectPath is the path of the console page the provider sends the code to, on
	// any loopback host and port, e.g. /console/.
	RedirectPath string
	// Logger gets the library's records; nil discards them.
	Logger *slog.Logger
}

// Provider is the local staff sign-in: an http.Handler serving the OpenID provider's
// endpoints and the login page under the issuer's path.
type Provider struct {
	http.Handler
	storage *storage
}

// New starts a provider: a new RSA 2048 signing key, the accounts, the console's
// client. Errors: an issuer the library refuses, no accounts.
func New(cfg Config) (*Provider, error) {
	if len(cfg.Accounts) == 0 {
		return nil, errors.New("staffidp: no staff accounts")
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	st := newStorage(cfg, key)
	var crypto [32]byte
	_, _ = rand.Read(crypto[:])
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	provider, err := op.NewProvider(&op.Config{CryptoKey: crypto, CodeMethodS256: true}, st, op.StaticIssuer(cfg.Issuer),
		op.WithAllowInsecure(), op.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("staffidp: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", provider)
	mux.HandleFunc("GET /login", st.loginPage)
	mux.HandleFunc("POST /login", st.login)
	return &Provider{Handler: mux, storage: st}, nil
}

// storage is the provider's state, in memory: accounts, pending authorization
// requests by id and by code, and the issued access tokens.
type storage struct {
	cfg      Config
	key      *rsa.PrivateKey
	keyID    string
	accounts map[string]Account

	mu       sync.Mutex
	requests map[string]*authRequest // by id
	codes    map[string]string       // code → request id
	tokens   map[string]token        // access token id → what it was issued for
}
