// Package testkit holds what stockguard's integration tests share besides the local
// stack: a settable clock, a way to start many calls at the same instant, and a log
// sink the test can read back.
package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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
