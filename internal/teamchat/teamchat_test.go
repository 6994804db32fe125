package teamchat_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/teamchat/chattest"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// sample is an alert as the alert function builds it.
var sample = teamchat.Message{
	Title: "Books differ for 1 SKU",
	Lines: []string{
		"cup-01 · available: expected 30, actual 40 (+10 units)",
		"cup-01 · shard 0 available: expected 30, actual 40 (+10 units)",
	},
	RunbookEntry: "ReconcileDifferencesAlarm",
	Runbook:      "RUNBOOK.md#reconciledifferencesalarm",
}

// bots are one stand-in bot per service, the signing ones with and without a secret.
var bots = []struct {
	name   string
	kind   teamchat.Kind
	secret string
}{
	{"wecom", teamchat.WeCom, ""},
	{"dingtalk", teamchat.DingTalk, ""},
	{"dingtalk signed", teamchat.DingTalk, "SECdingtalk-test-secret"},
	{"feishu", teamchat.Feishu, ""},
	{"feishu signed", teamchat.Feishu, "feishu-test-secret"},
	{"slack", teamchat.Slack, ""},
}

func receiver(t *testing.T, kind teamchat.Kind, secret string) *chattest.Receiver {
	t.Helper()
	r := chattest.NewReceiver(kind, secret)
	if err := r.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// waits records the Poster's waits instead of waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return nil
}

func (w *waits) list() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func poster(w *waits, opts teamchat.Options) *teamchat.Poster {
	opts.Sleep = w.sleep
	return teamchat.NewPoster(opts)
}

// Each service's stand-in accepts the message as its documented shape (and, for a
// signing bot, signature), in one request, and shows the title, every line and the
// runbook entry.
func TestPost_EachServiceGetsItsDocumentedMessage(t *testing.T) {
	for _, b := range bots {
		t.Run(b.name, func(t *testing.T) {
			r := receiver(t, b.kind, b.secret)
			attempts, err := poster(&waits{}, teamchat.Options{}).Post(context.Background(), r.Webhook(), sample)
			if err != nil || attempts != 1 {
				t.Fatalf("Post: %d attempts, %v; want 1, nil (refusals %q)", attempts, err, r.Refusals())
			}
			got := r.Received()
			if len(got) != 1 || len(r.Refusals()) != 0 {
				t.Fatalf("received %d, refused %q; want 1, none", len(got), r.Refusals())
			}
			if !strings.Contains(got[0].Title, sample.Title) {
				t.Errorf("title %q lacks %q", got[0].Title, sample.Title)
			}
			for _, want := range append(sample.Lines, sample.RunbookEntry, sample.Runbook) {
				if !strings.Contains(got[0].Text, want) {
					t.Errorf("text lacks %q:\n%s", want, got[0].Text)
				}
			}
			t.Logf("%s body: %s", b.name, got[0].Body)
		})
	}
}

// An https runbook reference is posted as a link in each service's own syntax.
func TestPost_RunbookURLIsALink(t *testing.T) {
	m := sample
	m.Runbook = "https://git.example.com/shop/stockguard/blob/main/RUNBOOK.md#reconciledifferencesalarm"
	want := map[teamchat.Kind]string{
		teamchat.WeCom:    "**Runbook:** [ReconcileDifferencesAlarm](" + m.Runbook + ")",
		teamchat.DingTalk: "**Runbook:** [ReconcileDifferencesAlarm](" + m.Runbook + ")",
		teamchat.Feishu:   `{"tag":"a","text":"ReconcileDifferencesAlarm","href":"` + m.Runbook + `"}`,
		teamchat.Slack:    "*Runbook:* <" + m.Runbook + "|ReconcileDifferencesAlarm>",
	}
	for _, kind := range teamchat.Kinds {
		r := receiver(t, kind, "")
		if _, err := poster(&waits{}, teamchat.Options{}).Post(context.Background(), r.Webhook(), m); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		got := r.Received()[0]
		shown := got.Text
		if kind == teamchat.Feishu {
			shown = string(got.Body)
		}
		if !strings.Contains(shown, want[kind]) {
			t.Errorf("%s: lacks %s:\n%s", kind, want[kind], shown)
		}
	}
}

