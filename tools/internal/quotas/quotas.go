// Package quotas models the AWS quotas in front of stockguard's functions, for the
// whole-sale rehearsal (tools/internal/rehearse): API Gateway's throttles on the HTTP
// API and Lambda's concurrency. Both run on the same slowed clock as
// tools/internal/ddblimits (Slowdown s: every rate s times lower, every duration s
// times longer in real time) and answer what the real services answer.
//
// API Gateway (Gateway) throttles with token buckets (Developer Guide, "Throttle
// requests to your HTTP APIs for better throughput in API Gateway": "API Gateway
// throttles requests to your API using the token bucket algorithm, where a token
// counts for a request"): one for the account in the Region, 10,000 requests per
// second with a burst of 5,000 by default ("Amazon API Gateway quotas", throttle
// quota per account, per Region across HTTP APIs, REST APIs, WebSocket APIs; the
// burst figure from "Amazon API Gateway increases account-level throttle limits to
// 10,000 RPS", AWS What's New, June 2017: "The burst limit has been raised to
// 5,000"), and one per route from the stage's DefaultRouteSettings or the route's
// RouteSettings (template.yaml: the ApiThrottleRateLimit and ApiThrottleBurstLimit
// parameters). A request either bucket cannot serve is answered 429 Too Many Requests
// with {"message":"Too Many Requests"} before any function runs.
//
// Lambda (Lambda) runs each invocation in an execution environment that serves one
// request at a time (Lambda Developer Guide, "Understanding Lambda function
// scaling"). A function with reserved concurrency runs at most that many at once; the
// others share the account's concurrency (1,000 by default: "Lambda quotas",
// concurrent executions) less everything reserved ("Configuring reserved
// concurrency for a function"). A new environment costs an initialisation
// (ColdStart, an assumption of the model: Lambda does not document one figure) and
// may only be created at the function's scaling rate: 1,000 execution environments
// every 10 seconds per function, refilled continuously and never banked beyond 1,000
// ("Lambda scaling behavior", concurrency scaling rate). An invocation over any of
// these is refused with Lambda's 429 TooManyRequestsException, which API Gateway
// answers 500 {"message":"Internal Server Error"} ("Handling Lambda errors with an
// API Gateway API": "If the Lambda API rejects the invocation request, API Gateway
// returns a 500 error code"), and which an SQS event source leaves on the queue.
//
// Only settings AWS grants: the account's rate can be raised on request, its burst
// cannot ("Amazon API Gateway quotas",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html: "The burst
// quota is determined by the API Gateway service team based on the overall RPS quota
// for the account in the Region. It is not a quota that a customer can control or
// request changes to."), so GatewayConfig.Check refuses a burst above AccountBurst.
//
// Each environment is one instance of the function's handler (Lambda.WrapEnvironments):
// built at its cold start, reused while warm, so what a deployed environment keeps in
// memory (caches, hints) is kept per environment. An invocation takes the environment
// freed last (Lambda does not document which idle environment it picks; the most
// recently used keeps the fewest warm, so an idle one can age out). Environments idle
// longer than LambdaConfig.IdleTimeout are reclaimed (an assumption: Lambda documents
// that it keeps an environment warm for some time after an invocation and may
// reclaim it, "Understanding the Lambda execution environment lifecycle", but
// publishes no figure).
//
// What it leaves out: provisioned concurrency's own billing, the periodic recycling
// of environments that are busy, API Gateway's own latency and the burst's other
// "factors" the throttling page mentions (throttles are targets applied on a best-effort basis; the model applies
// them exactly).
package quotas

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// Documented defaults.
const (
	// AccountRequestsPerSecond and AccountBurst are API Gateway's default throttle
	// for an account in a Region (see the package doc).
	AccountRequestsPerSecond = 10000
	AccountBurst             = 5000
	// AccountConcurrency is Lambda's default concurrency for an account in a Region
	// ("Lambda quotas": concurrent executions, 1,000).
	AccountConcurrency = 1000
	// ScalingEnvironments new execution environments per ScalingPeriod is each
	// function's concurrency scaling rate ("Lambda scaling behavior").
	ScalingEnvironments = 1000
	ScalingPeriod       = 10 * time.Second
	// UnreservedMinimum is the concurrency Lambda keeps unreserved for functions
	// without a reservation ("Configuring reserved concurrency for a function": Lambda
	// always leaves at least 100 units unreserved).
	UnreservedMinimum = 100
	// DefaultIdleTimeout is how long an idle execution environment is kept before it
	// is reclaimed, at 1×: an assumption of the model ("Understanding the Lambda
	// execution environment lifecycle" says an idle environment may be shut down but
	// gives no figure). A sale lasts minutes, so it matters only to long runs.
	DefaultIdleTimeout = 5 * time.Minute
)

