package local

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
	"github.com/stockguard/stockguard/internal/wxlogin/wxlogintest"
	"github.com/stockguard/stockguard/tools/internal/local/staffidp"
	"github.com/stockguard/stockguard/tools/internal/openapi"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// StackConfig configures Start. Zero values take the defaults noted.
type StackConfig struct {
	// Template is the path of template.yaml; tables, queues, routes and each
	// function's environment come from it.
	Template string
	// DynamoDBAddr is where the DynamoDB API listens; default "127.0.0.1:0" (a free port).
	DynamoDBAddr string
	// SQSAddr is where the SQS API listens; "" starts no SQS server (goaws keeps
	// global state, so only one may run per process).
	SQSAddr string
	// AWSEndpoint, when set, is an outside implementation of the AWS APIs
	// (MotoServer.URL(), a moto_server started by hand) that serves the stack's
	// DynamoDB, SQS and SNS instead of the embedded servers: the servers at
	// DynamoDBAddr and SQSAddr are then fronts that forward to it (see
	// DynamoDBOptions.Endpoint), and the tables, queues and topics are created
	// there. It must hold none of them yet: a stack's are named by their logical
	// ids, so two stacks cannot share one endpoint.
	AWSEndpoint string
	// PaymentTimeout, when positive, replaces the template's PAYMENT_TIMEOUT_SECONDS.
	PaymentTimeout time.Duration
	// Logger receives the functions' and the gateway's JSON logs; default: discarded.
	Logger *slog.Logger
	// DynamoDBWrap wraps the DynamoDB server's handler (tests inject faults with it).
	DynamoDBWrap Middleware
	// APIWrap, when set, wraps every handler of API that answers a request: the
	// gateway (so also the requests the stack sends it itself: the seed's POST
	// /admin/skus, the stand-in's notifications) and each local-only route. Tests check
	// the traffic against the OpenAPI document with it (openapitest.Checker.Wrap).
	APIWrap Middleware
	// DynamoDBOptions are applied to the stack's DynamoDB client after
	// dynamo.ClientOptions (tests count requests with them).
	DynamoDBOptions []func(*dynamodb.Options)
	// SQSWrap wraps the SQS server's handler, as DynamoDBWrap does DynamoDB's (load
	// tools count and delay the queue's requests with it).
	SQSWrap Middleware
	// WrapFunction, when set, wraps each function's handler by logical id once it is
	// built, before the gateway, the pollers and the schedules are given it: load
	// tools put a model of Lambda's concurrency in front of the functions with it. A
	// wrapper's error is the invocation's error (the gateway answers 500, a poller
	// leaves the batch on the queue).
	WrapFunction func(function string, h lambda.Handler) lambda.Handler
	// Slowdown s > 1 runs the functions on a clock s times slower, as a load tool's
	// model of AWS does (tools/internal/ddblimits): each invocation's deadline (the
	// template's Timeout) and the stores' catalog cache TTL last s times longer. The
	// payment timeout is PaymentTimeout's business.
	Slowdown float64
	// InProcess has the stack's DynamoDB and SQS clients call the embedded servers'
	// handlers in this process instead of over loopback TCP (the same requests and
	// answers, byte for byte): load tools that would otherwise spend much of their
	// CPU on sockets set it. The servers still listen for outside clients.
	InProcess bool
	// Now is every function's clock; default time.Now. Tests move time with it.
	Now func() time.Time
	// SchedulePeriod, when positive, replaces the period of every schedule's rate
	// expression in Run (tests sweep faster than once a minute).
	SchedulePeriod time.Duration
	// Reconcile, when set, adjusts reconcile's configuration after it is read from
	// the template (tests enable repair, set its window, shorten delays).
	Reconcile func(*reconcile.Config)
	// Refund, when set, adjusts the refund function's options after they are read
	// from the template (tests shorten the retry backoff).
	Refund func(*refunds.Options)
	// RefundInterval is the least time the WeChat Pay stand-in keeps between two
	// refunds of one payment (WeChat Pay's is a minute: paytest.RefundInterval, the
	// default); a shorter one lets local runs refund in parts quickly, and the refund
	// queue's backoff is then no longer than it.
	RefundInterval time.Duration
	// PayAddr and LoginAddr are where the WeChat Pay and jscode2session stand-ins
	// listen, WxAPIAddr the stand-in of WeChat's server API (wxapitest); default
	// "127.0.0.1:0" (a free port).
	PayAddr, LoginAddr, WxAPIAddr string
	// PayRoundTrip, when positive, is added to every call the functions make to the
	// WeChat Pay stand-in's merchant API (JSAPI 下单, query, close, refund), times
	// Slowdown: WeChat Pay's round trip from the functions' region, which the
	// stand-in on this machine does not take.
	PayRoundTrip time.Duration
	// WeChatBackoff, when positive, replaces how long failed WeChat queue work (a
	// shipping upload, a subscribe message) waits before its next delivery (tests
	// shorten it; deployed 30 s doubling).
	WeChatBackoff time.Duration
	// Issuer is the iss of the local login tokens, which the gateway's JWT authorizer
	// requires, and the URL whose discovery document and JWK set it fetches over HTTP,
	// as API Gateway does: an http URL on 127.0.0.1 that serves API. Empty (the
	// default): the stack serves API on a loopback port of its own for that, and
	// Issuer is its URL (Stack.Issuer). It is also the base of closeOrder's notify_url
	// unless the template sets NOTIFY_BASE_URL (one URL serving the API for both).
	Issuer string
	// Parameters override template parameters by name (cmd/local's
	// -user-refund-window sets UserRefundWindow); the merchant secret and the JWT
	// audience are always the local ones.
	Parameters map[string]string
	// Environment, when set, may change a function's environment variables (by
	// logical id) after they are read from the template and before the function's
	// configuration is parsed from them (tests check that bad settings are refused).
	Environment func(function string, env map[string]string)
	// AlertWebhooks are the chat bots the alert function posts to (deployed: the
	// ChatWebhooksSecretArn secret; cmd/local's -alert-webhook). Alerts reach it only
	// with an SQS server (SQSAddr), which also serves the alerts topic.
	AlertWebhooks []teamchat.Webhook
	// Staff are the staff accounts that may sign in to the merchant console at the
	// local staff issuer (Stack.StaffIssuer; cmd/local's -staff file); none: nobody can.
	Staff []staffidp.Account
	// ConsoleDir is the built console (console/dist) served at ConsolePath; "" or a
	// directory without index.html: that page says how to build it.
	ConsoleDir string
	// AsyncRetryDelay, when positive, replaces how long a failed asynchronous (SNS)
	// invocation waits before Lambda tries it again (deployed about a minute; tests
	// shorten it).
	AsyncRetryDelay time.Duration
}

