package local_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/wiring/function"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/sam"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

const template = "../../../template.yaml"

func templateFunctions(t *testing.T) ([]sam.Function, []sam.Route) {
	t.Helper()
	tpl, err := sam.Load(template)
	if err != nil {
		t.Fatal(err)
	}
	functions, err := tpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	routes, err := tpl.Routes()
	if err != nil {
		t.Fatal(err)
	}
	return functions, routes
}

// invalidValues are values of the template's variables that are set but wrong.
var invalidValues = map[string][]string{
	"PAYMENT_TIMEOUT_SECONDS":        {"0", "-900", "15m", "1.5"},
	"REPAIR_ENABLED":                 {"yes"},
	"REPAIR_WINDOW":                  {"2-5", "02:00-02:00", "25:00-05:00"},
	"REPAIR_TIMEZONE":                {"Mars/Olympus_Mons", "local"},
	"ALERT_MIN_UNITS":                {"0", "five"},
	"ALERT_PERCENT":                  {"0", "-1", "NaN"},
	"OVERDUE_GRACE_SECONDS":          {"0", "300s"},
	"FULL_CHECK_DAYS":                {"0", "7d", "-1"},
	"ORDERS_PER_USER_SKU_PER_MINUTE": {"-1", "101", "5/min"},
	"REFUND_NOTIFY_URL":              {"http://example.com/refund-notify", "/refund-notify"},
	"USER_REFUND_WINDOW":             {"-1", "a day", "1.5"},
	"REFUND_STUCK_SECONDS":           {"0", "30m"},
	"QUIET_PERIOD_SECONDS":           {"0", "1h"},
	"RUNBOOK_URL":                    {"http://git.example.com/RUNBOOK.md", "docs/RUNBOOK.md"},
	"PAY_REMINDER_LEAD_SECONDS":      {"0", "5m"},
	"PAY_REMINDER_TEMPLATE_ID":       {"two words"},
	"ORDER_DETAIL_PATH":              {"pages/order/index?orderId=1"},
}

// Every function refuses to start when one of the variables template.yaml sets for it
// is missing, empty or (where it has a format) invalid, and its error names the
// variable. So every variable the template sets is one the function reads; and since
// the stack starts with the template's environment as it is, no function reads one
// the template does not set. The environments are the ones the stack hands each
// function (the template's, resolved locally); each wrong setting goes through the
// configuration loading every main and the stack run (its package's Load under internal/wiring/function), and one
// per function through local.Start itself, whose error must also name the function.
func TestFunctions_RefuseToStartOnAMissingOrInvalidSetting(t *testing.T) {
	envs := map[string]map[string]string{}
	stack, err := local.Start(context.Background(), local.StackConfig{
		Template:    template,
		Environment: func(function string, env map[string]string) { envs[function] = maps.Clone(env) },
	})
	if err != nil {
		t.Fatal(err)
	}
	stack.Close()
	functions, _ := templateFunctions(t)
	for _, f := range functions {
		_, ok := function.ByName(f.Name)
		if !ok || len(envs[f.Name]) != len(f.Environment) {
			t.Fatalf("%s: wiring %v, environment %v, template %v", f.Name, ok, envs[f.Name], f.Environment)
		}
		throughStart := true
		for _, name := range slices.Sorted(maps.Keys(f.Environment)) {
			for _, value := range append([]string{"<missing>", ""}, invalidValues[name]...) {
				set := func(env map[string]string) {
					if value == "<missing>" {
						delete(env, name)
					} else {
						env[name] = value
					}
				}
				env := maps.Clone(envs[f.Name])
				set(env)
				err := function.Check(f.Name, envvar.Map(env))
				if throughStart {
					throughStart = false
					_, err = local.Start(context.Background(), local.StackConfig{
						Template: template,
						Environment: func(function string, env map[string]string) {
							if function == f.Name {
								set(env)
							}
						},
					})
					if err != nil && !strings.Contains(err.Error(), f.Name) {
						t.Errorf("%s/%s=%s: error %q does not name the function", f.Name, name, value, err)
					}
				}
				if err == nil || !strings.Contains(err.Error(), name) {
					t.Errorf("%s/%s=%s: error %v, want one naming %s", f.Name, name, value, err, name)
				}
			}
		}
	}
}

