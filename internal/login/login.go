// Package login is buyers signing in: POST /auth/wechat (docs/contract.md, "POST
// /auth/wechat") exchanges a
// wx.login code for the buyer's openid (WeChat's jscode2session, package wxlogin) and
// answers a login token (package idtoken: RS256, signed through AWS KMS, sub = openid,
// aud = the mini-program app id) that the HTTP API's JWT authorizer accepts. A buyer who
// signs in again while the last token has at least half its life left gets that token
// again, kept sealed in DynamoDB (Options.Sessions), and KMS is not called. The
// session_key WeChat returns is never kept, answered or logged (wxlogin drops it).
//
// Login is rate-shaped so that it cannot be used to hammer WeChat: the route's stage
// throttle caps the total (template.yaml), and per source IP and per code a fixed-window
// counter in DynamoDB (Attempts.CountAttempt, one conditional write each) refuses
// attempts beyond IPLimit and CodeLimit a minute with 429 RATE_LIMITED, whichever
// container serves them. The counters are checked before WeChat is called.
//
// The package also serves the token issuer's public documents (Documents). Its
// adapters are HTTP routes: Login.Route, Documents.Discovery and Documents.JWKS.
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

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

// RouteLogin is the route key of the login (API Gateway RouteKey, see template.yaml).
const RouteLogin = "POST /auth/wechat"

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

// Options tune a login handler. Zero values take the defaults.
type Options struct {
	Now func() time.Time // the clock of the attempt windows; default time.Now
	// Sessions and SealKey (SealKey(AppSecret), SealKeySize bytes) keep each buyer's
	// token for reuse: a buyer signing in again while the last token has at least
	// half its life left gets that token again (expiresIn: the seconds it has left)
	// instead of a new signature. Either nil: every login signs a new token.
	Sessions Sessions
	SealKey  []byte
	// Log takes what reuse could not do (a kept token not read or not saved); default
	// slog.Default().
	Log *slog.Logger
}

// Attempts counts attempts in fixed windows across every container (dynamo.Store).
type Attempts interface {
	CountAttempt(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (bool, error)
}

// Login serves RouteLogin.
type Login struct {
	wechat *wxlogin.Client
	tokens *idtoken.Issuer
	store  Attempts
	kept   *keeper
	now    func() time.Time
}

// New returns the login route: codes are exchanged through wechat, tokens minted by
// tokens (or reused, see Options), attempts counted in store. Errors: a SealKey that
// is not SealKeySize bytes.
func New(wechat *wxlogin.Client, tokens *idtoken.Issuer, store Attempts, opts Options) (*Login, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	kept, err := newKeeper(opts.Sessions, opts.SealKey, opts.Log)
	if err != nil {
		return nil, err
	}
	return &Login{wechat: wechat, tokens: tokens, store: store, kept: kept, now: opts.Now}, nil
}

// Route serves RouteLogin: body {"code": "<wx.login code>"} → 200
// {"token","expiresIn"}; a code WeChat refuses → 401 UNAUTHORIZED; WeChat unreachable or
// busy → 503 BUSY; too many attempts → 429 RATE_LIMITED; a malformed body → 400.
func (r *Login) Route(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
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
		return events.APIGatewayV2HTTPResponse{}, inventory.Busy("login", err)
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("login: %w", err)
	}
	token, err := r.token(ctx, session.OpenID)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("login: sign token: %w", err)
	}
	return httpapi.JSON(http.StatusOK, token), nil
}

// token is openid's kept token when it may be reused, else a newly signed one, kept.
func (r *Login) token(ctx context.Context, openid string) (idtoken.Token, error) {
	if token, ok := r.kept.reuse(ctx, openid, r.tokens); ok {
		return token, nil
	}
	at := r.now()
	token, err := r.tokens.Issue(ctx, openid)
	if err != nil {
		return idtoken.Token{}, err
	}
	r.kept.keep(ctx, openid, token, at)
	return token, nil
}

// admit counts the attempt against its source IP and its code.
func (r *Login) admit(ctx context.Context, ip, code string) error {
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
	if err := httpapi.NoDuplicateKeys(body); err != nil {
		return "", err // {"code": A, "code": B} would sign in as whichever a reader keeps
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
