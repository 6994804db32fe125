package wiring

import (
	"context"
	"errors"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// parts builds, once each and only when a row of the function's table asks, the
// capability components one function serves with. A part that cannot be built records
// the first error, which Build returns.
type parts struct {
	function string // short name
	cfg      Config
	c        Clients
	err      error

	st        *dynamo.Store
	starterP  *refunds.Starter
	recorderP *payments.Recorder
	reconP    *reconcile.Reconciler
	releaserP *orders.Releaser
	publicP   *stock.Public
}

// fail records err unless an earlier one was recorded.
func (p *parts) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// need records that the function needs a client it was not given.
func (p *parts) need(missing bool, what string) bool {
	if missing {
		p.fail(errors.New("no " + what + " among the clients"))
	}
	return !missing
}

// store is the function's one store on its tables.
func (p *parts) store() *dynamo.Store {
	if p.st == nil {
		opts := dynamo.Options{PaymentTimeout: p.cfg.PaymentTimeout, Shaping: p.cfg.Shaping, Now: p.c.Now}
		if p.c.NewStore != nil {
			p.st = p.c.NewStore(p.cfg.Tables, opts)
		} else {
			p.need(p.c.DynamoDB == nil, "DynamoDB client")
			p.st = dynamo.New(p.c.DynamoDB, p.cfg.Tables, opts)
		}
	}
	return p.st
}

// closeQueue is the close-order queue; nil sends nothing.
func (p *parts) closeQueue() *closeq.Queue { return p.c.CloseQueue }

// refundQueue is the refund queue; nil sends nothing (the stuck pass then requests
// every refund).
func (p *parts) refundQueue() *refunds.Queue { return p.c.RefundQueue }

// public is the public SKU routes, one for both so they share one cache of answers.
func (p *parts) public() *stock.Public {
	if p.publicP == nil {
		p.publicP = stock.NewPublic(p.store(), p.store().Now)
	}
	return p.publicP
}

func (p *parts) checkout() *orders.Checkout {
	placed := func(ctx context.Context, o *inventory.Order) {
		notices.Schedule(ctx, p.wechatQueue(), p.cfg.Notices, p.c.Log, p.function, o, p.c.Now())
	}
	return orders.NewCheckout(p.store(), p.closeQueue(), p.c.Log, p.function).WithSubscriptions(p.cfg.Notices.Templates(), placed)
}

// wechatQueue is the WeChat queue; nil (no client) sends nothing.
func (p *parts) wechatQueue() notices.Sender {
	if p.c.WeChatQueue == nil {
		return nil
	}
	return p.c.WeChatQueue
}

// settling is the store refunds settle on: MarkRefunded also queues the refund-done
// message (notices.Settled).
func (p *parts) settling() settlingStore {
	return settlingStore{p.store(), notices.Settled[*dynamo.Store]{Store: p.store(), Queue: p.wechatQueue(), Log: p.c.Log}}
}

// settlingStore is the store with notices.Settled's MarkRefunded.
type settlingStore struct {
	*dynamo.Store
	settled notices.Settled[*dynamo.Store]
}

// MarkRefunded is notices.Settled.MarkRefunded.
func (s settlingStore) MarkRefunded(ctx context.Context, res inventory.RefundResult) (*inventory.Refund, bool, error) {
	return s.settled.MarkRefunded(ctx, res)
}

func (p *parts) shipRoutes() *shipping.Routes {
	return shipping.NewRoutes(p.store(), p.wechatQueue(), p.c.Log)
}

// wxAPI is WeChat's server API client, which the function must have.
func (p *parts) wxAPI() *wxapi.Client {
	p.need(p.c.WxAPI == nil, "WeChat server API client")
	return p.c.WxAPI
}

func (p *parts) wechatWorker() *wxqueue.Worker {
	api := p.wxAPI()
	q := p.wechatQueue()
	up := shipping.NewUploader(p.store(), api, p.c.Log, p.c.Now)
	n := notices.New(p.store(), api, q, p.cfg.Notices, p.c.Log, p.c.Now)
	return wxqueue.NewWorker(p.c.WeChatQueue, p.c.Log, p.cfg.WeChatBackoff, map[string]wxqueue.Handler{
		wxqueue.KindUpload: up.Upload, wxqueue.KindPresale: up.Declare, wxqueue.KindPayReminder: n.Remind, wxqueue.KindRefundDone: n.RefundDone,
	})
}

func (p *parts) releaser() *orders.Releaser {
	if p.releaserP == nil {
		p.releaserP = orders.NewReleaser(p.store(), p.closeQueue(), p.c.Log, orders.Options{
			Now: p.c.Now, Payments: p.checker(), Function: p.function,
		})
	}
	return p.releaserP
}

func (p *parts) orderLists() *orders.Merchant { return orders.NewMerchant(p.store(), p.store().Now) }

// merchant is the WeChat Pay merchant API client, which the function must have.
func (p *parts) merchant() payments.Merchant {
	if !p.need(p.c.WeChatPay == nil, "WeChat Pay merchant client") {
		return nil
	}
	return p.c.WeChatPay
}

func (p *parts) start() *payments.Start {
	return payments.NewStart(p.store(), p.merchant(), p.c.Log, payments.StartOptions{
		NotifyBaseURL: p.cfg.NotifyBaseURL, OpenIDClaim: p.cfg.OpenIDClaim, Now: p.c.Now,
	})
}

func (p *parts) recorder() *payments.Recorder {
	if p.recorderP == nil {
		p.recorderP = payments.NewRecorder(p.store(), p.starter(), p.c.Log)
	}
	return p.recorderP
}

func (p *parts) checker() *payments.Checker {
	return payments.NewChecker(p.merchant(), p.recorder(), p.c.Log, p.function)
}

func (p *parts) paymentNotify() *payments.Notify {
	p.need(p.c.Notifications == nil, "WeChat Pay notification verifier")
	return payments.NewNotify(p.c.Notifications, p.recorder(), p.c.Log, p.function)
}

func (p *parts) starter() *refunds.Starter {
	if p.starterP == nil {
		p.starterP = refunds.NewStarter(p.store(), p.refundQueue(), p.c.Log)
	}
	return p.starterP
}

func (p *parts) refundRoutes() *refunds.Routes {
	return refunds.NewRoutes(p.store(), p.store(), p.starter(), p.cfg.UserRefundWindow)
}

func (p *parts) refundNotify() *refunds.Notify {
	p.need(p.c.Notifications == nil, "WeChat Pay notification verifier")
	return refunds.NewNotify(p.c.Notifications, p.settling(), p.c.Log)
}

func (p *parts) refunder() *refunds.Refunder {
	var pay refunds.Payments
	if p.need(p.c.WeChatPay == nil, "WeChat Pay merchant client") {
		pay = p.c.WeChatPay
	}
	return refunds.NewRefunder(p.settling(), pay, p.refundQueue(), p.c.Log, refunds.Options{
		NotifyURL: p.cfg.RefundNotifyURL, StuckAfter: p.cfg.RefundStuckAfter, Backoff: p.cfg.RefundBackoff, Now: p.c.Now,
	})
}

func (p *parts) reconciler() *reconcile.Reconciler {
	if p.reconP == nil {
		cfg := p.cfg.Reconcile
		if cfg.Now == nil {
			cfg.Now = p.c.Now
		}
		p.reconP = reconcile.New(p.store(), p.c.Alerts, p.c.Log, cfg)
	}
	return p.reconP
}

func (p *parts) reconcileRoutes() *reconcile.Routes {
	return reconcile.NewRoutes(p.reconciler(), p.store())
}

func (p *parts) catalog() *stock.Merchant { return stock.NewMerchant(p.store(), p.store().Now) }

func (p *parts) login() *login.Login {
	p.need(p.c.WeChatLogin == nil, "WeChat login client")
	p.need(p.c.Signer == nil, "token signer")
	tokens, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: p.cfg.Issuer, Audience: p.cfg.Audience, KeyID: p.cfg.KeyID, Now: p.c.Now}, p.c.Signer)
	if err != nil {
		p.fail(err)
	}
	l, err := login.New(p.c.WeChatLogin, tokens, p.store(), login.Options{Now: p.c.Now, Sessions: p.store(), SealKey: p.c.TokenSealKey, Log: p.c.Log})
	if err != nil {
		p.fail(err)
	}
	return l
}

func (p *parts) documents() *login.Documents {
	d, err := login.NewDocuments(p.cfg.Issuer, p.c.Keys)
	if err != nil {
		p.fail(err)
	}
	return d
}

func (p *parts) notifier() *alertchat.Notifier {
	p.need(p.c.Webhooks == nil, "chat webhooks")
	return alertchat.New(p.c.Log, alertchat.Options{
		Webhooks: p.c.Webhooks, Quiet: p.store(), Paces: p.store(), QuietPeriod: p.cfg.QuietPeriod, Runbook: p.cfg.Runbook, Now: p.c.Now,
	})
}
