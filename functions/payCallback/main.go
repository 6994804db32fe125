// Command payCallback is the payCallback Lambda function: it takes WeChat Pay APIv3
// payment and refund notifications (POST /payments/wechatpay/notify and
// /refund-notify), verifies and decrypts them, and records each payment and refund
// result exactly once (package paycallback, whose configuration it refuses to start
// without). The merchant id, app id, APIv3 key and platform public keys come from the
// AWS Secrets Manager secret it names (see wechatpay.Secret), read at cold start and
// again when a notification names an unknown Wechatpay-Serial or the configuration is
// older than its TTL (see wechatpay.RotatingVerifier). It also serves the
// mini-program's message push (GET and POST /wechat/messages), verified with the same
// secret's messageToken (read with it, and again at most every 10 minutes).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring/function/paycallback"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	coldstart.Run(paycallback.Function, os.Getenv, paycallback.Load, func(s coldstart.Start[paycallback.Config]) (*lambdaevent.Function, error) {
		var token secret.MessageToken
		verifier, err := secret.Notifications(context.Background(), s.Log, s.AWS, s.Config.SecretARN, paycallback.Function.Short, &token)
		if err != nil {
			return nil, err
		}
		queues := sqs.NewFromConfig(s.AWS)
		return paycallback.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables),
			refunds.NewQueue(queues, s.Config.RefundQueueURL), wxqueue.New(queues, s.Config.WeChatQueueURL), verifier, token.Get)
	})
}
