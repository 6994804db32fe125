// Command local runs the whole stockguard stack in one process, with no AWS account
// and no Docker: an embedded DynamoDB API (minidyn) on 127.0.0.1:8000, an embedded SQS
// and SNS API (goaws) on 127.0.0.1:9324, stand-ins for the WeChat Pay merchant API
// (127.0.0.1:9401) and WeChat login's jscode2session (127.0.0.1:9402), the tables,
// queues and topics of template.yaml, and the HTTP API on 127.0.0.1:3000 serving the
// same handlers the Lambda functions run, fed the same API Gateway payload format 2.0
// events. It plays the template's event sources too: the close-order queue, the
// schedules and the alerts topic.
//
//	go run ./cmd/local -seed examples/seed.json
//	go run ./cmd/local -h     # what it starts, every flag with an example, the local-only conveniences
//
// It logs one readable line per request and per lifecycle event (released, paid,
// reconcile) to standard output; -log-format json writes the functions' complete
// JSON records instead, as they appear in CloudWatch Logs.
//
// Callers sign in with POST /auth/wechat (code test-<name> → openid o-<name>, once per
// code, at the jscode2session stand-in) and send the token as Authorization: Bearer,
// checked as API Gateway's JWT authorizer checks it (RS256 only, the key set fetched
// over HTTP from the issuer's discovery document and cached two hours on the stack's
// clock; the issuer is the API served on a loopback port of its own, logged as
// "issuer"). For requests sent from this machine there are
// local-only conveniences: the X-User-Id request header, copied into the sub claim;
// the merchant API's /admin/ routes without a SigV4 signature (the operator named by
// X-Operator-Id, local-operator without it); POST /_local/pay/{orderId} (the buyer
// pays at the WeChat Pay stand-in); POST /_local/invoke/{function} (a scheduled
// function now); GET /openapi.yaml (the contract). -seed sends each SKU of the file
// through POST /admin/skus.
//
// Exposure: every listen address must be a loopback one unless -expose is given.
// With -expose, a request that reaches the API from another machine gets only what
// the deployed API serves (local.Stack.ExposedAPI: a token to buy, no X-User-Id, no
// /_local/ routes or /openapi.yaml, 403 on /admin/), and the DynamoDB, SQS and
// stand-in listeners, which check no credentials, serve anyone who reaches them.
//
// Alerts: reconcile publishes its alerts to the alerts topic of the embedded SNS API
// (goaws, on the SQS port), and the alert function posts them to the chat bots given
// with -alert-webhook KIND=URL (repeatable; KIND wecom, dingtalk, feishu or slack;
// KIND=URL#SECRET for a DingTalk or Feishu bot that signs), at most once per
// -alert-quiet-period per alert and bot.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stockguard/stockguard/internal/buildinfo"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/local/staffidp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses of run.
const (
	exitOK      = 0 // stopped by a signal (or -h)
	exitStopped = 1 // the stack failed to start or stopped with an error
	exitUsage   = 2 // the command line is wrong
)

// options is what the command line asks for.
type options struct {
	cfg       local.StackConfig
	seed      string
	staff     string // -staff: the staff accounts' file
	staffSet  bool   // -staff was given (a missing default file only turns sign-in off)
	addr      string
	expose    bool
	moto      bool // -aws moto: start a moto_server for the stack
	json      bool // -log-format json
	listeners []listener
}

// listener is one listen address flag, what the stack serves there, and what -expose
// makes reachable from other machines at a non-loopback address.
type listener struct {
	flag, what, exposes string
	addr                *string
}

