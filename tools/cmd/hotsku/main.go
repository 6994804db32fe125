// Command hotsku runs the hot-SKU sweep: one SKU split over 1 to 64 shards, buyers
// arriving at several offered loads, each point run with both ways of reserving
// (today's one transaction per order, and a conditional update followed by the order
// writes) through the real createOrder code and the ddblimits model of DynamoDB's
// per-item limits. It prints a Markdown table of the points, the shard count at which
// each strategy first passes -target orders/s, and writes a PNG plot.
//
//	go run ./tools/cmd/hotsku -png hotsku.png
//
// Each point runs on a clock slowed down so that buyers arrive at about -real-rate per
// real second (but at least -min-slowdown times slower than real DynamoDB), and runs
// for max(-min-orders / offered, -duration) of model time; all
// numbers are reported at 1×. The lag column says how late the machine was at worst
// in starting a buyer (real time): large lags mean the point overloaded the machine,
// not the model.
//
// Exit status: 0 when every point passed its checks (oversold, false STOCK_OUT,
// unbacked, orphans all 0), 1 when one did not, 2 on a usage or setup error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/hotsku"
)

func main() {
	os.Exit(run())
}

// The flags; see the package comment.
var (
	template   = flag.String("template", "template.yaml", "the SAM template (tables, queue)")
	shardsFlag = flag.String("shards", "1,2,4,8,16,32,64", "shard counts")
	loadsFlag  = flag.String("loads", "1", "offered loads, as multiples of shards × 1,000 orders/s")
	strategies = flag.String("strategies", "transaction,conditional", "strategies to compare")
	duration   = flag.Duration("duration", 200*time.Millisecond, "shortest arrival window per point, at 1×")
	minOrders  = flag.Int("min-orders", 800, "fewest buyers per point (lengthens the window)")
	realRate   = flag.Float64("real-rate", 100, "buyers per real second each point aims at (sets its slowdown)")
	minSlow    = flag.Float64("min-slowdown", 20, "the least slowdown of any point: a busy machine's stalls shrink by it")
	rtt        = flag.Duration("rtt", 5*time.Millisecond, "DynamoDB round trip at 1×")
	hold       = flag.Duration("hold", 2*time.Millisecond, "how long a transaction holds its items at 1×")
	sqsRTT     = flag.Duration("sqs-rtt", 8*time.Millisecond, "SQS round trip at 1×")
	loseEvery  = flag.Int("lose-every", 0, "lose the answer of every nth applied DynamoDB write (HTTP 500 after the write; 0 = none)")
	noSQS      = flag.Bool("no-sqs", false, "send no close-order messages")
	target     = flag.Float64("target", 10000, "orders/s one SKU must pass")
	png        = flag.String("png", "hotsku.png", "where to write the plot (\"\" for none)")
	maxLag     = flag.Duration("max-lag", 2*time.Millisecond, "run a point again (twice at most, keeping the run with the least lag) when its arrivals ran later than this at 1×")
)

// run runs the sweep and returns the exit status (see the package comment).
func run() int {
	flag.Parse()
	shards, err := ints(*shardsFlag)
	var loads []float64
	if err == nil {
		loads, err = floats(*loadsFlag)
	}
	if err == nil {
		err = check(shards, strings.Split(*strategies, ","), *realRate, *minOrders, *loseEvery, *rtt, *hold, *sqsRTT)
	}
	if err == nil && flag.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (flags only; -h lists them)", flag.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hotsku:", err)
		return 2
	}
	ctx := context.Background()
	env, err := hotsku.NewEnv(ctx, *template, !*noSQS)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hotsku:", err)
		return 2
	}
	defer env.Close()
	var results []hotsku.Result
	for _, n := range shards {
		for _, load := range loads {
			offered := load * float64(n) * ddblimits.PartitionWriteUnits
			window := max(*duration, time.Duration(float64(*minOrders)/offered*float64(time.Second)))
			for _, s := range strings.Split(*strategies, ",") {
				r, err := runPoint(ctx, env, hotsku.Point{
					Strategy: hotsku.Strategy(s), Shards: n, Offered: offered, Duration: window,
					Model:        ddblimits.Config{RoundTrip: *rtt, TransactionHold: *hold, Slowdown: max(*minSlow, offered / *realRate), LoseAnswerEvery: *loseEvery},
					SQSRoundTrip: *sqsRTT, Seed: uint64(n),
				}, *maxLag)
				if err != nil {
					fmt.Fprintf(os.Stderr, "hotsku: %s, %d shards, %.0f/s: %v\n", s, n, offered, err)
					return 2
				}
				results = append(results, r)
				hotsku.WriteTable(os.Stderr, results[len(results)-1:]) // the row so far, in case the sweep is cut short
			}
		}
	}
	hotsku.WriteTable(os.Stdout, results)
	fmt.Println()
	printPasses(results, strings.Split(*strategies, ","), *target)
	return finish(results, *target, *png)
}

