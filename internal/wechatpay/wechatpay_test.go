package wechatpay_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

const (
	testMchID = "1230000109"         // matches testdata/transaction_success.json
	testAppID = "wxd678efh567hg6787" // matches testdata/transaction_success.json
)

var beijing = time.FixedZone("CST", 8*60*60)

// testNow is the verifier's clock in these tests: 4 seconds after success_time in the
// fixture, as a real notification would arrive.
var testNow = time.Date(2024, 6, 1, 10, 35, 0, 0, beijing)

// platforms are generated once per test binary (RSA key generation is slow under -race)
// and never mutated; tests copy a Platform before changing a field.
var platforms = sync.OnceValues(func() ([2]*paytest.Platform, error) {
	var ps [2]*paytest.Platform
	for i := range ps {
		p, err := paytest.NewPlatform(testMchID, testAppID)
		if err != nil {
			return ps, err
		}
		ps[i] = p
	}
	return ps, nil
})

// fixture is one merchant's view: p is its WeChat Pay platform, other an unrelated key
// holder with its own serial, APIv3 key and RSA key.
type fixture struct {
	p, other *paytest.Platform
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	ps, err := platforms()
	if err != nil {
		t.Fatal(err)
	}
	return fixture{p: ps[0], other: ps[1]}
}