// foreignEvents are invocation events by kind; "route:<key>" entries are HTTP API
// requests for one route, carrying a caller, a valid cart and the order id given, so
// that a function that served them would change something.
func foreignEvents(t *testing.T, routes []sam.Route, orderID string) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{
		"sqs":       json.RawMessage(`{"Records":[{"messageId":"m-1","eventSource":"aws:sqs","body":"{\"orderId\":\"` + orderID + `\",\"expiresAt\":\"2020-01-01T00:00:00Z\"}"}]}`),
		"scheduled": json.RawMessage(`{"version":"0","id":"e-1","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`),
		"array":     json.RawMessage(`[]`),
		"object":    json.RawMessage(`{}`),
		"s3":        json.RawMessage(`{"Records":[{"eventSource":"aws:s3"}]}`),
		"sns": json.RawMessage(`{"Records":[{"EventSource":"aws:sns","EventVersion":"1.0","Sns":{"Type":"Notification","Subject":"stockguard: books differ",` +
			`"Message":"{\"differences\":[{\"skuId\":\"cup-01\",\"rule\":\"available\",\"expected\":1,\"actual\":2}]}"}}]}`),
	}
	keys := []string{"DELETE /orders/{orderId}"}
	for _, r := range routes {
		keys = append(keys, r.Method+" "+r.Path)
	}
	for _, key := range keys {
		params := map[string]string{} // as API Gateway sends them: the route's own only
		for name, v := range map[string]string{"orderId": orderID, "skuId": "cup-01"} {
			if strings.Contains(key, "{"+name+"}") {
				params[name] = v
			}
		}
		req := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: key, RawPath: "/", Body: `{"items":[{"skuId":"cup-01","qty":1}]}`,
			Headers:        map[string]string{"content-type": "application/json"},
			PathParameters: params,
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RouteKey: key, RequestID: "r-1",
				Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
					JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "buyer-1"}},
				},
			},
		}
		data, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		out["route:"+key] = data
	}
	return out
}

// owns reports whether function serves the event named kind: its own routes, and the
// SQS and schedule events template.yaml gives it.
func owns(f sam.Function, routes []sam.Route, kind string) bool {
	switch kind {
	case "sqs":
		return len(f.Events.SQS) > 0
	case "scheduled":
		return len(f.Events.Schedule) > 0
	case "sns":
		return len(f.Events.SNS) > 0
	}
	return slices.ContainsFunc(routes, func(r sam.Route) bool { return r.Function == f.Name && "route:"+r.Method+" "+r.Path == kind })
}

// Every function given an event or a route it does not own returns an error and
// changes nothing: no order, stock or ledger entry moves.
func TestFunctions_RefuseEventsTheyDoNotOwn(t *testing.T) {
	functions, routes := templateFunctions(t)
	stack := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":100,"stock":10}]`})
	// A PENDING order, which a cancel routed to the wrong function would release.
	order := invokeHTTP(t, stack, "CreateOrderFunction", foreignEvents(t, routes, "")["route:POST /orders"])
	id, _ := order["orderId"].(string)
	if id == "" {
		t.Fatalf("create order: %v", order)
	}
	before := stack.Snapshot(t)
	evs := foreignEvents(t, routes, id)
	refused := 0
	for _, f := range functions {
		for _, kind := range slices.Sorted(maps.Keys(evs)) {
			if owns(f, routes, kind) {
				continue
			}
			out, err := stack.Handlers[f.Name].Invoke(context.Background(), evs[kind])
			if err == nil {
				t.Errorf("%s served %s: %s", f.Name, kind, out)
			}
			refused++
		}
	}
	if after := stack.Snapshot(t); after != before {
		t.Errorf("refused events changed the tables:\nbefore %s\nafter  %s", before, after)
	}
	if refused < len(functions)*len(evs)/2 {
		t.Errorf("only %d foreign events tried", refused)
	}
}

func invokeHTTP(t *testing.T, stack *stacktest.Stack, function string, event json.RawMessage) map[string]any {
	t.Helper()
	out, err := stack.Handlers[function].Invoke(context.Background(), event)
	if err != nil {
		t.Fatal(err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("%d %q", resp.StatusCode, resp.Body)
	}
	return body
}
