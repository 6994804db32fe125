// Package rehearse plays one whole flash sale through stockguard's real handlers,
// store and SDK clients against models of every AWS limit on its path, on a slowed
// clock, and checks it: the whole-sale rehearsal (tools/cmd/rehearse).
//
// The stack is the local one (tools/internal/local: the embedded DynamoDB and SQS
// servers, every function wired from template.yaml, the API's gateway, the stand-in
// WeChat Pay), reached in process. In front of DynamoDB sits tools/internal/ddblimits
// (per-item and per-index-partition throughput, table quotas, transaction conflicts,
// round trips), in front of the functions tools/internal/quotas (API Gateway's account
// and route throttles, Lambda's concurrency, scaling rate and cold starts, each
// modeled execution environment running a handler instance of its own, with its own
// caches and hints, as a deployed one does), and every SQS call takes a round trip.
// With Config.CloudFront, buyers read the page through a model of the stack's
// CloudFront distribution (edge). All of them run Slowdown times slower than the real
// services, so that two cores can play a sale of tens of thousands of requests per
// second; every rate and latency is reported at 1×.
//
// Buyers are not goroutines: each is a few bytes of state and its next step is an
// event in a time-ordered queue; a goroutine exists only for a request in flight. A
// buyer opens the SKU's page (GET /skus/{skuId}) PageViews times, taps buy (POST
// /orders with an Idempotency-Key) unless the page showed the SKU sold out, retries
// 429, 500 and 503 answers, and with an order pays (POST /orders/{orderId}/pay, then
// pays at the stand-in WeChat Pay, whose notification reaches payCallback through
// the gateway), cancels, pays late (after the order was released) or lets it expire.
// The close-order queue is drained by pollers that scale out as Lambda's SQS event
// source does (5 batches at once, 300 more a minute, up to its maximum concurrency), the sweep and reconcile run on their template schedules, and after
// the last order's expiry a final sweep and reconcile run.
//
// The checks: nothing oversold (no PAID and PENDING units beyond the stock, no shard
// below zero), no false STOCK_OUT (booktest.FalseStockOuts, with the ledger's
// reservations and the releases' invocations as evidence), every 201 backed by its
// order, the books balanced (booktest.Problems) and the final reconcile clean.
package rehearse

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/quotas"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// sale is one running rehearsal: the stack, the models and what they record.
type sale struct {
	cfg      Config
	slow     float64
	stack    *local.Stack
	model    *ddblimits.Model
	gateway  *quotas.Gateway
	lambda   *quotas.Lambda
	routes   []sam.Route
	api      http.Handler // the API behind API Gateway's throttles
	inner    http.Handler // the API without them (for requests already admitted)
	start    time.Time    // real time of model time 0
	skuIDs   []string
	shards   []int
	sqsCalls atomic.Int64

	// meters by what the requests were for
	meters map[string]*ddblimits.Meter
	// function invocations: meters, and closeOrder's and payCallback's windows
	// (evidence for the false STOCK_OUT check)
	fnMeters   map[string]*ddblimits.Meter
	invMu      sync.Mutex
	invWindows []window // closeOrder and payCallback invocations, real time
	// edge is CloudFront in front of the page (Config.CloudFront), nil without it
	edge *edge
	// live is, per function, the most environments alive in each timeline bucket
	// (-1: no change in that bucket)
	liveMu sync.Mutex
	live   map[string][]int

	rec *recorder

	// afterSale is the real time (Unix ns) from which the DynamoDB model runs at 1×
	// (ddblimits.Model.SetSlowdown): the last sweep and reconcile. 0 until then.
	afterSale atomic.Int64
}

// window is when something ran, real time.
type window struct{ start, end time.Time }

// at is real time t of the model's clock (t since the sale's start at 1×).
func (s *sale) at(t time.Duration) time.Time {
	return s.start.Add(time.Duration(float64(t) * s.slow))
}

