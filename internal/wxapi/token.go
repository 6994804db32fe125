package wxapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// stableTokenRequest is the body of a getStableAccessToken request ("获取稳定版接口调用凭据":
// 请求参数), field for field as sent.
type stableTokenRequest struct {
	GrantType    string `json:"grant_type"`    // GrantType
	AppID        string `json:"appid"`         // the app id
	Secret       string `json:"secret"`        // the app secret
	ForceRefresh bool   `json:"force_refresh"` // false: normal mode (the Client never forces)
}

// tokenFetch is one getStableAccessToken call that concurrent callers wait on.
type tokenFetch struct {
	done chan struct{}
	tok  string
	gen  uint64
	err  error
}

// token returns a cached access token and its generation, fetching one when there is none
// or the cached one is due for replacement. stale, when not zero, is the generation of a
// token WeChat just refused: if the cache still holds that generation it is dropped and
// the current token fetched.
//
// Concurrent callers share one fetch; a caller whose context ends stops waiting, and if
// the fetch failed only because its starter's context ended, the others start another.
// After a failed fetch the next one waits RefreshRetry: meanwhile callers get the cached
// token if it has not expired, else the same error.
func (c *Client) token(ctx context.Context, stale uint64) (string, uint64, error) {
	for {
		c.mu.Lock()
		if stale != 0 && c.gen == stale {
			c.tok = ""
		}
		now := c.now()
		switch {
		case c.tok != "" && now.Before(c.renewAt):
			tok, gen := c.tok, c.gen
			c.mu.Unlock()
			return tok, gen, nil
		case c.tok == "" && c.failed != nil && now.Before(c.retryAt):
			err := c.failed
			c.mu.Unlock()
			return "", 0, err
		}
		if f := c.pending; f != nil {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", 0, fmt.Errorf("wxapi: waiting for the access token: %w", ctx.Err())
			}
			if f.err != nil && ctx.Err() == nil && isContextError(f.err) {
				continue // the starter gave up; this caller still wants a token
			}
			return f.tok, f.gen, f.err
		}
		f := &tokenFetch{done: make(chan struct{})}
		c.pending = f
		c.mu.Unlock()

		tok, ttl, err := c.fetchToken(ctx) // expires_in counts from no earlier than now
		c.mu.Lock()
		c.pending = nil
		switch later := c.now(); {
		case err == nil:
			c.gen++
			c.tok, c.renewAt, c.expiresAt, c.failed = tok, now.Add(renewAfter(ttl, c.margin)), now.Add(ttl), nil
			f.tok, f.gen = tok, c.gen
		case c.tok != "" && later.Before(c.expiresAt):
			f.tok, f.gen, err = c.tok, c.gen, nil
			if c.renewAt = later.Add(RefreshRetry); c.renewAt.After(c.expiresAt) {
				c.renewAt = c.expiresAt
			}
		case !isContextError(err):
			c.tok, c.failed, c.retryAt = "", err, later.Add(RefreshRetry)
		}
		f.err = err
		c.mu.Unlock()
		close(f.done)
		return f.tok, f.gen, f.err
	}
}

// renewAfter is how long after its fetch a token with lifetime ttl is replaced: margin
// before it expires, or at half its life when it is not longer than margin.
func renewAfter(ttl, margin time.Duration) time.Duration {
	if ttl > margin {
		return ttl - margin
	}
	return ttl / 2
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fetchToken calls getStableAccessToken in normal mode.
func (c *Client) fetchToken(ctx context.Context) (string, time.Duration, error) {
	body, err := encode(stableTokenRequest{GrantType: GrantType, AppID: c.appID, Secret: c.secret})
	if err != nil {
		return "", 0, fmt.Errorf("wxapi: %s: encode request: %w", OpStableToken, err)
	}
	answer, status, err := c.post(ctx, OpStableToken, c.base+PathStableToken, body)
	if err != nil {
		return "", 0, err
	}
	return decodeToken(status, answer)
}

// decodeToken reads a getStableAccessToken answer: {"access_token","expires_in"} or an
// errcode. The token must be 1..MaxAccessTokenLen printable ASCII characters and expires_in
// positive; an expires_in above MaxTokenTTL is cut to it. Errors never quote the token.
func decodeToken(status int, body []byte) (string, time.Duration, error) {
	const op = OpStableToken
	if status != http.StatusOK {
		return "", 0, fmt.Errorf("%w: %s: HTTP %d", ErrUnavailable, op, status)
	}
	var w struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		ErrCode     int    `json:"errcode"`
		ErrMsg      string `json:"errmsg"`
	}
	if len(body) > maxAnswerBytes || json.Unmarshal(body, &w) != nil {
		return "", 0, fmt.Errorf("%w: %s: the answer is not the documented JSON", ErrUnavailable, op)
	}
	if w.ErrCode != 0 {
		return "", 0, newError(op, w.ErrCode, w.ErrMsg)
	}
	if w.AccessToken == "" || len(w.AccessToken) > MaxAccessTokenLen || !printable(w.AccessToken) || w.ExpiresIn <= 0 {
		return "", 0, fmt.Errorf("%w: %s: the answer lacks a valid access_token and expires_in", ErrUnavailable, op)
	}
	ttl := MaxTokenTTL
	if w.ExpiresIn < int64(MaxTokenTTL/time.Second) {
		ttl = time.Duration(w.ExpiresIn) * time.Second
	}
	return w.AccessToken, ttl, nil
}