// A signing bot refuses a request signed with the wrong secret, or not signed, with
// its documented code (DingTalk 310000, Feishu 19021): the Post fails at once as
// refused, after one request, and nothing is shown.
func TestPost_WrongOrMissingSecretIsRefused(t *testing.T) {
	for _, tc := range []struct {
		kind teamchat.Kind
		code int
	}{{teamchat.DingTalk, 310000}, {teamchat.Feishu, 19021}} {
		for _, secret := range []string{"the-wrong-secret", ""} {
			t.Run(fmt.Sprintf("%s secret %q", tc.kind, secret), func(t *testing.T) {
				r := receiver(t, tc.kind, "the-right-secret")
				hook := r.Webhook()
				hook.Secret = secret
				w := &waits{}
				attempts, err := poster(w, teamchat.Options{}).Post(context.Background(), hook, sample)
				var e *teamchat.Error
				if !errors.As(err, &e) || !errors.Is(err, teamchat.ErrRefused) || errors.Is(err, teamchat.ErrRateLimited) || e.Code != tc.code {
					t.Fatalf("Post: %v; want a refusal with code %d", err, tc.code)
				}
				if attempts != 1 || r.Requests() != 1 || len(r.Received()) != 0 || len(w.list()) != 0 {
					t.Errorf("%d attempts, %d requests, %d shown, waits %v; want 1, 1, 0, none", attempts, r.Requests(), len(r.Received()), w.list())
				}
				if strings.Contains(err.Error(), "the-right-secret") || strings.Contains(err.Error(), r.Webhook().URL) {
					t.Errorf("the error quotes the secret or URL: %v", err)
				}
			})
		}
	}
}

// Answers that may succeed later (HTTP 502, a busy answer) are retried with the
// backoff, 1 s then 2 s, and the message is shown once; exact request counts.
func TestPost_RetriesFailuresThenSucceeds(t *testing.T) {
	for _, b := range bots {
		for _, f := range []chattest.Failure{chattest.FailServerError, chattest.FailBusy} {
			t.Run(fmt.Sprintf("%s failure %d", b.name, f), func(t *testing.T) {
				r := receiver(t, b.kind, b.secret)
				r.FailNext(f, 2)
				w := &waits{}
				attempts, err := poster(w, teamchat.Options{}).Post(context.Background(), r.Webhook(), sample)
				if err != nil || attempts != 3 || r.Requests() != 3 || len(r.Received()) != 1 {
					t.Fatalf("Post: %d attempts, %v; %d requests, %d shown; want 3, nil, 3, 1", attempts, err, r.Requests(), len(r.Received()))
				}
				if got := w.list(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
					t.Errorf("waits %v, want [1s 2s]", got)
				}
			})
		}
	}
}

// After Attempts failures the Post gives up with the last answer, neither refused nor
// rate-limited, having sent exactly Attempts requests.
func TestPost_GivesUpAfterItsAttempts(t *testing.T) {
	for _, attempts := range []int{1, 3, 5} {
		r := receiver(t, teamchat.WeCom, "")
		r.FailNext(chattest.FailServerError, attempts)
		w := &waits{}
		n, err := poster(w, teamchat.Options{Attempts: attempts}).Post(context.Background(), r.Webhook(), sample)
		var e *teamchat.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadGateway || errors.Is(err, teamchat.ErrRefused) || errors.Is(err, teamchat.ErrRateLimited) {
			t.Errorf("Attempts %d: %v; want the 502", attempts, err)
		}
		if n != attempts || r.Requests() != attempts || len(w.list()) != attempts-1 || len(r.Received()) != 0 {
			t.Errorf("Attempts %d: %d sent, %d received, %d waits, %d shown", attempts, n, r.Requests(), len(w.list()), len(r.Received()))
		}
	}
}

