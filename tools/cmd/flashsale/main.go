// Command flashsale rehearses a flash sale against the stockguard HTTP API: many
// concurrent buyers order one SKU, then it checks from the outside that nothing was
// oversold and no buyer was told STOCK_OUT while stock remained.
//
//	go run ./tools/cmd/flashsale -url http://127.0.0.1:3000 -sku cup-01 -buyers 300 -concurrency 50
//
// Locally each buyer is told apart by the X-User-Id header (<prefix><i>). A deployed API
// takes the identity from the JWT's sub claim instead, so pass -token, or -token-file with
// one token per line (buyer i uses line i mod n): distinct buyers need distinct tokens.
//
// After the sale it can settle the orders (local stack only):
//
//	go run ./tools/cmd/flashsale -buyers 300 -concurrency 50 -sku cup-01 -pay-ratio 0.5
//
// pays for the first round(0.5 × orders) orders in buyer order through the local-only
// POST /_local/pay/{orderId} (a signed WeChat Pay notification sent through the real
// notify route), and, since -cancel-unpaid defaults to true whenever -pay-ratio > 0, has
// the other holders cancel through POST /orders/{orderId}/cancel so that their stock is
// back at once. It then checks that every pay answered 204 and reads back PAID, every
// cancel answered 200 and reads back CANCELLED, available = start − paid units (GET
// /skus), and on-hand = on-hand before the sale − paid units, read through the same API's
// merchant route GET /admin/skus/{skuId} as the local operator (so a stack on other ports
// needs only -url; an API that does not serve that route unsigned is refused before the
// sale, naming the flags). -cancel-unpaid=false leaves the unpaid orders to the payment
// timeout; -cancel-unpaid with -pay-ratio 0 cancels every order.
//
// -refund-ratio 0.2 then has an operator refund the first round(0.2 × paid) paid orders
// through the local stack's merchant API (POST /admin/orders/{orderId}/refund, restock),
// and checks that available and on-hand came back by exactly those units and that each
// refunded order reads REFUNDED within -refund-wait (the money step goes through the
// WeChat Pay stand-in).
//
// -report sale.html also writes the report as one self-contained HTML page for the
// shop's owner: one sentence first (sold N of M in T, the money taken and refunded,
// nothing oversold or the first thing that went wrong), the run's date, build and
// settings, the sale's and the settlement's figures with the refunds, pictures of
// orders/s over time, the latency histogram and available stock over time (read with
// GET /skus every 100 ms during the sale), and the verification lines. The text report
// opens with the same sentence.
//
// Exit status: 0 when every check passes (and for -h, which explains the run, every
// flag and examples), 1 when a check fails, 2 on a usage or setup error (bad flags,
// unknown SKU, unreachable server).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/stockguard/stockguard/tools/internal/flashsale"
)

// stockSamplePeriod is how often the SKU is read during the sale for the HTML report.
const stockSamplePeriod = 100 * time.Millisecond

// Exit codes.
const (
	exitPass  = 0
	exitFail  = 1
	exitSetup = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, runs the sale, writes the report to stdout and problems to stderr,
// and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, report, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err == nil {
		var rep *flashsale.Report
		rep, err = flashsale.Run(ctx, cfg, stdout)
		if rep != nil && report != "" {
			if werr := writeHTML(report, rep); werr != nil {
				fmt.Fprintf(stderr, "flashsale: %v\n", werr)
				return exitSetup
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "flashsale: %v\n", err)
		if errors.Is(err, errUsage) || errors.Is(err, flashsale.ErrInvalidConfig) {
			fmt.Fprint(stderr, "(go run ./tools/cmd/flashsale -h shows the usage)\n")
		}
	}
	return exitCode(err)
}

// writeHTML writes rep's HTML page to path.
func writeHTML(path string, rep *flashsale.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	err = rep.WriteHTML(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("report: %w", cerr)
	}
	return err
}

// exitCode maps Run's error to the exit status.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitPass
	case errors.Is(err, flashsale.ErrVerificationFailed):
		return exitFail
	}
	return exitSetup
}

// help is -h's text before the flags.
const help = `usage: go run ./tools/cmd/flashsale [flags]

Rehearses a flash sale against the stockguard HTTP API at -url and checks, from the
outside, that nothing was oversold and that no buyer was told STOCK_OUT while stock
remained:

  1. reads the SKU (GET /skus/{skuId}); it must exist and not be OFF_SALE;
  2. -buyers buyers, -concurrency of them at a time, each POST /orders for -qty units;
  3. reads the SKU and every order created back, and checks: orders created =
     min(stock / qty, buyers who competed); nothing oversold (available = stock - units
     held); SOLD_OUT once demand reached the stock; no STOCK_OUT provably false; no 5xx
     but 503 BUSY; every order reads back for its buyer with its one line;
  4. with -pay-ratio or -cancel-unpaid (the local stack only): the first
     round(ratio x orders) holders, in buyer order, pay through POST /_local/pay/{orderId};
     the others cancel; then available and on-hand must have moved by exactly the paid
     units. On-hand comes from the same API's merchant route GET /admin/skus/{skuId},
     unsigned as the local operator, so a stack on other ports needs only -url;
  5. with -refund-ratio: an operator refunds round(ratio x paid) paid orders (POST
     /admin/orders/{orderId}/refund, restock); their units come back, each order reads
     REFUNDED within -refund-wait.

It prints one sentence (sold N of M in T, the money taken and refunded, nothing oversold
or the first thing that went wrong), the answers by status and code, latency
percentiles (p50/p90/p99), orders/s and every check (-json: as JSON); -report also
writes it all as a self-contained HTML page with pictures.

Buyers: locally buyer i sends X-User-Id: <-user-prefix><i>. A deployed API (or a local
stack reached from another machine) knows buyers only by their token's sub claim, so
give one token per buyer (-token-file); one -token is one buyer.

Exit status: 0 every check passed, 1 a check failed, 2 a usage or setup error.

Flags:
`

