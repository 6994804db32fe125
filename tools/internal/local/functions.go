package local

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring/function/admin"
	admitterfn "github.com/stockguard/stockguard/internal/wiring/function/admitter"
	alertchatfn "github.com/stockguard/stockguard/internal/wiring/function/alertchat"
	"github.com/stockguard/stockguard/internal/wiring/function/closeorder"
	"github.com/stockguard/stockguard/internal/wiring/function/createorder"
	"github.com/stockguard/stockguard/internal/wiring/function/jwks"
	loginfn "github.com/stockguard/stockguard/internal/wiring/function/login"
	"github.com/stockguard/stockguard/internal/wiring/function/paycallback"
	reconcilefn "github.com/stockguard/stockguard/internal/wiring/function/reconcile"
	"github.com/stockguard/stockguard/internal/wiring/function/refund"
	"github.com/stockguard/stockguard/internal/wiring/function/wechat"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxlogin"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// wireFunction builds one function's handler from its environment env with the
// function's own wiring, as its main does (the package under internal/wiring/function): the
// same configuration loading (so a bad setting fails Start, naming the variable), the
// same Build. Only what is local differs: the configuration's local values and the
// clients (the embedded servers, the WeChat stand-ins, the in-memory key).
func (s *Stack) wireFunction(cfg StackConfig, name string, env envvar.Lookup, log *slog.Logger, instance bool) (lambda.Handler, error) {
	w := wirer{s: s, cfg: cfg, log: log, instance: instance}
	build, ok := map[string]func(envvar.Lookup) (*lambdaevent.Function, error){
		createorder.Function.Name: wired(createorder.Load, w.createOrder),
		closeorder.Function.Name:  wired(closeorder.Load, w.closeOrder),
		paycallback.Function.Name: wired(paycallback.Load, w.payCallback),
		refund.Function.Name:      wired(refund.Load, w.refund),
		reconcilefn.Function.Name: wired(reconcilefn.Load, w.reconcile),
		admin.Function.Name:       wired(admin.Load, w.admin),
		loginfn.Function.Name:     wired(loginfn.Load, w.login),
		jwks.Function.Name:        wired(jwks.Load, w.jwks),
		alertchatfn.Function.Name: wired(alertchatfn.Load, w.alertChat),
		wechat.Function.Name:      wired(wechat.Load, w.wechat),
		admitterfn.Function.Name:  wired(admitterfn.Load, w.admitter),
	}[name]
	if !ok {
		return nil, fmt.Errorf("no wiring under internal/wiring/function")
	}
	fn, err := build(env)
	if err != nil {
		return nil, err
	}
	return newHandler(fn.Invoke), nil
}

// wired is one function's wiring: its configuration read by load from the
// environment, then handed to build.
func wired[C any](load func(envvar.Lookup) (C, error), build func(C) (*lambdaevent.Function, error)) func(envvar.Lookup) (*lambdaevent.Function, error) {
	return func(env envvar.Lookup) (*lambdaevent.Function, error) {
		c, err := load(env)
		if err != nil {
			return nil, err
		}
		return build(c)
	}
}

// wirer builds each function with the stack's clients, logging to log, after giving
// its configuration its local values. An instance (Stack.Instance) leaves the stack's
// own fields as the first build set them.
type wirer struct {
	s        *Stack
	cfg      StackConfig
	log      *slog.Logger
	instance bool
}

// store is a function's store on the embedded DynamoDB, on the stack's clock.
func (w wirer) store(tables dynamo.Tables, opts dynamo.Options) *dynamo.Store {
	return dynamo.New(w.s.DB, tables, w.s.storeOptions(opts))
}