// newFlags defines the command's flags on a new FlagSet (each usage ends with an
// example, "e.g. …", which -h shows) and returns the options they fill and the
// function that checks them once parsed.
func newFlags() (*flag.FlagSet, *options, func() error) {
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.Usage = func() {} // run prints the help
	o := &options{cfg: local.StackConfig{Parameters: map[string]string{}}}
	var dynamoAddr, sqsAddr, payAddr, loginAddr, wxapiAddr string
	fs.StringVar(&o.seed, "seed", "", "create the SKUs of this JSON seed file at start, each through POST /admin/skus: [{\"skuId\",\"name\",\"price\",\"stock\",\"limitPerUser\"?,\"shards\"?,\"delivery\"?}], e.g. -seed examples/seed.json")
	consoleFlags(fs, o)
	fs.DurationVar(&o.cfg.PaymentTimeout, "payment-timeout", 15*time.Minute, "how long an order stays PENDING before it is released, e.g. -payment-timeout 10s")
	fs.DurationVar(&o.cfg.RefundInterval, "refund-interval", time.Minute, "the least time the WeChat Pay stand-in keeps between two refunds of one payment (WeChat Pay's rule: a minute), e.g. -refund-interval 1s")
	refundWindow := fs.String("user-refund-window", "0", "how long after payment a buyer may refund (template parameter UserRefundWindow: seconds or a duration; 0: never), e.g. -user-refund-window 24h")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:3000", "HTTP API listen address (port 0: a free one), e.g. -addr 127.0.0.1:3001")
	fs.StringVar(&dynamoAddr, "dynamodb-addr", "127.0.0.1:8000", "DynamoDB API listen address, e.g. -dynamodb-addr 127.0.0.1:8001")
	fs.StringVar(&sqsAddr, "sqs-addr", "127.0.0.1:9324", "SQS and SNS API listen address, e.g. -sqs-addr 127.0.0.1:9325")
	fs.StringVar(&payAddr, "wechatpay-addr", "127.0.0.1:9401", "WeChat Pay stand-in (merchant API) listen address, e.g. -wechatpay-addr 127.0.0.1:0")
	fs.StringVar(&loginAddr, "wxlogin-addr", "127.0.0.1:9402", "jscode2session stand-in listen address, e.g. -wxlogin-addr 127.0.0.1:0")
	fs.StringVar(&wxapiAddr, "wxapi-addr", "127.0.0.1:9403", "WeChat server API stand-in (access token, shipping uploads, subscribe messages) listen address, e.g. -wxapi-addr 127.0.0.1:0")
	fs.BoolVar(&o.expose, "expose", false, "allow listen addresses that are not loopback ones, so that other machines (a phone on the LAN) reach the stack; see Exposure, e.g. -expose -addr 0.0.0.0:3000")
	fs.StringVar(&o.cfg.Template, "template", "template.yaml", "the AWS SAM template the stack is built from, e.g. -template ../stockguard/template.yaml")
	logFormat := fs.String("log-format", "text", "text (one readable line per event) or json (every record, as CloudWatch Logs gets them), e.g. -log-format json")
	quiet := alertFlags(fs, o)
	checkAWS := awsFlags(fs, o)
	o.listeners = []listener{
		{"-addr", "the HTTP API", "other machines get only what the deployed API serves: buying needs a token from POST /auth/wechat, X-User-Id is not read, the /_local/ routes and /openapi.yaml answer 404 and every /admin/ route 403 (requests sent from this machine to a loopback address keep the local conveniences)", &o.addr},
		{"-dynamodb-addr", "the DynamoDB API", "it checks no credentials: whoever reaches it reads and changes every table", &dynamoAddr},
		{"-sqs-addr", "the SQS and SNS API", "it checks no credentials: whoever reaches it reads, sends and deletes queue messages and publishes to the alerts topic", &sqsAddr},
		{"-wechatpay-addr", "the WeChat Pay stand-in", "it answers only requests signed with the local test merchant's key, made at start and kept in this process", &payAddr},
		{"-wxlogin-addr", "the jscode2session stand-in", "whoever knows the local AppSecret (it is in the source) can use up a test-<name> code there", &loginAddr},
		{"-wxapi-addr", "the WeChat server API stand-in", "whoever knows the local AppSecret (it is in the source) gets access tokens and uploads shipments or sends subscribe messages there", &wxapiAddr},
	}
	return fs, o, func() error {
		switch *logFormat {
		case "json":
			o.json = true
		case "text":
		default:
			return fmt.Errorf("-log-format must be text or json, got %q", *logFormat)
		}
		if err := checkAWS(); err != nil {
			return err
		}
		if err := checkDurations(o, *quiet); err != nil {
			return err
		}
		for _, l := range o.listeners {
			if *l.addr != "" && !o.expose && !local.LoopbackAddr(*l.addr) {
				return fmt.Errorf("%s %s is not a loopback address (127.0.0.1, ::1 or localhost): other machines could reach %s there. "+
					"Add -expose to allow that (go run ./cmd/local -h, Exposure, says what it exposes)", l.flag, *l.addr, l.what)
			}
		}
		o.cfg.DynamoDBAddr, o.cfg.SQSAddr, o.cfg.PayAddr, o.cfg.LoginAddr, o.cfg.WxAPIAddr = dynamoAddr, sqsAddr, payAddr, loginAddr, wxapiAddr
		o.cfg.Parameters["UserRefundWindow"] = *refundWindow
		o.cfg.Parameters["AlertQuietPeriodSeconds"] = strconv.Itoa(int(*quiet / time.Second))
		return nil
	}
}

