package stockctl

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Env is what a run takes from outside: output streams, the AWS configuration
// (config.LoadDefaultConfig in the command; local is true for a loopback endpoint,
// which needs no credentials), the HTTP client and the environment.
type Env struct {
	Stdout, Stderr io.Writer
	LoadConfig     func(ctx context.Context, region string, local bool) (aws.Config, error)
	HTTP           *http.Client
	Getenv         func(string) string
}

// Exit statuses of Run.
const (
	ExitOK    = 0 // the command succeeded
	ExitError = 1 // the API refused it, or it could not be sent
	ExitUsage = 2 // the command line is wrong
)

const usage = `usage: stockctl [--endpoint URL] [--region REGION] [-o table|json] COMMAND [ARGS]

  create --sku ID --name NAME --price FEN [--stock N] [--limit N] [--shards N] [--off-sale] [--at TIME]
  adjust SKU --id ADJUSTMENT_ID --delta N --reason TEXT   (delta > 0 restocks, < 0 writes off)
  reshard SKU --shards N
  on-sale SKU [--at TIME]      (TIME: RFC 3339 UTC, e.g. 2026-11-11T10:00:00Z)
  off-sale SKU
  list [--after CURSOR]
  get SKU
  ledger SKU [--after CURSOR]
  orders --status PENDING_OVERDUE|REFUND_PENDING|REFUNDING [--after CURSOR]
  orders ORDER_ID
  refund ORDER_ID --reason TEXT [--no-restock]   (PAID or REFUND_PENDING orders)
  reconcile [--latest]
  seed FILE                    (a JSON array of create bodies, e.g. examples/seed.json)
  plan --orders N --page-views N [--skus N] [--pay-ratio R]   (peaks per second, all SKUs)
  plan --sku ID:ORDERS:PAGEVIEWS ... [--pay-ratio R]          (each SKU's peaks)
                               sizes a sale without calling the API: shards per SKU,
                               what each index key and quota carries, what binds first,
                               what to set and ask AWS for, the cost per million orders

Every command but plan calls the API. The endpoint is --endpoint or STOCKCTL_ENDPOINT: the API's URL (sam deploy's ApiUrl
output) or the local stack's http://127.0.0.1:3000. Requests are signed with SigV4
(service execute-api) using the default AWS credential chain; to a local endpoint they
go unsigned when no credentials are found.
`

// errUsage marks a wrong command line.
var errUsage = errors.New("usage")

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// Run runs the command line args (without the program name) and returns the exit
// status; errors, usage errors included, go to env.Stderr as one line starting
// "stockctl: ", and -h or --help (before or after the command) prints the usage on
// env.Stdout.
func Run(ctx context.Context, args []string, env Env) int {
	err := run(ctx, args, env)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(env.Stdout, usage)
		return ExitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(env.Stderr, "stockctl: %v (stockctl -h shows the usage)\n", err)
		return ExitUsage
	}
	fmt.Fprintf(env.Stderr, "stockctl: %v\n", err)
	return ExitError
}

func run(ctx context.Context, args []string, env Env) error {
	global := flag.NewFlagSet("stockctl", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	endpoint := global.String("endpoint", env.Getenv("STOCKCTL_ENDPOINT"), "API URL")
	region := global.String("region", "", "signing region")
	output := global.String("o", "table", "table or json")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError("%v", err)
	}
	if *output != "table" && *output != "json" {
		return usageError("-o must be table or json")
	}
	if global.NArg() == 0 {
		return usageError("no command")
	}
	if global.Arg(0) == "plan" { // needs no API
		return planSale(env.Stdout, *output == "json", global.Args()[1:])
	}
	cmd, ok := commands[global.Arg(0)]
	if !ok {
		return usageError("unknown command %q", global.Arg(0))
	}
	if *endpoint == "" {
		return usageError("no endpoint: give --endpoint or set STOCKCTL_ENDPOINT")
	}
	c, err := newClient(ctx, env, *endpoint, *region)
	if err != nil {
		return err
	}
	return cmd(ctx, &call{client: c, out: env.Stdout, json: *output == "json"}, global.Args()[1:])
}

// localCredentialsWait bounds the credential lookup for a local endpoint, which needs
// none (the chain's last step asks the EC2 instance metadata service).
const localCredentialsWait = 2 * time.Second

// newClient builds the client for endpoint: region from --region, the endpoint's host
// or the AWS configuration (us-east-1 locally); credentials from the default chain.
func newClient(ctx context.Context, env Env, endpoint, region string) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, usageError("endpoint %q is not an http(s) URL", endpoint)
	}
	region = cmp.Or(region, RegionOf(u))
	cfg, err := env.LoadConfig(ctx, region, Loopback(u))
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	c := &Client{Endpoint: u, Region: cmp.Or(region, cfg.Region, "us-east-1"), Credentials: cfg.Credentials, HTTP: env.HTTP}
	if !Loopback(u) {
		if c.Credentials == nil {
			return nil, errors.New("no AWS credentials found (default credential chain)")
		}
		return c, nil
	}
	wait, cancel := context.WithTimeout(ctx, localCredentialsWait)
	defer cancel()
	if c.Credentials == nil {
		return c, nil
	}
	if _, err := c.Credentials.Retrieve(wait); err != nil {
		c.Credentials = nil // the local stack asks for no signature
	}
	return c, nil
}

// call is one command's client and output.
type call struct {
	client *Client
	out    io.Writer
	json   bool
}

// send sends the request (body marshalled as JSON when not nil) and prints the answer
// with table, or as JSON with -o json.
func (c *call) send(ctx context.Context, method, path string, body any, table func(io.Writer, []byte) error) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	answer, err := c.client.Do(ctx, method, path, data)
	if err != nil {
		return err
	}
	if c.json {
		_, err := fmt.Fprintf(c.out, "%s\n", strings.TrimSpace(string(answer)))
		return err
	}
	return table(c.out, answer)
}

// parse parses a command's flags, taking a leading positional argument (the SKU or
// order id) when want is not "" and the arguments start with one.
func parse(fs *flag.FlagSet, args []string, want string) (string, error) {
	fs.SetOutput(io.Discard)
	var pos string
	if want != "" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", usageError("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return "", usageError("%s: unexpected %q", fs.Name(), fs.Arg(0))
	}
	if want != "" && pos == "" {
		return "", usageError("%s needs %s", fs.Name(), want)
	}
	return pos, nil
}

// readFile is os.ReadFile, for seed.
var readFile = os.ReadFile
