package wechatpay_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Operations and stages of FuzzClientAnswer: mode%2 is the stage, (mode/2)%2 the operation.
//
//	stage 0: the whole answer handling, signature included; it must refuse every answer
//	         this process's platform did not sign, unless the status is 5xx/429 (never read);
//	stage 1: the body is taken as verified and goes to the answer parsers (RSA under
//	         fuzzing instrumentation would starve the fuzzer, as in FuzzParse).
const (
	opPrepay = "JSAPI下单"
	opQuery  = "查询订单"

	fuzzOutTradeNo = "SG20240601103400ab12" // the order of testdata/transaction_success.json
)

type fuzzAnswer struct {
	op     string
	status int
	h      wechatpay.Headers
	body   string
}

type clientFuzzHarness struct {
	*fuzzHarness
	c       *wechatpay.Client
	genuine map[fuzzAnswer]bool
}

func newClientFuzzHarness(tb testing.TB) *clientFuzzHarness {
	tb.Helper()
	fh := newFuzzHarness(tb)
	cfg := fh.p.ClientConfig(testMerchants(tb)[0], "")
	cfg.Now = func() time.Time { return fh.now }
	return &clientFuzzHarness{fuzzHarness: fh, c: testkit.Must(tb, wechatpay.NewClient, cfg), genuine: map[fuzzAnswer]bool{}}
}

type clientFuzzSeed struct {
	name   string
	mode   uint8
	status int
	h      wechatpay.Headers
	body   string
	accept bool
}

func (ch *clientFuzzHarness) seeds(tb testing.TB) []clientFuzzSeed {
	tb.Helper()
	prepay := `{"prepay_id":"wx26112221580621e9b071c00d9e093b0000"}`
	query := string(readFixture(tb, "transaction_success.json"))
	sign := func(op string, status int, body string) wechatpay.Headers {
		h := signed(tb, &ch.p, []byte(body), ch.now)
		ch.genuine[fuzzAnswer{op, status, h, body}] = true
		return h
	}
	hPrepay := sign(opPrepay, 200, prepay)
	hQuery := sign(opQuery, 200, query)
	hPaid := sign(opPrepay, 403, `{"code":"ORDERPAID","message":"该订单已支付"}`)
	forged := hPrepay
	forged.Signature = strings.Repeat("A", 342) + "=="
	probe := hPrepay
	probe.Signature = wechatpay.SignTestPrefix + hPrepay.Signature
	none := wechatpay.Headers{}
	return []clientFuzzSeed{
		{"RawGenuinePrepay", 0, 200, hPrepay, prepay, true},
		{"RawGenuineQuery", 2, 200, hQuery, query, true},
		{"RawGenuineOrderPaid", 0, 403, hPaid, `{"code":"ORDERPAID","message":"该订单已支付"}`, false},
		{"RawForged", 0, 200, forged, prepay, false},
		{"RawSignTest", 0, 200, probe, prepay, false},
		{"RawTampered", 2, 200, hQuery, strings.Replace(query, "SUCCESS", "NOTPAY", 1), false},
		{"RawUnsignedServerError", 0, 503, none, `{"code":"SYSTEM_ERROR"}`, false},
		{"VerifiedPrepay", 1, 200, none, prepay, true},
		{"VerifiedPrepayEmpty", 1, 200, none, `{"prepay_id":""}`, false},
		{"VerifiedPrepayNoContent", 1, 204, none, ``, false},
		{"VerifiedQuerySuccess", 3, 200, none, query, true},
		{"VerifiedQueryNotPaid", 3, 200, none, `{"appid":"wxd678efh567hg6787","mchid":"1230000109","out_trade_no":"SG20240601103400ab12","trade_state":"NOTPAY","amount":{"total":100,"currency":"CNY"}}`, true},
		{"VerifiedQueryOtherMerchant", 3, 200, none, `{"appid":"wxd678efh567hg6787","mchid":"1900000109","out_trade_no":"SG20240601103400ab12","trade_state":"CLOSED"}`, false},
		{"VerifiedQueryOtherOrder", 3, 200, none, `{"appid":"wxd678efh567hg6787","mchid":"1230000109","out_trade_no":"SG20240601103400ab13","trade_state":"CLOSED"}`, false},
		{"VerifiedOrderNotExist", 3, 404, none, `{"code":"ORDER_NOT_EXIST","message":"订单不存在"}`, false},
		{"VerifiedRedirect", 1, 302, none, ``, false},
	}
}

