// Package testkit holds what stockguard's tests share that needs no local stack (see
// tools/internal/testing/stacktest for the stack): a settable clock, a way to start
// many calls at the same instant, a log sink the test can read back and DynamoDB fault
// injection. It imports the standard library only, so that the service module's tests
// and the tools module's share it.
package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Clock is a settable clock for the Now options of the store and the functions; safe
// for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at 2026-11-11T00:00:00Z.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Parallel runs fn(0) … fn(n−1) in n goroutines released together, and returns when
// all have returned.
func Parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// Log collects JSON log lines (give it to slog.NewJSONHandler); safe for a logger and a
// test to share.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Lines decodes the lines written so far; the error names the first that is not a
// JSON object.
func (l *Log) Lines() ([]map[string]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, fmt.Errorf("log line %q is not JSON: %w", line, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// NetworkAddress returns an IPv4 address of this machine that is not a loopback or
// link-local one, for tests of what a listener serves to other machines; it skips t on
// a machine with none.
func NetworkAddress(t testing.TB) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	t.Skip("no IPv4 address besides loopback on this machine")
	return nil
}

// FailDynamoDB returns a DynamoDB server middleware (for local.StackConfig.DynamoDBWrap)
// that answers 500 InternalServerError to every request for which fail returns true,
// given the X-Amz-Target operation (e.g. "DynamoDB_20120810.TransactWriteItems") and
// the request body; the others pass through.
func FailDynamoDB(fail func(target string, body []byte) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if fail(r.Header.Get("X-Amz-Target"), body) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected"}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Eventually polls cond every 50 ms until it holds, failing t when limit passes first
// (for tests that wait on background work: queue pollers, resent notifications). what
// names the condition in the failure.
func Eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ModuleRoot returns the service module's root: the nearest directory at or above the
// test's working directory (its package's folder) whose go.mod declares module
// github.com/stockguard/stockguard. That is the repository root, where template.yaml,
// the Makefile and go.work live, for the tests of the tools module (tools/) too. It
// fails t when there is none.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(data) == serviceModule {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of module %s above the test's directory", serviceModule)
		}
		dir = parent
	}
}

// serviceModule is the service's module path, declared by the go.mod at the repository
// root.
const serviceModule = "github.com/stockguard/stockguard"

// modulePath returns the module path a go.mod file declares in its module directive
// (Go Modules Reference, "module directive"), "" when it has none.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(path), `"`)
		}
	}
	return ""
}

// Must returns what build makes of arg, failing t when build returns an error: for the
// constructors a test sets up with, such as wechatpay.NewClient or wxlogin.New.
func Must[A, V any](t testing.TB, build func(A) (V, error), arg A) V {
	t.Helper()
	v, err := build(arg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
