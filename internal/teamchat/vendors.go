package teamchat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Size limits, each as its service documents it (see the package documentation).
const (
	// WeComMaxContentBytes bounds a WeCom markdown message's content, in bytes of UTF-8.
	WeComMaxContentBytes = 4096
	// DingTalkMaxTextBytes bounds a DingTalk markdown message's text. DingTalk's custom
	// robot page gives no limit; this is WeCom's, which no alert comes near.
	DingTalkMaxTextBytes = 4096
	// FeishuMaxBodyBytes bounds a Feishu custom bot request body ("20 KB").
	FeishuMaxBodyBytes = 20 * 1000
	// SlackMaxTextChars bounds a Slack message's text, in characters.
	SlackMaxTextChars = 40000
)

// Rate-limit and busy answers (see the package documentation for the pages).
const (
	weComRateLimited    = 45009
	dingTalkTooFast     = 130101
	feishuRateLimited   = 11232
	systemBusy          = -1 // WeCom and DingTalk: 系统繁忙
	maxErrorMessageSize = 200
)

// ErrRateLimited is matched (errors.Is) by an *Error whose service said the bot sends
// too often: WeCom 45009, DingTalk 130101, Feishu 11232, Slack HTTP 429.
var ErrRateLimited = errors.New("teamchat: the chat service is rate-limiting this bot")

// ErrRefused is matched (errors.Is) by an *Error whose service refused the message for
// good (a bad signature, a keyword or IP setting, an archived channel, a malformed
// message): sending it again cannot help.
var ErrRefused = errors.New("teamchat: the chat service refused the message")

// class is how a failed answer is handled.
type class int

const (
	temporary   class = iota // may succeed if sent again: 5xx, busy, unreadable answer
	rateLimited              // sent too often: wait the window out
	refused                  // will not succeed as it is
)

// Error is an answer of a chat service that is not a success.
type Error struct {
	Kind   Kind
	Status int // HTTP status of the answer
	// Code is the service's errcode (WeCom, DingTalk) or code (Feishu); 0 when the
	// answer carries none (Slack, or an answer that is not the service's JSON).
	Code int
	// Message is the service's errmsg or msg, or Slack's error text, cut to 200 bytes.
	Message string
	// RetryAfter is how long the service asked to wait (Slack's Retry-After header);
	// 0 when it did not say.
	RetryAfter time.Duration
	class      class
}

// Error says which service answered what.
func (e *Error) Error() string {
	s := fmt.Sprintf("teamchat: %s answered HTTP %d", e.Kind, e.Status)
	if e.Code != 0 {
		s += " code " + strconv.Itoa(e.Code)
	}
	if e.Message != "" {
		s += " (" + e.Message + ")"
	}
	if e.RetryAfter > 0 {
		s += ", retry after " + e.RetryAfter.String()
	}
	return s
}

// Is reports whether e is a rate limit (ErrRateLimited) or a refusal (ErrRefused).
func (e *Error) Is(target error) bool {
	return target == ErrRateLimited && e.class == rateLimited || target == ErrRefused && e.class == refused
}

// request is one HTTP request to a webhook: where and what.
type request struct {
	target string
	body   []byte
	shown  int // how many of the message's lines the body shows in full
}

// build makes the request that posts m to w, signed at now when w has a secret.
func build(w Webhook, m Message, now time.Time) (request, error) {
	title := m.Level.mark() + " " + oneLine(m.Title)
	lines := make([]string, len(m.Lines))
	for i, l := range m.Lines {
		lines[i] = oneLine(l)
	}
	var r request
	var err error
	switch w.Kind {
	case WeCom:
		r.target = w.URL
		r.body, r.shown, err = fitted(lines, func(lines []string) ([]byte, int) {
			content := markdown(title, lines, m, "\n")
			body, _ := json.Marshal(map[string]any{"msgtype": "markdown", "markdown": map[string]string{"content": content}})
			return body, len(content)
		}, WeComMaxContentBytes)
	case DingTalk:
		r.target = w.URL
		if w.Secret != "" {
			r.target, err = dingTalkSigned(w.URL, w.Secret, now)
			if err != nil {
				return request{}, err
			}
		}
		r.body, r.shown, err = fitted(lines, func(lines []string) ([]byte, int) {
			text := markdown(title, lines, m, "\n\n")
			body, _ := json.Marshal(map[string]any{"msgtype": "markdown", "markdown": map[string]string{"title": title, "text": text}})
			return body, len(text)
		}, DingTalkMaxTextBytes)
	case Feishu:
		r.target = w.URL
		r.body, r.shown, err = fitted(lines, func(lines []string) ([]byte, int) {
			body, _ := json.Marshal(feishuMessage(w, title, lines, m, now))
			return body, len(body)
		}, FeishuMaxBodyBytes)
	case Slack:
		r.target = w.URL
		r.body, r.shown, err = fitted(lines, func(lines []string) ([]byte, int) {
			text := slackText(title, lines, m)
			body, _ := json.Marshal(map[string]string{"text": text})
			return body, utf8.RuneCountInString(text)
		}, SlackMaxTextChars)
	default:
		return request{}, fmt.Errorf("teamchat: unknown kind %q", w.Kind)
	}
	return r, err
}

