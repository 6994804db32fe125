package wechatpay_test

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

// Fixed identities of the fuzz platform, so that the committed seeds in
// testdata/fuzz/FuzzParse stay meaningful: their timestamps fall inside the fuzz clock's
// window, their serial is trusted, and their mode-1 resources decrypt under this key. The
// RSA key is still generated per process, so no committed input carries a valid signature.
const (
	fuzzAPIv3Key = "FuzzOnlyAPIv3KeyNotASecret012345" // 32 bytes, test-only
	fuzzSerial   = "PUB_KEY_ID_0114232134912410000000000000"
	fuzzUnix     = 1717209300 // 2024-06-01T10:35:00+08:00
)

// Fuzz modes (mode % 3), for payment notifications when (mode/3) % 2 is 0 and refund
// notifications (ParseRefund, testdata/refund_envelope.json) when it is 1:
//
//	0: the input goes to Parse unchanged; it must fail unless this process's platform
//	   produced exactly these headers and body;
//	1: the body is taken as genuinely signed: it goes to the part of Parse after signature
//	   verification (DecodeVerified), reaching envelope parsing and decryption;
//	2: the body is taken as the transaction JSON: the harness seals it under the APIv3 key
//	   into the documented envelope and decodes that, reaching transaction parsing.
//
// Modes 1 and 2 skip the RSA signature because signing each input under the fuzzer's
// coverage instrumentation (crypto packages are instrumented too) stalls fuzzing; mode 0
// covers the signature path, and TestParse_Rejects covers signed bodies end to end.
const (
	modeRaw = iota
	modeVerifiedBody
	modeVerifiedPlaintext

	refundMode = 3 // added to a mode: the same stage for refund notifications
)

// fuzzHarness is the platform, verifier and genuine deliveries FuzzParse runs against.
type fuzzHarness struct {
	p        paytest.Platform
	now      time.Time
	v        *wechatpay.Verifier
	gcm      cipher.AEAD
	template string                // testdata/notification_envelope.json
	refunds  string                // testdata/refund_envelope.json
	genuine  map[fuzzDelivery]bool // what p produced in this process; read-only once fuzzing starts
}

type fuzzDelivery struct {
	h    wechatpay.Headers
	body string
}

// fuzzResourceNonce is the fixed GCM nonce of mode 2, keeping each input deterministic.
const fuzzResourceNonce = "FuzzNonce012"

func newFuzzHarness(tb testing.TB) *fuzzHarness {
	tb.Helper()
	ps, err := platforms()
	if err != nil {
		tb.Fatal(err)
	}
	fh := &fuzzHarness{
		p:        *ps[0],
		now:      time.Unix(fuzzUnix, 0),
		template: string(readFixture(tb, "notification_envelope.json")),
		refunds:  string(readFixture(tb, "refund_envelope.json")),
		genuine:  map[fuzzDelivery]bool{},
	}
	fh.p.Serial = fuzzSerial
	fh.p.APIv3Key = []byte(fuzzAPIv3Key)
	cfg := fh.p.Config()
	cfg.Now = func() time.Time { return fh.now }
	if fh.v, err = wechatpay.NewVerifier(cfg); err != nil {
		tb.Fatal(err)
	}
	block, err := aes.NewCipher([]byte(fuzzAPIv3Key))
	if err != nil {
		tb.Fatal(err)
	}
	if fh.gcm, err = cipher.NewGCM(block); err != nil {
		tb.Fatal(err)
	}
	return fh
}

// seal wraps plaintext as WeChat Pay would, with the fixed mode-2 nonce: as a payment
// notification, or as a REFUND.SUCCESS notification when refund.
func (fh *fuzzHarness) seal(plaintext []byte, refund bool) []byte {
	template, ad := fh.template, paytest.AssociatedData
	if refund {
		template, ad = strings.Replace(fh.refunds, "{{EVENT_TYPE}}", wechatpay.EventRefundSuccess, 1), wechatpay.OriginalTypeRefund
	}
	sealed := fh.gcm.Seal(nil, []byte(fuzzResourceNonce), plaintext, []byte(ad))
	return []byte(strings.NewReplacer(
		"{{CREATE_TIME}}", "2024-06-01T10:35:00+08:00",
		"{{ALGORITHM}}", wechatpay.AlgorithmAEADAES256GCM,
		"{{CIPHERTEXT}}", base64.StdEncoding.EncodeToString(sealed),
		"{{ASSOCIATED_DATA}}", ad,
		"{{NONCE}}", fuzzResourceNonce,
	).Replace(template))
}

