// Command rehearse plays one whole flash sale through stockguard's real handlers, store
// and SDK clients against models of DynamoDB's, API Gateway's and Lambda's limits on a
// slowed clock (tools/internal/rehearse), prints a table and a verdict, writes a plot
// and, with -json, the whole report.
//
//	go run ./tools/cmd/rehearse -skus 10 -stock 1000 -buyers 20000 -over 10s
//
// Every rate and latency is reported at 1×. rehearse -h prints every flag with its
// default; by what it decides:
//
//   - the sale, what a merchant decides: -skus, -stock, -shards, -limit, -template
//     (the SAM template the stack is wired from);
//   - the buyers: -buyers, -over, -spike, -page-views, -think, -pay-ratio,
//     -cancel-ratio, -late-ratio, -pay-after, -payment-timeout, -retries, -seed;
//   - the page: -cloudfront (read through the model of the stack's CloudFront
//     distribution, the default, or from the API, each Lambda environment's own cache);
//   - the clock: -slowdown, -min-slowdown, -real-rate;
//   - the quotas AWS decides and the template's settings a sale overrides: -api-rate,
//     -api-burst (at most 5,000: AWS grants no more), -stage-rate, -stage-burst,
//     -lambda-concurrency, -cold-start, -reserved (reserved concurrency per function;
//     at least the MinValue of the template parameter it is set from, e.g.
//     CloseOrderReserved's 20),
//     -warm and -warm-close (createOrder and closeOrder environments warm at the
//     start: provisioned concurrency),
//     -partition-wcu, -table-wcu, -table-rcu, -warm-wcu, -warm-rcu, -index-warm-wcu
//     (a table or index starts cold, as a new on-demand one, unless pre-warmed),
//     -isolate-after (keys share the partitions a table's or index's warm throughput
//     implies until split for heat isolates a hot item: 0 puts every key on its own);
//   - WeChat Pay: -wechatpay-rtt (its merchant API's round trip, taken by the
//     stand-in on every call);
//   - the prices (US dollars, us-east-1; internal/stockctl/plan.Prices cites each
//     page): -usd-wru, -usd-rru, -usd-warm-wcu, -usd-warm-rcu (pre-warming),
//     -usd-lambda-requests, -usd-gb-second, -usd-provisioned-gb-second,
//     -usd-api-requests, -usd-sqs-requests, -usd-kms-rsa-requests,
//     -usd-kms-key-month, -usd-log-gb, -usd-xray-traces;
//   - the files written besides the table: -json (the whole report), -png (the plot),
//     -cpuprofile, -blockprofile.
//
// rehearse -queue [flags] plays a queued sale instead (rehearse.RunQueue): one SKU with
// its waiting room on, on a virtual clock, with and (-compare, the default) without a
// fair window; -queue -h lists its flags (-buyers, -stock, -shards, -over,
// -fair-window, -buckets, -pay-ratio, -pay-after, -payment-timeout, -seed, -template,
// -line-polls, -compare, -json, -cpuprofile, -blockprofile, -memprofile (the heap once
// the sale is played), -memory-limit (the Go runtime's soft memory limit, GiB: a
// million buyers' sale collects garbage against it rather than every 400 % of heap
// growth)). Exit status as below; its checks: nothing oversold, no tick admitting
// past what is available, no poll writing.
//
// Exit status: 0 when every check passed (nothing oversold, no false STOCK_OUT, every
// 201 backed, the books balanced, the final reconcile clean), 1 when one did not, 2
// on a usage or setup error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/rehearse"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args, plays the sale and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == queueArg {
		debug.SetGCPercent(400)
		return runQueue(args[1:], stdout, stderr)
	}
	c, o, code, proceed := parse(args, stdout, stderr)
	if !proceed {
		return code
	}
	// The sale allocates as fast as two cores can: collect garbage less often (memory
	// is not the limit).
	debug.SetGCPercent(400)
	stop, err := startProfiles(o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "rehearse:", err)
		return 2
	}
	defer stop()
	return rehearseAndReport(c, o, stdout, stderr)
}

// outputs are the files a rehearsal writes besides its table (empty: none).
type outputs struct {
	jsonPath, pngPath, cpuProfile, blockProfile, memProfile string
	// memoryLimitGiB is the queued sale's soft memory limit (0: none).
	memoryLimitGiB float64
}

