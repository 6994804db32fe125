package local

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxlogin"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// wireFunction builds one function's handler from its environment env with the one
// wiring the deployed function's main uses (package wiring): the same configuration
// parsing (so a bad setting fails Start, naming the variable), the same handlers.
// Only what is local differs: the configuration's local values (localize) and the
// clients (the embedded servers, the WeChat stand-ins, the in-memory key: clients).
func (s *Stack) wireFunction(cfg StackConfig, name string, env envvar.Lookup, log *slog.Logger) (lambda.Handler, error) {
	f, ok := wiring.ByName(name)
	if !ok {
		return nil, fmt.Errorf("no wiring in package wiring")
	}
	c, err := f.Load(env)
	if err != nil {
		return nil, err
	}
	s.localize(cfg, name, &c)
	clients, err := s.clients(cfg, name, c, log)
	if err != nil {
		return nil, err
	}
	fn, err := f.Build(c, clients)
	if err != nil {
		return nil, err
	}
	return newHandler(fn.Invoke), nil
}

// localize gives a function's configuration its local values: StackConfig's payment
// timeout, issuer and tweaks, and no alerts topic without an SNS server.
func (s *Stack) localize(cfg StackConfig, name string, c *Config) {
	if name == wiring.CreateOrder.Name && cfg.PaymentTimeout > 0 {
		c.PaymentTimeout = cfg.PaymentTimeout
	}
	// Deployed, closeOrder builds notify_url from the pay request's https domain, which
	// the local API does not serve: its base is the local API's own URL, the issuer.
	c.NotifyBaseURL = cmp.Or(c.NotifyBaseURL, cfg.Issuer)
	// The local tokens' iss is the local API (StackConfig.Issuer), whatever the template
	// says; the discovery document names it too.
	if name == wiring.Login.Name || name == wiring.Jwks.Name {
		c.Issuer = cfg.Issuer
	}
	c.Reconcile.Now = cfg.Now
	if arn, ok := s.Topics[c.Reconcile.Topic]; ok {
		// Deployed, Ref gives a topic's ARN, which SNS's Publish takes; locally sam
		// resolves it to the logical id.
		c.Reconcile.Topic = arn
	} else if s.alerts == nil {
		c.Reconcile.Topic = ""
	}
	if cfg.Reconcile != nil {
		cfg.Reconcile(&c.Reconcile)
	}
	if cfg.WeChatBackoff > 0 {
		c.WeChatBackoff = cfg.WeChatBackoff
	}
	if cfg.RefundInterval > 0 && cfg.RefundInterval < cmp.Or(c.RefundBackoff, refunds.BackoffBase) {
		// A second refund within the stand-in's interval is refused 429 and waits
		// its turn in the refund queue: no longer than the interval itself.
		c.RefundBackoff = cfg.RefundInterval
	}
	if cfg.Refund != nil {
		o := refunds.Options{NotifyURL: c.RefundNotifyURL, StuckAfter: c.RefundStuckAfter, Backoff: c.RefundBackoff}
		cfg.Refund(&o)
		c.RefundNotifyURL, c.RefundStuckAfter, c.RefundBackoff = o.NotifyURL, o.StuckAfter, o.Backoff
	}
}

// Config is a function's configuration (wiring.Config).
type Config = wiring.Config

// clients are the local clients a function is built with: the embedded DynamoDB and
// SQS (and SNS) servers, the WeChat Pay, login and chat stand-ins, the in-memory
// signing key, and the stack's clock. createOrder's store is the stack's Store.
func (s *Stack) clients(cfg StackConfig, name string, c Config, log *slog.Logger) (wiring.Clients, error) {
	clients := wiring.Clients{
		Log: log, DynamoDB: s.DB, Now: cfg.Now,
		CloseQueue: s.closeQueue(c.CloseQueueURL), RefundQueue: s.refundQueue(c.RefundQueueURL),
		WeChatQueue: s.wechatQueue(c.WeChatQueueURL),
		NewStore: func(tables dynamo.Tables, opts dynamo.Options) *dynamo.Store {
			st := dynamo.New(s.DB, tables, s.storeOptions(opts))
			if name == wiring.CreateOrder.Name {
				s.Tables, s.Store = tables, st
			}
			return st
		},
	}
	if s.alerts != nil {
		clients.Alerts = s.alerts
	}
	var err error
	switch name {
	case wiring.CloseOrder.Name, wiring.Refund.Name:
		clients.WeChatPay, err = s.merchantClient(cfg)
	case wiring.PayCallback.Name:
		// Deployed, the merchant configuration comes from the Secrets Manager secret
		// WECHATPAY_SECRET_ARN names; locally it is the local platform's.
		read := func(context.Context) ([]byte, error) { return s.Payments.Secret() }
		clients.Notifications, err = wechatpay.NewRotatingVerifier(context.Background(), read, wechatpay.RotateOptions{Now: cfg.Now})
	case wiring.Login.Name:
		clients.Signer = s.Signer
		clients.WeChatLogin, err = wxlogin.New(wxlogin.Config{AppID: LocalAppID, AppSecret: LocalAppSecret, BaseURL: s.LoginServer.URL()})
		if err == nil {
			clients.TokenSealKey, err = login.SealKey(LocalAppSecret)
		}
	case wiring.Jwks.Name:
		clients.Keys, err = s.keys(c.KeyID)
	case wiring.AlertChat.Name:
		clients.Webhooks, err = localWebhooks(cfg.AlertWebhooks)
	case wiring.WeChat.Name:
		clients.WxAPI = s.wxClient
		s.detailPath = c.OrderDetailPath
	}
	return clients, err
}

// merchantClient is the merchant API client of the local merchant, calling the
// stand-in. Deployed, the client's configuration is the Secrets Manager secret's;
// locally it is the local platform's secret, read the same way.
func (s *Stack) merchantClient(cfg StackConfig) (*wechatpay.RotatingClient, error) {
	read := func(context.Context) ([]byte, error) { return s.Payments.MerchantSecret(s.merchant, "") }
	return wechatpay.NewRotatingClient(context.Background(), read, wechatpay.RotateOptions{Now: cfg.Now, BaseURL: s.PayServer.URL()})
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
