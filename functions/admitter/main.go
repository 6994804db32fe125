// Command admitter is the waiting room's admitter Lambda function: started every
// minute by an EventBridge schedule, it admits the buyers of every queued SKU on sale
// in ticks of 250 ms until just before its timeout (package admitter). It serves
// scheduled events only.
package main

import (
	"os"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/wiring/function/admitter"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
)

func main() {
	coldstart.Run(admitter.Function, os.Getenv, admitter.Load, func(s coldstart.Start[admitter.Config]) (*lambdaevent.Function, error) {
		return admitter.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables))
	})
}
