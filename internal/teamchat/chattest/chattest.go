// Package chattest is a stand-in for the group-bot webhooks of WeCom, DingTalk,
// Feishu/Lark and Slack, for tests and the local stack only; it is never linked into a
// function binary. A Receiver plays one bot of one service: it accepts only requests of
// the shape that service documents (see internal/teamchat's package documentation for
// the pages), verifies the signature of a signing bot (DingTalk's timestamp and sign
// query parameters, Feishu's timestamp and sign body fields, each within an hour of its
// clock) with its own implementation of the documented algorithm, enforces each
// service's documented sending rate (see limits) and answers as the service does:
// WeCom and DingTalk {"errcode","errmsg"}, Feishu {"code","msg","data"}, Slack an HTTP
// status with a short text. A signature that does not verify gets the service's code
// (DingTalk 310000, Feishu 19021); a body outside the documented shape gets HTTP 400
// with the reason (a stand-in answer: the services' own vary) and is recorded in
// Refusals, so a test can require none. A message past the rate gets the service's
// rate-limit answer and is counted in RateLimited.
//
// Where a page leaves the rate's shape open ("每分钟最多发送20条" may count per calendar
// minute or over any 60 seconds; Slack allows "short bursts" of unstated size), the
// stand-in takes the stricter reading: any window of that length, and no burst.
package chattest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// Failure is a way a Receiver fails on purpose (see FailNext).
type Failure int

const (
	// FailServerError answers HTTP 502 with no body (a gateway in front of the service).
	FailServerError Failure = iota + 1
	// FailBusy answers errcode -1 "system busy" (WeCom, DingTalk); Feishu and Slack
	// answer HTTP 500 instead.
	FailBusy
	// FailRateLimit answers the service's rate-limit answer: WeCom errcode 45009,
	// DingTalk 130101, Feishu code 11232, Slack HTTP 429 with Retry-After: 1.
	FailRateLimit
)

// rate is one documented sending limit of a bot: at most n messages accepted in any
// window of length per.
type rate struct {
	n   int
	per time.Duration
}

// limits are each service's documented sending limits per bot, and how long a bot
// then refuses every message once one passed them (0: only while the window is full):
//   - WeCom group robot: 每个机器人发送的消息不能超过20条/分钟 (群机器人配置说明, 消息发送频率限制),
//     errcode 45009 past it;
//   - DingTalk custom robot: 每个机器人每分钟最多发送20条, and past 20 限流10分钟
//     (自定义机器人发送群消息, 消息发送频率限制), errcode 130101;
//   - Feishu/Lark custom bot: 100 次/分钟 and 5 次/秒 per bot (自定义机器人使用指南,
//     频率控制), code 11232;
//   - Slack incoming webhook: posting messages, 1 per second (Slack docs, "Rate limits"),
//     HTTP 429 with Retry-After in seconds.
var limits = map[teamchat.Kind]struct {
	rates    []rate
	throttle time.Duration
}{
	teamchat.WeCom:    {rates: []rate{{20, time.Minute}}},
	teamchat.DingTalk: {rates: []rate{{20, time.Minute}}, throttle: 10 * time.Minute},
	teamchat.Feishu:   {rates: []rate{{100, time.Minute}, {5, time.Second}}},
	teamchat.Slack:    {rates: []rate{{1, time.Second}}},
}

// Received is one message a Receiver accepted.
type Received struct {
	// Title is the message's title: WeCom's first content line, DingTalk's
	// markdown.title, Feishu's post title, Slack's first text line.
	Title string
	// Text is everything the message shows, as text.
	Text string
	// Body is the request body as sent.
	Body []byte
}

// Receiver is one stand-in bot. Safe for concurrent use; it is an http.Handler.
type Receiver struct {
	kind   teamchat.Kind
	secret string
	path   string // the webhook path (and query) the Receiver issued
	now    func() time.Time

	mu       sync.Mutex
	received []Received
	refusals []string
	requests int
	failures []Failure
	accepted []time.Time // when each message was accepted, for the rates
	blocked  time.Time   // DingTalk: refusing everything until then
	limited  int         // messages refused past the rate

	serving testkit.Background
}

