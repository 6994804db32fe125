// Package alertchat is alerts in the team's chat: subscribed to the alerts topic, it posts
// each notification (a CloudWatch alarm's state change, reconcile's own alerts, or any
// other message) to the team's chat bots (package teamchat: WeCom, DingTalk,
// Feishu/Lark, Slack), saying what happened, which SKU or function, how big, and the
// RUNBOOK.md entry to follow (FromSNS).
//
// # Once per quiet period
//
// Reconcile alerts every 5 minutes while the books differ, and SNS delivers a message
// at least once, so the same alert arrives again and again. Before posting an alert to
// a webhook the Notifier claims the pair (the alert's Key and the webhook's ID) in
// DynamoDB for the quiet period (Quiet.ClaimQuiet: a conditional write with a
// TTL in the orders table), so whichever container gets a copy, one posts it and the
// others hold it back until the period ends. A post that fails after its retries gives
// the claim back, so the next delivery may try again. If DynamoDB cannot be asked, the
// alert is posted anyway: a repeated message is better than a lost one.
//
// # Failures, and why they cannot storm
//
// A webhook that still fails after teamchat's retries is counted in ChatPostFailed and
// the invocation fails, so Lambda retries it twice more (asynchronous invocation: AWS
// Lambda Developer Guide, "Error handling and automatic retries in Lambda");
// ChatPostFailedAlarm watches the metric and notifies the same topic, which this
// function reads. That cannot loop into a storm: CloudWatch notifies when the alarm
// changes state, not while it stays in ALARM, so a webhook that keeps failing yields one
// alarm notification, which costs at most three invocations of at most
// teamchat.Options.Attempts requests per webhook, however long the failure lasts. A
// webhook that works again posts that alarm once (the quiet period holds back copies),
// and the resolved note when the alarm returns to OK (it has OKActions).

// Secrets: webhook URLs (which carry each bot's credential) and signing secrets come
// from the Secrets Manager secret CHAT_SECRET_ARN names (teamchat.ParseSecret), read at
// each invocation so a changed secret applies at once; they are never logged (logs
// name a webhook by teamchat.Webhook.ID).
package alertchat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/teamchat"
)

// MetricFunction is the Function dimension of the alert function's metrics.
const MetricFunction = "alertChat"

// Quiet is where quiet periods are claimed: *dynamo.Store (ClaimQuiet, ReleaseQuiet).
type Quiet interface {
	ClaimQuiet(ctx context.Context, key string, period time.Duration, now time.Time) (token string, won bool, err error)
	ReleaseQuiet(ctx context.Context, key, token string) error
}

// Options configure a Notifier. Webhooks and Quiet are required.
type Options struct {
	// Webhooks returns the bots to post to (deployed: the secret, read and parsed).
	Webhooks func(context.Context) ([]teamchat.Webhook, error)
	// Poster posts to them; default teamchat.NewPoster with its defaults.
	Poster *teamchat.Poster
	// Quiet holds the quiet-period claims.
	Quiet Quiet
	// QuietPeriod is how long the same alert is held back per webhook once posted;
	// default an hour.
	QuietPeriod time.Duration
	// Runbook is where RUNBOOK.md is read (Config.Runbook); default "RUNBOOK.md".
	Runbook string
	// Now is the clock of the quiet periods; default time.Now.
	Now func() time.Time
}

// Notifier posts the alerts topic's notifications to the team's chat.
type Notifier struct {
	opts Options
	log  *slog.Logger
}

