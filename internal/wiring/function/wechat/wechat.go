// Package wechat is the wechat function's wiring: the WeChat queue's messages
// (shipping uploads, subscribe messages) sent to WeChat's mini-program server API.
package wechat

import (
	"log/slog"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Config is wechat's configuration (template.yaml, WeChatFunction's Environment).
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// WeChatQueueURL is WECHAT_QUEUE_URL.
	WeChatQueueURL string
	// SecretARN is WECHAT_APP_SECRET_ARN: the secret holding the app id and AppSecret,
	// which its main reads.
	SecretARN string
	// Notices are the subscribe messages' settings (parts.Notices, parts.WaitlistNotice).
	Notices notices.Config
	// OrderDetailPath is ORDER_DETAIL_PATH: the page WeChat's order center opens for an
	// order, containing wxapi.DetailPathPlaceholder; set at the function's cold start.
	OrderDetailPath string
	// Backoff is how long failed WeChat queue work waits before its second delivery
	// (wxqueue.NewWorker); not an environment variable: zero takes the default.
	Backoff time.Duration
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), wiring.WeChatQueueURL(&c.WeChatQueueURL), wiring.AppSecret(&c.SecretARN),
		parts.Notices(&c.Notices), parts.WaitlistNotice(&c.Notices), wiring.Into(&c.OrderDetailPath, detailPath))
}

// detailPath reads ORDER_DETAIL_PATH, which must contain wxapi.DetailPathPlaceholder.
func detailPath(get envvar.Lookup) (string, error) {
	const want = "a mini-program page path containing ${商品订单号}"
	v, err := envvar.Required(get, "ORDER_DETAIL_PATH", want)
	if err == nil && !strings.Contains(v, wxapi.DetailPathPlaceholder) {
		err = &envvar.Error{Name: "ORDER_DETAIL_PATH", Value: v, Want: want}
	}
	return v, err
}

var table = wiring.Define("WeChatFunction", "wechat",
	wiring.Queue(wiring.WeChatQueue, func(w *wxqueue.Worker) wiring.SQSHandler { return w.HandleSQS }),
)

// Function is wechat as template.yaml declares it.
var Function = table.Function

// Build returns wechat's handler: WeChat queue messages (sent again through queue
// when they must wait) served through api, recorded on store, logging to log.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, queue *wxqueue.Queue, api *wxapi.Client) (*lambdaevent.Function, error) {
	up := shipping.NewUploader(store, api, log, store.Now)
	n := notices.New(store, api, parts.Sender(queue), cfg.Notices, log, store.Now)
	return table.Bind(log, wxqueue.NewWorker(queue, log, cfg.Backoff, map[string]wxqueue.Handler{
		wxqueue.KindUpload: up.Upload, wxqueue.KindPresale: up.Declare, wxqueue.KindPayReminder: n.Remind, wxqueue.KindRefundDone: n.RefundDone,
		wxqueue.KindAftersale: n.Aftersale, wxqueue.KindWaitlist: n.Waitlist,
	})), nil
}