// config trusts f.p with the test clock.
func (f fixture) config() wechatpay.Config {
	cfg := f.p.Config()
	cfg.Now = func() time.Time { return testNow }
	return cfg
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resource encrypts plaintext the way WeChat Pay does, under p's APIv3 key.
func resource(t testing.TB, p *paytest.Platform, plaintext []byte) paytest.Resource {
	t.Helper()
	r, err := p.Encrypt(plaintext, paytest.AssociatedData)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// envelope fills testdata/notification_envelope.json with r.
func envelope(t testing.TB, r paytest.Resource) []byte {
	t.Helper()
	return []byte(strings.NewReplacer(
		"{{CREATE_TIME}}", "2024-06-01T10:35:00+08:00",
		"{{ALGORITHM}}", r.Algorithm,
		"{{CIPHERTEXT}}", r.Ciphertext,
		"{{ASSOCIATED_DATA}}", r.AssociatedData,
		"{{NONCE}}", r.Nonce,
	).Replace(string(readFixture(t, "notification_envelope.json"))))
}

// signed returns the headers p sends with body at the given time, through HeadersFrom as
// a handler would read them from API Gateway.
func signed(t testing.TB, p *paytest.Platform, body []byte, at time.Time) wechatpay.Headers {
	t.Helper()
	h, err := p.Headers(body, at)
	if err != nil {
		t.Fatal(err)
	}
	return wechatpay.HeadersFrom(h)
}

// genuine is the fixture notification as f.p sends it at testNow.
func (f fixture) genuine(t testing.TB) (wechatpay.Headers, []byte) {
	t.Helper()
	body := envelope(t, resource(t, f.p, readFixture(t, "transaction_success.json")))
	return signed(t, f.p, body, testNow), body
}

// withPlaintext is a genuine notification carrying plaintext as its transaction JSON.
func (f fixture) withPlaintext(t testing.TB, plaintext string) (wechatpay.Headers, []byte) {
	t.Helper()
	body := envelope(t, resource(t, f.p, []byte(plaintext)))
	return signed(t, f.p, body, testNow), body
}

// withResource is a genuine notification whose resource was edited before signing.
func (f fixture) withResource(t testing.TB, edit func(r *paytest.Resource)) (wechatpay.Headers, []byte) {
	t.Helper()
	r := resource(t, f.p, readFixture(t, "transaction_success.json"))
	edit(&r)
	body := envelope(t, r)
	return signed(t, f.p, body, testNow), body
}

// flipBit flips bit 0 of byte i (negative: from the end) of base64 data.
func flipBit(t testing.TB, b64 string, i int) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	if i < 0 {
		i += len(raw)
	}
	raw[i] ^= 1
	return base64.StdEncoding.EncodeToString(raw)
}

func TestParse_ValidNotificationHasEveryField(t *testing.T) {
	f := newFixture(t)
	h, body := f.genuine(t)
	n, err := testkit.Must(t, wechatpay.NewVerifier, f.config()).Parse(h, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	wantCreate := time.Date(2024, 6, 1, 10, 35, 0, 0, beijing)
	wantSuccess := time.Date(2024, 6, 1, 10, 34, 56, 0, beijing)
	if !n.CreateTime.Equal(wantCreate) {
		t.Errorf("CreateTime = %v, want %v", n.CreateTime, wantCreate)
	}
	if n.Transaction == nil {
		t.Fatal("Transaction is nil")
	}
	if !n.Transaction.SuccessTime.Equal(wantSuccess) {
		t.Errorf("SuccessTime = %v, want %v", n.Transaction.SuccessTime, wantSuccess)
	}
	if _, off := n.Transaction.SuccessTime.Zone(); off != 8*60*60 {
		t.Errorf("SuccessTime offset = %ds, want +08:00", off)
	}
	gotTx := *n.Transaction
	gotTx.SuccessTime = time.Time{}
	wantTx := wechatpay.Transaction{
		AppID:          testAppID,
		MchID:          testMchID,
		OutTradeNo:     "SG20240601103400ab12",
		TransactionID:  "4200001234202406011234567890",
		TradeType:      "JSAPI",
		TradeState:     wechatpay.TradeStateSuccess,
		TradeStateDesc: "支付成功",
		BankType:       "CMC",
		Attach:         "order=SG20240601103400ab12&source=flashsale",
		Payer:          wechatpay.Payer{OpenID: "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"},
		Amount:         wechatpay.Amount{Total: 9900, PayerTotal: 9900, Currency: "CNY", PayerCurrency: "CNY"},
	}
	if gotTx != wantTx {
		t.Errorf("Transaction =\n%+v\nwant\n%+v", gotTx, wantTx)
	}
	got := *n
	got.CreateTime, got.Transaction = time.Time{}, nil
	want := wechatpay.Notification{Envelope: wechatpay.Envelope{
		ID:           "EV-2018022511223320873",
		EventType:    wechatpay.EventTransactionSuccess,
		ResourceType: wechatpay.ResourceTypeEncrypted,
		Summary:      "支付成功",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Notification =\n%+v\nwant\n%+v", got, want)
	}
}

// TestParse_Rejects covers every way a notification fails, each with the sentinel the
// handler branches on and a message fragment naming the check that fired, so a case cannot
// pass by failing for an unrelated reason.
func TestParse_Rejects(t *testing.T) {
	f := newFixture(t)
	type input struct {
		cfg  wechatpay.Config
		h    wechatpay.Headers
		body []byte
	}
	genuine := func(t *testing.T) input {
		h, body := f.genuine(t)
		return input{f.config(), h, body}
	}
	// resource is the input of a notification whose resource was changed, then signed.
	resource := func(change func(t *testing.T, r *paytest.Resource)) func(t *testing.T) input {
		return func(t *testing.T) input {
			h, body := f.withResource(t, func(r *paytest.Resource) { change(t, r) })
			return input{f.config(), h, body}
		}
	}
	// plaintextReplaced is the input of a notification whose decrypted transaction is
	// testdata/transaction_success.json with old replaced by new.
	plaintextReplaced := func(old, new string) func(t *testing.T) input {
		return func(t *testing.T) input {
			h, body := f.withPlaintext(t, strings.Replace(string(readFixture(t, "transaction_success.json")), old, new, 1))
			return input{f.config(), h, body}
		}
	}
	// bodyResigned is a genuine input with old replaced by new in its body, signed again.
	bodyResigned := func(old, new string) func(t *testing.T) input {
		return func(t *testing.T) input {
			in := genuine(t)
			in.body = bytes.Replace(in.body, []byte(old), []byte(new), 1)
			in.h = signed(t, f.p, in.body, testNow)
			return in
		}
	}
	// changed is a genuine input after change.
	changed := func(change func(t *testing.T, in *input)) func(t *testing.T) input {
		return func(t *testing.T) input {
			in := genuine(t)
			change(t, &in)
			return in
		}
	}
	tests := []struct {
		name  string
		build func(t *testing.T) input
		want  error
		msg   string
	}{
		{"ForgedSignature", func(t *testing.T) input {
			in := genuine(t)
			junk := make([]byte, 256)
			rand.Read(junk)
			in.h.Signature = base64.StdEncoding.EncodeToString(junk)
			return in
		}, wechatpay.ErrVerification, "signature does not verify"},
		{"SignatureWithOneBitFlipped", changed(func(t *testing.T, in *input) { in.h.Signature = flipBit(t, in.h.Signature, 100) }), wechatpay.ErrVerification, "signature does not verify"},
		{"SignatureByAnotherKeyUnderTrustedSerial", func(t *testing.T) input {
			in := genuine(t)
			impostor := *f.other
			impostor.Serial = f.p.Serial
			in.h = signed(t, &impostor, in.body, testNow)
			return in
		}, wechatpay.ErrVerification, "signature does not verify"},
		{"BodyChangedAfterSigning", changed(func(t *testing.T, in *input) {
			in.body = bytes.Replace(in.body, []byte("EV-2018022511223320873"), []byte("EV-2018022511223320874"), 1)
		}), wechatpay.ErrVerification, "signature does not verify"},
		{"NonceChangedAfterSigning", changed(func(t *testing.T, in *input) { in.h.Nonce += "x" }), wechatpay.ErrVerification, "signature does not verify"},
		{"TimestampChangedAfterSigning", func(t *testing.T) input {
			in := genuine(t)
			in.h = signed(t, f.p, in.body, testNow.Add(-time.Second))
			in.h.Timestamp = strconv.FormatInt(testNow.Unix(), 10)
			return in
		}, wechatpay.ErrVerification, "signature does not verify"},
		{"UnknownSerial", changed(func(t *testing.T, in *input) { in.h = signed(t, f.other, in.body, testNow) }), wechatpay.ErrVerification, "unknown Wechatpay-Serial"},
		{"StaleTimestamp", changed(func(t *testing.T, in *input) {
			in.h = signed(t, f.p, in.body, testNow.Add(-wechatpay.DefaultMaxSkew-time.Second))
		}), wechatpay.ErrVerification, "from now"},
		{"FutureTimestamp", changed(func(t *testing.T, in *input) {
			in.h = signed(t, f.p, in.body, testNow.Add(wechatpay.DefaultMaxSkew+time.Second))
		}), wechatpay.ErrVerification, "from now"},
		{"SignTestProbe", changed(func(t *testing.T, in *input) { in.h.Signature = wechatpay.SignTestPrefix + in.h.Signature }), wechatpay.ErrVerification, "sign-test probe"},
		{"SignTestProbeCheckedBeforeClockAndKeys", func(t *testing.T) input {
			in := genuine(t)
			in.h.Signature = wechatpay.SignTestPrefix + "c2lnbmF0dXJl"
			in.h.Timestamp = "1"
			in.h.Serial = "PUB_KEY_ID_0000000000000000000000000000"
			return in
		}, wechatpay.ErrVerification, "sign-test probe"},
		{"TamperedCiphertextResigned", resource(func(t *testing.T, r *paytest.Resource) { r.Ciphertext = flipBit(t, r.Ciphertext, 0) }), wechatpay.ErrVerification, "AES-GCM tag mismatch"},
		{"TamperedTagResigned", resource(func(t *testing.T, r *paytest.Resource) { r.Ciphertext = flipBit(t, r.Ciphertext, -1) }), wechatpay.ErrVerification, "AES-GCM tag mismatch"},
		{"TamperedAssociatedDataResigned", resource(func(t *testing.T, r *paytest.Resource) { r.AssociatedData = "certificate" }), wechatpay.ErrVerification, "AES-GCM tag mismatch"},
		{"TamperedResourceNonceResigned", resource(func(t *testing.T, r *paytest.Resource) { r.Nonce = string(r.Nonce[0]^1) + r.Nonce[1:] }), wechatpay.ErrVerification, "AES-GCM tag mismatch"},
		{"WrongAPIv3Key", changed(func(t *testing.T, in *input) { in.cfg.APIv3Key = f.other.APIv3Key }), wechatpay.ErrVerification, "AES-GCM tag mismatch"},
		{"WrongAlgorithm", resource(func(t *testing.T, r *paytest.Resource) { r.Algorithm = "AEAD_AES_128_GCM" }), wechatpay.ErrMalformed, "resource.algorithm"},
		{"WrongOriginalType", bodyResigned(`"original_type": "transaction"`, `"original_type": "refund"`), wechatpay.ErrMalformed, "resource.original_type"},
		{"WrongResourceType", bodyResigned(`"encrypt-resource"`, `"plain-resource"`), wechatpay.ErrMalformed, "resource_type"},
		{"CiphertextNotBase64", resource(func(t *testing.T, r *paytest.Resource) { r.Ciphertext = "***" + r.Ciphertext }), wechatpay.ErrMalformed, "resource.ciphertext is not base64"},
		{"CiphertextShorterThanTag", resource(func(t *testing.T, r *paytest.Resource) { r.Ciphertext = "AAAA" }), wechatpay.ErrMalformed, "shorter than the 16-byte tag"},
		{"ResourceNonceNot12Bytes", resource(func(t *testing.T, r *paytest.Resource) { r.Nonce = r.Nonce[:11] }), wechatpay.ErrMalformed, "resource.nonce is 11 bytes"},
		{"MissingTimestamp", changed(func(t *testing.T, in *input) { in.h.Timestamp = "" }), wechatpay.ErrVerification, "missing Wechatpay-Timestamp"},
		{"MissingNonce", changed(func(t *testing.T, in *input) { in.h.Nonce = "" }), wechatpay.ErrVerification, "missing Wechatpay-Nonce"},
		{"MissingSignature", changed(func(t *testing.T, in *input) { in.h.Signature = "" }), wechatpay.ErrVerification, "missing Wechatpay-Signature"},
		{"MissingSerial", changed(func(t *testing.T, in *input) { in.h.Serial = "" }), wechatpay.ErrVerification, "missing Wechatpay-Serial"},
		{"NoHeadersAtAll", changed(func(t *testing.T, in *input) {
			in.h = wechatpay.HeadersFrom(map[string]string{"content-type": "application/json"})
		}), wechatpay.ErrVerification, "missing Wechatpay-Timestamp"},
		{"SignatureNotBase64", changed(func(t *testing.T, in *input) { in.h.Signature = "%%%" + in.h.Signature[3:] }), wechatpay.ErrVerification, "is not base64"},
		{"TimestampNotDecimal", changed(func(t *testing.T, in *input) { in.h.Timestamp = "1.7172093e9" }), wechatpay.ErrVerification, "not decimal Unix seconds"},
		{"TimestampSigned", changed(func(t *testing.T, in *input) { in.h.Timestamp = "+1717209300" }), wechatpay.ErrVerification, "not decimal Unix seconds"},
		{"TimestampOverflowsInt64", changed(func(t *testing.T, in *input) { in.h.Timestamp = "9999999999999999999" }), wechatpay.ErrVerification, "not decimal Unix seconds"},
		{"NonceWithNewline", changed(func(t *testing.T, in *input) { in.h.Nonce = "abc\ndef" }), wechatpay.ErrVerification, "Wechatpay-Nonce must be"},
		{"MalformedJSONResigned", func(t *testing.T) input {
			body := []byte(`{"id":"EV-1","resource":`)
			return input{f.config(), signed(t, f.p, body, testNow), body}
		}, wechatpay.ErrMalformed, "not a notification JSON object"},
		{"JSONArrayResigned", func(t *testing.T) input {
			body := []byte(`[]`)
			return input{f.config(), signed(t, f.p, body, testNow), body}
		}, wechatpay.ErrMalformed, "not a notification JSON object"},
		{"EmptyBodyResigned", func(t *testing.T) input {
			return input{f.config(), signed(t, f.p, nil, testNow), nil}
		}, wechatpay.ErrMalformed, "not a notification JSON object"},
		{"JSONNullResigned", func(t *testing.T) input {
			body := []byte(`null`)
			return input{f.config(), signed(t, f.p, body, testNow), body}
		}, wechatpay.ErrMalformed, "missing id"},
		{"MissingResourceResigned", func(t *testing.T) input {
			body := []byte(`{"id":"EV-1","create_time":"2024-06-01T10:35:00+08:00","resource_type":"encrypt-resource","event_type":"TRANSACTION.SUCCESS"}`)
			return input{f.config(), signed(t, f.p, body, testNow), body}
		}, wechatpay.ErrMalformed, "missing resource"},
		{"CreateTimeNotRFC3339Resigned", bodyResigned("2024-06-01T10:35:00+08:00", "2024-06-01 10:35:00"), wechatpay.ErrMalformed, "create_time"},
		{"PlaintextNotJSON", func(t *testing.T) input {
			h, body := f.withPlaintext(t, "SUCCESS")
			return input{f.config(), h, body}
		}, wechatpay.ErrMalformed, "not transaction JSON"},
		{"PlaintextMissingOutTradeNo", plaintextReplaced(`"out_trade_no"`, `"out_trade_number"`), wechatpay.ErrMalformed, "missing out_trade_no"},
		{"PlaintextUnknownTradeState", plaintextReplaced(`"trade_state": "SUCCESS"`, `"trade_state": "PAID"`), wechatpay.ErrMalformed, "unknown trade_state"},
		{"PlaintextFractionalFen", plaintextReplaced(`"total": 9900`, `"total": 99.5`), wechatpay.ErrMalformed, "not transaction JSON"},
		{"PlaintextNegativeFen", plaintextReplaced(`"payer_total": 9900`, `"payer_total": -1`), wechatpay.ErrMalformed, "negative amount"},
		{"PlaintextSuccessWithoutTotal", plaintextReplaced(`"total": 9900`, `"totals": 9900`), wechatpay.ErrMalformed, "positive amount.total"},
		{"PlaintextSuccessWithoutTransactionID", plaintextReplaced(`"transaction_id"`, `"transactionid"`), wechatpay.ErrMalformed, "SUCCESS without transaction_id"},
		{"PlaintextSuccessWithoutSuccessTime", plaintextReplaced(`"success_time"`, `"successtime"`), wechatpay.ErrMalformed, "SUCCESS without success_time"},
		{"PlaintextMissingMchID", plaintextReplaced(`"mchid"`, `"mch_id"`), wechatpay.ErrMalformed, "missing mchid"},
		{"PlaintextSuccessTimeNotRFC3339", plaintextReplaced(`2024-06-01T10:34:56+08:00`, `20240601103456`), wechatpay.ErrMalformed, "success_time"},
		{"SuccessEventWithNotPaidState", plaintextReplaced(`"trade_state": "SUCCESS"`, `"trade_state": "NOTPAY"`), wechatpay.ErrMalformed, "TRANSACTION.SUCCESS with trade_state NOTPAY"},
		{"MchIDMismatch", changed(func(t *testing.T, in *input) { in.cfg.MchID = "1900000109" }), wechatpay.ErrMerchantMismatch, `mchid "1230000109", configured "1900000109"`},
		{"AppIDMismatch", changed(func(t *testing.T, in *input) { in.cfg.AppID = "wx0000000000000000" }), wechatpay.ErrMerchantMismatch, `appid "wxd678efh567hg6787", configured "wx0000000000000000"`},
		{"OversizeBodyGenuinelySigned", func(t *testing.T) input {
			_, body := f.genuine(t)
			body = append(body, bytes.Repeat([]byte(" "), wechatpay.MaxBodyBytes+1-len(body))...)
			return input{f.config(), signed(t, f.p, body, testNow), body}
		}, wechatpay.ErrMalformed, "limit 65536"},
	}
	sentinels := []error{wechatpay.ErrVerification, wechatpay.ErrMalformed, wechatpay.ErrMerchantMismatch}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.build(t)
			n, err := testkit.Must(t, wechatpay.NewVerifier, in.cfg).Parse(in.h, in.body)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", n)
			}
			if n != nil {
				t.Errorf("Parse returned a notification with error %v", err)
			}
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), s == tt.want; got != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", err, s, got, want)
				}
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			for _, secret := range [][]byte{f.p.APIv3Key, f.other.APIv3Key} {
				if strings.Contains(err.Error(), string(secret)) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(secret)) {
					t.Errorf("error %q contains an APIv3 key", err)
				}
			}
		})
	}
}

