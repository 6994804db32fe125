package stockctl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go"
)

// Env is what a run takes from outside: output streams, the AWS configuration
// (config.LoadDefaultConfig in the command, with the ConfigOptions of the command
// line), a stack's outputs for --stack (nil: --stack is refused), the HTTP client,
// the environment and the build's version line (buildinfo.String) for --version.
type Env struct {
	Stdout, Stderr io.Writer
	LoadConfig     func(ctx context.Context, opts ConfigOptions) (aws.Config, error)
	StackOutputs   StackOutputsFunc
	HTTP           *http.Client
	Getenv         func(string) string
	Version        string
}

// Exit statuses of Run.
const (
	ExitOK = 0 // the command succeeded
	// ExitError: the API refused it or failed (a 4xx or 5xx), or it could not be
	// sent; for --stack, CloudFormation refused or failed DescribeStacks (it answered:
	// a 5xx, or an answer that cannot be read).
	ExitError = 1
	ExitUsage = 2 // the command line is wrong
	// ExitIncomplete: the API took the command but the change is not complete yet
	// (a reshard whose shards past the target still hold reserved units): run it
	// again once the orders holding them are paid or released.
	ExitIncomplete = 3
	// ExitDifferences: reconcile's report shows differences or refund problems: the
	// books need a look (RUNBOOK.md, ReconcileDifferencesAlarm).
	ExitDifferences = 4
	// ExitUnreachable: no answer came from the endpoint, from CloudFormation for
	// --stack, or from the AWS service giving a role profile its credentials (STS)
	// (an *UnreachableError: connection refused, no such host, timed out).
	ExitUnreachable = 5
)

// globalHelp is what the usage says of the flags before the command and the endpoint.
const globalHelp = `Global flags, before or after the command:
  --endpoint URL   the API (default: $STOCKCTL_ENDPOINT): sam deploy's ApiUrl output, or the
                   local stack's http://127.0.0.1:3000
  --stack NAME     the API of the deployed CloudFormation stack NAME (its ApiUrl output),
                   instead of --endpoint
  --region REGION  the signing region (default: the endpoint's, else the AWS configuration's;
                   needed for a custom domain when the configuration names none)
  --profile NAME   the AWS shared-config profile to sign with (default: $AWS_PROFILE)
  -o table|json    a table for people (default) or the route's JSON for scripts
  --version        the version of this stockctl (last: nothing may follow it)

Requests are signed with SigV4 (service execute-api) using the default AWS credential
chain; to a local endpoint (127.0.0.1, ::1, localhost) they go unsigned, naming
X-Operator-Id: local-operator, when no credentials are found. Exit status: 0 done, 1 the
API (or API Gateway) refused or failed (for --stack, CloudFormation too), 2 a wrong
command line, 3 taken but not complete (reshard: run it again later), 4 reconcile found
differences, 5 the endpoint (or, for --stack, CloudFormation; for a role profile, STS)
could not be reached (connection refused, no such host, timed out).
`

// writeUsage writes stockctl's usage: every command with its arguments.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "usage: stockctl [--endpoint URL | --stack NAME] [--region REGION] [--profile NAME] [-o table|json] COMMAND [ARGS]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.args)
	}
	fmt.Fprint(w, "\nstockctl COMMAND -h shows what a command does, its flags and an example.\n\n", globalHelp)
}

// writeCommandUsage writes one command's usage: how it is called, what it does, its
// flags (fs, the command's flag set) and an example.
func writeCommandUsage(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: stockctl [global flags] %s %s\n\n%s\n", c.name, c.args, c.about)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags (-name or --name):\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\nExample:\n  %s\n\n%s", c.example, globalHelp)
}

// helpRequest is the error of a command line asking for a command's usage: fs is the
// command's flag set.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested for " + h.fs.Name() }

// inertError is an error whose message is escaped (escaped): its invisible
// characters, as the operator gave them, are shown as escapes.
type inertError struct{ error }

func (e inertError) Error() string { return escaped(e.error.Error()) }
func (e inertError) Unwrap() error { return e.error }

// errUsage marks a wrong command line.
var errUsage = errors.New("usage")

