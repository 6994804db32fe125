package coldstart

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/xray"
)

// Logger returns the JSON logger of the function whose short name is function,
// writing to w (Lambda sends standard output to CloudWatch Logs): every line carries
// "function", and a line logged with an invocation's context (Invocations) also
// "requestId" (Lambda's request id), "coldStart" (true in the first invocation of the
// execution environment) and "traceId" (the X-Ray trace id, when the invocation is
// traced). Its level is the function's application log level, AWS_LAMBDA_LOG_LEVEL read
// with get (Level).
func Logger(w io.Writer, function string, get envvar.Lookup) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: Level(get("AWS_LAMBDA_LOG_LEVEL"))})
	return slog.New(invocationHandler{h}).With(slog.String("function", function))
}

// Level is the slog level of a Lambda application log level (Lambda Developer Guide,
// "Log-level filtering": with the JSON log format Lambda sets AWS_LAMBDA_LOG_LEVEL to
// the function's ApplicationLogLevel, one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL,
// and drops lines whose "level" is below it): TRACE below slog's debug, FATAL above its
// error; unset or unknown, INFO (Lambda's default).
func Level(lambdaLevel string) slog.Level {
	switch strings.ToUpper(lambdaLevel) {
	case "TRACE":
		return slog.LevelDebug - 4
	case "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR":
		return slog.LevelError
	case "FATAL":
		return slog.LevelError + 4
	}
	return slog.LevelInfo
}

// Invocation is what ties a log line to one invocation.
type Invocation struct {
	RequestID string // Lambda's request id of the invocation
	ColdStart bool   // the first invocation of the execution environment
	TraceID   string // the X-Ray trace id (Root of the trace header), "" when none
}

type invocationKey struct{}

// InvocationOf is the invocation ctx belongs to, and whether it belongs to one.
func InvocationOf(ctx context.Context) (Invocation, bool) {
	inv, ok := ctx.Value(invocationKey{}).(Invocation)
	return inv, ok
}

// traceHeaderKey is the context key under which aws-lambda-go hands each invocation
// its X-Ray trace header (Lambda-Runtime-Trace-Id: Root=…;Parent=…;Sampled=…).
const traceHeaderKey = "x-amzn-trace-id"

// TraceHeader is the X-Ray trace header Lambda gave the invocation of ctx, "" when
// none (AWS X-Ray Developer Guide, "Tracing header").
func TraceHeader(ctx context.Context) string {
	h, _ := ctx.Value(traceHeaderKey).(string)
	return h
}

// Invocations wraps a function's handler so that each invocation's context carries
// its Invocation: the request id from the Lambda context, whether it is the first
// invocation this wrapper serves, the Root of its trace header; and the trace header
// itself as the parent of the spans of its AWS SDK calls (xray.Context).
func Invocations(invoke func(context.Context, json.RawMessage) (any, error)) func(context.Context, json.RawMessage) (any, error) {
	var started atomic.Bool
	return func(ctx context.Context, event json.RawMessage) (any, error) {
		inv := Invocation{ColdStart: !started.Swap(true)}
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			inv.RequestID = lc.AwsRequestID
		}
		for part := range strings.SplitSeq(TraceHeader(ctx), ";") {
			if root, ok := strings.CutPrefix(strings.TrimSpace(part), "Root="); ok {
				inv.TraceID = root
			}
		}
		return invoke(xray.Context(context.WithValue(ctx, invocationKey{}, inv), TraceHeader(ctx)), event)
	}
}

// invocationHandler adds the Invocation of a record's context to the record.
type invocationHandler struct{ slog.Handler }

func (h invocationHandler) Handle(ctx context.Context, r slog.Record) error {
	if inv, ok := InvocationOf(ctx); ok {
		r.AddAttrs(slog.String("requestId", inv.RequestID), slog.Bool("coldStart", inv.ColdStart))
		if inv.TraceID != "" {
			r.AddAttrs(slog.String("traceId", inv.TraceID))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h invocationHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return invocationHandler{h.Handler.WithAttrs(attrs)}
}

func (h invocationHandler) WithGroup(name string) slog.Handler {
	return invocationHandler{h.Handler.WithGroup(name)}
}
