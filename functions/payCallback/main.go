// Command payCallback is the payCallback Lambda function: it takes WeChat Pay APIv3
// payment notifications on POST /payments/wechatpay/notify, verifies and decrypts
// them, and records each payment exactly once. Configuration (environment, set by
// template.yaml): SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE, and WECHATPAY_SECRET_ARN,
// the AWS Secrets Manager secret holding the merchant id, app id, APIv3 key and
// platform public keys (see wechatpay.Secret), read once at cold start.
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
	"github.com/stockguard/stockguard/internal/payment"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	secret, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{
		SecretId: aws.String(os.Getenv("WECHATPAY_SECRET_ARN")),
	})
	if err != nil {
		log.Error("read the WeChat Pay secret", "error", err)
		os.Exit(1)
	}
	payCfg, err := wechatpay.ConfigFromSecret([]byte(aws.ToString(secret.SecretString)))
	if err != nil {
		log.Error("parse the WeChat Pay secret", "error", err)
		os.Exit(1)
	}
	verifier, err := wechatpay.NewVerifier(payCfg)
	if err != nil {
		log.Error("configure WeChat Pay verification", "error", err)
		os.Exit(1)
	}
	tables := dynamo.Tables{SKUs: os.Getenv("SKUS_TABLE"), Orders: os.Getenv("ORDERS_TABLE"), StockLog: os.Getenv("STOCK_LOG_TABLE")}
	store := dynamo.New(dynamodb.NewFromConfig(cfg, dynamo.ClientOptions), tables, dynamo.Options{})
	lambda.Start(payment.New(verifier, store, log).Handle)
}