// seed is one seed input and whether Parse must accept it.
type fuzzSeed struct {
	name   string
	mode   uint8
	h      wechatpay.Headers
	body   []byte
	accept bool
}

func (fh *fuzzHarness) seeds(tb testing.TB) []fuzzSeed {
	tb.Helper()
	plaintext := readFixture(tb, "transaction_success.json")
	body := envelope(tb, resource(tb, &fh.p, plaintext))
	h := signed(tb, &fh.p, body, fh.now)
	fh.genuine[fuzzDelivery{h, string(body)}] = true
	forged := h
	forged.Signature = strings.Repeat("A", 342) + "=="
	probe := h
	probe.Signature = wechatpay.SignTestPrefix + h.Signature
	refundPlaintext := readFixture(tb, "refund_success.json")
	refundBody := refundEnvelope(tb, refundResource(tb, &fh.p, refundPlaintext), wechatpay.EventRefundSuccess)
	rh := signed(tb, &fh.p, refundBody, fh.now)
	fh.genuine[fuzzDelivery{rh, string(refundBody)}] = true
	rprobe := rh
	rprobe.Signature = wechatpay.SignTestPrefix + rh.Signature
	return []fuzzSeed{
		{"RawGenuine", modeRaw, h, body, true},
		{"RawForged", modeRaw, forged, body, false},
		{"RawSignTest", modeRaw, probe, body, false},
		{"RawEmpty", modeRaw, wechatpay.Headers{}, nil, false},
		{"VerifiedGenuineBody", modeVerifiedBody, wechatpay.Headers{}, body, true},
		{"VerifiedBadTag", modeVerifiedBody, wechatpay.Headers{}, []byte(`{"id":"EV-1","create_time":"2024-06-01T10:35:00+08:00","resource_type":"encrypt-resource","event_type":"TRANSACTION.SUCCESS","resource":{"original_type":"transaction","algorithm":"AEAD_AES_256_GCM","ciphertext":"AAAAAAAAAAAAAAAAAAAAAA==","associated_data":"","nonce":"000000000000"}}`), false},
		{"SealedFixture", modeVerifiedPlaintext, wechatpay.Headers{}, plaintext, true},
		{"SealedNotPaidUnderSuccessEvent", modeVerifiedPlaintext, wechatpay.Headers{}, []byte(`{"appid":"wxd678efh567hg6787","mchid":"1230000109","out_trade_no":"o","trade_state":"NOTPAY"}`), false},
		{"SealedOtherMerchant", modeVerifiedPlaintext, wechatpay.Headers{}, []byte(`{"appid":"wxd678efh567hg6787","mchid":"1900000109","out_trade_no":"o","trade_state":"CLOSED","amount":{"total":1}}`), false},
		{"RefundRawGenuine", refundMode + modeRaw, rh, refundBody, true},
		{"RefundRawSignTest", refundMode + modeRaw, rprobe, refundBody, false},
		{"RefundVerifiedGenuineBody", refundMode + modeVerifiedBody, wechatpay.Headers{}, refundBody, true},
		{"RefundVerifiedPaymentBody", refundMode + modeVerifiedBody, wechatpay.Headers{}, body, false},
		{"RefundSealedFixture", refundMode + modeVerifiedPlaintext, wechatpay.Headers{}, refundPlaintext, true},
		{"RefundSealedOtherMerchant", refundMode + modeVerifiedPlaintext, wechatpay.Headers{}, []byte(strings.Replace(string(refundPlaintext), testMchID, "1900000109", 1)), false},
		{"RefundSealedOverTotal", refundMode + modeVerifiedPlaintext, wechatpay.Headers{}, []byte(strings.Replace(string(refundPlaintext), `"refund": 9900`, `"refund": 9901`, 1)), false},
	}
}

