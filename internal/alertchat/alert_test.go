package alertchat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/teamchat"
)

// fixture reads testdata/name, an SNS event as Lambda delivers it.
func fixture(t *testing.T, name string) events.SNSEvent {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SNSEvent
	if err := json.Unmarshal(data, &ev); err != nil || len(ev.Records) != 1 {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// alarmEntity is a CloudWatch alarm notification with the payload's fields replaced.
func alarmEntity(t *testing.T, change func(*events.CloudWatchAlarmSNSPayload)) events.SNSEntity {
	t.Helper()
	n := fixture(t, "alarm-sns-event.json").Records[0].SNS
	var p events.CloudWatchAlarmSNSPayload
	if err := json.Unmarshal([]byte(n.Message), &p); err != nil {
		t.Fatal(err)
	}
	change(&p)
	data, _ := json.Marshal(p)
	n.Message = string(data)
	return n
}

func contains(t *testing.T, m teamchat.Message, want ...string) {
	t.Helper()
	all := strings.Join(append([]string{m.Title}, m.Lines...), "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("message lacks %q:\n%s", w, all)
		}
	}
}

func TestFromSNS_ACloudWatchAlarmSaysWhatWhereHowBigAndTheRunbookEntry(t *testing.T) {
	a := alertchat.FromSNS(fixture(t, "alarm-sns-event.json").Records[0].SNS, "RUNBOOK.md")
	if a.Key != "alarm#stockguard-ReconcileDifferencesAlarm-1XG8K2H0Q9ZQ#ALARM" || a.Message.Level != teamchat.Alarm {
		t.Errorf("key %q level %v", a.Key, a.Message.Level)
	}
	if a.Message.Title != "ALARM: ReconcileDifferencesAlarm" || a.Message.RunbookEntry != "ReconcileDifferencesAlarm" ||
		a.Message.Runbook != "RUNBOOK.md#reconciledifferencesalarm" {
		t.Errorf("title %q, runbook %q %q", a.Message.Title, a.Message.RunbookEntry, a.Message.Runbook)
	}
	contains(t, a.Message,
		"What: Counters, ledger and orders disagree in three runs in a row",
		"Where: Function=reconcile",
		"Watches: stockguard/Differences MINIMUM over 300 s > 0, 3 period(s)",
		"How big: Threshold Crossed: 3 out of the last 3 datapoints [2.0 (11/11/26 08:10:00)",
		"When: 2026-11-11T08:15:27.123+0000, Asia Pacific (Hong Kong)")
	if strings.Contains(strings.Join(a.Message.Lines, " "), "(RUNBOOK.md") {
		t.Errorf("the runbook reference is repeated in the lines: %q", a.Message.Lines)
	}

	https := alertchat.FromSNS(fixture(t, "alarm-sns-event.json").Records[0].SNS, "https://git.example.com/shop/stockguard/blob/main/RUNBOOK.md")
	if https.Message.Runbook != "https://git.example.com/shop/stockguard/blob/main/RUNBOOK.md#reconciledifferencesalarm" {
		t.Errorf("runbook %q", https.Message.Runbook)
	}
}

// OK is a short resolved note, INSUFFICIENT_DATA a notice; each state has its own key,
// so a resolved note is not held back by the alarm's.
func TestFromSNS_OtherStates(t *testing.T) {
	for state, want := range map[string]struct {
		level teamchat.Level
		title string
	}{
		"OK":                {teamchat.Resolved, "Resolved: ReconcileDifferencesAlarm"},
		"INSUFFICIENT_DATA": {teamchat.Notice, "Insufficient data: ReconcileDifferencesAlarm"},
	} {
		a := alertchat.FromSNS(alarmEntity(t, func(p *events.CloudWatchAlarmSNSPayload) { p.NewStateValue = state }), "RUNBOOK.md")
		if a.Message.Level != want.level || a.Message.Title != want.title || a.Key != "alarm#stockguard-ReconcileDifferencesAlarm-1XG8K2H0Q9ZQ#"+state {
			t.Errorf("%s: %v %q %q", state, a.Message.Level, a.Message.Title, a.Key)
		}
	}
}

// A metric math alarm names its expression and metrics, and every metric's dimensions.
func TestFromSNS_AMetricMathAlarm(t *testing.T) {
	n := alarmEntity(t, func(p *events.CloudWatchAlarmSNSPayload) {
		p.AlarmName, p.AlarmDescription = "stockguard-ApiServerErrorRateAlarm-7QZ", "HTTP API 5xx answers above 1% of requests (RUNBOOK.md#apiservererrorratealarm)."
		p.Trigger = events.CloudWatchAlarmTrigger{ComparisonOperator: "GreaterThanThreshold", Threshold: 1, EvaluationPeriods: 2, Metrics: []events.CloudWatchMetricDataQuery{
			{ID: "errors", MetricStat: events.CloudWatchMetricStat{Metric: events.CloudWatchMetric{Namespace: "AWS/ApiGateway", MetricName: "5xx", Dimensions: []events.CloudWatchDimension{{Name: "ApiId", Value: "a1b2c3"}}}, Period: 300, Stat: "Sum"}},
			{ID: "requests", MetricStat: events.CloudWatchMetricStat{Metric: events.CloudWatchMetric{Namespace: "AWS/ApiGateway", MetricName: "Count", Dimensions: []events.CloudWatchDimension{{Name: "ApiId", Value: "a1b2c3"}}}, Period: 300, Stat: "Sum"}},
			{ID: "rate", Expression: "100 * errors / requests", ReturnData: true},
		}}
	})
	a := alertchat.FromSNS(n, "RUNBOOK.md")
	contains(t, a.Message, "ALARM: ApiServerErrorRateAlarm", "Where: ApiId=a1b2c3",
		"Watches: 100 * errors / requests (errors = AWS/ApiGateway/5xx, requests = AWS/ApiGateway/Count) > 1, 2 period(s)")
}

// An alarm whose description names no RUNBOOK.md entry says so instead of pointing at
// nothing.
func TestFromSNS_AnAlarmWithoutARunbookEntry(t *testing.T) {
	a := alertchat.FromSNS(alarmEntity(t, func(p *events.CloudWatchAlarmSNSPayload) {
		p.AlarmName, p.AlarmDescription = "someone-elses-alarm", "Disk full"
	}), "RUNBOOK.md")
	if a.Message.Title != "ALARM: someone-elses-alarm" || a.Message.Runbook != "" || !strings.Contains(a.Message.RunbookEntry, "none") {
		t.Errorf("%q runbook %q %q", a.Message.Title, a.Message.RunbookEntry, a.Message.Runbook)
	}
	contains(t, a.Message, "What: Disk full")
}

// Reconcile's books alert is titled with the SKUs and says each difference's size.
func TestFromSNS_ReconcileBooksAlertNamesTheSKUsAndHowBig(t *testing.T) {
	a := alertchat.FromSNS(fixture(t, "books-sns-event.json").Records[0].SNS, "RUNBOOK.md")
	if a.Key != "books#cup-01" || a.Message.Level != teamchat.Alarm || a.Message.RunbookEntry != "ReconcileDifferencesAlarm" {
		t.Errorf("key %q level %v entry %q", a.Key, a.Message.Level, a.Message.RunbookEntry)
	}
	contains(t, a.Message, "Books differ for 1 SKU(s): cup-01",
		"cup-01 · available: expected 30, actual 40 (+10 units)",
		"cup-01 · shard 0 available: expected 30, actual 40 (+10 units)",
		"Look: stockctl reconcile --latest; stockctl ledger cup-01")

	n := fixture(t, "books-sns-event.json").Records[0].SNS
	n.Message = `{"differences":[{"skuId":"b","rule":"onHand","expected":5,"actual":2},{"skuId":"a","rule":"available","expected":1,"actual":0}],"total":9}`
	a = alertchat.FromSNS(n, "RUNBOOK.md")
	if a.Key != "books#a,b" {
		t.Errorf("key %q, want the SKUs sorted", a.Key)
	}
	contains(t, a.Message, "Books differ for 2 SKU(s): a, b", "b · onHand: expected 5, actual 2 (-3 units)", "… and 7 more difference(s)")
}

func TestFromSNS_ReconcileRefundsAlert(t *testing.T) {
	n := fixture(t, "books-sns-event.json").Records[0].SNS
	n.Message = `{"refundProblems":["order o-1: refunded 500 fen above the 39900 paid"],"stuckRefunds":["o-2_R"]}`
	a := alertchat.FromSNS(n, "RUNBOOK.md")
	if a.Message.RunbookEntry != "RefundProblemsAlarm" || !strings.HasPrefix(a.Key, "refunds#") {
		t.Errorf("entry %q key %q", a.Message.RunbookEntry, a.Key)
	}
	contains(t, a.Message, "Refunds need a look: 1 problem(s), 1 stuck", "Problem: order o-1: refunded 500 fen above the 39900 paid", "Stuck REFUNDING: o-2_R")
	n.Message = `{"refundProblems":[],"stuckRefunds":["o-2_R"]}`
	if a := alertchat.FromSNS(n, "RUNBOOK.md"); a.Message.RunbookEntry != "RefundingStuckAlarm" {
		t.Errorf("only stuck refunds: entry %q", a.Message.RunbookEntry)
	}
}

// Anything else is posted as it is, not dropped.
func TestFromSNS_AnyOtherMessageIsPostedPlain(t *testing.T) {
	n := fixture(t, "books-sns-event.json").Records[0].SNS
	n.Subject, n.Message = "", "The backup finished late.\n\nSee the backup console.\n"
	a := alertchat.FromSNS(n, "RUNBOOK.md")
	if a.Message.Level != teamchat.Notice || a.Message.Title != "Message on stockguard-AlertsTopic-Q1W2E3R4T5Y6" ||
		!slices.Equal(a.Message.Lines, []string{"The backup finished late.", "See the backup console."}) || a.Message.Runbook != "" {
		t.Errorf("%+v", a.Message)
	}
	n.Subject, n.Message = "Deploy done", `{"json":"but not an alert"}`
	if a := alertchat.FromSNS(n, "RUNBOOK.md"); a.Message.Title != "Deploy done" || a.Message.Lines[0] != n.Message || a.Key != "plain#Deploy done#"+n.Message {
		t.Errorf("%+v key %q", a.Message, a.Key)
	}
}
