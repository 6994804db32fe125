package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
)

func TestNoDuplicateKeys_SeesEveryObject(t *testing.T) {
	for body, dup := range map[string]bool{
		`{"a":1,"b":{"a":1},"c":[{"a":1},{"a":1}]}`: false,
		`{"a":1,"a":2}`:             true,
		`[{"x":[1,{"y":1,"y":2}]}]`: true,
		`{"a":"a","b":"a"}`:         false,
		`{"a":{"b":1},"a":{"b":1}}`: true,
	} {
		if err := NoDuplicateKeys([]byte(body)); (err != nil) != dup {
			t.Errorf("%s: %v, want duplicate=%v", body, err, dup)
		}
	}
}

// The client sees the reason of an InvalidRequestError however deeply it is wrapped,
// and never the text of what wraps it.
func TestAnswer_InvalidRequestShowsOnlyTheReason(t *testing.T) {
	err := fmt.Errorf("reserve for user-1 in table orders-prod: %w", inventory.InvalidError("items[%d].qty must be positive", 3))
	resp := Answer(err)
	var body map[string]string
	if jerr := json.Unmarshal([]byte(resp.Body), &body); jerr != nil {
		t.Fatal(jerr)
	}
	if resp.StatusCode != http.StatusBadRequest || body["code"] != "INVALID_REQUEST" || body["message"] != "items[3].qty must be positive" {
		t.Errorf("%d %v", resp.StatusCode, body)
	}
}

func TestHandle_RefusesRoutesItDoesNotServe(t *testing.T) {
	called := 0
	h := New("createOrder", slog.New(slog.DiscardHandler), map[string]Route{
		"GET /skus/{skuId}": func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			called++
			return JSON(http.StatusOK, struct{}{}), nil
		},
	})
	for _, route := range []string{"", "POST /orders/{orderId}/cancel", "DELETE /skus/{skuId}"} {
		_, err := h.Handle(context.Background(), events.APIGatewayV2HTTPRequest{RouteKey: route})
		var refused *lambdaevent.NotServedError
		if !errors.As(err, &refused) || refused.Route != route || !errors.Is(err, lambdaevent.ErrNotServed) {
			t.Errorf("route %q: %v, want a NotServedError", route, err)
		}
	}
	if called != 0 {
		t.Errorf("the served route ran %d times for foreign routes", called)
	}
}

func TestHandle_PanicBecomesInternalError(t *testing.T) {
	h := New("createOrder", slog.New(slog.DiscardHandler), map[string]Route{
		"GET /skus/{skuId}": func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			panic("boom")
		},
	})
	resp, err := h.Handle(context.Background(), events.APIGatewayV2HTTPRequest{RouteKey: "GET /skus/{skuId}"})
	if err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("%d %v, want 500 and no error", resp.StatusCode, err)
	}
}

// A route's own *Failure is answered with its status and code, logged at its level
// with the route's annotations; AnswerWith decides what a panic becomes.
func TestHandle_FailureKeepsItsStatusCodeAndLevel(t *testing.T) {
	var logged bytes.Buffer
	h := New("payCallback", slog.New(slog.NewJSONHandler(&logged, nil)), map[string]Route{
		"POST /notify": func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			Annotate(ctx, slog.String("outTradeNo", "o1"))
			if req.Body == "panic" {
				panic("boom")
			}
			return events.APIGatewayV2HTTPResponse{}, &Failure{Status: http.StatusNotFound, Code: "FAIL", Message: "order not found", Level: slog.LevelError, Err: inventory.ErrOrderNotFound}
		},
	}).AnswerWith(func(err error) events.APIGatewayV2HTTPResponse {
		if errors.As(err, new(*Failure)) {
			return Answer(err)
		}
		return Answer(&Failure{Status: http.StatusInternalServerError, Code: "FAIL", Message: "internal error", Err: err})
	})
	for body, want := range map[string]string{
		"":      `404 {"code":"FAIL","message":"order not found"} ERROR`,
		"panic": `500 {"code":"FAIL","message":"internal error"} ERROR`,
	} {
		logged.Reset()
		resp, err := h.Handle(context.Background(), events.APIGatewayV2HTTPRequest{RouteKey: "POST /notify", Body: body})
		var line struct{ Level, OutTradeNo string }
		if jerr := json.Unmarshal(logged.Bytes(), &line); jerr != nil || line.OutTradeNo != "o1" {
			t.Errorf("log %s: %v, want one line naming o1", logged.String(), jerr)
		}
		if got := fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Body, line.Level); err != nil || got != want {
			t.Errorf("body %q: %s (%v), want %s", body, got, err, want)
		}
	}
}

