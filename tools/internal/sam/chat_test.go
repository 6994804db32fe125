package sam_test

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// The alert function is subscribed to the alerts topic, reads only its own secret
// (either ARN form the parameter allows), and may do nothing else but UpdateItem and
// DeleteItem (the quiet-period claims, on the orders table).
func TestWiring_AlertChatReadsTheTopicAndOnlyItsSecret(t *testing.T) {
	const full = "arn:aws:secretsmanager:us-east-1:123456789012:secret:stockguard/chat-AbC123"
	tplPath := filepath.Join(testkit.ModuleRoot(t), "template.yaml")
	pattern := regexp.MustCompile(*loadRealTemplate(t).Parameters()["ChatWebhooksSecretArn"].AllowedPattern)
	for _, given := range []string{full, strings.TrimSuffix(full, "-AbC123")} {
		if !pattern.MatchString(given) {
			t.Fatalf("the parameter refuses %s", given)
		}
		tpl, err := sam.LoadWithParameters(tplPath, map[string]string{"ChatWebhooksSecretArn": given, "JwtAudience": "wx-app"})
		if err != nil {
			t.Fatal(err)
		}
		functions, err := tpl.Functions()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(functions, func(f sam.Function) bool { return f.Name == "AlertChatFunction" })
		if i < 0 {
			t.Fatal("no AlertChatFunction")
		}
		f := functions[i]
		if len(f.Events.SNS) != 1 || f.Events.SNS[0].Topic != "AlertsTopic" || !slices.ContainsFunc(tpl.Topics(), func(tp sam.Topic) bool { return tp.Name == "AlertsTopic" }) {
			t.Errorf("SNS events %+v, topics %v; want one, on AlertsTopic", f.Events.SNS, tpl.Topics())
		}
		if f.Environment["CHAT_SECRET_ARN"] != given {
			t.Errorf("CHAT_SECRET_ARN %q, want %q", f.Environment["CHAT_SECRET_ARN"], given)
		}
		allowed := func(action, arn string) bool {
			return slices.ContainsFunc(f.Policies.Statements, func(s sam.Statement) bool {
				return s.Effect == "Allow" && slices.Contains(s.Action, action) && slices.ContainsFunc(s.Resource, func(r string) bool { return iamMatch(r, arn) })
			})
		}
		if !allowed("secretsmanager:GetSecretValue", full) || allowed("secretsmanager:GetSecretValue", strings.Replace(full, "chat", "wechatpay", 1)) {
			t.Errorf("with ChatWebhooksSecretArn=%s: GetSecretValue on %s allowed %v, on another secret %v", given, full,
				allowed("secretsmanager:GetSecretValue", full), allowed("secretsmanager:GetSecretValue", strings.Replace(full, "chat", "wechatpay", 1)))
		}
		keys := map[string][]string{} // leading key pattern → actions on the orders table
		var others []string
		for _, s := range f.Policies.Statements {
			if lead := s.Condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]; len(lead) > 0 {
				keys[strings.Join(lead, ",")] = slices.Sorted(slices.Values(s.Action))
				continue
			}
			others = append(others, s.Action...)
		}
		want := map[string][]string{"quiet#*": {"dynamodb:DeleteItem", "dynamodb:UpdateItem"}, "pace#*": {"dynamodb:GetItem", "dynamodb:UpdateItem"}}
		if !maps.EqualFunc(keys, want, slices.Equal) || !slices.Equal(others, []string{"secretsmanager:GetSecretValue"}) {
			t.Errorf("DynamoDB actions by leading key %v, others %v; want %v and the secret only", keys, others, want)
		}
	}
}

// What Lambda gives up on is not dropped: the alert function's asynchronous
// invocations keep Lambda's retries and go, failed, to an encrypted queue of the
// template that an alarm watches (sends to it, and Lambda's failures to send) and the
// function itself consumes (one record a batch), which redrives to a dead-letter queue.
func TestWiring_AlertChatRedrivesWhatLambdaGaveUpOn(t *testing.T) {
	functions := realByName(t, (*sam.Template).Functions, func(f sam.Function) string { return f.Name })
	queues := realByName(t, (*sam.Template).Queues, func(q sam.Queue) string { return q.Name })
	alarms, err := loadRealTemplate(t).Alarms()
	if err != nil {
		t.Fatal(err)
	}
	f := functions["AlertChatFunction"]
	inv := f.EventInvoke
	if inv == nil || inv.OnFailure == "" || inv.MaximumRetryAttempts != 2 || inv.MaximumEventAgeInSeconds != 21600 {
		t.Fatalf("EventInvokeConfig %+v: want 2 retries, 6 hours, an SQS on-failure destination", inv)
	}
	q, ok := queues[inv.OnFailure]
	if !ok || q.Attributes["SqsManagedSseEnabled"] != "true" || q.DeadLetterQueue == "" {
		t.Errorf("on-failure queue %s: %+v; want a queue of the template, encrypted, with a dead-letter queue", inv.OnFailure, q)
	}
	if !slices.ContainsFunc(f.Events.SQS, func(ev sam.SQSEvent) bool { return ev.Queue == inv.OnFailure && ev.BatchSize == 1 }) {
		t.Errorf("SQS events %+v: want one on %s, one record a batch", f.Events.SQS, inv.OnFailure)
	}
	watched := func(namespace, name, dimension, value string) bool {
		return slices.ContainsFunc(alarms, func(a sam.Alarm) bool {
			return slices.ContainsFunc(a.Metrics, func(m sam.MetricRef) bool {
				return m.Namespace == namespace && m.Name == name && m.Dimensions[dimension] == value
			})
		})
	}
	if !watched("AWS/SQS", "NumberOfMessagesSent", "QueueName", inv.OnFailure) || !watched("AWS/Lambda", "DestinationDeliveryFailures", "FunctionName", f.Name) {
		t.Errorf("no alarm watches the sends to %s and %s's failures to send there", inv.OnFailure, f.Name)
	}
}
