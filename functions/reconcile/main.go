// Command reconcile is the reconcile Lambda function: on an EventBridge schedule it
// checks that the stock counters, the stock_log ledger and the open orders agree,
// alerts on differences and repairs only when enabled and inside its window. It
// serves scheduled events only (package reconcile, whose configuration it refuses to
// start without).
package main

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/wiring/function/reconcile"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
)

func main() {
	coldstart.Run(reconcile.Function, os.Getenv, reconcile.Load, func(s coldstart.Start[reconcile.Config]) (*lambdaevent.Function, error) {
		return reconcile.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables), sns.NewFromConfig(s.AWS))
	})
}
