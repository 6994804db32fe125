// Command admin is the admin Lambda function: the merchant API under /admin/ (SKUs,
// adjustments, reshards, ledgers, orders, reconcile), behind the HTTP API's AWS_IAM
// authorization. Configuration: see admin.LoadConfig; it refuses to start on a bad
// setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/admin"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/reconcile"
)

func main() {
	log, cfg, aws := coldstart.Load("admin", os.Getenv, admin.LoadConfig)
	store := dynamo.New(dynamodb.NewFromConfig(aws, dynamo.ClientOptions), cfg.Tables, dynamo.Options{})
	recon := reconcile.New(store, sns.NewFromConfig(aws), log, cfg.Reconcile)
	lambda.Start(admin.New(store, recon, log).Handle)
}
