package paytest_test

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

var (
	hexSerial    = regexp.MustCompile(`^[0-9A-F]{40}$`)
	alphanumeric = regexp.MustCompile(`^[A-Za-z0-9]*$`)
	uuidV4       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

func TestNewPlatform_GeneratesDocumentedShapes(t *testing.T) {
	p, err := paytest.NewPlatform("1230000109", "wxd678efh567hg6787")
	if err != nil {
		t.Fatal(err)
	}
	if bits := p.Key.N.BitLen(); bits != paytest.KeyBits {
		t.Errorf("key is %d bits, want %d", bits, paytest.KeyBits)
	}
	if !hexSerial.MatchString(p.Serial) {
		t.Errorf("Serial %q is not 40 upper-case hex digits", p.Serial)
	}
	if len(p.APIv3Key) != 32 || !alphanumeric.Match(p.APIv3Key) {
		t.Errorf("APIv3Key is %d bytes, want 32 alphanumeric", len(p.APIv3Key))
	}
	q, err := paytest.NewPlatform("1230000109", "wxd678efh567hg6787")
	if err != nil {
		t.Fatal(err)
	}
	if q.Serial == p.Serial || string(q.APIv3Key) == string(p.APIv3Key) || q.Key.Equal(p.Key) {
		t.Error("two platforms share a serial, APIv3 key or RSA key")
	}
	if _, err := wechatpay.NewVerifier(p.Config()); err != nil {
		t.Errorf("Config is not a valid verifier config: %v", err)
	}
}

func TestNewPlatform_RequiresMerchant(t *testing.T) {
	for _, ids := range [][2]string{{"", "wx1"}, {"1230000109", ""}} {
		if _, err := paytest.NewPlatform(ids[0], ids[1]); err == nil {
			t.Errorf("NewPlatform(%q, %q) succeeded", ids[0], ids[1])
		}
	}
}

// TestNotify_MatchesTheWireFormat checks a notification with plain crypto, independently
// of wechatpay.Verifier: header names, the signature over timestamp\nnonce\nbody\n, the
// envelope fields and the AES-256-GCM resource.
func TestNotify_MatchesTheWireFormat(t *testing.T) {
	p, err := paytest.NewPlatform("1230000109", "wxd678efh567hg6787")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 6, 1, 2, 35, 0, 0, time.UTC)
	tests := []struct {
		name      string
		state     wechatpay.TradeState
		wantEvent string
	}{
		{"Success", wechatpay.TradeStateSuccess, "TRANSACTION.SUCCESS"},
		{"Closed", wechatpay.TradeStateClosed, "TRANSACTION.CLOSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := wechatpay.Transaction{
				OutTradeNo:  "ord-1",
				TradeState:  tt.state,
				Attach:      "a&b",
				SuccessTime: now,
				Amount:      wechatpay.Amount{Total: 100, Currency: "CNY"},
			}
			h, body, err := p.Notify(tx, now)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"wechatpay-timestamp":      strconv.FormatInt(now.Unix(), 10),
				"wechatpay-serial":         p.Serial,
				"wechatpay-signature-type": "WECHATPAY2-SHA256-RSA2048",
				"content-type":             "application/json",
			}
			for k, v := range want {
				if h[k] != v {
					t.Errorf("header %s = %q, want %q", k, h[k], v)
				}
			}
			if n := h["wechatpay-nonce"]; len(n) != 32 || !alphanumeric.MatchString(n) {
				t.Errorf("wechatpay-nonce %q is not 32 alphanumeric characters", n)
			}
			if len(h) != 6 {
				t.Errorf("headers = %v, want 6", h)
			}

			sig, err := base64.StdEncoding.DecodeString(h["wechatpay-signature"])
			if err != nil {
				t.Fatal(err)
			}
			digest := sha256.Sum256([]byte(h["wechatpay-timestamp"] + "\n" + h["wechatpay-nonce"] + "\n" + string(body) + "\n"))
			if err := rsa.VerifyPKCS1v15(&p.Key.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
				t.Errorf("signature does not verify: %v", err)
			}

			var env struct {
				ID           string `json:"id"`
				CreateTime   string `json:"create_time"`
				ResourceType string `json:"resource_type"`
				EventType    string `json:"event_type"`
				Summary      string `json:"summary"`
				Resource     struct {
					OriginalType   string `json:"original_type"`
					Algorithm      string `json:"algorithm"`
					Ciphertext     string `json:"ciphertext"`
					AssociatedData string `json:"associated_data"`
					Nonce          string `json:"nonce"`
				} `json:"resource"`
			}
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			if !uuidV4.MatchString(env.ID) {
				t.Errorf("id %q is not a UUID", env.ID)
			}
			if env.CreateTime != "2024-06-01T10:35:00+08:00" {
				t.Errorf("create_time = %q", env.CreateTime)
			}
			if env.ResourceType != "encrypt-resource" || env.EventType != tt.wantEvent {
				t.Errorf("resource_type %q event_type %q", env.ResourceType, env.EventType)
			}
			r := env.Resource
			if r.OriginalType != "transaction" || r.Algorithm != "AEAD_AES_256_GCM" || r.AssociatedData != "transaction" {
				t.Errorf("resource = %+v", r)
			}
			if len(r.Nonce) != 12 || !alphanumeric.MatchString(r.Nonce) {
				t.Errorf("resource.nonce %q is not 12 alphanumeric characters", r.Nonce)
			}
			sealed, err := base64.StdEncoding.DecodeString(r.Ciphertext)
			if err != nil {
				t.Fatal(err)
			}
			block, err := aes.NewCipher(p.APIv3Key)
			if err != nil {
				t.Fatal(err)
			}
			gcm, err := cipher.NewGCM(block)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := gcm.Open(nil, []byte(r.Nonce), sealed, []byte(r.AssociatedData))
			if err != nil {
				t.Fatalf("resource does not decrypt: %v", err)
			}
			var got map[string]any
			if err := json.Unmarshal(plain, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]any{
				"mchid": "1230000109", "appid": "wxd678efh567hg6787", "out_trade_no": "ord-1",
				"trade_state": string(tt.state), "attach": "a&b", "success_time": "2024-06-01T10:35:00+08:00",
			} {
				if got[k] != v {
					t.Errorf("transaction %s = %v, want %v", k, got[k], v)
				}
			}
			amount, _ := got["amount"].(map[string]any)
			if amount["total"] != 100.0 || amount["currency"] != "CNY" {
				t.Errorf("transaction amount = %v", got["amount"])
			}
		})
	}
}

