package local

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestConsoleHandler_WritesOneReadableLinePerEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want string // "" for no line; the line without its time
	}{
		{"gateway request with an order", func(l *slog.Logger) {
			l.Info("request", "requestId", "r1", "method", "POST", "path", "/orders", "routeKey", "POST /orders", "status", 201, "durationMs", int64(3), "orderId", "o1")
		}, "POST /orders 201 3ms order=o1"},
		{"gateway request without a route", func(l *slog.Logger) {
			l.Info("request", "method", "GET", "path", "/nope", "routeKey", "", "status", 404, "durationMs", int64(0), "orderId", "")
		}, "GET /nope 404 0ms"},
		{"function's own request record", func(l *slog.Logger) {
			l.With("function", "CreateOrderFunction").Info("request", "route", "POST /orders", "status", 201)
		}, ""},
		{"function's failed request", func(l *slog.Logger) {
			l.With("function", "CreateOrderFunction").Error("request", "route", "POST /orders", "status", 500, "error", "store down")
		}, `ERROR request function=CreateOrderFunction route="POST /orders" status=500 error="store down"`},
		{"metrics", func(l *slog.Logger) { l.Info("metrics", "Function", "closeOrder", "Released", 1.0) }, ""},
		{"empty poll", func(l *slog.Logger) { l.Info("sqs batch", "received", 0) }, ""},
		{"sweep that released nothing", func(l *slog.Logger) { l.Info("sweep", "due", 0, "released", 0) }, ""},
		{"sweep that released", func(l *slog.Logger) { l.Info("sweep", "due", 3, "released", 3) }, "released 3 order(s) (sweep)"},
		{"close message", func(l *slog.Logger) { l.Info("close messages", "records", 1, "released", 1) }, "released 1 order(s) (close-order queue)"},
		{"payment", func(l *slog.Logger) {
			l.Info("request", "route", "POST /payments/wechatpay/notify", "outTradeNo", "o1", "result", "PAID", "status", 204)
		}, "paid order=o1 (PAID)"},
		{"clean reconcile", func(l *slog.Logger) { l.Info("reconcile", "skusChecked", 2, "differences", []string{}) }, "reconcile clean: 2 SKUs checked"},
		{"reconcile with differences", func(l *slog.Logger) { l.Warn("reconcile", "skusChecked", 2, "differences", []string{"cup"}) }, "WARN reconcile NOT clean: skusChecked=2 differences=[cup]"},
		{"a path that tries to forge a line", func(l *slog.Logger) {
			l.Info("request", "method", "GET", "path", "/orders/\x00\n22:24:01 paid order=x (PAID)", "routeKey", "", "status", 404, "durationMs", int64(0))
		}, `GET /orders/\x00\n22:24:01 paid order=x (PAID) 404 0ms`},
		{"a flood of a path", func(l *slog.Logger) {
			l.Info("request", "method", "GET", "path", "/"+strings.Repeat("a", 5000), "routeKey", "", "status", 404, "durationMs", int64(0))
		}, "GET /" + strings.Repeat("a", maxConsoleLine-len("GET /")) + "…"},
		{"grouped attributes", func(l *slog.Logger) { l.WithGroup("g").Info("ready", "api", "http://x") }, "ready g.api=http://x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(slog.New(NewConsoleHandler(&buf)))
			got := buf.String()
			if tt.want == "" {
				if got != "" {
					t.Errorf("wrote %q, want nothing", got)
				}
				return
			}
			if _, line, ok := strings.Cut(strings.TrimSuffix(got, "\n"), " "); !ok || line != tt.want || strings.Count(got, "\n") != 1 {
				t.Errorf("wrote %q, want one line %q after the time", got, tt.want)
			}
		})
	}
}