func TestBody_RefusesTextThatIsNotUTF8(t *testing.T) {
	notUTF8 := "{\"name\":\"Cup \xff\"}"
	for _, tc := range []struct {
		name string
		req  events.APIGatewayV2HTTPRequest
		ok   bool
	}{
		{"UTF-8 text", events.APIGatewayV2HTTPRequest{Body: `{"name":"杯"}`}, true},
		{"UTF-8 in base64", events.APIGatewayV2HTTPRequest{Body: base64.StdEncoding.EncodeToString([]byte(`{"name":"杯"}`)), IsBase64Encoded: true}, true},
		{"invalid byte", events.APIGatewayV2HTTPRequest{Body: notUTF8}, false},
		{"invalid byte in base64", events.APIGatewayV2HTTPRequest{Body: base64.StdEncoding.EncodeToString([]byte(notUTF8)), IsBase64Encoded: true}, false},
		{"truncated sequence", events.APIGatewayV2HTTPRequest{Body: "{\"name\":\"\xe6\x9d\"}"}, false},
		{"escaped surrogate pair", events.APIGatewayV2HTTPRequest{Body: `{"name":"\ud834\udd1e \u676f"}`}, true},
		{"escaped backslash before u", events.APIGatewayV2HTTPRequest{Body: `{"name":"\\ud800"}`}, true},
		{"lone high surrogate", events.APIGatewayV2HTTPRequest{Body: `{"name":"cup\ud800"}`}, false},
		{"lone high surrogate at the end", events.APIGatewayV2HTTPRequest{Body: `"\uDBFF`}, false},
		{"high surrogate then a non-surrogate", events.APIGatewayV2HTTPRequest{Body: `{"name":"\ud800\u0041"}`}, false},
		{"lone low surrogate", events.APIGatewayV2HTTPRequest{Body: `{"name":"\udc00x"}`}, false},
		{"reversed pair", events.APIGatewayV2HTTPRequest{Body: `{"name":"\udd1e\ud834"}`}, false},
	} {
		_, err := Body(tc.req, 1024)
		var invalid *inventory.InvalidRequestError
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &invalid) || !strings.Contains(invalid.Reason, "UTF-8"))) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// A reason with < and > reaches the client as written, not as \u003c and \u003e; a
// refusal's reason replaces its code's fixed message.
func TestAnswer_TextAsWrittenAndRefusalReasons(t *testing.T) {
	resp := Answer(inventory.InvalidError(`body must be {"code": "<wx.login code>"}`))
	if !strings.Contains(resp.Body, `"<wx.login code>`) || strings.Contains(resp.Body, `\u003c`) {
		t.Errorf("body %s, want < and > as written", resp.Body)
	}
	resp = Answer(fmt.Errorf("refund: %w", &inventory.RefusalError{Err: inventory.ErrRefundNotAllowed, Reason: "order x is PENDING, never paid"}))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(resp.Body, `"REFUND_NOT_ALLOWED"`) || !strings.Contains(resp.Body, "is PENDING, never paid") {
		t.Errorf("refusal answered %d %s", resp.StatusCode, resp.Body)
	}
	resp = Answer(&inventory.RefusalError{Err: inventory.ErrRefundExceedsPaid, Reason: "2 of 1 left"})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(resp.Body, `"REFUND_EXCEEDS_PAID"`) {
		t.Errorf("exceeds answered %d %s", resp.StatusCode, resp.Body)
	}
}
