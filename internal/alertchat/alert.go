package alertchat

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/teamchat"
)

// Alert is what one notification on the alerts topic says, ready to post: the message,
// and Key, which is the same for the same alarm (so the quiet period holds it back) and
// differs between alarms.
type Alert struct {
	// Key: "alarm#<AlarmName>#<state>", "books#<SKU ids, sorted>", "refunds#<entries,
	// sorted>" or "plain#<subject>#<message>".
	Key     string
	Message teamchat.Message
}

// Runbook entries of reconcile's own alerts (RUNBOOK.md headings).
const (
	booksEntry         = "ReconcileDifferencesAlarm"
	refundProblemEntry = "RefundProblemsAlarm"
	refundStuckEntry   = "RefundingStuckAlarm"
)

// maxPlainLines bounds the lines of a message that is neither an alarm nor reconcile's.
const maxPlainLines = 30

// FromSNS reads one notification of the alerts topic, in this order:
//
//   - a CloudWatch alarm state change (the JSON Message CloudWatch publishes for an
//     alarm action: AlarmName, AlarmDescription, NewStateValue, NewStateReason,
//     StateChangeTime, Region, Trigger with MetricName, Namespace, Statistic, Period,
//     ComparisonOperator, Threshold and Dimensions, or Metrics for a metric math alarm;
//     Amazon CloudWatch User Guide, "Using Amazon CloudWatch alarms", notifications
//     through Amazon SNS; aws-lambda-go events.CloudWatchAlarmSNSPayload): titled with
//     the state and the alarm's RUNBOOK.md entry (named in its AlarmDescription as
//     "RUNBOOK.md#<entry>", as every alarm of template.yaml does), with what it means
//     (the description), where (the metric's dimensions: Function, SkuId, FunctionName,
//     QueueName, ApiId), the rule it watches and how big (NewStateReason, which holds
//     the data points). ALARM posts an alarm; OK a short resolved note (only alarms
//     with OKActions send one); INSUFFICIENT_DATA a notice;
//   - reconcile's books alert (internal/reconcile: {"differences":[{"skuId","rule",
//     "expected","actual"}],"total","at"}): titled with the SKUs, one line per
//     difference with its size in units;
//   - reconcile's refunds alert ({"refundProblems":[…],"stuckRefunds":[…]});
//   - anything else: its subject and the first lines of its text, as a notice, so that
//     nothing published to the topic is dropped.
//
// runbook is where RUNBOOK.md is read: "RUNBOOK.md" or its https URL; each message
// points at its entry there ("#" + the heading in lower case).
func FromSNS(n events.SNSEntity, runbook string) Alert {
	var alarm events.CloudWatchAlarmSNSPayload
	if json.Unmarshal([]byte(n.Message), &alarm) == nil && alarm.AlarmName != "" && alarm.NewStateValue != "" {
		return fromAlarm(alarm, runbook)
	}
	var books struct {
		Differences []struct {
			SKU      string `json:"skuId"`
			Rule     string `json:"rule"`
			Expected int    `json:"expected"`
			Actual   int    `json:"actual"`
		} `json:"differences"`
		Total int `json:"total"`
	}
	if json.Unmarshal([]byte(n.Message), &books) == nil && len(books.Differences) > 0 {
		skus := map[string]bool{}
		var lines []string
		for _, d := range books.Differences {
			skus[d.SKU] = true
			lines = append(lines, fmt.Sprintf("%s · %s: expected %d, actual %d (%+d units)", d.SKU, d.Rule, d.Expected, d.Actual, d.Actual-d.Expected))
		}
		if more := books.Total - len(books.Differences); more > 0 {
			lines = append(lines, fmt.Sprintf("… and %d more difference(s)", more))
		}
		sorted := slices.Sorted(maps.Keys(skus))
		lines = append(lines, "Look: stockctl reconcile --latest; stockctl ledger "+sorted[0])
		return Alert{Key: "books#" + strings.Join(sorted, ","), Message: message(teamchat.Alarm,
			fmt.Sprintf("Books differ for %d SKU(s): %s", len(sorted), listed(sorted, 5)), lines, booksEntry, runbook)}
	}
	var refunds struct {
		Problems []string `json:"refundProblems"`
		Stuck    []string `json:"stuckRefunds"`
	}
	if json.Unmarshal([]byte(n.Message), &refunds) == nil && len(refunds.Problems)+len(refunds.Stuck) > 0 {
		var lines []string
		for _, p := range refunds.Problems {
			lines = append(lines, "Problem: "+p)
		}
		for _, s := range refunds.Stuck {
			lines = append(lines, "Stuck REFUNDING: "+s)
		}
		entry := refundProblemEntry
		if len(refunds.Problems) == 0 {
			entry = refundStuckEntry
		}
		return Alert{Key: "refunds#" + strings.Join(slices.Sorted(slices.Values(lines)), ","), Message: message(teamchat.Alarm,
			fmt.Sprintf("Refunds need a look: %d problem(s), %d stuck", len(refunds.Problems), len(refunds.Stuck)), lines, entry, runbook)}
	}
	title := n.Subject
	if title == "" {
		title = "Message on " + n.TopicArn[strings.LastIndex(n.TopicArn, ":")+1:]
	}
	var lines []string
	for line := range strings.Lines(n.Message) {
		if line = strings.TrimSpace(line); line != "" && len(lines) < maxPlainLines {
			lines = append(lines, line)
		}
	}
	return Alert{Key: "plain#" + n.Subject + "#" + n.Message, Message: teamchat.Message{Level: teamchat.Notice, Title: title, Lines: lines}}
}