// examples is -h's text after the flags.
const examples = `
Examples:
  go run ./tools/cmd/flashsale -buyers 300 -concurrency 50 -sku cup-01
  go run ./tools/cmd/flashsale -sku cup-01 -pay-ratio 0.7 -refund-ratio 0.2 -report sale.html
  go run ./tools/cmd/flashsale -url http://127.0.0.1:3001 -pay-ratio 0.5     # a local stack on other ports
  go run ./tools/cmd/flashsale -buyers 10000 -concurrency 64 -idempotency -json
  go run ./tools/cmd/flashsale -url https://abc123.execute-api.ap-east-1.amazonaws.com -sku cup-01 \
      -token-file tokens.txt -idempotency                               # a deployed API
`

// errUsage marks a wrong command line.
var errUsage = errors.New("usage")

// parseFlags turns the command line into a Config and the -report path ("" for none);
// -h writes the help to stdout and returns flag.ErrHelp.
func parseFlags(args []string, stdout io.Writer) (flashsale.Config, string, error) {
	cfg := flashsale.DefaultConfig()
	fs := flag.NewFlagSet("flashsale", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&cfg.BaseURL, "url", cfg.BaseURL, "API base URL")
	fs.StringVar(&cfg.SKU, "sku", cfg.SKU, "skuId every buyer orders")
	fs.IntVar(&cfg.Buyers, "buyers", cfg.Buyers, "number of buyers, one order each")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "buyers in flight at once")
	fs.IntVar(&cfg.Qty, "qty", cfg.Qty, "units per order (1-9999)")
	fs.StringVar(&cfg.UserPrefix, "user-prefix", cfg.UserPrefix, "buyer i sends X-User-Id: <prefix><i> (local runner)")
	fs.BoolVar(&cfg.SameUser, "same-user", false, "all buyers share one identity (hits the per-user limit and flatters the numbers)")
	token := fs.String("token", "", "bearer token for a deployed API (identity is its sub claim; one token = one buyer identity)")
	tokenFile := fs.String("token-file", "", "file with one bearer token per line; buyer i uses line i mod n")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "timeout per request")
	fs.BoolVar(&cfg.Idempotency, "idempotency", false, fmt.Sprintf("send a unique Idempotency-Key per buyer and retry transport errors and 5xx up to %d times with it", flashsale.MaxRetries))
	fs.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	report := fs.String("report", "", "also write the report to this file as a self-contained HTML page: the summary sentence, the date, build and settings, the figures with refunds, three pictures")
	fs.Float64Var(&cfg.PayRatio, "pay-ratio", 0, "share of order holders (0-1) who pay after the sale via POST /_local/pay/{orderId}: the first round(ratio x orders) in buyer order")
	fs.Float64Var(&cfg.RefundRatio, "refund-ratio", 0, "share of the paid orders (0-1) an operator refunds after settling via POST /admin/orders/{orderId}/refund (restock; local stack only): the first round(ratio x paid); on-hand and available must come back by exactly those units")
	fs.DurationVar(&cfg.RefundWait, "refund-wait", flashsale.DefaultRefundWait, "how long refunded orders may take to read REFUNDED")
	cancelUnpaid := fs.Bool("cancel-unpaid", false, "holders of unpaid orders cancel them after the payments (default true when -pay-ratio > 0; with -pay-ratio 0 it cancels every order)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, help)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fmt.Fprint(stdout, examples)
			return cfg, "", err
		}
		return cfg, "", fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return cfg, "", fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *report != "" {
		cfg.SampleEvery = stockSamplePeriod
	}
	cfg.CancelUnpaid = cfg.PayRatio > 0
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "cancel-unpaid" {
			cfg.CancelUnpaid = *cancelUnpaid
		}
	})
	tokens, err := readTokens(*token, *tokenFile)
	if err != nil {
		return cfg, "", err
	}
	cfg.Tokens = tokens
	return cfg, *report, cfg.Validate()
}

// readTokens returns the tokens of -token or -token-file (at most one may be set).
func readTokens(token, path string) ([]string, error) {
	switch {
	case token != "" && path != "":
		return nil, errors.New("set -token or -token-file, not both")
	case token != "":
		return []string{token}, nil
	case path == "":
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	tokens, err := flashsale.ReadTokens(f)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return tokens, nil
}