// A rate-limit answer that names no wait (WeCom 45009, DingTalk 130101, Feishu 11232)
// ends the Post at once; Slack's 429 Retry-After: 1 is waited out when it is short
// enough, and returned when it is not.
func TestPost_HonoursRateLimitAnswers(t *testing.T) {
	for _, kind := range []teamchat.Kind{teamchat.WeCom, teamchat.DingTalk, teamchat.Feishu} {
		r := receiver(t, kind, "")
		r.FailNext(chattest.FailRateLimit, 1)
		w := &waits{}
		n, err := poster(w, teamchat.Options{}).Post(context.Background(), r.Webhook(), sample)
		if !errors.Is(err, teamchat.ErrRateLimited) || n != 1 || r.Requests() != 1 || len(w.list()) != 0 {
			t.Errorf("%s: %v after %d requests, waits %v; want ErrRateLimited after 1, no wait", kind, err, n, w.list())
		}
	}
	r := receiver(t, teamchat.Slack, "")
	r.FailNext(chattest.FailRateLimit, 1)
	w := &waits{}
	n, err := poster(w, teamchat.Options{}).Post(context.Background(), r.Webhook(), sample)
	if err != nil || n != 2 || len(r.Received()) != 1 || len(w.list()) != 1 || w.list()[0] != time.Second {
		t.Errorf("slack: %v after %d requests, waits %v; want delivered after 2, one wait of 1s", err, n, w.list())
	}
	r.FailNext(chattest.FailRateLimit, 1)
	w = &waits{}
	n, err = poster(w, teamchat.Options{MaxRetryAfter: 500 * time.Millisecond}).Post(context.Background(), r.Webhook(), sample)
	var e *teamchat.Error
	if !errors.As(err, &e) || !errors.Is(err, teamchat.ErrRateLimited) || e.RetryAfter != time.Second || n != 1 || len(w.list()) != 0 {
		t.Errorf("slack, Retry-After over MaxRetryAfter: %v after %d, waits %v; want ErrRateLimited (1s) at once", err, n, w.list())
	}
}

// The stand-ins refuse past each service's documented rate, as the services do
// (internal/teamchat/chattest, limits): WeCom 20 a minute; DingTalk 20 a minute, then
// nothing for 10 minutes; Feishu 100 a minute and 5 a second; Slack 1 a second, with a
// Retry-After. Each step posts at the clock's time and says how many the bot accepts.
func TestStandIns_RefusePastEachServicesDocumentedRate(t *testing.T) {
	type step struct {
		after    time.Duration // clock advance before the posts
		posts    int           // posts at that instant, one after another
		accepted int           // of them, accepted
	}
	for _, tc := range []struct {
		kind  teamchat.Kind
		steps []step
	}{
		// 20 spread over 57 s, the 21st at 58 s refused; at 60 s the first has left the window.
		{teamchat.WeCom, []step{{0, 1, 1}, {3 * time.Second, 19, 19}, {55 * time.Second, 1, 0}, {2 * time.Second, 1, 1}, {0, 1, 0}}},
		// The 21st starts a 10-minute throttle: nothing passes until it ends.
		{teamchat.DingTalk, []step{{0, 20, 20}, {59 * time.Second, 1, 0}, {time.Minute, 1, 0}, {8 * time.Minute, 1, 0}, {time.Minute, 5, 5}}},
		// 5 a second: 100 in the first 20 seconds, then none until the first leave the minute.
		{teamchat.Feishu, append(append([]step{{0, 6, 5}}, slices.Repeat([]step{{time.Second, 6, 5}}, 19)...),
			step{time.Second, 1, 0}, step{39 * time.Second, 1, 0}, step{time.Second, 6, 5})},
		{teamchat.Slack, []step{{0, 3, 1}, {999 * time.Millisecond, 1, 0}, {time.Millisecond, 2, 1}}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			clock := testkit.NewClock()
			r := chattest.NewReceiver(tc.kind, "")
			r.UseClock(clock.Now)
			if err := r.Start("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			p := poster(&waits{}, teamchat.Options{Attempts: 1, Now: clock.Now})
			wantAccepted, wantLimited := 0, 0
			for i, st := range tc.steps {
				clock.Advance(st.after)
				accepted := 0
				for range st.posts {
					_, err := p.Post(context.Background(), r.Webhook(), sample)
					switch {
					case err == nil:
						accepted++
					case !errors.Is(err, teamchat.ErrRateLimited):
						t.Fatalf("step %d: %v, want success or ErrRateLimited", i, err)
					}
				}
				wantAccepted, wantLimited = wantAccepted+st.accepted, wantLimited+st.posts-st.accepted
				if accepted != st.accepted {
					t.Errorf("step %d (+%v, %d posts): %d accepted, want %d", i, st.after, st.posts, accepted, st.accepted)
				}
			}
			if len(r.Received()) != wantAccepted || r.RateLimited() != wantLimited || len(r.Refusals()) != 0 {
				t.Errorf("%d received, %d rate-limited, refusals %q; want %d, %d, none", len(r.Received()), r.RateLimited(), r.Refusals(), wantAccepted, wantLimited)
			}
		})
	}
	r := receiver(t, teamchat.Slack, "")
	if _, err := poster(&waits{}, teamchat.Options{Attempts: 1}).Post(context.Background(), r.Webhook(), sample); err != nil {
		t.Fatal(err)
	}
	_, err := poster(&waits{}, teamchat.Options{Attempts: 1}).Post(context.Background(), r.Webhook(), sample)
	var e *teamchat.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.RetryAfter != time.Second {
		t.Errorf("slack's second message within a second: %v, want 429 with Retry-After: 1", err)
	}
}

