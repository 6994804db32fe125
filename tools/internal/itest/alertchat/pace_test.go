package alertchat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/teamchat/chattest"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// plain is an SNS event of one plain notification titled subject (alerts that differ).
func plain(subject string) events.SNSEvent {
	return events.SNSEvent{Records: []events.SNSEventRecord{{EventSource: "aws:sns", SNS: events.SNSEntity{
		Subject: subject, Message: "details of " + subject, TopicArn: "arn:aws:sns:ap-east-1:123456789012:stockguard-AlertsTopic-Q1W2E3R4T5Y6",
	}}}}
}

// onceEach checks that each of the alerts plain made ("Alert 00" … "Alert n-1") shows
// in exactly one of the messages received, alone or in a digest.
func onceEach(t *testing.T, received []chattest.Received, n int) {
	t.Helper()
	var all strings.Builder
	for _, r := range received {
		all.WriteString(r.Text + "\n")
	}
	for i := range n {
		if c := strings.Count(all.String(), fmt.Sprintf("ℹ️ Alert %02d", i)); c != 1 {
			t.Errorf("Alert %02d reached the bot %d times, want once", i, c)
		}
	}
}

// notifyAll hands each event to Notify, n at a time, as the function's concurrent
// invocations would.
func (w *world) notifyAll(t *testing.T, evs []events.SNSEvent) {
	t.Helper()
	testkit.Parallel(len(evs), func(i int) {
		if err := w.n.Notify(context.Background(), evs[i]); err != nil {
			t.Errorf("Notify %d: %v", i, err)
		}
	})
}

// 45 different alerts within a minute to a DingTalk bot (20 messages a minute, then a
// 10-minute throttle; the stand-in enforces both over any 60 seconds), arriving 5 at
// a time every 6.5 s and handled concurrently: the first 20 are posted at once, the
// 25 others held, and the bot never has to refuse one. When the minute has passed,
// Flush posts one digest of the 25: every alert reached the bot exactly once.
func TestNotify_FortyFiveAlertsInAMinuteToADingTalkBot(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.DingTalk, "SECdingtalk-test-secret")
	w := newWorld(t, bot)
	start := w.clock.Now()
	for round := range 9 {
		var evs []events.SNSEvent
		for i := range 5 {
			evs = append(evs, plain(fmt.Sprintf("Alert %02d", round*5+i)))
		}
		w.notifyAll(t, evs)
		w.clock.Advance(6500 * time.Millisecond)
	}
	if got, posted, held := len(bot.Received()), w.counted(t, "ChatPosted"), w.counted(t, "ChatHeld"); got != 20 || posted != 20 || held != 25 {
		t.Errorf("within the minute: %d received, ChatPosted %d, ChatHeld %d; want 20, 20, 25", got, posted, held)
	}
	if rep, err := w.n.Flush(context.Background()); err != nil || rep.Digests != 0 {
		t.Errorf("Flush at +%v: %+v %v; want no digest (the minute is full)", w.clock.Now().Sub(start), rep, err)
	}
	w.clock.Advance(start.Add(time.Minute).Sub(w.clock.Now()))
	if rep, err := w.n.Flush(context.Background()); err != nil || rep.Digests != 1 {
		t.Fatalf("Flush at +1m: %+v %v; want one digest", rep, err)
	}
	got := bot.Received()
	if len(got) != 21 || bot.RateLimited() != 0 || len(bot.Refusals()) != 0 {
		t.Fatalf("%d received, %d refused for rate, refusals %q; want 21, 0, none", len(got), bot.RateLimited(), bot.Refusals())
	}
	digest := got[20]
	if !strings.Contains(digest.Title, "25 alert(s) held back to keep this dingtalk bot within 20 a minute") {
		t.Errorf("digest title %q", digest.Title)
	}
	onceEach(t, got, 45)
	t.Logf("digest:\n%s", digest.Text)
}

