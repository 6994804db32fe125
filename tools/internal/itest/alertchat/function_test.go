package alertchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/teamchat/chattest"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// world is a Notifier over the real store (the local stack's embedded DynamoDB through
// the SDK) for its quiet-period claims and pacing records, posting to stand-in bots
// that share its settable clock, without waiting between retries.
type world struct {
	store *dynamo.Store
	log   *testkit.Log
	clock *testkit.Clock
	bots  []*chattest.Receiver
	n     *alertchat.Notifier
}

func newWorld(t *testing.T, bots ...*chattest.Receiver) *world {
	return newWorldOn(t, nil, bots...)
}

// newWorldOn is newWorld with wrap in front of DynamoDB (nil: none).
func newWorldOn(t *testing.T, wrap func(http.Handler) http.Handler, bots ...*chattest.Receiver) *world {
	t.Helper()
	stack := stacktest.New(t, stacktest.Options{Seed: "[]", Stack: local.StackConfig{DynamoDBWrap: wrap}})
	w := &world{store: dynamo.New(stack.DB, stack.Tables, dynamo.Options{Now: stack.Clock.Now}), log: &testkit.Log{}, clock: stack.Clock, bots: bots}
	var hooks []teamchat.Webhook
	for _, b := range bots {
		b.UseClock(w.clock.Now)
		if err := b.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		hooks = append(hooks, b.Webhook())
	}
	w.n = alertchat.New(slog.New(slog.NewJSONHandler(w.log, nil)), alertchat.Options{
		Webhooks: func(context.Context) ([]teamchat.Webhook, error) { return hooks, nil },
		Poster:   teamchat.NewPoster(teamchat.Options{Now: w.clock.Now, Sleep: func(context.Context, time.Duration) error { return nil }}),
		Quiet:    w.store, Paces: w.store, QuietPeriod: time.Hour, Now: w.clock.Now,
	})
	return w
}

// counted sums one metric over the function's metric lines.
func (w *world) counted(t *testing.T, name string) int {
	t.Helper()
	lines, err := w.log.Lines()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, l := range lines {
		if v, ok := l[name].(float64); ok && l["msg"] == "metrics" && l["Function"] == alertchat.MetricFunction {
			total += v
		}
	}
	return int(total)
}

// event reads internal/alertchat/testdata/name, an SNS event as Lambda delivers it.
func event(t *testing.T, name string) events.SNSEvent {
	t.Helper()
	var ev events.SNSEvent
	if err := json.Unmarshal(testdata(t, name), &ev); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return ev
}

// testdata reads the alertchat package's fixture name.
func testdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "internal", "alertchat", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// SNS delivers at least once and reconcile alerts every run: 20 copies of one alarm
// handled at once by as many containers reach each bot exactly once; the 19 others
// are held back, counted exactly. After the quiet period the alarm goes out once more.
func TestNotify_SameAlertConcurrentlyIsPostedOncePerBotPerQuietPeriod(t *testing.T) {
	w := newWorld(t, chattest.NewReceiver(teamchat.WeCom, ""), chattest.NewReceiver(teamchat.DingTalk, "SECtest"))
	ev := event(t, "alarm-sns-event.json")
	deliver := func(n int) (failed int) {
		errs := make([]error, n)
		testkit.Parallel(n, func(i int) { errs[i] = w.n.Notify(context.Background(), ev) })
		for _, err := range errs {
			if err != nil {
				failed++
				t.Errorf("Handle: %v", err)
			}
		}
		return failed
	}
	deliver(20)
	for _, b := range w.bots {
		if got := len(b.Received()); got != 1 {
			t.Errorf("%s received %d, want 1", b.Webhook().Kind, got)
		}
	}
	if posted, quiet := w.counted(t, "ChatPosted"), w.counted(t, "ChatQuiet"); posted != 2 || quiet != 38 {
		t.Errorf("ChatPosted %d, ChatQuiet %d; want 2 and 38", posted, quiet)
	}
	w.clock.Advance(59 * time.Minute)
	deliver(5)
	w.clock.Advance(time.Minute)
	deliver(20)
	for _, b := range w.bots {
		got := b.Received()
		if len(got) != 2 || got[1].Title != got[0].Title || !strings.Contains(got[0].Title, "ALARM: ReconcileDifferencesAlarm") {
			t.Errorf("%s after the quiet period: %d messages %q, want the alarm twice", b.Webhook().Kind, len(got), got)
		}
		if len(b.Refusals()) != 0 {
			t.Errorf("%s refused %q", b.Webhook().Kind, b.Refusals())
		}
	}
	if posted, quiet := w.counted(t, "ChatPosted"), w.counted(t, "ChatQuiet"); posted != 4 || quiet != 38+10+38 {
		t.Errorf("ChatPosted %d, ChatQuiet %d; want 4 and 86", posted, quiet)
	}
}

