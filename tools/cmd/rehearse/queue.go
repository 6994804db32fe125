package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/stockguard/stockguard/tools/internal/rehearse"
)

// queueArg is the first argument that plays a queued sale instead (rehearse.RunQueue).
const queueArg = "-queue"

// queueFlags defines the queued sale's flags on c, the outputs' on o, and -compare.
func queueFlags(c *rehearse.QueueConfig, o *outputs, compare *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("rehearse -queue", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.Template, "template", c.Template, "the SAM template the stack is wired from")
	fs.IntVar(&c.Buyers, "buyers", c.Buyers, "buyers, each joining the queue once")
	fs.IntVar(&c.Stock, "stock", c.Stock, "units of the one SKU on sale")
	fs.IntVar(&c.Shards, "shards", c.Shards, "stock shards (0: planned for every buyer arriving within -over), which set the admission rate")
	fs.IntVar(&c.Buckets, "buckets", c.Buckets, "arrival-time buckets of the fairness figure")
	fs.DurationVar(&c.Over, "over", c.Over, "buyers arrive uniformly over this from the sale's start")
	fs.DurationVar(&c.FairWindow, "fair-window", c.FairWindow, "the SKU's fair window (whole seconds; 0: none)")
	fs.Float64Var(&c.PayRatio, "pay-ratio", c.PayRatio, "share of orders paid; the others' holds run out and their units are admitted again")
	fs.DurationVar(&c.PayAfter, "pay-after", c.PayAfter, "how long after its order a buyer pays")
	fs.DurationVar(&c.PaymentTimeout, "payment-timeout", c.PaymentTimeout, "how long an unpaid order holds its unit")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the arrivals and fates")
	fs.BoolVar(&c.LinePolls, "line-polls", c.LinePolls, "buyers waiting with a position also read the line document (GET /skus/{skuId}/line) each second, as CDN hits")
	fs.Float64Var(&o.memoryLimitGiB, "memory-limit", 12, "soft limit of the Go runtime's memory in GiB (runtime/debug.SetMemoryLimit): garbage is collected when the heap has grown 400% or reaches this, whichever comes first (0: no limit)")
	fs.BoolVar(compare, "compare", *compare, "also play the same sale without a fair window, its fairness over the same span")
	fs.StringVar(&o.jsonPath, "json", "", "write the report(s) as JSON to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the sale to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile, taken once the sale has been played (before the tables are checked), to this file")
	fs.StringVar(&o.blockProfile, "blockprofile", "", "write a profile of where the sale's goroutines waited to this file")
	return fs
}

// runQueue parses the queued sale's flags (args after -queue), plays it (and the
// same sale without a fair window, with -compare), prints the reports and returns
// the exit status: 0 passed, 1 a check failed, 2 a usage or setup error.
func runQueue(args []string, stdout, stderr io.Writer) int {
	c, o, compare := rehearse.DefaultQueue, outputs{}, true
	fs := queueFlags(&c, &o, &compare)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, "usage: rehearse -queue [flags]\n\nPlays a sale of one SKU through its waiting room on a virtual clock: the real waiting-room\nhandlers, admitter, createOrder and payments against the embedded DynamoDB and its model.\nMore in the README, \"A queued sale\".\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "rehearse -queue: %v (rehearse -queue -h lists the flags)\n", err)
		return 2
	}
	if err := c.Check(); err != nil {
		fmt.Fprintln(stderr, "rehearse -queue:", err)
		return 2
	}
	if o.memoryLimitGiB > 0 {
		debug.SetMemoryLimit(int64(o.memoryLimitGiB * (1 << 30)))
	}
	stop, err := startProfiles(o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "rehearse -queue:", err)
		return 2
	}
	defer stop()
	if o.memProfile != "" {
		c.Played = func() { writeHeapProfile(o.memProfile, stderr) }
	}
	c.Progress = stderr
	sales := []rehearse.QueueConfig{c}
	if compare && c.FairWindow > 0 {
		plain := c
		plain.FairWindow, plain.FairnessSpan = 0, c.FairWindow
		sales = append(sales, plain)
	}
	return playQueued(sales, o, stdout, stderr)
}

// playQueued plays each sale in turn, prints each report and writes them all as one
// JSON array to o.jsonPath.
func playQueued(sales []rehearse.QueueConfig, o outputs, stdout, stderr io.Writer) int {
	code := 0
	var reports []*rehearse.QueueReport
	for _, c := range sales {
		started := time.Now()
		r, err := rehearse.RunQueue(context.Background(), c)
		if err != nil {
			fmt.Fprintln(stderr, "rehearse -queue:", err)
			return 2
		}
		r.WriteText(stdout)
		fmt.Fprintf(stdout, "wall time %s\n", time.Since(started).Round(time.Second))
		reports = append(reports, r)
		if !r.Passed() {
			code = 1
		}
	}
	if o.jsonPath != "" {
		if err := writeFile(o.jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(reports)
		}); err != nil {
			fmt.Fprintln(stderr, "rehearse -queue:", err)
			return 2
		}
	}
	return code
}
