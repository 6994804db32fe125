package wxapitest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

const (
	appID  = "wxd678efh567hg6787"
	secret = "0123456789abcdef0123456789abcdef"
)

// standIn is a started stand-in on a settable clock.
type standIn struct {
	t     *testing.T
	srv   *wxapitest.Server
	clock *testkit.Clock
}

func start(t *testing.T, opts wxapitest.Options) *standIn {
	t.Helper()
	s := &standIn{t: t, clock: testkit.NewClock()}
	opts.Now = s.clock.Now
	s.srv = wxapitest.NewServer(appID, secret, opts)
	if err := s.srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// answer is a decoded answer of the stand-in.
type answer struct {
	Status      int
	ErrCode     int    `json:"errcode"`
	ErrMsg      string `json:"errmsg"`
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"`
}

// do sends method path?access_token=tok with body and decodes the answer.
func (s *standIn) do(method, path, tok, body string) answer {
	s.t.Helper()
	target := s.srv.URL() + path
	if tok != "" {
		target += "?access_token=" + tok
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			s.t.Fatalf("answer is not JSON: %v", err)
		}
	}
	return a
}

const tokenRequest = `{"grant_type":"client_credential","appid":"` + appID + `","secret":"` + secret + `"}`

// token fetches a token in the given mode and fails the test on an errcode.
func (s *standIn) token(force bool) answer {
	s.t.Helper()
	body := tokenRequest
	if force {
		body = strings.Replace(body, "}", `,"force_refresh":true}`, 1)
	}
	a := s.do(http.MethodPost, wxapi.PathStableToken, "", body)
	if a.ErrCode != 0 || a.AccessToken == "" {
		s.t.Fatalf("stable_token answered %+v", a)
	}
	return a
}

// post sends body to an API path with tok and returns the errcode.
func (s *standIn) post(path, tok, body string) int {
	s.t.Helper()
	a := s.do(http.MethodPost, path, tok, body)
	if a.Status != http.StatusOK {
		s.t.Fatalf("HTTP %d", a.Status)
	}
	if (a.ErrCode == 0) != (a.ErrMsg == "ok") {
		s.t.Errorf("errcode %d with errmsg %q", a.ErrCode, a.ErrMsg)
	}
	return a.ErrCode
}

const detailBody = `{"path":"pages/order/detail?id=${商品订单号}"}`

func TestStableToken_NormalModeKeepsTheTokenUntilTheHandoverAndTheOldOneStaysValid(t *testing.T) {
	s := start(t, wxapitest.Options{})
	first := s.token(false)
	s.clock.Advance(time.Hour)
	again := s.token(false)
	if first.AccessToken != again.AccessToken || first.ExpiresIn != 7200 || again.ExpiresIn != 3600 {
		t.Fatalf("first %+v, again %+v: want the same token, 7200 then 3600 s left", first, again)
	}

	s.clock.Advance(time.Hour - wxapitest.TokenHandover) // 5 minutes left: the next token
	next := s.token(false)
	if next.AccessToken == first.AccessToken || next.ExpiresIn != 7200 || s.srv.TokensIssued() != 2 {
		t.Fatalf("next %+v after %d tokens: want a new token of 7200 s", next, s.srv.TokensIssued())
	}
	if code := s.post(wxapi.PathUpdateOrderDetailPath, first.AccessToken, detailBody); code != 0 {
		t.Errorf("old token inside the handover: errcode %d", code)
	}
	s.clock.Advance(wxapitest.TokenHandover)
	if code := s.post(wxapi.PathUpdateOrderDetailPath, first.AccessToken, detailBody); code != wxapi.CodeAccessTokenExpired {
		t.Errorf("old token after its expiry: errcode %d, want 42001", code)
	}
	if code := s.post(wxapi.PathUpdateOrderDetailPath, next.AccessToken, detailBody); code != 0 {
		t.Errorf("new token: errcode %d", code)
	}
}

func TestStableToken_ForcedRefreshRevokesTheOldTokenAtMostEvery30Seconds(t *testing.T) {
	s := start(t, wxapitest.Options{})
	old := s.token(false)
	forced := s.token(true)
	if forced.AccessToken == old.AccessToken {
		t.Fatal("forced refresh returned the same token")
	}
	if code := s.post(wxapi.PathUpdateOrderDetailPath, old.AccessToken, detailBody); code != wxapi.CodeInvalidCredential {
		t.Errorf("old token after a forced refresh: errcode %d, want 40001", code)
	}
	s.clock.Advance(wxapitest.ForceRefreshGap - time.Second)
	if again := s.token(true); again.AccessToken != forced.AccessToken {
		t.Error("a forced refresh within 30 s replaced the token")
	}
	s.clock.Advance(time.Second)
	if again := s.token(true); again.AccessToken == forced.AccessToken || s.srv.TokensIssued() != 3 {
		t.Errorf("a forced refresh after 30 s kept the token (%d issued)", s.srv.TokensIssued())
	}
}