// createOrder's store is the stack's Store (an instance's, one of its own), on the
// stack's DynamoDB client made impatient (dynamo.ForBuyers, as deployed); its
// payment timeout StackConfig's; its admission keys LocalAdmissionKeys (deployed:
// the Secrets Manager secret ADMISSION_SECRET_ARN names); its scalper check asks the
// server API stand-in.
func (w wirer) createOrder(c createorder.Config) (*lambdaevent.Function, error) {
	if w.cfg.PaymentTimeout > 0 {
		c.PaymentTimeout = w.cfg.PaymentTimeout
	}
	store := dynamo.New(dynamodb.New(w.s.DB.Options(), dynamo.ForBuyers), c.Tables, w.s.storeOptions(c.StoreOptions(nil)))
	if !w.instance {
		w.s.Tables, w.s.Store = c.Tables, store
	}
	keys, err := LocalAdmissionKeys()
	if err != nil {
		return nil, err
	}
	ask := createorder.RiskAsker(func(context.Context) (*wxapi.Client, error) { return w.s.wxClient, nil })
	return createorder.Build(c, w.log, store, w.s.closeQueue(c.CloseQueueURL), w.s.wechatQueue(c.WeChatQueueURL), keys, ask)
}

// closeOrder's notify_url base is the local API's own URL, the issuer: deployed, it is
// built from the pay request's https domain, which the local API does not serve.
func (w wirer) closeOrder(c closeorder.Config) (*lambdaevent.Function, error) {
	c.NotifyBaseURL = cmp.Or(c.NotifyBaseURL, w.cfg.Issuer)
	merchant, err := w.s.merchantClient(w.cfg)
	if err != nil {
		return nil, err
	}
	return closeorder.Build(c, w.log, w.store(c.Tables, dynamo.Options{}), w.s.closeQueue(c.CloseQueueURL), w.s.refundQueue(c.RefundQueueURL), w.s.wechatQueue(c.WeChatQueueURL), merchant)
}

// payCallback verifies with the local platform's secret and LocalMessageToken
// (deployed: the Secrets Manager secret WECHATPAY_SECRET_ARN names, and its
// messageToken).
func (w wirer) payCallback(c paycallback.Config) (*lambdaevent.Function, error) {
	read := func(context.Context) ([]byte, error) { return w.s.Payments.Secret() }
	verifier, err := wechatpay.NewRotatingVerifier(context.Background(), read, wechatpay.RotateOptions{Now: w.cfg.Now})
	if err != nil {
		return nil, err
	}
	return paycallback.Build(c, w.log, w.store(c.Tables, dynamo.Options{}), w.s.refundQueue(c.RefundQueueURL), w.s.wechatQueue(c.WeChatQueueURL), verifier, func(context.Context) string { return LocalMessageToken })
}

// refund waits no longer than the stand-in's refund interval before a refund's second
// try (a second refund within it is refused 429 and waits its turn in the refund
// queue); StackConfig.Refund changes its options.
func (w wirer) refund(c refund.Config) (*lambdaevent.Function, error) {
	if w.cfg.RefundInterval > 0 && w.cfg.RefundInterval < cmp.Or(c.Backoff, lambdaevent.BackoffBase) {
		c.Backoff = w.cfg.RefundInterval
	}
	if w.cfg.Refund != nil {
		o := refunds.Options{NotifyURL: c.NotifyURL, StuckAfter: c.StuckAfter, Backoff: c.Backoff}
		w.cfg.Refund(&o)
		c.NotifyURL, c.StuckAfter, c.Backoff = o.NotifyURL, o.StuckAfter, o.Backoff
	}
	merchant, err := w.s.merchantClient(w.cfg)
	if err != nil {
		return nil, err
	}
	return refund.Build(c, w.log, w.store(c.Tables, dynamo.Options{}), w.s.refundQueue(c.RefundQueueURL), w.s.wechatQueue(c.WeChatQueueURL), merchant)
}

func (w wirer) admitter(c admitterfn.Config) (*lambdaevent.Function, error) {
	return admitterfn.Build(c, w.log, w.store(c.Tables, dynamo.Options{}))
}

