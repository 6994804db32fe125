package wechatpay_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

// refundResource encrypts refund JSON as WeChat Pay does ("证书和回调报文解密":
// associated_data and original_type "refund") under p's APIv3 key.
func refundResource(t testing.TB, p *paytest.Platform, plaintext []byte) paytest.Resource {
	t.Helper()
	r, err := p.Encrypt(plaintext, wechatpay.OriginalTypeRefund)
	if err != nil {
		t.Fatal(err)
	}
	r.OriginalType = wechatpay.OriginalTypeRefund
	return r
}

// refundEnvelope fills testdata/refund_envelope.json with r and eventType.
func refundEnvelope(t testing.TB, r paytest.Resource, eventType string) []byte {
	t.Helper()
	return []byte(strings.NewReplacer(
		"{{CREATE_TIME}}", "2024-06-01T10:35:00+08:00",
		"{{EVENT_TYPE}}", eventType,
		"{{ALGORITHM}}", r.Algorithm,
		"{{CIPHERTEXT}}", r.Ciphertext,
		"{{ASSOCIATED_DATA}}", r.AssociatedData,
		"{{NONCE}}", r.Nonce,
	).Replace(string(readFixture(t, "refund_envelope.json"))))
}

// refundNotice is a refund notification of plaintext under eventType, signed by signer at at.
func (f fixture) refundNotice(t testing.TB, signer *paytest.Platform, plaintext, eventType string, at time.Time) (wechatpay.Headers, []byte) {
	t.Helper()
	body := refundEnvelope(t, refundResource(t, f.p, []byte(plaintext)), eventType)
	return signed(t, signer, body, at), body
}

func TestParseRefund_ValidNotificationHasEveryField(t *testing.T) {
	f := newFixture(t)
	v := testkit.Must(t, wechatpay.NewVerifier, f.config())
	h, body := f.refundNotice(t, f.p, string(readFixture(t, "refund_success.json")), wechatpay.EventRefundSuccess, testNow)
	n, err := v.ParseRefund(h, body)
	if err != nil {
		t.Fatalf("ParseRefund: %v", err)
	}
	want := wechatpay.Refund{
		MchID: testMchID, OutTradeNo: "SG20240601103400ab12", TransactionID: "4200001234202406011234567890",
		OutRefundNo: "RSG20240601103400ab12", RefundID: "50200207182024060100011301001", Status: wechatpay.RefundSuccess,
		UserReceivedAccount: "招商银行信用卡0403", SuccessTime: time.Date(2024, 6, 1, 10, 34, 56, 0, beijing),
		Amount: wechatpay.RefundAmount{Total: 9900, Refund: 9900, PayerTotal: 9900, PayerRefund: 9900},
	}
	got := *n.Refund
	if !got.SuccessTime.Equal(want.SuccessTime) {
		t.Errorf("SuccessTime %v, want %v", got.SuccessTime, want.SuccessTime)
	}
	got.SuccessTime = want.SuccessTime
	if got != want {
		t.Errorf("Refund =\n%+v\nwant\n%+v", got, want)
	}
	if n.ID != "EV-2018022511223320873" || n.EventType != wechatpay.EventRefundSuccess || n.Summary != "退款成功" || n.CreateTime.IsZero() {
		t.Errorf("envelope %+v", n.Envelope)
	}
	req := wechatpay.RefundRequest{OutTradeNo: "SG20240601103400ab12", OutRefundNo: "RSG20240601103400ab12", Refund: 9900, Total: 9900}
	if err := n.Refund.Matches(req); err != nil {
		t.Errorf("Matches: %v", err)
	}
	req.Refund = 9800
	if err := n.Refund.Matches(req); !errors.Is(err, wechatpay.ErrRefundMismatch) || !strings.Contains(err.Error(), "amount.refund") {
		t.Errorf("Matches with another amount: %v", err)
	}
}

