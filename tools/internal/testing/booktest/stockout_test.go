package booktest_test

import (
	"testing"
	"time"

	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
)

func TestFalseStockOuts_CountsOnlyAnswersTheUnitsProveFalse(t *testing.T) {
	t0 := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := func(start, end int) booktest.Window { return booktest.Window{Start: at(start), End: at(end)} }
	// 2 units; taken at 10 and 20 ms; one given back by 50 ms.
	takes, gives := []time.Time{at(20), at(10)}, []time.Time{at(50)}
	for _, tc := range []struct {
		name string
		w    booktest.Window
		want int
	}{
		{"before any take: both units there", w(0, 5), 1},
		{"one taken before the answer: one left", w(12, 15), 1},
		{"both may be taken by the answer", w(12, 25), 0},
		{"answered after both were taken, before the release was surely done", w(40, 60), 0},
		{"started after the release was done: a unit was back", w(55, 60), 1},
	} {
		if got := booktest.FalseStockOuts(2, []booktest.Window{tc.w}, takes, gives); got != tc.want {
			t.Errorf("%s: %d false, want %d", tc.name, got, tc.want)
		}
	}
}