// NewReceiver returns a stand-in bot of kind; secret is its signing secret ("" for
// none; only DingTalk and Feishu bots sign). It serves nothing until Start.
func NewReceiver(kind teamchat.Kind, secret string) *Receiver {
	token := make([]byte, 12)
	rand.Read(token)
	id := hex.EncodeToString(token)
	path := map[teamchat.Kind]string{
		teamchat.WeCom:    "/cgi-bin/webhook/send?key=" + id,
		teamchat.DingTalk: "/robot/send?access_token=" + id,
		teamchat.Feishu:   "/open-apis/bot/v2/hook/" + id,
		teamchat.Slack:    "/services/T00000000/B00000000/" + id,
	}[kind]
	return &Receiver{kind: kind, secret: secret, path: path, now: time.Now}
}

// UseClock makes now the Receiver's clock (default time.Now): the rates and the
// signatures' timestamps are judged by it. Call it before Start.
func (r *Receiver) UseClock(now func() time.Time) { r.now = now }

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves until Close.
func (r *Receiver) Start(addr string) error {
	if err := r.serving.Start(addr, r); err != nil {
		return fmt.Errorf("chattest: %w", err)
	}
	return nil
}

// Close stops serving.
func (r *Receiver) Close() error { return r.serving.Close() }

// URL is the base URL after Start ("http://127.0.0.1:<port>"); Webhook's URL is it
// followed by the webhook path. A test that reaches the stand-in through a proxy at the
// service's own host uses the path alone.
func (r *Receiver) URL() string { return r.serving.URL() }

// Webhook is the bot as a sender configures it: kind, the webhook URL (after Start)
// and the signing secret.
func (r *Receiver) Webhook() teamchat.Webhook {
	return teamchat.Webhook{Kind: r.kind, URL: r.serving.URL() + r.path, Secret: r.secret}
}

// FailNext makes the next n requests fail as f says.
func (r *Receiver) FailNext(f Failure, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range n {
		r.failures = append(r.failures, f)
	}
}

// Received returns the messages accepted so far, in order.
func (r *Receiver) Received() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.received...)
}

// Requests is how many requests reached the Receiver, failed and refused ones included.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// RateLimited is how many well-formed messages were refused for passing the
// service's sending rate (or during DingTalk's 10-minute throttle).
func (r *Receiver) RateLimited() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limited
}

// Refusals returns why each refused request was refused (shape or signature).
func (r *Receiver) Refusals() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.refusals...)
}

// maxBody bounds what is read of a request: above every service's limit.
const maxBody = 1 << 20

// ServeHTTP answers a POST to the webhook path.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	var failure Failure
	if len(r.failures) > 0 {
		failure, r.failures = r.failures[0], r.failures[1:]
	}
	r.mu.Unlock()
	if req.Method != http.MethodPost || !r.issued(req) {
		http.NotFound(w, req)
		return
	}
	if failure != 0 {
		r.fail(w, failure)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
	if err != nil {
		return
	}
	if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		r.refuse(w, "Content-Type "+ct+", want application/json")
		return
	}
	got, why, code := r.check(req, body)
	switch {
	case code != 0:
		r.refuseCode(w, code, why)
		return
	case why != "":
		r.refuse(w, why)
		return
	}
	now := r.now()
	r.mu.Lock()
	wait := r.overRate(now)
	if wait == 0 {
		got.Body = body
		r.received = append(r.received, got)
		r.accepted = append(r.accepted, now)
	} else {
		r.limited++
	}
	r.mu.Unlock()
	if wait > 0 {
		r.rateLimit(w, wait)
		return
	}
	r.ok(w)
}

// check reads body as the Receiver's kind of bot does: the message, or why it is
// refused, with the service's code for a refused signature (0 otherwise).
func (r *Receiver) check(req *http.Request, body []byte) (got Received, why string, code int) {
	switch r.kind {
	case teamchat.WeCom:
		got, why = weCom(body)
	case teamchat.DingTalk:
		if why = r.dingTalkSigned(req); why != "" {
			return Received{}, why, 310000
		}
		got, why = dingTalk(body)
	case teamchat.Feishu:
		var signed bool
		if got, why, signed = r.feishu(body); !signed {
			return Received{}, why, 19021
		}
	case teamchat.Slack:
		got, why = slack(body)
	}
	return got, why, 0
}

