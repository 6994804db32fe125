// Package closeorder is the closeOrder function's wiring: it releases the stock of
// unpaid orders from close-order queue messages, from its scheduled sweep and from
// POST /orders/{orderId}/cancel, asking WeChat Pay first about orders that have a
// WeChat Pay order; and it starts payments (POST /orders/{orderId}/pay) and buyers'
// refunds (POST /orders/{orderId}/refund) and after-sale requests (POST
// /orders/{orderId}/aftersales); its sweep then passes the units that came back to the
// SKUs' waitlists, queueing each new hold's subscribe message on the WeChat queue.
package closeorder

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/waitlist"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Config is closeOrder's configuration (template.yaml, CloseOrderFunction's
// Environment).
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// CloseQueueURL is CLOSE_QUEUE_URL; RefundQueueURL is REFUND_QUEUE_URL;
	// WeChatQueueURL is WECHAT_QUEUE_URL (the waitlist's messages).
	CloseQueueURL, RefundQueueURL, WeChatQueueURL string
	// SecretARN is WECHATPAY_SECRET_ARN: the merchant secret its main reads.
	SecretARN string
	// NotifyBaseURL is NOTIFY_BASE_URL, optional: the base URL (https, http only for
	// 127.0.0.1, the local stack; no query, no trailing slash) under which WeChat Pay
	// reaches the notify route, e.g. a custom domain. Unset: each payment's notify_url
	// is built from the pay request itself (payments.StartOptions.NotifyBaseURL).
	NotifyBaseURL string
	// OpenIDClaim is OPENID_CLAIM: the JWT claim holding the buyer's openid.
	OpenIDClaim string
	// UserRefundWindow is USER_REFUND_WINDOW: how long after paidAt a buyer may refund
	// (seconds or a duration such as "24h"; 0 turns buyers' refunds off).
	UserRefundWindow time.Duration
	// WaitlistTemplate is WAITLIST_TEMPLATE_ID, "" when "off": the waitlist message
	// is off, and the sweep's pass queues none.
	WaitlistTemplate string
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), wiring.CloseQueueURL(&c.CloseQueueURL), wiring.PaySecret(&c.SecretARN),
		wiring.Into(&c.NotifyBaseURL, func(get envvar.Lookup) (string, error) {
			return envvar.CallbackBase(get, "NOTIFY_BASE_URL", "the base https URL of the notify route, without a trailing slash")
		}),
		wiring.Required(&c.OpenIDClaim, "OPENID_CLAIM", "the JWT claim holding the buyer's openid, e.g. sub"),
		wiring.RefundQueueURL(&c.RefundQueueURL), wiring.WeChatQueueURL(&c.WeChatQueueURL),
		wiring.Into(&c.UserRefundWindow, func(get envvar.Lookup) (time.Duration, error) { return envvar.Duration(get, "USER_REFUND_WINDOW") }),
		wiring.Into(&c.WaitlistTemplate, func(get envvar.Lookup) (string, error) { return envvar.TemplateID(get, "WAITLIST_TEMPLATE_ID") }))
}

// built is what closeOrder's triggers are served by.
type built struct {
	releaser *orders.Releaser
	start    *payments.Start
	refunds  *refunds.Routes
	after    *refunds.AftersaleRoutes
	waitlist *waitlist.Passer
}

// sweepResult is the schedule's result: the sweep's releases, then the waitlist's
// pass (docs/design.md, "The waitlist").
type sweepResult struct {
	orders.SweepResult
	waitlist.PassResult
}

// sweep releases the unpaid orders due, then passes the units that came back to
// the waitlists.
func (b built) sweep(ctx context.Context) (sweepResult, error) {
	res, err := b.releaser.Sweep(ctx)
	pass, perr := b.waitlist.Pass(ctx)
	return sweepResult{res, pass}, errors.Join(err, perr)
}

var table = wiring.Define("CloseOrderFunction", "closeOrder",
	wiring.Route(orders.RouteCancel, func(b built) httpapi.Route { return b.releaser.Cancel }),
	wiring.Route(payments.RoutePay, func(b built) httpapi.Route { return b.start.Route }),
	wiring.Route(refunds.RouteBuyer, func(b built) httpapi.Route { return b.refunds.Buyer }),
	wiring.Route(refunds.RouteAftersale, func(b built) httpapi.Route { return b.after.Request }),
	wiring.Queue(wiring.CloseOrderQueue, func(b built) wiring.SQSHandler { return b.releaser.HandleSQS }),
	wiring.Schedule(func(b built) wiring.Scheduled { return wiring.Result(b.sweep) }),
)

// Function is closeOrder as template.yaml declares it.
var Function = table.Function

// Build returns closeOrder's handler: on store, logging to log, calling WeChat Pay's
// merchant API through merchant; a release sends its order's close message again to
// closeQueue when it must wait, a buyer's refund goes to refundQueue (either nil: none
// sent; the sweep and the refund function's stuck pass still get to them, later), a
// waitlist hold's subscribe message to wechatQueue (nil, or cfg.WaitlistTemplate
// off: none).
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, closeQueue *closeq.Queue, refundQueue *refunds.Queue, wechatQueue *wxqueue.Queue, merchant *wechatpay.RotatingClient) (*lambdaevent.Function, error) {
	starter := refunds.NewStarter(store, refundQueue, log)
	checker := payments.NewChecker(merchant, payments.NewRecorder(store, starter, log), log, table.Short)
	return table.Bind(log, built{
		releaser: orders.NewReleaser(store, closeQueue, log, orders.Options{Now: store.Now, Payments: checker, Function: table.Short}),
		start: payments.NewStart(store, merchant, log, payments.StartOptions{
			NotifyBaseURL: cfg.NotifyBaseURL, OpenIDClaim: cfg.OpenIDClaim, Now: store.Now,
		}),
		refunds:  refunds.NewRoutes(store, store, starter, cfg.UserRefundWindow),
		after:    refunds.NewAftersaleRoutes(store, starter, nil),
		waitlist: waitlist.NewPasser(store, log, holds(wechatQueue, cfg.WaitlistTemplate, log).Granted),
	}), nil
}

// holds queues the waitlist's messages to q (nil: none), none when the template is
// off (""): the wechat function would drop them. Not parts.Sender: package parts
// links reconcile's settings and the time zone database, which closeOrder would
// carry for nothing (about 0.4 MiB of its bootstrap).
func holds(q *wxqueue.Queue, template string, log *slog.Logger) notices.Holds {
	if q == nil || template == "" {
		return notices.Holds{Log: log}
	}
	return notices.Holds{Queue: q, Log: log}
}