// checkDurations checks the durations of the command line: quiet (-alert-quiet-period)
// whole seconds, at least 1 s; -payment-timeout and -refund-interval positive.
func checkDurations(o *options, quiet time.Duration) error {
	if quiet < time.Second || quiet%time.Second != 0 {
		return fmt.Errorf("-alert-quiet-period must be whole seconds, at least 1s, got %v", quiet)
	}
	for name, d := range map[string]time.Duration{"-payment-timeout": o.cfg.PaymentTimeout, "-refund-interval": o.cfg.RefundInterval} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive, got %v", name, d)
		}
	}
	return nil
}

// awsFlags defines -aws and -aws-endpoint, which choose what serves DynamoDB, SQS and
// SNS, and returns the function that checks them once parsed.
func awsFlags(fs *flag.FlagSet, o *options) func() error {
	impl := fs.String("aws", "embedded", "what serves DynamoDB, SQS and SNS: embedded (minidyn, goaws) or moto (a moto_server this command starts and stops: pip install \"moto[server]==5.2.1\"), e.g. -aws moto")
	fs.StringVar(&o.cfg.AWSEndpoint, "aws-endpoint", "", "serve DynamoDB, SQS and SNS from this AWS API endpoint instead, holding none of the stack's tables, queues or topics yet, in account 000000000000 (moto_server started with MOTO_ACCOUNT_ID=000000000000), e.g. -aws-endpoint http://127.0.0.1:5000")
	return func() error {
		switch {
		case *impl == "moto" && o.cfg.AWSEndpoint != "":
			return errors.New("-aws moto starts its own moto_server: give -aws moto or -aws-endpoint, not both")
		case *impl == "moto":
			o.moto = true
		case *impl != "embedded":
			return fmt.Errorf("-aws must be embedded or moto, got %q", *impl)
		}
		return nil
	}
}

// alertFlags defines the chat alerts' flags: -alert-webhook fills o, and the returned
// duration is -alert-quiet-period's.
func alertFlags(fs *flag.FlagSet, o *options) *time.Duration {
	fs.Func("alert-webhook", "post alerts to this chat bot: `KIND=URL` or KIND=URL#SECRET (KIND: wecom, dingtalk, feishu, slack; SECRET: a signing DingTalk or Feishu bot's); repeatable, e.g. -alert-webhook wecom=http://127.0.0.1:9500/cgi-bin/webhook/send?key=local", func(v string) error {
		w, err := teamchat.ParseFlag(v)
		o.cfg.AlertWebhooks = append(o.cfg.AlertWebhooks, w)
		return err
	})
	return fs.Duration("alert-quiet-period", time.Hour, "post the same alert to a chat bot at most once per this long, whole seconds (template parameter AlertQuietPeriodSeconds), e.g. -alert-quiet-period 10s")
}

// consoleFlags defines the merchant console's flags.
func consoleFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.staff, "staff", "examples/staff.json", "the merchant console's staff accounts (local-only passwords): [{\"username\",\"password\",\"groups\":[\"owner\"|\"operator\"|\"viewer\"]}], e.g. -staff examples/staff.json")
	fs.StringVar(&o.cfg.ConsoleDir, "console", "console/dist", "the built merchant console served at /console/ (cd console && npm ci && npm run build), e.g. -console console/dist")
}

