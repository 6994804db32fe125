package rehearse

import (
	"testing"
	"time"
)

// An SQS event source starts with 5 batches at once and adds one every 200 ms while
// messages are available (300 a minute), up to its maximum concurrency, or 1,000
// without one ("Configuring scaling behavior for SQS event source mappings"): the
// close-order queue's 10 are all polling after a second of traffic, not at once.
func TestSQSPollers_StartAtFiveAndAdd300AMinute(t *testing.T) {
	for _, tc := range []struct {
		busy time.Duration
		max  int
		want int
	}{
		{0, 10, 5},
		{199 * time.Millisecond, 10, 5},
		{200 * time.Millisecond, 10, 6},
		{time.Second, 10, 10},
		{time.Minute, 10, 10},
		{0, 2, 2},
		{time.Minute, 0, 305},
		{10 * time.Minute, 0, 1000},
		{time.Minute, 2000, 305},
	} {
		if got := sqsPollers(tc.busy, tc.max); got != tc.want {
			t.Errorf("after %v with messages, maximum %d: %d batches at once; want %d", tc.busy, tc.max, got, tc.want)
		}
	}
}
