package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// A body over the route's limit, as text or base64, is 413 PAYLOAD_TOO_LARGE saying the
// limit (not 400: nothing is wrong with its form); one at the limit is read.
func TestHandle_BodyOverTheRoutesLimitIs413(t *testing.T) {
	const limit = 1 << 10
	h := New("createOrder", slog.New(slog.DiscardHandler), map[string]Route{
		"POST /x": func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			var v struct{ A *string }
			if _, err := DecodeFields(req, limit, &v, `{"A":"…"}`, "A"); err != nil {
				return events.APIGatewayV2HTTPResponse{}, err
			}
			return JSON(http.StatusOK, struct{}{}), nil
		},
	})
	body := func(n int) string { return `{"A":"` + strings.Repeat("x", n-8) + `"}` }
	for _, c := range []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		status int
	}{
		{"at the limit", events.APIGatewayV2HTTPRequest{Body: body(limit)}, http.StatusOK},
		{"a byte over", events.APIGatewayV2HTTPRequest{Body: body(limit + 1)}, http.StatusRequestEntityTooLarge},
		{"1 MB", events.APIGatewayV2HTTPRequest{Body: body(1 << 20)}, http.StatusRequestEntityTooLarge},
		{"base64, a byte over", events.APIGatewayV2HTTPRequest{Body: base64.StdEncoding.EncodeToString([]byte(body(limit + 1))), IsBase64Encoded: true}, http.StatusRequestEntityTooLarge},
	} {
		c.req.RouteKey = "POST /x"
		resp, err := h.Handle(context.Background(), c.req)
		if err != nil || resp.StatusCode != c.status {
			t.Errorf("%s: %d %v, want %d", c.name, resp.StatusCode, err, c.status)
			continue
		}
		if want := `{"code":"PAYLOAD_TOO_LARGE","message":"body must not exceed 1024 bytes"}`; c.status != http.StatusOK && resp.Body != want {
			t.Errorf("%s: body %s, want %s", c.name, resp.Body, want)
		}
	}
	if _, err := Body(events.APIGatewayV2HTTPRequest{Body: body(limit + 1)}, limit); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("Body: %v, want ErrBodyTooLarge", err)
	}
}
