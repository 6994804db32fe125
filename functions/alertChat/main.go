// Command alertChat is the alert function: subscribed to the alerts SNS topic, it posts
// each CloudWatch alarm and reconcile alert to the team's chat bots (WeCom, DingTalk,
// Feishu/Lark, Slack), once per quiet period per alert and bot (wiring.AlertChat).
// Configuration: see wiring.Load; it refuses to start on a bad setting. The webhooks
// come from the AWS Secrets Manager secret it names (teamchat.ParseSecret): read at
// cold start, where a missing or malformed secret stops it, and again at each
// invocation.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/wiring"
)

func main() {
	log, cfg, aws := coldstart.Load("alertChat", os.Getenv, wiring.AlertChat.Load)
	webhooks := alertchat.SecretWebhooks(coldstart.SecretReader(aws, cfg.ChatSecretARN))
	if _, err := webhooks(context.Background()); err != nil {
		coldstart.Exit(log, "read the chat webhooks secret", err)
	}
	fn, err := wiring.AlertChat.Build(cfg, wiring.Clients{Log: log, DynamoDB: coldstart.DynamoDB(aws), Webhooks: webhooks})
	lambda.Start(coldstart.Must(log, "wire alertChat", fn, err).Invoke)
}