// Stack is the whole of stockguard in one process: the embedded servers with the
// template's tables and queues, the functions wired as template.yaml wires them, and
// API, the HTTP API gateway in front of them.
type Stack struct {
	DynamoDB *DynamoDBServer   // the embedded DynamoDB API
	SQS      *SQSServer        // the embedded SQS API (and SNS API); nil when StackConfig.SQSAddr is ""
	DB       *dynamodb.Client  // a client of DynamoDB, built with dynamo.ClientOptions
	Queues   map[string]string // queue logical id → queue URL
	Topics   map[string]string // topic logical id → topic ARN; nil without an SQS server
	Tables   dynamo.Tables     // table names, from createOrder's environment
	Store    *dynamo.Store     // the store createOrder uses
	API      http.Handler      // the HTTP API (routes of template.yaml), the /_local/ routes and GET /openapi.yaml
	// Handlers are the functions by logical id, invoked as Lambda invokes them.
	Handlers map[string]lambda.Handler
	// Payments is the local stand-in for WeChat Pay: keys generated at Start, trusted by
	// payCallback. POST /_local/pay/{orderId} sends notifications signed with it.
	Payments *paytest.Platform
	// PayServer is the stand-in WeChat Pay merchant API and buyer (paytest.Server) that
	// closeOrder's merchant client calls; its notifications reach the notify route.
	PayServer *paytest.Server
	// LoginServer is the stand-in jscode2session: code test-<name> → openid o-<name>.
	LoginServer *wxlogintest.Server
	// WxAPIServer is the stand-in of WeChat's server API (access tokens, shipping
	// uploads, special orders, the order detail path, subscribe messages) that the
	// wechat function calls. Every payment taken through POST /_local/pay is added to
	// it (the payer's openid being the order's user id), and the configured subscribe
	// templates (LocalPayReminderTemplate, LocalRefundDoneTemplate,
	// LocalAftersaleTemplate and LocalWaitlistTemplate by default) with their keywords;
	// a buyer's acceptance in wx.requestSubscribeMessage is played by its Subscribe.
	WxAPIServer *wxapitest.Server
	// Signer is the in-memory key the local login tokens are signed with.
	Signer *idtoken.KeySigner

	merchant *paytest.Merchant

	wxClient   *wxapi.Client // the one client of WeChat's server API (the wechat function's)
	detailPath string        // the wechat function's ORDER_DETAIL_PATH, set at Start
	paidAdded  sync.Map      // order ids whose payment WxAPIServer holds

	alerts        *sns.Client   // the embedded SNS API; nil without an SQS server
	snsDeliveries []snsDelivery // the functions' SNS events, played by Run

	functions []sam.Function
	cfg       StackConfig
	// slow is the scale of the stack's delays in force (float64 bits; 0: StackConfig.Slowdown)
	slow     atomic.Uint64
	gateway  http.Handler
	issuer   *http.Server // serves API at StackConfig.Issuer when the stack chose it
	issuerLn net.Listener
}