func TestParse_AcceptsBodyOfExactlyMaxBodyBytes(t *testing.T) {
	f := newFixture(t)
	_, body := f.genuine(t)
	body = append(body, bytes.Repeat([]byte(" "), wechatpay.MaxBodyBytes-len(body))...)
	if len(body) != wechatpay.MaxBodyBytes {
		t.Fatalf("body is %d bytes", len(body))
	}
	if _, err := testkit.Must(t, wechatpay.NewVerifier, f.config()).Parse(signed(t, f.p, body, testNow), body); err != nil {
		t.Fatalf("Parse: %v", err)
	}
}

// TestParse_TimestampSkewBound: a timestamp exactly MaxSkew away is accepted in both
// directions, one second more is not.
func TestParse_TimestampSkewBound(t *testing.T) {
	f := newFixture(t)
	_, body := f.genuine(t)
	tests := []struct {
		name    string
		maxSkew time.Duration
		offset  time.Duration // signing time minus verifier clock
		ok      bool
	}{
		{"Now", 0, 0, true},
		{"DefaultBoundPast", 0, -5 * time.Minute, true},
		{"DefaultBoundFuture", 0, 5 * time.Minute, true},
		{"PastBeyondDefaultBound", 0, -5*time.Minute - time.Second, false},
		{"FutureBeyondDefaultBound", 0, 5*time.Minute + time.Second, false},
		{"ConfiguredBoundPast", 30 * time.Second, -30 * time.Second, true},
		{"ConfiguredBoundFuture", 30 * time.Second, 30 * time.Second, true},
		{"PastBeyondConfiguredBound", 30 * time.Second, -31 * time.Second, false},
		{"FutureBeyondConfiguredBound", 30 * time.Second, 31 * time.Second, false},
		{"Epoch", 0, -testNow.Sub(time.Unix(0, 0)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := f.config()
			cfg.MaxSkew = tt.maxSkew
			_, err := testkit.Must(t, wechatpay.NewVerifier, cfg).Parse(signed(t, f.p, body, testNow.Add(tt.offset)), body)
			if tt.ok && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !tt.ok && !errors.Is(err, wechatpay.ErrVerification) {
				t.Fatalf("Parse error = %v, want ErrVerification", err)
			}
		})
	}
}

