// Package wiring is what every Lambda function's wiring shares: a function's table
// (which trigger is served by which adapter of which capability, Define), the handler
// bound from that table (Table.Bind), and the settings its configuration is read with
// (Read and the readers). Each function's own wiring is a package under
// internal/wiring/function (e.g. internal/wiring/function/createorder): its Config, its Load reading
// that Config from the environment the main passes, its Build taking exactly the
// clients it needs, and its Function describing it; a function's binary links only
// that package and what it imports. package function lists them all, for the local
// stack and for tools/internal/sam's tests, which check every function's table against
// template.yaml.
//
// Nothing here is local-only: the package imports no local stack, embedded server or
// stand-in, and reads no environment itself.
package wiring

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/lambdaevent"
)

// A Function is one Lambda function of template.yaml: its logical id, short name and
// triggers. Each function's package under internal/wiring/function declares its own.
type Function struct {
	// Name is the function's logical id in template.yaml, e.g. CreateOrderFunction.
	Name string
	// Short is its short name, e.g. createOrder: its directory under functions/, the
	// Function dimension of its metrics, the function field of its log lines.
	Short    string
	triggers []Trigger
}

// Triggers lists the function's triggers: what template.yaml must declare for it.
func (f Function) Triggers() []Trigger { return f.triggers }

// Queues and topics the functions are triggered by: their logical ids in
// template.yaml.
const (
	CloseOrderQueue      = "CloseOrderQueue"
	RefundQueue          = "RefundQueue"
	AlertsTopic          = "AlertsTopic"
	WeChatQueue          = "WeChatQueue"
	AlertChatFailedQueue = "AlertChatFailedQueue"
)

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

// SQSHandler serves one SQS batch with partial batch responses.
type SQSHandler = func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Scheduled serves one scheduled event.
type Scheduled = func(context.Context) (any, error)

// SNSHandler serves one SNS notification.
type SNSHandler = func(context.Context, events.SNSEvent) error

// A Row is one line of a function's table: one trigger and the adapter that serves it,
// taken from the function's built parts P (exactly one of the adapter fields).
type Row[P any] struct {
	trigger  Trigger
	route    func(P) httpapi.Route
	queue    func(P) SQSHandler
	schedule func(P) Scheduled
	topic    func(P) SNSHandler
}

// Route is the row of the HTTP API route key (e.g. "POST /orders").
func Route[P any](key string, adapter func(P) httpapi.Route) Row[P] {
	return Row[P]{trigger: Trigger{Kind: lambdaevent.HTTP, Route: key}, route: adapter}
}

// MerchantRoute is a route of the merchant API: AWS_IAM, the caller's principal passed
// on (httpapi.AsMerchant).
func MerchantRoute[P any](key string, adapter func(P) httpapi.MerchantRoute) Row[P] {
	return Route(key, func(p P) httpapi.Route { return httpapi.AsMerchant(adapter(p)) })
}

// Queue is the row of the SQS queue whose logical id is id.
func Queue[P any](id string, adapter func(P) SQSHandler) Row[P] {
	return Row[P]{trigger: Trigger{Kind: lambdaevent.SQS, Queue: id}, queue: adapter}
}

// Schedule is the row of the function's EventBridge schedules.
func Schedule[P any](adapter func(P) Scheduled) Row[P] {
	return Row[P]{trigger: Trigger{Kind: lambdaevent.Scheduled}, schedule: adapter}
}

// Topic is the row of the SNS topic whose logical id is id.
func Topic[P any](id string, adapter func(P) SNSHandler) Row[P] {
	return Row[P]{trigger: Trigger{Kind: lambdaevent.SNS, Topic: id}, topic: adapter}
}

// Result adapts a scheduled pass returning a T to a Scheduled handler.
func Result[T any](run func(context.Context) (T, error)) Scheduled {
	return func(ctx context.Context) (any, error) { return run(ctx) }
}

// A Table is one function's rows over its parts P: the one place that says which of
// its triggers is served with what (template.yaml must declare the same, which
// tools/internal/sam's wiring tests check).
type Table[P any] struct {
	Function
	rows   []Row[P]
	answer func(error) events.APIGatewayV2HTTPResponse
}

// Define returns the table of the function whose logical id is name and short name
// short.
func Define[P any](name, short string, rows ...Row[P]) Table[P] {
	t := Table[P]{Function: Function{Name: name, Short: short}, rows: rows}
	for _, r := range rows {
		t.triggers = append(t.triggers, r.trigger)
	}
	return t
}

// AnswerWith makes the function's routes answer errors with answer instead of the
// contract's httpapi.Answer (e.g. WeChat Pay's notify routes, notify.Answer).
func (t Table[P]) AnswerWith(answer func(error) events.APIGatewayV2HTTPResponse) Table[P] {
	t.answer = answer
	return t
}

// Bind builds the function's handler: every row's adapter taken from parts, the HTTP
// routes served by one httpapi.Handler logging to log.
func (t Table[P]) Bind(log *slog.Logger, parts P) *lambdaevent.Function {
	fn := &lambdaevent.Function{Name: t.Short}
	routes := map[string]httpapi.Route{}
	for _, r := range t.rows {
		switch {
		case r.route != nil:
			routes[r.trigger.Route] = r.route(parts)
		case r.queue != nil:
			fn.SQS = r.queue(parts)
		case r.schedule != nil:
			fn.Scheduled = r.schedule(parts)
		case r.topic != nil:
			fn.SNS = r.topic(parts)
		}
	}
	if len(routes) > 0 {
		h := httpapi.New(t.Short, log, routes)
		if t.answer != nil {
			h.AnswerWith(t.answer)
		}
		fn.HTTP = h.Handle
	}
	return fn
}