// Start brings the stack up. Every AWS::Serverless::Function of the template is built
// by package wiring, as its main builds it; one wiring does not know is an error, so a
// new function cannot be silently missing locally. Call Close to stop it.
func Start(ctx context.Context, cfg StackConfig) (_ *Stack, err error) {
	cfg, tpl, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	s := &Stack{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if cfg.Issuer, err = s.listenIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	if s.DynamoDB, err = StartDynamoDB(ctx, cfg.DynamoDBAddr, DynamoDBOptions{Wrap: cfg.DynamoDBWrap, Endpoint: cfg.AWSEndpoint}); err != nil {
		return nil, err
	}
	s.cfg = cfg
	options := []func(*dynamodb.Options){dynamo.ClientOptions}
	if cfg.InProcess {
		options = append(options, func(o *dynamodb.Options) { o.HTTPClient = inProcess{s.DynamoDB.http.h.ServeHTTP} })
	}
	s.DB = NewDynamoDBClient(s.DynamoDB.URL(), append(options, cfg.DynamoDBOptions...)...)
	tables, err := tpl.Tables()
	if err != nil {
		return nil, err
	}
	if err := CreateTables(ctx, s.DB, tables); err != nil {
		return nil, err
	}
	if cfg.SQSAddr != "" {
		if err := s.startSQS(ctx, cfg.SQSAddr, tpl); err != nil {
			return nil, err
		}
	}
	if err := s.startWeChat(cfg); err != nil {
		return nil, err
	}
	if s.functions, err = tpl.Functions(); err != nil {
		return nil, err
	}
	if s.SQS != nil {
		if err := s.startSNS(ctx, tpl, s.functions); err != nil {
			return nil, err
		}
	}
	if s.Handlers, err = s.wire(cfg); err != nil {
		return nil, err
	}
	if err := s.serve(tpl, cfg); err != nil {
		return nil, err
	}
	if s.detailPath != "" {
		// Deployed, the wechat function sets it at each cold start; locally at start.
		if err := s.wxClient.UpdateOrderDetailPath(ctx, s.detailPath); err != nil {
			return nil, fmt.Errorf("set the order detail path: %w", err)
		}
	}
	return s, nil
}

// listenIssuer returns issuer, or when it is empty listens on a free loopback port for
// the issuer (see StackConfig.Issuer) and returns that listener's URL.
func (s *Stack) listenIssuer(issuer string) (string, error) {
	if issuer != "" {
		return issuer, nil
	}
	var err error
	if s.issuerLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return "", fmt.Errorf("listen for the issuer: %w", err)
	}
	return "http://" + s.issuerLn.Addr().String(), nil
}

// serveIssuer serves API on the issuer's listener, if the stack opened one.
func (s *Stack) serveIssuer() {
	if s.issuerLn != nil {
		s.issuer = NewAPIServer(s.API)
		go s.issuer.Serve(s.issuerLn)
	}
}

// Issuer is the iss of the local login tokens: StackConfig.Issuer, or the URL of the
// loopback listener the stack serves API on when that was empty.
func (s *Stack) Issuer() string { return s.cfg.Issuer }