// TestParseRefund_Rejects: each way a refund notification fails, with the sentinel and a
// fragment naming the check that fired. The checks before decryption are Parse's own code.
func TestParseRefund_Rejects(t *testing.T) {
	f := newFixture(t)
	fixtureJSON := string(readFixture(t, "refund_success.json"))
	edit := func(old, new string) string { return strings.Replace(fixtureJSON, old, new, 1) }
	type input struct {
		h    wechatpay.Headers
		body []byte
	}
	notice := func(plaintext, event string, signer *paytest.Platform, at time.Time) input {
		h, b := f.refundNotice(t, signer, plaintext, event, at)
		return input{h, b}
	}
	genuine := notice(fixtureJSON, wechatpay.EventRefundSuccess, f.p, testNow)
	probe := genuine
	probe.h.Signature = wechatpay.SignTestPrefix + probe.h.Signature
	forged := genuine
	forged.h = signed(t, &paytest.Platform{Key: f.other.Key, Serial: f.p.Serial}, genuine.body, testNow)
	ph, pb := f.genuine(t)
	cases := []struct {
		name string
		in   input
		want error
		frag string
	}{
		{"ForgedSignature", forged, wechatpay.ErrVerification, "does not verify"},
		{"ReplayedAfterWindow", notice(fixtureJSON, wechatpay.EventRefundSuccess, f.p, testNow.Add(-wechatpay.DefaultMaxSkew-time.Second)), wechatpay.ErrVerification, "from now"},
		{"SignTestProbe", probe, wechatpay.ErrVerification, "sign-test"},
		{"OtherMerchant", notice(edit(testMchID, "1900000109"), wechatpay.EventRefundSuccess, f.p, testNow), wechatpay.ErrMerchantMismatch, "mchid"},
		{"PaymentNotification", input{ph, pb}, wechatpay.ErrMalformed, "original_type"},
		{"EventDisagreesWithStatus", notice(fixtureJSON, wechatpay.EventRefundClosed, f.p, testNow), wechatpay.ErrMalformed, "event_type"},
		{"Processing", notice(edit(`"SUCCESS"`, `"PROCESSING"`), "REFUND.PROCESSING", f.p, testNow), wechatpay.ErrMalformed, "refund_status"},
		{"UnknownStatus", notice(edit(`"SUCCESS"`, `"DONE"`), "REFUND.DONE", f.p, testNow), wechatpay.ErrMalformed, "unknown status"},
		{"RefundOverTotal", notice(edit(`"refund": 9900`, `"refund": 9901`), wechatpay.EventRefundSuccess, f.p, testNow), wechatpay.ErrMalformed, "amounts"},
		{"NoOutRefundNo", notice(edit(`"out_refund_no": "RSG20240601103400ab12"`, `"out_refund_no": ""`), wechatpay.EventRefundSuccess, f.p, testNow), wechatpay.ErrMalformed, "out_refund_no"},
		{"SuccessWithoutTime", notice(edit(`"success_time": "2024-06-01T10:34:56+08:00"`, `"success_time": ""`), wechatpay.EventRefundSuccess, f.p, testNow), wechatpay.ErrMalformed, "success_time"},
	}
	v := testkit.Must(t, wechatpay.NewVerifier, f.config())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := v.ParseRefund(tc.in.h, tc.in.body)
			if !errors.Is(err, tc.want) || n != nil || !strings.Contains(err.Error(), tc.frag) {
				t.Errorf("ParseRefund = %v, %v; want %v mentioning %q", n, err, tc.want, tc.frag)
			}
		})
	}
	// The payment parser refuses a genuine refund notification in the same way.
	if _, err := v.Parse(genuine.h, genuine.body); !errors.Is(err, wechatpay.ErrMalformed) || !strings.Contains(err.Error(), "original_type") {
		t.Errorf("Parse of a refund notification: %v", err)
	}
}

// TestPlatformNotifyRefund_ParsesBack: what the stand-in sends for each documented
// outcome parses back to the same refund.
func TestPlatformNotifyRefund_ParsesBack(t *testing.T) {
	f := newFixture(t)
	v := testkit.Must(t, wechatpay.NewVerifier, f.config())
	for _, status := range []wechatpay.RefundStatus{wechatpay.RefundSuccess, wechatpay.RefundClosed, wechatpay.RefundAbnormal} {
		r := wechatpay.Refund{
			OutTradeNo: "ord-0001", TransactionID: "42000", OutRefundNo: "Rord-0001", RefundID: "50000", Status: status,
			UserReceivedAccount: "支付用户零钱", Amount: wechatpay.RefundAmount{Total: 500, Refund: 300, PayerTotal: 500, PayerRefund: 300},
		}
		if status == wechatpay.RefundSuccess {
			r.SuccessTime = testNow.Truncate(time.Second)
		}
		headers, body, err := f.p.NotifyRefund(r, testNow)
		if err != nil {
			t.Fatal(err)
		}
		n, err := v.ParseRefund(wechatpay.HeadersFrom(headers), body)
		if err != nil {
			t.Fatalf("%s: %v", status, err)
		}
		r.MchID = testMchID
		got := *n.Refund
		if !got.SuccessTime.Equal(r.SuccessTime) {
			t.Errorf("%s: success_time %v, want %v", status, got.SuccessTime, r.SuccessTime)
		}
		got.SuccessTime = r.SuccessTime
		if got != r || n.EventType != "REFUND."+string(status) {
			t.Errorf("%s: parsed %+v (%s), want %+v", status, got, n.EventType, r)
		}
	}
}
