// Command closeOrder is the closeOrder Lambda function: it releases the stock of
// unpaid orders from close-order queue messages (SQS, partial batch responses), from
// a scheduled sweep (EventBridge) and from POST /orders/{orderId}/cancel, asking WeChat
// Pay first about orders that have a WeChat Pay order; and it starts payments (POST
// /orders/{orderId}/pay) and buyers' refunds (POST /orders/{orderId}/refund). Configuration: see closeorder.LoadConfig; it refuses to start
// on a bad setting. The merchant configuration and key come from the AWS Secrets
// Manager secret it names (see wechatpay.Secret), read at cold start and again when an
// answer names an unknown Wechatpay-Serial or after a TTL (wechatpay.RotatingClient).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeorder"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/refund"
)

func main() {
	log, cfg, awsCfg := coldstart.Load("closeOrder", os.Getenv, closeorder.LoadConfig)
	client := coldstart.WeChatPayClient(log, awsCfg, cfg.SecretARN, closeorder.SecretReloads(log))
	store := coldstart.Store(awsCfg, cfg.Tables, dynamo.Options{})
	sqsClient := sqs.NewFromConfig(awsCfg)
	refunds := refund.NewStarter(store, refund.NewQueue(sqsClient, cfg.RefundQueueURL), log)
	closer := closeorder.New(store, closeq.New(sqsClient, cfg.CloseQueueURL, nil), log, closeorder.Options{
		WeChatPay: client, NotifyBaseURL: cfg.NotifyBaseURL, OpenIDClaim: cfg.OpenIDClaim, Refunds: refunds, UserRefundWindow: cfg.UserRefundWindow,
	})
	lambda.Start(closeorder.NewFunction(closer, log).Invoke)
}
