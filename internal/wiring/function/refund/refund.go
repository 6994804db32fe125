// Package refund is the refund function's wiring, the money step of refunds: refund
// messages (SQS) asked of WeChat Pay's domestic refund API, and on its schedule the
// refunds REFUNDING too long asked about again.
package refund

import (
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Config is refund's configuration (template.yaml, RefundFunction's Environment).
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// RefundQueueURL is REFUND_QUEUE_URL; WeChatQueueURL is WECHAT_QUEUE_URL.
	RefundQueueURL, WeChatQueueURL string
	// SecretARN is WECHATPAY_SECRET_ARN: the merchant secret its main reads.
	SecretARN string
	// NotifyURL is REFUND_NOTIFY_URL: the refund-notify route's absolute https URL, the
	// refunds' notify_url (http only for 127.0.0.1, the local stack).
	NotifyURL string
	// StuckAfter is REFUND_STUCK_SECONDS: how long a refund may stay REFUNDING before
	// the stuck pass asks WeChat Pay about it (and reconcile reports it).
	StuckAfter time.Duration
	// Backoff is how long a failed refund message waits before its second delivery
	// (refunds.Options.Backoff); not an environment variable: zero takes the default.
	Backoff time.Duration
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), wiring.RefundQueueURL(&c.RefundQueueURL), wiring.PaySecret(&c.SecretARN),
		wiring.Into(&c.NotifyURL, func(get envvar.Lookup) (string, error) {
			return envvar.CallbackURL(get, "REFUND_NOTIFY_URL", "the refund-notify route's absolute https URL")
		}),
		wiring.Seconds(&c.StuckAfter, "REFUND_STUCK_SECONDS"), wiring.WeChatQueueURL(&c.WeChatQueueURL))
}

var table = wiring.Define("RefundFunction", "refund",
	wiring.Queue(wiring.RefundQueue, func(r *refunds.Refunder) wiring.SQSHandler { return r.HandleSQS }),
	wiring.Schedule(func(r *refunds.Refunder) wiring.Scheduled { return wiring.Result(r.Stuck) }),
)

// Function is refund as template.yaml declares it.
var Function = table.Function

// Build returns refund's handler: refunds asked of WeChat Pay through merchant,
// recorded on store, logging to log; a refund that must wait goes back to refundQueue,
// a settled refund's message to wechatQueue (either nil: none sent; the stuck pass then
// asks for every refund).
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, refundQueue *refunds.Queue, wechatQueue *wxqueue.Queue, merchant *wechatpay.RotatingClient) (*lambdaevent.Function, error) {
	return table.Bind(log, refunds.NewRefunder(parts.Settling(store, wechatQueue, log), merchant, refundQueue, log, refunds.Options{
		NotifyURL: cfg.NotifyURL, StuckAfter: cfg.StuckAfter, Backoff: cfg.Backoff, Now: store.Now,
	})), nil
}
