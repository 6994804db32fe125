// Command payCallback is the payCallback Lambda function: it takes WeChat Pay APIv3
// payment and refund notifications (POST /payments/wechatpay/notify and
// /refund-notify), verifies and decrypts them, and records each payment and refund
// result exactly once (wiring.PayCallback). Configuration: see wiring.Load; it refuses
// to start on a bad setting. The merchant id, app id, APIv3 key and platform public
// keys come from the AWS Secrets Manager secret it names (see wechatpay.Secret), read
// at cold start and again when a notification names an unknown Wechatpay-Serial or the
// configuration is older than its TTL (see wechatpay.RotatingVerifier).
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
	log, cfg, aws := coldstart.Load("payCallback", os.Getenv, wiring.PayCallback.Load)
	fn, err := wiring.PayCallback.Build(cfg, wiring.Clients{
		Log: log, DynamoDB: coldstart.DynamoDB(aws), RefundQueue: refunds.NewQueue(sqs.NewFromConfig(aws), cfg.RefundQueueURL),
		Notifications: coldstart.WeChatPayVerifier(log, aws, cfg.SecretARN, "payCallback"),
		WeChatQueue:   wxqueue.New(sqs.NewFromConfig(aws), cfg.WeChatQueueURL),
	})
	lambda.Start(coldstart.Must(log, "wire payCallback", fn, err).Invoke)
}
