package wxapi_test

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wxapi"
)

// The signature is the SHA-1 of token, timestamp and nonce sorted and joined
// ("消息推送"); the expected value was computed apart from this code (printf '%s'
// 13205621321764921600stockguard-token | sha1sum).
func TestPushSignature_DocumentedAlgorithm(t *testing.T) {
	if got := wxapi.PushSignature("stockguard-token", "1764921600", "1320562132"); got != "68eea4eca5f61115ed484901a5fa4c0d952c8936" {
		t.Errorf("signature %s", got)
	}
}

func TestVerifyPush(t *testing.T) {
	now := time.Unix(1764921600, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := wxapi.PushQuery{Signature: wxapi.PushSignature("tok", ts, "42"), Timestamp: ts, Nonce: "42"}
	stale := func(d time.Duration) wxapi.PushQuery {
		ts := strconv.FormatInt(now.Add(d).Unix(), 10)
		return wxapi.PushQuery{Signature: wxapi.PushSignature("tok", ts, "42"), Timestamp: ts, Nonce: "42"}
	}
	for _, tc := range []struct {
		name  string
		token string
		q     wxapi.PushQuery
		ok    bool
	}{
		{"good", "tok", good, true},
		{"at the edge of the window", "tok", stale(-wxapi.MaxPushSkew), true},
		{"another token", "other", good, false},
		{"no token configured", "", good, false},
		{"bad signature", "tok", wxapi.PushQuery{Signature: "0" + good.Signature[1:], Timestamp: ts, Nonce: "42"}, false},
		{"no signature", "tok", wxapi.PushQuery{Timestamp: ts, Nonce: "42"}, false},
		{"other nonce", "tok", wxapi.PushQuery{Signature: good.Signature, Timestamp: ts, Nonce: "43"}, false},
		{"stale timestamp", "tok", stale(-wxapi.MaxPushSkew - time.Second), false},
		{"future timestamp", "tok", stale(wxapi.MaxPushSkew + time.Second), false},
		{"timestamp not a number", "tok", wxapi.PushQuery{Signature: wxapi.PushSignature("tok", "soon", "42"), Timestamp: "soon", Nonce: "42"}, false},
	} {
		err := wxapi.VerifyPush(tc.token, tc.q, now)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, wxapi.ErrPushSignature) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	upper := wxapi.PushQuery{Signature: "68EEA4ECA5F61115ED484901A5FA4C0D952C8936", Timestamp: "1764921600", Nonce: "1320562132"}
	if err := wxapi.VerifyPush("stockguard-token", upper, now); err != nil {
		t.Errorf("an upper-case hex signature: %v", err)
	}
}

func TestParsePush(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	settled, err := wxapi.ParsePush(read("push_settlement.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !settled.Confirmed() || settled.MerchantTradeNo != "o-2f9a1c7e55b1" || settled.TransactionID != "4200001234202612050000000001" ||
		settled.ConfirmReceiveMethod != wxapi.ConfirmManual || settled.ConfirmReceiveTime != 1764918000 || settled.SettlementTime != 1764921600 {
		t.Errorf("settlement %+v", settled)
	}
	shipped, err := wxapi.ParsePush(read("push_shipped.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if shipped.Confirmed() || shipped.Event != wxapi.EventOrderSettlement || shipped.MerchantTradeNo != "o-2f9a1c7e55b1" || shipped.EstimatedSettlementTime != 1765008000 {
		t.Errorf("the push at shipping %+v", shipped)
	}
	if _, err := wxapi.ParsePush(read("push_encrypted.json")); !errors.Is(err, wxapi.ErrPushEncrypted) {
		t.Errorf("安全模式 body: %v", err)
	}
	for _, body := range []string{"", "success", `{"MsgType":1}`, `{}`, `<xml><MsgType>`, `[1]`} {
		if _, err := wxapi.ParsePush([]byte(body)); !errors.Is(err, wxapi.ErrPushMalformed) {
			t.Errorf("%q: %v", body, err)
		}
	}
}
