// Command reconcile is the reconcile Lambda function: on an EventBridge schedule it
// checks that the stock counters, the stock_log ledger and the open orders agree,
// alerts on differences and repairs only when enabled and inside its window. It
// serves scheduled events only. Configuration: see reconcile.LoadFunctionConfig; it
// refuses to start on a bad setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/reconcile"
)

func main() {
	log, cfg, aws := coldstart.Load("reconcile", os.Getenv, reconcile.LoadFunctionConfig)
	store := coldstart.Store(aws, cfg.Tables, dynamo.Options{})
	r := reconcile.New(store, sns.NewFromConfig(aws), log, cfg.Reconcile)
	lambda.Start(lambdaevent.OnlyScheduled(reconcile.FunctionName, r.Run))
}
