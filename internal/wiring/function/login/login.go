// Package login is the login function's wiring: POST /auth/wechat exchanges a
// wx.login code for the buyer's openid and answers a login token signed through AWS
// KMS, or the buyer's last one while it has half its life left.
package login

import (
	"log/slog"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

// Config is login's configuration (template.yaml, LoginFunction's Environment).
type Config struct {
	// OrdersTable is ORDERS_TABLE: the login attempts and kept tokens live there.
	OrdersTable string
	// SecretARN is WECHAT_APP_SECRET_ARN: the secret holding the app id and AppSecret,
	// which its main reads.
	SecretARN string
	// KeyID is SIGNING_KEY_ID: the KMS key that signs the tokens, also their kid.
	KeyID string
	// Issuer is TOKEN_ISSUER: the tokens' iss, the JWT authorizer's issuer URL.
	Issuer string
	// Audience is TOKEN_AUDIENCE: the tokens' aud, the mini-program app id.
	Audience string
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, wiring.OrdersTable(&c.OrdersTable), wiring.AppSecret(&c.SecretARN), wiring.KeyID(&c.KeyID),
		wiring.Required(&c.Issuer, "TOKEN_ISSUER", "the token issuer URL"),
		wiring.Required(&c.Audience, "TOKEN_AUDIENCE", "the mini-program app id"))
}

// StoreTables are the tables login's store uses: the orders table alone.
func (c Config) StoreTables() dynamo.Tables { return dynamo.Tables{Orders: c.OrdersTable} }

var table = wiring.Define("LoginFunction", "login",
	wiring.Route(login.RouteLogin, func(l *login.Login) httpapi.Route { return l.Route }),
)

// Function is login as template.yaml declares it.
var Function = table.Function

// Build returns login's handler: codes exchanged through wechat, tokens signed by
// signer and kept on store sealed with sealKey (login.SealKey of the AppSecret; nil:
// every login signs a new token), logging to log. Errors: an invalid issuer, audience
// or key id.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, wechat *wxlogin.Client, signer idtoken.Signer, sealKey []byte) (*lambdaevent.Function, error) {
	tokens, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: cfg.Issuer, Audience: cfg.Audience, KeyID: cfg.KeyID, Now: store.Now}, signer)
	if err != nil {
		return nil, err
	}
	l, err := login.New(wechat, tokens, store, login.Options{Now: store.Now, Sessions: store, SealKey: sealKey, Log: log})
	if err != nil {
		return nil, err
	}
	return table.Bind(log, l), nil
}
