package sam_test

import (
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
		var actions []string
		for _, s := range f.Policies.Statements {
			actions = append(actions, s.Action...)
		}
		slices.Sort(actions)
		if want := []string{"dynamodb:DeleteItem", "dynamodb:UpdateItem", "secretsmanager:GetSecretValue"}; !slices.Equal(actions, want) {
			t.Errorf("actions %v, want %v", actions, want)
		}
	}
}