// help is the text of -h before the flags.
const help = `usage: go run ./cmd/local [flags]

Runs the whole stockguard stack in one process, with no AWS account and no Docker:

  the HTTP API: the template's routes, the same handlers the Lambda functions run  -addr            127.0.0.1:3000
  an embedded DynamoDB API (minidyn) with the template's tables                     -dynamodb-addr   127.0.0.1:8000
  an embedded SQS and SNS API (goaws) with the template's queues and topics         -sqs-addr        127.0.0.1:9324
  a WeChat Pay stand-in (JSAPI order, query, close, refund; real signatures)        -wechatpay-addr  127.0.0.1:9401
  a WeChat login stand-in (jscode2session: code test-<name> → openid o-<name>)     -wxlogin-addr    127.0.0.1:9402
  a WeChat server API stand-in (stable_token, upload_shipping_info, subscribe send) -wxapi-addr      127.0.0.1:9403
  the merchant console at /console/ (-console), its staff signing in at the issuer  -staff          examples/staff.json

With -aws moto (or -aws-endpoint URL) a moto_server serves DynamoDB, SQS and SNS instead of
minidyn and goaws, behind the same two addresses.

It plays the template's event sources: closeOrder polls the close-order queue, the refund
function the refund queue, the wechat function the WeChat queue (shipping uploads,
subscribe messages), the schedules run (closeOrder's sweep every minute, reconcile
and the refund pass every 5 minutes), and the alert function gets the alerts topic. When
all is up it prints one "ready" line with every address, then one line per request and
event; Ctrl-C stops it (all data is in memory and lost).

Staff sign in to the merchant console (http://127.0.0.1:3000/console/) with an account of
the -staff file (the ready line names an owner's), on a login page of the local staff issuer
(<issuer>/_local/oidc, authorization code with PKCE); the console calls the merchant routes
at /console/api/admin/… with the access token, as deployed (no local shortcut there).

Sign in as the mini-program does: POST /auth/wechat {"code":"test-alice"} answers a token
for openid o-alice (each test code works once, as WeChat's codes do), sent as
Authorization: Bearer.

Local-only conveniences, for requests sent from this machine:
  X-User-Id: NAME                  be buyer NAME without a token
  /admin/ without SigV4            the merchant API unsigned; X-Operator-Id: NAME names the
                                   operator (local-operator without it); stockctl sends it
  POST /_local/pay/{orderId}       the buyer pays at the WeChat Pay stand-in
  POST /_local/invoke/{function}   run closeOrder's sweep, reconcile or the refund pass now
  GET /openapi.yaml                the contract as an OpenAPI 3.1 document

Exposure: every listen address must be a loopback one (127.0.0.1, ::1, localhost) unless
-expose is given. With -expose, at an address other machines reach:
`

// examples is the text of -h after the flags.
const examples = `
Examples:
  go run ./cmd/local -seed examples/seed.json
  go run ./cmd/local -seed examples/seed.json -user-refund-window 24h -payment-timeout 1m
  go run ./cmd/local -addr 127.0.0.1:3001 -dynamodb-addr 127.0.0.1:8001 -sqs-addr 127.0.0.1:9325 \
      -wechatpay-addr 127.0.0.1:0 -wxlogin-addr 127.0.0.1:0 -wxapi-addr 127.0.0.1:0   # a second stack beside the first
  go run ./cmd/local -seed examples/seed.json -expose -addr 0.0.0.0:3000   # a phone on the LAN buys with tokens
  go run ./cmd/local -seed examples/seed.json -aws moto   # DynamoDB, SQS and SNS from moto_server, behind the same addresses
`

// printHelp writes -h's text: what the command starts, the local-only conveniences,
// the exposure rule (what each listener exposes), every flag with its example.
func printHelp(w io.Writer, fs *flag.FlagSet, listeners []listener) {
	fmt.Fprint(w, help)
	for _, l := range listeners {
		fmt.Fprintf(w, "  %s, %s:\n", l.flag, l.what)
		line := "     "
		for word := range strings.FieldsSeq(l.exposes + ".") {
			if len(line)+1+len(word) > 90 {
				fmt.Fprintln(w, line)
				line = "     "
			}
			line += " " + word
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprint(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, examples)
}

// run parses args, starts the stack and serves until ctx ends; it returns the exit
// status. -h prints the help on stdout; a usage error goes to stderr with exit status 2.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, o, finish := newFlags()
	version := fs.Bool("version", false, "print this build's version (module version, commit, Go) and exit, e.g. -version")
	fs.SetOutput(stderr)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs, o.listeners)
		return exitOK
	}
	if err == nil && *version {
		fmt.Fprintln(stdout, buildinfo.String("local"))
		return exitOK
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err == nil {
		err = finish()
	}
	fs.Visit(func(f *flag.Flag) { o.staffSet = o.staffSet || f.Name == "staff" })
	if err != nil {
		fmt.Fprintf(stderr, "local: %v\n(go run ./cmd/local -h shows the usage)\n", err)
		return exitUsage
	}
	var handler slog.Handler = local.NewConsoleHandler(stdout)
	if o.json {
		handler = slog.NewJSONHandler(stdout, nil)
	}
	log := slog.New(handler)
	o.cfg.Logger = log
	if err := serve(ctx, log, o); err != nil {
		log.Error("local stack stopped", "error", err)
		return exitStopped
	}
	return exitOK
}