func TestStableToken_RefusesBadRequestsWithTheirErrcode(t *testing.T) {
	tests := []struct {
		name, method, body string
		errcode            int
	}{
		{"Get", http.MethodGet, tokenRequest, wxapi.CodeRequirePOST},
		{"Empty", http.MethodPost, " ", wxapi.CodeEmptyPostData},
		{"Form", http.MethodPost, "grant_type=client_credential&appid=" + appID, wxapi.CodeDataFormat},
		{"UnknownField", http.MethodPost, strings.Replace(tokenRequest, "}", `,"scope":"x"}`, 1), wxapi.CodeDataFormat},
		{"ForceAsString", http.MethodPost, strings.Replace(tokenRequest, "}", `,"force_refresh":"true"}`, 1), wxapi.CodeDataFormat},
		{"TwoObjects", http.MethodPost, tokenRequest + tokenRequest, wxapi.CodeDataFormat},
		{"NoGrantType", http.MethodPost, `{"appid":"` + appID + `","secret":"` + secret + `"}`, wxapi.CodeInvalidGrantType},
		{"OtherGrantType", http.MethodPost, strings.Replace(tokenRequest, "client_credential", "authorization_code", 1), wxapi.CodeInvalidGrantType},
		{"NoAppID", http.MethodPost, `{"grant_type":"client_credential","secret":"` + secret + `"}`, wxapi.CodeAppIDMissing},
		{"OtherAppID", http.MethodPost, strings.Replace(tokenRequest, appID, "wx0000000000000000", 1), wxapi.CodeInvalidAppID},
		{"NoSecret", http.MethodPost, `{"grant_type":"client_credential","appid":"` + appID + `"}`, wxapi.CodeAppSecretMissing},
		{"OtherSecret", http.MethodPost, strings.Replace(tokenRequest, secret, "wrong", 1), wxapi.CodeInvalidAppSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, wxapitest.Options{})
			if a := s.do(tt.method, wxapi.PathStableToken, "", tt.body); a.ErrCode != tt.errcode || a.AccessToken != "" {
				t.Errorf("answered %+v, want errcode %d", a, tt.errcode)
			}
			if n := s.srv.TokensIssued(); n != 0 {
				t.Errorf("%d tokens issued", n)
			}
		})
	}
}

func TestServer_ChecksTheAccessTokenOfEveryAPI(t *testing.T) {
	for _, path := range []string{wxapi.PathUploadShippingInfo, wxapi.PathOpSpecialOrder, wxapi.PathUpdateOrderDetailPath, wxapi.PathSubscribeSend} {
		t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			s := start(t, wxapitest.Options{})
			tok := s.token(false).AccessToken
			checks := []struct {
				name, tok string
				errcode   int
			}{
				{"Missing", "", wxapi.CodeAccessTokenMissing},
				{"Unknown", tok + "x", wxapi.CodeInvalidCredential},
				{"DocsPlaceholder", "ACCESS_TOKEN", wxapi.CodeInvalidCredential},
			}
			for _, c := range checks {
				if code := s.post(path, c.tok, `{}`); code != c.errcode {
					t.Errorf("%s: errcode %d, want %d", c.name, code, c.errcode)
				}
			}
			if a := s.do(http.MethodGet, path, tok, `{}`); a.ErrCode != wxapi.CodeRequirePOST {
				t.Errorf("GET: %+v, want 43002", a)
			}
			if code := s.post(path, tok, ``); code != wxapi.CodeEmptyPostData {
				t.Errorf("empty body: errcode %d, want 44002", code)
			}
			if code := s.post(path, tok, `not json`); code != wxapi.CodeDataFormat {
				t.Errorf("not JSON: errcode %d, want 47001", code)
			}
			s.srv.RevokeTokens()
			if code := s.post(path, tok, `{}`); code != wxapi.CodeInvalidCredential {
				t.Errorf("revoked: errcode %d, want 40001", code)
			}
			tok = s.token(false).AccessToken
			s.clock.Advance(wxapitest.TokenTTL)
			if code := s.post(path, tok, `{}`); code != wxapi.CodeAccessTokenExpired {
				t.Errorf("expired: errcode %d, want 42001", code)
			}
		})
	}
}

func TestServer_FailNextAnswersItsFailureNTimesOnThatPathOnly(t *testing.T) {
	tests := []struct {
		f       wxapitest.Failure
		status  int
		errcode int
	}{
		{wxapitest.FailServerError, http.StatusBadGateway, 0},
		{wxapitest.FailBusy, 200, wxapi.CodeSystemBusy},
		{wxapitest.FailMinuteQuota, 200, wxapi.CodeMinuteQuota},
		{wxapitest.FailDailyQuota, 200, wxapi.CodeDailyQuota},
		{wxapitest.FailInvalidToken, 200, wxapi.CodeInvalidCredential},
	}
	for _, tt := range tests {
		s := start(t, wxapitest.Options{})
		tok := s.token(false).AccessToken
		s.srv.FailNext(wxapi.PathUpdateOrderDetailPath, tt.f, 2)
		if code := s.post(wxapi.PathSubscribeSend, tok, `{}`); code == tt.errcode {
			t.Errorf("failure %d reached another path", tt.f)
		}
		for i := range 2 {
			if a := s.do(http.MethodPost, wxapi.PathUpdateOrderDetailPath, tok, detailBody); a.Status != tt.status || a.ErrCode != tt.errcode {
				t.Errorf("failure %d, call %d: %+v, want HTTP %d errcode %d", tt.f, i, a, tt.status, tt.errcode)
			}
		}
		if code := s.post(wxapi.PathUpdateOrderDetailPath, tok, detailBody); code != 0 {
			t.Errorf("failure %d, third call: errcode %d", tt.f, code)
		}
		if n := s.srv.Calls(wxapi.PathUpdateOrderDetailPath); n != 3 {
			t.Errorf("%d calls counted, want 3", n)
		}
	}

	s := start(t, wxapitest.Options{})
	s.srv.FailNext(wxapi.PathStableToken, wxapitest.FailBusy, 1)
	s.srv.FailNext(wxapi.PathStableToken, wxapitest.FailBusy, 0) // cancelled
	s.token(false)
}
