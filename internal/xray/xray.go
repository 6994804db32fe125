// Package xray traces a function's AWS SDK calls into AWS X-Ray: OpenTelemetry's
// instrumentation of the SDK (otelaws) opens one span per call, and this package's
// tracer sends each span of a sampled invocation, when it ends, to the X-Ray daemon
// Lambda runs beside a function with active tracing, as a subsegment of the
// function's segment (AWS X-Ray Developer Guide, "AWS X-Ray segment documents":
// subsegments sent separately carry type "subsegment", trace_id and parent_id;
// "Sending segment documents to the X-Ray daemon": a UDP datagram of the header
// {"format": "json", "version": 1}, a newline and the document; Lambda Developer
// Guide, "Defined runtime environment variables": AWS_XRAY_DAEMON_ADDRESS is the
// daemon's address).
//
// The invocation's own trace header (Root, Parent, Sampled) comes from Lambda
// (Context); Lambda decides the sampling and records the function's segment itself.
// Calls outside a sampled invocation are not traced. No tracing error ever reaches a
// call: a datagram that cannot be sent is dropped.
//
// It is not the OpenTelemetry SDK: the SDK's tracer provider alone makes every
// bootstrap 0.46 MB larger, which the admin function cannot afford under Lambda's
// 10 MiB budget this project keeps (README, "Logs and traces").
package xray

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	//lint:ignore SA1019 otelaws still works with this SDK and adds the least to the bootstraps (10 MiB budget); its successor, the SDK's own smithy-go OpenTelemetry tracing, is the next step
	"go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-sdk-go-v2/otelaws"
	xrayprop "go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Instrument makes every client built from cfg open a span per call (otelaws) that
// is sent, when the call ends inside a sampled invocation (Context), to the X-Ray
// daemon at daemon (host:port, AWS_XRAY_DAEMON_ADDRESS). With daemon "" (no active
// tracing: the local stack, tests) it changes nothing.
func Instrument(cfg *aws.Config, daemon string) {
	if daemon == "" {
		return
	}
	otelaws.AppendMiddlewares(&cfg.APIOptions, otelaws.WithTracerProvider(&Provider{send: udpSender(daemon)}))
}

// Context returns ctx carrying the invocation's X-Ray trace header (AWS X-Ray
// Developer Guide, "Tracing header": Root=1-…;Parent=…;Sampled=1) as the parent of the
// spans started in it; a header that is missing or malformed leaves ctx untraced.
func Context(ctx context.Context, header string) context.Context {
	if header == "" {
		return ctx
	}
	return xrayprop.Propagator{}.Extract(ctx, propagation.MapCarrier{"X-Amzn-Trace-Id": header})
}

// Provider is a tracer provider whose spans are X-Ray subsegments, each handed to
// send as one daemon datagram when it ends. NewProvider makes one for tests.
type Provider struct {
	embedded.TracerProvider
	send func([]byte)
}

// NewProvider returns a Provider handing each datagram to send.
func NewProvider(send func([]byte)) *Provider { return &Provider{send: send} }

// Tracer returns the provider's tracer, whatever the name.
func (p *Provider) Tracer(string, ...trace.TracerOption) trace.Tracer { return tracer{p: p} }

type tracer struct {
	embedded.Tracer
	p *Provider
}

// Start starts a span under the span context of ctx when that context is sampled;
// otherwise it returns ctx and its (non-recording) span unchanged.
func (t tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanContextFromContext(ctx)
	if !parent.IsValid() || !parent.IsSampled() {
		return ctx, trace.SpanFromContext(ctx)
	}
	cfg := trace.NewSpanStartConfig(opts...)
	var id trace.SpanID
	rand.Read(id[:])
	s := &span{p: t.p, name: name, parent: parent, start: cfg.Timestamp(), attrs: map[string]any{}}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: parent.TraceID(), SpanID: id, TraceFlags: parent.TraceFlags()})
	s.SetAttributes(cfg.Attributes()...)
	return trace.ContextWithSpan(ctx, s), s
}

// udpSender returns a sender of datagrams to the daemon at addr, dialled on first use;
// a failed dial or write drops the datagram.
func udpSender(addr string) func([]byte) {
	var once sync.Once
	var conn net.Conn
	return func(datagram []byte) {
		once.Do(func() { conn, _ = net.Dial("udp", addr) })
		if conn != nil {
			conn.Write(datagram)
		}
	}
}

// header starts every datagram the daemon takes.
const header = `{"format": "json", "version": 1}` + "\n"

// traceID is an OpenTelemetry trace id in X-Ray's form: 1-<8 hex digits of the
// time>-<24 hex digits>.
func traceID(id trace.TraceID) string {
	h := id.String()
	return "1-" + h[:8] + "-" + h[8:]
}

// subsegment is the X-Ray document of an ended span.
func (s *span) subsegment(end time.Time) []byte {
	service, operation, _ := strings.Cut(s.name, ".")
	doc := map[string]any{
		"type": "subsegment", "namespace": "aws", "name": service,
		"id": s.sc.SpanID().String(), "parent_id": s.parent.SpanID().String(), "trace_id": traceID(s.sc.TraceID()),
		"start_time": seconds(s.start), "end_time": seconds(end),
	}
	call := map[string]any{"operation": operation}
	for key, field := range map[string]string{"aws.region": "region", "aws.request_id": "request_id"} {
		if v, ok := s.attrs[key]; ok {
			call[field] = v
		}
	}
	if tables, ok := s.attrs["aws.dynamodb.table_names"].([]string); ok && len(tables) == 1 {
		call["table_name"] = tables[0]
	}
	doc["aws"] = call
	if status, ok := s.attrs["http.response.status_code"].(int64); ok {
		doc["http"] = map[string]any{"response": map[string]any{"status": status}}
		switch {
		case status == 429:
			doc["throttle"], doc["error"] = true, true
		case status >= 500:
			doc["fault"] = true
		case status >= 400:
			doc["error"] = true
		}
	} else if s.failed {
		doc["fault"] = true
	}
	body, _ := json.Marshal(doc)
	return append([]byte(header), body...)
}

// seconds is t as X-Ray's epoch seconds with microseconds.
func seconds(t time.Time) float64 {
	return math.Round(float64(t.UnixMicro())) / 1e6
}
