package inventory_test

import (
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestReusablePrepay_WhilePendingWithLifeLeft(t *testing.T) {
	at := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	last := at.Add(inventory.PrepayLifetime - inventory.PrepayMargin)
	for _, tc := range []struct {
		name   string
		status inventory.Status
		id     string
		at     *time.Time
		now    time.Time
		ok     bool
	}{
		{"fresh", inventory.StatusPending, "wx1", &at, at.Add(time.Minute), true},
		{"last moment", inventory.StatusPending, "wx1", &at, last, true},
		{"too little life left", inventory.StatusPending, "wx1", &at, last.Add(time.Second), false},
		{"from the future", inventory.StatusPending, "wx1", &at, at.Add(-time.Second), false},
		{"none stored", inventory.StatusPending, "", nil, at, false},
		{"no time stored", inventory.StatusPending, "wx1", nil, at, false},
		{"not pending", inventory.StatusCancelled, "wx1", &at, at.Add(time.Minute), false},
	} {
		o := &inventory.Order{Status: tc.status, PrepayID: tc.id, PrepayAt: tc.at}
		id, ok := o.ReusablePrepay(tc.now)
		if ok != tc.ok || (ok && id != tc.id) {
			t.Errorf("%s: %q %v, want %v", tc.name, id, ok, tc.ok)
		}
	}
}
