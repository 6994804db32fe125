package flashsale

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// Timeline is what the sale looked like over time, for the figures of the HTML report.
// Times are seconds since the first order was sent.
type Timeline struct {
	// BinSeconds is the width of each throughput bin, seconds: the sale's wall time over
	// 40 bins, rounded up to at least 0.1 s.
	BinSeconds float64 `json:"binSeconds"`
	// OrdersPerSec[i] is the orders created (final answer 200/201) whose answer arrived
	// in bin i, per second of the bin (the last bin ends with the sale).
	OrdersPerSec []float64 `json:"ordersPerSec"`
	// LatenciesMs are the buyers' waits (Report.Latency's samples), ms, in buyer order.
	LatenciesMs []float64 `json:"latenciesMs"`
	// Reserved are the orders created so far, as (time, units reserved) steps, one per
	// order in the order the answers arrived.
	Reserved []StockPoint `json:"reserved"`
	// Available are the SKU's available units read with GET /skus/{skuId} every
	// Config.SampleEvery during the sale; empty when it is 0.
	Available []StockPoint `json:"available"`
}

// StockPoint is a number of units at a time, seconds since the sale began.
type StockPoint struct {
	AtSec float64 `json:"atSec"`
	Units int     `json:"units"`
}

// throughputBins is how many bins the orders/s figure has.
const throughputBins = 40

// newTimeline bins the outcomes of a sale that began at began and lasted wall.
func newTimeline(cfg Config, outcomes []outcome, began time.Time, wall time.Duration, available []StockPoint) *Timeline {
	secs := wall.Seconds()
	bin := max(secs/throughputBins, 0.1)
	t := &Timeline{BinSeconds: bin, Available: available}
	t.OrdersPerSec = make([]float64, max(int(math.Ceil(secs/bin)), 1))
	var done []float64
	for _, o := range outcomes {
		t.LatenciesMs = append(t.LatenciesMs, ms(o.latency()))
		if o.gotOrder() {
			at := o.final().received.Sub(began).Seconds()
			done = append(done, at)
			t.OrdersPerSec[min(int(at/bin), len(t.OrdersPerSec)-1)]++
		}
	}
	for i := range t.OrdersPerSec { // the last bin may be cut short by the end of the sale
		t.OrdersPerSec[i] /= max(min(bin, secs-float64(i)*bin), bin/10)
	}
	slices.Sort(done)
	for i, at := range done {
		t.Reserved = append(t.Reserved, StockPoint{AtSec: at, Units: (i + 1) * cfg.Qty})
	}
	return t
}

// sampleStock reads the SKU's available every cfg.SampleEvery from began until stop is
// called, and stop returns the reads that succeeded. With SampleEvery 0 it reads nothing.
func sampleStock(ctx context.Context, a *api, cfg Config, began time.Time) (stop func() []StockPoint) {
	if cfg.SampleEvery <= 0 {
		return func() []StockPoint { return nil }
	}
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg     sync.WaitGroup
		points []StockPoint
	)
	wg.Go(func() {
		tick := time.NewTicker(cfg.SampleEvery)
		defer tick.Stop()
		for {
			if v, err := a.readSKU(ctx, cfg.SKU); err == nil {
				points = append(points, StockPoint{AtSec: time.Since(began).Seconds(), Units: v.Available})
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return func() []StockPoint {
		cancel()
		wg.Wait()
		return points
	}
}
