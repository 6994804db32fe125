// Command admin is the admin Lambda function: the merchant API under /admin/ (SKUs,
// adjustments, reshards, ledgers, orders, refunds, reconcile), behind the HTTP API's AWS_IAM
// authorization. Configuration: see admin.LoadConfig; it refuses to start on a bad
// setting.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/admin"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refund"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := admin.LoadConfig(os.Getenv)
	if err != nil {
		log.Error("admin cannot start", "error", err)
		os.Exit(1)
	}
	aws, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	store := dynamo.New(dynamodb.NewFromConfig(aws, dynamo.ClientOptions), cfg.Tables, dynamo.Options{})
	recon := reconcile.New(store, sns.NewFromConfig(aws), log, cfg.Reconcile)
	refunds := refund.NewStarter(store, refund.NewQueue(sqs.NewFromConfig(aws), cfg.RefundQueueURL), log)
	lambda.Start(admin.New(store, recon, refunds, log).Handle)
}