// modelTime is real time r on the model's clock: slowed until afterSale, 1× from then.
func (s *sale) modelTime(r time.Time) time.Duration {
	if a := s.afterSale.Load(); a != 0 && r.UnixNano() > a {
		fast := time.Unix(0, a)
		return s.modelTime(fast) + r.Sub(fast)
	}
	return time.Duration(float64(r.Sub(s.start)) / s.slow)
}

// Run plays the sale cfg describes and returns its report. The error is for a sale
// that could not be set up or checked, not for a failed check (the report says).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	wallStart, cpuStart := time.Now(), cpuTime()
	s, err := setUp(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.stack.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var background sync.WaitGroup
	defer background.Wait()
	defer cancel()
	if err := s.poll(ctx, &background); err != nil {
		return nil, err
	}
	s.schedule(ctx, &background)
	e := newEngine(s)
	lastOrder := e.run(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every abandoned order expires PaymentTimeout after it was placed; its close
	// message is delivered then (SQS delays are whole seconds of real time, and a
	// poller waits up to a second). Then a last sweep, and reconcile, at 1× (DynamoDB,
	// SQS, WeChat Pay's round trip, Lambda's cold starts and scaling): on the sale's
	// clock each round trip of a release takes the slowdown times longer in wall time
	// (at -slowdown 150 a sweep of a full-size sale took hours), and the units they
	// cost are metered and counted all the same.
	if err := clock.Sleep(ctx, time.Until(s.at(lastOrder+cfg.PaymentTimeout))+3*time.Second); err != nil {
		return nil, err
	}
	s.atOneX()
	sweep, err := s.finalSweep(ctx)
	if err != nil {
		return nil, err
	}
	if err := clock.Sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	out, err := s.invokeScheduled(ctx, "ReconcileFunction", "reconcile")
	if err != nil {
		return nil, fmt.Errorf("final reconcile: %w", err)
	}
	end := time.Now()
	cancel()
	background.Wait()
	s.model.Bypass(true)
	r, err := s.report(context.WithoutCancel(ctx), e, out, end)
	if err != nil {
		return nil, err
	}
	r.FinalSweep = json.RawMessage(sweep)
	r.WallSeconds, r.CPUSeconds = time.Since(wallStart).Seconds(), (cpuTime() - cpuStart).Seconds()
	return r, nil
}

// atOneX runs every model at 1× from now on (afterSale): DynamoDB, Lambda and the
// stack's delays (WeChat Pay's round trip; SQS's through real).
func (s *sale) atOneX() {
	s.afterSale.Store(time.Now().UnixNano())
	s.model.SetSlowdown(1)
	s.lambda.SetSlowdown(1)
	s.stack.SetSlowdown(1)
}

// finalSweep sweeps until a sweep releases every order due (as the schedule would go
// on sweeping every minute: past a limit, some releases fail and wait for the next
// sweep), 20 sweeps a second of real time apart at most, and returns the last
// sweep's result.
func (s *sale) finalSweep(ctx context.Context) ([]byte, error) {
	for round := 1; ; round++ {
		out, err := s.invokeScheduled(ctx, closeOrderFunction, "sweep")
		if err != nil {
			return nil, fmt.Errorf("final sweep: %w", err)
		}
		var res struct {
			Failed    int
			Truncated bool
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("final sweep: %w", err)
		}
		if res.Failed == 0 && !res.Truncated || round == 20 {
			return out, nil
		}
		if err := clock.Sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// real is model duration d in real time: d once the sale is over (afterSale).
func (s *sale) real(d time.Duration) time.Duration {
	if s.afterSale.Load() != 0 {
		return d
	}
	return time.Duration(float64(d) * s.slow)
}

// setUp starts the stack with the models in front of it and creates the SKUs.
func setUp(ctx context.Context, cfg Config) (*sale, error) {
	params := stageParameters(cfg)
	tpl, err := sam.LoadWithParameters(cfg.Template, params)
	if err != nil {
		return nil, err
	}
	if err := checkReserved(cfg.Reserved, tpl); err != nil {
		return nil, err
	}
	routes, err := tpl.Routes()
	if err != nil {
		return nil, err
	}
	functions, err := tpl.Functions()
	if err != nil {
		return nil, err
	}
	tables, err := tpl.Tables()
	if err != nil {
		return nil, err
	}
	s := &sale{cfg: cfg, routes: routes, meters: map[string]*ddblimits.Meter{}, fnMeters: map[string]*ddblimits.Meter{}}
	s.slow = cfg.Slowdown
	if s.slow == 0 {
		s.slow = max(cfg.MinSlowdown, admittedPeak(cfg, routes)/cfg.RealRate)
	}
	s.newModel(tables)
	if cfg.CloudFront {
		s.edge = newEdge(s.slow, time.Now)
	}
	if err := s.newQuotas(functions); err != nil {
		return nil, err
	}
	if err := s.startStack(ctx, params); err != nil {
		return nil, err
	}
	return s, nil
}

// checkProvisioned refuses warm environments Lambda would not provision
// ("Configuring provisioned concurrency for a function"): closeOrder's (-warm-close)
// or createOrder's (-warm) above the function's reserved concurrency, and, for a
// function without one, above the account's unreserved concurrency less the 100
// Lambda keeps unreserved. Each error names the flag that would allow it.
func checkProvisioned(cfg Config, functions []sam.Function, unreserved int) error {
	for _, w := range []struct {
		fn, flag string
		n        int
	}{{closeOrderFunction, "-warm-close", cfg.WarmClose}, {createOrderFunction, "-warm", cfg.Warm}} {
		i := slices.IndexFunc(functions, func(f sam.Function) bool { return f.Name == w.fn })
		if i < 0 {
			continue
		}
		if r := functions[i].ReservedConcurrency; r != nil {
			if w.n > *r {
				return fmt.Errorf("%s %d: above %s's reserved concurrency %d, and Lambda provisions no more than a function reserves (\"Configuring provisioned concurrency for a function\"); raise it with -reserved %s=%d",
					w.flag, w.n, w.fn, *r, w.fn, w.n)
			}
			continue
		}
		if most := unreserved - quotas.UnreservedMinimum; w.n > most {
			return fmt.Errorf("%s %d: above the %d Lambda provisions for a function without reserved concurrency (the account's %d unreserved less %d: \"Configuring provisioned concurrency for a function\"); raise -lambda-concurrency",
				w.flag, w.n, max(most, 0), unreserved, quotas.UnreservedMinimum)
		}
	}
	return nil
}

// checkReserved refuses a -reserved value (reserved: executions by function logical
// id) below the MinValue of the template parameter the function's reservation is set
// from (e.g. CloseOrderReserved, at least 20), which CloudFormation would refuse; the
// error names the parameter and its minimum.
func checkReserved(reserved map[string]int, tpl *sam.Template) error {
	params := tpl.Parameters()
	for _, name := range slices.Sorted(maps.Keys(reserved)) {
		param := tpl.ReservedParameter(name)
		if p, ok := params[param]; ok && p.MinValue != nil && float64(reserved[name]) < *p.MinValue {
			return fmt.Errorf("-reserved %s=%d: below %g, the MinValue of the template's %s (CloudFormation refuses less)",
				name, reserved[name], *p.MinValue, param)
		}
	}
	return nil
}

// stageParameters are the template parameters the sale overrides: the stage's
// route throttle (ApiThrottleRateLimit, ApiThrottleBurstLimit) when set.
func stageParameters(cfg Config) map[string]string {
	params := map[string]string{}
	if cfg.StageRate > 0 {
		params["ApiThrottleRateLimit"] = fmt.Sprint(cfg.StageRate)
	}
	if cfg.StageBurst > 0 {
		params["ApiThrottleBurstLimit"] = fmt.Sprint(cfg.StageBurst)
	}
	return params
}

// newModel sets up the DynamoDB model of the template's tables on the sale's clock,
// bypassed until the sale starts; its throttles are recorded once the sale runs.
func (s *sale) newModel(tables []*dynamodb.CreateTableInput) {
	mcfg := s.cfg.Model
	mcfg.Slowdown, mcfg.Keys, mcfg.Indexes = s.slow, ddblimits.KeysOf(tables), ddblimits.IndexesOf(tables)
	mcfg.OnThrottle = func(limit string, at time.Time) {
		s.rec.throttled(limit, s.modelTime(at)) // only once the sale runs: the model is bypassed before
	}
	s.model = ddblimits.New(mcfg)
	s.model.Bypass(true)
}

// newQuotas sets up the Lambda model of the template's functions (with the reserved
// concurrency Config.Reserved replaces, and Config.Warm createOrder and
// Config.WarmClose closeOrder environments warm), API Gateway's model of its routes
// and a meter per function. The error names a -reserved function the template lacks,
// or -warm-close above closeOrder's reserved concurrency (Lambda refuses provisioned
// concurrency above it: "Configuring provisioned concurrency for a function"), or is
// the Lambda model's.
func (s *sale) newQuotas(functions []sam.Function) error {
	cfg := s.cfg
	for name, n := range cfg.Reserved {
		i := slices.IndexFunc(functions, func(f sam.Function) bool { return f.Name == name })
		if i < 0 {
			return fmt.Errorf("-reserved: the template has no function %s", name)
		}
		functions[i].ReservedConcurrency = &n
	}
	lcfg := cfg.Lambda
	lcfg.Slowdown = s.slow
	lcfg.OnLive = s.noteLive
	var err error
	if s.lambda, err = quotas.NewLambda(functions, lcfg); err != nil {
		if len(cfg.Reserved) > 0 {
			return fmt.Errorf("-reserved: %w", err)
		}
		return err
	}
	if err := checkProvisioned(cfg, functions, s.lambda.Unreserved()); err != nil {
		return err
	}
	s.lambda.Warm(createOrderFunction, cfg.Warm)
	s.lambda.Warm(closeOrderFunction, cfg.WarmClose)
	gcfg := cfg.Gateway
	gcfg.Slowdown = s.slow
	s.gateway = quotas.NewGateway(s.routes, gcfg)
	for _, f := range functions {
		s.fnMeters[f.Name] = &ddblimits.Meter{}
	}
	return nil
}

// startStack starts the local stack (template parameters params) behind the models,
// creates the SKUs, puts API Gateway's model in front of the API and starts the
// sale's clock 100 ms from now, the DynamoDB model no longer bypassed. When the SKUs
// cannot be created it closes the stack.
func (s *sale) startStack(ctx context.Context, params map[string]string) error {
	cfg := s.cfg
	var err error
	s.stack, err = local.Start(ctx, local.StackConfig{
		Template: cfg.Template, Parameters: params, SQSAddr: "127.0.0.1:0", InProcess: true,
		Slowdown: s.slow, PaymentTimeout: s.real(cfg.PaymentTimeout), PayRoundTrip: cfg.WeChatPayRoundTrip,
		DynamoDBOptions: []func(*dynamodb.Options){s.model.ClientOptions},
		SQSWrap:         s.sqsWrap,
		WrapFunction:    s.wrapFunction,
	})
	if err != nil {
		return err
	}
	if err := s.seed(ctx); err != nil {
		s.stack.Close()
		return err
	}
	s.inner = s.stack.API
	s.api = s.gateway.Wrap(s.inner)
	s.stack.API = s.api // the stand-in WeChat Pay's notifications come through the throttles too
	s.rec = newRecorder(len(s.skuIDs))
	s.start = time.Now().Add(100 * time.Millisecond)
	s.model.Bypass(false)
	return nil
}

// admittedPeak is the most requests per second (1×) the front door admits at the
// spike: what buyers offer, capped by the account's throttle and the routes' own.
func admittedPeak(cfg Config, routes []sam.Route) float64 {
	offered := cfg.PeakBuyers() * float64(max(cfg.PageViews, 0)+1)
	account := cmp.Or(cfg.Gateway.Rate, quotas.AccountRequestsPerSecond)
	routeCap := 0.0
	for _, r := range routes {
		if r.Path == "/skus/{skuId}" && r.Method == http.MethodGet || r.Path == "/orders" && r.Method == http.MethodPost {
			if r.Throttle == nil || r.Throttle.Rate == 0 {
				routeCap = math.Inf(1)
			} else {
				routeCap += r.Throttle.Rate
			}
		}
	}
	return min(offered, account, routeCap)
}

// seed creates the SKUs through the merchant API, sized by the planner unless
// Config.Shards says how many shards.
func (s *sale) seed(ctx context.Context) error {
	var entries []map[string]any
	shards := s.cfg.Shards
	if shards == 0 {
		shards = inventory.ShardsForPeak(int(math.Ceil(s.cfg.PeakOrders())))
	}
	for i := range s.cfg.SKUs {
		id := fmt.Sprintf("sku-%03d", i)
		e := map[string]any{"skuId": id, "name": "rehearsal " + id, "price": 9900, "stock": s.cfg.Stock, "shards": shards}
		if s.cfg.LimitPerUser > 0 {
			e["limitPerUser"] = s.cfg.LimitPerUser
		}
		entries = append(entries, e)
		s.skuIDs, s.shards = append(s.skuIDs, id), append(s.shards, shards)
	}
	raw, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	return s.stack.Seed(ctx, bytes.NewReader(raw))
}

// sqsWrap gives every SQS call its round trip and counts it.
func (s *sale) sqsWrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		half := s.real(s.cfg.SQSRoundTrip) / 2
		if clock.Sleep(r.Context(), half) != nil {
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
			return
		}
		s.sqsCalls.Add(1)
		next.ServeHTTP(w, r)
		clock.Sleep(r.Context(), half)
	})
}

