// Package paycallback is the payCallback function's wiring: WeChat Pay APIv3's payment
// and refund notifications (POST /payments/wechatpay/notify and /refund-notify),
// verified and decrypted, each payment and refund result recorded exactly once; and
// the mini-program's message push (GET and POST /wechat/messages), whose settlement
// events record the buyer's confirmation of receipt.
package paycallback

import (
	"context"
	"log/slog"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/notify"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Config is payCallback's configuration (template.yaml, PayCallbackFunction's
// Environment).
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// SecretARN is WECHATPAY_SECRET_ARN: the merchant secret its main reads.
	SecretARN string
	// RefundQueueURL is REFUND_QUEUE_URL; WeChatQueueURL is WECHAT_QUEUE_URL.
	RefundQueueURL, WeChatQueueURL string
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), wiring.PaySecret(&c.SecretARN),
		wiring.RefundQueueURL(&c.RefundQueueURL), wiring.WeChatQueueURL(&c.WeChatQueueURL))
}

// built is what payCallback's routes are served by.
type built struct {
	payments *payments.Notify
	refunds  *refunds.Notify
	messages *shipping.Messages
}

var table = wiring.Define("PayCallbackFunction", "payCallback",
	wiring.Route(payments.RouteNotify, func(b built) httpapi.Route { return b.payments.Route }),
	wiring.Route(refunds.RouteNotify, func(b built) httpapi.Route { return b.refunds.Route }),
	wiring.Route(shipping.RouteMessagesCheck, func(b built) httpapi.Route { return b.messages.Check }),
	wiring.Route(shipping.RouteMessages, func(b built) httpapi.Route { return b.messages.Push }),
).AnswerWith(notify.Answer)

// Function is payCallback as template.yaml declares it.
var Function = table.Function

// Build returns payCallback's handler: notifications verified by verifier, recorded
// on store, logging to log; a late payment's refund goes to refundQueue, a settled
// refund's message to wechatQueue (either nil: none sent); message pushes verified
// with the token messageToken returns (the merchant secret's messageToken; "" refuses
// them all) on the store's clock.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, refundQueue *refunds.Queue, wechatQueue *wxqueue.Queue, verifier *wechatpay.RotatingVerifier, messageToken func(context.Context) string) (*lambdaevent.Function, error) {
	recorder := payments.NewRecorder(store, refunds.NewStarter(store, refundQueue, log), log)
	return table.Bind(log, built{
		payments: payments.NewNotify(verifier, recorder, log, table.Short),
		refunds:  refunds.NewNotify(verifier, parts.Settling(store, wechatQueue, log), log),
		messages: shipping.NewMessages(messageToken, store, log, store.Now),
	}), nil
}
