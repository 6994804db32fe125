// Package reconcile is the reconcile function's wiring: on its schedule it checks that
// the stock counters, the stock_log ledger and the open orders agree, alerts on
// differences and repairs only when enabled and inside its window.
package reconcile

import (
	"log/slog"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
)

// Config is reconcile's configuration (template.yaml, ReconcileFunction's
// Environment).
type Config struct {
	Tables    dynamo.Tables    // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	Reconcile reconcile.Config // parts.Reconcile's variables
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), parts.Reconcile(&c.Reconcile))
}

var table = wiring.Define("ReconcileFunction", "reconcile",
	wiring.Schedule(func(r *reconcile.Reconciler) wiring.Scheduled { return wiring.Result(r.Run) }),
)

// Function is reconcile as template.yaml declares it.
var Function = table.Function

// Build returns reconcile's handler: the books of store, alerts published to alerts
// (nil: none), logging to log.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, alerts reconcile.Publisher) (*lambdaevent.Function, error) {
	return table.Bind(log, parts.Reconciler(cfg.Reconcile, log, store, alerts)), nil
}
