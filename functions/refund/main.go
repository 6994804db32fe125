// Command refund is the refund Lambda function, the money step of refunds: it takes
// refund messages (SQS, partial batch responses) and asks WeChat Pay's domestic refund
// API for each refund owed, and on its schedule asks WeChat Pay about refunds
// REFUNDING too long (wiring.Refund). Configuration: see wiring.Load; it refuses to
// start on a bad setting. The merchant configuration and key come from the AWS Secrets
// Manager secret it names (see wechatpay.Secret), read at cold start and again when an
// answer names an unknown Wechatpay-Serial or after a TTL (wechatpay.RotatingClient).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	log, cfg, aws := coldstart.Load("refund", os.Getenv, wiring.Refund.Load)
	fn, err := wiring.Refund.Build(cfg, wiring.Clients{
		Log: log, DynamoDB: coldstart.DynamoDB(aws), RefundQueue: refunds.NewQueue(sqs.NewFromConfig(aws), cfg.RefundQueueURL),
		WeChatPay:   coldstart.WeChatPayClient(log, aws, cfg.SecretARN, "refund"),
		WeChatQueue: wxqueue.New(sqs.NewFromConfig(aws), cfg.WeChatQueueURL),
	})
	lambda.Start(coldstart.Must(log, "wire refund", fn, err).Invoke)
}
