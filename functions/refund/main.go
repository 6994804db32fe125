// Command refund is the refund Lambda function, the money step of refunds: it takes
// refund messages (SQS, partial batch responses) and asks WeChat Pay's domestic refund
// API for each refund owed, and on its schedule asks WeChat Pay about refunds
// REFUNDING too long. Configuration: see refunds.LoadConfig; it refuses to start on a
// bad setting. The merchant configuration and key come from the AWS Secrets Manager
// secret it names (see wechatpay.Secret), read at cold start and again when an
// answer names an unknown Wechatpay-Serial or after a TTL (wechatpay.RotatingClient).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/refunds"
)

func main() {
	log, cfg, awsCfg := coldstart.Load(refunds.FunctionName, os.Getenv, refunds.LoadConfig)
	client := coldstart.WeChatPayClient(log, awsCfg, cfg.SecretARN, refunds.SecretReloads(log))
	store := coldstart.Store(awsCfg, cfg.Tables, dynamo.Options{})
	queue := refunds.NewQueue(sqs.NewFromConfig(awsCfg), cfg.RefundQueueURL)
	refunder := refunds.NewRefunder(store, client, queue, log, refunds.Options{NotifyURL: cfg.NotifyURL, StuckAfter: cfg.StuckAfter})
	lambda.Start(refunder.Invoke)
}
