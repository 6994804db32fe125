package secret

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
)

// The message token comes from the read the verifier makes anyway (no read of its
// own at cold start), is read again at most every DefaultSecretTTL when asked for, and
// a failed re-read keeps the token read before.
func TestMessageToken_SharesTheVerifiersReadsAndRereadsAfterTheTTL(t *testing.T) {
	secret, reads, fail := `{"mchid":"1230000109","messageToken":"first"}`, 0, false
	read := func(context.Context) ([]byte, error) {
		reads++
		if fail {
			return nil, errors.New("throttled")
		}
		return []byte(secret), nil
	}
	var m MessageToken
	now := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	verifierRead := m.noted(read)
	m.now = func() time.Time { return now }
	if _, err := verifierRead(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := m.Get(ctx); got != "first" || reads != 1 {
		t.Fatalf("after the verifier's read: %q, %d reads", got, reads)
	}
	secret = `{"mchid":"1230000109","messageToken":"second"}`
	now = now.Add(wechatpay.DefaultSecretTTL - time.Second)
	if got := m.Get(ctx); got != "first" || reads != 1 {
		t.Errorf("within the TTL: %q, %d reads", got, reads)
	}
	now = now.Add(time.Second)
	if got := m.Get(ctx); got != "second" || reads != 2 {
		t.Errorf("after the TTL: %q, %d reads", got, reads)
	}
	fail = true
	now = now.Add(wechatpay.DefaultSecretTTL)
	if got := m.Get(ctx); got != "second" || reads != 3 {
		t.Errorf("a failed re-read: %q, %d reads", got, reads)
	}
	if got := m.Get(ctx); got != "second" || reads != 3 {
		t.Errorf("right after a failed re-read: %q, %d reads", got, reads)
	}
	var none MessageToken
	if got := none.Get(ctx); got != "" {
		t.Errorf("never read: %q", got)
	}
}