// wrapFunction puts Lambda's quotas in front of a function, with a handler instance
// of its own in each execution environment (local.Stack.Instance: its own caches and
// hints, as deployed), and meters its DynamoDB units; closeOrder's and payCallback's
// invocation windows are kept (a release or a payment is done by the time its
// invocation ended).
func (s *sale) wrapFunction(name string, h lambda.Handler) lambda.Handler {
	quota := s.lambda.WrapEnvironments(name, func() (lambda.Handler, error) {
		if s.stack == nil { // invoked while the stack starts: its own handler
			return h, nil
		}
		return s.stack.Instance(name)
	})
	return invokeFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		if m := s.fnMeters[name]; m != nil {
			ctx = ddblimits.WithMeter(ctx, m)
		}
		start := time.Now()
		out, err := quota.Invoke(ctx, payload)
		if name == closeOrderFunction || name == "PayCallbackFunction" {
			s.invMu.Lock()
			s.invWindows = append(s.invWindows, window{start, time.Now()})
			s.invMu.Unlock()
		}
		return out, err
	})
}

// noteLive keeps the most environments of function alive in the timeline's bucket of
// at (bucket 0 before the sale starts).
func (s *sale) noteLive(function string, live int, at time.Time) {
	b := 0
	if !s.start.IsZero() {
		b = max(int(s.modelTime(at)/bucket), 0)
	}
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if s.live == nil {
		s.live = map[string][]int{}
	}
	series := s.live[function]
	for len(series) <= b {
		series = append(series, -1)
	}
	series[b] = max(series[b], live)
	s.live[function] = series
}