// Different alerts are not held back by each other's quiet period.
func TestNotify_DifferentAlertsAreEachPosted(t *testing.T) {
	w := newWorld(t, chattest.NewReceiver(teamchat.WeCom, ""))
	for _, name := range []string{"alarm-sns-event.json", "books-sns-event.json", "alarm-sns-event.json", "books-sns-event.json"} {
		if err := w.n.Notify(context.Background(), event(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	got := w.bots[0].Received()
	if len(got) != 2 || !strings.Contains(got[0].Title, "ReconcileDifferencesAlarm") || !strings.Contains(got[1].Title, "Books differ for 1 SKU(s): cup-01") {
		t.Errorf("received %q", got)
	}
}

// A bot that keeps failing: the invocation fails (ErrNotPosted, counted once), the other
// bot still gets the alert once, and the failed bot's claim is given back, so Lambda's
// retry posts there, and only there, once it answers again.
func TestNotify_AFailedPostIsCountedAndRetriedOnTheNextDelivery(t *testing.T) {
	failing, fine := chattest.NewReceiver(teamchat.Feishu, "feishu-secret"), chattest.NewReceiver(teamchat.WeCom, "")
	w := newWorld(t, failing, fine)
	failing.FailNext(chattest.FailServerError, 3)
	ev := event(t, "books-sns-event.json")
	if err := w.n.Notify(context.Background(), ev); !errors.Is(err, alertchat.ErrNotPosted) {
		t.Fatalf("Handle: %v, want ErrNotPosted", err)
	}
	if failing.Requests() != 3 || len(failing.Received()) != 0 || len(fine.Received()) != 1 || w.counted(t, "ChatPostFailed") != 1 || w.counted(t, "ChatPosted") != 1 {
		t.Errorf("failing bot %d requests, %d shown; fine bot %d shown; ChatPostFailed %d, ChatPosted %d; want 3, 0, 1, 1, 1",
			failing.Requests(), len(failing.Received()), len(fine.Received()), w.counted(t, "ChatPostFailed"), w.counted(t, "ChatPosted"))
	}
	if err := w.n.Notify(context.Background(), ev); err != nil {
		t.Fatalf("Lambda's retry: %v", err)
	}
	if len(failing.Received()) != 1 || len(fine.Received()) != 1 || w.counted(t, "ChatQuiet") != 1 {
		t.Errorf("after the retry: %d and %d shown, ChatQuiet %d; want 1, 1, 1", len(failing.Received()), len(fine.Received()), w.counted(t, "ChatQuiet"))
	}
	if lines := w.log.String(); strings.Contains(lines, failing.Webhook().URL) || strings.Contains(lines, "feishu-secret") {
		t.Error("the log holds a webhook URL or secret")
	}
}

// Unreadable webhooks fail the invocation and count every alert as not posted; no
// webhooks at all posts nothing and is no failure.
func TestNotify_WithoutWebhooks(t *testing.T) {
	w := newWorld(t)
	broken := alertchat.New(slog.New(slog.NewJSONHandler(w.log, nil)), alertchat.Options{
		Webhooks: func(context.Context) ([]teamchat.Webhook, error) { return nil, errors.New("AccessDeniedException") },
		Quiet:    w.store, Paces: w.store,
	})
	if err := broken.Notify(context.Background(), event(t, "books-sns-event.json")); !errors.Is(err, alertchat.ErrNotPosted) || w.counted(t, "ChatPostFailed") != 1 {
		t.Errorf("unreadable webhooks: %v, ChatPostFailed %d; want ErrNotPosted, 1", err, w.counted(t, "ChatPostFailed"))
	}
	if err := w.n.Notify(context.Background(), event(t, "books-sns-event.json")); err != nil {
		t.Errorf("no webhooks: %v", err)
	}
}

// When DynamoDB cannot be asked about the quiet period or the bot's pace, the alert is
// posted anyway.
func TestNotify_PostsWhenDynamoDBCannotBeAsked(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.WeCom, "")
	w := newWorldOn(t, testkit.FailDynamoDB(func(target string, _ []byte) bool { return strings.HasSuffix(target, "Item") }), bot)
	if err := w.n.Notify(context.Background(), event(t, "books-sns-event.json")); err != nil || len(bot.Received()) != 1 {
		t.Errorf("%v, %d received; want posted once", err, len(bot.Received()))
	}
	for _, msg := range []string{"quiet period unknown: posting anyway", "pacing unknown: posting anyway"} {
		if !strings.Contains(w.log.String(), msg) {
			t.Errorf("no %q logged", msg)
		}
	}
}
