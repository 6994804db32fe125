package alertchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/teamchat"
)

// pace decides in w's pacing record what to post of alert now: the alert alone
// (taken empty), a digest of what waits with the alert folded in (taken: what the
// digest holds, to put back should it not be posted), or nothing (send nil: the alert
// is held). On an error nothing was decided.
func (n *Notifier) pace(ctx context.Context, w teamchat.Webhook, alert Alert) (*teamchat.Message, teamchat.Taken, error) {
	l, now, h, room := w.Kind.Limits(), n.opts.Now(), n.held(alert), timeToPost(ctx)
	return n.decide(ctx, w, func(p *teamchat.Pace) (*teamchat.Message, teamchat.Taken, bool) {
		switch {
		case !room || !p.Take(l, now):
			p.Hold(h)
			return nil, teamchat.Taken{}, true
		case len(p.Held) == 0 && p.More == 0:
			m := alert.Message
			return &m, teamchat.Taken{}, true
		}
		p.Hold(h)
		d, taken, _ := p.Release(w.Kind)
		return &d, taken, true
	})
}

// postBudget is the longest one post may take with the default Poster: 3 requests of
// at most 5 s, and waits of 1 s and 2 s between them.
const postBudget = 3*5*time.Second + 3*time.Second

// timeToPost reports whether ctx leaves a post its whole budget. A post cut off by the
// function's timeout would lose the alerts a digest took out of the record, so with
// less time left an alert is held and no digest released: the next Flush posts them.
func timeToPost(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > postBudget
}

// decide runs choose on w's pacing record, writing the record when choose reports a
// change, and returns what choose picked to post (nil: nothing) and what a digest took
// out of the record. On an error nothing was decided.
func (n *Notifier) decide(ctx context.Context, w teamchat.Webhook, choose func(*teamchat.Pace) (*teamchat.Message, teamchat.Taken, bool)) (*teamchat.Message, teamchat.Taken, error) {
	var send *teamchat.Message
	var taken teamchat.Taken
	err := n.opts.Paces.UpdatePace(ctx, w.ID(), func(p *teamchat.Pace) bool {
		var changed bool
		send, taken, changed = choose(p)
		return changed
	})
	if err != nil {
		return nil, teamchat.Taken{}, err
	}
	return send, taken, nil
}

// held is alert as a digest shows it, held now.
func (n *Notifier) held(alert Alert) teamchat.Held {
	m := alert.Message
	return teamchat.Held{At: n.opts.Now(), Level: m.Level, Title: m.Title, RunbookEntry: m.RunbookEntry, Runbook: m.Runbook}
}

// post sends m to w and records the outcome: a digest (taken not empty) that is not
// posted goes back to w's record, and a rate-limit answer leaves w alone for its
// throttle. It returns the Post's error.
func (n *Notifier) post(ctx context.Context, w teamchat.Webhook, m teamchat.Message, taken teamchat.Taken, attrs []slog.Attr, t *tally) error {
	attempts, err := n.opts.Poster.Post(ctx, w, m)
	attrs = append(attrs, slog.Int("attempts", attempts))
	what := "alert"
	if len(taken.Held) > 0 || taken.More > 0 {
		what = "digest"
		attrs = append(attrs, slog.Int("digestAlerts", len(taken.Held)+taken.More))
	}
	var e *teamchat.Error
	switch {
	case err == nil:
		t.posted++
		n.log.LogAttrs(ctx, slog.LevelInfo, what+" posted", attrs...)
		return nil
	case errors.As(err, &e) && errors.Is(err, teamchat.ErrRateLimited):
		n.log.LogAttrs(ctx, slog.LevelWarn, what+" held: the bot answered rate-limited", append(attrs, slog.String("error", err.Error()))...)
		now := n.opts.Now()
		n.update(ctx, w, attrs, func(p *teamchat.Pace) { p.Refused(w.Kind.Limits(), now, e.RetryAfter); p.Restore(taken) })
	default:
		t.failed++
		n.log.LogAttrs(ctx, slog.LevelError, what+" not posted", append(attrs, slog.String("error", err.Error()))...)
		if what == "digest" {
			n.update(ctx, w, attrs, func(p *teamchat.Pace) { p.Restore(taken) })
		}
	}
	return err
}

// update applies change to w's record, even after ctx ended (a digest's alerts go
// back). A failure is logged at error level: the alerts it was to put back are then
// only in the log.
func (n *Notifier) update(ctx context.Context, w teamchat.Webhook, attrs []slog.Attr, change func(*teamchat.Pace)) {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := n.opts.Paces.UpdatePace(uctx, w.ID(), func(p *teamchat.Pace) bool { change(p); return true }); err != nil {
		n.log.LogAttrs(ctx, slog.LevelError, "pacing record not updated", append(attrs, slog.String("error", err.Error()))...)
	}
}

// maxDigestsPerFlush bounds the digests one Flush posts to one bot.
const maxDigestsPerFlush = 20

// FlushReport is what Flush did: digests posted, and posts that failed (their alerts
// wait for the next Flush).
type FlushReport struct {
	Digests int `json:"digests"`
	Failed  int `json:"failed"`
}

