package rehearse

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// Lambda's SQS event source scales as "Configuring scaling behavior for SQS event
// source mappings" (Lambda Developer Guide) says: when messages are available it
// processes sqsStartBatches batches at once, and while messages are still available it
// adds up to sqsAddPerMinute more a minute, up to the mapping's MaximumConcurrency, or
// sqsMaxBatches without one.
const (
	sqsStartBatches = 5
	sqsAddPerMinute = 300
	sqsMaxBatches   = 1000
)

// sqsPollers is how many batches an SQS event source of maxConcurrency (0: unset)
// processes at once after its queue has had messages for busy, at 1×: 5 (or fewer
// when the maximum is lower), and one more every 200 ms.
func sqsPollers(busy time.Duration, maxConcurrency int) int {
	if maxConcurrency <= 0 {
		maxConcurrency = sqsMaxBatches
	}
	return min(sqsStartBatches+int(busy/(time.Minute/sqsAddPerMinute)), maxConcurrency)
}

// pollScaled drains one SQS event source (cfg) as Lambda does, with sqsPollers'
// pollers: it starts the first ones now, and every 200 ms of the model's clock in
// which a batch reached the function (messages were available) counts toward the
// next, until ctx is done or the maximum runs. Scaling down is not modeled.
func (s *sale) pollScaled(ctx context.Context, wg *sync.WaitGroup, cfg local.PollerConfig, maxConcurrency int) {
	var active atomic.Bool
	h := cfg.Handler
	cfg.Handler = invokeFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		active.Store(true)
		return h.Invoke(ctx, payload)
	})
	started := 0
	startUpTo := func(n int) {
		for ; started < n; started++ {
			wg.Go(func() { local.Poll(ctx, cfg) })
		}
	}
	startUpTo(sqsPollers(0, maxConcurrency))
	most := sqsPollers(time.Duration(1<<62), maxConcurrency)
	if started >= most {
		return
	}
	wg.Go(func() {
		const step = time.Minute / sqsAddPerMinute
		var busy time.Duration
		for started < most {
			if clock.Sleep(ctx, s.real(step)) != nil {
				return
			}
			if active.Swap(false) {
				busy += step
			}
			startUpTo(sqsPollers(busy, maxConcurrency))
		}
	})
}
