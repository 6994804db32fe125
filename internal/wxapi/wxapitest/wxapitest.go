// Package wxapitest is a stand-in for the parts of WeChat's mini-program server API that
// package wxapi calls, for tests and the local stack only; it is never linked into a
// function binary. It serves, over real HTTP on a listener of its own:
//
//   - POST /cgi-bin/stable_token ("获取稳定版接口调用凭据"): tokens for the configured app id
//     and secret, with the documented modes: a normal-mode call returns the current token
//     while more than 5 minutes of it are left, else a new one, the old staying valid until
//     its own expiry; force_refresh true replaces the token and revokes the old ones,
//     except within 30 seconds of the previous forced call, which returns the current one;
//   - POST /wxa/sec/order/upload_shipping_info ("发货信息录入"), /wxa/sec/order/opspecialorder
//     ("特殊发货报备"), /wxa/sec/order/update_order_detail_path ("小程序购物订单"),
//     /cgi-bin/message/subscribe/send ("发送订阅消息") and /wxa/getuserriskrank
//     ("获取用户安全等级": the rank SetRiskRank gave the openid), each checking its access_token
//     (41001 missing, 40001 unknown or revoked, 42001 expired) and its documented request
//     shape strictly: a body that is not JSON, has fields the page does not document or
//     fields of the wrong type is refused with 47001; each documented rule with its
//     documented errcode.
//
// It also plays the confirmation of receipt (ConfirmReceipt: the buyer in WeChat's
// confirm-receipt component, or WeChat automatically, for a payment whose shipping it
// holds) and signs the trade_manage_order_settlement push WeChat then sends to the
// mini-program's message push URL (SignPush, "消息推送").
//
// Like WeChat it answers errors with HTTP 200 and {"errcode","errmsg"}. It records what it
// accepted (shipments and special-order declarations per payment, the detail path,
// subscribe messages per buyer) and fails on demand (FailNext, FailPaymentNotFound,
// RevokeTokens; a buyer without a subscription gets 43101). Its clock is injectable.
//
// Differences from WeChat, kept on purpose: payments are only those given to AddPayment;
// a template accepts exactly the keywords given to AddTemplate; unknown JSON fields are
// refused (WeChat may ignore them); a data value must be a JSON string. The order of
// checks, errcode 10060014 (参数错误) for an upload_time not later than the previous
// upload's, a parcel to SF without a contact or with an unmasked one, a split delivery
// without parcels and a missing payer, 10060002 for continuing a split delivery after it
// completed, and 268546002 for declaring an order already shipped are a best reading of
// the docs. force_refresh's 20-calls-a-day limit is not enforced.
package wxapitest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxapi"
)

// Token lifetimes ("获取稳定版接口调用凭据": expires_in "目前是7200秒之内的值"; the platform
// replaces a token in its last 5 minutes; forced refreshes at least 30 seconds apart).
const (
	TokenTTL         = 7200 * time.Second
	TokenHandover    = 5 * time.Minute
	ForceRefreshGap  = 30 * time.Second
	maxRequestBytes  = 64 << 10
	placeholderToken = "ACCESS_TOKEN" // never issued: the docs' example value
)

// Failure is a way a call can fail on purpose (see FailNext).
type Failure int

const (
	FailServerError  Failure = iota + 1 // HTTP 502, no body
	FailBusy                            // errcode -1 (系统繁忙)
	FailMinuteQuota                     // errcode 45011 (per-minute rate limit)
	FailDailyQuota                      // errcode 45009 (daily quota)
	FailInvalidToken                    // errcode 40001 although the token is valid
)

// Options tune a Server; the zero value is usable.
type Options struct {
	// Now is the stand-in's clock for token expiry, upload times and presale windows; nil
	// means time.Now. Share it with the client's Config.Now in tests.
	Now func() time.Time
	// Pages are the mini-program's pages ("pages/order/detail"): a subscribe message's page
	// and the order detail path must be one of them (query ignored, a leading "/" allowed),
	// else 41030 / 10060035. Nil accepts any page.
	Pages []string
}

