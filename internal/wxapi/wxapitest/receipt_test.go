package wxapitest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

// The stand-in confirms only a payment whose shipping it holds, as WeChat's component
// confirms shipped orders; the push it returns is the settlement push of that payment
// (the buyer's method, times at its clock), the same one on a second confirmation; and
// SignPush signs it as "消息推送" says, so wxapi.VerifyPush takes it with the token and
// no other.
func TestConfirmReceipt_ShippedPaymentsOnce_SignedAsDocumented(t *testing.T) {
	s := start(t, wxapitest.Options{})
	if _, err := s.srv.ConfirmReceipt(orderID, wxapi.ConfirmManual); !errors.Is(err, wxapitest.ErrNotConfirmable) {
		t.Fatalf("unknown payment: %v", err)
	}
	tok := s.paid(nil)
	if _, err := s.srv.ConfirmReceipt(orderID, wxapi.ConfirmManual); !errors.Is(err, wxapitest.ErrNotConfirmable) {
		t.Fatalf("payment not shipped: %v", err)
	}
	if code := s.post(wxapi.PathUploadShippingInfo, tok, marshal(t, shipment())); code != 0 {
		t.Fatalf("upload: %d", code)
	}
	s.clock.Advance(time.Hour)
	p, err := s.srv.ConfirmReceipt(orderID, wxapi.ConfirmManual)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Confirmed() || p.TransactionID != txID || p.MerchantTradeNo != orderID || p.MerchantID != mchID ||
		p.ConfirmReceiveMethod != wxapi.ConfirmManual || p.ConfirmReceiveTime != s.clock.Now().Unix() {
		t.Errorf("push %+v", p)
	}
	s.clock.Advance(time.Hour)
	if again, err := s.srv.ConfirmReceipt(orderID, wxapi.ConfirmAuto); err != nil || again != p {
		t.Errorf("second confirmation: %+v, %v", again, err)
	}

	q, body := wxapitest.SignPush("tok", p, s.clock.Now())
	pq := wxapi.PushQuery{Signature: q.Get("signature"), Timestamp: q.Get("timestamp"), Nonce: q.Get("nonce")}
	if err := wxapi.VerifyPush("tok", pq, s.clock.Now()); err != nil {
		t.Errorf("signed push: %v", err)
	}
	if err := wxapi.VerifyPush("another", pq, s.clock.Now()); !errors.Is(err, wxapi.ErrPushSignature) {
		t.Errorf("another token: %v", err)
	}
	if parsed, err := wxapi.ParsePush(body); err != nil || *parsed != p {
		t.Errorf("body %s parses as %+v, %v", body, parsed, err)
	}
}