// Flush posts to every webhook the digests its record holds alerts for, as many as
// the bot's rate lets through now (at most maxDigestsPerFlush), and counts ChatPosted
// and ChatPostFailed. It runs every minute (the template's schedule), so what waits
// goes out within a minute of the rate allowing it even when no alert follows. Nothing
// is returned as an error (webhooks or records unreadable, posts failed): they are
// logged and counted, and the next minute's Flush is the retry.
func (n *Notifier) Flush(ctx context.Context) (FlushReport, error) {
	var rep FlushReport
	hooks, err := n.opts.Webhooks(ctx)
	if err != nil {
		n.log.LogAttrs(ctx, slog.LevelError, "chat webhooks unreadable: no digest posted", slog.String("error", err.Error()))
		return rep, nil
	}
	var t tally
	for _, w := range hooks {
		attrs := []slog.Attr{slog.String("webhook", w.ID())}
		for range maxDigestsPerFlush {
			send, taken, err := n.release(ctx, w)
			if err != nil {
				n.log.LogAttrs(ctx, slog.LevelWarn, "pacing record unreadable: no digest posted", append(attrs, slog.String("error", err.Error()))...)
			}
			if send == nil {
				break
			}
			if n.post(ctx, w, *send, taken, attrs, &t) != nil {
				rep.Failed++
				break
			}
			rep.Digests++
		}
	}
	if t != (tally{}) { // a minute's run with nothing to post writes no metric line
		t.emit(ctx, n.log)
	}
	return rep, nil
}

// release takes, in w's record, the next digest the rate lets through now; send is nil
// when nothing is held or the rate allows no post.
func (n *Notifier) release(ctx context.Context, w teamchat.Webhook) (send *teamchat.Message, taken teamchat.Taken, err error) {
	l, now := w.Kind.Limits(), n.opts.Now()
	if !timeToPost(ctx) {
		return nil, teamchat.Taken{}, nil
	}
	return n.decide(ctx, w, func(p *teamchat.Pace) (*teamchat.Message, teamchat.Taken, bool) {
		if len(p.Held) == 0 && p.More == 0 || !p.Take(l, now) {
			return nil, teamchat.Taken{}, false
		}
		d, taken, _ := p.Release(w.Kind)
		return &d, taken, true
	})
}

// Invocation is the record Lambda sends an asynchronous invocation's on-failure
// destination (AWS Lambda Developer Guide, "Capturing records of Lambda asynchronous
// invocations": version, timestamp, requestContext {requestId, functionArn, condition
// RetriesExhausted or EventAgeExceeded, approximateInvokeCount}, requestPayload — the
// event as the function was invoked with it, left out when the record would pass the
// destination's size limit — responseContext and responsePayload), in the fields
// Redrive reads.
type Invocation struct {
	Version        string    `json:"version"`
	Timestamp      time.Time `json:"timestamp"`
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionARN            string `json:"functionArn"`
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	RequestPayload json.RawMessage `json:"requestPayload"`
}

// Redrive takes a batch of AlertChatFailedQueue, Lambda's invocation records of alert
// invocations that failed all their attempts, and handles each again: an SNS event's
// alerts are delivered as Notify delivers them (the quiet periods hold back the bots
// that already got them, the pacing folds a backlog into digests); a scheduled event
// (a Flush) needs nothing, the next Flush runs anyway; a record Lambda kept no payload
// in becomes a notice naming its request. A record not delivered to every bot, or not
// an invocation record, is a batch item failure: SQS delivers it again after the
// queue's visibility timeout, and after its receive count moves it to the dead-letter
// queue.
func (n *Notifier) Redrive(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, rec := range ev.Records {
		attrs := []slog.Attr{slog.String("messageId", rec.MessageId)}
		alerts, err := n.redriven(rec.Body)
		if err == nil {
			err = n.deliver(ctx, alerts)
		}
		if err != nil {
			n.log.LogAttrs(ctx, slog.LevelWarn, "failed alert not redriven; SQS delivers it again", append(attrs, slog.String("error", err.Error()))...)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		n.log.LogAttrs(ctx, slog.LevelInfo, "failed alert redriven", append(attrs, slog.Int("alerts", len(alerts)))...)
	}
	return resp, nil
}

// redriven reads an invocation record: the alerts to deliver again (none for a
// scheduled event).
func (n *Notifier) redriven(body string) ([]Alert, error) {
	var inv Invocation
	if err := json.Unmarshal([]byte(body), &inv); err != nil || inv.RequestContext.RequestID == "" {
		return nil, fmt.Errorf("not a Lambda invocation record (requestContext.requestId missing or %v)", err)
	}
	rc := inv.RequestContext
	switch kind := lambdaevent.KindOf(inv.RequestPayload); {
	case len(inv.RequestPayload) == 0 || string(inv.RequestPayload) == "null":
		return []Alert{{Key: "lost#" + rc.RequestID, Message: teamchat.Message{
			Level: teamchat.Alarm, Title: "An alert was not posted, and Lambda kept no copy of it",
			Lines: []string{
				fmt.Sprintf("alertChat request %s gave up at %s (%s, %d attempt(s))", rc.RequestID, inv.Timestamp.UTC().Format(time.RFC3339), rc.Condition, rc.ApproximateInvokeCount),
				"Its event was over the on-failure destination's size limit: read it in alertChat's log under that request id, or in the alerts topic's e-mail subscription",
			},
			RunbookEntry: failedEntry, Runbook: n.opts.Runbook + "#" + "alertchatfailedalarm",
		}}}, nil
	case kind == lambdaevent.Scheduled:
		return nil, nil
	case kind == lambdaevent.SNS:
		var ev events.SNSEvent
		if err := json.Unmarshal(inv.RequestPayload, &ev); err != nil {
			return nil, fmt.Errorf("request %s: bad SNS event: %w", rc.RequestID, err)
		}
		alerts := make([]Alert, len(ev.Records))
		for i, r := range ev.Records {
			alerts[i] = FromSNS(r.SNS, n.opts.Runbook)
		}
		return alerts, nil
	default:
		return nil, fmt.Errorf("request %s: an invocation of an event alertChat does not serve (%s)", rc.RequestID, kind)
	}
}

// failedEntry is the RUNBOOK.md entry of alerts Lambda gave up on.
const failedEntry = "AlertChatFailedAlarm"
