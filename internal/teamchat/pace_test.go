package teamchat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/teamchat/chattest"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

var t0 = time.Date(2026, 11, 11, 8, 0, 0, 0, time.UTC)

// takes runs Take at each offset from t0 and returns how many were let through.
func takes(p *teamchat.Pace, l teamchat.Limits, offsets ...time.Duration) int {
	n := 0
	for _, o := range offsets {
		if p.Take(l, t0.Add(o)) {
			n++
		}
	}
	return n
}

// every is n offsets from start, step apart.
func every(n int, start, step time.Duration) []time.Duration {
	var out []time.Duration
	for i := range n {
		out = append(out, start+time.Duration(i)*step)
	}
	return out
}

// Each kind's limits let exactly its documented rate through in any window, counted
// from the posts let through.
func TestPace_TakeKeepsToEachKindsRate(t *testing.T) {
	for _, tc := range []struct {
		kind    teamchat.Kind
		offsets []time.Duration
		want    int
	}{
		{teamchat.WeCom, every(45, 0, time.Second), 20},                               // 0..19 s, then nothing until 60 s
		{teamchat.WeCom, every(45, 0, 2*time.Second), 35},                             // 0..38 s, then 60..88 s as each of those leaves the minute
		{teamchat.DingTalk, every(45, 0, time.Second), 20},                            //
		{teamchat.Feishu, every(300, 0, 100*time.Millisecond), 100},                   // 5 a second for 20 s
		{teamchat.Feishu, every(10, 0, 0), 5},                                         // 5 at one instant
		{teamchat.Slack, every(30, 0, 500*time.Millisecond), 15},                      // 1 a second
		{teamchat.Slack, append(every(3, 0, 0), time.Second, time.Second), 2},         //
		{teamchat.DingTalk, append(every(20, 0, 0), 59*time.Second, time.Minute), 21}, // the window slides
	} {
		var p teamchat.Pace
		if got := takes(&p, tc.kind.Limits(), tc.offsets...); got != tc.want {
			t.Errorf("%s over %d posts: %d let through, want %d", tc.kind, len(tc.offsets), got, tc.want)
		}
		if len(p.Sent) > 100 {
			t.Errorf("%s: %d sends kept, want at most a window's", tc.kind, len(p.Sent))
		}
	}
}

// A rate-limit answer stops every post for the bot's throttle (DingTalk 10 minutes),
// the Retry-After Slack gave, or else a whole window.
func TestPace_RefusedWaitsTheServicesThrottle(t *testing.T) {
	for _, tc := range []struct {
		kind       teamchat.Kind
		retryAfter time.Duration
		wait       time.Duration
	}{
		{teamchat.DingTalk, 0, 10 * time.Minute},
		{teamchat.WeCom, 0, time.Minute},
		{teamchat.Feishu, 0, time.Minute},
		{teamchat.Slack, 7 * time.Second, 7 * time.Second},
		{teamchat.Slack, 0, time.Second},
	} {
		var p teamchat.Pace
		l := tc.kind.Limits()
		p.Refused(l, t0, tc.retryAfter)
		if p.Allows(l, t0.Add(tc.wait-time.Millisecond)) || !p.Allows(l, t0.Add(tc.wait)) {
			t.Errorf("%s refused (Retry-After %v): allowed at +%v: %v, at +%v: %v; want no, yes", tc.kind, tc.retryAfter,
				tc.wait-time.Millisecond, p.Allows(l, t0.Add(tc.wait-time.Millisecond)), tc.wait, p.Allows(l, t0.Add(tc.wait)))
		}
	}
}

// held is n alerts held at one-second steps, with titles of width bytes at least.
func held(n, width int) []teamchat.Held {
	var out []teamchat.Held
	for i := range n {
		title := fmt.Sprintf("ALARM: Title%03d %s", i, strings.Repeat("x", width))
		out = append(out, teamchat.Held{At: t0.Add(time.Duration(i) * time.Second), Level: teamchat.Alarm, Title: title,
			RunbookEntry: fmt.Sprintf("Alarm%03d", i), Runbook: fmt.Sprintf("RUNBOOK.md#alarm%03d", i)})
	}
	return out
}

// Every held alert is shown in full by exactly one digest, oldest first: a digest
// takes as many as the service's size limit lets one message show, and the stand-in
// bot (which checks the documented size) shows each line without a "not shown" line.
func TestPace_DigestsShowEveryHeldAlertOnce(t *testing.T) {
	for _, kind := range teamchat.Kinds {
		for _, tc := range []struct{ n, width, digests int }{{25, 0, 1}, {300, 200, -1}} {
			var p teamchat.Pace
			for _, h := range held(tc.n, tc.width) {
				p.Hold(h)
			}
			clock := testkit.NewClock()
			bot := chattest.NewReceiver(kind, "")
			bot.UseClock(clock.Now)
			if err := bot.Start("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { bot.Close() })
			posted := 0
			for {
				clock.Advance(time.Minute) // one digest a minute keeps within every rate
				d, taken, ok := p.Release(kind)
				if !ok {
					break
				}
				posted += len(taken.Held)
				if _, err := poster(&waits{}, teamchat.Options{}).Post(context.Background(), bot.Webhook(), d); err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				if posted > tc.n {
					t.Fatalf("%s: %d alerts released of %d held", kind, posted, tc.n)
				}
			}
			got := bot.Received()
			if tc.digests > 0 && len(got) != tc.digests {
				t.Errorf("%s, %d alerts: %d digests, want %d", kind, tc.n, len(got), tc.digests)
			}
			var all strings.Builder
			for _, r := range got {
				all.WriteString(r.Text)
				if strings.Contains(r.Text, "not shown") {
					t.Errorf("%s: a digest cut lines:\n%.300s", kind, r.Text)
				}
			}
			for i := range tc.n {
				if c := strings.Count(all.String(), fmt.Sprintf("Title%03d ", i)); c != 1 {
					t.Errorf("%s: alert %d shown %d times, want once", kind, i, c)
				}
			}
			t.Logf("%s: %d alerts (titles of %d+ bytes) in %d digest(s)", kind, tc.n, tc.width, len(got))
		}
	}
}

// Restore puts a digest's alerts back ahead of those held since; past MaxHeld only a
// count is kept, and the digest says how many.
func TestPace_RestoreAndMaxHeld(t *testing.T) {
	var p teamchat.Pace
	for _, h := range held(3, 0) {
		p.Hold(h)
	}
	_, taken, _ := p.Release(teamchat.WeCom)
	p.Hold(held(4, 0)[3])
	p.Restore(taken)
	if len(p.Held) != 4 || p.Held[0].Title != taken.Held[0].Title || p.Held[3].RunbookEntry != "Alarm003" {
		t.Errorf("after Restore: %+v", p.Held)
	}
	for _, h := range held(teamchat.MaxHeld+10, 0) {
		p.Hold(h)
	}
	if len(p.Held) != teamchat.MaxHeld || p.More != 14 {
		t.Errorf("%d held, %d more; want %d, 14", len(p.Held), p.More, teamchat.MaxHeld)
	}
	last := teamchat.Digest(teamchat.Slack, nil, p.More)
	if last.Level != teamchat.Alarm || !strings.Contains(last.Lines[0], "14 more alert(s)") || !strings.HasPrefix(last.Title, "14 alert(s)") {
		t.Errorf("digest of the count: %+v", last)
	}
}
