package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// 45 alerts for one DingTalk bot decided at once by as many writers: exactly 20 take a
// post (its rate), the 25 others are held, none is lost or counted twice, and the one
// item holds all of it.
func TestUpdatePace_ConcurrentWritersKeepTheRateAndLoseNothing(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	t0 := time.Date(2026, 11, 11, 8, 0, 0, 0, time.UTC)
	l := teamchat.DingTalk.Limits()
	testkit.Parallel(45, func(i int) {
		err := e.store.UpdatePace(context.Background(), "dingtalk-1", func(p *teamchat.Pace) bool {
			if p.Take(l, t0) {
				return true
			}
			p.Hold(teamchat.Held{At: t0, Level: teamchat.Alarm, Title: fmt.Sprintf("alert %d", i)})
			return true
		})
		if err != nil {
			t.Errorf("UpdatePace: %v", err)
		}
	})
	var p teamchat.Pace
	if err := e.store.UpdatePace(context.Background(), "dingtalk-1", func(got *teamchat.Pace) bool { p = *got; return false }); err != nil {
		t.Fatal(err)
	}
	titles := map[string]bool{}
	for _, h := range p.Held {
		titles[h.Title] = true
	}
	if len(p.Sent) != 20 || len(p.Held) != 25 || len(titles) != 25 {
		t.Errorf("%d posts taken, %d held (%d distinct); want 20, 25, 25", len(p.Sent), len(p.Held), len(titles))
	}
	items := 0
	for _, it := range e.Scan(t, e.Tables.Orders) {
		if it["kind"] == "PACE" {
			items++
			if pk, _ := it["pk"].(string); !strings.HasPrefix(pk, dynamo.PaceKeyPrefix) || strings.Contains(pk, "dingtalk") {
				t.Errorf("pace item pk %q: want pace#<digest>", pk)
			}
		}
	}
	if items != 1 {
		t.Errorf("%d pace items, want 1", items)
	}
}

// A record round-trips every field; a decision that changes nothing writes nothing.
func TestUpdatePace_RoundTripsAndSkipsUnchanged(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	ctx, t0 := context.Background(), time.Date(2026, 11, 11, 8, 0, 0, 0, time.UTC)
	want := teamchat.Pace{Sent: []time.Time{t0, t0.Add(time.Second)}, Until: t0.Add(10 * time.Minute), More: 3,
		Held: []teamchat.Held{{At: t0, Level: teamchat.Resolved, Title: "Resolved: X", RunbookEntry: "X", Runbook: "RUNBOOK.md#x"}}}
	if err := e.store.UpdatePace(ctx, "slack-1", func(p *teamchat.Pace) bool { *p = want; return true }); err != nil {
		t.Fatal(err)
	}
	writes := e.sent("UpdateItem")
	var got teamchat.Pace
	if err := e.store.UpdatePace(ctx, "slack-1", func(p *teamchat.Pace) bool { got = *p; return false }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || e.sent("UpdateItem") != writes {
		t.Errorf("read back %+v, want %+v; %d writes after an unchanged decision", got, want, e.sent("UpdateItem")-writes)
	}
}

// A write applied whose answer was lost: the SDK's retry finds its own token and the
// update is done once (the alert is held once, not twice).
func TestUpdatePace_AWriteWhoseAnswerWasLostIsAppliedOnce(t *testing.T) {
	var drop atomic.Int64
	e := newEnv(t, dynamo.Options{}, dropAnswers(".UpdateItem", &drop))
	drop.Store(1)
	decisions := 0
	err := e.store.UpdatePace(context.Background(), "wecom-1", func(p *teamchat.Pace) bool {
		decisions++
		p.Hold(teamchat.Held{Title: "ALARM: X"})
		return true
	})
	var p teamchat.Pace
	e.store.UpdatePace(context.Background(), "wecom-1", func(got *teamchat.Pace) bool { p = *got; return false })
	if err != nil || decisions != 1 || len(p.Held) != 1 {
		t.Errorf("%v after %d decisions, %d held; want nil, 1, 1", err, decisions, len(p.Held))
	}
	if left := drop.Load(); left != -1 {
		t.Errorf("%d UpdateItem requests after the dropped one, want 1 (the SDK's retry)", -left)
	}
}
