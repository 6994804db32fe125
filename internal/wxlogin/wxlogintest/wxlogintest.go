// Package wxlogintest is a stand-in for WeChat's code2Session API (GET /sns/jscode2session,
// "小程序登录"), for tests and the local stack only; it is never linked into a function
// binary. Any code "test-<name>" logs in as openid "o-<name>", once: the same code again
// is refused with errcode 40163, like WeChat; every other code gets 40029. A code
// "test-<name>~<anything>" is another code of the same buyer (each wx.login call gives a
// new code for the same openid). Errors come, as
// from WeChat, with HTTP 200 and an errcode.
package wxlogintest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

// CodePrefix starts every code the stand-in accepts; OpenIDPrefix starts the openid it
// returns for it: code CodePrefix+name → openid OpenIDPrefix+name.
const (
	CodePrefix   = "test-"
	OpenIDPrefix = "o-"
	maxNameLen   = 64
)

// Failure is a way the stand-in can fail on purpose (see SetFailure).
type Failure int

const (
	FailNone        Failure = iota // answer normally
	FailBusy                       // HTTP 200, errcode -1 (系统繁忙)
	FailRateLimit                  // HTTP 200, errcode 45011
	FailServerError                // HTTP 502, no body
)

// Server is the stand-in for one mini-program (app id and secret). Safe for concurrent use.
type Server struct {
	appID, secret string

	mu      sync.Mutex
	used    map[string]bool
	failure Failure
	calls   int

	serving testkit.Background
}

// NewServer returns a stand-in that accepts only appID and secret (else errcode 40013 or
// 40125). It serves nothing until Start; it is also an http.Handler.
func NewServer(appID, secret string) *Server {
	return &Server{appID: appID, secret: secret, used: map[string]bool{}}
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves until Close; URL then
// returns the base URL for wxlogin.Config.BaseURL.
func (s *Server) Start(addr string) error {
	if err := s.serving.Start(addr, s); err != nil {
		return fmt.Errorf("wxlogintest: %w", err)
	}
	return nil
}

// URL is the base URL after Start; empty before.
func (s *Server) URL() string { return s.serving.URL() }

// Close stops serving.
func (s *Server) Close() error { return s.serving.Close() }

// SetFailure makes every following call fail as f says (FailNone: answer normally).
func (s *Server) SetFailure(f Failure) { s.mu.Lock(); s.failure = f; s.mu.Unlock() }

// Calls is how many requests reached the stand-in, failed ones included.
func (s *Server) Calls() int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }

// ServeHTTP answers GET /sns/jscode2session.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls++
	failure := s.failure
	s.mu.Unlock()
	if r.URL.Path != wxlogin.Path || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	switch failure {
	case FailServerError:
		w.WriteHeader(http.StatusBadGateway)
		return
	case FailBusy:
		answer(w, map[string]any{"errcode": wxlogin.CodeSystemBusy, "errmsg": "system error"})
		return
	case FailRateLimit:
		answer(w, map[string]any{"errcode": wxlogin.CodeRateLimited, "errmsg": "api minute-quota reach limit"})
		return
	}
	switch {
	case q.Get("appid") != s.appID:
		answer(w, map[string]any{"errcode": wxlogin.CodeInvalidAppID, "errmsg": "invalid appid"})
		return
	case q.Get("secret") != s.secret:
		answer(w, map[string]any{"errcode": wxlogin.CodeInvalidSecret, "errmsg": "invalid appsecret"})
		return
	case q.Get("grant_type") != wxlogin.GrantType:
		answer(w, map[string]any{"errcode": 40002, "errmsg": "invalid grant_type"})
		return
	}
	code := q.Get("js_code")
	name, ok := strings.CutPrefix(code, CodePrefix)
	name, _, _ = strings.Cut(name, "~")
	if !ok || !validName(name) {
		answer(w, map[string]any{"errcode": wxlogin.CodeInvalidCode, "errmsg": "invalid code"})
		return
	}
	s.mu.Lock()
	used := s.used[code]
	s.used[code] = true
	s.mu.Unlock()
	if used {
		answer(w, map[string]any{"errcode": wxlogin.CodeCodeUsed, "errmsg": "code been used"})
		return
	}
	key := make([]byte, 16)
	rand.Read(key)
	answer(w, map[string]any{"openid": OpenIDPrefix + name, "session_key": base64.StdEncoding.EncodeToString(key)})
}

func validName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// answer writes v with HTTP 200 and WeChat's text/plain content type.
func answer(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "text/plain")
	w.Write(b)
}