// errIncomplete is a command the API took whose change is not complete yet;
// errDifferences a reconcile report that shows differences.
var (
	errIncomplete  = errors.New("not complete")
	errDifferences = errors.New("the books differ")
)

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// Run runs the command line args (without the program name) and returns the exit
// status; errors, usage errors included, go to env.Stderr as one line starting
// "stockctl: ", their control, format and separator characters escaped (escaped). -h or --help before the command prints the usage on env.Stdout, and
// after a command that command's usage (what it does, its flags, an example); neither
// needs an endpoint.
func Run(ctx context.Context, args []string, env Env) int {
	err := run(ctx, args, env)
	if err != nil && !errors.As(err, new(*helpRequest)) {
		err = inertError{err}
	}
	var help *helpRequest
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &help):
		c, _ := lookup(help.fs.Name())
		writeCommandUsage(env.Stdout, c, help.fs)
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		writeUsage(env.Stdout)
		return ExitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(env.Stderr, "stockctl: %v (stockctl -h shows the usage)\n", err)
		return ExitUsage
	case errors.Is(err, errIncomplete):
		fmt.Fprintf(env.Stderr, "stockctl: %v\n", err)
		return ExitIncomplete
	case errors.Is(err, errDifferences):
		fmt.Fprintf(env.Stderr, "stockctl: %v\n", err)
		return ExitDifferences
	case errors.As(err, new(*UnreachableError)):
		fmt.Fprintf(env.Stderr, "stockctl: %v\n", err)
		return ExitUnreachable
	}
	fmt.Fprintf(env.Stderr, "stockctl: %v\n", err)
	return ExitError
}

func run(ctx context.Context, args []string, env Env) error {
	g, rest, err := splitGlobals(args, env.Getenv("STOCKCTL_ENDPOINT"))
	switch {
	case err != nil:
		return err
	case g.version:
		_, err := fmt.Fprintln(env.Stdout, cmp.Or(env.Version, "stockctl unknown"))
		return err
	case g.help:
		return flag.ErrHelp
	case g.output != "table" && g.output != "json":
		return usageError("-o must be table or json")
	case len(rest) == 0:
		return usageError("no command")
	case strings.HasPrefix(rest[0], "-"):
		return usageError("flag provided but not defined: %s", rest[0])
	}
	cmd, ok := lookup(rest[0])
	if !ok {
		return usageError("unknown command %q", rest[0])
	}
	connect := func() (*Client, error) {
		switch {
		case g.stack != "" && g.endpoint != "" && !slices.ContainsFunc(args, isEndpointFlag):
			// STOCKCTL_ENDPOINT is set, --stack given: the flag wins.
		case g.stack != "" && g.endpoint != "":
			return nil, usageError("give --endpoint or --stack, not both")
		case g.endpoint == "" && g.stack == "":
			return nil, usageError("no endpoint: give --endpoint or --stack, or set STOCKCTL_ENDPOINT")
		}
		if g.stack != "" {
			if g.endpoint, err = stackEndpoint(ctx, env, g); err != nil {
				return nil, err
			}
		}
		return newClient(ctx, env, g)
	}
	return cmd.run(ctx, &call{connect: connect, out: env.Stdout, json: g.output == "json"}, rest[1:])
}

// isEndpointFlag reports whether a is the --endpoint flag (any of its forms).
func isEndpointFlag(a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return strings.HasPrefix(a, "-") && name == "endpoint"
}

// localCredentialsWait bounds the credential lookup for a local endpoint, which needs
// none (the chain's last step asks the EC2 instance metadata service).
const localCredentialsWait = 2 * time.Second

// localRegion is the signing region of a local endpoint whose region is given nowhere:
// the local stack checks no signature.
const localRegion = "us-east-1"

