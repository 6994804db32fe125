package sam_test

import (
	"testing"

	"github.com/stockguard/stockguard/tools/internal/sam"
)

// The whole-sale rehearsal (tools/internal/rehearse) models API Gateway's and Lambda's
// quotas from what the template sets: the stage's default route throttle (the
// ApiThrottle parameters), the login route's own throttle, the reserved concurrency
// of the functions that guard their capacity and the close-order queue's maximum
// concurrency.
func TestWiring_QuotasInFrontOfTheFunctions(t *testing.T) {
	routes, err := loadRealTemplate(t).Routes()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sam.Throttle{
		"POST /orders":                          {Rate: 500, Burst: 1000},
		"GET /skus/{skuId}":                     {Rate: 500, Burst: 1000},
		"POST /payments/wechatpay/notify":       {Rate: 500, Burst: 1000},
		"POST /auth/wechat":                     {Rate: 100, Burst: 200},
		"GET /.well-known/jwks.json":            {Rate: 50, Burst: 100},
		"POST /orders/{orderId}/pay":            {Rate: 500, Burst: 1000},
		"POST /admin/skus":                      {Rate: 500, Burst: 1000},
		"POST /orders/{orderId}/cancel":         {Rate: 500, Burst: 1000},
		"GET /.well-known/openid-configuration": {Rate: 50, Burst: 100},
	}
	for _, r := range routes {
		w, ok := want[r.Method+" "+r.Path]
		if !ok || r.API == "ConsoleApi" { // ConsoleApi serves the staff's admin routes, at its own rate
			continue
		}
		if !ok {
			continue
		}
		if r.Throttle == nil || *r.Throttle != w {
			t.Errorf("%s %s: throttle %+v, want %+v", r.Method, r.Path, r.Throttle, w)
		}
		delete(want, r.Method+" "+r.Path)
	}
	if len(want) > 0 {
		t.Errorf("routes missing: %v", want)
	}
	functions := realByName(t, (*sam.Template).Functions, func(f sam.Function) string { return f.Name })
	reserved := map[string]int{"CloseOrderFunction": 20, "PayCallbackFunction": 20, "ReconcileFunction": 1, "AlertChatFunction": 2, "AdmitterFunction": 2}
	for name, f := range functions {
		want, ok := reserved[name]
		switch {
		case ok && (f.ReservedConcurrency == nil || *f.ReservedConcurrency != want):
			t.Errorf("%s: reserved concurrency %v, want %d", name, f.ReservedConcurrency, want)
		case !ok && f.ReservedConcurrency != nil:
			t.Errorf("%s: reserved concurrency %d, want none", name, *f.ReservedConcurrency)
		}
	}
	for name, want := range map[string]int{"CloseOrderFunction": 10, "RefundFunction": 2, "WeChatFunction": 5, "AlertChatFunction": 2} {
		if sqs := functions[name].Events.SQS; len(sqs) != 1 || sqs[0].MaximumConcurrency != want {
			t.Errorf("%s's SQS events %+v, want one with MaximumConcurrency %d", name, sqs, want)
		}
	}
}

// Every SQS event source is capped (ScalingConfig.MaximumConcurrency, 2 to 1,000:
// Lambda API Reference, ScalingConfig), so no burst on a queue scales its consumer by
// up to 300 instances a minute into a downstream's rate limits or the account's
// concurrency ("Configuring scaling behavior for SQS event source mappings"); and no
// cap is above the function's reserved concurrency, which would only turn the excess
// into throttles (AWS re:Post Knowledge Center, knowledge-center/lambda-sqs-scaling:
// "maximum concurrency" and reserved concurrency work together).
func TestWiring_EverySQSEventSourceHasAMaximumConcurrency(t *testing.T) {
	sources := 0
	for _, f := range realFunctions(t) {
		for _, ev := range f.Events.SQS {
			sources++
			switch m := ev.MaximumConcurrency; {
			case m < 2 || m > 1000:
				t.Errorf("%s event %s: MaximumConcurrency %d, want 2 to 1,000", f.Name, ev.Name, m)
			case f.ReservedConcurrency != nil && m > *f.ReservedConcurrency:
				t.Errorf("%s event %s: MaximumConcurrency %d above the function's reserved concurrency %d", f.Name, ev.Name, m, *f.ReservedConcurrency)
			}
		}
	}
	if sources < 3 {
		t.Errorf("%d SQS event sources, want at least the close-order, refund and WeChat queues'", sources)
	}
}