func TestMarshalTransaction_OmitsZeroSuccessTime(t *testing.T) {
	b, err := paytest.MarshalTransaction(wechatpay.Transaction{MchID: "1", AppID: "wx", OutTradeNo: "o", TradeState: wechatpay.TradeStateNotPay})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["success_time"]; ok {
		t.Errorf("success_time present in %s", b)
	}
}

func TestRandomString_LengthAndAlphabet(t *testing.T) {
	for _, n := range []int{0, 1, 12, 32} {
		s, err := paytest.RandomString(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != n || !alphanumeric.MatchString(s) {
			t.Errorf("RandomString(%d) = %q", n, s)
		}
	}
}

func TestPlatform_SecretConfiguresAVerifierThatTrustsIt(t *testing.T) {
	p, err := paytest.NewPlatform("1900000001", "wx0000000000000001")
	if err != nil {
		t.Fatal(err)
	}
	secret, err := p.Secret()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := wechatpay.ConfigFromSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	v, err := wechatpay.NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	headers, body, err := p.Notify(wechatpay.Transaction{
		OutTradeNo: "0193a1b2c3d4e5f60718293a4b5c6d7e", TransactionID: "4200000000000000000000000001", TradeType: "JSAPI",
		TradeState: wechatpay.TradeStateSuccess, SuccessTime: now, Amount: wechatpay.Amount{Total: 100, PayerTotal: 100, Currency: "CNY", PayerCurrency: "CNY"},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Parse(wechatpay.HeadersFrom(headers), body); err != nil {
		t.Errorf("Parse: %v", err)
	}
	for _, bad := range []string{`{}`, `[]`, `{"mchid":"1","appid":"2","apiV3Key":"k","platformPublicKeys":{"s":"not pem"}}`, `{"mchid":"1","extra":true}`} {
		if cfg, err := wechatpay.ConfigFromSecret([]byte(bad)); err == nil {
			if _, err := wechatpay.NewVerifier(cfg); err == nil {
				t.Errorf("secret %s accepted", bad)
			}
		}
	}
}