// New returns a Notifier with opts, logging to log (JSON lines, with metrics).
func New(log *slog.Logger, opts Options) *Notifier {
	if opts.Poster == nil {
		opts.Poster = teamchat.NewPoster(teamchat.Options{})
	}
	if opts.QuietPeriod <= 0 {
		opts.QuietPeriod = time.Hour
	}
	if opts.Runbook == "" {
		opts.Runbook = "RUNBOOK.md"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Notifier{opts: opts, log: log}
}

// ErrNotPosted is wrapped by Notify's error when an alert could not be posted to some
// webhook after the retries: the invocation fails, so Lambda retries it.
var ErrNotPosted = errors.New("alertChat: an alert could not be posted")

// releaseTimeout bounds giving a claim back, which runs even when the invocation's
// context has ended.
const releaseTimeout = 2 * time.Second

// Notify posts each record of ev to every webhook, once per quiet period per alert and
// webhook (see the package documentation), and counts ChatPosted, ChatPostFailed and
// ChatQuiet. It returns an error wrapping ErrNotPosted when a post failed, or the error
// of reading the webhooks; no webhooks at all is logged and is not an error.
func (n *Notifier) Notify(ctx context.Context, ev events.SNSEvent) error {
	hooks, err := n.opts.Webhooks(ctx)
	if err != nil {
		n.log.LogAttrs(ctx, slog.LevelError, "chat webhooks unreadable", slog.Int("alerts", len(ev.Records)), slog.String("error", err.Error()))
		metric.Emit(ctx, n.log, MetricFunction, metric.ChatPostFailed.Of(float64(len(ev.Records))))
		return fmt.Errorf("%w: read the webhooks: %w", ErrNotPosted, err)
	}
	if len(hooks) == 0 {
		n.log.LogAttrs(ctx, slog.LevelWarn, "no chat webhooks configured: alerts not posted", slog.Int("alerts", len(ev.Records)))
		return nil
	}
	var posted, failed, quiet float64
	var errs []error
	for _, rec := range ev.Records {
		alert := FromSNS(rec.SNS, n.opts.Runbook)
		for _, w := range hooks {
			attrs := []slog.Attr{slog.String("webhook", w.ID()), slog.String("alert", alert.Key), slog.String("title", alert.Message.Title)}
			key := alert.Key + "#" + w.ID()
			token, won, err := n.opts.Quiet.ClaimQuiet(ctx, key, n.opts.QuietPeriod, n.opts.Now())
			switch {
			case err != nil:
				n.log.LogAttrs(ctx, slog.LevelWarn, "quiet period unknown: posting anyway", append(attrs, slog.String("error", err.Error()))...)
			case !won:
				quiet++
				n.log.LogAttrs(ctx, slog.LevelInfo, "alert held back (quiet period)", attrs...)
				continue
			}
			attempts, err := n.opts.Poster.Post(ctx, w, alert.Message)
			attrs = append(attrs, slog.Int("attempts", attempts))
			if err != nil {
				failed++
				errs = append(errs, fmt.Errorf("%s: %w", w.ID(), err))
				n.log.LogAttrs(ctx, slog.LevelError, "alert not posted", append(attrs, slog.String("error", err.Error()))...)
				if token != "" {
					rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
					if err := n.opts.Quiet.ReleaseQuiet(rctx, key, token); err != nil {
						n.log.LogAttrs(ctx, slog.LevelWarn, "quiet claim not released", append(attrs, slog.String("error", err.Error()))...)
					}
					cancel()
				}
				continue
			}
			posted++
			n.log.LogAttrs(ctx, slog.LevelInfo, "alert posted", attrs...)
		}
	}
	metric.Emit(ctx, n.log, MetricFunction, metric.ChatPosted.Of(posted), metric.ChatPostFailed.Of(failed), metric.ChatQuiet.Of(quiet))
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrNotPosted, errors.Join(errs...))
	}
	return nil
}

// SecretWebhooks returns Options.Webhooks for the deployed function: each call reads
// the secret with read (coldstart.SecretReader of CHAT_SECRET_ARN) and parses it
// (teamchat.ParseSecret).
func SecretWebhooks(read func(context.Context) ([]byte, error)) func(context.Context) ([]teamchat.Webhook, error) {
	return func(ctx context.Context) ([]teamchat.Webhook, error) {
		data, err := read(ctx)
		if err != nil {
			return nil, err
		}
		return teamchat.ParseSecret(data)
	}
}