// prepare fills cfg's defaults and loads its template with the local parameters:
// locally the merchant configuration is the local platform's, not a secret's, and
// tokens are for the local app.
func prepare(cfg StackConfig) (StackConfig, *sam.Template, error) {
	if cfg.DynamoDBAddr == "" {
		cfg.DynamoDBAddr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.PayAddr, cfg.LoginAddr = cmp.Or(cfg.PayAddr, "127.0.0.1:0"), cmp.Or(cfg.LoginAddr, "127.0.0.1:0")
	params := maps.Clone(cfg.Parameters)
	if params == nil {
		params = map[string]string{}
	}
	params["WechatPaySecretArn"], params["JwtAudience"] = LocalSecretARN, LocalAppID
	params["WechatAppSecretArn"] = LocalAppSecretARN
	params["ChatWebhooksSecretArn"] = LocalChatSecretARN
	for name, local := range map[string]string{"PayReminderTemplateId": LocalPayReminderTemplate, "RefundDoneTemplateId": LocalRefundDoneTemplate, "AftersaleTemplateId": LocalAftersaleTemplate, "WaitlistTemplateId": LocalWaitlistTemplate} {
		if _, set := params[name]; !set {
			params[name] = local
		}
	}
	tpl, err := loadTemplate(cfg.Template, params)
	return cfg, tpl, err
}

// templates holds the templates parsed so far, by content and parameters: parsing
// (goformation, intrinsic functions) is most of a stack's start, and a parsed
// sam.Template is only read afterwards, so stacks started from the same file with
// the same parameters (most tests start many) share one.
var templates sync.Map // key → *sam.Template

// loadTemplate is sam.LoadWithParameters, parsed once per content and parameters.
func loadTemplate(path string, params map[string]string) (*sam.Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load template %s: %w", path, err)
	}
	h := sha256.New()
	h.Write(data)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		fmt.Fprintf(h, "\x00%s=%s", k, params[k])
	}
	key := string(h.Sum(nil))
	if t, ok := templates.Load(key); ok {
		return t.(*sam.Template), nil
	}
	t, err := sam.LoadWithParameters(path, params)
	if err == nil {
		templates.Store(key, t)
	}
	return t, err
}

