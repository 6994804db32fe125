// Package admitter is the admitter function's wiring: started every minute by its
// schedule, it admits the buyers of every queued SKU on sale in ticks of 250 ms until
// just before its timeout (docs/design.md, "Waiting room").
package admitter

import (
	"log/slog"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
)

// Config is the admitter's configuration (template.yaml, AdmitterFunction's
// Environment).
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables))
}

var table = wiring.Define("AdmitterFunction", "admitter",
	wiring.Schedule(func(a *admitter.Admitter) wiring.Scheduled { return wiring.Result(a.Run) }),
)

// Function is the admitter as template.yaml declares it.
var Function = table.Function

// Build returns the admitter's handler on store, logging to log. The admitter, and
// the lines it keeps in memory, live as long as the function instance, so an
// invocation that follows another in the same instance resumes without reading the
// line again.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store) (*lambdaevent.Function, error) {
	return table.Bind(log, admitter.New(store, log, store.Now)), nil
}