// A long message is cut to each service's limit, dropping lines from the end and
// saying how many; the stand-ins (which check the limits) accept every one.
func TestPost_FitsEachServiceLimit(t *testing.T) {
	long := teamchat.Message{Title: "Books differ for 900 SKUs", Runbook: "RUNBOOK.md#reconciledifferencesalarm", RunbookEntry: "ReconcileDifferencesAlarm"}
	for i := range 900 {
		long.Lines = append(long.Lines, fmt.Sprintf("sku-%04d · available: expected 30, actual 40 (+10 units) %s", i, strings.Repeat("词", 20)))
	}
	for _, b := range bots {
		r := receiver(t, b.kind, b.secret)
		if _, err := poster(&waits{}, teamchat.Options{}).Post(context.Background(), r.Webhook(), long); err != nil {
			t.Fatalf("%s: %v (refusals %q)", b.name, err, r.Refusals())
		}
		got := r.Received()[0].Text
		if !strings.Contains(got, "more line(s) not shown") || !strings.Contains(got, "sku-0000") || !strings.Contains(got, "ReconcileDifferencesAlarm") {
			t.Errorf("%s: no first line, runbook or \"more\" line:\n%.300s…", b.name, got)
		}
	}
}

// Slack's reserved characters are escaped, so text cannot mention @channel or forge a
// link.
func TestPost_EscapesSlackMarkup(t *testing.T) {
	r := receiver(t, teamchat.Slack, "")
	m := teamchat.Message{Title: "a < b", Lines: []string{"<!channel> & <https://evil.example|click>"}}
	if _, err := poster(&waits{}, teamchat.Options{}).Post(context.Background(), r.Webhook(), m); err != nil {
		t.Fatal(err)
	}
	got := r.Received()[0].Text
	if strings.ContainsAny(strings.ReplaceAll(got, "&amp;", ""), "<>") || !strings.Contains(got, "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;") {
		t.Errorf("text %q", got)
	}
}

// No answer at all (the bot is gone) is retried, and the error names neither the
// URL's credential nor the secret.
func TestPost_TransportErrorsDoNotQuoteTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	hook := teamchat.Webhook{Kind: teamchat.DingTalk, URL: srv.URL + "/robot/send?access_token=credential-123", Secret: "SECsecret"}
	srv.Close()
	n, err := poster(&waits{}, teamchat.Options{}).Post(context.Background(), hook, sample)
	if err == nil || n != 3 || strings.Contains(err.Error(), "credential-123") || strings.Contains(err.Error(), "SECsecret") {
		t.Errorf("%d attempts, %v; want 3 and an error without the credential", n, err)
	}
}

