package shipping

import (
	"testing"
	"time"
)

// WeChat's confirm time is kept unless it names none or one beyond the push's clock
// skew window ahead of ours (a signed push cannot vouch for a later one): then now.
func TestConfirmedAt_WeChatsTimeUnlessNoneOrAhead(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		unix int64
		want time.Time
	}{
		{now.Add(-time.Hour).Unix(), now.Add(-time.Hour)},
		{now.Add(4 * time.Minute).Unix(), now.Add(4 * time.Minute)},
		{0, now},
		{-5, now},
		{99999999999, now},
	} {
		if got := confirmedAt(c.unix, now); !got.Equal(c.want) {
			t.Errorf("confirmedAt(%d) = %v, want %v", c.unix, got, c.want)
		}
	}
}
