package wxapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

func TestError_EachHandledCodeIsRetryLaterAlreadyAppliedNotSubscribedOrFinal(t *testing.T) {
	const (
		retry = iota
		applied
		notSubscribed
		final
	)
	codes := map[int]int{
		wxapi.CodeSystemBusy: retry, wxapi.CodeShippingBusy: retry, wxapi.CodeShippingBusyToo: retry,
		wxapi.CodeFrequencyLimited: retry, wxapi.CodeDailyQuota: retry, wxapi.CodeMinuteQuota: retry,
		wxapi.CodeInvalidCredential: retry, wxapi.CodeInvalidAccessToken: retry, wxapi.CodeAccessTokenExpired: retry,
		wxapi.CodePaymentNotFound: retry, wxapi.CodeSpecialOrderNotFound: retry,
		wxapi.CodeShippingNotUpdated: applied,
		wxapi.CodeUserRefused:        notSubscribed,
		wxapi.CodeInvalidGrantType:   final, wxapi.CodeInvalidOpenID: final, wxapi.CodeInvalidAppID: final,
		wxapi.CodeInvalidTemplateID: final, wxapi.CodeInvalidAppSecret: final, wxapi.CodeIPNotWhitelisted: final,
		wxapi.CodeAccessTokenMissing: final, wxapi.CodeAppIDMissing: final, wxapi.CodeAppSecretMissing: final,
		wxapi.CodeInvalidPage: final, wxapi.CodeRequirePOST: final, wxapi.CodeEmptyPostData: final,
		wxapi.CodeDataFormat: final, wxapi.CodeTemplateData: final, wxapi.CodeAPIUnauthorized: final,
		wxapi.CodeShippingFinished: final, wxapi.CodeReshipUsed: final, wxapi.CodeNotShippable: final,
		wxapi.CodeInvalidLogisticsType: final, wxapi.CodeSplitNeedsExpress: final, wxapi.CodeAllDeliveredMissing: final,
		wxapi.CodeItemDescEmpty: final, wxapi.CodeItemDescTooLong: final, wxapi.CodeInvalidParam: final,
		wxapi.CodeNoItemDesc: final, wxapi.CodeShippingListTooLong: final, wxapi.CodeExpressCompanyTooLong: final,
		wxapi.CodeTrackingNoTooLong: final, wxapi.CodePayerMismatch: final, wxapi.CodeInvalidDetailPath: final,
		wxapi.CodeInvalidOrderNumberType: final, wxapi.CodeTransactionIDMissing: final, wxapi.CodeMchIDMissing: final,
		wxapi.CodeOutTradeNoMissing: final, wxapi.CodeInvalidUploadTime: final, wxapi.CodeInvalidDeliveryMode: final,
		wxapi.CodeTrackingNoMissing: final, wxapi.CodeExpressCompanyMissing: final, wxapi.CodeUnifiedNeedsOnePackage: final,
		wxapi.CodeInvalidSpecialType: final, wxapi.CodeInvalidDelayTo: final,
		12345678: final, // a code this package does not know
	}
	for code, want := range codes {
		err := error(&wxapi.Error{Op: wxapi.OpUploadShippingInfo, Code: code, Msg: "m"})
		got := final // unless a sentinel matches
		switch {
		case errors.Is(err, wxapi.ErrUnavailable):
			got = retry
		case errors.Is(err, wxapi.ErrAlreadyApplied):
			got = applied
		case errors.Is(err, wxapi.ErrNotSubscribed):
			got = notSubscribed
		}
		matches := 0
		for _, s := range []error{wxapi.ErrUnavailable, wxapi.ErrAlreadyApplied, wxapi.ErrNotSubscribed, wxapi.ErrInvalidArgument} {
			if errors.Is(err, s) {
				matches++
			}
		}
		if got != want || matches > 1 || wxapi.Retryable(err) != (want == retry) || (&wxapi.Error{Code: code}).Retryable() != (want == retry) {
			t.Errorf("errcode %d: class %d (%d sentinels), want %d", code, got, matches, want)
		}
	}
}

// leakyFront sits in front of the stand-in: it records the access tokens it sees and cuts
// the connection of every API call, so the client's transport error would quote the URL.
type leakyFront struct {
	next   http.Handler
	mu     sync.Mutex
	tokens []string
}

func (f *leakyFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == wxapi.PathStableToken {
		f.next.ServeHTTP(w, r)
		return
	}
	f.mu.Lock()
	f.tokens = append(f.tokens, r.URL.Query().Get("access_token"))
	f.mu.Unlock()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func TestClient_ErrorsNeverQuoteTheTokenOrTheSecret(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	f := &leakyFront{next: h.srv}
	front := httptest.NewServer(f)
	defer front.Close()
	c := h.client(t, func(cfg *wxapi.Config) { cfg.BaseURL = front.URL })
	err := c.UpdateOrderDetailPath(context.Background(), detailPath)
	f.mu.Lock()
	tokens := f.tokens
	f.mu.Unlock()
	if !wxapi.Retryable(err) || len(tokens) != 1 || tokens[0] == "" {
		t.Fatalf("err %v after %d calls, want a retryable transport error after 1", err, len(tokens))
	}
	if msg := err.Error(); strings.Contains(msg, tokens[0]) || strings.Contains(msg, secret) || strings.Contains(msg, "access_token=") {
		t.Errorf("error quotes the request: %v", msg)
	}

	wrong := h.client(t, func(cfg *wxapi.Config) { cfg.AppSecret = "a-wrong-secret-never-quoted" })
	if err := wrong.UpdateOrderDetailPath(context.Background(), detailPath); err == nil || strings.Contains(err.Error(), "a-wrong-secret") {
		t.Errorf("err %v", err)
	}
}

func TestNew_RefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]wxapi.Config{
		"NoAppID":        {AppSecret: secret},
		"NoSecret":       {AppID: appID},
		"SecretSpace":    {AppID: appID, AppSecret: "a secret"},
		"BaseWithPath":   {AppID: appID, AppSecret: secret, BaseURL: "https://api.weixin.qq.com/cgi-bin"},
		"BaseNotHTTP":    {AppID: appID, AppSecret: secret, BaseURL: "api.weixin.qq.com"},
		"NegativeMargin": {AppID: appID, AppSecret: secret, RefreshMargin: -1},
		"MarginOverTTL":  {AppID: appID, AppSecret: secret, RefreshMargin: wxapi.MinTokenTTL + 1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := wxapi.New(cfg); err == nil {
				t.Error("New accepted it")
			} else if cfg.AppSecret != "" && strings.Contains(err.Error(), cfg.AppSecret) {
				t.Errorf("error quotes the secret: %v", err)
			}
		})
	}
}
