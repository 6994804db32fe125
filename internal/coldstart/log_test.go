package coldstart_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/envvar"
)

// lines decodes the JSON lines of a log.
func lines(t *testing.T, out *bytes.Buffer) []map[string]any {
	t.Helper()
	var got []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, m)
	}
	return got
}

// invocation is the context Lambda's runtime client gives one invocation
// (aws-lambda-go: the Lambda context and the X-Ray trace header).
func invocation(requestID, traceHeader string) context.Context {
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: requestID})
	//lint:ignore SA1029 the key aws-lambda-go itself uses
	return context.WithValue(ctx, "x-amzn-trace-id", traceHeader)
}

// Every line logged inside an invocation (whatever kind of event, since the wrapper
// is around the whole handler) names the function, the request id, whether the
// invocation was the environment's first and the X-Ray trace id; a line logged at
// cold start names the function only.
func TestLogger_TiesEachLineToItsInvocation(t *testing.T) {
	var out bytes.Buffer
	log := coldstart.Logger(&out, "closeOrder", envvar.Map(nil))
	log.LogAttrs(context.Background(), slog.LevelInfo, "cold start")
	handler := coldstart.Invocations(func(ctx context.Context, event json.RawMessage) (any, error) {
		log.LogAttrs(ctx, slog.LevelWarn, "released", slog.String("orderId", "o-1"))
		return nil, nil
	})
	const root = "1-5759e988-bd862e3fe1be46a994272793"
	for _, inv := range []struct{ id, header string }{
		{"req-1", "Root=" + root + ";Parent=53995c3f42cd8ad8;Sampled=1"}, {"req-2", ""},
	} {
		if _, err := handler(invocation(inv.id, inv.header), json.RawMessage(`{"Records":[{"eventSource":"aws:sqs"}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	got := lines(t, &out)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3: %s", len(got), out.String())
	}
	if got[0]["function"] != "closeOrder" || got[0]["requestId"] != nil {
		t.Errorf("cold-start line %v: want the function and no request id", got[0])
	}
	want := []map[string]any{
		{"function": "closeOrder", "requestId": "req-1", "coldStart": true, "traceId": root, "orderId": "o-1", "level": "WARN"},
		{"function": "closeOrder", "requestId": "req-2", "coldStart": false, "traceId": nil, "orderId": "o-1"},
	}
	for i, w := range want {
		for k, v := range w {
			if got[i+1][k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i+1, k, got[i+1][k], v, got[i+1])
			}
		}
	}
}

// The level follows AWS_LAMBDA_LOG_LEVEL, Lambda's application log level: lines below
// it are not written; unset, INFO.
func TestLogger_LevelFollowsTheFunctionsLoggingConfig(t *testing.T) {
	for level, want := range map[string][]string{
		"":      {"info", "warn", "error"},
		"TRACE": {"debug", "info", "warn", "error"},
		"DEBUG": {"debug", "info", "warn", "error"},
		"INFO":  {"info", "warn", "error"},
		"WARN":  {"warn", "error"},
		"ERROR": {"error"},
		"FATAL": {},
	} {
		var out bytes.Buffer
		log := coldstart.Logger(&out, "admin", envvar.Map(map[string]string{"AWS_LAMBDA_LOG_LEVEL": level}))
		for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
			log.LogAttrs(context.Background(), l, strings.ToLower(l.String()))
		}
		var got []string
		for _, line := range lines(t, &out) {
			got = append(got, line["msg"].(string))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("AWS_LAMBDA_LOG_LEVEL=%q: wrote %v, want %v", level, got, want)
		}
	}
}
