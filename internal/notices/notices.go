// Package notices sends the buyer WeChat one-time subscribe messages ("发送订阅消息",
// package wxapi): a pay reminder shortly before an unpaid order is released, and a
// refund-done message when a refund settles (an after-sale's too: its refund is one
// like any other), and an after-sale message when the merchant approves or rejects
// a buyer's after-sale, and a waitlist message when the waitlist's pass gives a
// buyer a hold. The buyer accepts the templates in the
// mini-program (wx.requestSubscribeMessage) at checkout; the accepted template ids
// come with POST /orders and are kept on the order (inventory.Order.Subscriptions). The
// waitlist's template is accepted on joining the waitlist (POST
// /skus/{skuId}/waitlist, inventory.WaitlistEntry.Subscribed).
//
// Sending never blocks or fails the order flow: the work goes on the WeChat queue
// (package wxqueue) and the wechat function sends it. Each message goes out at most
// once: its sender first claims it in the store (dynamo.Store.ClaimNotice, a
// conditional put), and gives the claim back only when WeChat could not take it and
// the message is to be retried. A one-time subscription allows one send per
// acceptance anyway ("订阅消息": 一次性订阅消息, "用户订阅一次，开发者可下发一条消息").
// Failures count in NoticeFailed (alarmed, RUNBOOK.md NoticeFailedAlarm).
//
// The pay reminder goes out Lead before expiresAt, only while the order is still
// PENDING and its payment window open: a reminder message is sent with the order,
// delayed to its due time, hopping through the queue when that is more than
// wxqueue.MaxDelay (900 s, SQS's longest DelaySeconds) away.
package notices

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// MetricFunction is the Function dimension of NoticeSent and NoticeFailed, whichever
// function emits them: the one the NoticeFailedAlarm watches.
const MetricFunction = "wechat"

// Template keywords of the messages (each template chosen in the mini-program's
// console must have exactly these: "订阅消息" 订阅消息参数值内容限制说明 gives each
// kind's rules, wxapi.CheckKeyword checks them):
//   - pay reminder: character_string1 the order id, amount2 the amount ("¥399.00"),
//     time3 when the order is released (China Standard Time, "2026-11-11 08:15");
//   - refund done: character_string1 the order id, amount2 the amount refunded;
//   - after-sale decided: character_string1 the order id, phrase2 the decision
//     ("已同意" approved, "已拒绝" rejected), thing3 what next (the rejection's reason,
//     cut to 20 characters; "请寄回商品" for a return-refund to send back; "退款处理中"
//     for a refund under way);
//   - waitlist hold: thing1 the SKU's name (cut to 20 characters), number2 the units
//     held, time3 when the hold ends (China Standard Time, to the minute, rounded down).
var (
	PayReminderKeywords = []string{"character_string1", "amount2", "time3"}
	RefundDoneKeywords  = []string{"character_string1", "amount2"}
	AftersaleKeywords   = []string{"character_string1", "phrase2", "thing3"}
	WaitlistKeywords    = []string{"thing1", "number2", "time3"}
)

// Config is what the notices need besides their clients.
type Config struct {
	// PayReminderTemplate, RefundDoneTemplate and AftersaleTemplate are the template
	// ids (PAY_REMINDER_TEMPLATE_ID, REFUND_DONE_TEMPLATE_ID, AFTERSALE_TEMPLATE_ID);
	// empty turns that message off.
	PayReminderTemplate, RefundDoneTemplate, AftersaleTemplate string
	// WaitlistTemplate is the waitlist hold's template id (WAITLIST_TEMPLATE_ID; empty:
	// no message); read by the wechat function only, and not one POST /orders accepts.
	WaitlistTemplate string
	// Lead is how long before expiresAt the pay reminder is due (PAY_REMINDER_LEAD_SECONDS).
	Lead time.Duration
	// Page is the mini-program page a message opens, the order id appended:
	// "pages/order/index?orderId=" (ORDER_PAGE).
	Page string
	// SKUPage is the mini-program page the waitlist message opens, the SKU id
	// appended: "pages/sku/index?skuId=" (SKU_PAGE).
	SKUPage string
	// MiniprogramState is the mini-program version a message opens (wxapi.StateFormal,
	// StateTrial, StateDeveloper; empty: formal).
	MiniprogramState string
}

