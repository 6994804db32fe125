package inventory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestStatusCanBecome_FollowsTheStateMachine(t *testing.T) {
	all := []inventory.Status{inventory.StatusPending, inventory.StatusPaid, inventory.StatusCancelled,
		inventory.StatusRefundPending, inventory.StatusRefunding, inventory.StatusRefunded}
	allowed := map[[2]inventory.Status]bool{
		{inventory.StatusPending, inventory.StatusPaid}:            true,
		{inventory.StatusPending, inventory.StatusCancelled}:       true,
		{inventory.StatusCancelled, inventory.StatusPaid}:          true,
		{inventory.StatusCancelled, inventory.StatusRefundPending}: true,
		{inventory.StatusPaid, inventory.StatusRefunding}:          true,
		{inventory.StatusRefundPending, inventory.StatusRefunding}: true,
		{inventory.StatusRefunding, inventory.StatusRefunded}:      true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := from.CanBecome(to); got != allowed[[2]inventory.Status{from, to}] {
				t.Errorf("%s → %s: %v, want %v", from, to, got, !got)
			}
		}
	}
}

// A PENDING order is payable until it expires, and expired from then on; an order in
// any other status is neither.
func TestOrder_PendingIsPayableUntilItExpires(t *testing.T) {
	end := time.Date(2026, 11, 11, 0, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		status           inventory.Status
		now              time.Time
		expired, payable bool
	}{
		{inventory.StatusPending, end.Add(-time.Second), false, true},
		{inventory.StatusPending, end.Add(-time.Millisecond), false, true},
		{inventory.StatusPending, end, true, false},
		{inventory.StatusPending, end.Add(time.Hour), true, false},
		{inventory.StatusPaid, end.Add(-time.Minute), false, false},
		{inventory.StatusPaid, end.Add(time.Hour), false, false},
		{inventory.StatusCancelled, end.Add(-time.Minute), false, false},
		{inventory.StatusCancelled, end.Add(time.Hour), false, false},
		{inventory.StatusRefundPending, end.Add(-time.Minute), false, false},
	} {
		o := &inventory.Order{ID: "o-123456", Status: tc.status, ExpiresAt: end}
		if got := o.Expired(tc.now); got != tc.expired {
			t.Errorf("%s at %v: expired %v, want %v", tc.status, tc.now.Sub(end), got, tc.expired)
		}
		err := o.CheckPayable(tc.now)
		if (err == nil) != tc.payable || (err != nil && !errors.Is(err, inventory.ErrNotPayable)) {
			t.Errorf("%s at %v: %v, want payable %v", tc.status, tc.now.Sub(end), err, tc.payable)
		}
	}
}

func TestOrderCheckCancelled_RefusesOrdersThatWentAnotherWay(t *testing.T) {
	for _, tc := range []struct {
		status inventory.Status
		want   error
	}{
		{inventory.StatusCancelled, nil},
		{inventory.StatusPaid, inventory.ErrNotCancellable},
		{inventory.StatusRefundPending, inventory.ErrNotCancellable},
		{inventory.StatusRefunding, inventory.ErrNotCancellable},
		{inventory.StatusRefunded, inventory.ErrNotCancellable},
	} {
		err := (&inventory.Order{ID: "o1", Status: tc.status}).CheckCancelled()
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.status, err, tc.want)
		}
	}
}
