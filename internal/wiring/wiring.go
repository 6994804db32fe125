// Package wiring is the one wiring of every Lambda function: which function serves
// which trigger, with which adapter of which capability package (the table below,
// checked against template.yaml by tools/internal/sam's wiring tests), how each
// function's configuration is read from its environment (Load), and how its handler is
// built from that configuration and the clients it is given (Build). A function's main
// (functions/<name>/main.go) reads its configuration, builds the deployed clients and
// calls Build; the local stack (tools/internal/local) calls the same Build with its
// embedded servers' and stand-ins' clients, so a function runs the same code in both.
//
// Nothing here is local-only: the package imports no local stack, embedded server or
// stand-in, and reads no environment itself.
package wiring

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxlogin"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// A Function is one Lambda function of template.yaml as package wiring builds it:
// its configuration read with Load, its handler built with Build. Each function's
// rows of the table are reached only through its own Function, so a function's
// binary links only the capabilities it serves with.
type Function struct {
	// Name is the function's logical id in template.yaml, e.g. CreateOrderFunction.
	Name string
	spec func() spec
}

// The functions.
var (
	CreateOrder = Function{"CreateOrderFunction", createOrder}
	CloseOrder  = Function{"CloseOrderFunction", closeOrder}
	PayCallback = Function{"PayCallbackFunction", payCallback}
	Refund      = Function{"RefundFunction", refund}
	Reconcile   = Function{"ReconcileFunction", reconcileFunction}
	Admin       = Function{"AdminFunction", admin}
	Login       = Function{"LoginFunction", loginFunction}
	Jwks        = Function{"JwksFunction", jwks}
	AlertChat   = Function{"AlertChatFunction", alertChat}
	WeChat      = Function{"WeChatFunction", wechat}
)

// All lists every function.
func All() []Function {
	return []Function{CreateOrder, CloseOrder, PayCallback, Refund, Reconcile, Admin, Login, Jwks, AlertChat, WeChat}
}

// ByName is the function whose logical id is name; false for one nothing wires.
func ByName(name string) (Function, bool) {
	for _, f := range All() {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// Queues and topics the functions are triggered by: their logical ids in
// template.yaml.
const (
	CloseOrderQueue      = "CloseOrderQueue"
	RefundQueue          = "RefundQueue"
	AlertsTopic          = "AlertsTopic"
	WeChatQueue          = "WeChatQueue"
	AlertChatFailedQueue = "AlertChatFailedQueue"
)

// spec is one function: its short name (its directory under functions/, the
// Function dimension of its metrics, its name in logs), the settings it reads, how
// its HTTP routes answer errors (nil: the contract's httpapi.Answer), and its rows of
// the table.
type spec struct {
	short    string
	settings []setting
	answer   func(error) events.APIGatewayV2HTTPResponse
	rows     []row
}

// Short is the function's short name, e.g. closeOrder.
func (f Function) Short() string { return f.spec().short }

// Trigger is one event source of a function (template.yaml, the function's Events).
type Trigger struct {
	Kind  lambdaevent.Kind
	Route string // HTTP: the route key, e.g. "POST /orders"
	Queue string // SQS: the queue's logical id
	Topic string // SNS: the topic's logical id
}

func (t Trigger) String() string {
	switch t.Kind {
	case lambdaevent.HTTP:
		return t.Route
	case lambdaevent.SQS:
		return "SQS " + t.Queue
	case lambdaevent.SNS:
		return "SNS " + t.Topic
	}
	return string(t.Kind)
}

// Triggers lists the function's triggers: what template.yaml must declare for it.
func (f Function) Triggers() []Trigger {
	var out []Trigger
	for _, r := range f.spec().rows {
		out = append(out, r.trigger)
	}
	return out
}

// Clients are what a function's handler is built with besides its configuration:
// the AWS SDK clients, WeChat's clients and keys, and the clock. A field a function
// does not use may be nil (Build says which one is missing when it needs it).
type Clients struct {
	Log *slog.Logger // the function's JSON log (required)
	// DynamoDB is the client every store is built on (with dynamo.ClientOptions).
	DynamoDB *dynamodb.Client
	// CloseQueue and RefundQueue are the close-order queue (closeq.New with
	// Config.CloseQueueURL) and the refund queue (refunds.NewQueue with
	// Config.RefundQueueURL); nil sends nothing (the sweep and the stuck pass still
	// release and refund, later).
	CloseQueue  *closeq.Queue
	RefundQueue *refunds.Queue
	// WeChatQueue is the WeChat queue (wxqueue.New with Config.WeChatQueueURL): shipping
	// uploads and subscribe messages for the wechat function; nil sends nothing (no
	// upload is queued: the shipment route answers 503; no message goes out).
	WeChatQueue *wxqueue.Queue
	// WxAPI calls WeChat's server API (the wechat function): one per process, sharing
	// its access token among all calls.
	WxAPI *wxapi.Client
	// Alerts publishes reconcile's alerts (*sns.Client); nil publishes none.
	Alerts reconcile.Publisher
	// WeChatPay is the merchant API client (closeOrder, refund).
	WeChatPay *wechatpay.RotatingClient
	// Notifications verifies WeChat Pay's notifications (payCallback).
	Notifications *wechatpay.RotatingVerifier
	// WeChatLogin exchanges wx.login codes (login).
	WeChatLogin *wxlogin.Client
	// Signer signs login tokens (login); Keys is its public JWK set (jwks).
	Signer idtoken.Signer
	Keys   idtoken.JWKSet
	// TokenSealKey (login.SealKey of the AppSecret) seals the tokens login keeps for
	// reuse; nil: every login signs a new token (login.Options).
	TokenSealKey []byte
	// Webhooks returns the chat bots alerts go to (alertChat).
	Webhooks func(context.Context) ([]teamchat.Webhook, error)
	// Now is every clock; nil: time.Now.
	Now func() time.Time
	// NewStore, when set, builds the function's store on its tables with the options
	// its configuration gives (the local stack keeps createOrder's and adjusts them
	// to its clock); nil: dynamo.New over DynamoDB.
	NewStore func(tables dynamo.Tables, opts dynamo.Options) *dynamo.Store
}

// Build builds the function's handler from its configuration cfg (read by Load) and
// clients: every row of the table for that function bound to its adapter. Errors: a
// client or setting it needs missing or invalid.
func (f Function) Build(cfg Config, clients Clients) (*lambdaevent.Function, error) {
	s := f.spec()
	if clients.Now == nil {
		clients.Now = time.Now
	}
	p := &parts{function: s.short, cfg: cfg, c: clients}
	fn := &lambdaevent.Function{Name: s.short}
	routes := map[string]httpapi.Route{}
	for _, r := range s.rows {
		switch {
		case r.route != nil:
			routes[r.trigger.Route] = r.route(p)
		case r.queue != nil:
			fn.SQS = r.queue(p)
		case r.schedule != nil:
			fn.Scheduled = r.schedule(p)
		case r.topic != nil:
			fn.SNS = r.topic(p)
		}
	}
	if p.err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, p.err)
	}
	if len(routes) > 0 {
		h := httpapi.New(s.short, clients.Log, routes)
		if s.answer != nil {
			h.AnswerWith(s.answer)
		}
		fn.HTTP = h.Handle
	}
	return fn, nil
}

