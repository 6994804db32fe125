// Package wxlogin exchanges a WeChat mini-program login code (wx.login) for the buyer's
// openid through WeChat's code2Session API ("小程序登录", auth.code2Session:
// GET https://api.weixin.qq.com/sns/jscode2session?appid&secret&js_code&grant_type=authorization_code).
// It is the first half of POST /auth/wechat (docs/contract.md); package idtoken is the second.
//
// The session_key WeChat returns is never kept, returned or logged: the answer is decoded
// into a struct without that field, and no error quotes the answer, the request URL (it
// carries the app secret and the code) or the code.
package wxlogin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/origin"
)

// DefaultBaseURL is the scheme and host of WeChat's server API.
const DefaultBaseURL = "https://api.weixin.qq.com"

// Path is the code2Session path; GrantType its fixed grant_type.
const (
	Path      = "/sns/jscode2session"
	GrantType = "authorization_code"
)

// DefaultTimeout bounds one code2Session call when Config.HTTPClient is nil (5 seconds).
const DefaultTimeout = 5 * time.Second

// Limits, checked before anything is sent or trusted. wx.login codes are 32 characters and
// openids 28; the limits leave room without letting junk through.
const (
	MaxCodeLen   = 128  // js_code, bytes
	maxOpenIDLen = 128  // openid / unionid, bytes
	maxBodyBytes = 8192 // answer body
)

// errcode values of code2Session ("小程序登录" → auth.code2Session, 错误码).
const (
	CodeSystemBusy    = -1    // 系统繁忙: retry later
	CodeInvalidCode   = 40029 // js_code 无效 (unknown or expired: codes live 5 minutes)
	CodeCodeUsed      = 40163 // code been used: each code is good for one exchange
	CodeHighRiskUser  = 40226 // 高风险等级用户，小程序登录拦截
	CodeRateLimited   = 45011 // API 调用太频繁 (100 per minute per user)
	CodeInvalidAppID  = 40013 // invalid appid
	CodeInvalidSecret = 40125 // invalid appsecret
)

var (
	// ErrUnauthorized: the code is empty, too long, not printable ASCII, unknown, expired,
	// already used, or its user is barred (errcode 40029, 40163, 40226). docs/contract.md:
	// 401 UNAUTHORIZED.
	ErrUnauthorized = errors.New("wxlogin: login code refused")

	// ErrBusy: WeChat could not be reached, timed out, answered 5xx, or answered errcode -1
	// (busy) or 45011 (rate limited). docs/contract.md: 503 BUSY.
	ErrBusy = errors.New("wxlogin: WeChat busy or unreachable")
)

// Error is a code2Session answer with a non-zero errcode, kept as data. It unwraps to
// ErrUnauthorized or ErrBusy when the code is one of theirs, to nothing otherwise (e.g.
// 40013/40125: the app id or secret is wrong, a configuration fault). Msg is WeChat's
// errmsg, for logs only: never show it to a buyer.
type Error struct {
	Code int    // errcode
	Msg  string // errmsg
}

func (e *Error) Error() string {
	return fmt.Sprintf("wxlogin: code2Session errcode %d: %.64q", e.Code, e.Msg)
}

// Unwrap maps errcode to ErrUnauthorized or ErrBusy (nil when neither).
func (e *Error) Unwrap() error {
	switch e.Code {
	case CodeInvalidCode, CodeCodeUsed, CodeHighRiskUser:
		return ErrUnauthorized
	case CodeSystemBusy, CodeRateLimited:
		return ErrBusy
	}
	return nil
}

// Config is what a Client needs.
type Config struct {
	AppID     string // the mini-program's AppID (wx…); required
	AppSecret string // its AppSecret (wechatpay.Secret.AppSecret); required, never logged
	// BaseURL is the scheme and host of the API; empty means DefaultBaseURL. The stand-in
	// (wxlogintest.Server) serves http://127.0.0.1:port.
	BaseURL string
	// HTTPClient sends the requests; nil means a client with DefaultTimeout.
	HTTPClient *http.Client
}

// Client calls code2Session for one mini-program. It is immutable and safe for concurrent use.
type Client struct {
	appID, secret string
	endpoint      string
	http          *http.Client
}

// New validates cfg: AppID and AppSecret non-empty, BaseURL (if set) an http(s) scheme and
// host only. Errors never quote the secret.
func New(cfg Config) (*Client, error) {
	if cfg.AppID == "" || cfg.AppSecret == "" {
		return nil, errors.New("wxlogin: config: AppID and AppSecret are required")
	}
	base, err := origin.Parse(cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("wxlogin: config: BaseURL %w", err)
	}
	return &Client{appID: cfg.AppID, secret: cfg.AppSecret, endpoint: base + Path,
		http: cmp.Or(cfg.HTTPClient, &http.Client{Timeout: DefaultTimeout})}, nil
}

// Session is who a login code belongs to.
type Session struct {
	OpenID  string // the buyer's openid under the app id: the JWT sub and the JSAPI payer
	UnionID string // unionid, when the app is bound to a WeChat Open Platform account; else empty
}

// Exchange trades a wx.login code for the buyer's Session (code2Session). Errors:
// ErrUnauthorized (bad input, or an *Error for 40029/40163/40226), ErrBusy (transport
// failure, non-200 status, or an *Error for -1/45011), an *Error wrapping neither for other
// errcodes, or a plain error for an answer without a valid openid.
func (c *Client) Exchange(ctx context.Context, code string) (Session, error) {
	if code == "" || len(code) > MaxCodeLen || !printable(code) {
		return Session{}, fmt.Errorf("%w: code must be 1..%d printable ASCII characters", ErrUnauthorized, MaxCodeLen)
	}
	q := url.Values{"appid": {c.appID}, "secret": {c.secret}, "js_code": {code}, "grant_type": {GrantType}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return Session{}, errors.New("wxlogin: build request")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// *url.Error quotes the URL, which holds the secret and the code: keep only its cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return Session{}, fmt.Errorf("%w: code2Session: %w", ErrBusy, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Session{}, fmt.Errorf("%w: code2Session: HTTP %d", ErrBusy, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return Session{}, fmt.Errorf("%w: code2Session: read answer", ErrBusy)
	}
	return decode(body)
}

// decode reads a code2Session answer (WeChat answers errors with HTTP 200 and an errcode).
func decode(body []byte) (Session, error) {
	var w struct {
		OpenID  string `json:"openid"`
		UnionID string `json:"unionid"`
		ErrCode int    `json:"errcode"`
		ErrMsg  string `json:"errmsg"`
		// session_key is deliberately absent: it is never decoded.
	}
	if len(body) > maxBodyBytes || json.Unmarshal(body, &w) != nil {
		return Session{}, errors.New("wxlogin: code2Session answer is not the documented JSON")
	}
	if w.ErrCode != 0 {
		return Session{}, &Error{Code: w.ErrCode, Msg: w.ErrMsg}
	}
	if w.OpenID == "" || len(w.OpenID) > maxOpenIDLen || !printable(w.OpenID) ||
		len(w.UnionID) > maxOpenIDLen || (w.UnionID != "" && !printable(w.UnionID)) {
		return Session{}, errors.New("wxlogin: code2Session answer lacks a valid openid")
	}
	return Session{OpenID: w.OpenID, UnionID: w.UnionID}, nil
}

// printable reports whether s is visible ASCII (0x21..0x7e).
func printable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
}
