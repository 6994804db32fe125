// Command closeOrder is the closeOrder Lambda function: it releases the stock of
// unpaid orders from close-order queue messages (SQS, partial batch responses), from
// a scheduled sweep (EventBridge) and from POST /orders/{orderId}/cancel, asking WeChat
// Pay first about orders that have a WeChat Pay order; and it starts payments (POST
// /orders/{orderId}/pay) and buyers' refunds (POST /orders/{orderId}/refund): see
// package closeorder, whose configuration it refuses to start without. The merchant
// configuration and key come from the AWS Secrets Manager secret it names (see
// wechatpay.Secret), read at cold start and again when an answer names an unknown
// Wechatpay-Serial or after a TTL (wechatpay.RotatingClient).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring/function/closeorder"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	coldstart.Run(closeorder.Function, os.Getenv, closeorder.Load, func(s coldstart.Start[closeorder.Config]) (*lambdaevent.Function, error) {
		merchant, err := secret.Merchant(context.Background(), s.Log, s.AWS, s.Config.SecretARN, closeorder.Function.Short)
		if err != nil {
			return nil, err
		}
		queues := sqs.NewFromConfig(s.AWS)
		return closeorder.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables),
			closeq.New(queues, s.Config.CloseQueueURL, nil), refunds.NewQueue(queues, s.Config.RefundQueueURL),
			wxqueue.New(queues, s.Config.WeChatQueueURL), merchant)
	})
}
