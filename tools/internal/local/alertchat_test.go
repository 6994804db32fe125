package local_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/teamchat/chattest"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// The whole path on the local stack, with real parts: the books broken behind the
// store's back, reconcile run through the stack publishes its alert to the alerts topic
// of the SNS API (goaws, and moto_server's when it is installed) with the SDK's SNS
// client; the topic delivers it to the alert function's subscription; the function
// posts it to a WeCom group robot stand-in as a markdown message naming the SKU. A
// second run within the quiet period reaches the function and is held back; after the
// quiet period it is posted again.
func TestAlerts_AReconcileDifferenceReachesTheWeComBotOncePerQuietPeriod(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { alertReachesTheBotOncePerQuietPeriod(t, "") })
	t.Run("moto", func(t *testing.T) {
		if !stacktest.MotoInstalled() {
			t.Skip(local.ErrNoMoto)
		}
		alertReachesTheBotOncePerQuietPeriod(t, stacktest.MotoURL(t))
	})
}

// readmeBooksBreak is how many units the README's walkthrough ("Make the books wrong
// behind the store's back") adds to cup-01's shard 0, checking that its "put the books
// right" takes as many away: the alert test plays that walkthrough, so a walkthrough
// that breaks the books by less than the alert threshold posts nothing and fails it.
func readmeBooksBreak(t *testing.T) int {
	t.Helper()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, walk, ok := strings.Cut(string(readme), "Make the books wrong behind the store's back")
	d := regexp.MustCompile(`\{":d":\{"N":"(-?\d+)"\}\}`).FindAllStringSubmatch(walk, 2)
	if !ok || len(d) != 2 {
		t.Fatal("the README's books walkthrough (two updates of :d) not found")
	}
	broken, _ := strconv.Atoi(d[0][1])
	right, _ := strconv.Atoi(d[1][1])
	if broken <= 0 || right != -broken {
		t.Fatalf("the README breaks the books by %d and puts them right with %d", broken, right)
	}
	return broken
}

func alertReachesTheBotOncePerQuietPeriod(t *testing.T, awsEndpoint string) {
	bot := chattest.NewReceiver(teamchat.WeCom, "")
	if err := bot.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Close() })
	stack := stacktest.New(t, stacktest.Options{SQS: true, Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":30}]`,
		Stack: local.StackConfig{AlertWebhooks: []teamchat.Webhook{bot.Webhook()}, SchedulePeriod: time.Hour, AWSEndpoint: awsEndpoint}})
	stack.RunInBackground(t)
	units := readmeBooksBreak(t)
	stack.Add(t, stack.Tables.SKUs, "cup-01#shard#0", "available", units)

	reconcile := func() {
		t.Helper()
		var rep struct {
			Differences []map[string]any `json:"differences"`
		}
		stack.RunScheduled(t, "reconcile", &rep)
		if len(rep.Differences) == 0 {
			t.Fatal("reconcile found no difference")
		}
	}
	reconcile()
	sent := time.Now()
	testkit.Eventually(t, 20*time.Second, "the WeCom bot gets the alert", func() bool { return len(bot.Received()) == 1 })
	t.Logf("alert posted %v after reconcile returned", time.Since(sent).Round(time.Millisecond))
	got := bot.Received()[0]
	for _, want := range []string{"Books differ for 1 SKU(s): cup-01", fmt.Sprintf("cup-01 · available: expected 30, actual %d (+%d units)", 30+units, units),
		"**Runbook:** ReconcileDifferencesAlarm (RUNBOOK.md#reconciledifferencesalarm)"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, got.Text)
		}
	}
	if !strings.Contains(string(got.Body), `"msgtype":"markdown"`) {
		t.Errorf("not a markdown message: %s", got.Body)
	}
	t.Logf("WeCom received: %s", got.Body)

	reconcile()
	testkit.Eventually(t, 20*time.Second, "the second alert reaches the function", func() bool {
		return len(stack.Logged(t, "msg", "alert held back (quiet period)")) == 1
	})
	if len(bot.Received()) != 1 || bot.Requests() != 1 {
		t.Errorf("within the quiet period: %d messages, %d requests; want 1, 1", len(bot.Received()), bot.Requests())
	}

	stack.Clock.Advance(time.Hour)
	reconcile()
	testkit.Eventually(t, 20*time.Second, "the alert goes out again after the quiet period", func() bool { return len(bot.Received()) == 2 })
	if r := bot.Refusals(); len(r) != 0 || bot.Requests() != 2 {
		t.Errorf("%d requests, refusals %q; want 2, none", bot.Requests(), r)
	}
}

// An alert whose three invocations all fail (the bot answers 502 to every request of
// them) is not dropped: the local stack plays Lambda's on-failure destination and puts
// the invocation record on AlertChatFailedQueue, which the alert function consumes
// (its SQS event), delivering the alert again once the bot answers: it reaches the bot
// once, after exactly 3 × 3 failed requests.
func TestAlerts_AnAlertLambdaGaveUpOnIsRedrivenFromTheFailedQueue(t *testing.T) {
	bot := chattest.NewReceiver(teamchat.WeCom, "")
	if err := bot.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Close() })
	bot.FailNext(chattest.FailServerError, 9)
	stack := stacktest.New(t, stacktest.Options{SQS: true, Seed: `[{"skuId":"cup-01","delivery":"none","name":"cup","price":39900,"stock":30}]`,
		Stack: local.StackConfig{AlertWebhooks: []teamchat.Webhook{bot.Webhook()}, SchedulePeriod: time.Hour, AsyncRetryDelay: time.Second}})
	stack.RunInBackground(t)
	units := readmeBooksBreak(t)
	stack.Add(t, stack.Tables.SKUs, "cup-01#shard#0", "available", units)
	var rep struct {
		Differences []map[string]any `json:"differences"`
	}
	stack.RunScheduled(t, "reconcile", &rep)
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", stack.Log.String())
		}
	}()
	// The bot's answer reaches the function before it logs the redrive: wait for both.
	testkit.Eventually(t, 30*time.Second, "the redriven alert reaches the bot and the redrive is logged", func() bool {
		return len(bot.Received()) == 1 && len(stack.Logged(t, "msg", "failed alert redriven")) > 0
	})
	if got := bot.Received()[0].Text; !strings.Contains(got, "Books differ for 1 SKU(s): cup-01") {
		t.Errorf("posted %q", got)
	}
	if n := len(stack.Logged(t, "msg", "failed alert redriven")); n != 1 || bot.Requests() != 10 {
		t.Errorf("%d redrives logged, %d requests; want 1, 10", n, bot.Requests())
	}
}
