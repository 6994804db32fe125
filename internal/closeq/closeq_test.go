package closeq_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/closeq"
)

func TestDelay_RoundsUpAndCapsAtSQSMaximum(t *testing.T) {
	now := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		left time.Duration
		want int32
	}{
		{-time.Hour, 0},
		{0, 0},
		{time.Nanosecond, 1},
		{time.Second, 1},
		{time.Second + time.Millisecond, 2},
		{3 * time.Second, 3},
		{899*time.Second + time.Millisecond, 900},
		{900 * time.Second, 900},
		{35 * time.Minute, 900},
	} {
		if got := closeq.Delay(now, now.Add(tc.left)); got != tc.want {
			t.Errorf("Delay with %v left = %d, want %d", tc.left, got, tc.want)
		}
	}
}

func TestDecode_AcceptsOnlyCloseMessages(t *testing.T) {
	good := `{"orderId":"0193a1b2c3d4e5f60718293a4b5c6d7e","expiresAt":"2026-11-11T00:15:00Z"}`
	m, err := closeq.Decode(good)
	if err != nil || m.OrderID != "0193a1b2c3d4e5f60718293a4b5c6d7e" || !m.ExpiresAt.Equal(time.Date(2026, 11, 11, 0, 15, 0, 0, time.UTC)) {
		t.Fatalf("Decode(%s) = %+v, %v", good, m, err)
	}
	for _, bad := range []string{
		``, `null`, `[]`, `{}`, `not json`,
		`{"orderId":"0193a1b2c3d4e5f60718293a4b5c6d7e"}`,
		`{"orderId":"limit#cup#u1","expiresAt":"2026-11-11T00:15:00Z"}`,
		`{"orderId":"abc","expiresAt":"2026-11-11T00:15:00Z"}`,
		`{"orderId":"0193a1b2c3d4e5f60718293a4b5c6d7e","expiresAt":"yesterday"}`,
		`{"orderId":7,"expiresAt":"2026-11-11T00:15:00Z"}`,
	} {
		if _, err := closeq.Decode(bad); !errors.Is(err, closeq.ErrMalformed) {
			t.Errorf("Decode(%q) err = %v, want ErrMalformed", bad, err)
		}
	}
	// A hostile message must not make a hostile log line.
	huge := `{"orderId":"` + strings.Repeat("A", 300_000) + `","expiresAt":"2026-11-11T00:15:00Z"}`
	for _, body := range []string{huge, huge[:200_000]} {
		if _, err := closeq.Decode(body); err == nil || len(err.Error()) > 300 {
			t.Errorf("Decode of a %d-byte body: error of %d bytes, want a short one", len(body), len(fmt.Sprint(err)))
		}
	}
}