// TestParse_SeveralKeysConfigured: during rotation both the old and the new key verify,
// each only under its own serial.
func TestParse_SeveralKeysConfigured(t *testing.T) {
	f := newFixture(t)
	// The new key belongs to the same merchant, so it shares the merchant's APIv3 key.
	rotated := *f.other
	rotated.Serial = "PUB_KEY_ID_0112345678902024060100112233440000"
	rotated.APIv3Key = f.p.APIv3Key
	cfg := f.config()
	cfg.PublicKeys = map[string]*rsa.PublicKey{
		f.p.Serial:     &f.p.Key.PublicKey,
		rotated.Serial: &rotated.Key.PublicKey,
	}
	v := testkit.Must(t, wechatpay.NewVerifier, cfg)
	body := envelope(t, resource(t, &rotated, readFixture(t, "transaction_success.json")))

	if _, err := v.Parse(signed(t, &rotated, body, testNow), body); err != nil {
		t.Errorf("second key: Parse: %v", err)
	}
	if _, err := v.Parse(signed(t, f.p, body, testNow), body); err != nil {
		t.Errorf("first key: Parse: %v", err)
	}
	// Signed with the second key but naming the first: must not fall back to trying all keys.
	h := signed(t, &rotated, body, testNow)
	h.Serial = f.p.Serial
	if _, err := v.Parse(h, body); !errors.Is(err, wechatpay.ErrVerification) {
		t.Errorf("second key under first serial: error = %v, want ErrVerification", err)
	}
}