// parse reads args into the sale and its outputs. proceed is false when the sale is
// not to be played: after -h (code 0, the usage on stdout) or on a bad flag or
// argument (code 2, one line on stderr).
func parse(args []string, stdout, stderr io.Writer) (c rehearse.Config, o outputs, code int, proceed bool) {
	c = rehearse.Defaults
	fs := newFlagSet(&c, &o)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, "usage: rehearse [flags]\n\nPlays a whole flash sale through the local stack in process, on a slowed clock, against\nmodels of DynamoDB's, API Gateway's and Lambda's limits; prints what refused first, the units\nper operation, the cost and a verdict (oversold, false STOCK_OUT, books, reconcile), and\nwrites a plot. More in go doc ./tools/cmd/rehearse and the README, \"A whole sale against every limit\".\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return c, o, 0, false
		}
		fmt.Fprintf(stderr, "rehearse: %v (rehearse -h lists the flags)\n", err)
		return c, o, 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rehearse: unexpected argument %q (flags only; -h lists them)\n", fs.Arg(0))
		return c, o, 2, false
	}
	if err := c.Check(); err != nil {
		fmt.Fprintln(stderr, "rehearse:", err)
		return c, o, 2, false
	}
	return c, o, 0, true
}

// newFlagSet defines every flag of rehearse on c and o (the package doc lists them
// all; its test checks it). Errors are not printed: parse prints them in one line.
func newFlagSet(c *rehearse.Config, o *outputs) *flag.FlagSet {
	fs := flag.NewFlagSet("rehearse", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	defineSaleFlags(fs, c)
	defineQuotaFlags(fs, c)
	definePriceFlags(fs, c)
	defineOutputFlags(fs, o)
	return fs
}

// defineSaleFlags defines the flags of what a merchant decides and how the buyers
// behave, and of the clock, defaulting to rehearse.Defaults.
func defineSaleFlags(fs *flag.FlagSet, c *rehearse.Config) {
	d := rehearse.Defaults
	fs.StringVar(&c.Template, "template", d.Template, "the SAM template")
	fs.IntVar(&c.SKUs, "skus", d.SKUs, "SKUs on sale")
	fs.IntVar(&c.Stock, "stock", d.Stock, "units per SKU")
	fs.IntVar(&c.Shards, "shards", 0, "shards per SKU (0: the planner sizes them from the spike's orders/s per SKU)")
	fs.IntVar(&c.LimitPerUser, "limit", d.LimitPerUser, "units one buyer may buy per SKU (0: no limit)")
	fs.IntVar(&c.Buyers, "buyers", d.Buyers, "buyers")
	fs.DurationVar(&c.Over, "over", d.Over, "arrival window, at 1×")
	fs.Float64Var(&c.Spike, "spike", d.Spike, "fraction of the buyers arriving in the window's first tenth")
	fs.IntVar(&c.PageViews, "page-views", d.PageViews, "page views (GET /skus/{skuId}) per buyer before buying (0: buy blind)")
	fs.DurationVar(&c.Think, "think", d.Think, "between a buyer's page views and retries, at 1×")
	fs.Float64Var(&c.PayRatio, "pay-ratio", d.PayRatio, "fraction of orders paid in time")
	fs.Float64Var(&c.CancelRatio, "cancel-ratio", d.CancelRatio, "fraction of orders cancelled")
	fs.Float64Var(&c.LateRatio, "late-ratio", d.LateRatio, "fraction of orders paid after their release")
	fs.DurationVar(&c.PayAfter, "pay-after", d.PayAfter, "mean delay from order to payment or cancel, at 1×")
	fs.DurationVar(&c.PaymentTimeout, "payment-timeout", d.PaymentTimeout, "how long an order stays PENDING, at 1×")
	fs.IntVar(&c.Retries, "retries", d.Retries, "retries of a request answered 429, 500 or 503")
	fs.Uint64Var(&c.Seed, "seed", d.Seed, "seed of the buyers")
	fs.Float64Var(&c.Slowdown, "slowdown", 0, "clock scale (0: chosen from -real-rate)")
	fs.Float64Var(&c.MinSlowdown, "min-slowdown", d.MinSlowdown, "least clock scale when chosen")
	fs.Float64Var(&c.RealRate, "real-rate", d.RealRate, "admitted requests per real second the chosen clock aims at")
}

// defineQuotaFlags defines the flags of the quotas AWS decides (API Gateway's,
// Lambda's, DynamoDB's) and of the template's settings a sale may override.
func defineQuotaFlags(fs *flag.FlagSet, c *rehearse.Config) {
	d := rehearse.Defaults
	fs.Float64Var(&c.Gateway.Rate, "api-rate", 0, "API Gateway account throttle, requests/s (0: the default 10,000)")
	fs.IntVar(&c.Gateway.Burst, "api-burst", 0, "API Gateway account burst, at most 5,000 (0: 5,000; AWS grants no more: \"Amazon API Gateway quotas\")")
	fs.IntVar(&c.StageRate, "stage-rate", 0, "the template's ApiThrottleRateLimit for this sale (0: the template's default)")
	fs.IntVar(&c.StageBurst, "stage-burst", 0, "the template's ApiThrottleBurstLimit for this sale (0: the template's default)")
	fs.IntVar(&c.Lambda.AccountConcurrency, "lambda-concurrency", 0, "Lambda account concurrency (0: the default 1,000)")
	fs.DurationVar(&c.Lambda.ColdStart, "cold-start", d.Lambda.ColdStart, "a new execution environment's initialisation, at 1× (an assumption)")
	fs.Func("reserved", "FUNCTION=N,…: reserved concurrency replacing the template's, e.g. CloseOrderFunction=600 (what stockctl plan advises; at least the MinValue of the template parameter it is set from, e.g. CloseOrderReserved's 20)", func(v string) error {
		return parseReserved(v, c)
	})
	fs.DurationVar(&c.WeChatPayRoundTrip, "wechatpay-rtt", d.WeChatPayRoundTrip, "one round trip of WeChat Pay's merchant API (the prepay's JSAPI order, a release's query and close), at 1× (an assumption: WeChat Pay publishes none)")
	fs.IntVar(&c.Warm, "warm", 0, "createOrder execution environments warm at the start (provisioned concurrency, the template's CreateOrderProvisioned; 0: cold)")
	fs.IntVar(&c.WarmClose, "warm-close", 0, "closeOrder execution environments warm at the start, for the prepays (the template's CloseOrderProvisioned; at most its reserved concurrency; 0: cold)")
	fs.BoolVar(&c.CloudFront, "cloudfront", d.CloudFront, "buyers read the page through CloudFront (template.yaml's PageDistribution: one cache honouring max-age=1 in front of GET /skus/{skuId}); false: from the API, each Lambda environment's own cache")
	fs.Float64Var(&c.Model.TableWriteUnits, "table-wcu", 0, "each table's write request units/s quota (0: DynamoDB's default 40,000)")
	fs.Float64Var(&c.Model.TableReadUnits, "table-rcu", 0, "each table's read request units/s quota (0: DynamoDB's default 40,000)")
	fs.Float64Var(&c.Model.WarmWriteUnits, "warm-wcu", ddblimits.NewTableWriteUnits, "each table's warm write throughput, units/s: a new on-demand table's 4,000, or what it was pre-warmed to (0: warm up to -table-wcu)")
	fs.Float64Var(&c.Model.WarmReadUnits, "warm-rcu", ddblimits.NewTableReadUnits, "each table's warm read throughput, units/s: a new on-demand table's 12,000, or what it was pre-warmed to (0: warm up to -table-rcu)")
	fs.Float64Var(&c.Model.IndexWarmWriteUnits, "index-warm-wcu", ddblimits.NewTableWriteUnits, "each global secondary index's warm write throughput, units/s: a new on-demand index's 4,000, or what it was pre-warmed to (the template's IndexWarmWriteUnits; 0: warm up to its quota)")
	fs.DurationVar(&c.Model.IsolateAfter, "isolate-after", ddblimits.DefaultIsolateAfter, "keys share the partitions their table's or index's warm throughput implies, and a hot item (over half its partition's units every second) gets a partition of its own after this long at 1× (an assumption: AWS states no time; an index key never); 0: every key on a partition of its own from the start")
	fs.Float64Var(&c.Model.WriteUnits, "partition-wcu", 0, "write units/s of one partition, item or index key (0: DynamoDB's 1,000)")
}

// parseReserved sets c.Reserved from -reserved's FUNCTION=N,… list, or returns an
// error quoting the first item that is not FUNCTION=N or names a function again.
func parseReserved(v string, c *rehearse.Config) error {
	c.Reserved = map[string]int{}
	for _, kv := range strings.Split(v, ",") {
		name, n, ok := strings.Cut(kv, "=")
		count, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil {
			return fmt.Errorf("%q is not FUNCTION=N", kv)
		}
		if _, again := c.Reserved[name]; again {
			return fmt.Errorf("%q: %s is given twice", kv, name)
		}
		c.Reserved[name] = count
	}
	return nil
}

// definePriceFlags defines a flag for each of the prices the cost is computed with,
// in US dollars (plan.Prices' table: its pages, us-east-1), defaulting to
// rehearse.Defaults'.
func definePriceFlags(fs *flag.FlagSet, c *rehearse.Config) {
	c.Prices = rehearse.Defaults.Prices
	for _, f := range c.Prices.Flags() {
		fs.Float64Var(f.Value, f.Name, *f.Value, f.Usage)
	}
}

// defineOutputFlags defines the flags naming the files written besides the table.
func defineOutputFlags(fs *flag.FlagSet, o *outputs) {
	fs.StringVar(&o.jsonPath, "json", "", "write the report as JSON to this file")
	fs.StringVar(&o.pngPath, "png", "rehearse.png", "write the plot to this file (\"\" for none)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the sale to this file")
	fs.StringVar(&o.blockProfile, "blockprofile", "", "write a profile of where the sale's goroutines waited on locks and channels to this file")
}

// startProfiles starts the CPU and block profiles o asks for and returns stop, which
// writes the block and mutex profiles (reporting a failure on stderr) and then stops
// the CPU profile. The error is that of starting the CPU profile.
func startProfiles(o outputs, stderr io.Writer) (stop func(), err error) {
	stopCPU := func() {}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			return nil, err
		}
		stopCPU = pprof.StopCPUProfile
	}
	if o.blockProfile == "" {
		return stopCPU, nil
	}
	runtime.SetBlockProfileRate(int(time.Millisecond))
	runtime.SetMutexProfileFraction(10)
	return func() {
		if err := writeFile(o.blockProfile, func(w io.Writer) error { return pprof.Lookup("block").WriteTo(w, 0) }); err != nil {
			fmt.Fprintln(stderr, "rehearse:", err)
		}
		if err := writeFile(o.blockProfile+".mutex", func(w io.Writer) error { return pprof.Lookup("mutex").WriteTo(w, 0) }); err != nil {
			fmt.Fprintln(stderr, "rehearse:", err)
		}
		stopCPU()
	}, nil
}