// newClient builds the client for g's endpoint: region from --region, the endpoint's
// host or the AWS configuration (localRegion locally; elsewhere none is a usage error,
// said before anything is sent, as API Gateway would refuse a request signed for
// another region); credentials from the default chain, of --profile when given: to a
// local endpoint unsigned when none are found, unless --profile names the profile.
func newClient(ctx context.Context, env Env, g globals) (*Client, error) {
	if fault := endpointFault(g.endpoint); fault != "" {
		return nil, usageError("endpoint %q %s", shownURL(g.endpoint), fault)
	}
	u, _ := url.Parse(g.endpoint)
	region, from := cmp.Or(g.region, RegionOf(u)), "the region the endpoint's host names," // --region is checked already
	cfg, err := loadConfig(ctx, env, g, ConfigOptions{Region: region, Profile: g.profile, Local: Loopback(u)})
	if err != nil {
		return nil, err
	}
	if region == "" {
		region, from = cfg.Region, "the region from AWS_REGION or the profile,"
	}
	switch {
	case region == "" && Loopback(u):
		region = localRegion
	case region == "":
		return nil, usageError("no AWS region to sign for: the endpoint's host %s names none and the AWS configuration has none; give --region REGION, or set the AWS configuration's region (AWS_REGION, or region in the profile in ~/.aws/config)", u.Hostname())
	}
	if err := checkRegion(region, from); err != nil { // whatever the endpoint: the region is signed for, and put in a header
		return nil, err
	}
	c := &Client{Endpoint: u, Region: region, Credentials: cfg.Credentials, HTTP: env.HTTP}
	if !Loopback(u) || g.profile != "" { // a profile named on the command line must give credentials, locally too
		// said here, where the profile is known, not at the first request's signing
		if err := credentialsFailure(ctx, c.Credentials, g.profileName(env)); err != nil {
			return nil, err
		}
		return c, nil
	}
	wait, cancel := context.WithTimeout(ctx, localCredentialsWait)
	defer cancel()
	if credentialsFailure(wait, c.Credentials, "") != nil {
		c.Credentials = nil // the local stack asks for no signature
	}
	return c, nil
}

// endpointFault says what makes s no endpoint stockctl sends to, "" when nothing
// does: it is not an http or https URL with a host and, if it names one, a TCP port
// (1-65535: url.Parse takes any digits); it holds a user or password (Go's client
// would send them as Basic authorization, unasked: stockctl signs with AWS
// credentials); or it has a query or fragment, which no request would carry (each
// request's URL is the endpoint's path and the route's).
func endpointFault(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "is not an http(s) URL"
	}
	port, err := strconv.Atoi(u.Port())
	switch {
	case u.Port() != "" && (err != nil || port < 1 || port > 65535):
		return "is not an http(s) URL"
	case u.User != nil:
		return "holds a user or password (user:password@): credentials do not belong in the URL; stockctl signs with AWS credentials (--profile, or the default chain)"
	case strings.ContainsAny(s, "?#"):
		return "has a query or fragment (?… or #…), which no request would carry: give the API's URL without it"
	}
	return ""
}