func TestPlatformNotify_ParsesBack(t *testing.T) {
	f := newFixture(t)
	paid := time.Date(2024, 6, 1, 2, 34, 56, 0, time.UTC) // 10:34:56+08:00
	tx := wechatpay.Transaction{
		OutTradeNo:     "ord-1",
		TransactionID:  "4200000000000000000000000001",
		TradeType:      "JSAPI",
		TradeState:     wechatpay.TradeStateSuccess,
		TradeStateDesc: "支付成功",
		BankType:       "OTHERS",
		Attach:         "a&b<c>",
		SuccessTime:    paid,
		Payer:          wechatpay.Payer{OpenID: "o-123"},
		Amount:         wechatpay.Amount{Total: 1, PayerTotal: 1, Currency: "CNY", PayerCurrency: "CNY"},
	}
	h, body, err := f.p.Notify(tx, testNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wechatpay-timestamp", "wechatpay-nonce", "wechatpay-signature", "wechatpay-serial", "wechatpay-signature-type", "content-type"} {
		if h[name] == "" {
			t.Errorf("header %s missing from %v", name, h)
		}
	}
	n, err := testkit.Must(t, wechatpay.NewVerifier, f.config()).Parse(wechatpay.HeadersFrom(h), body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := tx
	want.MchID, want.AppID = testMchID, testAppID
	got := *n.Transaction
	if !got.SuccessTime.Equal(paid) {
		t.Errorf("SuccessTime = %v, want %v", got.SuccessTime, paid)
	}
	got.SuccessTime, want.SuccessTime = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("Transaction =\n%+v\nwant\n%+v", got, want)
	}
	if n.EventType != wechatpay.EventTransactionSuccess {
		t.Errorf("EventType = %q", n.EventType)
	}
}

