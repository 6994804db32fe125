package local

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ConsoleHandler is a slog.Handler for a person watching `go run ./cmd/local` in a
// terminal. It writes one short line per event:
//
//	21:08:23 POST /orders 201 3ms order=01a22e4d25777d1cbbb0baf65cdb8d12
//	21:09:00 paid order=01a22e4d25777d1cbbb0baf65cdb8d12 (PAID)
//	21:09:00 released 3 orders (sweep)
//	21:09:00 reconcile clean: 1 SKUs checked
//
// and leaves out what only machines read: the functions' own per-request records
// (the gateway's line says the same), CloudWatch metric records ("metrics"), and
// queue and sweep runs that released nothing. Records at warn level and above are
// always written, every attribute included, prefixed with WARN or ERROR. Use
// slog.NewJSONHandler for the complete JSON records instead.
type ConsoleHandler struct {
	w     io.Writer
	mu    *sync.Mutex // shared by the handlers derived with WithAttrs/WithGroup
	attrs []slog.Attr
	group string // prefix of the keys of attributes added from now on
}

// NewConsoleHandler returns a ConsoleHandler writing to w; calls may come from many
// goroutines at once.
func NewConsoleHandler(w io.Writer) *ConsoleHandler {
	return &ConsoleHandler{w: w, mu: &sync.Mutex{}}
}

// Enabled reports whether level is Info or above.
func (h *ConsoleHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *ConsoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), h.qualify(attrs)...)
	return &c
}

// WithGroup returns a handler that puts later attributes under name (as "name.key").
func (h *ConsoleHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = h.group + name + "."
	return &c
}

func (h *ConsoleHandler) qualify(attrs []slog.Attr) []slog.Attr {
	if h.group == "" {
		return attrs
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = slog.Attr{Key: h.group + a.Key, Value: a.Value}
	}
	return out
}

// Handle writes r as one line, or nothing (see ConsoleHandler).
func (h *ConsoleHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := append([]slog.Attr(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, h.qualify([]slog.Attr{a})...)
		return true
	})
	text, ok := consoleText(r.Message, r.Level, attrs)
	if !ok {
		return nil
	}
	if r.Level >= slog.LevelWarn {
		text = r.Level.String() + " " + text
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintf(h.w, "%s %s\n", r.Time.Format("15:04:05"), printable(text))
	return err
}

// maxConsoleLine bounds a console line, in bytes, before "…" (a caller's path or
// header can be any length).
const maxConsoleLine = 512

// printable escapes the control characters of line (Go escapes, e.g. \n, \x00) and
// cuts it at maxConsoleLine bytes, so that text a caller chose (a path, an id) can
// neither forge another line nor flood the terminal.
func printable(line string) string {
	var b strings.Builder
	for _, r := range line {
		if b.Len() >= maxConsoleLine {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fields looks attributes up by key.
type fields []slog.Attr

// str is the attribute's value as text, "" when it is missing.
func (f fields) str(key string) string {
	for _, a := range f {
		if a.Key == key {
			return a.Value.Resolve().String()
		}
	}
	return ""
}

// num is the attribute's value as an integer, 0 when it is missing or not one.
func (f fields) num(key string) int64 {
	n, _ := strconv.ParseInt(f.str(key), 10, 64)
	return n
}

// consoleText is the line for a record with message msg, or false to leave it out.
func consoleText(msg string, level slog.Level, f fields) (string, bool) {
	quiet := level < slog.LevelWarn
	switch {
	case msg == "request" && f.str("method") != "":
		return requestLine(f), true
	case quiet && msg == "request" && f.str("result") != "":
		return fmt.Sprintf("paid order=%s (%s)", f.str("outTradeNo"), f.str("result")), true
	case quiet && msg == "request" && f.str("refundStatus") != "":
		return fmt.Sprintf("refund %s (%s)", f.str("outRefundNo"), f.str("refundStatus")), true
	case quiet && msg == "stuck refunds" && f.num("found") == 0:
		return "", false
	case quiet && (msg == "metrics" || msg == "request" || msg == "sqs batch"):
		return "", false // the gateway's line says it; an empty poll says nothing
	case quiet && (msg == "sweep" || msg == "close messages"):
		if f.num("released") == 0 {
			return "", false
		}
		from := map[string]string{"sweep": "sweep", "close messages": "close-order queue"}[msg]
		return fmt.Sprintf("released %d order(s) (%s)", f.num("released"), from), true
	case quiet && msg == "reconcile":
		return fmt.Sprintf("reconcile clean: %d SKUs checked", f.num("skusChecked")), true
	case msg == "reconcile":
		return "reconcile NOT clean: " + joinAttrs(f), true
	}
	return strings.TrimSpace(msg + " " + joinAttrs(f)), true
}

// requestLine is the gateway's access record: method, route, status, time, order id.
func requestLine(f fields) string {
	route := f.str("routeKey")
	if route == "" {
		route = f.str("method") + " " + f.str("path")
	}
	line := fmt.Sprintf("%s %d %dms", route, f.num("status"), f.num("durationMs"))
	if id := f.str("orderId"); id != "" {
		line += " order=" + id
	}
	return line
}

// joinAttrs formats attrs as key=value pairs, quoting values with spaces; the
// CloudWatch metric directive (_aws) is left out.
func joinAttrs(attrs []slog.Attr) string {
	var b strings.Builder
	for _, a := range attrs {
		if a.Key == "_aws" || a.Equal(slog.Attr{}) {
			continue
		}
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\n\"=") {
			v = strconv.Quote(v)
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Key + "=" + v)
	}
	return b.String()
}
