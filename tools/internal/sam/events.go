package sam

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Events are a function's event sources (SAM AWS::Serverless::Function Events), each
// list sorted by event name.
//
// They are decoded from the resolved template rather than from goformation's
// Function_Properties, which ignores the event Type, guesses the kind from the
// properties' shape and silently drops an event with a property its schema lacks
// (such as SQS FunctionResponseTypes), and has no ScheduleV2 type.
type Events struct {
	// HTTPAPI are the HttpApi events: routes of an API Gateway HTTP API.
	HTTPAPI []HTTPAPIEvent
	// SQS are the SQS events: queue pollers.
	SQS []SQSEvent
	// Schedule are the Schedule (EventBridge rule) and ScheduleV2 (EventBridge
	// Scheduler) events.
	Schedule []ScheduleEvent
	// SNS are the SNS events: subscriptions to a topic.
	SNS []SNSEvent
	// Other maps the name of every event of another type to its Type.
	Other map[string]string
}

// HTTPAPIEvent is an HttpApi event (SAM HttpApi event source type).
type HTTPAPIEvent struct {
	// Name is the event's key under Events.
	Name string
	// API is the logical id of the AWS::Serverless::HttpApi named by ApiId; "" for
	// SAM's implicit API (ServerlessHttpApi).
	API string
	// Method is the HTTP method in upper case, or ANY.
	Method string
	// Path is the route path, e.g. /orders/{orderId}.
	Path string
	// Authorizer is Auth.Authorizer: an authorizer name of the API, NONE for a
	// public route, or "" for the API's DefaultAuthorizer.
	Authorizer string
	// PayloadFormatVersion is "1.0" or "2.0"; "" means SAM's default, 2.0.
	PayloadFormatVersion string
	// Throttle is the route's RouteSettings throttle, which overrides the API's
	// DefaultRouteSettings for this route; nil when the event sets none.
	Throttle *Throttle
}

// Throttle is an HTTP API route throttle (API Gateway V2 RouteSettings
// ThrottlingRateLimit and ThrottlingBurstLimit; Developer Guide, "Throttle requests
// to your HTTP APIs for better throughput in API Gateway", route-level throttling):
// a token bucket of Burst requests refilled at Rate requests per second.
type Throttle struct {
	Rate  float64 // ThrottlingRateLimit, requests per second
	Burst int     // ThrottlingBurstLimit, requests
}

// throttle returns the Throttle of RouteSettings-shaped properties, nil when neither
// limit is set.
func throttle(rate *float64, burst *int) *Throttle {
	if rate == nil && burst == nil {
		return nil
	}
	t := &Throttle{}
	if rate != nil {
		t.Rate = *rate
	}
	if burst != nil {
		t.Burst = *burst
	}
	return t
}

// routeSettings is the shape of DefaultRouteSettings and RouteSettings.
type routeSettings struct {
	ThrottlingRateLimit  *float64
	ThrottlingBurstLimit *int
}

// SQSEvent is an SQS event (SAM SQS event source type).
type SQSEvent struct {
	// Name is the event's key under Events.
	Name string
	// Queue is the local name of the queue whose ARN the Queue property holds: its
	// logical id, plus ".fifo" for a FIFO queue (see [Queue]).
	Queue string
	// BatchSize is the maximum number of messages per invocation (SAM default 10).
	BatchSize int
	// MaximumBatchingWindow is MaximumBatchingWindowInSeconds, in seconds (default 0).
	MaximumBatchingWindow int
	// FunctionResponseTypes lists response types, e.g. ReportBatchItemFailures for
	// partial batch responses.
	FunctionResponseTypes []string
	// Enabled is false only when the template disables the event source mapping.
	Enabled bool
	// MaximumConcurrency is ScalingConfig.MaximumConcurrency: the most concurrent
	// invocations the event source mapping makes (Lambda Developer Guide, "Configuring
	// maximum concurrency for Amazon SQS event sources"); 0 when unset.
	MaximumConcurrency int
}

// ScheduleEvent is a Schedule or ScheduleV2 event (SAM event source types).
type ScheduleEvent struct {
	// Name is the event's key under Events.
	Name string
	// Type is Schedule or ScheduleV2.
	Type string
	// Expression is the rate(…), cron(…) or at(…) expression (Schedule.Schedule or
	// ScheduleV2.ScheduleExpression).
	Expression string
	// Timezone is ScheduleV2's ScheduleExpressionTimezone ("" means UTC).
	Timezone string
	// Input is the JSON text passed to the function instead of the scheduled event,
	// "" when unset.
	Input string
	// Enabled is false when Enabled is false (Schedule) or State is DISABLED.
	Enabled bool
	// DeadLetterQueue is the local name of the queue whose ARN DeadLetterConfig.Arn
	// holds (EventBridge sends it the events it could not deliver); "" when unset.
	DeadLetterQueue string
	// RetryPolicy is how long and how often EventBridge retries delivering an event;
	// nil when unset (EventBridge's default: 24 hours, 185 attempts).
	RetryPolicy *RetryPolicy
}

// RetryPolicy is a schedule target's retry policy (Amazon EventBridge User Guide,
// "Event retry policy and using dead-letter queues").
type RetryPolicy struct {
	// MaximumEventAgeInSeconds is the oldest, in seconds, an event is still retried
	// (60 to 86,400).
	MaximumEventAgeInSeconds int
	// MaximumRetryAttempts is the most retries (0 to 185).
	MaximumRetryAttempts int
}