// QuotasPage is the AWS page that says which API Gateway quotas can be requested.
const QuotasPage = `"Amazon API Gateway quotas" (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html)`

// ErrUnrequestable is the error (wrapped) of a setting AWS does not grant on request.
var ErrUnrequestable = errors.New("not a setting AWS grants")

// bucket is a token bucket in real time.
type bucket struct {
	tokens float64
	at     time.Time
	primed bool
}

// take refills the bucket to now at rate per second (depth deep, full at first use)
// and takes one token when it holds one.
func (b *bucket) take(now time.Time, rate, depth float64) bool {
	if !b.primed {
		b.tokens, b.at, b.primed = depth, now, true
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(depth, b.tokens+dt*rate)
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// GatewayConfig sets API Gateway's account throttle; zero values take the defaults.
type GatewayConfig struct {
	// Rate is the account's steady requests per second; default
	// AccountRequestsPerSecond.
	Rate float64
	// Burst is the account's bucket depth; default AccountBurst.
	Burst int
	// Slowdown is the clock scale (see the package doc); default 1.
	Slowdown float64
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Check returns an error wrapping ErrUnrequestable, naming QuotasPage, when c asks
// for a setting AWS does not grant: an account burst above AccountBurst (the burst
// is set by the API Gateway service team, not requested); nil otherwise. The rate may
// be raised on request, so any rate passes.
func (c GatewayConfig) Check() error {
	if c.Burst > AccountBurst {
		return fmt.Errorf("an API Gateway account burst of %d is %w: the burst is %d and cannot be requested (%s)", c.Burst, ErrUnrequestable, AccountBurst, QuotasPage)
	}
	return nil
}

// Gateway is API Gateway's throttling in front of the routes of a template's HTTP
// APIs. Safe for concurrent use.
type Gateway struct {
	cfg       GatewayConfig
	mux       *http.ServeMux // route patterns, to tell a request's route
	routes    map[string]*sam.Throttle
	mu        sync.Mutex
	account   bucket
	perRoute  map[string]*bucket
	throttled map[string]int
	first     map[string]time.Time
	requests  map[string]int
}

// NewGateway returns the throttles of routes (sam.Template.Routes) under cfg.
func NewGateway(routes []sam.Route, cfg GatewayConfig) *Gateway {
	if cfg.Rate <= 0 {
		cfg.Rate = AccountRequestsPerSecond
	}
	if cfg.Burst <= 0 {
		cfg.Burst = AccountBurst
	}
	if cfg.Slowdown < 1 {
		cfg.Slowdown = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gateway{cfg: cfg, mux: http.NewServeMux(), routes: map[string]*sam.Throttle{}, perRoute: map[string]*bucket{}, throttled: map[string]int{}, first: map[string]time.Time{}, requests: map[string]int{}}
	for _, r := range routes {
		key := r.Method + " " + r.Path
		if _, dup := g.routes[key]; dup {
			continue // the same route key on another API: the first one's throttle
		}
		g.routes[key] = r.Throttle
		g.mux.Handle(key, http.NotFoundHandler())
	}
	return g
}

// Route returns the route key ("POST /orders/{orderId}/pay") a request matches, "" for
// none.
func (g *Gateway) Route(r *http.Request) string {
	_, pattern := g.mux.Handler(r)
	if _, ok := g.routes[pattern]; !ok {
		return ""
	}
	return pattern
}

// Admit decides one request for route at the model's clock: the account's bucket,
// then the route's. It returns the name of the limit that refused it ("API Gateway
// account" or "API Gateway route POST /orders"), "" when admitted. A route the
// gateway does not know is only subject to the account throttle.
func (g *Gateway) Admit(route string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	now, slow := g.cfg.Now(), g.cfg.Slowdown
	g.requests[route]++
	refused := ""
	if !g.account.take(now, g.cfg.Rate/slow, float64(g.cfg.Burst)) {
		refused = "API Gateway account"
	} else if t := g.routes[route]; t != nil && t.Rate > 0 {
		b := g.perRoute[route]
		if b == nil {
			b = &bucket{}
			g.perRoute[route] = b
		}
		if !b.take(now, t.Rate/slow, float64(max(t.Burst, 1))) {
			refused = "API Gateway route " + route
		}
	}
	if refused != "" {
		g.throttled[refused]++
		if _, ok := g.first[refused]; !ok {
			g.first[refused] = now
		}
	}
	return refused
}

// Wrap puts the throttles in front of next: a request matching a route is admitted
// or answered 429 {"message":"Too Many Requests"} as API Gateway answers a throttled
// request; any other request (a local-only route) passes untouched.
func (g *Gateway) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := g.Route(r)
		if route != "" && g.Admit(route) != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"Too Many Requests"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Throttled returns how many requests each limit refused, by name.
func (g *Gateway) Throttled() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.throttled)
}

// FirstThrottled returns when each limit of Throttled first refused a request.
func (g *Gateway) FirstThrottled() map[string]time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.first)
}

