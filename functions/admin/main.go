// Command admin is the admin Lambda function: the merchant API under /admin/ (SKUs,
// adjustments, reshards, ledgers, orders, refunds, reconcile), behind the HTTP API's AWS_IAM
// authorization. Configuration: see admin.LoadConfig; it refuses to start on a bad
// setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/admin"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
)

func main() {
	log, cfg, aws := coldstart.Load("admin", os.Getenv, admin.LoadConfig)
	store := coldstart.Store(aws, cfg.Tables, dynamo.Options{})
	recon := reconcile.New(store, sns.NewFromConfig(aws), log, cfg.Reconcile)
	refunds := refunds.NewStarter(store, refunds.NewQueue(sqs.NewFromConfig(aws), cfg.RefundQueueURL), log)
	lambda.Start(admin.New(store, recon, refunds, log).Handle)
}
