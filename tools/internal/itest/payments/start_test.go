package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/internal/wiring/function/closeorder"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// cupAndSaucer is a cart of the standard seed.
const cupAndSaucer = `{"items":[{"skuId":"cup","qty":2},{"skuId":"saucer","qty":1}]}`

// payWithoutBase is a closeOrder built as functions/closeOrder builds it (package
// closeorder) from a configuration whose NOTIFY_BASE_URL is base ("" when NotifyBaseUrl is
// empty), in front of a WeChat Pay stand-in of its own whose notifications reach the
// stack's API.
func payWithoutBase(t *testing.T, h *stacktest.Stack, base string) (*lambdaevent.Function, *paytest.Server) {
	t.Helper()
	merchant, err := paytest.NewMerchant()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := h.Payments.MerchantSecret(merchant, "")
	if err != nil {
		t.Fatal(err)
	}
	server := paytest.NewServer(h.Payments, merchant, paytest.ServerOptions{Now: h.Clock.Now, HTTPClient: &http.Client{Transport: toAPI{h}}})
	if err := server.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	client, err := wechatpay.NewRotatingClient(context.Background(), func(context.Context) ([]byte, error) { return secret, nil },
		wechatpay.RotateOptions{Now: h.Clock.Now, BaseURL: server.URL()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := closeorder.Build(closeorder.Config{NotifyBaseURL: base, OpenIDClaim: "sub"}, slog.New(slog.DiscardHandler), h.Store, nil, nil, nil, client)
	if err != nil {
		t.Fatal(err)
	}
	return f, server
}

// toAPI delivers the stand-in's notifications to the stack's API in-process, whatever
// host notify_url names, and without the path an API mapping adds before the route
// (API Gateway strips it: "/mall/payments/…" on a custom domain is "/payments/…").
type toAPI struct{ h *stacktest.Stack }

func (p toAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	if i := strings.Index(r.URL.Path, "/payments/"); i > 0 {
		r.URL.Path = r.URL.Path[i:]
	}
	rec := httptest.NewRecorder()
	p.h.API.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// payEvent is the HTTP API event of POST /orders/{id}/pay by user, reached at domain
// with rawPath.
func payEvent(id, user, domain, rawPath string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: payments.RoutePay, RawPath: rawPath,
		PathParameters: map[string]string{"orderId": id},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: payments.RoutePay, DomainName: domain, Stage: "$default", RequestID: "r-" + id,
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": user}},
			},
		},
	}
}

func invokePay(t *testing.T, f *lambdaevent.Function, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	data, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Invoke(context.Background(), data)
	if err != nil {
		t.Fatalf("pay: %v", err)
	}
	return out.(events.APIGatewayV2HTTPResponse)
}

func TestNotifyPath_IsPayCallbackNotifyRoute(t *testing.T) {
	if want := strings.TrimPrefix(payments.RouteNotify, "POST "); payments.NotifyPath != want {
		t.Errorf("NotifyPath %q, want the notify route's path %q", payments.NotifyPath, want)
	}
}

// Without NOTIFY_BASE_URL the JSAPI order's notify_url is the https URL the pay
// request reached (the API's own host, or a custom domain and its API mapping) plus
// the notify route; with it, the base given. The payment then reaches payCallback.
func TestPay_NotifyURLIsTheHostThePayRequestReachedUnlessABaseIsSet(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{})
	for i, tt := range []struct{ base, domain, prefix, want string }{
		{"", "a1b2c3d4e5.execute-api.ap-east-1.amazonaws.com", "", "https://a1b2c3d4e5.execute-api.ap-east-1.amazonaws.com/payments/wechatpay/notify"},
		{"", "shop.example.com", "/mall", "https://shop.example.com/mall/payments/wechatpay/notify"},
		{"https://pay.example.com/wx", "a1b2c3d4e5.execute-api.ap-east-1.amazonaws.com", "", "https://pay.example.com/wx/payments/wechatpay/notify"},
	} {
		f, server := payWithoutBase(t, h, tt.base)
		buyer := fmt.Sprintf("buyer-notify-%d", i)
		id := h.Order(t, buyer, cupAndSaucer)
		resp := invokePay(t, f, payEvent(id, buyer, tt.domain, tt.prefix+"/orders/"+id+"/pay"))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pay %s at %s%s: %d %s", id, tt.domain, tt.prefix, resp.StatusCode, resp.Body)
		}
		if o, ok := server.Order(id); !ok || o.NotifyURL != tt.want {
			t.Errorf("base %q, %s%s: JSAPI order %+v, want notify_url %s", tt.base, tt.domain, tt.prefix, o, tt.want)
		}
		if d, err := server.Pay(context.Background(), id, paytest.PayOptions{}); err != nil || d.StatusCode != http.StatusNoContent {
			t.Errorf("paying %s: notification answered %d %s (%v), want 204", id, d.StatusCode, d.Body, err)
		}
		if got := h.Lookup(t, id).Status; got != inventory.StatusPaid {
			t.Errorf("order %s %s after payment, want PAID", id, got)
		}
	}
}

// A pay request whose context names no usable host or path is answered 500 before
// anything happens: no JSAPI order, no prepay_id stored, the order still payable.
func TestPay_WithoutAUsableRequestHostChangesNothing(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{})
	f, server := payWithoutBase(t, h, "")
	id := h.Order(t, "buyer-notify", cupAndSaucer)
	for _, ev := range []events.APIGatewayV2HTTPRequest{
		payEvent(id, "buyer-notify", "", "/orders/"+id+"/pay"),
		payEvent(id, "buyer-notify", "evil.example.com/x?", "/orders/"+id+"/pay"),
		payEvent(id, "buyer-notify", "shop.example.com", "/orders/other/pay"),
		payEvent(id, "buyer-notify", "shop.example.com", ""),
	} {
		resp := invokePay(t, f, ev)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(resp.Body, `"INTERNAL"`) {
			t.Errorf("domain %q rawPath %q: %d %s, want 500 INTERNAL", ev.RequestContext.DomainName, ev.RawPath, resp.StatusCode, resp.Body)
		}
	}
	if o, ok := server.Order(id); ok {
		t.Errorf("a JSAPI order was placed: %+v", o)
	}
	if o := h.Lookup(t, id); o.Status != inventory.StatusPending || o.PrepayID != "" {
		t.Errorf("order %s: %s with prepay_id %q, want PENDING without one", id, o.Status, o.PrepayID)
	}
	h.Check(t)
}