// Server is the stand-in for one mini-program (app id and secret). It is also an
// http.Handler. Safe for concurrent use; its switches may be flipped while requests run.
type Server struct {
	appID, secret string
	now           func() time.Time
	pages         map[string]bool

	mu         sync.Mutex
	calls      map[string]int
	failures   map[string]failure // by path
	tokens     map[string]time.Time
	current    string
	issued     int
	lastForce  time.Time
	payments   []*payment
	notFound   map[string]int // order id → 10060001 answers left
	templates  map[string][]string
	grants     map[grantKey]int
	messages   []Message
	detailPath string
	ranks      map[string]int // openid → risk_rank (SetRiskRank)
	riskAsked  int64          // getUserRiskRank answers given: the last unoin_id

	serving testkit.Background
}

type failure struct {
	f Failure
	n int
}

// NewServer returns a stand-in that issues tokens only for appID and secret. It serves
// nothing until Start.
func NewServer(appID, secret string, opts Options) *Server {
	s := &Server{appID: appID, secret: secret, now: opts.Now,
		calls: map[string]int{}, failures: map[string]failure{}, tokens: map[string]time.Time{},
		notFound: map[string]int{}, ranks: map[string]int{}, templates: map[string][]string{}, grants: map[grantKey]int{}}
	if s.now == nil {
		s.now = time.Now
	}
	if opts.Pages != nil {
		s.pages = map[string]bool{}
		for _, p := range opts.Pages {
			s.pages[strings.TrimPrefix(p, "/")] = true
		}
	}
	return s
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves until Close; URL then
// returns the base URL for wxapi.Config.BaseURL.
func (s *Server) Start(addr string) error {
	if err := s.serving.Start(addr, s); err != nil {
		return fmt.Errorf("wxapitest: %w", err)
	}
	return nil
}

// URL is the base URL after Start; empty before.
func (s *Server) URL() string { return s.serving.URL() }

// Close stops serving.
func (s *Server) Close() error { return s.serving.Close() }

// FailNext makes the next n calls to path (e.g. wxapi.PathUploadShippingInfo or
// wxapi.PathStableToken) fail as f says, before anything else is checked; n of 0 cancels.
func (s *Server) FailNext(path string, f Failure, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[path] = failure{f, n}
}

// RevokeTokens invalidates every token issued so far, as a forced refresh elsewhere does:
// calls with them get 40001 and the next stable_token call issues a new token.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
	s.current = ""
}

// Calls is how many requests reached path, failed ones included.
func (s *Server) Calls(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}

