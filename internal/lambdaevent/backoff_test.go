package lambdaevent

import (
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

func TestBackoffAfter_DoublesPerReceiveWithinBounds(t *testing.T) {
	for _, c := range []struct {
		base     time.Duration
		receives int
		want     time.Duration
	}{
		{30 * time.Second, 1, 30 * time.Second},
		{30 * time.Second, 3, 2 * time.Minute},
		{0, 1, time.Second},
		{time.Hour, 20, MaxBackoff},
	} {
		if got := BackoffAfter(c.base, c.receives); got != c.want {
			t.Errorf("BackoffAfter(%v, %d) = %v, want %v", c.base, c.receives, got, c.want)
		}
	}
}

func TestReceives_ReadsApproximateReceiveCount(t *testing.T) {
	for attr, want := range map[string]int{"3": 3, "": 1, "x": 1, "0": 1} {
		m := events.SQSMessage{Attributes: map[string]string{"ApproximateReceiveCount": attr}}
		if got := Receives(m); got != want {
			t.Errorf("%q: %d, want %d", attr, got, want)
		}
	}
}