// Templates are the configured template ids POST /orders accepts (not the waitlist's).
func (c Config) Templates() []string {
	var out []string
	for _, t := range []string{c.PayReminderTemplate, c.RefundDoneTemplate, c.AftersaleTemplate} {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Store is what the notices need of the store (dynamo.Store).
type Store interface {
	Lookup(ctx context.Context, id string) (*inventory.Order, error)
	RefundByNo(ctx context.Context, outRefundNo string) (*inventory.Refund, error)
	WaitlistEntryByID(ctx context.Context, id string) (inventory.WaitlistEntry, error)
	SKU(ctx context.Context, id string) (*inventory.SKU, error)
	ClaimNotice(ctx context.Context, key string) (bool, error)
	DropNotice(ctx context.Context, key string) error
}

// WeChat sends subscribe messages (*wxapi.Client).
type WeChat interface {
	SendSubscribeMessage(ctx context.Context, m wxapi.SubscribeMessage) error
}

// Sender queues work for the wechat function (*wxqueue.Queue).
type Sender interface {
	Send(ctx context.Context, m wxqueue.Message, delay time.Duration) error
}

// Schedule queues the pay reminder of a newly placed order o whose buyer accepted its
// template, due Lead before o.ExpiresAt; none when that is not after now (a payment
// window no longer than Lead: reminding at once would only repeat the checkout). It
// never fails the caller: a send that fails is logged and counted in NoticeFailed,
// and the buyer gets no reminder. queue nil: nothing.
func Schedule(ctx context.Context, queue Sender, cfg Config, log *slog.Logger, function string, o *inventory.Order, now time.Time) {
	at := o.ExpiresAt.Add(-cfg.Lead)
	if queue == nil || cfg.PayReminderTemplate == "" || !slices.Contains(o.Subscriptions, cfg.PayReminderTemplate) || !at.After(now) {
		return
	}
	if err := queue.Send(ctx, wxqueue.Message{Kind: wxqueue.KindPayReminder, OrderID: o.ID, At: at.UTC()}, at.Sub(now)); err != nil {
		log.LogAttrs(ctx, slog.LevelError, "pay reminder not queued", slog.String("orderId", o.ID), slog.String("error", err.Error()))
		metric.Emit(ctx, log, function, metric.NoticeFailed.Of(1))
	}
}

// Settled is a refund store whose MarkRefunded, when it turns a refund REFUNDED,
// queues the refund-done message: the one hook where a refund settles.
type Settled[S interface {
	MarkRefunded(ctx context.Context, res inventory.RefundResult) (*inventory.Refund, bool, error)
}] struct {
	Store S
	Queue Sender // nil: no message
	Log   *slog.Logger
}

// MarkRefunded is Store.MarkRefunded, then the refund-done message queued when this
// call settled the refund. A failed send is logged and counted, never returned.
func (s Settled[S]) MarkRefunded(ctx context.Context, res inventory.RefundResult) (*inventory.Refund, bool, error) {
	r, changed, err := s.Store.MarkRefunded(ctx, res)
	if err == nil && changed && r.Status == inventory.StatusRefunded && s.Queue != nil {
		if qerr := s.Queue.Send(ctx, wxqueue.Message{Kind: wxqueue.KindRefundDone, OutRefundNo: r.OutRefundNo}, 0); qerr != nil {
			s.Log.LogAttrs(ctx, slog.LevelError, "refund-done message not queued", slog.String("outRefundNo", r.OutRefundNo), slog.String("error", qerr.Error()))
			metric.Emit(ctx, s.Log, MetricFunction, metric.NoticeFailed.Of(1))
		}
	}
	return r, changed, err
}

// Decisions queues the after-sale message of each decision the merchant makes
// (refunds.Notifier).
type Decisions struct {
	Queue Sender // nil: no message
	Log   *slog.Logger
}

// AftersaleDecided queues the message telling the buyer of order orderID how
// after-sale aftersaleID was decided; the wechat function sends it once (a decision
// made again is the same message, claimed once). A failed send is logged and counted,
// never returned: the decision stands.
func (d Decisions) AftersaleDecided(ctx context.Context, orderID, aftersaleID string) {
	if d.Queue == nil {
		return
	}
	if err := d.Queue.Send(ctx, wxqueue.Message{Kind: wxqueue.KindAftersale, OrderID: orderID, AftersaleID: aftersaleID}, 0); err != nil {
		d.Log.LogAttrs(ctx, slog.LevelError, "after-sale message not queued", slog.String("orderId", orderID), slog.String("error", err.Error()))
		metric.Emit(ctx, d.Log, MetricFunction, metric.NoticeFailed.Of(1))
	}
}

// Holds queues the waitlist message of each hold the waitlist's pass gives
// (waitlist.NewPasser's granted, in closeOrder's sweep).
type Holds struct {
	Queue Sender // nil: no message
	Log   *slog.Logger
}

// Granted queues the message of e's new hold when its buyer accepted the waitlist's
// template (e.Subscribed); the wechat function sends it once, if the hold still
// stands. A failed send is logged (the SKU and the entry id, never the buyer) and
// counted, never returned: the hold stands.
func (h Holds) Granted(ctx context.Context, e inventory.WaitlistEntry) {
	if h.Queue == nil || !e.Subscribed {
		return
	}
	if err := h.Queue.Send(ctx, wxqueue.Message{Kind: wxqueue.KindWaitlist, WaitlistID: e.ID, HoldRef: e.Ref}, 0); err != nil {
		h.Log.LogAttrs(ctx, slog.LevelError, "waitlist message not queued", slog.String("skuId", e.SKU),
			slog.String("waitlistId", e.ID), slog.String("error", err.Error()))
		metric.Emit(ctx, h.Log, MetricFunction, metric.NoticeFailed.Of(1))
	}
}

// Notices sends the messages (the wechat function's KindPayReminder, KindRefundDone,
// KindAftersale and KindWaitlist work).
type Notices struct {
	store  Store
	wechat WeChat
	queue  Sender
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
}

// New returns the notices over store, sending with wechat, hopping reminders due
// later than wxqueue.MaxDelay through queue, on the clock now (nil: time.Now).
func New(store Store, wechat WeChat, queue Sender, cfg Config, log *slog.Logger, now func() time.Time) *Notices {
	if now == nil {
		now = time.Now
	}
	return &Notices{store: store, wechat: wechat, queue: queue, cfg: cfg, log: log, now: now}
}

// shanghai is China Standard Time (UTC+8, no daylight saving), the time buyers read.
var shanghai = time.FixedZone("CST", 8*3600)

// minute is t as a time keyword in China Standard Time, to the minute (rounded down):
// "2026-11-11 08:15".
func minute(t time.Time) string { return t.In(shanghai).Format("2006-01-02 15:04") }

// Remind sends the pay reminder m names: not before m.At (earlier deliveries are sent
// again with the time left, a hop), and only while the order is PENDING before its
// expiresAt and its buyer accepted the template; once. Errors: the store's, and
// WeChat's that are worth retrying.
func (n *Notices) Remind(ctx context.Context, m wxqueue.Message) error {
	now := n.now()
	if left := m.At.Sub(now); left >= time.Second && n.queue != nil {
		return n.queue.Send(ctx, m, left)
	}
	o, err := n.store.Lookup(ctx, m.OrderID)
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		return nil // a reminder sent ahead for an order that never opened
	case err != nil:
		return err
	case o.Status != inventory.StatusPending || !now.Before(o.ExpiresAt) || n.cfg.PayReminderTemplate == "" ||
		!slices.Contains(o.Subscriptions, n.cfg.PayReminderTemplate):
		return nil
	}
	return n.send(ctx, "remind#"+o.ID, wxapi.SubscribeMessage{
		ToUser: o.UserID, TemplateID: n.cfg.PayReminderTemplate, Page: n.cfg.Page + o.ID,
		Data: map[string]string{
			"character_string1": o.ID, "amount2": yuan(o.Amount),
			"time3": minute(o.ExpiresAt),
		},
		MiniprogramState: n.cfg.MiniprogramState,
	})
}

// RefundDone sends the refund-done message of the refund m names, once it is
// REFUNDED and its order's buyer accepted the template; once per refund. Errors: the
// store's, and WeChat's that are worth retrying.
func (n *Notices) RefundDone(ctx context.Context, m wxqueue.Message) error {
	r, err := n.store.RefundByNo(ctx, m.OutRefundNo)
	switch {
	case errors.Is(err, inventory.ErrRefundNotFound):
		return nil
	case err != nil:
		return err
	case r.Status != inventory.StatusRefunded || n.cfg.RefundDoneTemplate == "":
		return nil
	}
	o, err := n.store.Lookup(ctx, r.OrderID)
	if err != nil || !slices.Contains(o.Subscriptions, n.cfg.RefundDoneTemplate) {
		return err
	}
	return n.send(ctx, "refunddone#"+r.OutRefundNo, wxapi.SubscribeMessage{
		ToUser: o.UserID, TemplateID: n.cfg.RefundDoneTemplate, Page: n.cfg.Page + o.ID,
		Data:             map[string]string{"character_string1": o.ID, "amount2": yuan(r.RefundAmount)},
		MiniprogramState: n.cfg.MiniprogramState,
	})
}

// Aftersale sends the after-sale message m names once the after-sale is approved or
// rejected and its order's buyer accepted the template; once per after-sale and
// decision. Errors: the store's, and WeChat's that are worth retrying.
func (n *Notices) Aftersale(ctx context.Context, m wxqueue.Message) error {
	if n.cfg.AftersaleTemplate == "" {
		return nil
	}
	o, err := n.store.Lookup(ctx, m.OrderID)
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		return nil
	case err != nil:
		return err
	}
	a := o.Aftersale(m.AftersaleID)
	if a == nil || a.DecidedAt == nil || !slices.Contains(o.Subscriptions, n.cfg.AftersaleTemplate) {
		return nil
	}
	decision, next := "已同意", "退款处理中"
	switch {
	case a.Status == inventory.AftersaleRejected:
		decision, next = "已拒绝", cut(a.RejectReason, 20)
	case a.Kind == inventory.AftersaleReturnRefund && a.ReceivedAt == nil:
		next = "请寄回商品"
	}
	return n.send(ctx, "aftersale#"+o.ID+"#"+a.ID, wxapi.SubscribeMessage{
		ToUser: o.UserID, TemplateID: n.cfg.AftersaleTemplate, Page: n.cfg.Page + o.ID,
		Data:             map[string]string{"character_string1": o.ID, "phrase2": decision, "thing3": next},
		MiniprogramState: n.cfg.MiniprogramState,
	})
}