// serve builds API: the gateway over the template's routes, checking tokens with the
// JWT authorizer (see authorizer), the /_local/ routes and the OpenAPI document (GET
// /openapi.yaml); and serves it at the issuer's URL when the stack chose that.
func (s *Stack) serve(tpl *sam.Template, cfg StackConfig) error {
	routes, err := tpl.Routes()
	if err != nil {
		return err
	}
	var gwRoutes, consoleRoutes []Route
	for _, r := range routes {
		rt := Route{Method: r.Method, Path: r.Path, Function: r.Function, Public: r.Public, IAM: r.IAM}
		if r.API == ConsoleAPI {
			consoleRoutes = append(consoleRoutes, rt) // served at ConsoleAPIPath (serveConsole)
			continue
		}
		gwRoutes = append(gwRoutes, rt)
	}
	authorizer, err := s.authorizer(cfg, LocalAppID)
	if err != nil {
		return err
	}
	wrap := cfg.APIWrap
	if wrap == nil {
		wrap = func(h http.Handler) http.Handler { return h }
	}
	mux := http.NewServeMux()
	s.gateway = wrap(NewGateway(gwRoutes, s.Handlers, GatewayOptions{Logger: cfg.Logger, Authorizer: authorizer}))
	mux.Handle("/", s.gateway)
	mux.Handle("POST /_local/invoke/{function}", wrap(http.HandlerFunc(s.serveInvoke)))
	mux.Handle("POST /_local/pay/{orderId}", wrap(http.HandlerFunc(s.servePay)))
	mux.Handle("POST /_local/receipt/{orderId}", wrap(http.HandlerFunc(s.serveReceipt)))
	mux.Handle("POST /_local/riskrank/{openid}", wrap(http.HandlerFunc(s.serveRiskRank)))
	mux.Handle("GET "+openapi.Path, wrap(openapi.Handler()))
	if err := s.serveConsole(mux, consoleRoutes, wrap); err != nil {
		return err
	}
	// ServeMux would redirect an unclean path (an empty, . or .. segment) before any
	// route saw it; the gateway answers it 404, as API Gateway does. A head over the
	// quota is the gateway's 431 on every route, the local-only ones too.
	s.API = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cleanPath(r.URL.EscapedPath()) || requestHeadSize(r) > MaxRequestHead {
			s.gateway.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	s.serveIssuer()
	return nil
}

func (s *Stack) startSQS(ctx context.Context, addr string, tpl *sam.Template) error {
	var err error
	if s.SQS, err = StartSQS(ctx, addr, SQSOptions{Wrap: s.cfg.SQSWrap, Endpoint: s.cfg.AWSEndpoint}); err != nil {
		return err
	}
	queues, err := tpl.Queues()
	if err != nil {
		return err
	}
	qs := make([]Queue, len(queues))
	for i, q := range queues {
		qs[i] = Queue{Name: q.Name, Attributes: q.Attributes}
	}
	s.Queues, err = CreateQueues(ctx, s.SQSClient(), qs)
	return err
}

// wire builds each template function's handler from its template environment, the way
// its functions/<name>/main.go does from the deployed environment: the same
// configuration parsing (so a bad setting fails Start, naming the variable), the same
// handlers.
func (s *Stack) wire(cfg StackConfig) (map[string]lambda.Handler, error) {
	handlers := map[string]lambda.Handler{}
	for _, f := range s.functions {
		h, err := s.build(cfg, f, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		handlers[f.Name] = h
		if cfg.WrapFunction != nil {
			handlers[f.Name] = cfg.WrapFunction(f.Name, handlers[f.Name])
		}
	}
	return handlers, nil
}

// build builds function f's handler from its template environment (see wire); an
// instance is one more handler of a function already wired, which leaves the stack's
// own values (Store, Tables) as the first one set them.
func (s *Stack) build(cfg StackConfig, f sam.Function, instance bool) (lambda.Handler, error) {
	env := maps.Clone(f.Environment)
	if cfg.Environment != nil {
		cfg.Environment(f.Name, env)
	}
	h, err := s.wireFunction(cfg, f.Name, envvar.Map(env), cfg.Logger.With("function", f.Name), instance)
	if err != nil {
		return nil, err
	}
	return deadline{h, s.scaled(time.Duration(f.Timeout) * time.Second)}, nil
}

// Instance builds a new handler of function (a logical id) the way Start built the
// one in Handlers: the same environment, configuration and Build, so the instance has
// caches of its own (the store's catalog and cut epochs, the public page's answers,
// sell-out hints) while sharing the stack's clients. Load tools give each modeled
// execution environment one (quotas.Lambda.WrapEnvironments). It is not wrapped by
// StackConfig.WrapFunction. Safe for concurrent use once Start has returned.
func (s *Stack) Instance(function string) (lambda.Handler, error) {
	i := slices.IndexFunc(s.functions, func(f sam.Function) bool { return f.Name == function })
	if i < 0 {
		return nil, fmt.Errorf("the template has no function %s", function)
	}
	return s.build(s.cfg, s.functions[i], true)
}

// handler is a function's lambda.Handler that may be invoked concurrently, as the local
// gateway and pollers do. aws-lambda-go's handler returns the bytes of a pooled buffer
// that it has already released to its pool (lambda/handler.go, handlerFunc.Invoke):
// harmless in Lambda, where one container serves one request at a time, but a data race
// when one handler serves many requests at once. So each invocation borrows a handler
// instance of its own and copies the answer before giving the instance back.
type handler struct{ instances sync.Pool }

// newHandler wraps fn (a function lambda.NewHandler accepts).
func newHandler(fn any) *handler {
	h := &handler{}
	h.instances.New = func() any { return lambda.NewHandler(fn) }
	return h
}

// Invoke calls the function on a handler instance no other invocation is using.
func (h *handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	instance := h.instances.Get().(lambda.Handler)
	defer h.instances.Put(instance)
	out, err := instance.Invoke(ctx, payload)
	return bytes.Clone(out), err
}

// deadline gives each invocation of a function its template Timeout as a context
// deadline, as Lambda does, so code that watches its deadline (the sweep) runs locally
// as deployed.
type deadline struct {
	lambda.Handler
	timeout time.Duration
}

// Invoke calls the function with a context that ends after the timeout.
func (d deadline) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.Handler.Invoke(ctx, payload)
}

// SetSlowdown changes the scale of the delays the stack adds from now on (WeChat Pay's
// round trip, StackConfig.PayRoundTrip; below 1: 1). Function deadlines and cache
// lifetimes set when the functions were built stay. A rehearsal runs what comes after
// its sale at 1× this way.
func (s *Stack) SetSlowdown(f float64) { s.slow.Store(math.Float64bits(max(f, 1))) }

// slowdown is the scale of the stack's delays: StackConfig.Slowdown (at least 1) until
// SetSlowdown.
func (s *Stack) slowdown() float64 {
	if b := s.slow.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return max(s.cfg.Slowdown, 1)
}

// scaled is d on the stack's clock (StackConfig.Slowdown).
func (s *Stack) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * max(s.cfg.Slowdown, 1))
}

// storeOptions completes a store's options with the stack's clock (StackConfig.Now)
// and, on a slowed clock, a catalog TTL to match.
func (s *Stack) storeOptions(o dynamo.Options) dynamo.Options {
	o.Now = s.cfg.Now
	if s.cfg.Slowdown > 1 {
		o.CatalogTTL = s.scaled(dynamo.DefaultCatalogTTL)
	}
	return o
}