// shownURL is s, an endpoint as given, to quote in a message: what stands between
// "://" (or a leading "//") and the last "@" (a user and password) as xxxxx, and what follows the first
// "?" or "#" (a query or fragment, which may hold a token) as "…". It is cut by
// hand, not parsed, so that a URL url.Parse refuses shows no password either.
func shownURL(s string) string {
	head, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 {
		head, rest = s[:i+3], s[i+3:]
	} else if strings.HasPrefix(s, "//") { // a Location without a scheme: another host all the same
		head, rest = "//", s[2:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "xxxxx" + rest[at:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i+1] + "…"
	}
	return head + rest
}

// credentialsFailure is nil when p (nil: no credentials) gives credentials now, else
// what the operator reads: an *UnreachableError when an AWS service that gives them
// did not answer (STS for a role profile, IAM Identity Center for an SSO one: a
// smithy.OperationError whose cause netFailure names), else credentialsProblem for
// profile. The EC2 instance metadata service, the default chain's last resort, not
// answering off EC2 is no credentials found.
func credentialsFailure(ctx context.Context, p aws.CredentialsProvider, profile string) error {
	if p == nil {
		return credentialsProblem(profile, false)
	}
	_, err := p.Retrieve(ctx)
	var op *smithy.OperationError
	switch kind := netFailure(err); {
	case err == nil:
		return nil
	case kind != "" && errors.As(err, &op) && op.ServiceID != imds.ServiceID:
		of := "the AWS credentials"
		if profile != "" {
			of = fmt.Sprintf("the AWS credentials of profile %q", profile)
		}
		return &UnreachableError{Endpoint: op.ServiceID + " for " + of, Reason: kind}
	}
	return credentialsProblem(profile, false)
}

// call is one command's client, made when the command first sends (its command line
// is checked, and its usage shown, without one), and output.
type call struct {
	connect func() (*Client, error)
	client  *Client
	out     io.Writer
	json    bool
	answer  []byte // the last answer's body
}

// send sends the request (body marshalled as JSON when not nil) and prints the answer
// (show) with table, or as JSON with -o json; an answer that is not the route's JSON
// (errUnexpected) is said with the method and path, without its query, and its status;
// to a change, that the API took it (tookChange).
func (c *call) send(ctx context.Context, method, path string, body any, table func(io.Writer, []byte) error) error {
	if err := checkSegments(path); err != nil {
		return err
	}
	if c.client == nil {
		var err error
		if c.client, err = c.connect(); err != nil {
			return err
		}
	}
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	status, answer, err := c.client.Do(ctx, method, path, data)
	if err != nil {
		return err
	}
	c.answer = answer
	if err = c.show(answer, table); errors.Is(err, errUnexpected) || errors.Is(err, errOtherID) { // named as the API's refusals are: the path, not its query
		route, _, _ := strings.Cut(path, "?")
		return fmt.Errorf("%s %s: %d %s: %w%s", method, route, status, statusText(status), err, tookChange(method, status))
	}
	return err
}

// show prints answer with table, or as JSON with -o json, only once the whole answer
// is read as the table reads it (table's error, e.g. errUnexpected, for a field of the
// wrong type, with or without -o json): nothing of an answer refused is printed.
func (c *call) show(answer []byte, table func(io.Writer, []byte) error) error {
	var shown bytes.Buffer
	err := table(&shown, answer)
	if err == nil && c.json {
		var out []byte
		out, err = terminalJSON(answer)
		shown.Reset()
		shown.Write(append(out, '\n'))
	}
	if err != nil {
		return err
	}
	_, err = c.out.Write(shown.Bytes())
	return err
}

// checkSegments refuses a route's path (ids escaped into it, with query) holding a
// segment "." or "..": an order, refund, after-sale or shipment id given so would
// name no segment of its own, a URL resolves it away (RFC 3986, section 5.2.4), and
// the request would reach another route. A usage error quoting it, before anything
// is sent.
func checkSegments(path string) error {
	route, _, _ := strings.Cut(path, "?")
	for _, seg := range strings.Split(route, "/") {
		if seg == "." || seg == ".." {
			return usageError("%q is no id: \".\" and \"..\" name no path segment (a URL resolves them away)", seg)
		}
	}
	return nil
}

// parse parses a command's flags, taking one positional argument (the SKU or order
// id) when want is not "": before the flags, after them, or after "--".
func parse(fs *flag.FlagSet, args []string, want string) (string, error) {
	fs.SetOutput(io.Discard)
	var pos string
	if want != "" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = args[0], args[1:]
	}
	if err := parseOnce(fs, args); err != nil {
		return "", err
	}
	rest := fs.Args()
	if want != "" && pos == "" && len(rest) > 0 { // after the flags, or after "--" (an id starting with "-")
		pos, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", usageError("%s: unexpected %q", fs.Name(), rest[0])
	}
	if want != "" && pos == "" {
		return "", usageError("%s needs %s", fs.Name(), want)
	}
	return pos, nil
}

// repeated is a flag a command line may give again and again (--line, --item, plan's
// --sku), each value handed to the function; parse refuses any other flag given twice.
type repeated func(string) error

func (r repeated) Set(v string) error { return r(v) }
func (repeated) String() string       { return "" }

// single counts the values a flag that takes one is given, and takes a number only in
// decimal.
type single struct {
	flag.Value
	n int
}

// errNotDecimal is a number flag's value not written in decimal, as people write
// numbers: Go's parsers also take +5, 1_000, 0x10, 0o17, 0b1 and 0x1p4, and the flag
// package's integers read 0100 as octal 64.
var errNotDecimal = errors.New("not a decimal number")

