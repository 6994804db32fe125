package wxapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

const (
	appID      = "wxd678efh567hg6787"
	secret     = "0123456789abcdef0123456789abcdef"
	detailPath = "pages/order/detail?id=${商品订单号}"
	concurrent = 40 // callers started together in the concurrency tests
)

// harness is a stand-in WeChat and a client of the test app sharing one settable clock.
type harness struct {
	t     *testing.T
	srv   *wxapitest.Server
	clock *testkit.Clock
	c     *wxapi.Client
}

func newHarness(t *testing.T, opts wxapitest.Options) *harness {
	t.Helper()
	h := &harness{t: t, clock: testkit.NewClock()}
	if opts.Now == nil {
		opts.Now = h.clock.Now
	}
	h.srv = wxapitest.NewServer(appID, secret, opts)
	if err := h.srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.srv.Close() })
	h.c = h.client(t, nil)
	return h
}

// client is another client of the test app (another Lambda container), on the harness
// clock unless edit changes its configuration.
func (h *harness) client(t *testing.T, edit func(*wxapi.Config)) *wxapi.Client {
	t.Helper()
	cfg := wxapi.Config{AppID: appID, AppSecret: secret, BaseURL: h.srv.URL(), Now: h.clock.Now}
	if edit != nil {
		edit(&cfg)
	}
	return testkit.Must(t, wxapi.New, cfg)
}

// barrier sits in front of the stand-in and, once armed with hold(n), holds the next n
// API calls until all n have arrived: n callers started together then all send the token
// they read before any answer comes back.
type barrier struct {
	next http.Handler
	mu   sync.Mutex
	n    int
	all  chan struct{}
}

func (b *barrier) hold(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n, b.all = n, make(chan struct{})
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	all := b.all
	held := r.URL.Path != wxapi.PathStableToken && b.n > 0
	if held {
		if b.n--; b.n == 0 {
			close(all)
		}
	}
	b.mu.Unlock()
	if held {
		<-all
	}
	b.next.ServeHTTP(w, r)
}

// behindBarrier returns a client (configured by edit, if not nil) whose calls pass a
// barrier in front of the stand-in.
func (h *harness) behindBarrier(t *testing.T, edit func(*wxapi.Config)) (*wxapi.Client, *barrier) {
	t.Helper()
	b := &barrier{next: h.srv}
	front := httptest.NewServer(b)
	t.Cleanup(front.Close)
	return h.client(t, func(cfg *wxapi.Config) {
		if edit != nil {
			edit(cfg)
		}
		cfg.BaseURL = front.URL
	}), b
}

// counts is what reached the stand-in: token fetches and calls of one API path.
type counts struct{ fetches, calls int }

func (h *harness) counts(path string) counts {
	return counts{h.srv.Calls(wxapi.PathStableToken), h.srv.Calls(path)}
}

// setPathTogether has n callers set the detail path at the same instant and fails t on
// any error.
func setPathTogether(t *testing.T, c *wxapi.Client, n int) {
	t.Helper()
	testkit.Parallel(n, func(int) {
		if err := c.UpdateOrderDetailPath(context.Background(), detailPath); err != nil {
			t.Error(err)
		}
	})
}

func TestToken_ConcurrentCallersShareOneFetchUntilTheRefreshMargin(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	const path = wxapi.PathUpdateOrderDetailPath

	setPathTogether(t, h.c, concurrent)
	if got := h.counts(path); got != (counts{1, concurrent}) {
		t.Fatalf("first burst: %+v, want 1 fetch and %d calls", got, concurrent)
	}

	// One second before the margin the cached token still serves.
	h.clock.Advance(wxapitest.TokenTTL - wxapi.DefaultRefreshMargin - time.Second)
	setPathTogether(t, h.c, concurrent)
	if got := h.counts(path); got != (counts{1, 2 * concurrent}) {
		t.Fatalf("before the margin: %+v, want still 1 fetch", got)
	}

	// Inside the margin one fetch replaces it; the platform hands out the next token then.
	h.clock.Advance(2 * time.Second)
	setPathTogether(t, h.c, concurrent)
	if got := h.counts(path); got != (counts{2, 3 * concurrent}) {
		t.Fatalf("inside the margin: %+v, want 2 fetches", got)
	}
	if n := h.srv.TokensIssued(); n != 2 {
		t.Errorf("%d tokens issued, want 2 (the refresh fell in the platform's handover window)", n)
	}
}