// run parses the input as its mode says and checks the outcome's invariants; refund
// notifications are checked by checkRefund and return a nil *Notification.
func (fh *fuzzHarness) run(t *testing.T, mode uint8, h wechatpay.Headers, body []byte) (*wechatpay.Notification, error) {
	t.Helper()
	refund := (mode/3)%2 == 1
	var (
		n   *wechatpay.Notification
		rn  *wechatpay.RefundNotification
		err error
	)
	stage := mode % 3
	if stage == modeVerifiedPlaintext {
		body = fh.seal(body, refund)
	}
	switch {
	case stage == modeRaw && refund:
		rn, err = fh.v.ParseRefund(h, body)
	case stage == modeRaw:
		n, err = fh.v.Parse(h, body)
	case refund:
		rn, err = fh.v.DecodeVerifiedRefund(body)
	default:
		n, err = fh.v.DecodeVerified(body)
	}
	if mode%3 == modeRaw && err == nil && !fh.genuine[fuzzDelivery{h, string(body)}] {
		t.Fatalf("accepted input the platform did not produce: %+v", h)
	}
	if err != nil {
		checkRefused(t, err, n != nil || rn != nil)
		return nil, err
	}
	if mode%3 == modeRaw {
		checkHeaders(t, h, body)
	}
	if refund {
		checkRefund(t, rn)
		return nil, nil
	}
	checkAccepted(t, n)
	return n, nil
}

// checkRefused holds for every refusal: exactly one sentinel, no result, no key in the text.
func checkRefused(t *testing.T, err error, returned bool) {
	t.Helper()
	if returned {
		t.Errorf("returned a notification along with %v", err)
	}
	matched := 0
	for _, s := range []error{wechatpay.ErrVerification, wechatpay.ErrMalformed, wechatpay.ErrMerchantMismatch} {
		if errors.Is(err, s) {
			matched++
		}
	}
	if matched != 1 {
		t.Errorf("error %q wraps %d sentinels, want exactly 1", err, matched)
	}
	if strings.Contains(err.Error(), fuzzAPIv3Key) {
		t.Errorf("error %q contains the APIv3 key", err)
	}
}

// checkRefund holds for every refund notification ParseRefund accepts.
func checkRefund(t *testing.T, n *wechatpay.RefundNotification) {
	t.Helper()
	if n == nil || n.Refund == nil {
		t.Fatalf("ParseRefund returned %+v with a nil error", n)
	}
	checkEnvelope(t, n.Envelope)
	r := n.Refund
	switch {
	case r.MchID != testMchID:
		t.Errorf("accepted mchid %q", r.MchID)
	case r.OutRefundNo == "" || r.RefundID == "" || r.OutTradeNo == "" || r.TransactionID == "":
		t.Errorf("accepted a refund without its ids: %+v", r)
	case r.Amount.Refund <= 0 || r.Amount.Refund > r.Amount.Total || r.Amount.PayerRefund < 0 || r.Amount.PayerTotal < 0:
		t.Errorf("accepted amounts %+v", r.Amount)
	case n.EventType != "REFUND."+string(r.Status) || r.Status == wechatpay.RefundProcessing:
		t.Errorf("accepted event_type %q with status %q", n.EventType, r.Status)
	case r.Status == wechatpay.RefundSuccess && r.SuccessTime.IsZero():
		t.Errorf("accepted SUCCESS without success_time")
	}
}

func FuzzParse(f *testing.F) {
	fh := newFuzzHarness(f)
	for _, s := range fh.seeds(f) {
		f.Add(s.mode, s.h.Timestamp, s.h.Nonce, s.h.Signature, s.h.Serial, s.body)
	}
	f.Fuzz(func(t *testing.T, mode uint8, timestamp, nonce, signature, serial string, body []byte) {
		h := wechatpay.Headers{Timestamp: timestamp, Nonce: nonce, Signature: signature, Serial: serial}
		_, _ = fh.run(t, mode, h, body) // run checks the outcome itself
	})
}

// TestFuzzParse_SeedsReachEveryStage keeps FuzzParse honest: in each mode a genuine seed is
// accepted (so the fuzzer starts from inputs that get past verification and decryption)
// and the others are refused.
func TestFuzzParse_SeedsReachEveryStage(t *testing.T) {
	fh := newFuzzHarness(t)
	for _, s := range fh.seeds(t) {
		t.Run(s.name, func(t *testing.T) {
			_, err := fh.run(t, s.mode, s.h, s.body)
			if s.accept && err != nil {
				t.Errorf("Parse: %v", err)
			}
			if !s.accept && err == nil {
				t.Errorf("Parse accepted it")
			}
		})
	}
}

