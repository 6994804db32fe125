package xray

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// span is one AWS SDK call's span, sent as a subsegment when it ends.
type span struct {
	embedded.Span
	p      *Provider
	parent trace.SpanContext // the invocation's segment
	sc     trace.SpanContext

	mu     sync.Mutex
	name   string
	start  time.Time
	attrs  map[string]any
	failed bool
	ended  bool
}

// End sends the span's subsegment, once.
func (s *span) End(opts ...trace.SpanEndOption) {
	cfg := trace.NewSpanEndConfig(opts...)
	end := cfg.Timestamp()
	if end.IsZero() {
		end = time.Now()
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	doc := s.subsegment(end)
	s.mu.Unlock()
	s.p.send(doc)
}

// SetAttributes records attributes (the call's region, request id, status, tables).
func (s *span) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range kv {
		s.attrs[string(a.Key)] = a.Value.AsInterface()
	}
}

// SetStatus marks a call that failed without an HTTP answer as a fault.
func (s *span) SetStatus(code codes.Code, _ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = s.failed || code == codes.Error
}

// SetName renames the span.
func (s *span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
}

func (s *span) SpanContext() trace.SpanContext { return s.sc }
func (s *span) IsRecording() bool              { return true }

// RecordError marks the span failed; the error's text is not sent.
func (s *span) RecordError(error, ...trace.EventOption) { s.SetStatus(codes.Error, "") }

// AddEvent and AddLink record nothing: a subsegment here has neither.
func (s *span) AddEvent(string, ...trace.EventOption) {}
func (s *span) AddLink(trace.Link)                    {}

func (s *span) TracerProvider() trace.TracerProvider { return s.p }