// issued reports whether req is for the webhook URL this Receiver issued: its path,
// and the credential WeCom and DingTalk carry in the query.
func (r *Receiver) issued(req *http.Request) bool {
	path, query, _ := strings.Cut(r.path, "?")
	if req.URL.Path != path {
		return false
	}
	if name, value, ok := strings.Cut(query, "="); ok {
		return req.URL.Query().Get(name) == value
	}
	return true
}

// overRate is how long before a message at now would pass the service's limits: 0
// when it passes now. A DingTalk message past the rate starts its 10-minute throttle.
// r.mu held.
func (r *Receiver) overRate(now time.Time) time.Duration {
	l := limits[r.kind]
	if now.Before(r.blocked) {
		return r.blocked.Sub(now)
	}
	var wait time.Duration
	for _, rt := range l.rates {
		var in []time.Time // accepted within the window ending at now, oldest first
		for _, t := range r.accepted {
			if now.Sub(t) < rt.per {
				in = append(in, t)
			}
		}
		if len(in) >= rt.n {
			wait = max(wait, in[len(in)-rt.n].Add(rt.per).Sub(now))
		}
	}
	if wait > 0 && l.throttle > 0 {
		r.blocked = now.Add(l.throttle)
		wait = l.throttle
	}
	return wait
}

func (r *Receiver) ok(w http.ResponseWriter) {
	switch r.kind {
	case teamchat.WeCom, teamchat.DingTalk:
		writeJSON(w, http.StatusOK, map[string]any{"errcode": 0, "errmsg": "ok"})
	case teamchat.Feishu:
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "data": map[string]any{}, "msg": "success"})
	case teamchat.Slack:
		io.WriteString(w, "ok")
	}
}

func (r *Receiver) fail(w http.ResponseWriter, f Failure) {
	switch {
	case f == FailServerError:
		w.WriteHeader(http.StatusBadGateway)
	case f == FailBusy && (r.kind == teamchat.WeCom || r.kind == teamchat.DingTalk):
		writeJSON(w, http.StatusOK, map[string]any{"errcode": -1, "errmsg": "system busy"})
	case f == FailBusy:
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "rollup_error")
	case r.kind == teamchat.WeCom:
		writeJSON(w, http.StatusOK, map[string]any{"errcode": 45009, "errmsg": "api freq out of limit"})
	case r.kind == teamchat.DingTalk:
		writeJSON(w, http.StatusOK, map[string]any{"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"})
	case r.kind == teamchat.Feishu:
		writeJSON(w, http.StatusOK, map[string]any{"code": 11232, "data": map[string]any{}, "msg": "frequency limited"})
	default:
		r.rateLimit(w, time.Second)
	}
}

// rateLimit answers a message past the rate as the service does; Slack's Retry-After
// says the whole seconds until one would pass.
func (r *Receiver) rateLimit(w http.ResponseWriter, wait time.Duration) {
	if r.kind != teamchat.Slack {
		r.fail(w, FailRateLimit)
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	w.WriteHeader(http.StatusTooManyRequests)
	io.WriteString(w, "rate_limited")
}

// refuseCode answers a signature that does not verify with the service's code.
func (r *Receiver) refuseCode(w http.ResponseWriter, code int, why string) {
	r.mu.Lock()
	r.refusals = append(r.refusals, why)
	r.mu.Unlock()
	if r.kind == teamchat.Feishu {
		writeJSON(w, http.StatusOK, map[string]any{"code": code, "data": map[string]any{}, "msg": why})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"errcode": code, "errmsg": why})
}

// refuse answers a request outside the documented shape: HTTP 400 and the reason.
func (r *Receiver) refuse(w http.ResponseWriter, why string) {
	r.mu.Lock()
	r.refusals = append(r.refusals, why)
	r.mu.Unlock()
	if r.kind == teamchat.Slack {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "invalid_payload")
		return
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"errcode": 400, "code": 400, "errmsg": "stand-in: " + why, "msg": "stand-in: " + why})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// strict decodes body into v, refusing unknown fields and trailing data.
func strict(body []byte, v any) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "body: " + err.Error()
	}
	if dec.More() {
		return "body: data after the JSON object"
	}
	return ""
}

