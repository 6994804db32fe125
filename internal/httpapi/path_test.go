package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// A path parameter is checked before the route runs, by the same rule as the same kind
// of id in a body: one no record can have is 400 INVALID_REQUEST naming the parameter,
// not echoing its value (nor logging it), and the route does not run; a valid one
// reaches the route. A parameter without a rule is a wiring mistake: 500 INTERNAL.
func TestHandle_ChecksEveryPathParameterBeforeTheRoute(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, c := range []struct {
		params map[string]string
		status int
		names  string // the parameter the message names ("" for none)
	}{
		{map[string]string{"skuId": "drop-1"}, http.StatusOK, ""},
		{map[string]string{"skuId": long}, http.StatusBadRequest, "skuId"},
		{map[string]string{"skuId": ".."}, http.StatusBadRequest, "skuId"},
		{map[string]string{"orderId": "0123456789abcdef"}, http.StatusOK, ""},
		{map[string]string{"orderId": long}, http.StatusBadRequest, "orderId"},
		{map[string]string{"orderId": "abc"}, http.StatusBadRequest, "orderId"},
		{map[string]string{"ticket": strings.Repeat("0a", 16)}, http.StatusOK, ""},
		{map[string]string{"ticket": long}, http.StatusBadRequest, "ticket"},
		{map[string]string{"orderId": "0123456789abcdef", "outRefundNo": "r-1"}, http.StatusOK, ""},
		{map[string]string{"orderId": "0123456789abcdef", "outRefundNo": long}, http.StatusBadRequest, "outRefundNo"},
		{map[string]string{"orderId": "0123456789abcdef", "aftersaleId": "as 1"}, http.StatusOK, ""},
		{map[string]string{"orderId": "0123456789abcdef", "aftersaleId": long}, http.StatusBadRequest, "aftersaleId"},
		{map[string]string{"orderId": "0123456789abcdef", "aftersaleId": "a\x00"}, http.StatusBadRequest, "aftersaleId"},
		{map[string]string{"openid": "o-buyer 1"}, http.StatusOK, ""},
		{map[string]string{"openid": long}, http.StatusBadRequest, "openid"},
		{map[string]string{"openid": "o\x7f"}, http.StatusBadRequest, "openid"},
		{map[string]string{"name": "o1"}, http.StatusInternalServerError, ""},
	} {
		var logged bytes.Buffer
		ran := 0
		h := New("createOrder", slog.New(slog.NewJSONHandler(&logged, nil)), map[string]Route{
			"GET /x": func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
				ran++
				return JSON(http.StatusOK, struct{}{}), nil
			},
		})
		resp, err := h.Handle(context.Background(), events.APIGatewayV2HTTPRequest{RouteKey: "GET /x", PathParameters: c.params})
		if err != nil || resp.StatusCode != c.status || (ran == 1) != (c.status == http.StatusOK) {
			t.Errorf("%.40v: %d %v, route ran %d times; want %d", c.params, resp.StatusCode, err, ran, c.status)
			continue
		}
		if c.status != http.StatusBadRequest {
			continue
		}
		var body struct{ Code, Message, SKUID string }
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body.Code != "INVALID_REQUEST" ||
			!strings.HasPrefix(body.Message, c.names+" must be ") || body.SKUID != "" {
			t.Errorf("%.40v: body %.200s, want INVALID_REQUEST naming %s", c.params, resp.Body, c.names)
		}
		if strings.Contains(resp.Body+logged.String(), long[:100]) {
			t.Errorf("%.40v: the value is echoed in the answer or the log", c.params)
		}
	}
}