// SNSEvent is an SNS event (SAM SNS event source type): the function subscribed to a
// topic, invoked asynchronously with one notification per event.
type SNSEvent struct {
	// Name is the event's key under Events.
	Name string
	// Topic is the local name (logical id) of the topic its Topic property (a Ref,
	// which deployed is the topic's ARN) names.
	Topic string
}

// defaultSQSBatchSize is SAM's default SQS BatchSize.
const defaultSQSBatchSize = 10

// rawEvent is one entry of a function's Events in the resolved template.
type rawEvent struct {
	Type       string
	Properties json.RawMessage
}

func newEvents(raw map[string]rawEvent) (Events, error) {
	var events Events
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if err := events.add(name, raw[name]); err != nil {
			return Events{}, fmt.Errorf("event %s (%s): %w", name, raw[name].Type, err)
		}
	}
	return events, nil
}

func (e *Events) add(name string, raw rawEvent) error {
	switch raw.Type {
	case "HttpApi":
		ev, err := httpAPIEvent(name, raw.Properties)
		e.HTTPAPI = append(e.HTTPAPI, ev)
		return err
	case "SQS":
		ev, err := sqsEvent(name, raw.Properties)
		e.SQS = append(e.SQS, ev)
		return err
	case "Schedule", "ScheduleV2":
		ev, err := scheduleEvent(name, raw.Type, raw.Properties)
		e.Schedule = append(e.Schedule, ev)
		return err
	case "SNS":
		var p struct{ Topic string }
		if err := decodeProperties(raw.Properties, &p); err != nil {
			return err
		}
		if p.Topic == "" {
			return fmt.Errorf("no Topic")
		}
		e.SNS = append(e.SNS, SNSEvent{Name: name, Topic: p.Topic[strings.LastIndex(p.Topic, ":")+1:]})
		return nil
	}
	if e.Other == nil {
		e.Other = map[string]string{}
	}
	e.Other[name] = raw.Type
	return nil
}

func httpAPIEvent(name string, properties json.RawMessage) (HTTPAPIEvent, error) {
	var p struct {
		ApiId                string
		Method               string
		Path                 string
		PayloadFormatVersion string
		Auth                 struct{ Authorizer string }
		RouteSettings        routeSettings
	}
	if err := decodeProperties(properties, &p); err != nil {
		return HTTPAPIEvent{}, err
	}
	return HTTPAPIEvent{
		Name:                 name,
		API:                  p.ApiId,
		Method:               strings.ToUpper(p.Method),
		Path:                 p.Path,
		Authorizer:           p.Auth.Authorizer,
		PayloadFormatVersion: p.PayloadFormatVersion,
		Throttle:             throttle(p.RouteSettings.ThrottlingRateLimit, p.RouteSettings.ThrottlingBurstLimit),
	}, nil
}

func sqsEvent(name string, properties json.RawMessage) (SQSEvent, error) {
	var p struct {
		Queue                          string
		BatchSize                      *int
		MaximumBatchingWindowInSeconds int
		FunctionResponseTypes          []string
		Enabled                        *bool
		ScalingConfig                  struct{ MaximumConcurrency int }
	}
	if err := decodeProperties(properties, &p); err != nil {
		return SQSEvent{}, err
	}
	queue, ok := queueFromARN(p.Queue)
	if !ok {
		return SQSEvent{}, fmt.Errorf("Queue %q is not the ARN of a queue in this template", p.Queue)
	}
	return SQSEvent{
		Name:                  name,
		Queue:                 queue,
		BatchSize:             firstInt(defaultSQSBatchSize, p.BatchSize),
		MaximumBatchingWindow: p.MaximumBatchingWindowInSeconds,
		FunctionResponseTypes: p.FunctionResponseTypes,
		Enabled:               p.Enabled == nil || *p.Enabled,
		MaximumConcurrency:    p.ScalingConfig.MaximumConcurrency,
	}, nil
}

func scheduleEvent(name, typ string, properties json.RawMessage) (ScheduleEvent, error) {
	var p struct {
		Schedule                   string
		ScheduleExpression         string
		ScheduleExpressionTimezone string
		Input                      string
		Enabled                    *bool
		State                      string
		DeadLetterConfig           struct{ Arn string }
		RetryPolicy                *RetryPolicy
	}
	if err := decodeProperties(properties, &p); err != nil {
		return ScheduleEvent{}, err
	}
	var dlq string
	if arn := p.DeadLetterConfig.Arn; arn != "" {
		var ok bool
		if dlq, ok = queueFromARN(arn); !ok {
			return ScheduleEvent{}, fmt.Errorf("DeadLetterConfig.Arn %q is not the ARN of a queue in this template", arn)
		}
	}
	expression := p.Schedule
	if typ == "ScheduleV2" {
		expression = p.ScheduleExpression
	}
	if expression == "" {
		return ScheduleEvent{}, fmt.Errorf("no schedule expression")
	}
	return ScheduleEvent{
		Name:            name,
		Type:            typ,
		Expression:      expression,
		Timezone:        p.ScheduleExpressionTimezone,
		Input:           p.Input,
		Enabled:         (p.Enabled == nil || *p.Enabled) && p.State != "DISABLED",
		DeadLetterQueue: dlq,
		RetryPolicy:     p.RetryPolicy,
	}, nil
}

// decodeProperties decodes an event's Properties into the fields this package models;
// other properties are ignored.
func decodeProperties(properties json.RawMessage, into any) error {
	if len(properties) == 0 {
		return nil
	}
	if err := json.Unmarshal(properties, into); err != nil {
		return fmt.Errorf("decode properties: %w", err)
	}
	return nil
}