// content checks a text field: present, valid UTF-8, at most max bytes.
func content(what, s string, max int) string {
	switch {
	case s == "":
		return what + " is empty"
	case !utf8.ValidString(s):
		return what + " is not UTF-8"
	case len(s) > max:
		return fmt.Sprintf("%s is %d bytes, over %d", what, len(s), max)
	}
	return ""
}

// weCom checks a WeCom group robot message: text (content ≤ 2,048 bytes) or
// markdown (content ≤ 4,096 bytes).
func weCom(body []byte) (Received, string) {
	var m struct {
		MsgType string `json:"msgtype"`
		Text    *struct {
			Content             string   `json:"content"`
			MentionedList       []string `json:"mentioned_list"`
			MentionedMobileList []string `json:"mentioned_mobile_list"`
		} `json:"text"`
		Markdown *struct {
			Content string `json:"content"`
		} `json:"markdown"`
	}
	if why := strict(body, &m); why != "" {
		return Received{}, why
	}
	var text, why string
	switch {
	case m.MsgType == "text" && m.Text != nil && m.Markdown == nil:
		text, why = m.Text.Content, content("text.content", m.Text.Content, 2048)
	case m.MsgType == "markdown" && m.Markdown != nil && m.Text == nil:
		text, why = m.Markdown.Content, content("markdown.content", m.Markdown.Content, 4096)
	default:
		return Received{}, fmt.Sprintf("msgtype %q with the wrong or no member", m.MsgType)
	}
	title, _, _ := strings.Cut(text, "\n")
	return Received{Title: title, Text: text}, why
}

// dingTalk checks a DingTalk custom robot message: text or markdown (title and text).
func dingTalk(body []byte) (Received, string) {
	var m struct {
		MsgType string `json:"msgtype"`
		Text    *struct {
			Content string `json:"content"`
		} `json:"text"`
		Markdown *struct {
			Title string `json:"title"`
			Text  string `json:"text"`
		} `json:"markdown"`
		At *struct {
			AtMobiles []string `json:"atMobiles"`
			AtUserIDs []string `json:"atUserIds"`
			IsAtAll   bool     `json:"isAtAll"`
		} `json:"at"`
	}
	if why := strict(body, &m); why != "" {
		return Received{}, why
	}
	switch {
	case m.MsgType == "text" && m.Text != nil && m.Markdown == nil:
		title, _, _ := strings.Cut(m.Text.Content, "\n")
		return Received{Title: title, Text: m.Text.Content}, content("text.content", m.Text.Content, teamchat.DingTalkMaxTextBytes)
	case m.MsgType == "markdown" && m.Markdown != nil && m.Text == nil:
		if why := content("markdown.title", m.Markdown.Title, 512); why != "" {
			return Received{}, why
		}
		return Received{Title: m.Markdown.Title, Text: m.Markdown.Text}, content("markdown.text", m.Markdown.Text, teamchat.DingTalkMaxTextBytes)
	}
	return Received{}, fmt.Sprintf("msgtype %q with the wrong or no member", m.MsgType)
}

// signWindow is how far a signed request's timestamp may be from the service's clock.
const signWindow = time.Hour

// dingTalkSigned verifies a signing DingTalk robot's timestamp and sign query
// parameters: sign = Base64(HmacSHA256(key = secret, timestamp + "\n" + secret)),
// URL-encoded in the query. It returns why a request fails, "" when it passes (or the
// robot does not sign).
func (r *Receiver) dingTalkSigned(req *http.Request) string {
	if r.secret == "" {
		return ""
	}
	q := req.URL.Query()
	ts, sign := q.Get("timestamp"), q.Get("sign")
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "sign not match: no timestamp"
	}
	if d := r.now().Sub(time.UnixMilli(ms)); d > signWindow || d < -signWindow {
		return "sign not match: timestamp more than an hour off"
	}
	mac := hmac.New(sha256.New, []byte(r.secret))
	io.WriteString(mac, ts+"\n"+r.secret)
	got, err := base64.StdEncoding.DecodeString(sign)
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return "sign not match"
	}
	return ""
}

