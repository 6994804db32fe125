package inventory

import (
	"fmt"
	"time"
)

// next is the state machine (docs/design.md, "State machine"): the statuses each
// status may become.
var next = map[Status][]Status{
	StatusPending:       {StatusPaid, StatusCancelled},
	StatusCancelled:     {StatusPaid, StatusRefundPending},
	StatusPaid:          {StatusRefunding},
	StatusRefundPending: {StatusRefunding},
	StatusRefunding:     {StatusRefunded},
}

// CanBecome reports whether an order in status s may move to status to (docs/design.md,
// "State machine"). A status never becomes itself.
func (s Status) CanBecome(to Status) bool {
	for _, n := range next[s] {
		if n == to {
			return true
		}
	}
	return false
}

// Expired reports whether o may still be cancelled (PENDING) and its payment window
// is over at now (ExpiresAt not after now): what a timeout releases.
func (o *Order) Expired(now time.Time) bool {
	return o.Status.CanBecome(StatusCancelled) && !now.Before(o.ExpiresAt)
}

// CheckCancelled is the answer to a user's cancel once the order has been released
// or found as it is: nil when it is CANCELLED (by this cancel or an earlier one), an
// error wrapping ErrNotCancellable when it has gone another way (paid, refunded).
func (o *Order) CheckCancelled() error {
	if o.Status != StatusCancelled {
		return fmt.Errorf("cancel order %s (%s): %w", o.ID, o.Status, ErrNotCancellable)
	}
	return nil
}