// checkHeaders holds for every delivery Parse accepts.
func checkHeaders(t *testing.T, h wechatpay.Headers, body []byte) {
	t.Helper()
	if len(body) > wechatpay.MaxBodyBytes {
		t.Errorf("accepted a %d-byte body", len(body))
	}
	if strings.HasPrefix(h.Signature, wechatpay.SignTestPrefix) {
		t.Errorf("accepted a sign-test probe")
	}
	if ts, err := strconv.ParseInt(h.Timestamp, 10, 64); err != nil || ts < fuzzUnix-300 || ts > fuzzUnix+300 {
		t.Errorf("accepted Wechatpay-Timestamp %q", h.Timestamp)
	}
}

// checkEnvelope holds for the envelope of every notification Parse or ParseRefund accepts.
func checkEnvelope(t *testing.T, e wechatpay.Envelope) {
	t.Helper()
	switch {
	case e.ID == "" || e.EventType == "" || e.CreateTime.IsZero():
		t.Errorf("accepted an envelope without id, event_type or create_time: %+v", e)
	case e.ResourceType != wechatpay.ResourceTypeEncrypted:
		t.Errorf("accepted resource_type %q", e.ResourceType)
	}
}

// checkAccepted holds for every notification Parse accepts.
func checkAccepted(t *testing.T, n *wechatpay.Notification) {
	t.Helper()
	if n == nil || n.Transaction == nil {
		t.Fatalf("Parse returned %+v with a nil error", n)
	}
	checkEnvelope(t, n.Envelope)
	tx := n.Transaction
	switch {
	case tx.MchID != testMchID || tx.AppID != testAppID:
		t.Errorf("accepted another merchant: mchid %q appid %q", tx.MchID, tx.AppID)
	case tx.OutTradeNo == "":
		t.Errorf("accepted a transaction without out_trade_no")
	case tx.Amount.Total < 0 || tx.Amount.PayerTotal < 0:
		t.Errorf("accepted negative amounts %+v", tx.Amount)
	}
	switch tx.TradeState {
	case "SUCCESS", "REFUND", "NOTPAY", "CLOSED", "REVOKED", "USERPAYING", "PAYERROR":
	default:
		t.Errorf("accepted trade_state %q", tx.TradeState)
	}
	if n.EventType == wechatpay.EventTransactionSuccess {
		if tx.TradeState != wechatpay.TradeStateSuccess || tx.Amount.Total <= 0 || tx.TransactionID == "" || tx.SuccessTime.IsZero() {
			t.Errorf("accepted TRANSACTION.SUCCESS with %+v", tx)
		}
	}
}

// TestFuzzParse_CommittedSeedDecrypts: the committed mode-1 seed carries a resource sealed
// under fuzzAPIv3Key, so the fuzzer starts past decryption; if the key or the fixture
// changes, regenerate testdata/fuzz/FuzzParse/verified_genuine_envelope.
func TestFuzzParse_CommittedSeedDecrypts(t *testing.T) {
	fh := newFuzzHarness(t)
	raw := readFixture(t, "fuzz/FuzzParse/verified_genuine_envelope")
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 7 || lines[0] != "go test fuzz v1" || lines[1] != `byte('\x01')` {
		t.Fatalf("unexpected corpus file layout:\n%s", raw)
	}
	var vals []string
	for _, l := range lines[2:] {
		l = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(l, "string("), "[]byte("), ")")
		v, err := strconv.Unquote(l)
		if err != nil {
			t.Fatalf("unquote %q: %v", l, err)
		}
		vals = append(vals, v)
	}
	h := wechatpay.Headers{Timestamp: vals[0], Nonce: vals[1], Signature: vals[2], Serial: vals[3]}
	n, err := fh.run(t, modeVerifiedBody, h, []byte(vals[4]))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if n.Transaction.OutTradeNo != "SG20240601103400ab12" {
		t.Errorf("OutTradeNo = %q", n.Transaction.OutTradeNo)
	}
}