// writeHeapProfile writes the heap profile (live objects as of a garbage
// collection it runs first) to path, reporting a failure on stderr.
func writeHeapProfile(path string, stderr io.Writer) {
	runtime.GC()
	if err := writeFile(path, func(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) }); err != nil {
		fmt.Fprintln(stderr, "rehearse:", err)
	}
}

// rehearseAndReport plays the sale c, prints its table and wall time, writes the
// files o names and returns the exit status: 0 passed, 1 a check failed, 2 the sale
// could not be played or a file not written.
func rehearseAndReport(c rehearse.Config, o outputs, stdout, stderr io.Writer) int {
	started := time.Now()
	r, err := rehearse.Run(context.Background(), c)
	if err != nil {
		fmt.Fprintln(stderr, "rehearse:", err)
		return 2
	}
	r.WriteTable(stdout)
	fmt.Fprintf(stdout, "wall time %s\n", time.Since(started).Round(time.Second))
	if o.jsonPath != "" {
		if err := writeFile(o.jsonPath, r.WriteJSON); err != nil {
			fmt.Fprintln(stderr, "rehearse:", err)
			return 2
		}
	}
	if o.pngPath != "" {
		if err := r.Plot(o.pngPath); err != nil {
			fmt.Fprintln(stderr, "rehearse:", err)
			return 2
		}
	}
	if !r.Passed() {
		return 1
	}
	return 0
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
