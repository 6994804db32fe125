// Package lambdaevent tells apart the events a stockguard function can be invoked
// with — SQS batches, API Gateway HTTP API requests (payload format 2.0), EventBridge
// scheduled events and SNS notifications — so that each function serves only its own and
// refuses the others with an error, changing nothing.
//
// The shapes are the ones Lambda documents for each event source (AWS Lambda
// Developer Guide: "Using Lambda with Amazon SQS", "Using Lambda with Amazon API
// Gateway", "Using Lambda with EventBridge Scheduler / scheduled rules", "Invoking
// Lambda functions with Amazon SNS notifications").
package lambdaevent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Kind is the shape of one invocation event.
type Kind string

// Event kinds.
const (
	// SQS is a batch from an SQS event source mapping: {"Records":[{"eventSource":"aws:sqs",…}]}.
	SQS Kind = "SQS batch"
	// HTTP is an API Gateway HTTP API request, payload format 2.0: {"version":"2.0","routeKey":…}.
	HTTP Kind = "HTTP API request"
	// Scheduled is an EventBridge scheduled event: {"source":"aws.events","detail-type":"Scheduled Event",…}.
	Scheduled Kind = "scheduled event"
	// SNS is a notification from an SNS topic subscription: {"Records":[{"EventSource":"aws:sns","Sns":{…}}]}.
	SNS Kind = "SNS notification"
	// Unknown is anything else, including JSON that is not an object.
	Unknown Kind = "unrecognised event"
)

// KindOf tells which kind event is. It never fails: what it cannot read is Unknown.
func KindOf(event []byte) Kind {
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
		Version    string `json:"version"`
		RouteKey   string `json:"routeKey"`
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
	}
	if json.Unmarshal(event, &probe) != nil {
		return Unknown
	}
	switch {
	case len(probe.Records) > 0 && probe.Records[0].EventSource == "aws:sqs":
		return SQS
	case len(probe.Records) > 0 && probe.Records[0].EventSource == "aws:sns":
		// SNS spells the key EventSource; encoding/json matches keys case-insensitively.
		return SNS
	case probe.Version == "2.0" && probe.RouteKey != "":
		return HTTP
	case probe.Source == "aws.events" && probe.DetailType == "Scheduled Event":
		return Scheduled
	default:
		return Unknown
	}
}

// ErrNotServed is wrapped by every NotServedError: the function was invoked with an
// event or route it does not own, and did nothing.
var ErrNotServed = errors.New("event not served by this function")

// NotServedError says which function refused which event. Route is the HTTP API
// route key when Kind is HTTP.
type NotServedError struct {
	Function string // short function name, e.g. closeOrder
	Kind     Kind
	Route    string
}

// Error names the function and the event it refused.
func (e *NotServedError) Error() string {
	what := string(e.Kind)
	if e.Route != "" {
		what = fmt.Sprintf("route %q", e.Route)
	}
	return fmt.Sprintf("%s: %s: %v", e.Function, what, ErrNotServed)
}

// Unwrap lets errors.Is see ErrNotServed.
func (e *NotServedError) Unwrap() error { return ErrNotServed }

// Serve decodes event, an event of kind, as an E (an events type of aws-lambda-go)
// and returns fn's answer to it. An event that does not decode as an E is an error
// naming function and kind, and fn is not called.
func Serve[E, R any](ctx context.Context, function string, kind Kind, event json.RawMessage, fn func(context.Context, E) (R, error)) (any, error) {
	var ev E
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, fmt.Errorf("%s: bad %s: %w", function, kind, err)
	}
	return fn(ctx, ev)
}

// Function is one Lambda function's handler: it serves the kinds of event the
// function has triggers for (a nil field: none of that kind) and refuses every other
// event with a *NotServedError, without running anything. Name is the function's short
// name (e.g. closeOrder), used in refusals.
type Function struct {
	Name      string
	HTTP      func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	SQS       func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	Scheduled func(context.Context) (any, error)
	SNS       func(context.Context, events.SNSEvent) error
}

// Invoke handles one event as Lambda passes it (pass it to lambda.Start): an HTTP API
// request returns its events.APIGatewayV2HTTPResponse, an SQS batch its
// events.SQSEventResponse, a scheduled event Scheduled's result, an SNS notification
// nothing. An event of a kind f does not serve is refused with a *NotServedError; one
// that does not decode as its kind is an error naming the function and the kind.
func (f *Function) Invoke(ctx context.Context, event json.RawMessage) (any, error) {
	switch kind := KindOf(event); {
	case kind == HTTP && f.HTTP != nil:
		return Serve(ctx, f.Name, kind, event, f.HTTP)
	case kind == SQS && f.SQS != nil:
		return Serve(ctx, f.Name, kind, event, f.SQS)
	case kind == Scheduled && f.Scheduled != nil:
		return f.Scheduled(ctx)
	case kind == SNS && f.SNS != nil:
		return Serve(ctx, f.Name, kind, event, func(ctx context.Context, ev events.SNSEvent) (any, error) { return nil, f.SNS(ctx, ev) })
	default:
		return nil, &NotServedError{Function: f.Name, Kind: kind}
	}
}

// Backoff bounds: by default a failed message (a refund, a WeChat call) is next delivered after
// BackoffBase × 2^(receives−1), at most MaxBackoff (Amazon SQS API Reference,
// ChangeMessageVisibility: at most 12 hours).
const (
	BackoffBase = 30 * time.Second
	MaxBackoff  = 12 * time.Hour
)

// BackoffAfter is how long a message received receives times (≥ 1) stays hidden after
// a failure: base doubling per receive, at least a second, at most MaxBackoff.
func BackoffAfter(base time.Duration, receives int) time.Duration {
	d := max(base, time.Second)
	for i := 1; i < receives && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Receives is how often an SQS message was received, from its ApproximateReceiveCount
// attribute; 1 when absent or unreadable.
func Receives(m events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}
