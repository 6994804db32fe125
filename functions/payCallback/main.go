// Command payCallback is the payCallback Lambda function: it takes WeChat Pay APIv3
// payment notifications on POST /payments/wechatpay/notify, verifies and decrypts
// them, and records each payment exactly once. Configuration: see
// paycallback.LoadConfig; it refuses to start on a bad setting. The merchant id, app
// id, APIv3 key and platform public keys come from the AWS Secrets Manager secret it
// names (see wechatpay.Secret), read at cold start and again when a notification names
// an unknown Wechatpay-Serial or the configuration is older than its TTL (see
// wechatpay.RotatingVerifier).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/paycallback"
	"github.com/stockguard/stockguard/internal/refunds"
)

func main() {
	log, cfg, awsCfg := coldstart.Load("payCallback", os.Getenv, paycallback.LoadConfig)
	verifier := coldstart.WeChatPayVerifier(log, awsCfg, cfg.SecretARN, paycallback.SecretReloads(log))
	store := coldstart.Store(awsCfg, cfg.Tables, dynamo.Options{})
	refunds := refunds.NewStarter(store, refunds.NewQueue(sqs.NewFromConfig(awsCfg), cfg.RefundQueueURL), log)
	lambda.Start(paycallback.New(verifier, store, refunds, log).Handle)
}