// fitted returns the body render makes of lines and how many of them it shows,
// dropping lines from the end (and saying how many) so that the size render reports
// is at most limit. The size grows with the lines kept, so the most that fit are found
// by bisection.
func fitted(lines []string, render func([]string) ([]byte, int), limit int) ([]byte, int, error) {
	if body, size := render(lines); size <= limit {
		return body, len(lines), nil
	}
	shown := func(keep int) []string {
		return append(lines[:keep:keep], fmt.Sprintf("… %d more line(s) not shown", len(lines)-keep))
	}
	lo, hi := 0, len(lines)-1 // the most lines that fit with the "more" line is in [lo, hi]
	if _, size := render(shown(0)); size > limit {
		return nil, 0, errors.New("teamchat: the title alone is over the service's size limit")
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, size := render(shown(mid)); size <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	body, _ := render(shown(lo))
	return body, lo, nil
}

// oneLine makes s one line of at most maxLineBytes: control characters (line breaks
// included) become spaces, and a longer line is cut at a rune boundary with "…".
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) <= maxLineBytes {
		return s
	}
	cut := maxLineBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// runbookIsLink reports whether the runbook reference is a URL to link to.
func runbookIsLink(m Message) bool {
	return strings.HasPrefix(m.Runbook, "https://") || strings.HasPrefix(m.Runbook, "http://")
}

// markdown is the WeCom and DingTalk message: a level-3 title, the lines, and a bold
// runbook line (a link when the reference is a URL), joined by sep.
func markdown(title string, lines []string, m Message, sep string) string {
	parts := append([]string{"### " + title}, lines...)
	switch {
	case m.Runbook == "" && m.RunbookEntry == "":
	case runbookIsLink(m):
		parts = append(parts, fmt.Sprintf("**Runbook:** [%s](%s)", oneLine(m.RunbookEntry), m.Runbook))
	default:
		parts = append(parts, "**Runbook:** "+runbookText(m))
	}
	return strings.Join(parts, sep)
}

// runbookText is the runbook line's text: "Entry (RUNBOOK.md#entry)".
func runbookText(m Message) string {
	switch {
	case m.RunbookEntry == "":
		return oneLine(m.Runbook)
	case m.Runbook == "":
		return oneLine(m.RunbookEntry)
	}
	return oneLine(m.RunbookEntry) + " (" + oneLine(m.Runbook) + ")"
}

// slackEscape escapes the three characters Slack's mrkdwn reserves (Slack docs,
// "Formatting text for app surfaces", escaping: & < >).
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackText is the Slack message: a bold title, the lines, and the runbook line.
func slackText(title string, lines []string, m Message) string {
	parts := []string{"*" + slackEscape.Replace(title) + "*"}
	for _, l := range lines {
		parts = append(parts, slackEscape.Replace(l))
	}
	switch {
	case m.Runbook == "" && m.RunbookEntry == "":
	case runbookIsLink(m):
		parts = append(parts, fmt.Sprintf("*Runbook:* <%s|%s>", slackEscape.Replace(m.Runbook), slackEscape.Replace(oneLine(m.RunbookEntry))))
	default:
		parts = append(parts, "*Runbook:* "+slackEscape.Replace(runbookText(m)))
	}
	return strings.Join(parts, "\n")
}

// feishuElement is one element of a Feishu rich-text (post) paragraph: {"tag":"text",
// "text"} or {"tag":"a","text","href"}.
type feishuElement struct {
	Tag  string `json:"tag"`
	Text string `json:"text"`
	Href string `json:"href,omitempty"`
}

// feishuPost is one language's rich text: a title and paragraphs of elements.
type feishuPost struct {
	Title   string            `json:"title"`
	Content [][]feishuElement `json:"content"`
}

