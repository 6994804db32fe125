package inventory

import (
	"errors"
	"fmt"
	"time"
)

// ShapingWindow is the length of one request-shaping window: windows are fixed,
// back to back, starting on whole multiples of it since the Unix epoch.
const ShapingWindow = 60 * time.Second

// MaxShapingPerMinute is the highest Shaping.PerMinute accepted, so that one user's
// window item (a count per SKU, a mark of about 30 bytes per keyed request and SKU)
// stays a few KB.
const MaxShapingPerMinute = 100

// ErrRateLimited: requests came faster than the configured rate, so this one was
// refused and changed nothing (docs/contract.md, 429 RATE_LIMITED): the same user's order
// requests for the same SKU (POST /orders, see Shaping), or login attempts from one
// address or with one code (POST /auth/wechat).
var ErrRateLimited = errors.New("requests come faster than the allowed rate")

// RateLimitedError is ErrRateLimited for one SKU, with the time until the window
// that refused it ends.
type RateLimitedError struct {
	SKU        string        // the SKU whose window is full
	RetryAfter time.Duration // until the window ends; more than 0
}

// Error reports the SKU and the wait.
func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("%v: %s, retry after %v", ErrRateLimited, e.SKU, e.RetryAfter)
}

// Unwrap lets errors.Is see ErrRateLimited.
func (e *RateLimitedError) Unwrap() error { return ErrRateLimited }

// Shaping is per-user request shaping: one user's order requests naming one SKU are
// counted per ShapingWindow, and a request that would be the PerMinute+1st of its
// window is refused, unless it is a copy or replay (same idempotency key) of a
// request already admitted: those are never refused.
//
// Fixed windows make the promise exact: a user whose requests for a SKU number at
// most PerMinute in every span of 60 seconds (within the rate) has at most PerMinute
// in each window, so is never refused; more than PerMinute inside one window is.
// Across a window boundary a user may get up to 2 × PerMinute through in a short
// burst, never more.
type Shaping struct {
	PerMinute int // requests per user and SKU per window, 0..MaxShapingPerMinute; 0 = shaping off
}

// On reports whether shaping is on.
func (s Shaping) On() bool { return s.PerMinute > 0 }

// Validate returns an error wrapping ErrInvalidRequest unless PerMinute is
// 0..MaxShapingPerMinute.
func (s Shaping) Validate() error {
	if s.PerMinute < 0 || s.PerMinute > MaxShapingPerMinute {
		return InvalidError("shaping must allow 0 (off) to %d requests per minute", MaxShapingPerMinute)
	}
	return nil
}

// Window returns the start and end of the window holding now.
func (s Shaping) Window(now time.Time) (start, end time.Time) {
	start = now.Truncate(ShapingWindow)
	return start, start.Add(ShapingWindow)
}

// Refuse is the error for a request refused at now for sku: a *RateLimitedError
// whose RetryAfter is the time left in now's window.
func (s Shaping) Refuse(now time.Time, sku string) error {
	_, end := s.Window(now)
	return &RateLimitedError{SKU: sku, RetryAfter: end.Sub(now)}
}
