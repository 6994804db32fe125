package wxapi_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stockguard/stockguard/internal/wxapi"
)

// Modes of FuzzAnswer (mode % 2): 0 reads the body as a getStableAccessToken answer, 1 as
// an {"errcode","errmsg"} answer of uploadShippingInfo.
type answerSeed struct {
	name   string
	mode   uint8
	status int
	body   string
	accept bool
}

var answerSeeds = []answerSeed{
	{"TokenDocumented", 0, 200, `{"access_token":"ACCESS_TOKEN","expires_in":7200}`, true},
	{"TokenShortLived", 0, 200, `{"access_token":"54_JNlXRPvk","expires_in":300}`, true},
	{"TokenLongerThanDocumented", 0, 200, `{"access_token":"t","expires_in":99999}`, true},
	{"TokenError", 0, 200, `{"errcode":40125,"errmsg":"invalid appsecret rid: 6"}`, false},
	{"TokenEmpty", 0, 200, `{"access_token":"","expires_in":7200}`, false},
	{"TokenWithSpace", 0, 200, `{"access_token":"a b","expires_in":7200}`, false},
	{"TokenNoExpiry", 0, 200, `{"access_token":"t"}`, false},
	{"TokenServerError", 0, 502, ``, false},
	{"TokenNotJSON", 0, 200, `<html>`, false},
	{"ResultOK", 1, 200, `{"errcode":0,"errmsg":"ok"}`, true},
	{"ResultPaymentNotFound", 1, 200, `{"errcode":10060001,"errmsg":"支付单不存在 rid: 650a4efa-79ed4280-651d9c91"}`, false},
	{"ResultLongMessage", 1, 200, `{"errcode":-1,"errmsg":"` + strings.Repeat("系统繁忙", 100) + `"}`, false},
	{"ResultInvalidUTF8Message", 1, 200, "{\"errcode\":47001,\"errmsg\":\"\xff\xfe\"}", false},
	{"ResultNoErrcode", 1, 200, `{"errmsg":"ok"}`, false},
	{"ResultServerError", 1, 503, `{"errcode":0}`, false},
	{"ResultArray", 1, 200, `[0]`, false},
}

// checkAnswer reads one answer as mode says and checks the outcome's invariants.
func checkAnswer(t *testing.T, mode uint8, status int, body []byte) error {
	t.Helper()
	var (
		err error
		tok string
		ttl time.Duration
		op  = wxapi.OpStableToken
	)
	if mode%2 == 0 {
		tok, ttl, err = wxapi.DecodeToken(status, body)
	} else {
		op = wxapi.OpUploadShippingInfo
		err = wxapi.DecodeResult(op, status, body)
	}
	if err == nil {
		if status != 200 {
			t.Errorf("accepted HTTP %d", status)
		}
		if mode%2 == 0 && (tok == "" || len(tok) > wxapi.MaxAccessTokenLen || strings.ContainsAny(tok, " \t\r\n\"") ||
			ttl <= 0 || ttl > wxapi.MaxTokenTTL) {
			t.Errorf("accepted token %q for %v", tok, ttl)
		}
		return nil
	}
	var werr *wxapi.Error
	switch {
	case tok != "" || ttl != 0:
		t.Errorf("returned %q, %v with %v", tok, ttl, err)
	case errors.Is(err, wxapi.ErrInvalidArgument):
		t.Errorf("an answer is not an invalid argument: %v", err)
	case errors.As(err, &werr):
		if werr.Code == 0 || werr.Op != op || len(werr.Msg) > 256 || !utf8.ValidString(werr.Msg) || status != 200 {
			t.Errorf("*Error %+v for HTTP %d", werr, status)
		}
	case !errors.Is(err, wxapi.ErrUnavailable):
		t.Errorf("untyped error %v", err)
	}
	if len(err.Error()) > 2048 {
		t.Errorf("error of %d bytes", len(err.Error()))
	}
	return err
}

func FuzzAnswer(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add(s.mode, s.status, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, mode uint8, status int, body []byte) {
		_ = checkAnswer(t, mode, status, body) // checkAnswer checks the outcome itself
	})
}

// TestFuzzAnswer_SeedsReachEveryOutcome keeps FuzzAnswer honest: the documented answers
// are accepted, the others refused.
func TestFuzzAnswer_SeedsReachEveryOutcome(t *testing.T) {
	for _, s := range answerSeeds {
		t.Run(s.name, func(t *testing.T) {
			if err := checkAnswer(t, s.mode, s.status, []byte(s.body)); s.accept != (err == nil) {
				t.Errorf("accept %v, got %v", s.accept, err)
			}
		})
	}
}
