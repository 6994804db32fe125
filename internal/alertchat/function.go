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
// alarm notification, which costs at most three invocations and then one redrive every
// 15 minutes for a day (see "When Lambda gives up"), each of at most
// teamchat.Options.Attempts requests per webhook, however long the failure lasts. A
// webhook that works again posts that alarm once (the quiet period holds back copies),
// and the resolved note when the alarm returns to OK (it has OKActions).
//
// # Paced to each bot's rate, what waits folded into digests
//
// Each bot is posted to within its service's documented rate (teamchat.Kind.Limits:
// WeCom and DingTalk 20 messages a minute, DingTalk then silent for 10 minutes past
// them; Feishu 100 a minute and 5 a second; Slack 1 a second). Each bot's record of
// what it was sent and what waits (teamchat.Pace) lives in DynamoDB (Paces:
// dynamo.Store.UpdatePace, optimistic locking), not in the memory of the function's
// execution environment: an alert function is idle most of the time, so Lambda reclaims
// its environment between storms and starts another on deployment, and a record kept
// there would forget what it sent in the last minute (a DingTalk bot then throttles
// for 10 minutes) and what was waiting (lost); in DynamoDB it is one record for every
// invocation, SNS, redrive and schedule alike, whatever the concurrency. An alert past
// the rate is held in the record (ChatHeld) and its quiet-period claim kept; the next
// post the rate allows to that bot is a digest of what waits (teamchat.Digest: each
// alert's time, title and runbook entry, as many as one message shows in full, the
// rest in the next), the alert at hand folded in: the alert that arrives when the
// window reopens, or Flush, which runs every minute. A bot that answers rate-limited
// anyway (someone else posts through it too) is left alone for its throttle (DingTalk
// 10 minutes) and the alert held. If DynamoDB cannot be asked, the alert is posted
// anyway.
//
// # When Lambda gives up
//
// An alert invocation that fails its three attempts (or waits past the event age in
// Lambda's queue) is sent by Lambda, as an invocation record, to the function's
// on-failure destination, AlertChatFailedQueue, which this function also consumes
// (Redrive): the record's SNS event is notified again, every 15 minutes for a day
// (the queue's visibility timeout and receive count), then kept in
// AlertChatDeadLetterQueue. Redriving in the function itself, not from a command,
// because what fails there is mostly a chat service down or refusing for a while, and
// the people who would run a command are the ones the alerts are not reaching; the
// quiet periods hold back the bots that already got an alert, and the pacing folds a
// backlog into digests.

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

// Paces is where each bot's pacing record is kept: *dynamo.Store (UpdatePace: decide
// reads and changes the record, reporting whether it changed; concurrent updates each
// see the one before).
type Paces interface {
	UpdatePace(ctx context.Context, key string, decide func(*teamchat.Pace) bool) error
}

