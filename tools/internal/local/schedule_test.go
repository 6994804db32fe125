package local

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		expr        string
		want        time.Duration // 0: an error
		unsupported bool          // the error wraps ErrUnsupportedSchedule
	}{
		{expr: "rate(1 minute)", want: time.Minute},
		{expr: "rate(5 minutes)", want: 5 * time.Minute},
		{expr: "rate(1 hour)", want: time.Hour},
		{expr: "rate(2 hours)", want: 2 * time.Hour},
		{expr: "rate(1 day)", want: 24 * time.Hour},
		{expr: "rate(7 days)", want: 7 * 24 * time.Hour},
		{expr: "rate(1 minutes)"},
		{expr: "rate(5 minute)"},
		{expr: "rate(1 days)"},
		{expr: "rate(0 minutes)"},
		{expr: "rate(0 minute)"},
		{expr: "rate(-5 minutes)"},
		{expr: "rate(1.5 hours)"},
		{expr: "rate(30 seconds)"},
		{expr: "rate(5 Minutes)"},
		{expr: "Rate(5 minutes)"},
		{expr: "rate(5minutes)"},
		{expr: "rate(5  minutes)"},
		{expr: "rate( 5 minutes)"},
		{expr: "rate(5 minutes) "},
		{expr: "rate(5 minutes"},
		{expr: "rate()"},
		{expr: "rate(999999999 days)"},            // overflows time.Duration
		{expr: "rate(99999999999999999999 days)"}, // overflows int64
		{expr: ""},
		{expr: "every 5 minutes"},
		{expr: "cron(0 * * * ? *)", unsupported: true},
		{expr: "cron(0/5 8-17 ? * MON-FRI *)", unsupported: true},
		{expr: "at(2026-03-01T08:00:00)", unsupported: true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := ParseRate(tt.expr)
			if tt.want != 0 {
				if err != nil || got != tt.want {
					t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.expr, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseRate(%q) = %v, want an error", tt.expr, got)
			}
			if errors.Is(err, ErrUnsupportedSchedule) != tt.unsupported {
				t.Errorf("ParseRate(%q) error %q: errors.Is(ErrUnsupportedSchedule) = %v, want %v", tt.expr, err, !tt.unsupported, tt.unsupported)
			}
		})
	}
}