func (w wirer) reconcile(c reconcilefn.Config) (*lambdaevent.Function, error) {
	return reconcilefn.Build(c, w.log, w.store(c.Tables, dynamo.Options{}), w.alerts(&c.Reconcile))
}

func (w wirer) admin(c admin.Config) (*lambdaevent.Function, error) {
	return admin.Build(c, w.log, w.store(c.Tables, dynamo.Options{}), w.alerts(&c.Reconcile), w.s.refundQueue(c.RefundQueueURL), w.s.wechatQueue(c.WeChatQueueURL))
}

// alerts gives reconcile's configuration the stack's clock, the alerts topic's ARN and
// StackConfig.Reconcile's changes, and returns the alerts' publisher: the embedded SNS API, or none (and no
// topic) without one.
func (w wirer) alerts(c *reconcile.Config) reconcile.Publisher {
	c.Now = w.cfg.Now
	if arn, ok := w.s.Topics[c.Topic]; ok {
		// Deployed, Ref gives a topic's ARN, which SNS's Publish takes; locally sam
		// resolves it to the logical id.
		c.Topic = arn
	} else if w.s.alerts == nil {
		c.Topic = ""
	}
	if w.cfg.Reconcile != nil {
		w.cfg.Reconcile(c)
	}
	if w.s.alerts == nil {
		return nil
	}
	return w.s.alerts
}

// login's tokens name the local API as their issuer (StackConfig.Issuer), whatever the
// template says, and are signed by the in-memory key; codes go to the jscode2session
// stand-in.
func (w wirer) login(c loginfn.Config) (*lambdaevent.Function, error) {
	c.Issuer = w.cfg.Issuer
	wechat, err := wxlogin.New(wxlogin.Config{AppID: LocalAppID, AppSecret: LocalAppSecret, BaseURL: w.s.LoginServer.URL()})
	if err != nil {
		return nil, err
	}
	seal, err := login.SealKey(LocalAppSecret)
	if err != nil {
		return nil, err
	}
	return loginfn.Build(c, w.log, w.store(c.StoreTables(), dynamo.Options{}), wechat, w.s.Signer, seal)
}

// jwks publishes the in-memory key under the local issuer.
func (w wirer) jwks(c jwks.Config) (*lambdaevent.Function, error) {
	c.Issuer = w.cfg.Issuer
	keys, err := w.s.keys(c.KeyID)
	if err != nil {
		return nil, err
	}
	return jwks.Build(c, w.log, keys)
}

func (w wirer) alertChat(c alertchatfn.Config) (*lambdaevent.Function, error) {
	webhooks, err := localWebhooks(w.cfg.AlertWebhooks)
	if err != nil {
		return nil, err
	}
	return alertchatfn.Build(c, w.log, w.store(c.StoreTables(), dynamo.Options{}), webhooks)
}

// wechat calls the server API stand-in; the stack sets the order detail path at start.
func (w wirer) wechat(c wechat.Config) (*lambdaevent.Function, error) {
	if w.cfg.WeChatBackoff > 0 {
		c.Backoff = w.cfg.WeChatBackoff
	}
	if !w.instance {
		w.s.detailPath = c.OrderDetailPath
	}
	return wechat.Build(c, w.log, w.store(c.Tables, dynamo.Options{}), w.s.wechatQueue(c.WeChatQueueURL), w.s.wxClient)
}

// merchantClient is the merchant API client of the local merchant, calling the
// stand-in. Deployed, the client's configuration is the Secrets Manager secret's;
// locally it is the local platform's secret, read the same way.
func (s *Stack) merchantClient(cfg StackConfig) (*wechatpay.RotatingClient, error) {
	read := func(context.Context) ([]byte, error) { return s.Payments.MerchantSecret(s.merchant, "") }
	opts := wechatpay.RotateOptions{Now: cfg.Now, BaseURL: s.PayServer.URL()}
	if cfg.PayRoundTrip > 0 {
		opts.HTTPClient = &http.Client{Transport: delayed{next: http.DefaultTransport, by: cfg.PayRoundTrip, scale: s.slowdown}}
	}
	return wechatpay.NewRotatingClient(context.Background(), read, opts)
}

