// Command payCallback is the payCallback Lambda function: it takes WeChat Pay APIv3
// payment notifications on POST /payments/wechatpay/notify, verifies and decrypts
// them, and records each payment exactly once. Configuration: see
// paycallback.LoadConfig; it refuses to start on a bad setting. The merchant id, app
// id, APIv3 key and platform public keys come from the AWS Secrets Manager secret it
// names (see wechatpay.Secret), read once at cold start.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/paycallback"
	"github.com/stockguard/stockguard/internal/refund"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

func main() {
	log, cfg, awsCfg := coldstart.Load("payCallback", os.Getenv, paycallback.LoadConfig)
	payCfg, err := wechatpay.ConfigFromSecret(coldstart.Secret(log, awsCfg, cfg.SecretARN))
	if err != nil {
		coldstart.Exit(log, "parse the WeChat Pay secret", err)
	}
	verifier, err := wechatpay.NewVerifier(payCfg)
	if err != nil {
		coldstart.Exit(log, "configure WeChat Pay verification", err)
	}
	store := dynamo.New(dynamodb.NewFromConfig(awsCfg, dynamo.ClientOptions), cfg.Tables, dynamo.Options{})
	refunds := refund.NewStarter(store, refund.NewQueue(sqs.NewFromConfig(awsCfg), cfg.RefundQueueURL), log)
	lambda.Start(paycallback.New(verifier, store, refunds, log).Handle)
}
