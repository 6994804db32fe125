// Command payCallback is the payCallback Lambda function: it takes WeChat Pay APIv3
// payment notifications on POST /payments/wechatpay/notify, verifies and decrypts
// them, and records each payment exactly once. Configuration: see
// paycallback.LoadConfig; it refuses to start on a bad setting. The merchant id, app
// id, APIv3 key and platform public keys come from the AWS Secrets Manager secret it
// names (see wechatpay.Secret), read once at cold start.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/paycallback"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) { log.Error(msg, "error", err); os.Exit(1) }
	cfg, err := paycallback.LoadConfig(os.Getenv)
	if err != nil {
		fail("payCallback cannot start", err)
	}
	ctx := context.Background()
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fail("load AWS config", err)
	}
	secret, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(cfg.SecretARN)})
	if err != nil {
		fail("read the WeChat Pay secret", err)
	}
	payCfg, err := wechatpay.ConfigFromSecret([]byte(aws.ToString(secret.SecretString)))
	if err != nil {
		fail("parse the WeChat Pay secret", err)
	}
	verifier, err := wechatpay.NewVerifier(payCfg)
	if err != nil {
		fail("configure WeChat Pay verification", err)
	}
	store := dynamo.New(dynamodb.NewFromConfig(awsCfg, dynamo.ClientOptions), cfg.Tables, dynamo.Options{})
	lambda.Start(paycallback.New(verifier, store, log).Handle)
}
