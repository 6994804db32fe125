package rehearse_test

import "testing"

// The queued sale of TestQueueSale_AdmitsNoMoreThanCanBeBoughtAndPollsWriteNothing
// with its waiting buyers reading the line document each second: the same checks,
// and every buyer without an order is told SOLD_OUT within the design's worst case
// (the admitter's tick 250 ms, the frontier cache 500 ms, the CDN's copy 1 s, the
// buyer's read 1 s: 2,750 ms), most of them by the line, whose origin fetches wrote
// nothing and came at most one a second.
func TestQueueSale_TheLineTellsEveryWaitingBuyerSoldOut(t *testing.T) {
	cfg := smallQueueSale(t)
	cfg.LinePolls = true
	r := playQueueSale(t, cfg)
	checkQueueSale(t, cfg, r)
	l := r.Line
	if l == nil || l.Told == 0 || l.FetchWriteUnits != 0 || l.Fetches == 0 || float64(l.Fetches) > r.ModelSeconds+1 || l.Reads < l.Told {
		t.Errorf("line: %+v over %.1f s of sale", l, r.ModelSeconds)
	}
	if r.SoldOut.MaxMs > 2750 {
		t.Errorf("told SOLD_OUT up to %.0f ms after the last unit, want at most 2,750", r.SoldOut.MaxMs)
	}
}