func TestScheduledEvent_IsWhatEventBridgeSendsForARule(t *testing.T) {
	now := time.Date(2026, 3, 1, 16, 0, 5, 123456789, time.FixedZone("CST", 8*3600))
	tests := []struct {
		name    string
		ruleARN string
		want    string // the event's JSON without its id
	}{
		{"region and account from the rule ARN", "arn:aws:events:ap-east-1:123456789012:rule/stockguard-CloseExpired",
			`{"version":"0","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012","time":"2026-03-01T08:00:05Z","region":"ap-east-1","resources":["arn:aws:events:ap-east-1:123456789012:rule/stockguard-CloseExpired"],"detail":{}}`},
		{"local region and account for a name", "CloseExpired",
			`{"version":"0","detail-type":"Scheduled Event","source":"aws.events","account":"000000000000","time":"2026-03-01T08:00:05Z","region":"us-east-1","resources":["CloseExpired"],"detail":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ScheduledEvent(now, tt.ruleARN)
			if _, err := uuid.Parse(e.ID); err != nil {
				t.Errorf("id %q is not a UUID: %v", e.ID, err)
			}
			if other := ScheduledEvent(now, tt.ruleARN); other.ID == e.ID {
				t.Errorf("two events share id %q", e.ID)
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var fields map[string]any
			if err := json.Unmarshal(b, &fields); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			delete(fields, "id")
			got, _ := json.Marshal(fields) // sorted keys
			var wantFields map[string]any
			if err := json.Unmarshal([]byte(tt.want), &wantFields); err != nil {
				t.Fatalf("want: %v", err)
			}
			want, _ := json.Marshal(wantFields)
			if string(got) != string(want) {
				t.Errorf("event = %s\nwant    %s", got, want)
			}
		})
	}
}

// fakeClock is a clock for every: wait advances it by the time asked, and a
// call of fn may advance it to play a slow call.
type fakeClock struct {
	now   time.Duration // since the start
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { return time.Unix(0, 0).Add(c.now) }

func (c *fakeClock) wait(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.waits = append(c.waits, d)
	c.now += max(d, 0)
	return nil
}

func TestEvery_CallsOnAFixedGridSkippingTicksACallOverran(t *testing.T) {
	const p = time.Minute
	tests := []struct {
		name      string
		durations []time.Duration // how long each call runs; the last call cancels
		wantAt    []time.Duration // when each call starts
	}{
		{"first call after one period, then every period",
			[]time.Duration{0, 0, 0}, []time.Duration{p, 2 * p, 3 * p}},
		{"calls shorter than the period keep the grid",
			[]time.Duration{p / 4, p / 2, 0}, []time.Duration{p, 2 * p, 3 * p}},
		{"a call overrunning two ticks skips them",
			[]time.Duration{0, 5 * p / 2, 0}, []time.Duration{p, 2 * p, 5 * p}},
		{"a call ending on a tick skips it",
			[]time.Duration{p, 0}, []time.Duration{p, 3 * p}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			clock := &fakeClock{}
			var at []time.Duration
			every(ctx, p, func(context.Context) {
				at = append(at, clock.now)
				clock.now += tt.durations[len(at)-1]
				if len(at) == len(tt.durations) {
					cancel()
				}
			}, clock.Now, clock.wait)
			if len(at) != len(tt.wantAt) {
				t.Fatalf("calls at %v, want %v", at, tt.wantAt)
			}
			for i := range at {
				if at[i] != tt.wantAt[i] {
					t.Fatalf("calls at %v, want %v", at, tt.wantAt)
				}
			}
		})
	}
}

func TestEvery_NeverRunsTwoCallsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var running, overlaps, calls atomic.Int64
	firstStarted, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func(ctx context.Context) {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			if calls.Add(1) == 1 {
				close(firstStarted)
				<-release // overrun many periods
			}
		})
	}()
	select {
	case <-firstStarted:
	case <-time.After(eventually):
		t.Fatalf("no call within %v", eventually)
	}
	time.Sleep(50 * time.Millisecond) // 50 periods: an overlapping call would start now
	if n := calls.Load(); n != 1 {
		t.Errorf("%d calls started while the first ran, want 1", n)
	}
	close(release)
	deadline := time.Now().Add(eventually)
	for calls.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(eventually):
		t.Fatalf("Every still running %v after cancel", eventually)
	}
	if n := calls.Load(); n < 20 {
		t.Errorf("%d calls within %v after release, want at least 20", n, eventually)
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d calls started while another ran", n)
	}
}

func TestEvery_StopsOnCancel(t *testing.T) {
	tests := []struct {
		name      string
		period    time.Duration
		wantCalls int64
	}{
		// Every must stop waiting for a tick an hour away.
		{"while waiting for a tick", time.Hour, 0},
		// The call returns on cancel; ticks passed during it must not bring
		// another call.
		{"while a call runs", time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var calls atomic.Int64
			started := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				Every(ctx, tt.period, func(ctx context.Context) {
					if calls.Add(1) == 1 {
						close(started)
					}
					<-ctx.Done()
				})
			}()
			if tt.wantCalls > 0 {
				select {
				case <-started:
				case <-time.After(eventually):
					t.Fatalf("no call within %v", eventually)
				}
				time.Sleep(10 * time.Millisecond) // let ticks pass during the call
			}
			cancel()
			select {
			case <-done:
			case <-time.After(eventually):
				t.Fatalf("Every still running %v after cancel", eventually)
			}
			if n := calls.Load(); n != tt.wantCalls {
				t.Errorf("%d calls, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestEvery_PanicsOnNonPositivePeriod(t *testing.T) {
	for _, period := range []time.Duration{0, -time.Second} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Every(%v) did not panic", period)
				}
			}()
			Every(t.Context(), period, func(context.Context) {})
		}()
	}
}