// functionName is the short name of a function (its directory under functions/):
// CloseOrderFunction → closeOrder.
func functionName(logicalID string) string {
	name := strings.TrimSuffix(logicalID, "Function")
	return strings.ToLower(name[:1]) + name[1:]
}

// Run plays the template's event sources until ctx is done: an SQS poller per SQS
// event (see Poll), a timer per rate schedule (see Every) invoking the function
// with a scheduled event, and, with an SQS server, a poller per SNS event handing
// the topic's messages to the function as SNS events (see NewSNSClient). It returns when ctx is done and every poller and timer has
// stopped, or at once with an error for a schedule that cannot run locally.
func (s *Stack) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, d := range s.snsDeliveries {
		wg.Go(func() { d.poll(ctx, s, s.Handlers[d.function]) })
	}
	for _, f := range s.functions {
		h := s.Handlers[f.Name]
		for _, ev := range f.Events.SQS {
			url, ok := s.Queues[ev.Queue]
			if s.SQS == nil || !ev.Enabled {
				continue
			}
			if !ok {
				return fmt.Errorf("%s event %s: no queue %s", f.Name, ev.Name, ev.Queue)
			}
			cfg := PollerConfig{
				Client: s.SQSClient(), QueueURL: url, Function: f.Name, Handler: h,
				BatchSize: ev.BatchSize, Logger: s.cfg.Logger,
				ReportBatchItemFailures: slices.Contains(ev.FunctionResponseTypes, "ReportBatchItemFailures"),
			}
			wg.Go(func() { Poll(ctx, cfg) })
		}
		for _, ev := range f.Events.Schedule {
			if !ev.Enabled {
				continue
			}
			period, err := ParseRate(ev.Expression)
			if errors.Is(err, ErrUnsupportedSchedule) {
				s.cfg.Logger.Warn("schedule does not run locally", "function", f.Name, "event", ev.Name, "error", err)
				continue
			}
			if err != nil {
				return fmt.Errorf("%s event %s: %w", f.Name, ev.Name, err)
			}
			if s.cfg.SchedulePeriod > 0 {
				period = s.cfg.SchedulePeriod
			}
			wg.Go(func() {
				Every(ctx, period, func(ctx context.Context) {
					if _, err := s.invokeScheduled(ctx, f.Name, ev); err != nil {
						s.cfg.Logger.Error("scheduled invocation failed", "function", f.Name, "event", ev.Name, "error", err)
					}
				})
			})
		}
	}
	<-ctx.Done()
	return nil
}

// invokeScheduled invokes a function as its schedule event ev does: with ev's Input
// when set, else with an EventBridge scheduled event. It returns the JSON result.
func (s *Stack) invokeScheduled(ctx context.Context, function string, ev sam.ScheduleEvent) ([]byte, error) {
	if ev.Input != "" {
		return invoke(ctx, s.Handlers[function], json.RawMessage(ev.Input))
	}
	return invoke(ctx, s.Handlers[function], ScheduledEvent(time.Now(), "arn:aws:events:"+Region+":"+AccountID+":rule/"+function+"-"+ev.Name))
}

// maxInvokeBodyBytes bounds the body of POST /_local/invoke/{function}, which reads
// none.
const maxInvokeBodyBytes = 1 << 10

// serveInvoke serves POST /_local/invoke/{function} (docs/contract.md, "Local-only routes"):
// it invokes the function named by its short name (closeOrder) as its first schedule
// event does and answers 200 with the function's JSON result, 404 for an unknown or
// unschedulable function, 500 when the invocation fails; a body over
// maxInvokeBodyBytes is 413 PAYLOAD_TOO_LARGE before anything runs.
func (s *Stack) serveInvoke(w http.ResponseWriter, r *http.Request) {
	if _, ok := localRequest(w, r, maxInvokeBodyBytes); !ok {
		return
	}
	name := r.PathValue("function")
	for _, f := range s.functions {
		if functionName(f.Name) != name || len(f.Events.Schedule) == 0 {
			continue
		}
		out, err := s.invokeScheduled(r.Context(), f.Name, f.Events.Schedule[0])
		if err != nil {
			s.cfg.Logger.Log(r.Context(), inventory.FailureLevel(r.Context(), err), "local invoke failed", "function", f.Name, "error", err)
			writeLocalJSON(w, http.StatusInternalServerError, []byte(`{"code":"INTERNAL","message":"the invocation failed; see the log"}`))
			return
		}
		writeLocalJSON(w, http.StatusOK, out)
		return
	}
	writeLocalJSON(w, http.StatusNotFound, []byte(`{"code":"NOT_FOUND","message":"no scheduled function of that name"}`))
}

