package teamchat

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Rate is one sending limit of a bot: at most Messages posts in any Per.
type Rate struct {
	Messages int
	Per      time.Duration
}

// Limits are the documented sending limits of one bot of a service (the package
// documentation cites each page). A rate is read as any window of that length: the
// pages say 每分钟 without saying whether they count calendar minutes, and a sender
// that keeps to every window keeps to the calendar ones too. Throttle is how long the
// bot refuses everything once a message passed a rate (DingTalk: 10 minutes; 0 for the
// others, which refuse only while the window is full).
type Limits struct {
	Rates    []Rate
	Throttle time.Duration
}

// Limits returns the documented limits of k's bots: WeCom 20 messages a minute
// (群机器人配置说明, 消息发送频率限制); DingTalk 20 a minute, and a 10-minute throttle past
// them (自定义机器人发送群消息, 消息发送频率限制: 每个机器人每分钟最多发送20条…如果超过20条，会限流10分钟);
// Feishu 100 a minute and 5 a second (自定义机器人使用指南, 频率控制); Slack 1 a second
// (Slack docs, "Rate limits", posting messages).
func (k Kind) Limits() Limits {
	switch k {
	case WeCom:
		return Limits{Rates: []Rate{{20, time.Minute}}}
	case DingTalk:
		return Limits{Rates: []Rate{{20, time.Minute}}, Throttle: 10 * time.Minute}
	case Feishu:
		return Limits{Rates: []Rate{{100, time.Minute}, {5, time.Second}}}
	}
	return Limits{Rates: []Rate{{1, time.Second}}}
}

// window is the longest Per of l.
func (l Limits) window() time.Duration {
	var w time.Duration
	for _, r := range l.Rates {
		w = max(w, r.Per)
	}
	return w
}

// String says the rates: "20 a minute", "100 a minute and 5 a second".
func (l Limits) String() string {
	var parts []string
	for _, r := range l.Rates {
		unit := "second"
		if r.Per == time.Minute {
			unit = "minute"
		}
		parts = append(parts, fmt.Sprintf("%d a %s", r.Messages, unit))
	}
	return strings.Join(parts, " and ")
}

// MaxHeld bounds the alerts a Pace keeps for its digests; alerts held beyond it are
// only counted (Pace.More), so the record stays far below DynamoDB's 400 KB item.
const MaxHeld = 500

// Held is an alert held back for a digest: when, how marked, its title and the
// runbook entry of its Message.
type Held struct {
	At                    time.Time
	Level                 Level
	Title                 string
	RunbookEntry, Runbook string
}

// Pace is one bot's sending record, kept between invocations: what a sender needs to
// keep a bot within its Limits, and the alerts that had to wait, to be posted folded
// into digests (DingTalk's page asks exactly that of monitoring alerts: 大量发消息的场景
// (譬如系统监控报警)可以将这些信息进行整合，通过markdown消息以摘要的形式发送到群里).
type Pace struct {
	// Sent are the times of the posts let through, oldest first, back to the longest
	// window of the bot's Limits.
	Sent []time.Time
	// Until: no post before it (the service answered rate-limited; see Refused).
	Until time.Time
	// Held are the alerts waiting for a digest, oldest first; More counts those held
	// beyond MaxHeld.
	Held []Held
	More int
}

// Allows reports whether l lets a post through at now after the posts p recorded.
func (p Pace) Allows(l Limits, now time.Time) bool {
	if now.Before(p.Until) {
		return false
	}
	for _, r := range l.Rates {
		n := 0
		for _, t := range p.Sent {
			if now.Sub(t) < r.Per {
				n++
			}
		}
		if n >= r.Messages {
			return false
		}
	}
	return true
}

// Take records a post at now and reports true when l allows one; otherwise p is left
// as it was. Posts no window counts any more are dropped from Sent.
func (p *Pace) Take(l Limits, now time.Time) bool {
	if !p.Allows(l, now) {
		return false
	}
	w := l.window()
	p.Sent = append(slices.DeleteFunc(p.Sent, func(t time.Time) bool { return now.Sub(t) >= w }), now)
	return true
}

// Refused records the service's rate-limit answer at now (the bot is also posted to
// from elsewhere, or a record was lost): no post before now plus the longest of l's
// Throttle, retryAfter (Slack's Retry-After) and l's longest window.
func (p *Pace) Refused(l Limits, now time.Time, retryAfter time.Duration) {
	p.Until = now.Add(max(l.Throttle, retryAfter, l.window()))
}

// Hold keeps h for a digest (counts it in More past MaxHeld).
func (p *Pace) Hold(h Held) {
	if len(p.Held) >= MaxHeld {
		p.More++
		return
	}
	p.Held = append(p.Held, h)
}

// Taken is what Release took out of a Pace, for Restore when its digest is not posted.
type Taken struct {
	Held []Held
	More int
}

// Release takes out of p the held alerts one digest to a k bot shows — the oldest, as
// many as k's size limit lets one message show in full — and returns that digest and
// what it took; the rest stay for the next. ok is false when nothing is held.
func (p *Pace) Release(k Kind) (digest Message, taken Taken, ok bool) {
	if len(p.Held) == 0 && p.More == 0 {
		return Message{}, Taken{}, false
	}
	n, more := len(p.Held), p.More
	digest = Digest(k, p.Held, more)
	if shown := k.shows(digest); shown < len(digest.Lines) {
		n, more = max(1, min(shown, n)), 0
		digest = Digest(k, p.Held[:n], 0)
	}
	taken = Taken{Held: slices.Clone(p.Held[:n]), More: more}
	p.Held, p.More = slices.Delete(p.Held, 0, n), p.More-more
	return digest, taken, true
}

// Restore puts back what Release took, ahead of the alerts held since (those past
// MaxHeld are counted in More).
func (p *Pace) Restore(t Taken) {
	held := append(slices.Clone(t.Held), p.Held...)
	if len(held) > MaxHeld {
		p.More += len(held) - MaxHeld
		held = held[:MaxHeld]
	}
	p.Held, p.More = held, p.More+t.More
}

// Digest is the message that posts held alerts to a k bot: one line per alert, oldest
// first ("08:15:27 UTC 🔴 ALARM: ReconcileDifferencesAlarm · RUNBOOK.md#…"), a last
// line counting the more alerts held beyond MaxHeld, marked as the most severe of them
// (an alarm, else a notice, else resolved).
func Digest(k Kind, held []Held, more int) Message {
	m := Message{Level: Resolved, Title: fmt.Sprintf("%d alert(s) held back to keep this %s bot within %s", len(held)+more, k, k.Limits())}
	for _, h := range held {
		switch {
		case h.Level == Alarm:
			m.Level = Alarm
		case h.Level == Notice && m.Level == Resolved:
			m.Level = Notice
		}
		line := h.At.UTC().Format("15:04:05 UTC") + " " + h.Level.mark() + " " + h.Title
		if ref := runbookText(Message{RunbookEntry: h.RunbookEntry, Runbook: h.Runbook}); ref != "" {
			line += " · " + ref
		}
		m.Lines = append(m.Lines, line)
	}
	if more > 0 {
		m.Level = Alarm
		m.Lines = append(m.Lines, fmt.Sprintf("… and %d more alert(s) held while %d waited: their titles were not kept (see alertChat's log)", more, MaxHeld))
	}
	return m
}

// shows is how many of m's lines one post of m to a k bot shows in full.
func (k Kind) shows(m Message) int {
	r, err := build(Webhook{Kind: k, URL: "https://bot.invalid/"}, m, time.Time{})
	if err != nil {
		return 0
	}
	return r.shown
}
