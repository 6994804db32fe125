// Package createorder is the createOrder function's wiring: POST /orders reserves
// stock and opens a PENDING order, GET /orders/{orderId} and GET /orders read the
// buyer's orders, GET /skus/{skuId} and GET /skus the public SKUs, POST
// /skus/{skuId}/queue, GET /queue/{ticket} and GET /skus/{skuId}/line (public) the
// waiting room, POST, GET and DELETE /skus/{skuId}/waitlist the waitlist.
package createorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/waitlist"
	"github.com/stockguard/stockguard/internal/waitroom"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Config is createOrder's configuration (template.yaml, CreateOrderFunction's
// Environment).
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	// PaymentTimeout is PAYMENT_TIMEOUT_SECONDS: how long an order stays PENDING.
	PaymentTimeout time.Duration
	// Shaping is ORDERS_PER_USER_SKU_PER_MINUTE: order requests one user may send for
	// one SKU per minute window, 0 (off) to inventory.MaxShapingPerMinute.
	Shaping inventory.Shaping
	// CloseQueueURL is CLOSE_QUEUE_URL; WeChatQueueURL is WECHAT_QUEUE_URL.
	CloseQueueURL, WeChatQueueURL string
	// Notices are the subscribe messages' settings (parts.Notices).
	Notices notices.Config
	// AdmissionSecretARN is ADMISSION_SECRET_ARN: the Secrets Manager secret the
	// waiting room's admission tokens are signed with (secret.AdmissionKeys), read by
	// the main at cold start.
	AdmissionSecretARN string
	// SecretARN is WECHAT_APP_SECRET_ARN: the secret holding the app id and AppSecret,
	// which the main reads at the first scalper check (RiskAsker).
	SecretARN string
	// OpenIDClaim is OPENID_CLAIM: the JWT claim holding the buyer's openid, which the
	// scalper check tells WeChat.
	OpenIDClaim string
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, tables.Read(&c.Tables), wiring.Seconds(&c.PaymentTimeout, "PAYMENT_TIMEOUT_SECONDS"),
		wiring.CloseQueueURL(&c.CloseQueueURL),
		wiring.Into(&c.Shaping.PerMinute, func(get envvar.Lookup) (int, error) {
			return envvar.Count(get, "ORDERS_PER_USER_SKU_PER_MINUTE", inventory.MaxShapingPerMinute)
		}),
		wiring.WeChatQueueURL(&c.WeChatQueueURL), parts.Notices(&c.Notices), wiring.AppSecret(&c.SecretARN),
		wiring.Required(&c.AdmissionSecretARN, "ADMISSION_SECRET_ARN", "the ARN of the admission signing secret"),
		wiring.Required(&c.OpenIDClaim, "OPENID_CLAIM", "the JWT claim holding the buyer's openid, e.g. sub"))
}

// StoreOptions are the store's options this configuration gives: the payment timeout
// and the shaping, on the clock now (nil: time.Now).
func (c Config) StoreOptions(now func() time.Time) dynamo.Options {
	return dynamo.Options{PaymentTimeout: c.PaymentTimeout, Shaping: c.Shaping, Now: now}
}

// OpenStore is the deployed store this configuration gives, through aws's DynamoDB
// client (dynamo.ClientOptions and dynamo.ForBuyers), on the real clock.
func (c Config) OpenStore(aws aws.Config) *dynamo.Store {
	return dynamo.New(dynamodb.NewFromConfig(aws, dynamo.ClientOptions, dynamo.ForBuyers), c.Tables, c.StoreOptions(nil))
}

// built is what createOrder's routes are served by.
type built struct {
	checkout *orders.Checkout
	public   *stock.Public
	room     *waitroom.Room
	waitlist *waitlist.Routes
}

