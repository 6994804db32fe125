package wxlogin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxlogin"
	"github.com/stockguard/stockguard/internal/wxlogin/wxlogintest"
)

const (
	appID  = "wxd678efh567hg6787"
	secret = "0123456789abcdef0123456789abcdef"
)

func standIn(t *testing.T) (*wxlogintest.Server, *wxlogin.Client) {
	t.Helper()
	s := wxlogintest.NewServer(appID, secret)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, client(t, s.URL())
}

// config is the test app's configuration against WeChat at baseURL.
func config(baseURL string) wxlogin.Config {
	return wxlogin.Config{AppID: appID, AppSecret: secret, BaseURL: baseURL}
}

// client is a client of the test app against WeChat at baseURL.
func client(t *testing.T, baseURL string) *wxlogin.Client {
	t.Helper()
	return testkit.Must(t, wxlogin.New, config(baseURL))
}

func TestExchange_TestCodeLogsInOnce(t *testing.T) {
	_, c := standIn(t)
	s, err := c.Exchange(context.Background(), "test-alice")
	if err != nil || s.OpenID != "o-alice" {
		t.Fatalf("Exchange = %+v, %v", s, err)
	}
	_, err = c.Exchange(context.Background(), "test-alice")
	var werr *wxlogin.Error
	if !errors.Is(err, wxlogin.ErrUnauthorized) || !errors.As(err, &werr) || werr.Code != wxlogin.CodeCodeUsed {
		t.Errorf("second use = %v, want ErrUnauthorized with errcode 40163", err)
	}
}

func TestExchange_ConcurrentUsesOfOneCode_OnlyOneLogsIn(t *testing.T) {
	_, c := standIn(t)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := c.Exchange(context.Background(), "test-bob")
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, wxlogin.ErrUnauthorized):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 19 {
		t.Errorf("%d logins, %d refusals; want 1 and 19", ok.Load(), refused.Load())
	}
}

func TestExchange_ErrorsCallersBranchOn(t *testing.T) {
	tests := []struct {
		name         string
		code         string
		failure      wxlogintest.Failure
		cfg          func(c *wxlogin.Config)
		unauthorized bool
		busy         bool
		errcode      int // wanted *Error code, 0 for none
		calls        int // requests that must reach the stand-in
	}{
		{"UnknownCode", "0a3Xyz000abc", wxlogintest.FailNone, nil, true, false, wxlogin.CodeInvalidCode, 1},
		{"EmptyCode", "", wxlogintest.FailNone, nil, true, false, 0, 0},
		{"LongCode", strings.Repeat("a", wxlogin.MaxCodeLen+1), wxlogintest.FailNone, nil, true, false, 0, 0},
		{"CodeWithSpace", "test-a b", wxlogintest.FailNone, nil, true, false, 0, 0},
		{"CodeWithAmpersand", "test-a&secret=x", wxlogintest.FailNone, nil, true, false, wxlogin.CodeInvalidCode, 1},
		{"Busy", "test-carol", wxlogintest.FailBusy, nil, false, true, wxlogin.CodeSystemBusy, 1},
		{"RateLimited", "test-carol", wxlogintest.FailRateLimit, nil, false, true, wxlogin.CodeRateLimited, 1},
		{"ServerError", "test-carol", wxlogintest.FailServerError, nil, false, true, 0, 1},
		{"WrongSecret", "test-carol", wxlogintest.FailNone, func(c *wxlogin.Config) { c.AppSecret = "wrong" }, false, false, wxlogin.CodeInvalidSecret, 1},
		{"WrongAppID", "test-carol", wxlogintest.FailNone, func(c *wxlogin.Config) { c.AppID = "wx0000000000000000" }, false, false, wxlogin.CodeInvalidAppID, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := standIn(t)
			srv.SetFailure(tt.failure)
			cfg := config(srv.URL())
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			s, err := testkit.Must(t, wxlogin.New, cfg).Exchange(context.Background(), tt.code)
			if err == nil {
				t.Fatalf("Exchange = %+v, want an error", s)
			}
			if got := errors.Is(err, wxlogin.ErrUnauthorized); got != tt.unauthorized {
				t.Errorf("ErrUnauthorized %v for %v", got, err)
			}
			if got := errors.Is(err, wxlogin.ErrBusy); got != tt.busy {
				t.Errorf("ErrBusy %v for %v", got, err)
			}
			var werr *wxlogin.Error
			if tt.errcode != 0 && (!errors.As(err, &werr) || werr.Code != tt.errcode) {
				t.Errorf("err %v, want errcode %d", err, tt.errcode)
			}
			if srv.Calls() != tt.calls {
				t.Errorf("%d calls reached WeChat, want %d", srv.Calls(), tt.calls)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error quotes the secret: %v", err)
			}
		})
	}
}