// TokensIssued is how many distinct access tokens the stand-in has issued.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// ServeHTTP answers the six documented paths; others get 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	s.mu.Lock()
	s.calls[path]++
	var inject Failure
	if f := s.failures[path]; f.n > 0 {
		f.n--
		s.failures[path] = f
		inject = f.f
	}
	s.mu.Unlock()
	route, ok := routes[path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if inject != 0 && s.failing(w, inject) {
		return
	}
	if r.Method != http.MethodPost {
		answerCode(w, wxapi.CodeRequirePOST, "require POST method")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	switch {
	case err != nil || len(body) > maxRequestBytes:
		answerCode(w, wxapi.CodeDataFormat, "data format error")
		return
	case len(bytes.TrimSpace(body)) == 0:
		answerCode(w, wxapi.CodeEmptyPostData, "empty post data")
		return
	}
	if path == wxapi.PathStableToken {
		s.stableToken(w, body)
		return
	}
	if code, msg := s.checkToken(r.URL.Query().Get("access_token")); code != 0 {
		answerCode(w, code, msg)
		return
	}
	if path == wxapi.PathGetUserRiskRank {
		code, msg, fields := s.getUserRiskRank(body)
		if code != 0 {
			answerCode(w, code, msg)
			return
		}
		fields["errcode"], fields["errmsg"] = 0, msg
		answer(w, fields)
		return
	}
	code, msg := route(s, body)
	answerCode(w, code, msg)
}

// routes are the API paths besides stable_token; each returns the errcode and errmsg.
var routes = map[string]func(*Server, []byte) (int, string){
	wxapi.PathStableToken:           nil, // served by stableToken
	wxapi.PathUploadShippingInfo:    (*Server).uploadShippingInfo,
	wxapi.PathOpSpecialOrder:        (*Server).opSpecialOrder,
	wxapi.PathUpdateOrderDetailPath: (*Server).updateOrderDetailPath,
	wxapi.PathSubscribeSend:         (*Server).subscribeSend,
	wxapi.PathGetUserRiskRank:       nil, // served by getUserRiskRank
}

// failing answers an injected failure; it reports false for an unknown one.
func (s *Server) failing(w http.ResponseWriter, f Failure) bool {
	switch f {
	case FailServerError:
		w.WriteHeader(http.StatusBadGateway)
	case FailBusy:
		answerCode(w, wxapi.CodeSystemBusy, "system error")
	case FailMinuteQuota:
		answerCode(w, wxapi.CodeMinuteQuota, "api minute-quota reach limit  must slower  retry next minute")
	case FailDailyQuota:
		answerCode(w, wxapi.CodeDailyQuota, "reach max api daily quota limit")
	case FailInvalidToken:
		answerCode(w, wxapi.CodeInvalidCredential, "invalid credential, access_token is invalid or not latest")
	default:
		return false
	}
	return true
}

// stableToken serves getStableAccessToken.
func (s *Server) stableToken(w http.ResponseWriter, body []byte) {
	var req struct {
		GrantType    *string `json:"grant_type"`
		AppID        *string `json:"appid"`
		Secret       *string `json:"secret"`
		ForceRefresh bool    `json:"force_refresh"`
	}
	switch {
	case !decode(body, &req):
		answerCode(w, wxapi.CodeDataFormat, "data format error")
	case req.GrantType == nil || *req.GrantType != wxapi.GrantType:
		answerCode(w, wxapi.CodeInvalidGrantType, "invalid grant_type")
	case req.AppID == nil || *req.AppID == "":
		answerCode(w, wxapi.CodeAppIDMissing, "appid missing")
	case *req.AppID != s.appID:
		answerCode(w, wxapi.CodeInvalidAppID, "invalid appid")
	case req.Secret == nil || *req.Secret == "":
		answerCode(w, wxapi.CodeAppSecretMissing, "appsecret missing")
	case *req.Secret != s.secret:
		answerCode(w, wxapi.CodeInvalidAppSecret, "invalid appsecret")
	default:
		tok, ttl := s.issue(req.ForceRefresh)
		answer(w, map[string]any{"access_token": tok, "expires_in": int64(ttl / time.Second)})
	}
}

// issue returns the token a stable_token call in the given mode gets, and its remaining
// lifetime.
func (s *Server) issue(force bool) (string, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	exp, valid := s.tokens[s.current]
	valid = valid && now.Before(exp)
	switch {
	case force && valid && now.Sub(s.lastForce) < ForceRefreshGap:
		return s.current, exp.Sub(now) // "否则不会刷新"
	case force:
		s.lastForce = now
		clear(s.tokens)
	case valid && exp.Sub(now) > TokenHandover:
		return s.current, exp.Sub(now)
	}
	s.issued++ // the old token stays valid until it expires, then answers 42001
	s.current = strconv.Itoa(s.issued) + "_" + random(48)
	s.tokens[s.current] = now.Add(TokenTTL)
	return s.current, TokenTTL
}

// checkToken returns the errcode for an access_token query value (0 when valid).
func (s *Server) checkToken(tok string) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[tok]
	switch {
	case tok == "":
		return wxapi.CodeAccessTokenMissing, "access_token missing"
	case !ok || tok == placeholderToken:
		return wxapi.CodeInvalidCredential, "invalid credential, access_token is invalid or not latest"
	case !s.now().Before(exp):
		return wxapi.CodeAccessTokenExpired, "access_token expired"
	}
	return 0, ""
}

// decode reads body into v strictly: one JSON object, no unknown fields, no trailing data.
func decode(body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

// answerCode writes {"errcode","errmsg"} with HTTP 200; errmsg gets a rid like WeChat's.
func answerCode(w http.ResponseWriter, code int, msg string) {
	if code == 0 {
		msg = "ok"
	} else {
		msg += " rid: " + random(8)
	}
	answer(w, map[string]any{"errcode": code, "errmsg": msg})
}

// answer writes v as JSON with HTTP 200.
func answer(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; encoding=utf-8")
	w.Write(b)
}

// random returns n URL-safe base64 characters from crypto/rand.
func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// pageOK reports whether page (query ignored) is one of the configured pages.
func (s *Server) pageOK(page string) bool {
	if s.pages == nil {
		return true
	}
	p, _, _ := strings.Cut(strings.TrimPrefix(page, "/"), "?")
	return s.pages[p]
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