// LocalMchID and LocalAppID are the merchant the local stack's WeChat Pay stand-in pays.
// LocalSecretARN is the template's WechatPaySecretArn locally: payCallback's
// configuration names it, but the local stack verifies with its own platform's keys
// and reads no secret.
const (
	LocalMchID     = "1900000001"
	LocalAppID     = "wx0000000000000001"
	LocalSecretARN = "arn:aws:secretsmanager:" + Region + ":" + AccountID + ":secret:stockguard-local-wechatpay"
	// LocalAppSecretARN is the template's WechatAppSecretArn locally: login, wechat
	// and createOrder are configured with it, but locally talk to the stand-ins with
	// LocalAppID and LocalAppSecret and read no secret.
	LocalAppSecretARN = "arn:aws:secretsmanager:" + Region + ":" + AccountID + ":secret:stockguard-local-app"
	// LocalChatSecretARN is the template's ChatWebhooksSecretArn locally: the alert
	// function posts to StackConfig.AlertWebhooks and reads no secret.
	LocalChatSecretARN = "arn:aws:secretsmanager:" + Region + ":" + AccountID + ":secret:stockguard-local-chat"
)

// maxPayBodyBytes bounds the optional body of POST /_local/pay/{orderId}, a small
// {"amount","state"} object.
const maxPayBodyBytes = 4 << 10

// servePay serves POST /_local/pay/{orderId} (docs/contract.md, "Local-only routes"): the
// buyer pays (body optional {"amount": fen, "state": "SUCCESS"}) at the WeChat Pay
// stand-in, which POSTs the signed, encrypted notification to the notify route; the
// answer is that route's status and body. An order with a JSAPI order at the stand-in
// (POST /orders/{orderId}/pay was called) is paid there, refused as WeChat Pay would
// (past time_expire, closed, already paid: 409 ORDER_NOT_PAYABLE). For an order given
// to WeChat Pay by no /pay, the stand-in first opens its JSAPI order as "JSAPI下单"
// would have (time_expire = the order's expiresAt) and takes the payment as made in
// time (paytest.Server.PayUnopened), so every local payment is one WeChat Pay knows:
// it can be queried, closed and refunded like one made after /pay.
func (s *Stack) servePay(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Amount *int64  `json:"amount"`
		State  *string `json:"state"`
	}
	body, ok := localRequest(w, r, maxPayBodyBytes, "orderId")
	if !ok || s.hungUp(w, r, "local pay") {
		return
	}
	r = r.WithContext(context.WithoutCancel(r.Context())) // see hungUp
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil && !errors.Is(err, io.EOF) || dec.More() ||
		in.Amount != nil && *in.Amount < 1 || in.State != nil && !wechatpay.TradeState(*in.State).Known() {
		writeLocalJSON(w, http.StatusBadRequest, []byte(`{"code":"INVALID_REQUEST","message":"body must be {\"amount\": fen (1 or more), \"state\": a WeChat Pay trade_state such as \"SUCCESS\"} or empty"}`))
		return
	}
	defer s.paidAtWeChat(r.Context(), r.PathValue("orderId"))
	var req *wechatpay.JSAPIRequest
	if _, ok := s.PayServer.Order(r.PathValue("orderId")); !ok {
		order, err := s.Store.Lookup(r.Context(), r.PathValue("orderId"))
		if errors.Is(err, inventory.ErrOrderNotFound) {
			writeLocalJSON(w, http.StatusNotFound, []byte(`{"code":"ORDER_NOT_FOUND","message":"no such order"}`))
			return
		}
		if err != nil {
			s.cfg.Logger.Error("local pay: read order", "error", err)
			writeLocalJSON(w, http.StatusInternalServerError, []byte(`{"code":"INTERNAL","message":"internal error"}`))
			return
		}
		req = localJSAPIRequest(order, s.cfg.Issuer)
		// Record the JSAPI order on the order as /pay would have, so that every release
		// asks the stand-in first whatever the payment's outcome (a wrong amount, a
		// state other than SUCCESS): a payment WeChat Pay holds is never released.
		defer s.notePrepay(r.Context(), order)
	}
	s.payAtStandIn(w, r, req, in.Amount, in.State)
}

