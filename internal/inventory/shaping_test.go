package inventory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

func TestShaping_WindowsAreFixedMinutes(t *testing.T) {
	s := inventory.Shaping{PerMinute: 5}
	at := time.Date(2026, 11, 11, 0, 0, 42, 500_000_000, time.UTC)
	start, end := s.Window(at)
	if !start.Equal(time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)) || end.Sub(start) != inventory.ShapingWindow {
		t.Errorf("window of %v: %v-%v", at, start, end)
	}
	err := s.Refuse(at, "cup")
	var rl *inventory.RateLimitedError
	if !errors.As(err, &rl) || !errors.Is(err, inventory.ErrRateLimited) || rl.SKU != "cup" || rl.RetryAfter != 17500*time.Millisecond {
		t.Errorf("Refuse = %#v, want cup, 17.5s", err)
	}
}

func TestShaping_Validate(t *testing.T) {
	for _, tc := range []struct {
		per int
		ok  bool
		on  bool
	}{{-1, false, false}, {0, true, false}, {1, true, true}, {inventory.MaxShapingPerMinute, true, true}, {inventory.MaxShapingPerMinute + 1, false, true}} {
		s := inventory.Shaping{PerMinute: tc.per}
		if err := s.Validate(); (err == nil) != tc.ok || err != nil && !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("Validate(%d) = %v, want ok %v", tc.per, err, tc.ok)
		}
		if s.On() != tc.on {
			t.Errorf("On(%d) = %v", tc.per, s.On())
		}
	}
}
