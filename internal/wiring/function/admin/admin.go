// Package admin is the admin function's wiring: the merchant API under /admin/ (SKUs,
// adjustments, reshards, ledgers, orders, refunds, after-sales, shipments, reconcile), behind the
// HTTP API's AWS_IAM authorization.
package admin

import (
	"log/slog"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Config is admin's configuration (template.yaml, AdminFunction's Environment).
type Config struct {
	Tables    dynamo.Tables    // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	Reconcile reconcile.Config // parts.Reconcile's variables: the run of POST /admin/reconcile
	// RefundQueueURL is REFUND_QUEUE_URL; WeChatQueueURL is WECHAT_QUEUE_URL.
	RefundQueueURL, WeChatQueueURL string
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), parts.Reconcile(&c.Reconcile),
		wiring.RefundQueueURL(&c.RefundQueueURL), wiring.WeChatQueueURL(&c.WeChatQueueURL))
}

// built is what admin's routes are served by.
type built struct {
	catalog   *stock.Merchant
	orders    *orders.Merchant
	refunds   *refunds.Routes
	after     *refunds.AftersaleRoutes
	shipping  *shipping.Routes
	reconcile *reconcile.Routes
}

var table = wiring.Define("AdminFunction", "admin",
	wiring.MerchantRoute(stock.RouteCreate, func(b built) httpapi.MerchantRoute { return b.catalog.Create }),
	wiring.MerchantRoute(stock.RouteList, func(b built) httpapi.MerchantRoute { return b.catalog.List }),
	wiring.MerchantRoute(stock.RouteGet, func(b built) httpapi.MerchantRoute { return stock.WithSKU(b.catalog.Get) }),
	wiring.MerchantRoute(stock.RoutePatch, func(b built) httpapi.MerchantRoute { return stock.WithSKU(b.catalog.Patch) }),
	wiring.MerchantRoute(stock.RouteAdjust, func(b built) httpapi.MerchantRoute { return stock.WithSKU(b.catalog.Adjust) }),
	wiring.MerchantRoute(stock.RouteReshard, func(b built) httpapi.MerchantRoute { return stock.WithSKU(b.catalog.Reshard) }),
	wiring.MerchantRoute(stock.RouteLedger, func(b built) httpapi.MerchantRoute { return stock.WithSKU(b.catalog.Ledger) }),
	wiring.MerchantRoute(orders.RouteList, func(b built) httpapi.MerchantRoute { return b.orders.List }),
	wiring.MerchantRoute(orders.RouteLookup, func(b built) httpapi.MerchantRoute { return b.orders.Lookup }),
	wiring.MerchantRoute(refunds.RouteMerchant, func(b built) httpapi.MerchantRoute { return b.refunds.Merchant }),
	wiring.MerchantRoute(refunds.RouteRetry, func(b built) httpapi.MerchantRoute { return b.refunds.Retry }),
	wiring.MerchantRoute(refunds.RouteSettle, func(b built) httpapi.MerchantRoute { return b.refunds.Settle }),
	wiring.MerchantRoute(refunds.RouteAftersaleApprove, func(b built) httpapi.MerchantRoute { return b.after.Approve }),
	wiring.MerchantRoute(refunds.RouteAftersaleReject, func(b built) httpapi.MerchantRoute { return b.after.Reject }),
	wiring.MerchantRoute(refunds.RouteAftersaleReceived, func(b built) httpapi.MerchantRoute { return b.after.Received }),
	wiring.MerchantRoute(shipping.RouteShip, func(b built) httpapi.MerchantRoute { return b.shipping.Ship }),
	wiring.MerchantRoute(shipping.RoutePresale, func(b built) httpapi.MerchantRoute { return b.shipping.Presale }),
	wiring.MerchantRoute(reconcile.RouteRun, func(b built) httpapi.MerchantRoute { return b.reconcile.Run }),
	wiring.MerchantRoute(reconcile.RouteLatest, func(b built) httpapi.MerchantRoute { return b.reconcile.Latest }),
)

// Function is admin as template.yaml declares it.
var Function = table.Function

// Build returns admin's handler: on store, logging to log; reconcile's alerts go to
// alerts, merchants' refunds (after-sales' too) to refundQueue, shipments' uploads and
// after-sale messages to wechatQueue (any nil: none sent; the shipment route then
// answers 503).
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, alerts reconcile.Publisher, refundQueue *refunds.Queue, wechatQueue *wxqueue.Queue) (*lambdaevent.Function, error) {
	starter := refunds.NewStarter(store, refundQueue, log)
	return table.Bind(log, built{
		catalog:   stock.NewMerchant(store, store.Now),
		orders:    orders.NewMerchant(store, store.Now),
		refunds:   refunds.NewRoutes(store, store, starter, 0),
		after:     refunds.NewAftersaleRoutes(store, starter, notices.Decisions{Queue: parts.Sender(wechatQueue), Log: log}),
		shipping:  shipping.NewRoutes(store, parts.Sender(wechatQueue), log),
		reconcile: reconcile.NewRoutes(parts.Reconciler(cfg.Reconcile, log, store, alerts), store),
	}), nil
}