// finish plots results to png ("" for none) and returns the exit status: 2 when the
// plot cannot be written, 1 when any point oversold, answered a false STOCK_OUT or
// left an unbacked answer or orphan write, else 0.
func finish(results []hotsku.Result, target float64, png string) int {
	if png != "" {
		if err := hotsku.Plot(results, target, png); err != nil {
			fmt.Fprintln(os.Stderr, "hotsku:", err)
			return 2
		}
	}
	for _, r := range results {
		if r.Oversold+r.FalseStockOut+r.Unbacked+r.Orphans > 0 {
			return 1
		}
	}
	return 0
}

// runPoint runs p up to three times while its arrivals lag more than maxLag (at 1×)
// and keeps the run the machine kept up with best, logging each run to stderr.
func runPoint(ctx context.Context, env *hotsku.Env, p hotsku.Point, maxLag time.Duration) (hotsku.Result, error) {
	var r hotsku.Result
	for try := range 3 {
		got, err := hotsku.Run(ctx, env, p)
		if err != nil {
			return hotsku.Result{}, err
		}
		fmt.Fprintf(os.Stderr, "%s shards=%d offered=%.0f/s: %.0f orders/s, p50 %v, busy %d, failed %d, lag %v, DynamoDB %+v\n",
			p.Strategy, p.Shards, p.Offered, got.PerSecond, got.P50, got.Busy, got.Failed, got.Lag, got.ByOperation)
		if try == 0 || got.Lag < r.Lag {
			r = got
		}
		if r.Lag <= maxLag {
			break
		}
	}
	return r, nil
}

// printPasses prints, per strategy, the fewest shards at which it passed target
// orders/s.
func printPasses(results []hotsku.Result, strategies []string, target float64) {
	passed := map[hotsku.Strategy]int{}
	for _, r := range results {
		if r.PerSecond >= target && (passed[r.Strategy] == 0 || r.Shards < passed[r.Strategy]) {
			passed[r.Strategy] = r.Shards
		}
	}
	for _, s := range strategies {
		if n := passed[hotsku.Strategy(s)]; n > 0 {
			fmt.Printf("%s: passes %.0f orders/s from %d shards\n", s, target, n)
		} else {
			fmt.Printf("%s: never passes %.0f orders/s\n", s, target)
		}
	}
}

// check refuses the settings a sweep cannot run with, naming the flag: shard counts
// outside 1..inventory.MaxShards, unknown strategies, a non-positive -real-rate or
// -min-orders, and negative -lose-every or round trips.
func check(shards []int, strategies []string, realRate float64, minOrders, loseEvery int, durations ...time.Duration) error {
	for _, n := range shards {
		if n > inventory.MaxShards {
			return fmt.Errorf("-shards: %d is more than %d", n, inventory.MaxShards)
		}
	}
	for _, s := range strategies {
		if hotsku.Strategy(s) != hotsku.Transaction && hotsku.Strategy(s) != hotsku.Conditional {
			return fmt.Errorf("-strategies: unknown %q (transaction, conditional)", s)
		}
	}
	switch {
	case realRate <= 0:
		return fmt.Errorf("-real-rate must be more than 0")
	case minOrders < 1:
		return fmt.Errorf("-min-orders must be at least 1")
	case loseEvery < 0:
		return fmt.Errorf("-lose-every must be 0 (none) or more")
	}
	for _, d := range durations {
		if d < 0 {
			return fmt.Errorf("-rtt, -hold and -sqs-rtt must not be negative")
		}
	}
	return nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-shards: %q is not a whole number of at least 1", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || x <= 0 {
			return nil, fmt.Errorf("-loads: %q is not a number above 0", f)
		}
		out = append(out, x)
	}
	return out, nil
}
