package quotas_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/quotas"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// The tests drive the models on an explicit clock: counts are exact.

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)} }

// offer sends requests for route as fast as the gateway takes them, every step for
// span, and returns how many it admitted and the limits that refused the others.
func offer(g *quotas.Gateway, c *fakeClock, route string, span, step time.Duration) int {
	admitted := 0
	for end := c.Now().Add(span); c.Now().Before(end); c.Add(step) {
		for g.Admit(route) == "" {
			admitted++
		}
	}
	return admitted
}

func TestGateway_ThrottlesTopOutAtTheirCeilings(t *testing.T) {
	span := 2 * time.Second
	for _, tc := range []struct {
		name    string
		cfg     quotas.GatewayConfig
		route   *sam.Throttle
		perSec  float64
		burst   float64
		refusal string
	}{
		{"the account's default", quotas.GatewayConfig{}, nil, 10000, 5000, "API Gateway account"},
		{"the account's, slowed down 10×", quotas.GatewayConfig{Slowdown: 10}, nil, 1000, 5000, "API Gateway account"},
		{"a route below the account", quotas.GatewayConfig{}, &sam.Throttle{Rate: 500, Burst: 1000}, 500, 1000, "API Gateway route POST /orders"},
		{"a route above a raised account", quotas.GatewayConfig{Rate: 200, Burst: 100}, &sam.Throttle{Rate: 500, Burst: 1000}, 200, 100, "API Gateway account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			tc.cfg.Now = c.Now
			g := quotas.NewGateway([]sam.Route{{Method: "POST", Path: "/orders", Throttle: tc.route}}, tc.cfg)
			got := offer(g, c, "POST /orders", span, time.Millisecond)
			want := tc.perSec*span.Seconds() + tc.burst
			if float64(got) > want+1 || float64(got) < want-tc.perSec/1000-1 {
				t.Errorf("admitted %d in %v, want %.0f (%.0f/s and a burst of %.0f)", got, span, want, tc.perSec, tc.burst)
			}
			if th := g.Throttled(); len(th) != 1 || th[tc.refusal] == 0 {
				t.Errorf("refused by %v, want only %q", th, tc.refusal)
			}
		})
	}
}

func TestGateway_AnswersThrottledRequests429BeforeTheFunction(t *testing.T) {
	c := newClock()
	g := quotas.NewGateway([]sam.Route{
		{Method: "GET", Path: "/skus/{skuId}", Throttle: &sam.Throttle{Rate: 1, Burst: 2}},
	}, quotas.GatewayConfig{Now: c.Now})
	served := 0
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	status := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	for range 2 {
		if code, _ := status("/skus/cup"); code != 200 {
			t.Fatalf("within the burst: %d", code)
		}
	}
	if code, body := status("/skus/saucer"); code != 429 || body != `{"message":"Too Many Requests"}` {
		t.Errorf("over the route's burst (any SKU: one route): %d %s, want 429 Too Many Requests", code, body)
	}
	if code, _ := status("/_local/pay/x"); code != 200 {
		t.Errorf("a path outside the API's routes: %d, want it passed on", code)
	}
	if served != 3 {
		t.Errorf("the function saw %d requests, want 3 (a throttled request never reaches it)", served)
	}
}

type handler func(context.Context, []byte) ([]byte, error)

func (h handler) Invoke(ctx context.Context, p []byte) ([]byte, error) { return h(ctx, p) }

// hold starts n invocations of name that block until release is closed, and waits
// until each was admitted or refused; it returns the refusals.
func hold(t *testing.T, l *quotas.Lambda, name string, n int, release chan struct{}, wg *sync.WaitGroup) []error {
	t.Helper()
	var mu sync.Mutex
	var refused []error
	var started sync.WaitGroup
	for range n {
		started.Add(1)
		wg.Go(func() {
			_, err := l.Invoke(context.Background(), name, handler(func(context.Context, []byte) ([]byte, error) {
				started.Done()
				<-release
				return nil, nil
			}), nil)
			if err != nil {
				mu.Lock()
				refused = append(refused, err)
				mu.Unlock()
				started.Done()
			}
		})
	}
	started.Wait()
	return refused
}

func reasons(errs []error) map[string]int {
	out := map[string]int{}
	for _, err := range errs {
		var tmr *quotas.TooManyRequests
		if errors.As(err, &tmr) {
			out[tmr.Reason]++
		} else {
			out[err.Error()]++
		}
	}
	return out
}