// serve starts the stack o describes, seeds it, serves the HTTP API on o.addr
// (local.Stack.ExposedAPI: the local conveniences only to requests sent from this
// machine) and plays the event sources until ctx ends.
func serve(ctx context.Context, log *slog.Logger, o *options) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := loadStaff(log, o); err != nil {
		return err
	}
	stack, stop, err := start(ctx, o)
	if err != nil {
		return err
	}
	defer stop()
	if o.seed != "" {
		f, err := os.Open(o.seed)
		if err != nil {
			return err
		}
		err = stack.Seed(ctx, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	srv := local.NewAPIServer(stack.ExposedAPI()) // API Gateway's timeouts and quotas

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ran := make(chan error, 1)
	go func() { ran <- stack.Run(ctx) }()
	for _, w := range o.cfg.AlertWebhooks {
		log.Info("alerts go to chat", "webhook", w.ID(), "quietPeriod", o.cfg.Parameters["AlertQuietPeriodSeconds"]+"s")
	}
	for _, l := range o.listeners {
		if !local.LoopbackAddr(*l.addr) && *l.addr != "" {
			log.Warn("exposed to other machines (-expose): " + l.what + " at " + *l.addr + " (" + l.flag + "); " + l.exposes)
		}
	}
	// The listener was bound before the stack started: connections queued meanwhile.
	logReady(log, ln.Addr().String(), stack, o)
	select {
	case err := <-served:
		return err
	case err := <-ran:
		if err != nil {
			return err
		}
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// start starts the stack o describes, with a moto_server of its own for -aws moto,
// and returns it with the function that stops both.
func start(ctx context.Context, o *options) (*local.Stack, func(), error) {
	var m *local.MotoServer
	if o.moto {
		var err error
		if m, err = local.StartMoto(ctx, "127.0.0.1:0"); err != nil {
			return nil, nil, err
		}
		o.cfg.AWSEndpoint = m.URL()
	}
	stack, err := local.Start(ctx, o.cfg)
	stop := func() {
		if stack != nil {
			stack.Close()
		}
		if m != nil {
			m.Close()
		}
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return stack, stop, nil
}

// logReady writes the ready line: every address, the settings, the console and an
// owner's sign-in.
func logReady(log *slog.Logger, addr string, stack *local.Stack, o *options) {
	log.Info("ready", "api", "http://"+addr, "dynamodb", stack.DynamoDB.URL(), "sqs", sqsURL(stack),
		"wechatpay", stack.PayServer.URL(), "wxlogin", stack.LoginServer.URL(), "wxapi", stack.WxAPIServer.URL(), "issuer", stack.Issuer(),
		"paymentTimeout", o.cfg.PaymentTimeout.String(), "seed", o.seed, "aws", cmp.Or(o.cfg.AWSEndpoint, "embedded"),
		"console", "http://"+addr+local.ConsolePath, "signIn", signInHint(o.cfg.Staff))
}

// loadStaff reads the staff accounts of -staff into o's stack configuration. The
// default file missing (the runner started outside the repository) only turns the
// console's sign-in off; a file given with -staff must be there and valid.
func loadStaff(log *slog.Logger, o *options) error {
	f, err := os.Open(o.staff)
	if errors.Is(err, os.ErrNotExist) && !o.staffSet {
		log.Info("the console's sign-in is off: no staff file " + o.staff + " (-staff)")
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	o.cfg.Staff, err = staffidp.LoadAccounts(f)
	if err != nil {
		return fmt.Errorf("-staff %s: %w", o.staff, err)
	}
	return nil
}

// signInHint is the ready line's staff sign-in: the first owner's username and
// local-only password, "" without staff.
func signInHint(staff []staffidp.Account) string {
	for _, a := range staff {
		if slices.Contains(a.Groups, "owner") {
			return a.Username + ":" + a.Password
		}
	}
	if len(staff) > 0 {
		return staff[0].Username + ":" + staff[0].Password
	}
	return ""
}

// sqsURL is the SQS API's URL, "" when -sqs-addr "" started none.
func sqsURL(stack *local.Stack) string {
	if stack.SQS == nil {
		return ""
	}
	return stack.SQS.URL()
}