// feishu checks a Feishu custom bot message (text or post) and, for a signing bot, its
// timestamp and sign: sign = Base64(HmacSHA256(key = timestamp + "\n" + secret, an
// empty message)). signed is false when the signature fails (why says how).
func (r *Receiver) feishu(body []byte) (got Received, why string, signed bool) {
	if len(body) > teamchat.FeishuMaxBodyBytes {
		return Received{}, fmt.Sprintf("body is %d bytes, over 20 KB", len(body)), true
	}
	var m feishuMessage
	if why := strict(body, &m); why != "" {
		return Received{}, why, true
	}
	if why := r.feishuSigned(m.Timestamp, m.Sign); why != "" {
		return Received{}, why, false
	}
	switch {
	case m.MsgType == "text" && m.Content.Text != nil && m.Content.Post == nil:
		title, _, _ := strings.Cut(*m.Content.Text, "\n")
		return Received{Title: title, Text: *m.Content.Text}, content("content.text", *m.Content.Text, teamchat.FeishuMaxBodyBytes), true
	case m.MsgType == "post" && len(m.Content.Post) > 0 && m.Content.Text == nil:
		for lang, post := range m.Content.Post {
			if lang != "zh_cn" && lang != "en_us" && lang != "ja_jp" {
				return Received{}, "post language " + lang, true
			}
			got, why := readFeishuPost(post)
			return got, why, true
		}
	}
	return Received{}, fmt.Sprintf("msg_type %q with the wrong or no content", m.MsgType), true
}

// feishuMessage is a Feishu custom bot message: text, or a post in one language.
type feishuMessage struct {
	Timestamp string `json:"timestamp"`
	Sign      string `json:"sign"`
	MsgType   string `json:"msg_type"`
	Content   struct {
		Text *string               `json:"text"`
		Post map[string]feishuPost `json:"post"`
	} `json:"content"`
}

// feishuPost is a post's title and paragraphs of elements.
type feishuPost struct {
	Title   string `json:"title"`
	Content [][]struct {
		Tag    string `json:"tag"`
		Text   string `json:"text"`
		Href   string `json:"href"`
		UserID string `json:"user_id"`
	} `json:"content"`
}

// feishuSigned checks a signing bot's timestamp and sign ("" when the bot has no
// secret or they hold): why they fail, else "".
func (r *Receiver) feishuSigned(timestamp, sign string) string {
	if r.secret == "" {
		return ""
	}
	secs, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return "sign match fail: no timestamp"
	}
	if d := r.now().Sub(time.Unix(secs, 0)); d > signWindow || d < -signWindow {
		return "sign match fail or timestamp is not within one hour from current time"
	}
	mac := hmac.New(sha256.New, []byte(timestamp+"\n"+r.secret))
	got, err := base64.StdEncoding.DecodeString(sign)
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return "sign match fail or timestamp is not within one hour from current time"
	}
	return ""
}

// readFeishuPost reads a post: its title and its lines (the text of each paragraph's
// elements: text, links, mentions), or why it is refused.
func readFeishuPost(post feishuPost) (Received, string) {
	lines := []string{post.Title}
	for _, paragraph := range post.Content {
		var line strings.Builder
		for _, e := range paragraph {
			switch {
			case e.Tag == "text" && e.Text != "", e.Tag == "a" && e.Text != "" && strings.HasPrefix(e.Href, "http"), e.Tag == "at" && e.UserID != "":
			default:
				return Received{}, fmt.Sprintf("post element %+v", e)
			}
			line.WriteString(e.Text)
		}
		lines = append(lines, line.String())
	}
	if post.Title == "" || len(post.Content) == 0 {
		return Received{}, "post without title or content"
	}
	return Received{Title: post.Title, Text: strings.Join(lines, "\n")}, ""
}

// slack checks a Slack incoming webhook message: a text of at most 40,000 characters.
func slack(body []byte) (Received, string) {
	var m struct {
		Text        string            `json:"text"`
		Blocks      []json.RawMessage `json:"blocks"`
		Attachments []json.RawMessage `json:"attachments"`
		Mrkdwn      *bool             `json:"mrkdwn"`
	}
	if why := strict(body, &m); why != "" {
		return Received{}, why
	}
	if m.Text == "" || !utf8.ValidString(m.Text) {
		return Received{}, "text is empty or not UTF-8"
	}
	if n := utf8.RuneCountInString(m.Text); n > teamchat.SlackMaxTextChars {
		return Received{}, fmt.Sprintf("text is %d characters, over 40,000", n)
	}
	title, _, _ := strings.Cut(m.Text, "\n")
	return Received{Title: title, Text: m.Text}, ""
}
