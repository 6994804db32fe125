// Package alertchat is the alertChat function's wiring: the alerts topic's
// notifications (CloudWatch alarms, reconcile's alerts) posted to the team's chat bots
// once per quiet period per alert and bot, paced to each bot's rate; its on-failure
// queue redriven; its digests flushed on a schedule.
package alertchat

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/wiring"
)

// Config is alertChat's configuration (template.yaml, AlertChatFunction's
// Environment).
type Config struct {
	// OrdersTable is ORDERS_TABLE: the quiet periods and bots' pacing records live there.
	OrdersTable string
	// ChatSecretARN is CHAT_SECRET_ARN: the Secrets Manager secret holding the chat
	// webhooks, {"webhooks":[{"kind","url","secret"?}]} (teamchat.ParseSecret).
	ChatSecretARN string
	// QuietPeriod is QUIET_PERIOD_SECONDS: the same alert goes to a webhook at most
	// once per period.
	QuietPeriod time.Duration
	// Runbook is RUNBOOK_URL: where alerts point for RUNBOOK.md, "RUNBOOK.md" or the
	// https URL of the file.
	Runbook string
}

// Load reads Config from get (the main passes os.Getenv); an error names the first
// variable missing or invalid.
func Load(get envvar.Lookup) (Config, error) {
	var c Config
	return c, wiring.Read(get, wiring.OrdersTable(&c.OrdersTable),
		wiring.Required(&c.ChatSecretARN, "CHAT_SECRET_ARN", "the ARN of the chat webhooks secret"),
		wiring.Seconds(&c.QuietPeriod, "QUIET_PERIOD_SECONDS"), wiring.Into(&c.Runbook, runbook))
}

// runbook reads RUNBOOK_URL: "RUNBOOK.md" or an https URL without query or fragment.
func runbook(get envvar.Lookup) (string, error) {
	const want = `"RUNBOOK.md" or the https URL of RUNBOOK.md, without query or fragment`
	v, err := envvar.Required(get, "RUNBOOK_URL", want)
	if err != nil {
		return "", err
	}
	if u, perr := url.Parse(v); v != "RUNBOOK.md" && (perr != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "") {
		return "", &envvar.Error{Name: "RUNBOOK_URL", Value: v, Want: want}
	}
	return v, nil
}

// StoreTables are the tables alertChat's store uses: the orders table alone.
func (c Config) StoreTables() dynamo.Tables { return dynamo.Tables{Orders: c.OrdersTable} }

var table = wiring.Define("AlertChatFunction", "alertChat",
	wiring.Topic(wiring.AlertsTopic, func(n *alertchat.Notifier) wiring.SNSHandler { return n.Notify }),
	wiring.Queue(wiring.AlertChatFailedQueue, func(n *alertchat.Notifier) wiring.SQSHandler { return n.Redrive }),
	wiring.Schedule(func(n *alertchat.Notifier) wiring.Scheduled { return wiring.Result(n.Flush) }),
)

// Function is alertChat as template.yaml declares it.
var Function = table.Function

// Build returns alertChat's handler: alerts posted to the bots webhooks returns (read
// at each invocation), quiet periods and pacing kept on store, logging to log.
func Build(cfg Config, log *slog.Logger, store *dynamo.Store, webhooks func(context.Context) ([]teamchat.Webhook, error)) (*lambdaevent.Function, error) {
	return table.Bind(log, alertchat.New(log, alertchat.Options{
		Webhooks: webhooks, Quiet: store, Paces: store, QuietPeriod: cfg.QuietPeriod, Runbook: cfg.Runbook, Now: store.Now,
	})), nil
}