// runbookRef matches the runbook reference of an alarm description: RUNBOOK.md#<entry>.
var runbookRef = regexp.MustCompile(`RUNBOOK\.md#([A-Za-z0-9_-]+)`)

// fromAlarm is the alert of a CloudWatch alarm's state change.
func fromAlarm(a events.CloudWatchAlarmSNSPayload, runbook string) Alert {
	entry, what := "", strings.TrimSpace(a.AlarmDescription)
	if m := runbookRef.FindStringSubmatchIndex(what); m != nil {
		entry = entryName(what[m[2]:m[3]], a.AlarmName)
		what = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(what[:m[0]]), "("))
	}
	name := a.AlarmName
	if entry != "" {
		name = entry
	}
	level, title := teamchat.Notice, "Insufficient data: "+name
	switch a.NewStateValue {
	case "ALARM":
		level, title = teamchat.Alarm, "ALARM: "+name
	case "OK":
		level, title = teamchat.Resolved, "Resolved: "+name
	}
	var lines []string
	if what != "" {
		lines = append(lines, "What: "+what)
	}
	if where := dimensions(a.Trigger); where != "" {
		lines = append(lines, "Where: "+where)
	}
	if rule := watched(a.Trigger); rule != "" && level != teamchat.Resolved {
		lines = append(lines, "Watches: "+rule)
	}
	if a.NewStateReason != "" {
		lines = append(lines, "How big: "+a.NewStateReason)
	}
	lines = append(lines, fmt.Sprintf("When: %s, %s (alarm %s)", a.StateChangeTime, a.Region, a.AlarmName))
	m := message(level, title, lines, entry, runbook)
	if entry == "" {
		m.RunbookEntry, m.Runbook = "none: the alarm's description names no RUNBOOK.md entry", ""
	}
	return Alert{Key: "alarm#" + a.AlarmName + "#" + a.NewStateValue, Message: m}
}

// entryName is the RUNBOOK.md heading for anchor (a heading in lower case): the part of
// the alarm's name that matches it (CloudFormation names an alarm
// "<stack>-<logical id>-<suffix>", and the entry is the logical id), else anchor.
func entryName(anchor, alarmName string) string {
	for part := range strings.SplitSeq(alarmName, "-") {
		if strings.EqualFold(part, anchor) {
			return part
		}
	}
	return anchor
}

// dimensions lists the dimensions of the metric (or metrics) an alarm watches:
// "Function=reconcile, SkuId=cup-01".
func dimensions(t events.CloudWatchAlarmTrigger) string {
	dims := t.Dimensions
	for _, m := range t.Metrics {
		dims = append(dims, m.MetricStat.Metric.Dimensions...)
	}
	var out []string
	for _, d := range dims {
		if s := d.Name + "=" + d.Value; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// comparison is the symbol of each CloudWatch ComparisonOperator.
var comparison = map[string]string{
	"GreaterThanThreshold": ">", "GreaterThanOrEqualToThreshold": "≥",
	"LessThanThreshold": "<", "LessThanOrEqualToThreshold": "≤",
}

// watched says what an alarm compares: "stockguard/Differences MINIMUM over 300 s > 0,
// 3 period(s)", or the metric math's metrics.
func watched(t events.CloudWatchAlarmTrigger) string {
	op := comparison[t.ComparisonOperator]
	if op == "" {
		op = t.ComparisonOperator
	}
	bound := fmt.Sprintf("%s %s, %d period(s)", op, strconv.FormatFloat(t.Threshold, 'f', -1, 64), t.EvaluationPeriods)
	if t.MetricName != "" {
		return fmt.Sprintf("%s/%s %s over %d s %s", t.Namespace, t.MetricName, t.Statistic, t.Period, bound)
	}
	var expression string
	var metrics []string
	for _, m := range t.Metrics {
		switch {
		case m.Expression != "" && m.ReturnData:
			expression = m.Expression
		case m.MetricStat.Metric.MetricName != "":
			metrics = append(metrics, m.ID+" = "+m.MetricStat.Metric.Namespace+"/"+m.MetricStat.Metric.MetricName)
		}
	}
	if expression == "" {
		return ""
	}
	return fmt.Sprintf("%s (%s) %s", expression, strings.Join(metrics, ", "), bound)
}

// message is a Message pointing at entry of the runbook.
func message(level teamchat.Level, title string, lines []string, entry, runbook string) teamchat.Message {
	return teamchat.Message{Level: level, Title: title, Lines: lines, RunbookEntry: entry, Runbook: runbook + "#" + strings.ToLower(entry)}
}

// listed is the first n of names, then how many more.
func listed(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