// TestParse_ConcurrentUse: one Verifier serves many goroutines (run with -race).
func TestParse_ConcurrentUse(t *testing.T) {
	f := newFixture(t)
	v := testkit.Must(t, wechatpay.NewVerifier, f.config())
	h, body := f.genuine(t)
	bad := h
	bad.Signature = flipBit(t, bad.Signature, 7)
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for range workers {
		wg.Go(func() {
			if _, err := v.Parse(h, body); err != nil {
				errs <- err
			}
			if _, err := v.Parse(bad, body); !errors.Is(err, wechatpay.ErrVerification) {
				errs <- errors.New("forged signature accepted or misclassified")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestNewVerifier_CopiesConfig: changing the caller's map or key slice later has no effect.
func TestNewVerifier_CopiesConfig(t *testing.T) {
	f := newFixture(t)
	cfg := f.config()
	v := testkit.Must(t, wechatpay.NewVerifier, cfg)
	cfg.APIv3Key[0] ^= 1
	for serial := range cfg.PublicKeys {
		delete(cfg.PublicKeys, serial)
	}
	h, body := f.genuine(t)
	if _, err := v.Parse(h, body); err != nil {
		t.Fatalf("Parse: %v", err)
	}
}

func TestNewVerifier_RejectsBadConfig(t *testing.T) {
	f := newFixture(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	evenE := f.p.Key.PublicKey
	evenE.E = 65536
	tests := []struct {
		name string
		edit func(c *wechatpay.Config)
		msg  string
	}{
		{"MissingMchID", func(c *wechatpay.Config) { c.MchID = "" }, "MchID and AppID"},
		{"MissingAppID", func(c *wechatpay.Config) { c.AppID = "" }, "MchID and AppID"},
		{"APIv3KeyTooShort", func(c *wechatpay.Config) { c.APIv3Key = c.APIv3Key[:31] }, "got 31"},
		{"APIv3KeyTooLong", func(c *wechatpay.Config) { c.APIv3Key = append(c.APIv3Key, 'x') }, "got 33"},
		{"NoKeys", func(c *wechatpay.Config) { c.PublicKeys = nil }, "at least one"},
		{"NilKey", func(c *wechatpay.Config) { c.PublicKeys = map[string]*rsa.PublicKey{"S": nil} }, "nil RSA"},
		{"EmptySerial", func(c *wechatpay.Config) { c.PublicKeys = map[string]*rsa.PublicKey{"": &f.p.Key.PublicKey} }, "serial"},
		{"Key1024Bits", func(c *wechatpay.Config) { c.PublicKeys = map[string]*rsa.PublicKey{"S": &small.PublicKey} }, "1024 bits"},
		{"EvenExponent", func(c *wechatpay.Config) { c.PublicKeys = map[string]*rsa.PublicKey{"S": &evenE} }, "exponent"},
		{"NegativeMaxSkew", func(c *wechatpay.Config) { c.MaxSkew = -time.Second }, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := f.config()
			tt.edit(&cfg)
			v, err := wechatpay.NewVerifier(cfg)
			if err == nil {
				t.Fatalf("NewVerifier accepted the config: %+v", v)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if strings.Contains(err.Error(), string(f.p.APIv3Key[1:])) {
				t.Errorf("error %q contains the APIv3 key", err)
			}
		})
	}
}

func TestHeadersFrom_MatchesNamesCaseInsensitively(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		want wechatpay.Headers
	}{
		{"LowerCaseFromAPIGateway", map[string]string{
			"wechatpay-timestamp": "1", "wechatpay-nonce": "n", "wechatpay-signature": "s", "wechatpay-serial": "k",
		}, wechatpay.Headers{Timestamp: "1", Nonce: "n", Signature: "s", Serial: "k"}},
		{"Canonical", map[string]string{
			"Wechatpay-Timestamp": "1", "Wechatpay-Nonce": "n", "Wechatpay-Signature": "s", "Wechatpay-Serial": "k",
		}, wechatpay.Headers{Timestamp: "1", Nonce: "n", Signature: "s", Serial: "k"}},
		{"MixedCase", map[string]string{
			"WECHATPAY-TIMESTAMP": "1", "WeChatPay-Nonce": "n", "wechatPay-signature": "s", "WeChatPay-Serial": "k",
		}, wechatpay.Headers{Timestamp: "1", Nonce: "n", Signature: "s", Serial: "k"}},
		{"SameValueTwice", map[string]string{"wechatpay-nonce": "n", "Wechatpay-Nonce": "n"}, wechatpay.Headers{Nonce: "n"}},
		{"ConflictingSpellingsLeftEmpty", map[string]string{"wechatpay-nonce": "n1", "Wechatpay-Nonce": "n2", "wechatpay-serial": "k"}, wechatpay.Headers{Serial: "k"}},
		{"Missing", map[string]string{"content-type": "application/json"}, wechatpay.Headers{}},
		{"Nil", nil, wechatpay.Headers{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wechatpay.HeadersFrom(tt.in); got != tt.want {
				t.Errorf("HeadersFrom(%v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}
