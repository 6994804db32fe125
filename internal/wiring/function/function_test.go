package function_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/wiring/function"
	alertchatfn "github.com/stockguard/stockguard/internal/wiring/function/alertchat"
)

func TestLoad_AlertChatReadsItsVariables(t *testing.T) {
	load := alertchatfn.Load
	env := map[string]string{
		"ORDERS_TABLE": "OrdersTable", "CHAT_SECRET_ARN": "arn:aws:secretsmanager:ap-east-1:123456789012:secret:stockguard/chat",
		"QUIET_PERIOD_SECONDS": "3600", "RUNBOOK_URL": "RUNBOOK.md",
	}
	c, err := load(envvar.Map(env))
	if err != nil || c.QuietPeriod != time.Hour || c.Runbook != "RUNBOOK.md" || c.ChatSecretARN != env["CHAT_SECRET_ARN"] || c.OrdersTable != "OrdersTable" {
		t.Fatalf("%+v %v", c, err)
	}
	env["RUNBOOK_URL"] = "https://git.example.com/shop/stockguard/blob/main/RUNBOOK.md"
	if c, err := load(envvar.Map(env)); err != nil || c.Runbook != env["RUNBOOK_URL"] {
		t.Errorf("an https runbook: %+v %v", c, err)
	}
	for name, values := range map[string][]string{
		"ORDERS_TABLE": {""}, "CHAT_SECRET_ARN": {""}, "QUIET_PERIOD_SECONDS": {"", "0", "1h", "-60"},
		"RUNBOOK_URL": {"", "http://git.example.com/RUNBOOK.md", "docs/RUNBOOK.md", "https://x.example/RUNBOOK.md#a", "https:///RUNBOOK.md"},
	} {
		for _, v := range values {
			bad := maps.Clone(env)
			bad[name] = v
			var e *envvar.Error
			if _, err := load(envvar.Map(bad)); !errors.As(err, &e) || e.Name != name {
				t.Errorf("%s=%q: %v, want an error naming it", name, v, err)
			}
		}
	}
}

// Every function has a short name and at least one trigger, and no trigger is served
// twice; ByName finds each, and nothing else.
func TestTable_EveryFunctionServesItsOwnTriggersOnce(t *testing.T) {
	seen := map[string]string{}
	for _, fn := range function.All() {
		if fn.Short == "" || len(fn.Triggers()) == 0 {
			t.Errorf("%s: short name %q, %d triggers", fn.Name, fn.Short, len(fn.Triggers()))
		}
		if got, ok := function.ByName(fn.Name); !ok || got.Name != fn.Name {
			t.Errorf("ByName(%s) = %v, %v", fn.Name, got.Name, ok)
		}
		for _, tr := range fn.Triggers() {
			key := tr.String()
			if tr.Kind == lambdaevent.Scheduled {
				key = fn.Name + " schedule"
			}
			if other, ok := seen[key]; ok {
				t.Errorf("%s is served by %s and %s", key, other, fn.Name)
			}
			seen[key] = fn.Name
		}
	}
	if _, ok := function.ByName("NoSuchFunction"); ok {
		t.Error("an unknown function was found")
	}
}

// The alert function serves SNS notifications, its failed-alert queue's records and
// its digest schedule; any other event is refused, and nothing is posted.
func TestBuild_AlertChatRefusesOtherEvents(t *testing.T) {
	posted := 0
	fn, err := alertchatfn.Build(alertchatfn.Config{QuietPeriod: time.Hour}, slog.New(slog.DiscardHandler), dynamo.New(nil, dynamo.Tables{}, dynamo.Options{}),
		func(context.Context) ([]teamchat.Webhook, error) {
			posted++
			return nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{`{}`, `[]`, `{"version":"2.0","routeKey":"POST /orders"}`, `{"Records":[{"eventSource":"aws:s3"}]}`} {
		if _, err := fn.Invoke(context.Background(), json.RawMessage(ev)); !errors.Is(err, lambdaevent.ErrNotServed) {
			t.Errorf("%s: %v, want ErrNotServed", ev, err)
		}
	}
	if posted != 0 {
		t.Errorf("the webhooks were read %d times for refused events", posted)
	}
	for i, ev := range []string{`{"Records":[{"EventSource":"aws:sns","Sns":{"Message":"x"}}]}`, `{"source":"aws.events","detail-type":"Scheduled Event"}`} {
		if _, err := fn.Invoke(context.Background(), json.RawMessage(ev)); err != nil || posted != i+1 {
			t.Errorf("%s: %v, webhooks read %d times; want handled", ev, err, posted)
		}
	}
	out, err := fn.Invoke(context.Background(), json.RawMessage(`{"Records":[{"eventSource":"aws:sqs","messageId":"m1","body":"{}"}]}`))
	if resp, ok := out.(events.SQSEventResponse); err != nil || !ok || len(resp.BatchItemFailures) != 1 {
		t.Errorf("a record of the failed-alert queue that is no invocation record: %v %v; want it failed", out, err)
	}
}
