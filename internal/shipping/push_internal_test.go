package shipping

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

// A push's body over MaxMessageBytes is refused 413 FAIL before its signature is
// checked, signed or not, as on WeChat Pay's notification routes; a small unsigned
// one is 401. No store is given: none of these may reach it.
func TestPush_SizeIsCheckedBeforeTheSignature(t *testing.T) {
	now := time.Now()
	m := NewMessages(func(context.Context) string { return "tok" }, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
	signed, _ := wxapitest.SignPush("tok", wxapi.Push{MsgType: "text"}, now)
	big := `{"MsgType":"text","Content":"` + strings.Repeat("x", 1<<20) + `"}`
	for _, c := range []struct {
		name  string
		query map[string]string
		body  string
		want  int
	}{
		{"unsigned, 1 MB", nil, big, http.StatusRequestEntityTooLarge},
		{"signed, 1 MB", map[string]string{"signature": signed.Get("signature"), "timestamp": signed.Get("timestamp"), "nonce": signed.Get("nonce")}, big, http.StatusRequestEntityTooLarge},
		{"unsigned, small", nil, `{"MsgType":"text"}`, http.StatusUnauthorized},
	} {
		_, err := m.Push(context.Background(), events.APIGatewayV2HTTPRequest{RouteKey: RouteMessages, QueryStringParameters: c.query, Body: c.body})
		var f *httpapi.Failure
		if !errors.As(err, &f) || f.Status != c.want || f.Code != "FAIL" {
			t.Errorf("%s: %v, want %d FAIL", c.name, err, c.want)
		}
	}
}