func TestToken_RefusedTokenIsReplacedOnceAndEachCallResentOnce(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	const path = wxapi.PathUpdateOrderDetailPath
	c, b := h.behindBarrier(t, nil)
	setPathTogether(t, c, 1)

	h.srv.RevokeTokens() // as a forced refresh by someone else does: 40001 for the old token
	b.hold(concurrent)
	setPathTogether(t, c, concurrent)
	if got := h.counts(path); got != (counts{2, 1 + 2*concurrent}) {
		t.Errorf("%+v, want 2 fetches and %d calls (each refused once, resent once)", got, 1+2*concurrent)
	}
	if n := h.srv.TokensIssued(); n != 2 {
		t.Errorf("%d tokens issued, want 2", n)
	}
}

func TestToken_ExpiredTokenIsReplacedOnce(t *testing.T) {
	// The client's clock lags the platform's by more than the margin, so it keeps a token
	// the platform has expired: 42001, one fetch, one resend.
	h := newHarness(t, wxapitest.Options{})
	lagging := testkit.NewClock()
	c, b := h.behindBarrier(t, func(cfg *wxapi.Config) { cfg.Now = lagging.Now })
	setPathTogether(t, c, 1)
	h.clock.Advance(wxapitest.TokenTTL)

	b.hold(concurrent)
	setPathTogether(t, c, concurrent)
	if got := h.counts(wxapi.PathUpdateOrderDetailPath); got != (counts{2, 1 + 2*concurrent}) {
		t.Errorf("%+v, want 2 fetches and %d calls", got, 1+2*concurrent)
	}
}

func TestToken_RefusalOfTheTokenWeChatStillHandsOutIsNotResent(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	const path = wxapi.PathUpdateOrderDetailPath
	setPathTogether(t, h.c, 1)
	h.srv.FailNext(path, wxapitest.FailInvalidToken, 1)

	err := h.c.UpdateOrderDetailPath(context.Background(), detailPath)
	var werr *wxapi.Error
	if !errors.As(err, &werr) || werr.Code != wxapi.CodeInvalidCredential || !wxapi.Retryable(err) {
		t.Fatalf("err %v, want a retryable *Error 40001", err)
	}
	if got := h.counts(path); got != (counts{2, 2}) {
		t.Errorf("%+v, want 2 fetches (the second returned the same token) and no resend", got)
	}
}

func TestToken_ContainersShareTheStableTokenWithoutInvalidatingEachOther(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	const path = wxapi.PathUpdateOrderDetailPath
	late := h.client(t, func(cfg *wxapi.Config) { cfg.RefreshMargin = time.Minute })
	setPathTogether(t, h.c, 1)
	setPathTogether(t, late, 1)
	if got, n := h.counts(path), h.srv.TokensIssued(); got != (counts{2, 2}) || n != 1 {
		t.Fatalf("%+v and %d tokens, want 2 fetches of the same token", got, n)
	}

	// The first container replaces its token 5 minutes before expiry; the second keeps
	// using the old one, which stays valid until it expires.
	h.clock.Advance(wxapitest.TokenTTL - wxapi.DefaultRefreshMargin + time.Second)
	setPathTogether(t, h.c, 1)
	setPathTogether(t, late, concurrent)
	if got, n := h.counts(path), h.srv.TokensIssued(); got != (counts{3, 3 + concurrent}) || n != 2 {
		t.Errorf("%+v and %d tokens, want 3 fetches, no refusal, 2 tokens", got, n)
	}
}

func TestToken_FailedRefreshKeepsUsingTheUnexpiredToken(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	const path = wxapi.PathUpdateOrderDetailPath
	setPathTogether(t, h.c, 1)
	h.clock.Advance(wxapitest.TokenTTL - time.Minute) // inside the margin, before expiry
	h.srv.FailNext(wxapi.PathStableToken, wxapitest.FailBusy, 1)

	setPathTogether(t, h.c, concurrent)
	if got := h.counts(path); got != (counts{2, 1 + concurrent}) {
		t.Errorf("%+v, want 1 failed refresh shared by all and every call sent", got)
	}
	h.clock.Advance(wxapi.RefreshRetry - time.Second)
	setPathTogether(t, h.c, 1)
	if got := h.counts(path); got != (counts{2, 2 + concurrent}) {
		t.Errorf("%+v, want no refresh attempt within RefreshRetry", got)
	}
	h.clock.Advance(time.Second)
	setPathTogether(t, h.c, 1)
	if got := h.counts(path); got != (counts{3, 3 + concurrent}) {
		t.Errorf("%+v, want the next refresh after RefreshRetry", got)
	}
}