func TestLambda_ConcurrencyTopsOutAtItsCeilings(t *testing.T) {
	fns := []sam.Function{
		{Name: "CreateOrderFunction"}, {Name: "LoginFunction"},
		{Name: "CloseOrderFunction", ReservedConcurrency: new(20)},
		{Name: "ReconcileFunction", ReservedConcurrency: new(1)},
	}
	c := newClock()
	l, err := quotas.NewLambda(fns, quotas.LambdaConfig{AccountConcurrency: 200, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if l.Unreserved() != 179 {
		t.Fatalf("unreserved %d, want 200 − 21", l.Unreserved())
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	// A reserved function runs exactly its reservation.
	if got := reasons(hold(t, l, "CloseOrderFunction", 25, release, &wg)); got["ReservedFunctionConcurrentInvocationLimitExceeded"] != 5 || len(got) != 1 {
		t.Errorf("25 closeOrder invocations at once: refusals %v, want 5 over its 20", got)
	}
	// The unreserved functions share what is left.
	refused := hold(t, l, "CreateOrderFunction", 150, release, &wg)
	refused = append(refused, hold(t, l, "LoginFunction", 40, release, &wg)...)
	if got := reasons(refused); got["ConcurrentInvocationLimitExceeded"] != 11 || len(got) != 1 {
		t.Errorf("190 unreserved invocations at once: refusals %v, want 11 over the 179 unreserved", got)
	}
	close(release)
	wg.Wait()
	st := l.Stats()
	if st["CreateOrderFunction"].Peak != 150 || st["LoginFunction"].Peak != 29 || st["CloseOrderFunction"].Peak != 20 {
		t.Errorf("peaks %+v", st)
	}
	if th := l.Throttled(); th["Lambda CloseOrderFunction ReservedFunctionConcurrentInvocationLimitExceeded"] != 5 || th["Lambda LoginFunction ConcurrentInvocationLimitExceeded"] != 11 {
		t.Errorf("throttled %v", th)
	}
	// Environments are kept: the same load again creates none.
	release = make(chan struct{})
	if got := hold(t, l, "CreateOrderFunction", 150, release, &wg); len(got) != 0 {
		t.Errorf("150 again on warm environments: refused %v", got)
	}
	close(release)
	wg.Wait()
	if st := l.Stats()["CreateOrderFunction"]; st.Environments != 150 || st.ColdStarts != 150 || st.Invocations != 300 {
		t.Errorf("stats %+v, want 150 environments for 300 invocations", st)
	}
}

func TestLambda_ScalingRateTopsOutAtItsCeiling(t *testing.T) {
	c := newClock()
	l, err := quotas.NewLambda([]sam.Function{{Name: "F"}}, quotas.LambdaConfig{AccountConcurrency: 100000, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(release); wg.Wait() }()
	// 1,000 new environments at once, then 100 a second (1,000 per 10 s).
	if got := reasons(hold(t, l, "F", 1200, release, &wg)); got["FunctionScalingRateExceeded"] != 200 || len(got) != 1 {
		t.Fatalf("1,200 at once: refusals %v, want 200 over the first 1,000 environments", got)
	}
	c.Add(3 * time.Second)
	if got := reasons(hold(t, l, "F", 400, release, &wg)); got["FunctionScalingRateExceeded"] != 100 {
		t.Errorf("400 more 3 s later: refusals %v, want 100 over the 300 environments 3 s allow", got)
	}
	c.Add(time.Hour) // never banked beyond 1,000
	if got := reasons(hold(t, l, "F", 1100, release, &wg)); got["FunctionScalingRateExceeded"] != 100 {
		t.Errorf("1,100 more an hour later: refusals %v, want 100 over 1,000", got)
	}
}

func TestNewLambda_RefusesReservationsThatLeaveLessThan100(t *testing.T) {
	if _, err := quotas.NewLambda([]sam.Function{{Name: "A", ReservedConcurrency: new(950)}}, quotas.LambdaConfig{}); err == nil {
		t.Error("950 of 1,000 reserved: accepted, want an error (Lambda keeps 100 unreserved)")
	}
}

// The template's functions, through the model with its defaults: the reservations
// leave 955 of the default 1,000 to createOrder, login, admin and the others.
func TestLambda_TheTemplatesReservations(t *testing.T) {
	tpl, err := sam.Load(filepath.Join(testkit.ModuleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	l, err := quotas.NewLambda(fns, quotas.LambdaConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Unreserved() != 955 {
		t.Errorf("unreserved %d, want 1,000 − 20 − 20 − 1 − 2 − 2 (closeOrder, payCallback, reconcile, alertChat, admitter)", l.Unreserved())
	}
}

var _ lambda.Handler = handler(nil)

func TestLambda_WarmEnvironmentsTakeNothingFromTheScalingRate(t *testing.T) {
	c := newClock()
	l, err := quotas.NewLambda([]sam.Function{{Name: "F"}}, quotas.LambdaConfig{AccountConcurrency: 100000, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	l.Warm("F", 500)
	release := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(release); wg.Wait() }()
	if got := reasons(hold(t, l, "F", 1600, release, &wg)); got["FunctionScalingRateExceeded"] != 100 || len(got) != 1 {
		t.Errorf("1,600 at once on 500 warm environments: refusals %v, want 100 over 500 + 1,000", got)
	}
	if st := l.Stats()["F"]; st.ColdStarts != 1000 || st.Environments != 1500 {
		t.Errorf("stats %+v, want 1,000 cold starts of 1,500 environments", st)
	}
}

// A Lambda throttle reaches the buyer as API Gateway answers it: 500 Internal Server
// Error, the function never run (here createOrder may run nothing at all).
func TestLambda_ARefusedInvocationIsAnswered500ByTheGateway(t *testing.T) {
	tpl, err := sam.Load(filepath.Join(testkit.ModuleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	for i := range fns {
		if fns[i].Name == "CreateOrderFunction" {
			fns[i].ReservedConcurrency = new(0)
		}
	}
	l, err := quotas.NewLambda(fns, quotas.LambdaConfig{})
	if err != nil {
		t.Fatal(err)
	}
	stack, err := local.Start(context.Background(), local.StackConfig{
		Template: filepath.Join(testkit.ModuleRoot(t), "template.yaml"), WrapFunction: l.Wrap,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	rec := httptest.NewRecorder()
	stack.API.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/skus/cup", nil))
	if rec.Code != http.StatusInternalServerError || rec.Body.String() != `{"message":"Internal Server Error"}` {
		t.Errorf("GET /skus/cup with createOrder throttled: %d %s, want 500 Internal Server Error", rec.Code, rec.Body)
	}
	if th := l.Throttled(); th["Lambda CreateOrderFunction ReservedFunctionConcurrentInvocationLimitExceeded"] != 1 {
		t.Errorf("throttled %v", th)
	}
}

// Only settings AWS grants: the account's rate may be raised on request, its burst may
// not ("Amazon API Gateway quotas",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html: the burst
// "is not a quota that a customer can control or request changes to").
func TestGatewayConfig_CheckRefusesABurstAWSDoesNotGrant(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     quotas.GatewayConfig
		refused bool
	}{
		{"the defaults", quotas.GatewayConfig{}, false},
		{"the default burst", quotas.GatewayConfig{Burst: 5000}, false},
		{"a smaller burst", quotas.GatewayConfig{Burst: 1000}, false},
		{"a raised rate (requestable)", quotas.GatewayConfig{Rate: 215000}, false},
		{"one past the burst", quotas.GatewayConfig{Burst: 5001}, true},
		{"the README's old 100,000", quotas.GatewayConfig{Rate: 215000, Burst: 100000}, true},
	} {
		err := tc.cfg.Check()
		if got := err != nil; got != tc.refused {
			t.Errorf("%s: Check() = %v; want refused %v", tc.name, err, tc.refused)
			continue
		}
		if tc.refused && (!errors.Is(err, quotas.ErrUnrequestable) || !strings.Contains(err.Error(), "Amazon API Gateway quotas")) {
			t.Errorf("%s: Check() = %v; want ErrUnrequestable naming the quota page", tc.name, err)
		}
	}
}

// instances is a function whose every handler instance counts the invocations it ran:
// build is WrapEnvironments's, and ran[i] the invocations of the i-th instance built.
type instances struct {
	mu  sync.Mutex
	ran []int
}

func (in *instances) build(hold chan struct{}) func() (lambda.Handler, error) {
	return func() (lambda.Handler, error) {
		in.mu.Lock()
		defer in.mu.Unlock()
		i := len(in.ran)
		in.ran = append(in.ran, 0)
		return handler(func(context.Context, []byte) ([]byte, error) {
			in.mu.Lock()
			in.ran[i]++
			in.mu.Unlock()
			if hold != nil {
				<-hold
			}
			return nil, nil
		}), nil
	}
}

func (in *instances) counts() []int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]int(nil), in.ran...)
}

// Each execution environment runs a handler instance of its own, built at its cold
// start and kept while it is warm: 3 invocations at once build 3 instances; 5 more,
// one after another, all run on the environment freed last and build none.
func TestLambda_EachEnvironmentRunsAnInstanceOfItsOwn(t *testing.T) {
	c := newClock()
	l, err := quotas.NewLambda([]sam.Function{{Name: "F"}}, quotas.LambdaConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	var in instances
	hold := make(chan struct{})
	f := l.WrapEnvironments("F", in.build(hold))
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := f.Invoke(context.Background(), nil); err != nil {
				t.Error(err)
			}
		})
	}
	for {
		if st := l.Stats()["F"]; st.Peak == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	if got := in.counts(); len(got) != 3 || got[0]+got[1]+got[2] != 3 {
		t.Fatalf("3 invocations at once ran on instances %v, want 3 instances of 1 each", got)
	}
	for range 5 {
		if _, err := f.Invoke(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	got := in.counts()
	if len(got) != 3 || got[0]+got[1]+got[2] != 8 || max(got[0], got[1], got[2]) != 6 {
		t.Errorf("5 more one after another: instances %v, want no new one and all 5 on one", got)
	}
	if st := l.Stats()["F"]; st.Environments != 3 || st.PeakLive != 3 || st.ColdStarts != 3 || st.Invocations != 8 {
		t.Errorf("stats %+v, want 3 environments (3 alive at most) for 8 invocations", st)
	}
}

// An environment idle longer than IdleTimeout is reclaimed with its instance: the
// next invocation is a cold start on a new one. Warm (provisioned) environments stay.
// OnLive hears every change of the environments alive.
func TestLambda_IdleEnvironmentsAreReclaimed(t *testing.T) {
	c := newClock()
	var heard []string
	onLive := func(function string, live int, at time.Time) {
		heard = append(heard, fmt.Sprintf("%s %d at %v", function, live, at.Sub(newClock().Now())))
	}
	l, err := quotas.NewLambda([]sam.Function{{Name: "F"}, {Name: "P"}}, quotas.LambdaConfig{Now: c.Now, IdleTimeout: 10 * time.Minute, Slowdown: 2, OnLive: onLive})
	if err != nil {
		t.Fatal(err)
	}
	l.Warm("P", 1)
	var in, pin instances
	f, p := l.WrapEnvironments("F", in.build(nil)), l.WrapEnvironments("P", pin.build(nil))
	invoke := func(h lambda.Handler) {
		t.Helper()
		if _, err := h.Invoke(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	invoke(f)
	invoke(p)
	c.Add(19 * time.Minute) // 9.5 minutes at 1× (Slowdown 2): still warm
	invoke(f)
	invoke(p)
	if got := in.counts(); len(got) != 1 {
		t.Fatalf("after 9.5 idle minutes: instances %v, want the first one reused", got)
	}
	c.Add(21 * time.Minute) // 10.5 minutes at 1×
	invoke(f)
	invoke(p)
	if got := in.counts(); len(got) != 2 || got[1] != 1 {
		t.Errorf("after 10.5 idle minutes: instances %v, want a second one for the third invocation", got)
	}
	if st := l.Stats()["F"]; st.Environments != 2 || st.Recycled != 1 || st.ColdStarts != 2 || st.PeakLive != 1 {
		t.Errorf("F's stats %+v, want 2 environments, 1 reclaimed, never 2 alive at once", st)
	}
	if st := l.Stats()["P"]; st.Environments != 1 || st.Recycled != 0 || st.ColdStarts != 0 || len(pin.counts()) != 1 {
		t.Errorf("P's stats %+v (instances %v), want its provisioned environment kept", st, pin.counts())
	}
	if want := []string{"P 1 at 0s", "F 1 at 0s", "F 0 at 40m0s", "F 1 at 40m0s"}; !slices.Equal(heard, want) {
		t.Errorf("OnLive heard %q, want %q", heard, want)
	}
}