// feishuBody is a Feishu custom bot request: a rich-text (post) message, and the
// signature fields when the bot verifies signatures.
type feishuBody struct {
	Timestamp string `json:"timestamp,omitempty"`
	Sign      string `json:"sign,omitempty"`
	MsgType   string `json:"msg_type"`
	Content   struct {
		Post map[string]feishuPost `json:"post"`
	} `json:"content"`
}

// feishuMessage is the Feishu message: the title, one paragraph per line, and the
// runbook paragraph; signed at now when w has a secret.
func feishuMessage(w Webhook, title string, lines []string, m Message, now time.Time) feishuBody {
	var b feishuBody
	b.MsgType = "post"
	var paragraphs [][]feishuElement
	for _, l := range lines {
		paragraphs = append(paragraphs, []feishuElement{{Tag: "text", Text: l}})
	}
	switch {
	case m.Runbook == "" && m.RunbookEntry == "":
	case runbookIsLink(m):
		paragraphs = append(paragraphs, []feishuElement{{Tag: "text", Text: "Runbook: "}, {Tag: "a", Text: oneLine(m.RunbookEntry), Href: m.Runbook}})
	default:
		paragraphs = append(paragraphs, []feishuElement{{Tag: "text", Text: "Runbook: " + runbookText(m)}})
	}
	b.Content.Post = map[string]feishuPost{"zh_cn": {Title: title, Content: paragraphs}}
	if w.Secret != "" {
		b.Timestamp = strconv.FormatInt(now.Unix(), 10)
		b.Sign = feishuSign(b.Timestamp, w.Secret)
	}
	return b
}

// feishuSign is Feishu's signature of a request at timestamp (Unix seconds, as sent):
// Base64(HmacSHA256(key = timestamp + "\n" + secret, an empty message)).
func feishuSign(timestamp, secret string) string {
	mac := hmac.New(sha256.New, []byte(timestamp+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// dingTalkSign is DingTalk's signature at timestamp (Unix milliseconds, as sent),
// before URL encoding: Base64(HmacSHA256(key = secret, timestamp + "\n" + secret)).
func dingTalkSign(timestamp, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "\n" + secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// dingTalkSigned is the webhook URL with timestamp and sign added to its query (sign
// URL-encoded there, as DingTalk asks).
func dingTalkSigned(raw, secret string, now time.Time) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("teamchat: dingtalk webhook URL does not parse")
	}
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	q := u.Query()
	q.Set("timestamp", ts)
	q.Set("sign", dingTalkSign(ts, secret))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// answer reads a service's answer to a post: nil when the message was delivered,
// else an *Error.
func answer(kind Kind, status int, header http.Header, body []byte) error {
	e := &Error{Kind: kind, Status: status}
	if kind == Slack {
		e.Message = cut(strings.TrimSpace(string(body)))
		switch {
		case status == http.StatusOK:
			return nil
		case status == http.StatusTooManyRequests:
			e.class = rateLimited
			if s, err := strconv.Atoi(header.Get("Retry-After")); err == nil && s > 0 {
				e.RetryAfter = time.Duration(s) * time.Second
			}
		case status >= 500:
			e.class = temporary
		default:
			e.class = refused
		}
		return e
	}
	var a struct {
		ErrCode *int   `json:"errcode"` // WeCom, DingTalk
		ErrMsg  string `json:"errmsg"`
		Code    *int   `json:"code"` // Feishu
		Msg     string `json:"msg"`
	}
	code := (*int)(nil)
	if json.Unmarshal(body, &a) == nil {
		code, e.Message = a.ErrCode, a.ErrMsg
		if kind == Feishu {
			code, e.Message = a.Code, a.Msg
		}
		e.Message = cut(e.Message)
	}
	if code == nil {
		// Not the service's JSON: a proxy's or load balancer's answer.
		e.class = temporary
		if status >= 400 && status < 500 && status != http.StatusTooManyRequests {
			e.class = refused
		}
		return e
	}
	e.Code = *code
	switch {
	case e.Code == 0 && status == http.StatusOK:
		return nil
	case e.Code == weComRateLimited && kind == WeCom, e.Code == dingTalkTooFast && kind == DingTalk,
		e.Code == feishuRateLimited && kind == Feishu, status == http.StatusTooManyRequests:
		e.class = rateLimited
	case e.Code == systemBusy || status >= 500:
		e.class = temporary
	default:
		e.class = refused
	}
	return e
}

// cut keeps at most maxErrorMessageSize bytes of s, at a rune boundary.
func cut(s string) string {
	if len(s) <= maxErrorMessageSize {
		return s
	}
	n := maxErrorMessageSize
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
