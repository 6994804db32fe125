// Command reconcile is the reconcile Lambda function: on an EventBridge schedule it
// checks that the stock counters, the stock_log ledger and the open orders agree,
// alerts on differences and repairs only when enabled and inside its window. It
// serves scheduled events only (wiring.Reconcile). Configuration: see wiring.Load; it
// refuses to start on a bad setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/wiring"
)

func main() {
	log, cfg, aws := coldstart.Load("reconcile", os.Getenv, wiring.Reconcile.Load)
	fn, err := wiring.Reconcile.Build(cfg, wiring.Clients{Log: log, DynamoDB: coldstart.DynamoDB(aws), Alerts: sns.NewFromConfig(aws)})
	lambda.Start(coldstart.Must(log, "wire reconcile", fn, err).Invoke)
}
