// Package teamchat posts a short message to a team's group chat through a group-bot
// webhook, in the message format each service documents, and reads each service's
// answer (which says success or failure in its body, even with HTTP 200):
//
//   - WeCom (企业微信) group robot: POST {"msgtype":"markdown","markdown":{"content"}}
//     to https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…; content at most 4,096
//     bytes of UTF-8; each robot at most 20 messages a minute; the answer is
//     {"errcode":0,"errmsg":"ok"}, errcode 45009 over the limit and -1 when the system
//     is busy (WeCom developer documentation, 群机器人配置说明,
//     https://developer.work.weixin.qq.com/document/path/91770, and 全局错误码,
//     https://developer.work.weixin.qq.com/document/path/90313).
//   - DingTalk (钉钉) custom robot: POST {"msgtype":"markdown","markdown":{"title","text"}}
//     to https://oapi.dingtalk.com/robot/send?access_token=…; with a signing secret (加签)
//     the query also carries timestamp (Unix milliseconds, within an hour of DingTalk's
//     clock) and sign = urlEncode(Base64(HmacSHA256(key = secret, timestamp + "\n" +
//     secret))). At most 20 messages a minute per robot, after which it is throttled for
//     10 minutes; the answer is {"errcode":0,"errmsg":"ok"}, errcode 310000 when a
//     security setting refuses the message (sign, keyword, IP), 130101 "send too fast,
//     exceed 20 times per minute" over the rate (the answer as seen in
//     github.com/ccfos/nightingale issue 369) (DingTalk open platform, 自定义机器人发送群消息,
//     https://open.dingtalk.com/document/orgapp/custom-bot-send-message-type, and
//     自定义机器人安全设置,
//     https://open.dingtalk.com/document/orgapp/customize-robot-security-settings).
//   - Feishu/Lark (飞书) custom bot: POST {"msg_type":"post","content":{"post":{"zh_cn":
//     {"title","content"}}}} to https://open.feishu.cn/open-apis/bot/v2/hook/…; with
//     signature verification (签名校验) the body also carries "timestamp" (Unix seconds,
//     as a string, within an hour) and "sign" = Base64(HmacSHA256(key = timestamp +
//     "\n" + secret, an empty message)). At most 100 messages a minute and 5 a second per bot,
//     a body of at most 20 KB; the answer is {"code":0,"msg":"success"}, code 19021 for a
//     bad signature or timestamp, 11232 when rate-limited (Feishu open platform,
//     自定义机器人使用指南, https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot).
//   - Slack incoming webhook: POST {"text"} (mrkdwn, with &, < and > escaped) to
//     https://hooks.slack.com/services/…; the answer is HTTP 200 "ok", errors an HTTP
//     status with a short text: 400 invalid_payload, 403 action_prohibited, 404
//     channel_not_found, 410 channel_is_archived, 500 rollup_error (Slack changelog,
//     "Improving error conditions for Incoming Webhooks", 2016-05-17; Slack docs,
//     "Sending messages using incoming webhooks"); about one message a second, beyond
//     which 429 with Retry-After in seconds (Slack docs, "Rate limits"). Text is cut at
//     40,000 characters (Slack docs, chat.postMessage, "Truncating content").
//
// A Poster sends a Message to a Webhook and retries what may succeed later (no answer,
// HTTP 5xx, a busy answer) with bounded backoff; a rate-limit answer is waited out only
// when the service says how long (Slack's Retry-After) and that is short, else it is
// returned at once, since the windows are a minute or more. Every failure is an *Error
// (or the transport's error), told apart with errors.Is(err, ErrRateLimited) and
// errors.Is(err, ErrRefused); no error text is ever matched.
//
// Kind.Limits says each service's documented sending rate, and Pace is a bot's record
// of what it was sent and what waits: a sender that takes a post only when Pace.Take
// allows it and holds the rest for a Digest never meets a rate-limit answer from a bot
// it alone posts to.
//
// Webhook URLs carry the credential (WeCom's key, DingTalk's access_token, the hook
// ids) and secrets sign: neither is ever logged or put in an error (Webhook.ID names
// a webhook safely).
package teamchat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Kind is a chat service.
type Kind string

// The services a Webhook may name.
const (
	WeCom    Kind = "wecom"
	DingTalk Kind = "dingtalk"
	Feishu   Kind = "feishu"
	Slack    Kind = "slack"
)

// Kinds lists every Kind, in the order help texts show them.
var Kinds = []Kind{WeCom, DingTalk, Feishu, Slack}

// signs reports whether the service signs requests with a secret (DingTalk's 加签,
// Feishu's 签名校验); WeCom's and Slack's URLs are their only credential.
func (k Kind) signs() bool { return k == DingTalk || k == Feishu }

