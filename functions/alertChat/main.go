// Command alertChat is the alert function: subscribed to the alerts SNS topic, it posts
// each CloudWatch alarm and reconcile alert to the team's chat bots (WeCom, DingTalk,
// Feishu/Lark, Slack), once per quiet period per alert and bot (package alertchat,
// whose configuration it refuses to start without). The webhooks come from the AWS
// Secrets Manager secret it names (teamchat.ParseSecret): read at cold start, where a
// missing or malformed secret stops it, and again at each invocation.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/secret"
	alertchatfn "github.com/stockguard/stockguard/internal/wiring/function/alertchat"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
)

func main() {
	coldstart.Run(alertchatfn.Function, os.Getenv, alertchatfn.Load, func(s coldstart.Start[alertchatfn.Config]) (*lambdaevent.Function, error) {
		webhooks := alertchat.SecretWebhooks(secret.Reader(s.AWS, s.Config.ChatSecretARN))
		if _, err := webhooks(context.Background()); err != nil {
			return nil, fmt.Errorf("read the chat webhooks secret: %w", err)
		}
		return alertchatfn.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.StoreTables()), webhooks)
	})
}
