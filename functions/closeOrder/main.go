// Command closeOrder is the closeOrder Lambda function: it releases the stock of
// unpaid orders from close-order queue messages (SQS, partial batch responses), from
// a scheduled sweep (EventBridge) and from POST /orders/{orderId}/cancel, asking WeChat
// Pay first about orders that have a WeChat Pay order; and it starts payments (POST
// /orders/{orderId}/pay) and buyers' refunds (POST /orders/{orderId}/refund): see
// wiring.CloseOrder. Configuration: see wiring.Load; it refuses to start on a bad
// setting. The merchant configuration and key come from the AWS Secrets Manager secret
// it names (see wechatpay.Secret), read at cold start and again when an answer names an
// unknown Wechatpay-Serial or after a TTL (wechatpay.RotatingClient).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wiring"
)

func main() {
	log, cfg, aws := coldstart.Load("closeOrder", os.Getenv, wiring.CloseOrder.Load)
	queues := sqs.NewFromConfig(aws)
	fn, err := wiring.CloseOrder.Build(cfg, wiring.Clients{
		Log: log, DynamoDB: coldstart.DynamoDB(aws),
		CloseQueue: closeq.New(queues, cfg.CloseQueueURL, nil), RefundQueue: refunds.NewQueue(queues, cfg.RefundQueueURL),
		WeChatPay: coldstart.WeChatPayClient(log, aws, cfg.SecretARN, "closeOrder"),
	})
	lambda.Start(coldstart.Must(log, "wire closeOrder", fn, err).Invoke)
}