// Options configure a Notifier. Webhooks, Quiet and Paces are required.
type Options struct {
	// Webhooks returns the bots to post to (deployed: the secret, read and parsed).
	Webhooks func(context.Context) ([]teamchat.Webhook, error)
	// Poster posts to them; default teamchat.NewPoster with its defaults.
	Poster *teamchat.Poster
	// Quiet holds the quiet-period claims.
	Quiet Quiet
	// Paces holds each bot's pacing record, keyed by teamchat.Webhook.ID.
	Paces Paces
	// QuietPeriod is how long the same alert is held back per webhook once posted;
	// default an hour.
	QuietPeriod time.Duration
	// Runbook is where RUNBOOK.md is read (Config.Runbook); default "RUNBOOK.md".
	Runbook string
	// Now is the clock of the quiet periods and the pacing; default time.Now.
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

// tally counts what became of alerts and digests, for the metrics.
type tally struct{ posted, failed, quiet, held float64 }

func (t *tally) emit(ctx context.Context, log *slog.Logger) {
	metric.Emit(ctx, log, MetricFunction, metric.ChatPosted.Of(t.posted), metric.ChatPostFailed.Of(t.failed),
		metric.ChatQuiet.Of(t.quiet), metric.ChatHeld.Of(t.held))
}

// Notify posts each record of ev to every webhook, once per quiet period per alert and
// webhook, within each bot's rate (see the package documentation), and counts
// ChatPosted, ChatPostFailed, ChatQuiet and ChatHeld. It returns an error wrapping
// ErrNotPosted when a post of an alert failed, or the error of reading the webhooks; no
// webhooks at all is logged and is not an error.
func (n *Notifier) Notify(ctx context.Context, ev events.SNSEvent) error {
	alerts := make([]Alert, len(ev.Records))
	for i, rec := range ev.Records {
		alerts[i] = FromSNS(rec.SNS, n.opts.Runbook)
	}
	return n.deliver(ctx, alerts)
}

// deliver posts alerts to every webhook (Notify).
func (n *Notifier) deliver(ctx context.Context, alerts []Alert) error {
	hooks, err := n.opts.Webhooks(ctx)
	if err != nil {
		n.log.LogAttrs(ctx, slog.LevelError, "chat webhooks unreadable", slog.Int("alerts", len(alerts)), slog.String("error", err.Error()))
		metric.Emit(ctx, n.log, MetricFunction, metric.ChatPostFailed.Of(float64(len(alerts))))
		return fmt.Errorf("%w: read the webhooks: %w", ErrNotPosted, err)
	}
	if len(hooks) == 0 {
		n.log.LogAttrs(ctx, slog.LevelWarn, "no chat webhooks configured: alerts not posted", slog.Int("alerts", len(alerts)))
		return nil
	}
	var t tally
	var errs []error
	for _, alert := range alerts {
		for _, w := range hooks {
			if err := n.toBot(ctx, w, alert, &t); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", w.ID(), err))
			}
		}
	}
	t.emit(ctx, n.log)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrNotPosted, errors.Join(errs...))
	}
	return nil
}

// toBot posts alert to w once per quiet period, paced: alone, folded into a digest of
// what waits, or held for one. It returns the error of a post of the alert alone that
// failed (its claim given back, so a retry may post it).
func (n *Notifier) toBot(ctx context.Context, w teamchat.Webhook, alert Alert, t *tally) error {
	attrs := []slog.Attr{slog.String("webhook", w.ID()), slog.String("alert", alert.Key), slog.String("title", alert.Message.Title)}
	key := alert.Key + "#" + w.ID()
	token, won, err := n.opts.Quiet.ClaimQuiet(ctx, key, n.opts.QuietPeriod, n.opts.Now())
	switch {
	case err != nil:
		n.log.LogAttrs(ctx, slog.LevelWarn, "quiet period unknown: posting anyway", append(attrs, slog.String("error", err.Error()))...)
	case !won:
		t.quiet++
		n.log.LogAttrs(ctx, slog.LevelInfo, "alert held back (quiet period)", attrs...)
		return nil
	}
	send, taken, err := n.pace(ctx, w, alert)
	if err != nil {
		n.log.LogAttrs(ctx, slog.LevelWarn, "pacing unknown: posting anyway", append(attrs, slog.String("error", err.Error()))...)
		send = &alert.Message
	}
	if send == nil {
		t.held++
		n.log.LogAttrs(ctx, slog.LevelInfo, "alert held for a digest (rate)", attrs...)
		return nil
	}
	digest := len(taken.Held) > 0 || taken.More > 0
	err = n.post(ctx, w, *send, taken, attrs, t)
	if err == nil || digest {
		return nil // a digest that failed went back to the record, the alert with it
	}
	if errors.Is(err, teamchat.ErrRateLimited) {
		t.held++
		n.update(ctx, w, attrs, func(p *teamchat.Pace) { p.Hold(n.held(alert)) })
		return nil
	}
	if token != "" {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		if err := n.opts.Quiet.ReleaseQuiet(rctx, key, token); err != nil {
			n.log.LogAttrs(ctx, slog.LevelWarn, "quiet claim not released", append(attrs, slog.String("error", err.Error()))...)
		}
		cancel()
	}
	return err
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