// TestExchange_NeverLeaksSecrets: neither the session_key nor the app secret nor the code
// appears in a result or error, including transport errors (whose *url.Error quotes the
// request URL) and answers that are not the documented shape.
func TestExchange_NeverLeaksSecrets(t *testing.T) {
	const sessionKey = "tiihtNczf5v6AKRyjwEUhQ=="
	answers := map[string]string{
		"Genuine":         `{"openid":"o-dave","session_key":"` + sessionKey + `"}`,
		"NoOpenID":        `{"session_key":"` + sessionKey + `"}`,
		"NotJSON":         `session_key=` + sessionKey,
		"OpenIDWithSpace": `{"openid":"o dave","session_key":"` + sessionKey + `"}`,
	}
	for name, body := range answers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
			defer srv.Close()
			s, err := client(t, srv.URL).Exchange(context.Background(), "test-dave")
			var logged bytes.Buffer
			slog.New(slog.NewJSONHandler(&logged, nil)).Info("login", "session", s, "err", err)
			if strings.Contains(logged.String(), sessionKey) || strings.Contains(logged.String(), secret) {
				t.Errorf("logged %s", logged.String())
			}
			if (name == "Genuine") != (err == nil) || (err == nil && s.OpenID != "o-dave") {
				t.Errorf("Exchange = %+v, %v", s, err)
			}
		})
	}
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := client(t, srv.URL).Exchange(context.Background(), "test-dave")
		if !errors.Is(err, wxlogin.ErrBusy) {
			t.Fatalf("err %v, want ErrBusy", err)
		}
		if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "test-dave") {
			t.Errorf("error quotes the request URL: %v", msg)
		}
	})
}

func TestExchange_SendsTheDocumentedRequest(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		fmt.Fprint(w, `{"openid":"o-erin","unionid":"u-erin","session_key":"x"}`)
	}))
	defer srv.Close()
	s, err := client(t, srv.URL).Exchange(context.Background(), "0a3Xyz+/=")
	if err != nil || s != (wxlogin.Session{OpenID: "o-erin", UnionID: "u-erin"}) {
		t.Fatalf("Exchange = %+v, %v", s, err)
	}
	r := <-got
	q := r.URL.Query()
	if r.Method != "GET" || r.URL.Path != "/sns/jscode2session" || q.Get("appid") != appID || q.Get("secret") != secret ||
		q.Get("js_code") != "0a3Xyz+/=" || q.Get("grant_type") != "authorization_code" || len(q) != 4 {
		t.Errorf("sent %s %s", r.Method, r.URL)
	}
}

func TestNew_RejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]wxlogin.Config{
		"NoAppID":      {AppSecret: secret},
		"NoSecret":     {AppID: appID},
		"BaseWithPath": {AppID: appID, AppSecret: secret, BaseURL: "https://api.weixin.qq.com/sns"},
		"BaseNotHTTP":  {AppID: appID, AppSecret: secret, BaseURL: "api.weixin.qq.com"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := wxlogin.New(cfg); err == nil {
				t.Error("New accepted it")
			} else if cfg.AppSecret != "" && strings.Contains(err.Error(), cfg.AppSecret) {
				t.Errorf("error quotes the secret: %v", err)
			}
		})
	}
}