var table = wiring.Define("CreateOrderFunction", "createOrder",
	wiring.Route(orders.RoutePlace, func(b built) httpapi.Route { return b.checkout.Place }),
	wiring.Route(orders.RouteGet, func(b built) httpapi.Route { return b.checkout.Get }),
	wiring.Route(orders.RouteMine, func(b built) httpapi.Route { return b.checkout.Mine }),
	wiring.Route(orders.RouteAddress, func(b built) httpapi.Route { return b.checkout.ChangeAddress }),
	wiring.Route(orders.RouteAddressPut, func(b built) httpapi.Route { return b.checkout.ChangeAddress }),
	wiring.Route(stock.RouteShow, func(b built) httpapi.Route { return b.public.Show }),
	wiring.Route(stock.RoutePublicList, func(b built) httpapi.Route { return b.public.List }),
	wiring.Route(waitroom.RouteTake, func(b built) httpapi.Route { return b.room.Take }),
	wiring.Route(waitroom.RoutePoll, func(b built) httpapi.Route { return b.room.Poll }),
	wiring.Route(waitroom.RouteLine, func(b built) httpapi.Route { return b.room.Line }),
	// The waitlist (package waitlist).
	wiring.Route(waitlist.RouteJoin, func(b built) httpapi.Route { return b.waitlist.Join }),
	wiring.Route(waitlist.RouteGet, func(b built) httpapi.Route { return b.waitlist.Get }),
	wiring.Route(waitlist.RouteLeave, func(b built) httpapi.Route { return b.waitlist.Leave }),
)

// Function is createOrder as template.yaml declares it.
var Function = table.Function

// Build returns createOrder's handler: on store (built with cfg.StoreOptions), logging
// to log, each order's close message sent to closeQueue and its pay reminder to
// wechatQueue (either nil: none sent; the sweep still releases the order); the
// waiting room's admissions are minted and checked with keys; buyers of SKUs with a
// riskThreshold are rated by ask (RiskAsker; nil: nobody is checked) when they order,
// take a ticket or join a waitlist, through one scalper check, so the three routes
// share the instance's copy of each answer.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, closeQueue *closeq.Queue, wechatQueue *wxqueue.Queue, keys *admission.Keys, ask orders.RiskAsker) (*lambdaevent.Function, error) {
	placed := func(ctx context.Context, o *inventory.Order) {
		notices.Schedule(ctx, parts.Sender(wechatQueue), cfg.Notices, log, table.Short, o, store.Now())
	}
	b := built{
		checkout: orders.NewCheckout(store, closeQueue, log, table.Short).WithSubscriptions(cfg.Notices.Templates(), placed).WithAdmissions(keys),
		public:   stock.NewPublic(store, store.Now),
		room:     waitroom.NewRoom(store, keys, store.Now),
		waitlist: waitlist.New(store, store.Now),
	}
	if ask != nil {
		risk := orders.NewRiskCheck(store, ask, cfg.OpenIDClaim, log, table.Short, store.Now)
		b.checkout.WithRiskCheck(risk)
		b.room.WithRiskCheck(risk.Check)
		b.waitlist.WithRiskCheck(risk.Check)
	}
	return table.Bind(log, b), nil
}

// RiskAsker is the scalper check's question to WeChat (getUserRiskRank, scene 1,
// marketing fraud) through the client open returns, opened at the first question so
// that a shop without thresholds never reads the app's secret; a failed open is tried
// again at the next question. Its errors quote neither the openid nor WeChat's errmsg.
func RiskAsker(open func(context.Context) (*wxapi.Client, error)) orders.RiskAsker {
	var mu sync.Mutex
	var client *wxapi.Client
	opened := func(ctx context.Context) (*wxapi.Client, error) {
		mu.Lock()
		defer mu.Unlock()
		if client == nil {
			c, err := open(ctx)
			if err != nil {
				return nil, fmt.Errorf("open the WeChat server API client: %w", err)
			}
			client = c
		}
		return client, nil
	}
	return func(ctx context.Context, openid, clientIP string) (inventory.RiskAnswer, error) {
		c, err := opened(ctx)
		if err != nil {
			return inventory.RiskAnswer{}, err
		}
		rank, err := c.GetUserRiskRank(ctx, wxapi.RiskRequest{OpenID: openid, Scene: wxapi.SceneMarketing, ClientIP: clientIP})
		var werr *wxapi.Error
		switch {
		case errors.As(err, &werr):
			return inventory.RiskAnswer{}, fmt.Errorf("%s errcode %d", wxapi.OpGetUserRiskRank, werr.Code)
		case err != nil:
			return inventory.RiskAnswer{}, err
		}
		return inventory.RiskAnswer{Rank: rank.Rank, Known: true}, nil
	}
}