func TestToken_FetchFailureIsSharedByConcurrentCallersAndTyped(t *testing.T) {
	tests := []struct {
		name      string
		failure   wxapitest.Failure
		cfg       func(*wxapi.Config)
		errcode   int // wanted *Error code, 0 for none
		retryable bool
	}{
		{"ServerError", wxapitest.FailServerError, nil, 0, true},
		{"Busy", wxapitest.FailBusy, nil, wxapi.CodeSystemBusy, true},
		{"MinuteQuota", wxapitest.FailMinuteQuota, nil, wxapi.CodeMinuteQuota, true},
		{"DailyQuota", wxapitest.FailDailyQuota, nil, wxapi.CodeDailyQuota, true},
		{"WrongSecret", 0, func(c *wxapi.Config) { c.AppSecret = "wrong" }, wxapi.CodeInvalidAppSecret, false},
		{"WrongAppID", 0, func(c *wxapi.Config) { c.AppID = "wx0000000000000000" }, wxapi.CodeInvalidAppID, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, wxapitest.Options{})
			if tt.failure != 0 {
				h.srv.FailNext(wxapi.PathStableToken, tt.failure, 1)
			}
			c := h.client(t, tt.cfg)
			testkit.Parallel(concurrent, func(int) {
				err := c.UpdateOrderDetailPath(context.Background(), detailPath)
				var werr *wxapi.Error
				switch {
				case err == nil:
					t.Error("the call succeeded without a token")
				case wxapi.Retryable(err) != tt.retryable:
					t.Errorf("Retryable %v for %v", !tt.retryable, err)
				case tt.errcode != 0 && (!errors.As(err, &werr) || werr.Code != tt.errcode || werr.Op != wxapi.OpStableToken):
					t.Errorf("err %v, want errcode %d from %s", err, tt.errcode, wxapi.OpStableToken)
				}
			})
			if got := h.counts(wxapi.PathUpdateOrderDetailPath); got != (counts{1, 0}) {
				t.Errorf("%+v, want 1 fetch and no call", got)
			}
			// The next fetch waits RefreshRetry; a transient failure is then over.
			h.clock.Advance(wxapi.RefreshRetry)
			err := c.UpdateOrderDetailPath(context.Background(), detailPath)
			if (err == nil) != tt.retryable {
				t.Errorf("after RefreshRetry: %v", err)
			}
			if got := h.counts(wxapi.PathUpdateOrderDetailPath); got.fetches != 2 {
				t.Errorf("%+v, want a second fetch after RefreshRetry", got)
			}
		})
	}
}

// gate holds token fetches until released, counting those waiting.
type gate struct {
	next    http.Handler
	release chan struct{}
	arrived chan struct{}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == wxapi.PathStableToken {
		g.arrived <- struct{}{}
		<-g.release
	}
	g.next.ServeHTTP(w, r)
}

func TestToken_CallerWhoseContextEndsStopsWaitingAndOthersStillGetAToken(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	g := &gate{next: h.srv, release: make(chan struct{}), arrived: make(chan struct{}, 4)}
	front := httptest.NewServer(g)
	defer front.Close()
	c := h.client(t, func(cfg *wxapi.Config) { cfg.BaseURL = front.URL })

	// The starter's context ends while its fetch is held: it and a waiter whose context
	// also ends return at once; a waiter with a live context starts a fetch of its own.
	starterCtx, cancelStarter := context.WithCancel(context.Background())
	starter := make(chan error, 1)
	go func() { starter <- c.UpdateOrderDetailPath(starterCtx, detailPath) }()
	<-g.arrived
	waiterCtx, cancelWaiter := context.WithCancel(context.Background())
	waiter := make(chan error, 1)
	go func() { waiter <- c.UpdateOrderDetailPath(waiterCtx, detailPath) }()
	patient := make(chan error, 1)
	go func() { patient <- c.UpdateOrderDetailPath(context.Background(), detailPath) }()

	cancelWaiter()
	if err := <-waiter; !errors.Is(err, context.Canceled) || wxapi.Retryable(err) {
		t.Errorf("waiter: %v, want its own context's error", err)
	}
	cancelStarter()
	if err := <-starter; !errors.Is(err, context.Canceled) || wxapi.Retryable(err) {
		t.Errorf("starter: %v, want its context's error", err)
	}
	<-g.arrived // the patient caller's own fetch
	close(g.release)
	if err := <-patient; err != nil {
		t.Errorf("patient caller: %v", err)
	}
	if got := h.counts(wxapi.PathUpdateOrderDetailPath); got.calls != 1 {
		t.Errorf("%+v, want only the patient caller's call", got)
	}
}
