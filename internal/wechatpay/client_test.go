package wechatpay_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

// merchants are generated once per test binary: [0] is the configured merchant, [1] a
// stranger with its own key and serial.
var merchants = sync.OnceValues(func() ([2]*paytest.Merchant, error) {
	var ms [2]*paytest.Merchant
	for i := range ms {
		m, err := paytest.NewMerchant()
		if err != nil {
			return ms, err
		}
		ms[i] = m
	}
	return ms, nil
})

func testMerchants(t testing.TB) [2]*paytest.Merchant {
	t.Helper()
	ms, err := merchants()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// answering starts a server whose answers handler writes, and a client of f.p's merchant
// for it; requests counts what reached the server.
func answering(t *testing.T, f fixture, handler http.HandlerFunc) (c *wechatpay.Client, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return testkit.Must(t, wechatpay.NewClient, f.p.ClientConfig(testMerchants(t)[0], srv.URL)), requests
}

// write signs body with p at `at` (as WeChat Pay signs answers) and writes it.
func write(t *testing.T, w http.ResponseWriter, p *paytest.Platform, at time.Time, status int, body []byte) {
	h, err := p.Headers(body, at)
	if err != nil {
		t.Error(err)
		return
	}
	for k, v := range h {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	w.Write(body)
}

func order(id string) wechatpay.JSAPIOrder {
	return wechatpay.JSAPIOrder{
		Description: "cup-01 ×2", OutTradeNo: id, TimeExpire: time.Now().Add(15 * time.Minute),
		NotifyURL: "https://shop.example.com/payments/wechatpay/notify", Total: 79800, PayerOpenID: "o-alice",
	}
}

var authorizationRE = regexp.MustCompile(`^WECHATPAY2-SHA256-RSA2048 mchid="([^"]+)",nonce_str="([^"]+)",signature="([^"]+)",timestamp="([0-9]+)",serial_no="([^"]+)"$`)

// TestClient_SignsRequestsAsDocumented checks each request with plain crypto, apart from
// the code that signs it: the Authorization layout, the signature over
// method\nURL\ntimestamp\nnonce\nbody\n with the merchant key, and the request bodies.
func TestClient_SignsRequestsAsDocumented(t *testing.T) {
	f := newFixture(t)
	m := testMerchants(t)[0]
	type seen struct {
		method, uri, auth string
		body              []byte
	}
	got := make(chan seen, 1)
	expire := time.Date(2026, 12, 1, 4, 15, 0, 0, time.UTC)
	c, _ := answering(t, f, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), body}
		switch {
		case r.URL.Path == wechatpay.PathJSAPI:
			write(t, w, f.p, time.Now(), 200, []byte(`{"prepay_id":"wx26112221580621e9b071c00d9e093b0000"}`))
		case strings.HasSuffix(r.URL.Path, "/close"):
			write(t, w, f.p, time.Now(), 204, nil)
		default:
			write(t, w, f.p, time.Now(), 404, []byte(`{"code":"ORDER_NOT_EXIST","message":"订单不存在"}`))
		}
	})
	o := order("0193a1b2c3d4e5f6")
	o.TimeExpire = expire
	tests := []struct {
		name     string
		call     func() error
		method   string
		uri      string
		wantBody string
	}{
		{"JSAPI", func() error { _, err := c.PrepayJSAPI(context.Background(), o); return err }, "POST", "/v3/pay/transactions/jsapi",
			`{"appid":"wxd678efh567hg6787","mchid":"1230000109","description":"cup-01 ×2","out_trade_no":"0193a1b2c3d4e5f6","time_expire":"2026-12-01T12:15:00+08:00","notify_url":"https://shop.example.com/payments/wechatpay/notify","amount":{"total":79800,"currency":"CNY"},"payer":{"openid":"o-alice"}}`},
		{"Query", func() error { _, err := c.QueryOrder(context.Background(), "0193a1b2c3d4e5f6"); return err }, "GET", "/v3/pay/transactions/out-trade-no/0193a1b2c3d4e5f6?mchid=1230000109", ""},
		{"Close", func() error { return c.CloseOrder(context.Background(), "0193a1b2c3d4e5f6") }, "POST", "/v3/pay/transactions/out-trade-no/0193a1b2c3d4e5f6/close", `{"mchid":"1230000109"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().Unix()
			tt.call() // the answers are checked elsewhere; here only the request matters
			s := <-got
			if s.method != tt.method || s.uri != tt.uri || string(s.body) != tt.wantBody {
				t.Fatalf("sent %s %s %s\nwant %s %s %s", s.method, s.uri, s.body, tt.method, tt.uri, tt.wantBody)
			}
			parts := authorizationRE.FindStringSubmatch(s.auth)
			if parts == nil {
				t.Fatalf("Authorization %q does not have the documented layout", s.auth)
			}
			if parts[1] != testMchID || parts[5] != m.Serial || len(parts[2]) < 16 {
				t.Errorf("Authorization mchid %q serial %q nonce %q", parts[1], parts[5], parts[2])
			}
			if ts, _ := strconv.ParseInt(parts[4], 10, 64); ts < before || ts > time.Now().Unix() {
				t.Errorf("timestamp %d not the time of the call", ts)
			}
			msg := tt.method + "\n" + tt.uri + "\n" + parts[4] + "\n" + parts[2] + "\n" + tt.wantBody + "\n"
			sig, err := base64.StdEncoding.DecodeString(parts[3])
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(msg))
			if err := rsa.VerifyPKCS1v15(&m.Key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
				t.Errorf("signature does not verify over %q: %v", msg, err)
			}
		})
	}
}

// TestClient_PaymentParams_SignedForRequestPayment checks paySign with plain crypto over
// appId\ntimeStamp\nnonceStr\npackage\n ("JSAPI调起支付").
func TestClient_PaymentParams_SignedForRequestPayment(t *testing.T) {
	f := newFixture(t)
	m := testMerchants(t)[0]
	c := testkit.Must(t, wechatpay.NewClient, f.p.ClientConfig(m, ""))
	now := time.Unix(1700000000, 0)
	p, err := c.PaymentParams("wx201410272009395522657a690389285100", now)
	if err != nil {
		t.Fatal(err)
	}
	if p.TimeStamp != "1700000000" || p.Package != "prepay_id=wx201410272009395522657a690389285100" || p.SignType != "RSA" || len(p.NonceStr) < 16 {
		t.Fatalf("params %+v", p)
	}
	sum := sha256.Sum256([]byte(testAppID + "\n" + p.TimeStamp + "\n" + p.NonceStr + "\n" + p.Package + "\n"))
	sig, err := base64.StdEncoding.DecodeString(p.PaySign)
	if err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPKCS1v15(&m.Key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		t.Errorf("paySign does not verify: %v", err)
	}
	b, _ := json.Marshal(p)
	var names map[string]string
	json.Unmarshal(b, &names)
	for _, k := range []string{"timeStamp", "nonceStr", "package", "signType", "paySign"} {
		if names[k] == "" {
			t.Errorf("JSON lacks %s: %s", k, b)
		}
	}
	q, _ := c.PaymentParams("wx201410272009395522657a690389285100", now)
	if q.NonceStr == p.NonceStr {
		t.Error("two calls share a nonceStr")
	}
	for _, bad := range []string{"", strings.Repeat("w", 65), "wx 1"} {
		if _, err := c.PaymentParams(bad, now); !errors.Is(err, wechatpay.ErrInvalidArgument) {
			t.Errorf("PaymentParams(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

// TestClient_RefusesAnswersThatDoNotVerify: every answer is checked before it is read; a
// forged, tampered, stale or mislabelled answer is ErrVerification, whatever it says.
func TestClient_RefusesAnswersThatDoNotVerify(t *testing.T) {
	f := newFixture(t)
	paid := []byte(`{"prepay_id":"wx26112221580621e9b071c00d9e093b0000"}`)
	wrongSerial := *f.p
	wrongSerial.Serial = f.other.Serial
	impostor := *f.other
	impostor.Serial = f.p.Serial // claims to be the platform, signs with its own key
	tests := []struct {
		name   string
		answer func(t *testing.T, w http.ResponseWriter)
		ok     bool
	}{
		{"GenuineAnswerIsAccepted", func(t *testing.T, w http.ResponseWriter) { write(t, w, f.p, time.Now(), 200, paid) }, true},
		{"SignedByAnotherKey", func(t *testing.T, w http.ResponseWriter) { write(t, w, &impostor, time.Now(), 200, paid) }, false},
		{"UnknownSerial", func(t *testing.T, w http.ResponseWriter) { write(t, w, &wrongSerial, time.Now(), 200, paid) }, false},
		{"TamperedBody", func(t *testing.T, w http.ResponseWriter) {
			h, _ := f.p.Headers(paid, time.Now())
			for k, v := range h {
				w.Header().Set(k, v)
			}
			w.Write([]byte(strings.Replace(string(paid), "0000", "0001", 1)))
		}, false},
		{"StaleTimestamp", func(t *testing.T, w http.ResponseWriter) { write(t, w, f.p, time.Now().Add(-6*time.Minute), 200, paid) }, false},
		{"SignTestProbe", func(t *testing.T, w http.ResponseWriter) {
			h, _ := f.p.Headers(paid, time.Now())
			for k, v := range h {
				w.Header().Set(k, v)
			}
			w.Header().Set(wechatpay.HeaderSignature, wechatpay.SignTestPrefix+h["wechatpay-signature"])
			w.Write(paid)
		}, false},
		{"Unsigned", func(t *testing.T, w http.ResponseWriter) { w.Write(paid) }, false},
		{"ForgedError", func(t *testing.T, w http.ResponseWriter) {
			write(t, w, &impostor, time.Now(), 403, []byte(`{"code":"ORDERPAID","message":"该订单已支付"}`))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := answering(t, f, func(w http.ResponseWriter, r *http.Request) { tt.answer(t, w) })
			id, err := c.PrepayJSAPI(context.Background(), order("0193a1b2c3d4e5f6"))
			if tt.ok {
				if err != nil || id != "wx26112221580621e9b071c00d9e093b0000" {
					t.Fatalf("PrepayJSAPI = %q, %v", id, err)
				}
				return
			}
			if !errors.Is(err, wechatpay.ErrVerification) {
				t.Fatalf("PrepayJSAPI = %q, %v; want ErrVerification", id, err)
			}
			var apiErr *wechatpay.APIError
			if id != "" || errors.As(err, &apiErr) || errors.Is(err, wechatpay.ErrUnavailable) {
				t.Errorf("a forged answer was read: id %q, err %v", id, err)
			}
		})
	}
}

// TestClient_ErrorsCallersBranchOn: retryable failures are ErrUnavailable, WeChat Pay's
// 4xx codes are data in *APIError, wrong answers are ErrMalformed / ErrMerchantMismatch.
func TestClient_ErrorsCallersBranchOn(t *testing.T) {
	f := newFixture(t)
	const id = "0193a1b2c3d4e5f6"
	query := func(tx string) func(t *testing.T, w http.ResponseWriter) {
		return func(t *testing.T, w http.ResponseWriter) { write(t, w, f.p, time.Now(), 200, []byte(tx)) }
	}
	tests := []struct {
		name        string
		answer      func(t *testing.T, w http.ResponseWriter)
		unavailable bool
		code        string // APIError.Code wanted, "" for none
		status      int
		sentinel    error
	}{
		{"ServerError", func(t *testing.T, w http.ResponseWriter) { w.WriteHeader(502) }, true, "", 502, nil},
		{"SignedSystemError", func(t *testing.T, w http.ResponseWriter) {
			write(t, w, f.p, time.Now(), 500, []byte(`{"code":"SYSTEM_ERROR","message":"系统错误"}`))
		}, true, "", 500, nil},
		{"FrequencyLimited", func(t *testing.T, w http.ResponseWriter) { w.WriteHeader(429) }, true, "", 429, nil},
		{"OrderNotExist", func(t *testing.T, w http.ResponseWriter) {
			write(t, w, f.p, time.Now(), 404, []byte(`{"code":"ORDER_NOT_EXIST","message":"订单不存在"}`))
		}, false, wechatpay.CodeOrderNotExist, 404, nil},
		{"ErrorWithoutJSON", func(t *testing.T, w http.ResponseWriter) { write(t, w, f.p, time.Now(), 400, []byte(`oops`)) }, false, "", 400, nil},
		{"NotJSON", query(`<xml/>`), false, "", 0, wechatpay.ErrMalformed},
		{"UnknownTradeState", query(`{"appid":"wxd678efh567hg6787","mchid":"1230000109","out_trade_no":"0193a1b2c3d4e5f6","trade_state":"PAID"}`), false, "", 0, wechatpay.ErrMalformed},
		{"SuccessWithoutTransactionID", query(`{"appid":"wxd678efh567hg6787","mchid":"1230000109","out_trade_no":"0193a1b2c3d4e5f6","trade_state":"SUCCESS","trade_type":"JSAPI","success_time":"2024-06-01T10:34:56+08:00","amount":{"total":1}}`), false, "", 0, wechatpay.ErrMalformed},
		{"AnotherOrder", query(`{"appid":"wxd678efh567hg6787","mchid":"1230000109","out_trade_no":"0193a1b2c3d4e5f7","trade_state":"NOTPAY"}`), false, "", 0, wechatpay.ErrMalformed},
		{"AnotherMerchant", query(`{"appid":"wxd678efh567hg6787","mchid":"1230000110","out_trade_no":"0193a1b2c3d4e5f6","trade_state":"NOTPAY"}`), false, "", 0, wechatpay.ErrMerchantMismatch},
		{"AnotherApp", query(`{"appid":"wx0000000000000000","mchid":"1230000109","out_trade_no":"0193a1b2c3d4e5f6","trade_state":"NOTPAY"}`), false, "", 0, wechatpay.ErrMerchantMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := answering(t, f, func(w http.ResponseWriter, r *http.Request) { tt.answer(t, w) })
			tx, err := c.QueryOrder(context.Background(), id)
			if err == nil {
				t.Fatalf("QueryOrder = %+v, want an error", tx)
			}
			if got := errors.Is(err, wechatpay.ErrUnavailable); got != tt.unavailable {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v", err, got)
			}
			var apiErr *wechatpay.APIError
			isAPI := errors.As(err, &apiErr)
			if tt.status != 0 && (!isAPI || apiErr.StatusCode != tt.status || apiErr.Code != tt.code) {
				t.Errorf("err %v, want *APIError status %d code %q", err, tt.status, tt.code)
			}
			if tt.sentinel != nil && (!errors.Is(err, tt.sentinel) || isAPI) {
				t.Errorf("err %v, want %v", err, tt.sentinel)
			}
		})
	}
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		c := testkit.Must(t, wechatpay.NewClient, f.p.ClientConfig(testMerchants(t)[0], srv.URL))
		if err := c.CloseOrder(context.Background(), id); !errors.Is(err, wechatpay.ErrUnavailable) {
			t.Errorf("CloseOrder = %v, want ErrUnavailable", err)
		}
	})
}

// TestClient_RejectsBadArgumentsWithoutSending: nothing reaches WeChat Pay.
func TestClient_RejectsBadArgumentsWithoutSending(t *testing.T) {
	f := newFixture(t)
	c, requests := answering(t, f, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	edit := func(change func(o *wechatpay.JSAPIOrder)) wechatpay.JSAPIOrder {
		o := order("0193a1b2c3d4e5f6")
		change(&o)
		return o
	}
	orders := map[string]wechatpay.JSAPIOrder{
		"ShortOutTradeNo":   edit(func(o *wechatpay.JSAPIOrder) { o.OutTradeNo = "abc12" }),
		"LongOutTradeNo":    edit(func(o *wechatpay.JSAPIOrder) { o.OutTradeNo = strings.Repeat("a", 33) }),
		"OutTradeNoSlash":   edit(func(o *wechatpay.JSAPIOrder) { o.OutTradeNo = "abc/../def" }),
		"NoDescription":     edit(func(o *wechatpay.JSAPIOrder) { o.Description = "" }),
		"LongDescription":   edit(func(o *wechatpay.JSAPIOrder) { o.Description = strings.Repeat("杯", 43) }),
		"NoExpiry":          edit(func(o *wechatpay.JSAPIOrder) { o.TimeExpire = time.Time{} }),
		"ZeroAmount":        edit(func(o *wechatpay.JSAPIOrder) { o.Total = 0 }),
		"NegativeAmount":    edit(func(o *wechatpay.JSAPIOrder) { o.Total = -1 }),
		"USD":               edit(func(o *wechatpay.JSAPIOrder) { o.Currency = "USD" }),
		"NoOpenID":          edit(func(o *wechatpay.JSAPIOrder) { o.PayerOpenID = "" }),
		"RelativeNotifyURL": edit(func(o *wechatpay.JSAPIOrder) { o.NotifyURL = "/notify" }),
		"NotifyURLQuery":    edit(func(o *wechatpay.JSAPIOrder) { o.NotifyURL = "https://shop.example.com/notify?x=1" }),
		"LongAttach":        edit(func(o *wechatpay.JSAPIOrder) { o.Attach = strings.Repeat("a", 129) }),
	}
	for name, o := range orders {
		t.Run(name, func(t *testing.T) {
			if _, err := c.PrepayJSAPI(context.Background(), o); !errors.Is(err, wechatpay.ErrInvalidArgument) {
				t.Errorf("PrepayJSAPI = %v, want ErrInvalidArgument", err)
			}
		})
	}
	for _, id := range []string{"", "abc", "a?b=cdefg", "0193a1b2c3d4e5f6/close"} {
		if _, err := c.QueryOrder(context.Background(), id); !errors.Is(err, wechatpay.ErrInvalidArgument) {
			t.Errorf("QueryOrder(%q) = %v", id, err)
		}
		if err := c.CloseOrder(context.Background(), id); !errors.Is(err, wechatpay.ErrInvalidArgument) {
			t.Errorf("CloseOrder(%q) = %v", id, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestNewClient_RejectsBadConfig(t *testing.T) {
	f := newFixture(t)
	m := testMerchants(t)[0]
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]func(c *wechatpay.ClientConfig){
		"NoMerchantKey":    func(c *wechatpay.ClientConfig) { c.MerchantKey = nil },
		"SmallMerchantKey": func(c *wechatpay.ClientConfig) { c.MerchantKey = small },
		"NoSerial":         func(c *wechatpay.ClientConfig) { c.MerchantSerial = "" },
		"SerialWithSpace":  func(c *wechatpay.ClientConfig) { c.MerchantSerial = "AB CD" },
		"BaseURLWithPath":  func(c *wechatpay.ClientConfig) { c.BaseURL = "https://api.mch.weixin.qq.com/v3" },
		"BaseURLNotHTTP":   func(c *wechatpay.ClientConfig) { c.BaseURL = "ftp://api.mch.weixin.qq.com" },
		"BaseURLWithQuery": func(c *wechatpay.ClientConfig) { c.BaseURL = "https://api.mch.weixin.qq.com?a=b" },
		"NoPlatformKeys":   func(c *wechatpay.ClientConfig) { c.PublicKeys = nil },
		"NoMchID":          func(c *wechatpay.ClientConfig) { c.MchID = "" },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := f.p.ClientConfig(m, "")
			edit(&cfg)
			if _, err := wechatpay.NewClient(cfg); err == nil {
				t.Error("NewClient accepted it")
			}
		})
	}
	if _, err := wechatpay.NewClient(f.p.ClientConfig(m, "")); err != nil {
		t.Errorf("default BaseURL refused: %v", err)
	}
}