// row is one line of the table: one trigger of a function and the adapter that serves
// it, built from the function's parts (exactly one of the adapter fields).
type row struct {
	trigger  Trigger
	route    func(*parts) httpapi.Route
	queue    func(*parts) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	schedule func(*parts) func(context.Context) (any, error)
	topic    func(*parts) func(context.Context, events.SNSEvent) error
}

func route(key string, adapter func(*parts) httpapi.Route) row {
	return row{trigger: Trigger{Kind: lambdaevent.HTTP, Route: key}, route: adapter}
}

// merchantRoute is a route of the merchant API: AWS_IAM, the caller's principal
// passed on (httpapi.AsMerchant).
func merchantRoute(key string, adapter func(*parts) httpapi.MerchantRoute) row {
	return route(key, func(p *parts) httpapi.Route { return httpapi.AsMerchant(adapter(p)) })
}

func queue(id string, adapter func(*parts) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) row {
	return row{trigger: Trigger{Kind: lambdaevent.SQS, Queue: id}, queue: adapter}
}

func schedule(adapter func(*parts) func(context.Context) (any, error)) row {
	return row{trigger: Trigger{Kind: lambdaevent.Scheduled}, schedule: adapter}
}

func topic(id string, adapter func(*parts) func(context.Context, events.SNSEvent) error) row {
	return row{trigger: Trigger{Kind: lambdaevent.SNS, Topic: id}, topic: adapter}
}

// result adapts a scheduled pass returning a T to the handler's any.
func result[T any](run func(context.Context) (T, error)) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) { return run(ctx) }
}

// Compile-time checks: the store implements what each capability declares it needs.
var (
	_ orders.Placing      = (*dynamo.Store)(nil)
	_ orders.Releasing    = (*dynamo.Store)(nil)
	_ orders.Listing      = (*dynamo.Store)(nil)
	_ payments.Orders     = (*dynamo.Store)(nil)
	_ payments.Payments   = (*dynamo.Store)(nil)
	_ refunds.Starting    = (*dynamo.Store)(nil)
	_ refunds.Settling    = (*dynamo.Store)(nil)
	_ refunds.Orders      = (*dynamo.Store)(nil)
	_ stock.Catalog       = (*dynamo.Store)(nil)
	_ reconcile.Books     = (*dynamo.Store)(nil)
	_ reconcile.Reports   = (*dynamo.Store)(nil)
	_ login.Attempts      = (*dynamo.Store)(nil)
	_ alertchat.Quiet     = (*dynamo.Store)(nil)
	_ payments.Merchant   = (*wechatpay.RotatingClient)(nil)
	_ refunds.Payments    = (*wechatpay.RotatingClient)(nil)
	_ payments.Verifier   = (*wechatpay.RotatingVerifier)(nil)
	_ refunds.Verifier    = (*wechatpay.RotatingVerifier)(nil)
	_ orders.PaymentCheck = (*payments.Checker)(nil)
	_ payments.Refunds    = (*refunds.Starter)(nil)
	_ shipping.Orders     = (*dynamo.Store)(nil)
	_ notices.Store       = (*dynamo.Store)(nil)
	_ shipping.WeChat     = (*wxapi.Client)(nil)
	_ notices.WeChat      = (*wxapi.Client)(nil)
	_ shipping.Sender     = (*wxqueue.Queue)(nil)
	_ refunds.Settling    = settlingStore{}
)