// Requests returns the requests each route received (refused ones included).
func (g *Gateway) Requests() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.requests)
}

// LambdaConfig sets Lambda's quotas; zero values take the defaults.
type LambdaConfig struct {
	// AccountConcurrency is the account's concurrency; default AccountConcurrency.
	AccountConcurrency int
	// ScalingEnvironments per ScalingPeriod is each function's scaling rate; defaults
	// ScalingEnvironments and ScalingPeriod.
	ScalingEnvironments int
	ScalingPeriod       time.Duration
	// ColdStart is how long a new execution environment initialises before its first
	// invocation runs, at 1×; 0 adds nothing.
	ColdStart time.Duration
	// IdleTimeout is how long an environment may stay idle before it is reclaimed, at
	// 1×; default DefaultIdleTimeout, negative: never. Environments given by Warm are
	// never reclaimed (provisioned concurrency).
	IdleTimeout time.Duration
	// OnLive, when set, is told each time a function's environments alive (busy or
	// idle) change: the function, how many are alive, and when (the model's clock). It
	// is called with the model's lock held: it must not call the model.
	OnLive func(function string, live int, at time.Time)
	// Slowdown is the clock scale; default 1.
	Slowdown float64
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// TooManyRequests is Lambda's refusal of an invocation (Lambda API Reference, Invoke:
// TooManyRequestsException, HTTP 429, with a Reason).
type TooManyRequests struct {
	Function string
	// Reason is ReservedFunctionConcurrentInvocationLimitExceeded,
	// ConcurrentInvocationLimitExceeded (the account's unreserved concurrency), or
	// FunctionScalingRateExceeded (the model's name for the scaling rate, which the
	// Lambda documentation answers with a throttling error, status 429).
	Reason string
}

func (e *TooManyRequests) Error() string {
	return fmt.Sprintf("TooManyRequestsException: %s: Rate Exceeded. (%s)", e.Function, e.Reason)
}

// FunctionStats are what Lambda did for one function.
type FunctionStats struct {
	Invocations  int           // invocations run (cold ones included)
	ColdStarts   int           // invocations that created an environment
	Throttles    int           // invocations refused
	Environments int           // environments created (Warm's included)
	Recycled     int           // environments reclaimed after IdleTimeout idle
	PeakLive     int           // most environments alive (busy or idle) at once
	Peak         int           // most invocations running at once
	Busy         time.Duration // Σ invocation durations (cold starts included), at 1×
	MemoryMB     int           // the function's memory setting
}

// Lambda is the concurrency model of a template's functions. Safe for concurrent use.
type Lambda struct {
	cfg        LambdaConfig
	slow       atomic.Uint64 // the clock scale in force (float64 bits): LambdaConfig.Slowdown until SetSlowdown
	mu         sync.Mutex
	reserved   map[string]int // function → reserved concurrency
	unreserved int            // the account's concurrency less all reservations
	shared     int            // running invocations of unreserved functions
	fns        map[string]*function
	throttled  map[string]int       // "Lambda <function> <reason>" → refusals
	first      map[string]time.Time // when each of those first refused
}

// SetSlowdown changes the clock scale from now on (below 1: 1): cold starts, the idle
// timeout, the scaling rate and the busy time counted follow it, while the
// environments alive stay. A rehearsal runs what comes after its sale at 1× this way.
func (l *Lambda) SetSlowdown(s float64) { l.slow.Store(math.Float64bits(max(s, 1))) }

// slowdown is the clock scale in force.
func (l *Lambda) slowdown() float64 { return math.Float64frombits(l.slow.Load()) }

type function struct {
	name    string
	onLive  func(function string, live int, at time.Time) // LambdaConfig.OnLive
	now     func() time.Time
	running int            // invocations running
	idle    []*environment // environments free, the one freed last at the end
	live    int            // environments alive, busy or idle
	swept   time.Time      // when idle was last swept of environments past IdleTimeout
	nextID  int
	scaling bucket
	stats   FunctionStats
}

// environment is one execution environment: its handler instance, built at its first
// invocation, and when it was last freed (real time).
type environment struct {
	id          int
	handler     lambda.Handler
	freed       time.Time
	provisioned bool // from Warm: never reclaimed
}

// setLive sets how many environments of f are alive and tells OnLive.
func (f *function) setLive(n int) {
	f.live = n
	if f.onLive != nil {
		f.onLive(f.name, n, f.now())
	}
}

// add counts a new environment of f.
func (f *function) add(provisioned bool) *environment {
	f.nextID++
	f.setLive(f.live + 1)
	f.stats.Environments++
	f.stats.PeakLive = max(f.stats.PeakLive, f.live)
	return &environment{id: f.nextID, provisioned: provisioned}
}

// sweep reclaims the idle environments freed before cutoff, at most once per second
// of real time (a sweep walks every idle environment).
func (f *function) sweep(now, cutoff time.Time) {
	if now.Sub(f.swept) < time.Second {
		return
	}
	f.swept = now
	kept := f.idle[:0]
	for _, e := range f.idle {
		if !e.provisioned && e.freed.Before(cutoff) {
			f.setLive(f.live - 1)
			f.stats.Recycled++
			continue
		}
		kept = append(kept, e)
	}
	clear(f.idle[len(kept):]) // the reclaimed instances' memory goes
	f.idle = kept
}

// NewLambda returns the model of functions (sam.Template.Functions) under cfg. It
// returns an error when the reservations leave less than UnreservedMinimum of the
// account's concurrency, which Lambda refuses.
func NewLambda(functions []sam.Function, cfg LambdaConfig) (*Lambda, error) {
	if cfg.AccountConcurrency <= 0 {
		cfg.AccountConcurrency = AccountConcurrency
	}
	if cfg.ScalingEnvironments <= 0 {
		cfg.ScalingEnvironments = ScalingEnvironments
	}
	if cfg.ScalingPeriod <= 0 {
		cfg.ScalingPeriod = ScalingPeriod
	}
	if cfg.Slowdown < 1 {
		cfg.Slowdown = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	l := &Lambda{cfg: cfg, reserved: map[string]int{}, fns: map[string]*function{}, unreserved: cfg.AccountConcurrency, throttled: map[string]int{}, first: map[string]time.Time{}}
	l.slow.Store(math.Float64bits(cfg.Slowdown))
	for _, f := range functions {
		l.fns[f.Name] = l.newFunction(f.Name, f.MemorySize)
		if f.ReservedConcurrency != nil {
			l.reserved[f.Name] = *f.ReservedConcurrency
			l.unreserved -= *f.ReservedConcurrency
		}
	}
	if l.unreserved < UnreservedMinimum {
		return nil, fmt.Errorf("reserved concurrency leaves %d of the account's %d unreserved; Lambda keeps at least %d", l.unreserved, cfg.AccountConcurrency, UnreservedMinimum)
	}
	return l, nil
}

// newFunction is the model of a function the template declares with memoryMB.
func (l *Lambda) newFunction(name string, memoryMB int) *function {
	return &function{name: name, onLive: l.cfg.OnLive, now: l.cfg.Now, stats: FunctionStats{MemoryMB: memoryMB}}
}

// Warm gives function name n execution environments before any invocation, as
// provisioned concurrency or a warm-up before a sale would: they start idle and take
// nothing from the scaling rate.
func (l *Lambda) Warm(name string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.fns[name]
	if f == nil {
		f = l.newFunction(name, 0)
		l.fns[name] = f
	}
	for range n {
		f.idle = append(f.idle, f.add(true))
	}
}

// Unreserved returns the concurrency the functions without a reservation share.
func (l *Lambda) Unreserved() int { return l.unreserved }

// acquire starts an invocation of name: on the idle environment freed last, or on a
// new one (cold) when the scaling rate allows; refused when the function's or the
// account's concurrency is used up or no environment may be created. Idle
// environments past IdleTimeout are reclaimed first.
func (l *Lambda) acquire(name string) (env *environment, cold bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.fns[name]
	if f == nil {
		f = l.newFunction(name, 0)
		l.fns[name] = f
	}
	refuse := func(reason string) (*environment, bool, error) {
		f.stats.Throttles++
		key := "Lambda " + name + " " + reason
		l.throttled[key]++
		if _, ok := l.first[key]; !ok {
			l.first[key] = l.cfg.Now()
		}
		return nil, false, &TooManyRequests{Function: name, Reason: reason}
	}
	if r, ok := l.reserved[name]; ok {
		if f.running >= r {
			return refuse("ReservedFunctionConcurrentInvocationLimitExceeded")
		}
	} else if l.shared >= l.unreserved {
		return refuse("ConcurrentInvocationLimitExceeded")
	}
	now := l.cfg.Now()
	if l.cfg.IdleTimeout > 0 {
		f.sweep(now, now.Add(-time.Duration(float64(l.cfg.IdleTimeout)*l.slowdown())))
	}
	if len(f.idle) == 0 {
		rate := float64(l.cfg.ScalingEnvironments) / l.cfg.ScalingPeriod.Seconds() / l.slowdown()
		if !f.scaling.take(now, rate, float64(l.cfg.ScalingEnvironments)) {
			return refuse("FunctionScalingRateExceeded")
		}
		f.idle = append(f.idle, f.add(false))
		cold = true
	}
	env = f.idle[len(f.idle)-1]
	f.idle[len(f.idle)-1] = nil
	f.idle = f.idle[:len(f.idle)-1]
	f.running++
	if _, ok := l.reserved[name]; !ok {
		l.shared++
	}
	f.stats.Invocations++
	f.stats.Peak = max(f.stats.Peak, f.running)
	if cold {
		f.stats.ColdStarts++
	}
	return env, cold, nil
}

// release ends an invocation of name on env that ran for d (real time); env is idle
// again unless broken (its handler could not be built: Lambda discards an environment
// whose initialisation failed).
func (l *Lambda) release(name string, env *environment, broken bool, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.fns[name]
	f.running--
	if broken {
		f.setLive(f.live - 1)
	} else {
		env.freed = l.cfg.Now()
		f.idle = append(f.idle, env)
	}
	if _, ok := l.reserved[name]; !ok {
		l.shared--
	}
	f.stats.Busy += time.Duration(float64(d) / l.slowdown())
}

// Invoke runs one invocation of function name with h (payload in, result out) under
// the quotas: refused with *TooManyRequests, else run after a cold start when it gets
// a new environment. Every environment runs h itself (see WrapEnvironments for an
// instance per environment).
func (l *Lambda) Invoke(ctx context.Context, name string, h lambda.Handler, payload []byte) ([]byte, error) {
	return l.invoke(ctx, name, h, nil, payload)
}

// invoke runs one invocation of name: with shared when not nil, else on the handler
// instance of its environment, which build makes at the environment's first
// invocation. An error of build is the invocation's, and the environment is
// discarded.
func (l *Lambda) invoke(ctx context.Context, name string, shared lambda.Handler, build func() (lambda.Handler, error), payload []byte) (out []byte, err error) {
	env, cold, err := l.acquire(name)
	if err != nil {
		return nil, err
	}
	start, broken := time.Now(), false
	defer func() { l.release(name, env, broken, time.Since(start)) }()
	if cold && l.cfg.ColdStart > 0 {
		if err := clock.Sleep(ctx, time.Duration(float64(l.cfg.ColdStart)*l.slowdown())); err != nil {
			return nil, err
		}
	}
	if shared != nil {
		return shared.Invoke(ctx, payload)
	}
	if env.handler == nil { // only this invocation holds env
		if env.handler, err = build(); err != nil {
			broken = true
			return nil, fmt.Errorf("%s: initialising an environment: %w", name, err)
		}
	}
	return env.handler.Invoke(ctx, payload)
}

// Wrap returns h under the quotas as function name (for local.StackConfig.WrapFunction),
// every environment running h itself.
func (l *Lambda) Wrap(name string, h lambda.Handler) lambda.Handler {
	return invoker{l: l, name: name, shared: h}
}

// WrapEnvironments returns function name under the quotas with a handler instance
// per execution environment: build makes one (as the function's main does at its
// init) at an environment's first invocation, and the environment keeps it until it
// is reclaimed; a deployed environment's caches are its own, and so are these.
func (l *Lambda) WrapEnvironments(name string, build func() (lambda.Handler, error)) lambda.Handler {
	return invoker{l: l, name: name, build: build}
}

type invoker struct {
	l      *Lambda
	name   string
	shared lambda.Handler
	build  func() (lambda.Handler, error)
}

func (i invoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return i.l.invoke(ctx, i.name, i.shared, i.build, payload)
}

// Stats returns what Lambda did for each function, by logical id.
func (l *Lambda) Stats() map[string]FunctionStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]FunctionStats, len(l.fns))
	for name, f := range l.fns {
		out[name] = f.stats
	}
	return out
}

// FirstThrottled returns when each limit of Throttled first refused an invocation.
func (l *Lambda) FirstThrottled() map[string]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.first)
}

// Throttled returns the refused invocations by limit name: "Lambda <function>
// <reason>".
func (l *Lambda) Throttled() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.throttled)
}
