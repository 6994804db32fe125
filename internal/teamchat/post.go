package teamchat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/stockguard/stockguard/internal/clock"
)

// Options tune a Poster. Zero values take the defaults noted.
type Options struct {
	// Client sends the requests; default a client with a 5-second timeout per request.
	Client *http.Client
	// Attempts bounds the requests one Post sends; default 3.
	Attempts int
	// Backoff is the wait after the first failed attempt, doubled after each further
	// one; default 1 s (so 1 s, then 2 s with the default Attempts).
	Backoff time.Duration
	// MaxRetryAfter is the longest wait a rate-limit answer's Retry-After is honoured
	// with inside one Post; default 5 s. A longer one, or a rate limit that names no
	// wait (WeCom, DingTalk and Feishu count per minute), ends the Post at once with the
	// *Error, for the caller to try again later.
	MaxRetryAfter time.Duration
	// Now is the clock signatures are made with (the service checks them against its
	// own clock, so this is wall time); default time.Now.
	Now func() time.Time
	// Sleep waits between attempts; default clock.Sleep. Tests count waits with it.
	Sleep func(context.Context, time.Duration) error
}

// Poster posts Messages to Webhooks. It is safe for concurrent use.
type Poster struct{ opts Options }

// requestTimeout bounds one request with the default client.
const requestTimeout = 5 * time.Second

// maxAnswerBytes bounds how much of an answer is read.
const maxAnswerBytes = 64 << 10

// NewPoster returns a Poster with opts.
func NewPoster(opts Options) *Poster {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: requestTimeout}
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = clock.Sleep
	}
	return &Poster{opts: opts}
}

// Post sends m to w and returns how many requests it sent and nil once the service
// answered success. A request with no answer, an HTTP 5xx or a busy answer is sent
// again (signed afresh) after the backoff, up to Options.Attempts requests; a
// rate-limit answer is waited out only for a Retry-After of at most MaxRetryAfter; a
// refusal is final. The error is then the last *Error (errors.Is ErrRateLimited or
// ErrRefused tells which), or the transport's error wrapped with the kind. A wait that
// would pass ctx's deadline is not started. An invalid w or a message that cannot fit
// is an error before any request.
func (p *Poster) Post(ctx context.Context, w Webhook, m Message) (attempts int, err error) {
	if err := w.Validate(); err != nil {
		return 0, err
	}
	wait := p.opts.Backoff
	for attempts < p.opts.Attempts {
		r, err := build(w, m, p.opts.Now())
		if err != nil {
			return attempts, err
		}
		attempts++
		err = p.send(ctx, w.Kind, r)
		if err == nil {
			return attempts, nil
		}
		var e *Error
		isErr := errors.As(err, &e)
		switch {
		case attempts == p.opts.Attempts, isErr && e.class == refused:
			return attempts, err
		case isErr && e.class == rateLimited:
			if e.RetryAfter == 0 || e.RetryAfter > p.opts.MaxRetryAfter {
				return attempts, err
			}
			if !p.pause(ctx, e.RetryAfter) {
				return attempts, err
			}
		default:
			if !p.pause(ctx, wait) {
				return attempts, err
			}
			wait *= 2
		}
	}
	return attempts, errors.New("teamchat: no attempt allowed") // Attempts ≥ 1: not reached
}

// pause waits d unless that would pass ctx's deadline or ctx ends first.
func (p *Poster) pause(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return false
	}
	return p.opts.Sleep(ctx, d) == nil
}

// send makes one request and reads its answer.
func (p *Poster) send(ctx context.Context, kind Kind, r request) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.target, bytes.NewReader(r.body))
	if err != nil {
		return fmt.Errorf("teamchat: %s: build request: %w", kind, withoutURL(err))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("teamchat: %s: no answer: %w", kind, withoutURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("teamchat: %s: read answer: %w", kind, err)
	}
	return answer(kind, resp.StatusCode, resp.Header, body)
}

// withoutURL drops the URL a *url.Error quotes (it holds the webhook's credential),
// keeping its cause.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
