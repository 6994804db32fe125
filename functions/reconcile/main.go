// Command reconcile is the reconcile Lambda function: on an EventBridge schedule it
// checks that the stock counters, the stock_log ledger and the open orders agree,
// alerts on differences and repairs only when enabled and inside its window. It
// serves scheduled events only. Configuration: see reconcile.LoadFunctionConfig; it
// refuses to start on a bad setting.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/reconcile"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := reconcile.LoadFunctionConfig(os.Getenv)
	if err != nil {
		log.Error("reconcile cannot start", "error", err)
		os.Exit(1)
	}
	aws, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	store := dynamo.New(dynamodb.NewFromConfig(aws, dynamo.ClientOptions), cfg.Tables, dynamo.Options{})
	r := reconcile.New(store, sns.NewFromConfig(aws), log, cfg.Reconcile)
	lambda.Start(lambdaevent.OnlyScheduled(reconcile.FunctionName, r.Run))
}