// liveTimeline is noteLive's series, each bucket without a change carrying the one
// before it.
func (s *sale) liveTimeline() map[string][]int {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	out := map[string][]int{}
	for name, series := range s.live {
		filled, last := make([]int, len(series)), 0
		for i, n := range series {
			if n >= 0 {
				last = n
			}
			filled[i] = last
		}
		out[name] = filled
	}
	return out
}

type invokeFunc func(context.Context, []byte) ([]byte, error)

func (f invokeFunc) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return f(ctx, payload)
}

// poll drains every SQS event source of the template with pollers that scale out as
// Lambda's event source mapping does (pollScaled): from 5 batches at once, up to its
// maximum concurrency.
func (s *sale) poll(ctx context.Context, wg *sync.WaitGroup) error {
	functions, err := s.functions()
	if err != nil {
		return err
	}
	for _, f := range functions {
		for _, ev := range f.Events.SQS {
			url, ok := s.stack.Queues[ev.Queue]
			if !ev.Enabled || !ok {
				continue
			}
			cfg := local.PollerConfig{
				Client: s.stack.SQSClient(), QueueURL: url, Function: f.Name, Handler: s.stack.Handlers[f.Name],
				BatchSize: ev.BatchSize, ReportBatchItemFailures: slices.Contains(ev.FunctionResponseTypes, "ReportBatchItemFailures"),
				Logger: slog.New(slog.DiscardHandler),
			}
			s.pollScaled(ctx, wg, cfg, ev.MaximumConcurrency)
		}
	}
	return nil
}

