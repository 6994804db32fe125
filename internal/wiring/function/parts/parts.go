// Package parts holds the pieces more than one function's wiring builds with (see
// package wiring): the subscribe messages' settings and reconcile's, read from the
// environment the main passes; the WeChat queue as the senders of subscribe messages;
// the store refunds settle on. Only the functions that use them link them.
package parts

import (
	"context"
	"log/slog"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// Notices reads the subscribe messages' settings into *dst: PAY_REMINDER_TEMPLATE_ID,
// REFUND_DONE_TEMPLATE_ID and AFTERSALE_TEMPLATE_ID ("off" turns that message off), PAY_REMINDER_LEAD_SECONDS
// and ORDER_PAGE, all required.
func Notices(dst *notices.Config) wiring.Setting {
	return func(get envvar.Lookup) (err error) {
		for _, v := range []struct {
			name string
			dst  *string
		}{{"PAY_REMINDER_TEMPLATE_ID", &dst.PayReminderTemplate}, {"REFUND_DONE_TEMPLATE_ID", &dst.RefundDoneTemplate}, {"AFTERSALE_TEMPLATE_ID", &dst.AftersaleTemplate}} {
			if *v.dst, err = envvar.TemplateID(get, v.name); err != nil {
				return err
			}
		}
		if dst.Lead, err = envvar.Seconds(get, "PAY_REMINDER_LEAD_SECONDS"); err != nil {
			return err
		}
		dst.Page, err = envvar.Required(get, "ORDER_PAGE", "the mini-program page of an order, the order id appended, e.g. pages/order/index?orderId=")
		return err
	}
}

// WaitlistNotice reads the waitlist message's settings into *dst, both required:
// WAITLIST_TEMPLATE_ID ("off" turns the message off) and SKU_PAGE. Only the wechat
// function, which sends it, reads them.
func WaitlistNotice(dst *notices.Config) wiring.Setting {
	return func(get envvar.Lookup) (err error) {
		if dst.WaitlistTemplate, err = envvar.TemplateID(get, "WAITLIST_TEMPLATE_ID"); err != nil {
			return err
		}
		dst.SKUPage, err = envvar.Required(get, "SKU_PAGE", "the mini-program page of a SKU, the SKU id appended, e.g. pages/sku/index?skuId=")
		return err
	}
}

// Reconcile reads reconcile's variables into *dst, every one of which must be set,
// then parses them with reconcile.Settings.Config: REPAIR_ENABLED, REPAIR_WINDOW,
// REPAIR_TIMEZONE, ALERT_MIN_UNITS, ALERT_PERCENT, OVERDUE_GRACE_SECONDS,
// FULL_CHECK_DAYS, ALERTS_TOPIC_ARN, REFUND_STUCK_SECONDS. A missing one is an
// *envvar.Error naming it; an invalid one an error from Settings.Config naming it.
func Reconcile(dst *reconcile.Config) wiring.Setting {
	return func(get envvar.Lookup) (err error) {
		var s reconcile.Settings
		for _, v := range []struct {
			name, want string
			dst        *string
		}{
			{"REPAIR_ENABLED", "true or false", &s.RepairEnabled},
			{"REPAIR_WINDOW", "HH:MM-HH:MM", &s.RepairWindow},
			{"REPAIR_TIMEZONE", "an IANA time zone name, e.g. Asia/Shanghai", &s.RepairTimezone},
			{"ALERT_MIN_UNITS", "a positive number of units", &s.AlertMinUnits},
			{"ALERT_PERCENT", "a positive percentage", &s.AlertPercent},
			{"OVERDUE_GRACE_SECONDS", "a positive number of seconds", &s.OverdueGraceSeconds},
			{"FULL_CHECK_DAYS", "a positive number of days", &s.FullCheckDays},
			{"ALERTS_TOPIC_ARN", "the ARN of the alerts SNS topic", &s.AlertsTopicARN},
			{"REFUND_STUCK_SECONDS", "a positive number of seconds", &s.RefundStuckSeconds},
		} {
			if *v.dst, err = envvar.Required(get, v.name, v.want); err != nil {
				return err
			}
		}
		*dst, err = s.Config()
		return err
	}
}

// Sender is the WeChat queue as the sender of subscribe messages and uploads: nil (no
// queue) sends nothing.
func Sender(q *wxqueue.Queue) notices.Sender {
	if q == nil {
		return nil
	}
	return q
}

// Settling is the store refunds settle on: store, whose MarkRefunded also queues the
// refund-done message to q (notices.Settled; nil: none).
func Settling(store *dynamo.Store, q *wxqueue.Queue, log *slog.Logger) SettlingStore {
	return SettlingStore{store, notices.Settled[*dynamo.Store]{Store: store, Queue: Sender(q), Log: log}}
}

// SettlingStore is the store with notices.Settled's MarkRefunded.
type SettlingStore struct {
	*dynamo.Store
	settled notices.Settled[*dynamo.Store]
}

// MarkRefunded is notices.Settled.MarkRefunded.
func (s SettlingStore) MarkRefunded(ctx context.Context, res inventory.RefundResult) (*inventory.Refund, bool, error) {
	return s.settled.MarkRefunded(ctx, res)
}

// Reconciler is reconcile's run over store with cfg (its clock, when nil, the
// store's), publishing alerts to alerts (nil: none): as both the reconcile and the
// admin function run it.
func Reconciler(cfg reconcile.Config, log *slog.Logger, store *dynamo.Store, alerts reconcile.Publisher) *reconcile.Reconciler {
	if cfg.Now == nil {
		cfg.Now = store.Now
	}
	return reconcile.New(store, alerts, log, cfg)
}