// A wait that would pass the context's deadline is not started: the Post returns the
// failure instead of being cut off mid-wait.
func TestPost_DoesNotWaitPastTheDeadline(t *testing.T) {
	r := receiver(t, teamchat.WeCom, "")
	r.FailNext(chattest.FailServerError, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	w := &waits{}
	n, err := poster(w, teamchat.Options{Backoff: time.Minute}).Post(ctx, r.Webhook(), sample)
	if err == nil || n != 1 || len(w.list()) != 0 {
		t.Errorf("%d attempts, %v, waits %v; want the 502 after 1, no wait", n, err, w.list())
	}
}

func TestParseFlag(t *testing.T) {
	good := map[string]teamchat.Webhook{
		"wecom=https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k1":                  {Kind: teamchat.WeCom, URL: "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k1"},
		"DingTalk=https://oapi.dingtalk.com/robot/send?access_token=t#SECs":              {Kind: teamchat.DingTalk, URL: "https://oapi.dingtalk.com/robot/send?access_token=t", Secret: "SECs"},
		"feishu=https://open.feishu.cn/open-apis/bot/v2/hook/h#sec#ret":                  {Kind: teamchat.Feishu, URL: "https://open.feishu.cn/open-apis/bot/v2/hook/h", Secret: "sec#ret"},
		"slack=http://127.0.0.1:9000/services/T/B/X":                                     {Kind: teamchat.Slack, URL: "http://127.0.0.1:9000/services/T/B/X"},
		"wecom=http://localhost:8080/cgi-bin/webhook/send?key=local":                     {Kind: teamchat.WeCom, URL: "http://localhost:8080/cgi-bin/webhook/send?key=local"},
		"feishu=https://open.larksuite.com/open-apis/bot/v2/hook/h":                      {Kind: teamchat.Feishu, URL: "https://open.larksuite.com/open-apis/bot/v2/hook/h"},
		"dingtalk=https://oapi.dingtalk.com/robot/send?access_token=t&x=%23notafragment": {Kind: teamchat.DingTalk, URL: "https://oapi.dingtalk.com/robot/send?access_token=t&x=%23notafragment"},
	}
	for in, want := range good {
		if got, err := teamchat.ParseFlag(in); err != nil || got != want {
			t.Errorf("ParseFlag(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "wecom", "wecom=", "teams=https://example.com/hook", "wecom=http://example.com/hook?key=secretkey",
		"wecom=https://qyapi.weixin.qq.com/send?key=secretkey#s3cr3t", "slack=https://hooks.slack.com/services/x#s3cr3t",
		"wecom=/cgi-bin/webhook/send?key=secretkey", "slack=ftp://hooks.slack.com/secretkey", "wecom=https://user:secretkey@example.com/",
	} {
		_, err := teamchat.ParseFlag(in)
		if err == nil {
			t.Errorf("ParseFlag(%q) accepted", in)
			continue
		}
		if strings.Contains(err.Error(), "secretkey") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("ParseFlag(%q): the error quotes the URL or secret: %v", in, err)
		}
	}
}

func TestParseSecret(t *testing.T) {
	hooks, err := teamchat.ParseSecret([]byte(`{"webhooks":[{"kind":"wecom","url":"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"},
		{"kind":"dingtalk","url":"https://oapi.dingtalk.com/robot/send?access_token=t","secret":"SECs"}]}`))
	if err != nil || len(hooks) != 2 || hooks[1].Secret != "SECs" || hooks[0].Kind != teamchat.WeCom {
		t.Errorf("ParseSecret: %+v, %v", hooks, err)
	}
	if hooks, err := teamchat.ParseSecret([]byte(`{"webhooks":[]}`)); err != nil || len(hooks) != 0 {
		t.Errorf("an empty list: %v, %v; want none, nil", hooks, err)
	}
	eleven := `{"webhooks":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"slack","url":"https://hooks.slack.com/services/a"},`, 11), ",") + `]}`
	for _, bad := range []string{
		``, `[]`, `{}`, `{"webhooks":null}`, `{"webhooks":[],"extra":1}`, `{"webhooks":[{"kind":"wecom","url":"https://x","token":"t"}]}`,
		`{"webhooks":[{"kind":"teams","url":"https://x"}]}`, `{"webhooks":[{"kind":"wecom","url":"http://x.example/secretkey"}]}`,
		`{"webhooks":[{"kind":"slack","url":"https://hooks.slack.com/services/a","secret":"s"}]}`, `{"webhooks":[]} {}`, eleven,
	} {
		if _, err := teamchat.ParseSecret([]byte(bad)); err == nil {
			t.Errorf("ParseSecret(%s) accepted", bad)
		} else if strings.Contains(err.Error(), "secretkey") {
			t.Errorf("ParseSecret(%s): the error quotes the URL: %v", bad, err)
		}
	}
}

func TestWebhookID_NamesTheKindAndHidesTheURL(t *testing.T) {
	a := teamchat.Webhook{Kind: teamchat.WeCom, URL: "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=secretkey"}
	b := a
	b.URL += "2"
	if id := a.ID(); !strings.HasPrefix(id, "wecom-") || len(id) != len("wecom-")+8 || strings.Contains(id, "secretkey") || id == b.ID() {
		t.Errorf("IDs %q and %q", a.ID(), b.ID())
	}
}