// run handles one answer as its mode says and checks the outcome's invariants.
func (ch *clientFuzzHarness) run(t *testing.T, mode uint8, status int, h wechatpay.Headers, body []byte) error {
	t.Helper()
	op := opPrepay
	if (mode/2)%2 == 1 {
		op = opQuery
	}
	var apiErr *wechatpay.APIError
	if mode%2 == 0 {
		got, err := ch.c.CheckAnswer(op, status, h, body)
		genuine := ch.genuine[fuzzAnswer{op, status, h, string(body)}]
		switch {
		case err == nil && !genuine:
			t.Fatalf("accepted an answer the platform did not sign: %d %+v", status, h)
		case err == nil && string(got) != string(body):
			t.Fatalf("returned another body")
		case err != nil && !genuine && status < 500 && status != http.StatusTooManyRequests &&
			!errors.Is(err, wechatpay.ErrVerification) && !errors.Is(err, wechatpay.ErrMalformed):
			t.Fatalf("a forged answer got past verification: %v", err)
		case err != nil && errors.As(err, &apiErr) && apiErr.Code != "" && !genuine:
			t.Fatalf("read the code of an unverified answer: %v", err)
		case err != nil:
			return err
		}
	}
	prepayID, tx, err := ch.c.ReadVerifiedAnswer(op, status, body, fuzzOutTradeNo)
	if err != nil {
		matched := 0
		for _, s := range []error{wechatpay.ErrMalformed, wechatpay.ErrMerchantMismatch} {
			if errors.Is(err, s) {
				matched++
			}
		}
		if errors.As(err, &apiErr) {
			matched++
			if apiErr.StatusCode < 400 || apiErr.StatusCode != status {
				t.Errorf("APIError %+v for status %d", apiErr, status)
			}
		}
		if matched != 1 || prepayID != "" || tx != nil {
			t.Errorf("error %q matches %d kinds (want 1), returned %q %+v", err, matched, prepayID, tx)
		}
		return err
	}
	if status < 200 || status > 299 {
		t.Errorf("accepted HTTP %d", status)
	}
	if op == opPrepay {
		if prepayID == "" || len(prepayID) > 64 || strings.ContainsAny(prepayID, " \t\r\n\"") {
			t.Errorf("accepted prepay_id %q", prepayID)
		}
		return nil
	}
	if tx == nil || tx.OutTradeNo != fuzzOutTradeNo || tx.MchID != testMchID || tx.AppID != testAppID {
		t.Fatalf("accepted transaction %+v", tx)
	}
	checkAccepted(t, &wechatpay.Notification{Envelope: wechatpay.Envelope{ID: "q", EventType: "QUERY", CreateTime: ch.now, ResourceType: wechatpay.ResourceTypeEncrypted}, Transaction: tx})
	if tx.TradeState == wechatpay.TradeStateSuccess && (tx.TransactionID == "" || tx.SuccessTime.IsZero() || tx.Amount.Total <= 0) {
		t.Errorf("accepted SUCCESS without payment details: %+v", tx)
	}
	return nil
}

func FuzzClientAnswer(f *testing.F) {
	ch := newClientFuzzHarness(f)
	for _, s := range ch.seeds(f) {
		f.Add(s.mode, s.status, s.h.Timestamp, s.h.Nonce, s.h.Signature, s.h.Serial, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, mode uint8, status int, timestamp, nonce, signature, serial string, body []byte) {
		h := wechatpay.Headers{Timestamp: timestamp, Nonce: nonce, Signature: signature, Serial: serial}
		_ = ch.run(t, mode, status, h, body) // run checks the outcome itself
	})
}

// TestFuzzClientAnswer_SeedsReachEveryStage keeps FuzzClientAnswer honest: genuine seeds
// are accepted in both stages and operations, the others refused.
func TestFuzzClientAnswer_SeedsReachEveryStage(t *testing.T) {
	ch := newClientFuzzHarness(t)
	for _, s := range ch.seeds(t) {
		t.Run(s.name, func(t *testing.T) {
			err := ch.run(t, s.mode, s.status, s.h, []byte(s.body))
			if s.accept != (err == nil) {
				t.Errorf("accept %v, got err %v", s.accept, err)
			}
		})
	}
}
