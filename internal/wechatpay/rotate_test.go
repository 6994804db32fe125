package wechatpay_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

// secretStore plays the Secrets Manager secret: it serves the JSON set last (with
// set) and counts the reads.
type secretStore struct {
	mu    sync.Mutex
	data  []byte
	err   error
	reads atomic.Int64
}

func (s *secretStore) set(data []byte, err error) {
	s.mu.Lock()
	s.data, s.err = data, err
	s.mu.Unlock()
}

func (s *secretStore) read(context.Context) ([]byte, error) {
	s.reads.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data, s.err
}

// testClock is a settable clock safe for concurrent reads.
type testClock struct{ ns atomic.Int64 }

func newTestClock(at time.Time) *testClock {
	c := &testClock{}
	c.ns.Store(at.UnixNano())
	return c
}
func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func secretOf(t testing.TB, p *paytest.Platform) []byte {
	t.Helper()
	data, err := p.Secret()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// rotated is p after WeChat Pay rotated its platform key: same merchant and APIv3 key,
// a new key under a new serial (other's).
func rotated(p, other *paytest.Platform) *paytest.Platform {
	r := *p
	r.Key, r.Serial = other.Key, other.Serial
	return &r
}

// notify is a genuine notification of p for out_trade_no at clock's time.
func notify(t testing.TB, p *paytest.Platform, at time.Time) (wechatpay.Headers, []byte) {
	t.Helper()
	tx := wechatpay.Transaction{OutTradeNo: "order-0001", TransactionID: "4200000001", TradeType: "JSAPI", TradeState: wechatpay.TradeStateSuccess,
		BankType: "OTHERS", SuccessTime: at.Add(-time.Second), Payer: wechatpay.Payer{OpenID: "o-alice"}, Amount: wechatpay.Amount{Total: 100, PayerTotal: 100, Currency: "CNY", PayerCurrency: "CNY"}}
	headers, body, err := p.Notify(tx, at)
	if err != nil {
		t.Fatal(err)
	}
	return wechatpay.HeadersFrom(headers), body
}

// parse hands v a genuine notification of p at time at.
func parse(t testing.TB, v *wechatpay.RotatingVerifier, p *paytest.Platform, at time.Time) (*wechatpay.Notification, error) {
	t.Helper()
	h, body := notify(t, p, at)
	return v.Parse(context.Background(), h, body)
}

// After WeChat Pay rotates its platform key and the secret lists the new one, the
// first notification signed with it is accepted after exactly one re-read, and the
// re-read is reported once; a notification of the old key is accepted with no read.
func TestRotatingVerifier_AcceptsARotatedKeyAfterOneReread(t *testing.T) {
	f := newFixture(t)
	clock := newTestClock(testNow)
	store := &secretStore{}
	store.set(secretOf(t, f.p), nil)
	var reloads []error
	v, err := wechatpay.NewRotatingVerifier(context.Background(), store.read, wechatpay.RotateOptions{Now: clock.now,
		OnReload: func(_ context.Context, err error) { reloads = append(reloads, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parse(t, v, f.p, clock.now()); err != nil || store.reads.Load() != 1 {
		t.Fatalf("old key: %v after %d reads", err, store.reads.Load())
	}
	next := rotated(f.p, f.other)
	store.set(secretOf(t, next), nil)
	clock.advance(wechatpay.DefaultMinReread)
	n, err := parse(t, v, next, clock.now())
	if err != nil || n.Transaction.OutTradeNo != "order-0001" {
		t.Fatalf("new key: %v", err)
	}
	if store.reads.Load() != 2 || len(reloads) != 1 || reloads[0] != nil {
		t.Errorf("reads %d, reloads %v; want 2 reads, one successful re-read", store.reads.Load(), reloads)
	}
	if _, err := parse(t, v, next, clock.now()); err != nil || store.reads.Load() != 2 {
		t.Errorf("new key again: %v after %d reads, want no more reads", err, store.reads.Load())
	}
}

// A flood of notifications naming unknown serials, from many goroutines, costs exactly
// one read of the secret per MinInterval; every one is refused with ErrUnknownSerial.
func TestRotatingVerifier_FloodOfUnknownSerialsRereadsOncePerInterval(t *testing.T) {
	f := newFixture(t)
	clock := newTestClock(testNow)
	store := &secretStore{}
	store.set(secretOf(t, f.p), nil)
	v, err := wechatpay.NewRotatingVerifier(context.Background(), store.read, wechatpay.RotateOptions{Now: clock.now, MinInterval: time.Minute, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	flood := func() {
		h, body := notify(t, f.other, clock.now())
		var wg sync.WaitGroup
		var accepted atomic.Int64
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := v.Parse(context.Background(), h, body); !errors.Is(err, wechatpay.ErrUnknownSerial) || !errors.Is(err, wechatpay.ErrVerification) {
					accepted.Add(1)
				}
			}()
		}
		wg.Wait()
		if accepted.Load() != 0 {
			t.Fatalf("%d forged notifications not refused with ErrUnknownSerial", accepted.Load())
		}
	}
	for _, step := range []struct {
		advance time.Duration
		reads   int64
	}{
		{0, 1},                // read at start: the interval has not passed
		{59 * time.Second, 1}, // still inside it
		{time.Second, 2},      // one read for the whole flood
		{30 * time.Second, 2},
		{30 * time.Second, 3},
	} {
		clock.advance(step.advance)
		flood()
		if got := store.reads.Load(); got != step.reads {
			t.Fatalf("after +%v: %d reads, want %d", step.advance, got, step.reads)
		}
	}
}

// After the TTL the next call reads the secret again; a failed read keeps the old
// keys in use, is reported, and is not retried before MinInterval.
func TestRotatingVerifier_RereadsAfterTTLAndKeepsOldKeysOnFailure(t *testing.T) {
	f := newFixture(t)
	clock := newTestClock(testNow)
	store := &secretStore{}
	store.set(secretOf(t, f.p), nil)
	var failures atomic.Int64
	v, err := wechatpay.NewRotatingVerifier(context.Background(), store.read, wechatpay.RotateOptions{Now: clock.now, TTL: 10 * time.Minute,
		OnReload: func(_ context.Context, err error) {
			if err != nil {
				failures.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(10 * time.Minute)
	store.set(nil, errors.New("AccessDeniedException"))
	for range 3 {
		if _, err := parse(t, v, f.p, clock.now()); err != nil {
			t.Fatalf("old keys after a failed re-read: %v", err)
		}
	}
	if store.reads.Load() != 2 || failures.Load() != 1 {
		t.Fatalf("%d reads, %d failures; want 2 reads, 1 failure", store.reads.Load(), failures.Load())
	}
	store.set(secretOf(t, f.p), nil)
	clock.advance(time.Minute)
	if _, err := parse(t, v, f.p, clock.now()); err != nil || store.reads.Load() != 3 {
		t.Errorf("after MinInterval: %v with %d reads, want a third read", err, store.reads.Load())
	}
}

// The merchant client reads the secret again when an answer is signed with a key it
// does not know, and sends the (idempotent) request once more: WeChat Pay's stand-in
// rotated its key, the next query succeeds after one re-read.
func TestRotatingClient_AcceptsAnswersOfARotatedKeyAfterOneReread(t *testing.T) {
	f := newFixture(t)
	m := testMerchants(t)[0]
	clock := newTestClock(time.Now())
	var current atomic.Pointer[paytest.Server]
	var requests atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		current.Load().ServeHTTP(w, r)
	}))
	defer front.Close()
	current.Store(paytest.NewServer(f.p, m, paytest.ServerOptions{Now: clock.now}))
	secret := func(p *paytest.Platform) []byte {
		data, err := p.MerchantSecret(m, "")
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	store := &secretStore{}
	store.set(secret(f.p), nil)
	c, err := wechatpay.NewRotatingClient(context.Background(), store.read, wechatpay.RotateOptions{Now: clock.now, BaseURL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	query := func() error {
		_, err := c.QueryOrder(context.Background(), "order-0001")
		var apiErr *wechatpay.APIError
		if errors.As(err, &apiErr) && apiErr.Code == wechatpay.CodeOrderNotExist {
			return nil // a verified answer
		}
		return err
	}
	if err := query(); err != nil {
		t.Fatalf("old key: %v", err)
	}
	next := rotated(f.p, f.other)
	current.Store(paytest.NewServer(next, m, paytest.ServerOptions{Now: clock.now}))
	store.set(secret(next), nil)
	clock.advance(time.Minute)
	if err := query(); err != nil {
		t.Fatalf("new key: %v", err)
	}
	if store.reads.Load() != 2 || requests.Load() != 3 {
		t.Errorf("%d reads, %d requests; want 2 reads and the second query sent twice", store.reads.Load(), requests.Load())
	}
}