// Waitlist sends the waitlist message m names: to the entry's buyer, if they
// subscribed and the entry still holds the hold m names (the same ref, not run out):
// the SKU's name, the units held and when the hold ends, opening the SKU's page; once
// per hold. A hold that passed, was used or was left sends nothing. Errors: the
// store's, and WeChat's that are worth retrying.
func (n *Notices) Waitlist(ctx context.Context, m wxqueue.Message) error {
	if n.cfg.WaitlistTemplate == "" {
		return nil
	}
	e, err := n.store.WaitlistEntryByID(ctx, m.WaitlistID)
	switch {
	case errors.Is(err, inventory.ErrWaitlistNotFound):
		return nil
	case err != nil:
		return err
	case e.Ref != m.HoldRef || !e.Subscribed || !e.Holds(n.now()):
		return nil
	}
	sku, err := n.store.SKU(ctx, e.SKU)
	switch {
	case errors.Is(err, inventory.ErrSKUNotFound):
		return nil
	case err != nil:
		return err
	}
	return n.send(ctx, "waitlist#"+e.Ref, wxapi.SubscribeMessage{
		ToUser: e.User, TemplateID: n.cfg.WaitlistTemplate, Page: n.cfg.SKUPage + e.SKU,
		Data: map[string]string{
			"thing1": cut(cmp.Or(sku.Name, sku.ID), 20), "number2": strconv.Itoa(e.Units),
			"time3": minute(e.HoldUntil),
		},
		MiniprogramState: n.cfg.MiniprogramState,
	})
}