// Slack takes a message a second: an alert within the second is held, and the next
// alert after it carries the held one in a digest with itself.
func TestNotify_TheNextAlertCarriesWhatWaits(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.Slack, "")
	w := newWorld(t, bot)
	w.notifyAll(t, []events.SNSEvent{plain("Alert A")})
	w.clock.Advance(500 * time.Millisecond)
	w.notifyAll(t, []events.SNSEvent{plain("Alert B")})
	w.clock.Advance(500 * time.Millisecond)
	w.notifyAll(t, []events.SNSEvent{plain("Alert C")})
	got := bot.Received()
	if len(got) != 2 || !strings.Contains(got[0].Title, "Alert A") || !strings.Contains(got[1].Title, "2 alert(s) held back") ||
		!strings.Contains(got[1].Text, "Alert B") || !strings.Contains(got[1].Text, "Alert C") || bot.RateLimited() != 0 {
		t.Errorf("received %q, %d refused for rate; want A, then a digest of B and C", got, bot.RateLimited())
	}
	if held, posted := w.counted(t, "ChatHeld"), w.counted(t, "ChatPosted"); held != 1 || posted != 2 {
		t.Errorf("ChatHeld %d, ChatPosted %d; want 1, 2", held, posted)
	}
}

// A bot someone else also posts through answers rate-limited though the record had
// room: the alert is held, not failed, and nothing is sent to the bot for its throttle
// (DingTalk: 10 minutes); then Flush posts it.
func TestNotify_ABotAlreadyAtItsRateIsLeftAloneForItsThrottle(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.DingTalk, "")
	w := newWorld(t, bot)
	other := teamchat.NewPoster(teamchat.Options{Now: w.clock.Now})
	for range 20 {
		if _, err := other.Post(context.Background(), bot.Webhook(), teamchat.Message{Title: "from another sender"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.n.Notify(context.Background(), event(t, "books-sns-event.json")); err != nil {
		t.Fatalf("Notify: %v, want the alert held", err)
	}
	requests := bot.Requests()
	if bot.RateLimited() != 1 || w.counted(t, "ChatHeld") != 1 || w.counted(t, "ChatPostFailed") != 0 {
		t.Errorf("%d refused for rate, ChatHeld %d, ChatPostFailed %d; want 1, 1, 0", bot.RateLimited(), w.counted(t, "ChatHeld"), w.counted(t, "ChatPostFailed"))
	}
	for _, after := range []time.Duration{time.Minute, 9*time.Minute - time.Second} {
		w.clock.Advance(after)
		if rep, _ := w.n.Flush(context.Background()); rep.Digests != 0 || bot.Requests() != requests {
			t.Errorf("Flush during the throttle: %+v, %d requests sent; want none", rep, bot.Requests()-requests)
		}
	}
	w.clock.Advance(time.Second)
	if rep, _ := w.n.Flush(context.Background()); rep.Digests != 1 || !strings.Contains(bot.Received()[20].Text, "Books differ for 1 SKU(s): cup-01") {
		t.Errorf("Flush after the throttle: %+v, received %q", rep, bot.Received()[20:])
	}
}

// A digest the bot fails to take goes back to the record, whole and in order, and the
// next Flush posts it.
func TestFlush_ADigestThatFailsIsKeptForTheNext(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.WeCom, "")
	w := newWorld(t, bot)
	var evs []events.SNSEvent
	for i := range 22 {
		evs = append(evs, plain(fmt.Sprintf("Alert %02d", i)))
	}
	w.notifyAll(t, evs)
	w.clock.Advance(time.Minute)
	bot.FailNext(chattest.FailServerError, 3)
	if rep, _ := w.n.Flush(context.Background()); rep.Failed != 1 || rep.Digests != 0 || w.counted(t, "ChatPostFailed") != 1 {
		t.Errorf("Flush with the bot failing: %+v, ChatPostFailed %d; want 1 failed", rep, w.counted(t, "ChatPostFailed"))
	}
	if rep, _ := w.n.Flush(context.Background()); rep.Digests != 1 {
		t.Fatalf("the next Flush: %+v, want one digest", rep)
	}
	got := bot.Received()
	if len(got) != 21 || !strings.Contains(got[20].Text, "2 alert(s) held back") {
		t.Fatalf("received %d, the last %q; want 21, a digest of 2", len(got), got[len(got)-1].Text)
	}
	onceEach(t, got, 22)
}

// invocation is testdata/failed-invocation.json, Lambda's record of an alert invocation
// that failed its three attempts, with its requestPayload replaced when payload is
// not "" ("null" drops it).
func invocation(t *testing.T, payload string) events.SQSMessage {
	t.Helper()
	data := testdata(t, "failed-invocation.json")
	if payload != "" {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		rec["requestPayload"] = json.RawMessage(payload)
		if payload == "null" {
			delete(rec, "requestPayload")
		}
		data, _ = json.Marshal(rec)
	}
	return events.SQSMessage{MessageId: fmt.Sprintf("m-%d", len(payload)), Body: string(data), EventSource: "aws:sqs"}
}

// Redrive delivers a failed invocation's alert again, once per bot (a bot that got it
// before is held back by the quiet period); a failed flush needs nothing; a record
// Lambda kept no payload in becomes a notice naming its request; what is not an
// invocation record, or not delivered, is a batch item failure.
func TestRedrive_DeliversWhatLambdaGaveUpOn(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.Feishu, "feishu-secret")
	w := newWorld(t, bot)
	recs := []events.SQSMessage{
		invocation(t, ""), invocation(t, ""),
		invocation(t, `{"version":"0","source":"aws.events","detail-type":"Scheduled Event"}`),
		invocation(t, "null"),
		{MessageId: "junk", Body: `{"Records":[]}`},
	}
	recs[1].MessageId = "m-again"
	resp, err := w.n.Redrive(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "junk" {
		t.Fatalf("Redrive: %+v %v; want only the junk record failed", resp, err)
	}
	got := bot.Received()
	if len(got) != 2 || !strings.Contains(got[0].Title, "ALARM: ReconcileDifferencesAlarm") ||
		!strings.Contains(got[1].Text, "alertChat request 8f5c1a07-2d3e-4b61-9c4f-6e0a1b2c3d4e gave up at 2026-11-11T08:19:02Z (RetriesExhausted, 3 attempt(s))") {
		t.Errorf("received %q; want the alarm once, then the notice of the lost payload", got)
	}
	if w.counted(t, "ChatQuiet") != 1 {
		t.Errorf("ChatQuiet %d, want 1 (the second copy)", w.counted(t, "ChatQuiet"))
	}
	bot.FailNext(chattest.FailServerError, 3)
	w.clock.Advance(2 * time.Hour)
	resp, _ = w.n.Redrive(context.Background(), events.SQSEvent{Records: []events.SQSMessage{invocation(t, "")}})
	if len(resp.BatchItemFailures) != 1 {
		t.Errorf("a redrive the bot fails: %+v, want a batch item failure", resp)
	}
}

// An invocation with too little time left to post (a post may take 18 s) holds the
// alert rather than risk being cut off with a digest taken out of the record; the next
// Flush posts it.
func TestNotify_HoldsWhenTooLittleTimeIsLeft(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.WeCom, "")
	w := newWorld(t, bot)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.n.Notify(ctx, plain("Alert 00")); err != nil || len(bot.Received()) != 0 || w.counted(t, "ChatHeld") != 1 {
		t.Errorf("%v, %d received, ChatHeld %d; want nil, 0, 1", err, len(bot.Received()), w.counted(t, "ChatHeld"))
	}
	if rep, _ := w.n.Flush(ctx); rep.Digests != 0 {
		t.Errorf("Flush with 10 s left: %+v, want nothing", rep)
	}
	if rep, _ := w.n.Flush(context.Background()); rep.Digests != 1 {
		t.Errorf("Flush: %+v, want the digest", rep)
	}
	onceEach(t, bot.Received(), 1)
}
