// Command refund is the refund Lambda function, the money step of refunds: it takes
// refund messages (SQS, partial batch responses) and asks WeChat Pay's domestic refund
// API for each refund owed, and on its schedule asks WeChat Pay about refunds
// REFUNDING too long (package refund, whose configuration it refuses to start
// without). The merchant configuration and key come from the AWS Secrets Manager
// secret it names (see wechatpay.Secret), read at cold start and again when an answer
// names an unknown Wechatpay-Serial or after a TTL (wechatpay.RotatingClient).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring/function/refund"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	coldstart.Run(refund.Function, os.Getenv, refund.Load, func(s coldstart.Start[refund.Config]) (*lambdaevent.Function, error) {
		merchant, err := secret.Merchant(context.Background(), s.Log, s.AWS, s.Config.SecretARN, refund.Function.Short)
		if err != nil {
			return nil, err
		}
		queues := sqs.NewFromConfig(s.AWS)
		return refund.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables),
			refunds.NewQueue(queues, s.Config.RefundQueueURL), wxqueue.New(queues, s.Config.WeChatQueueURL), merchant)
	})
}
