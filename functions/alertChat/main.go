// Command alertChat is the alert function: subscribed to the alerts SNS topic, it posts
// each CloudWatch alarm and reconcile alert to the team's chat bots (WeCom, DingTalk,
// Feishu/Lark, Slack), once per quiet period per alert and bot. Configuration: see
// alertchat.LoadConfig; it refuses to start on a bad setting. The webhooks come from the
// AWS Secrets Manager secret it names (teamchat.ParseSecret): read at cold start, where a
// missing or malformed secret stops it, and again at each invocation.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
)

func main() {
	log, cfg, awsCfg := coldstart.Load(alertchat.FunctionName, os.Getenv, alertchat.LoadConfig)
	webhooks := alertchat.SecretWebhooks(coldstart.SecretReader(awsCfg, cfg.SecretARN))
	if _, err := webhooks(context.Background()); err != nil {
		coldstart.Exit(log, "read the chat webhooks secret", err)
	}
	store := coldstart.Store(awsCfg, dynamo.Tables{Orders: cfg.OrdersTable}, dynamo.Options{})
	n := alertchat.New(log, alertchat.Options{Webhooks: webhooks, Quiet: store, QuietPeriod: cfg.QuietPeriod, Runbook: cfg.Runbook})
	lambda.Start(n.Handle)
}