// delayed is a transport whose every request takes by longer (a remote service's
// round trip) on the stack's clock (by × scale()), or until its context is done.
type delayed struct {
	next  http.RoundTripper
	by    time.Duration
	scale func() float64
}

func (d delayed) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := clock.Sleep(r.Context(), time.Duration(float64(d.by)*d.scale())); err != nil {
		return nil, err
	}
	return d.next.RoundTrip(r)
}

// localWebhooks are StackConfig.AlertWebhooks as the alert function reads them
// (deployed: the secret's webhooks), each checked first.
func localWebhooks(webhooks []teamchat.Webhook) (func(context.Context) ([]teamchat.Webhook, error), error) {
	hooks := slices.Clone(webhooks)
	for _, w := range hooks {
		if err := w.Validate(); err != nil {
			return nil, err
		}
	}
	return func(context.Context) ([]teamchat.Webhook, error) { return hooks, nil }, nil
}

// keys is the local issuer's JWK set: the in-memory signing key named kid.
func (s *Stack) keys(kid string) (idtoken.JWKSet, error) {
	jwk, err := idtoken.NewJWK(kid, s.Signer.PublicKey())
	return idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}, err
}

// SQSClient returns a client of the embedded SQS server (nil when the stack runs
// none), reaching it in process with StackConfig.InProcess.
func (s *Stack) SQSClient() *sqs.Client {
	if s.SQS == nil {
		return nil
	}
	if !s.cfg.InProcess {
		return NewSQSClient(s.SQS.URL())
	}
	return NewSQSClient(s.SQS.URL(), func(o *sqs.Options) { o.HTTPClient = inProcess{s.SQS.http.h.ServeHTTP} })
}

// closeQueue is the close-order queue named by a function's CLOSE_QUEUE_URL (locally
// the queue's logical id); nil when the stack runs no SQS server.
func (s *Stack) closeQueue(name string) *closeq.Queue {
	url, ok := s.Queues[name]
	if s.SQS == nil || !ok {
		return nil
	}
	return closeq.New(s.SQSClient(), url, s.cfg.Now)
}

// refundQueue is the refund queue named by a function's REFUND_QUEUE_URL (locally the
// queue's logical id); nil when the stack runs no SQS server (the stuck pass then
// requests every refund).
func (s *Stack) refundQueue(name string) *refunds.Queue {
	url, ok := s.Queues[name]
	if s.SQS == nil || !ok {
		return nil
	}
	return refunds.NewQueue(s.SQSClient(), url)
}

// wechatQueue is the WeChat queue named by a function's WECHAT_QUEUE_URL (locally the
// queue's logical id); nil when the stack runs no SQS server (no upload is queued, no
// subscribe message sent).
func (s *Stack) wechatQueue(name string) *wxqueue.Queue {
	url, ok := s.Queues[name]
	if s.SQS == nil || !ok {
		return nil
	}
	return wxqueue.New(s.SQSClient(), url)
}

// LocalAdmissionSecret is the admission signing secret's value locally (deployed, a
// random value Secrets Manager generates): local admission tokens are signed with
// the key derived from it (admission.KeyFromSecret), and tests may mint their own.
const LocalAdmissionSecret = "local-admission-secret-not-for-production-use"

// LocalAdmissionKeys are the admission keys of the local createOrder: from
// LocalAdmissionSecret, no previous version.
func LocalAdmissionKeys() (*admission.Keys, error) {
	key, err := admission.KeyFromSecret([]byte(LocalAdmissionSecret))
	if err != nil {
		return nil, err
	}
	return admission.NewKeys(key, nil)
}
