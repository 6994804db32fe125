package wiring

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/notify"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/stock"
)

// The table: which function serves which trigger, and with what — the one place that
// says it (template.yaml must declare the same, which tools/internal/sam's wiring tests
// check). Capability packages provide the adapters; a function is its rows. Each
// function's rows are a function of their own, reached only through that function's
// Function value.

type sqsHandler = func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
type scheduled = func(context.Context) (any, error)

func createOrder() spec {
	return spec{short: "createOrder", settings: []setting{tables, paymentTimeout, closeQueue, shaping, wechatQueue, noticeSettings}, rows: []row{
		route(orders.RoutePlace, func(p *parts) httpapi.Route { return p.checkout().Place }),
		route(orders.RouteGet, func(p *parts) httpapi.Route { return p.checkout().Get }),
		route(orders.RouteMine, func(p *parts) httpapi.Route { return p.checkout().Mine }),
		route(stock.RouteShow, func(p *parts) httpapi.Route { return p.public().Show }),
		route(stock.RoutePublicList, func(p *parts) httpapi.Route { return p.public().List }),
	}}
}

func closeOrder() spec {
	return spec{short: "closeOrder", settings: []setting{tables, closeQueue, paySecret, notifyBase, openIDClaim, refundQueue, refundWindow}, rows: []row{
		route(orders.RouteCancel, func(p *parts) httpapi.Route { return p.releaser().Cancel }),
		route(payments.RoutePay, func(p *parts) httpapi.Route { return p.start().Route }),
		route(refunds.RouteBuyer, func(p *parts) httpapi.Route { return p.refundRoutes().Buyer }),
		queue(CloseOrderQueue, func(p *parts) sqsHandler { return p.releaser().HandleSQS }),
		schedule(func(p *parts) scheduled { return result(p.releaser().Sweep) }),
	}}
}

func payCallback() spec {
	return spec{short: "payCallback", settings: []setting{tables, paySecret, refundQueue, wechatQueue}, answer: notify.Answer, rows: []row{
		route(payments.RouteNotify, func(p *parts) httpapi.Route { return p.paymentNotify().Route }),
		route(refunds.RouteNotify, func(p *parts) httpapi.Route { return p.refundNotify().Route }),
	}}
}

func refund() spec {
	return spec{short: "refund", settings: []setting{tables, refundQueue, paySecret, refundNotify, refundStuck, wechatQueue}, rows: []row{
		queue(RefundQueue, func(p *parts) sqsHandler { return p.refunder().HandleSQS }),
		schedule(func(p *parts) scheduled { return result(p.refunder().Stuck) }),
	}}
}

func reconcileFunction() spec {
	return spec{short: "reconcile", settings: []setting{tables, reconcileSettings}, rows: []row{
		schedule(func(p *parts) scheduled { return result(p.reconciler().Run) }),
	}}
}

func admin() spec {
	return spec{short: "admin", settings: []setting{tables, reconcileSettings, refundQueue, wechatQueue}, rows: []row{
		merchantRoute(stock.RouteCreate, func(p *parts) httpapi.MerchantRoute { return p.catalog().Create }),
		merchantRoute(stock.RouteList, func(p *parts) httpapi.MerchantRoute { return p.catalog().List }),
		merchantRoute(stock.RouteGet, func(p *parts) httpapi.MerchantRoute { return stock.WithSKU(p.catalog().Get) }),
		merchantRoute(stock.RoutePatch, func(p *parts) httpapi.MerchantRoute { return stock.WithSKU(p.catalog().Patch) }),
		merchantRoute(stock.RouteAdjust, func(p *parts) httpapi.MerchantRoute { return stock.WithSKU(p.catalog().Adjust) }),
		merchantRoute(stock.RouteReshard, func(p *parts) httpapi.MerchantRoute { return stock.WithSKU(p.catalog().Reshard) }),
		merchantRoute(stock.RouteLedger, func(p *parts) httpapi.MerchantRoute { return stock.WithSKU(p.catalog().Ledger) }),
		merchantRoute(orders.RouteList, func(p *parts) httpapi.MerchantRoute { return p.orderLists().List }),
		merchantRoute(orders.RouteLookup, func(p *parts) httpapi.MerchantRoute { return p.orderLists().Lookup }),
		merchantRoute(refunds.RouteMerchant, func(p *parts) httpapi.MerchantRoute { return p.refundRoutes().Merchant }),
		merchantRoute(refunds.RouteRetry, func(p *parts) httpapi.MerchantRoute { return p.refundRoutes().Retry }),
		merchantRoute(refunds.RouteSettle, func(p *parts) httpapi.MerchantRoute { return p.refundRoutes().Settle }),
		merchantRoute(shipping.RouteShip, func(p *parts) httpapi.MerchantRoute { return p.shipRoutes().Ship }),
		merchantRoute(shipping.RoutePresale, func(p *parts) httpapi.MerchantRoute { return p.shipRoutes().Presale }),
		merchantRoute(reconcile.RouteRun, func(p *parts) httpapi.MerchantRoute { return p.reconcileRoutes().Run }),
		merchantRoute(reconcile.RouteLatest, func(p *parts) httpapi.MerchantRoute { return p.reconcileRoutes().Latest }),
	}}
}

func loginFunction() spec {
	return spec{short: "login", settings: []setting{ordersTable, paySecret, keyID, issuer, audience}, rows: []row{
		route(login.RouteLogin, func(p *parts) httpapi.Route { return p.login().Route }),
	}}
}

func jwks() spec {
	return spec{short: "jwks", settings: []setting{keyID, otherKeyID, issuerIfSet}, rows: []row{
		route(login.RouteDiscovery, func(p *parts) httpapi.Route { return p.documents().Discovery }),
		route(login.RouteJWKS, func(p *parts) httpapi.Route { return p.documents().JWKS }),
	}}
}

func alertChat() spec {
	return spec{short: "alertChat", settings: []setting{ordersTable, chatSecret, quiet, runbook}, rows: []row{
		topic(AlertsTopic, func(p *parts) func(context.Context, events.SNSEvent) error { return p.notifier().Notify }),
		queue(AlertChatFailedQueue, func(p *parts) sqsHandler { return p.notifier().Redrive }),
		schedule(func(p *parts) scheduled { return result(p.notifier().Flush) }),
	}}
}

func wechat() spec {
	return spec{short: "wechat", settings: []setting{tables, wechatQueue, paySecret, noticeSettings, detailPath}, rows: []row{
		queue(WeChatQueue, func(p *parts) sqsHandler { return p.wechatWorker().HandleSQS }),
	}}
}