// notePrepay stores on order the prepay_id of the JSAPI order the stand-in opened for
// it, while order is still PENDING (Store.SetPrepay; an order the payment settled
// needs none).
func (s *Stack) notePrepay(ctx context.Context, order *inventory.Order) {
	o, ok := s.PayServer.Order(order.ID)
	if !ok || o.PrepayID == "" {
		return
	}
	if err := s.Store.SetPrepay(ctx, order, o.PrepayID, s.Store.Now()); err != nil && !errors.Is(err, inventory.ErrNotPayable) {
		s.cfg.Logger.Warn("local pay: prepay not recorded", "orderId", order.ID, "error", err)
	}
}

// localJSAPIRequest is the "JSAPI下单" request POST /orders/{orderId}/pay would have sent
// for order: its id, amount and expiry, the buyer's local openid, the notify route
// under base (the local API's URL).
func localJSAPIRequest(order *inventory.Order, base string) *wechatpay.JSAPIRequest {
	req := &wechatpay.JSAPIRequest{
		AppID: LocalAppID, MchID: LocalMchID, Description: "stockguard order " + order.ID, OutTradeNo: order.ID,
		TimeExpire: order.ExpiresAt.Format(time.RFC3339), NotifyURL: base + "/payments/wechatpay/notify",
	}
	req.Amount.Total, req.Amount.Currency = order.Amount, order.Currency
	req.Payer.OpenID = "o-local-" + order.UserID
	return req
}

// localRequest reads a local-only route's request with the checks the gateway's
// routes get from their function (docs/contract.md, "Ids in a path" and "Errors"): the
// path parameters named by params by httpapi.CheckPath's rule of their kind, then the
// body, at most maxBytes of UTF-8 (httpapi.Body). A refusal is answered as the
// functions answer it (400 INVALID_REQUEST naming the parameter, not its value; 413
// PAYLOAD_TOO_LARGE saying the limit in bytes) before anything is read or changed,
// and ok is false.
func localRequest(w http.ResponseWriter, r *http.Request, maxBytes int, params ...string) (body []byte, ok bool) {
	values := make(map[string]string, len(params))
	for _, name := range params {
		values[name] = r.PathValue(name)
	}
	err := httpapi.CheckPath(values)
	if err == nil {
		// One byte past the limit is enough for httpapi.Body to refuse the body whole.
		body, err = io.ReadAll(io.LimitReader(r.Body, int64(maxBytes)+1))
		if err == nil {
			body, err = httpapi.Body(events.APIGatewayV2HTTPRequest{Body: string(body)}, maxBytes)
		} else {
			err = inventory.InvalidError("the body could not be read")
		}
	}
	if err != nil {
		resp := httpapi.Answer(err)
		writeLocalJSON(w, resp.StatusCode, []byte(resp.Body))
		return nil, false
	}
	return body, true
}

// hungUp reports whether the caller of a local-only route (named route in the log)
// hung up before it ran, warns of it and answers 400 INVALID_REQUEST (to nobody):
// nothing is done then, and it is the caller's doing, no error of the stack. A route that runs finishes without the
// caller's context (context.WithoutCancel): a payment the stand-in took is notified,
// a receipt it confirmed is pushed, as WeChat does whether the phone is still there
// or not.
func (s *Stack) hungUp(w http.ResponseWriter, r *http.Request, route string) bool {
	if r.Context().Err() == nil {
		return false
	}
	s.cfg.Logger.Warn(route+": the caller hung up", "path", r.URL.Path, "error", "the caller hung up before the route ran; nothing was done")
	writeLocalJSON(w, http.StatusBadRequest, []byte(`{"code":"INVALID_REQUEST","message":"the request was cancelled by its caller; nothing was done"}`))
	return true
}

func writeLocalJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// Close stops the servers.
func (s *Stack) Close() error {
	var errs []error
	switch {
	case s.issuer != nil:
		errs = append(errs, s.issuer.Close())
	case s.issuerLn != nil:
		errs = append(errs, s.issuerLn.Close())
	}
	if s.PayServer != nil {
		errs = append(errs, s.PayServer.Close())
	}
	if s.WxAPIServer != nil {
		errs = append(errs, s.WxAPIServer.Close())
	}
	if s.LoginServer != nil {
		errs = append(errs, s.LoginServer.Close())
	}
	if s.SQS != nil {
		errs = append(errs, s.SQS.Close())
	}
	if s.DynamoDB != nil {
		errs = append(errs, s.DynamoDB.Close())
	}
	return errors.Join(errs...)
}
