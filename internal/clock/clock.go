// Package clock holds the waiting that honours a context: one way to pause a retry
// loop, a backoff or a confirmation delay without outliving the request that asked.
package clock

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends. It returns nil after the full wait and ctx.Err()
// when ctx ended first; a d of zero or less returns at once (ctx.Err() if ctx is
// already done).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