// Webhook is one group bot: which service, its webhook URL, and its signing secret
// ("" for none; only DingTalk and Feishu robots have one).
type Webhook struct {
	Kind   Kind   `json:"kind"`
	URL    string `json:"url"`
	Secret string `json:"secret,omitempty"`
}

// ID names the webhook in logs and metrics without revealing it: the kind and the
// first 8 hex digits of the SHA-256 of its URL, e.g. "wecom-1f2e3d4c".
func (w Webhook) ID() string {
	sum := sha256.Sum256([]byte(w.URL))
	return string(w.Kind) + "-" + hex.EncodeToString(sum[:4])
}

// Validate checks w: a known Kind; an absolute https URL with a host and no fragment
// (plain http only to a loopback address, for local stand-ins); a Secret only for
// DingTalk and Feishu. The error never quotes the URL or the secret.
func (w Webhook) Validate() error {
	if !slices.Contains(Kinds, w.Kind) {
		return fmt.Errorf("teamchat: unknown kind %q: want one of wecom, dingtalk, feishu, slack", w.Kind)
	}
	u, err := url.Parse(w.URL)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil ||
		(u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		return fmt.Errorf("teamchat: %s webhook URL: want an absolute https URL with a host (http only to 127.0.0.1 or localhost)", w.Kind)
	}
	if w.Secret != "" && !w.Kind.signs() {
		return fmt.Errorf("teamchat: %s webhooks take no secret (only dingtalk and feishu sign)", w.Kind)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseFlag reads a webhook written KIND=URL or KIND=URL#SECRET (cmd/local's
// -alert-webhook): everything after the first '#' is the signing secret (webhook URLs
// have no fragment). It returns a validated Webhook, or an error naming what is wrong
// without quoting the URL or secret.
func ParseFlag(s string) (Webhook, error) {
	kind, rest, ok := strings.Cut(s, "=")
	if !ok || rest == "" {
		return Webhook{}, errors.New("teamchat: want KIND=URL or KIND=URL#SECRET (KIND: wecom, dingtalk, feishu or slack)")
	}
	w := Webhook{Kind: Kind(strings.ToLower(kind))}
	w.URL, w.Secret, _ = strings.Cut(rest, "#")
	return w, w.Validate()
}

// MaxWebhooks bounds the webhooks one configuration may list: each alert is posted to
// every one of them within one Lambda invocation.
const MaxWebhooks = 10

// ParseSecret reads the chat webhooks secret (the SecretString of the Secrets Manager
// secret the alert function names):
//
//	{"webhooks":[{"kind":"wecom","url":"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…"},
//	             {"kind":"dingtalk","url":"https://oapi.dingtalk.com/robot/send?access_token=…","secret":"SEC…"}]}
//
// Unknown fields, more than MaxWebhooks entries, or an entry Validate refuses are
// errors naming the entry by its position; an empty list is allowed (nothing is posted).
func ParseSecret(data []byte) ([]Webhook, error) {
	var s struct {
		Webhooks *[]Webhook `json:"webhooks"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || dec.More() {
		return nil, errors.New(`teamchat: the secret is not {"webhooks":[{"kind","url","secret"?}]}`)
	}
	if s.Webhooks == nil {
		return nil, errors.New(`teamchat: the secret has no "webhooks" list`)
	}
	if len(*s.Webhooks) > MaxWebhooks {
		return nil, fmt.Errorf("teamchat: %d webhooks, at most %d", len(*s.Webhooks), MaxWebhooks)
	}
	for i, w := range *s.Webhooks {
		if err := w.Validate(); err != nil {
			return nil, fmt.Errorf("webhook %d: %w", i, err)
		}
	}
	return *s.Webhooks, nil
}

// Level is how a Message is marked: an alarm, a resolved note, or a notice.
type Level int

// Levels.
const (
	Alarm Level = iota
	Resolved
	Notice
)

// mark is the symbol a title starts with.
func (l Level) mark() string {
	switch l {
	case Resolved:
		return "✅"
	case Notice:
		return "ℹ️"
	}
	return "🔴"
}

// Message is what to post, the same for every service: a one-line title, plain-text
// lines (what happened, which SKU or function, how big), and the runbook entry to
// follow. Lines longer than maxLineBytes are cut; lines that do not fit a service's
// size limit are dropped from the end and counted in a last line.
type Message struct {
	Level Level
	Title string
	Lines []string
	// RunbookEntry names the entry (e.g. "ReconcileDifferencesAlarm"); Runbook is where
	// it is: an https URL (posted as a link) or a path such as
	// "RUNBOOK.md#reconciledifferencesalarm". Both empty: no runbook line.
	RunbookEntry, Runbook string
}

// maxLineBytes bounds one line of a Message, in bytes of UTF-8.
const maxLineBytes = 512