// cut is s in at most n characters, "…" ending one that was longer.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// send claims key and sends msg: a claim taken before means sent (or being sent)
// already. A buyer with no subscription left (ErrNotSubscribed) is their choice, not
// a failure; an answer worth retrying gives the claim back and is returned; any other
// is final, logged and counted.
func (n *Notices) send(ctx context.Context, key string, msg wxapi.SubscribeMessage) error {
	claimed, err := n.store.ClaimNotice(ctx, key)
	if err != nil || !claimed {
		return err
	}
	err = n.wechat.SendSubscribeMessage(ctx, msg)
	switch {
	case err == nil:
		metric.Emit(ctx, n.log, MetricFunction, metric.NoticeSent.Of(1))
		return nil
	case errors.Is(err, wxapi.ErrNotSubscribed):
		return nil
	case wxapi.Retryable(err):
		metric.Emit(ctx, n.log, MetricFunction, metric.NoticeFailed.Of(1))
		if derr := n.store.DropNotice(ctx, key); derr != nil {
			return errors.Join(err, derr)
		}
		return err
	}
	metric.Emit(ctx, n.log, MetricFunction, metric.NoticeFailed.Of(1))
	n.log.LogAttrs(ctx, slog.LevelError, "WeChat refused a subscribe message", slog.String("notice", key), slog.String("error", err.Error()))
	return nil
}

// yuan formats fen as an amount keyword: "¥399.00".
func yuan(fen int64) string { return fmt.Sprintf("¥%d.%02d", fen/100, fen%100) }
