package rehearse_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/rehearse"
)

// A queued sale of 2,000 buyers for 20 units, half of them within a 2 s fair window,
// every order paid: after every admitter tick the admissions that could still buy
// fit in what is available, nothing is oversold, no poll writes, every unit is paid
// and every buyer without an order is told SOLD_OUT. (A sale whose holds run out
// lasts a minute or more per round of released units, the sweep's schedule, 4
// admitter ticks a second of 128 index reads each: too long for CI; README, "A
// queued sale", shows one.)
//
// Its waiting buyers read the line document each second, as the mini-program does:
// every buyer without an order is told SOLD_OUT within the design's worst case (the
// admitter's tick 250 ms, the frontier cache 500 ms, the CDN's copy 1 s, the buyer's
// read 1 s: 2,750 ms), most of them by the line, whose origin fetches wrote nothing
// and came at most one a second. (One sale for both: each takes about a minute under
// -race.) Its hooks: Played is called once, and Progress gets a line at 0 s and every
// 10 s of the sale after.
func TestQueueSale_AdmitsNoMoreThanCanBeBoughtAndPollsWriteNothing(t *testing.T) {
	cfg := smallQueueSale(t)
	cfg.LinePolls = true
	played := 0
	var progress strings.Builder
	cfg.Played, cfg.Progress = func() { played++ }, &progress
	r := playQueueSale(t, cfg)
	checkQueueSale(t, cfg, r)
	if lines, want := strings.Count(progress.String(), "\n"), int(r.ModelSeconds/10)+1; played != 1 || lines != want {
		t.Errorf("Played called %d times, %d progress lines over %.1f s of sale; want 1 and %d", played, lines, r.ModelSeconds, want)
	}
	l := r.Line
	if l == nil || l.Told == 0 || l.FetchWriteUnits != 0 || l.Fetches == 0 || float64(l.Fetches) > r.ModelSeconds+1 || l.Reads < l.Told {
		t.Errorf("line: %+v over %.1f s of sale", l, r.ModelSeconds)
	}
	if r.SoldOut.MaxMs > 2750 {
		t.Errorf("told SOLD_OUT up to %.0f ms after the last unit, want at most 2,750", r.SoldOut.MaxMs)
	}
}

// smallQueueSale is a queued sale of 2,000 buyers for 20 units on one shard, half of
// them within a 2 s fair window, every order paid.
func smallQueueSale(t *testing.T) rehearse.QueueConfig {
	return rehearse.QueueConfig{
		Template: filepath.Join(testkit.ModuleRoot(t), "template.yaml"),
		Buyers:   2000, Stock: 20, Shards: 1, Buckets: 4,
		Over: 4 * time.Second, FairWindow: 2 * time.Second,
		PayRatio: 1, PayAfter: 2 * time.Second, PaymentTimeout: 20 * time.Second, Seed: 3,
	}
}

// playQueueSale plays cfg and returns its report (printed with -v).
func playQueueSale(t *testing.T, cfg rehearse.QueueConfig) *rehearse.QueueReport {
	t.Helper()
	r, err := rehearse.RunQueue(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		r.WriteText(os.Stdout)
	}
	return r
}

// checkQueueSale checks r exactly: the admissions, the tables, the polls' writes,
// every unit paid by one order each and every other buyer told SOLD_OUT.
func checkQueueSale(t *testing.T, cfg rehearse.QueueConfig, r *rehearse.QueueReport) {
	t.Helper()
	if r.Oversold != 0 || r.TicksOverAvailable != 0 || r.MaxAdmittedToPurchasable > 1 || r.FailedTicks != 0 || r.Ticks == 0 {
		t.Errorf("oversold %d, %d of %d ticks over available, max admitted/purchasable %v, %d failed ticks",
			r.Oversold, r.TicksOverAvailable, r.Ticks, r.MaxAdmittedToPurchasable, r.FailedTicks)
	}
	if r.PollWriteUnits != 0 || r.Polls == 0 {
		t.Errorf("%d polls wrote %v units", r.Polls, r.PollWriteUnits)
	}
	if r.Joins != cfg.Buyers || r.Paid != cfg.Stock || r.SoldOut.SellOutSeconds == nil {
		t.Errorf("%d joins, %d paid, sold out %v: want %d joins, %d paid, sold out", r.Joins, r.Paid, r.SoldOut.SellOutSeconds, cfg.Buyers, cfg.Stock)
	}
	if want := cfg.Buyers - r.Orders; r.SoldOut.Told != want || len(r.Other) != 0 {
		t.Errorf("%d buyers told SOLD_OUT, want every buyer without an order (%d); other: %v", r.SoldOut.Told, want, r.Other)
	}
	if r.Orders != cfg.Stock {
		t.Errorf("%d orders for %d units, every order paid", r.Orders, cfg.Stock)
	}
}