// decimalInt reads v, an integer of bits bits, in decimal: digits, after a '-' for a
// negative one, a leading zero no octal. Errors: errNotDecimal, or, past the range of
// bits, that it is out of range, naming the bound it passed ("at most
// 9223372036854775807").
func decimalInt(v string, bits int) (int64, error) {
	digits := strings.TrimPrefix(v, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, errNotDecimal
	}
	n, err := strconv.ParseInt(v, 10, bits) // only strconv.ErrRange now, n the bound passed
	switch {
	case err != nil && n < 0:
		return 0, fmt.Errorf("out of range: at least %d", n)
	case err != nil:
		return 0, fmt.Errorf("out of range: at most %d", n)
	}
	return n, nil
}

// decimalFloat reads v as strconv.ParseFloat does (12, 0.5, 1e3), refusing Go's forms
// that are not decimal (1_000, 0x1p4) and a leading '+' with errNotDecimal, but for
// +Inf, read as Inf is (and refused as out of its flag's range in the same words); its
// other errors are ParseFloat's. Negative zero is read as 0: it is no negative number,
// and fmt would print it "-0".
func decimalFloat(v string) (float64, error) {
	if strings.ContainsAny(v, "_xX") {
		return 0, errNotDecimal
	}
	f, err := strconv.ParseFloat(v, 64)
	if strings.HasPrefix(v, "+") && !math.IsInf(f, 1) {
		return 0, errNotDecimal
	}
	if f == 0 {
		return 0, err
	}
	return f, err
}

func (s *single) Set(v string) error {
	s.n++
	switch got := s.Value.(flag.Getter).Get(); got.(type) {
	case int, int64:
		bits := 64
		if _, ok := got.(int); ok {
			bits = strconv.IntSize
		}
		n, err := decimalInt(v, bits)
		if err != nil {
			return err
		}
		v = strconv.FormatInt(n, 10)
	case float64:
		f, err := decimalFloat(v)
		if errors.Is(err, errNotDecimal) {
			return err
		}
		if err == nil { // else the flag package says why (e.g. "value out of range")
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return s.Value.Set(v)
}

// IsBoolFlag keeps a bool flag's form without a value (--off-sale).
func (s *single) IsBoolFlag() bool {
	b, ok := s.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// dashed is how a flag is written: -o, --name.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// parseOnce parses args into fs: -h is a helpRequest, a flag that is not repeated
// given twice a usage error naming it (the flag package keeps the last value:
// `create --sku a --sku b` would create b).
func parseOnce(fs *flag.FlagSet, args []string) error {
	counts := map[string]*single{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, many := f.Value.(repeated); !many {
			counts[f.Name] = &single{Value: f.Value}
			f.Value = counts[f.Name]
		}
	})
	err := fs.Parse(args)
	twice := ""
	fs.VisitAll(func(f *flag.Flag) {
		if s := counts[f.Name]; s != nil {
			f.Value = s.Value // its own again: the usage names its type
			if s.n > 1 && twice == "" {
				twice = f.Name
			}
		}
	})
	switch {
	case errors.Is(err, flag.ErrHelp):
		return &helpRequest{fs}
	case err != nil:
		return usageError("%s: %v", fs.Name(), err)
	case twice != "":
		return usageError("%s: %s given twice: it takes one value", fs.Name(), dashed(twice))
	}
	return nil
}

// readSeed reads the seed file named file, at most maxAnswerBytes (16 MiB: a seed is
// a list of SKUs, and /dev/zero or a wrong file must not fill the memory). Errors say
// why in words (no such file, permission denied, too large), never the path as Go
// prints it: the caller names the file made printable.
func readSeed(file string) ([]byte, error) {
	f, err := os.Open(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return nil, errors.New("permission denied")
	case err != nil:
		return nil, errors.New("cannot open it")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAnswerBytes+1))
	switch {
	case err != nil:
		return nil, errors.New("cannot read it (a directory?)")
	case len(data) > maxAnswerBytes:
		return nil, fmt.Errorf("larger than %d MiB: not a seed file", maxAnswerBytes>>20)
	}
	return data, nil
}
