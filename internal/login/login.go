// Package login is the login function: POST /auth/wechat (CONTRACT.md) exchanges a
// wx.login code for the buyer's openid (WeChat's jscode2session, package wxlogin) and
// answers a login token (package idtoken: ES256, signed through AWS KMS, sub = openid,
// aud = the mini-program app id) that the HTTP API's JWT authorizer accepts. The
// session_key WeChat returns is never kept, answered or logged (wxlogin drops it).
//
// Login is rate-shaped so that it cannot be used to hammer WeChat: the route's stage
// throttle caps the total (template.yaml), and per source IP and per code a fixed-window
// counter in DynamoDB (dynamo.Store.CountAttempt, one conditional write each) refuses
// attempts beyond IPLimit and CodeLimit a minute with 429 RATE_LIMITED, whichever
// container serves them. The counters are checked before WeChat is called.
//
// The package also serves the token issuer's public documents (NewIssuerRoutes).
package login

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

// RouteLogin is the route key of the login (API Gateway RouteKey, see template.yaml).
const RouteLogin = "POST /auth/wechat"

// FunctionName names the login function in logs.
const FunctionName = "login"

// Attempt limits per fixed window of AttemptWindow: IPLimit logins from one source IP
// (a shop's Wi-Fi may carry many buyers), CodeLimit tries of one code (a code is good
// once; retries after a network error need a few).
const (
	AttemptWindow = time.Minute
	IPLimit       = 30
	CodeLimit     = 3
)

// maxBodyBytes bounds the body {"code": "…"}: a code is at most wxlogin.MaxCodeLen bytes.
const maxBodyBytes = 1 << 10

// Config is the login function's configuration, read from its environment by LoadConfig.
type Config struct {
	OrdersTable string // ORDERS_TABLE: where attempt counters live
	// SecretARN is WECHATPAY_SECRET_ARN: the secret holding appid and appSecret.
	SecretARN string
	KeyID     string // SIGNING_KEY_ID: the KMS key that signs tokens; also the JWK kid
	Issuer    string // TOKEN_ISSUER: the iss claim, the JWT authorizer's issuer URL
	Audience  string // TOKEN_AUDIENCE: the aud claim, the mini-program app id
}

// LoadConfig reads the login function's variables (template.yaml, LoginFunction). It
// returns an *envvar.Error naming the first one missing (and a Config not to be used).
func LoadConfig(get envvar.Lookup) (c Config, err error) {
	for _, v := range []struct {
		dst        *string
		name, want string
	}{
		{&c.OrdersTable, envvar.OrdersTable, "the orders table name"},
		{&c.SecretARN, "WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret"},
		{&c.KeyID, "SIGNING_KEY_ID", "the KMS key id of the token signing key"},
		{&c.Issuer, "TOKEN_ISSUER", "the token issuer URL"},
		{&c.Audience, "TOKEN_AUDIENCE", "the mini-program app id"},
	} {
		if *v.dst, err = envvar.Required(get, v.name, v.want); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Options tune a login handler. Zero values take the defaults.
type Options struct {
	Now func() time.Time // the clock of the attempt windows; default time.Now
}

type routes struct {
	wechat *wxlogin.Client
	tokens *idtoken.Issuer
	store  *dynamo.Store
	now    func() time.Time
}

// New returns the login function's handler: codes are exchanged through wechat, tokens
// minted by tokens, attempts counted in store; one JSON line per request goes to log.
// Any other route is refused (httpapi.Handler.Handle).
func New(wechat *wxlogin.Client, tokens *idtoken.Issuer, store *dynamo.Store, log *slog.Logger, opts Options) *httpapi.Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &routes{wechat: wechat, tokens: tokens, store: store, now: opts.Now}
	return httpapi.New(FunctionName, log, map[string]httpapi.Route{RouteLogin: r.login})
}

// login serves POST /auth/wechat: body {"code": "<wx.login code>"} → 200
// {"token","expiresIn"}; a code WeChat refuses → 401 UNAUTHORIZED; WeChat unreachable or
// busy → 503 BUSY; too many attempts → 429 RATE_LIMITED; a malformed body → 400.
func (r *routes) login(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	body, err := httpapi.Body(req, maxBodyBytes)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	code, err := decodeCode(body)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if err := r.admit(ctx, req.RequestContext.HTTP.SourceIP, code); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	session, err := r.wechat.Exchange(ctx, code)
	switch {
	case errors.Is(err, wxlogin.ErrUnauthorized):
		return events.APIGatewayV2HTTPResponse{}, &httpapi.Failure{Status: http.StatusUnauthorized, Code: "UNAUTHORIZED",
			Message: "this wx.login code is invalid, expired or already used: call wx.login again",
			Level:   slog.LevelInfo, Err: fmt.Errorf("login: %w (%w)", httpapi.ErrUnauthorized, err)}
	case errors.Is(err, wxlogin.ErrBusy):
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("login: %w (%w)", inventory.ErrBusy, err)
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("login: %w", err)
	}
	token, err := r.tokens.Issue(ctx, session.OpenID)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("login: sign token: %w", err)
	}
	return httpapi.JSON(http.StatusOK, token), nil
}

// admit counts the attempt against its source IP and its code.
func (r *routes) admit(ctx context.Context, ip, code string) error {
	now := r.now()
	for _, c := range []struct {
		what, key string
		limit     int
	}{{"source IP", "login-ip#" + ip, IPLimit}, {"code", "login-code#" + code, CodeLimit}} {
		ok, err := r.store.CountAttempt(ctx, c.key, c.limit, AttemptWindow, now)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("login: more than %d attempts a minute from one %s: %w", c.limit, c.what, inventory.ErrRateLimited)
		}
	}
	return nil
}

// decodeCode reads the body {"code": "<1..wxlogin.MaxCodeLen bytes>"}, nothing else.
func decodeCode(body []byte) (string, error) {
	invalid := inventory.InvalidError("body must be {\"code\": \"<wx.login code of 1-%d bytes>\"}", wxlogin.MaxCodeLen)
	var fields map[string]json.RawMessage
	if err := httpapi.DecodeStrict(body, &fields); err != nil {
		return "", invalid
	}
	if err := httpapi.OnlyFields(fields, "code"); err != nil {
		return "", err
	}
	var code string
	if err := httpapi.DecodeStrict(fields["code"], &code); err != nil || code == "" || len(code) > wxlogin.MaxCodeLen {
		return "", invalid
	}
	return code, nil
}
