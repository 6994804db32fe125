package stock

import (
	"testing"
	"time"
)

// A start finer than a millisecond rounds up, so the sale never opens early.
func TestParseStart_RoundsSubMillisecondStartsUp(t *testing.T) {
	for in, want := range map[string]string{
		"2026-11-11T10:00:00Z":           "2026-11-11T10:00:00Z",
		"2026-11-11T10:00:00.123Z":       "2026-11-11T10:00:00.123Z",
		"2026-11-11T10:00:00.123000001Z": "2026-11-11T10:00:00.124Z",
		"2026-11-11T10:00:00.999999999Z": "2026-11-11T10:00:01Z",
	} {
		got, err := parseStart(in)
		if err != nil || got.Format(time.RFC3339Nano) != want {
			t.Errorf("parseStart(%q) = %v, %v; want %s", in, got.Format(time.RFC3339Nano), err, want)
		}
	}
}