// functions reads the template's functions.
func (s *sale) functions() ([]sam.Function, error) {
	tpl, err := sam.Load(s.cfg.Template)
	if err != nil {
		return nil, err
	}
	return tpl.Functions()
}

// schedule runs every rate schedule of the template on the model's clock: at its
// period, the first run at half the arrival window at the latest (so that a short
// sale sees it), until ctx is done.
func (s *sale) schedule(ctx context.Context, wg *sync.WaitGroup) {
	functions, _ := s.functions()
	for _, f := range functions {
		for _, ev := range f.Events.Schedule {
			period, err := local.ParseRate(ev.Expression)
			if err != nil || !ev.Enabled {
				continue
			}
			wg.Go(func() {
				next := min(period, s.cfg.Over/2)
				for {
					if clock.Sleep(ctx, time.Until(s.at(next))) != nil {
						return
					}
					s.invokeScheduled(ctx, f.Name, scheduleMeter(f.Name))
					next += period
				}
			})
		}
	}
}

// scheduleMeter names the meter of a function's scheduled runs.
func scheduleMeter(function string) string {
	switch function {
	case closeOrderFunction:
		return "sweep"
	case "ReconcileFunction":
		return "reconcile"
	}
	return "schedule " + function
}

// invokeScheduled invokes function as its schedule does, metered as meter, and
// returns its result. An invocation Lambda refuses (a reserved concurrency of 1 still
// taken by the previous run) is sent again a second later, up to 60 times, as
// EventBridge retries a throttled target ("Event retry policy and using dead-letter
// queues in Amazon EventBridge": throttling errors are retried, for up to 24 hours).
func (s *sale) invokeScheduled(ctx context.Context, function, meter string) ([]byte, error) {
	ctx = ddblimits.WithMeter(ctx, s.meter(meter))
	ev := local.ScheduledEvent(time.Now(), "arn:aws:events:"+local.Region+":"+local.AccountID+":rule/"+function)
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		out, err := s.stack.Handlers[function].Invoke(ctx, payload)
		var tooMany *quotas.TooManyRequests
		if !errors.As(err, &tooMany) || try == 60 {
			return out, err
		}
		if err := clock.Sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// meter returns the meter named name, made on first use.
var meterMu sync.Mutex

func (s *sale) meter(name string) *ddblimits.Meter {
	meterMu.Lock()
	defer meterMu.Unlock()
	m := s.meters[name]
	if m == nil {
		m = &ddblimits.Meter{}
		s.meters[name] = m
	}
	return m
}

// call sends one request to api in process and returns its status and body.
func (s *sale) call(ctx context.Context, api http.Handler, method, path, user, key, body string) (int, []byte) {
	status, out, _ := s.send(ctx, api, method, path, user, key, body)
	return status, out
}

// send is call that also returns the answer's headers.
func (s *sale) send(ctx context.Context, api http.Handler, method, path, user, key, body string) (int, []byte, http.Header) {
	req := newRequest(ctx, method, path, body)
	if user != "" {
		req.Header.Set("X-User-Id", user)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), rec.Header()
}

// newRequest is a request to the API in process, with a JSON body unless body is "".
func newRequest(ctx context.Context, method, path, body string) *http.Request {
	if body == "" {
		return httptest.NewRequestWithContext(ctx, method, path, nil)
	}
	req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// stageThrottle is the throttle of POST /orders: the stage's default route throttle
// unless the route sets its own.
func (s *sale) stageThrottle() *sam.Throttle {
	for _, r := range s.routes {
		if r.Method == http.MethodPost && r.Path == "/orders" {
			return r.Throttle
		}
	}
	return nil
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
