// Package stockctl is the merchant API's command-line client (docs/contract.md,
// "Merchant API"): it sends each command to its /admin/ route signed with AWS
// Signature Version 4 for the service execute-api, with credentials from the default
// AWS credential chain (aws-sdk-go-v2's signer; IAM User Guide, "Signing AWS API
// requests"), and prints the answer as tables for people or, with -o json, the
// route's JSON for scripts.
package stockctl

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Service is the SigV4 service name of API Gateway's execute-api (API Gateway
// Developer Guide, "Control access to HTTP APIs with IAM authorization").
const Service = "execute-api"

// LocalOperator is the operator an unsigned request names in its X-Operator-Id header:
// the local stack's merchant routes take it as the caller's IAM user (the OpenAPI
// document's local-only localOperator scheme) and record
// arn:aws:iam::000000000000:user/local-operator with each change.
const LocalOperator = "local-operator"

// RequestWait bounds a request's wait for its answer, read to its end, connecting
// included: API Gateway waits at most 30 s for the function behind an HTTP API route
// and then answers 503 itself ("Maximum integration timeout", API Gateway Developer
// Guide, "Quotas for HTTP APIs",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html),
// so 5 s more (DNS, TCP and TLS, the gateway's own work) is as long as an answer can
// take; past it no answer is coming (UnreachableError, "timed out").
const RequestWait = 35 * time.Second

// maxAnswerBytes bounds a route's answer read into memory; a larger one is refused
// whole (errTooLarge), never cut to this size and used.
const maxAnswerBytes = 16 << 20

// errTooLarge is an answer longer than maxAnswerBytes.
var errTooLarge = errors.New("answer larger than maxAnswerBytes")

// Client sends signed requests to the merchant API at Endpoint.
type Client struct {
	Endpoint    *url.URL                // e.g. https://abc.execute-api.ap-east-1.amazonaws.com or http://127.0.0.1:3000
	Region      string                  // signing region
	Credentials aws.CredentialsProvider // nil: requests go unsigned, naming LocalOperator (local stack only)
	HTTP        *http.Client
	Now         func() time.Time // signing time; default time.Now
}

// APIError is an answer other than 2xx: its status and its error body, the contract's
// {"code","message"} (docs/contract.md, "Errors") or API Gateway's own {"message"}.
type APIError struct {
	Method, Path string
	Status       int
	Code         string // e.g. STOCK_OUT; "" when the body is not a contract error
	Message      string // the contract error's message, or API Gateway's when Code is ""
	// iam is whether the message, as the answer gave it (before printable), is API
	// Gateway's own AWS_IAM refusal (iamRefusal): white space or invisible characters
	// around or inside a phrase make it the API's own message.
	iam bool
}

// Error names the request, the status, and the code and message of a contract error.
// A 403 whose message is API Gateway's own AWS_IAM authorization refusing the
// request's signature or its caller (iamRefusal) says the gateway refused the
// credentials, with its message (e.g. "The security token included in the request is
// invalid.", "User: arn:… is not authorized to perform: execute-api:Invoke on
// resource: …"; API Gateway Developer Guide, "Control access to HTTP APIs with IAM
// authorization",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-access-control-iam.html,
// and the messages of its 403s:
// https://repost.aws/knowledge-center/api-gateway-troubleshoot-403-forbidden,
// https://repost.aws/knowledge-center/api-gateway-iam-sigv4-mismatch); another 403
// says the API refused the request, with its message; another status adds the
// gateway's message. A message that says no more than the status text is left out.
func (e *APIError) Error() string {
	head := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, statusText(e.Status))
	informative := e.Message != "" && e.Message != statusText(e.Status)
	switch {
	case e.Code != "":
		return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
	case e.Status == http.StatusForbidden && e.iam:
		return fmt.Sprintf("%s: API Gateway refused these AWS credentials: %s", head, e.Message)
	case e.Status == http.StatusForbidden && informative:
		return fmt.Sprintf("%s: the API refused the request: %s", head, e.Message)
	case informative:
		return fmt.Sprintf("%s: API Gateway: %s", head, e.Message)
	}
	return head
}

// statusText is status's text as HTTP defines it (http.StatusText: "Not Found"), or
// "unknown status" for a status without one (499, 999): a message never shows a
// number followed by nothing.
func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "unknown status"
}

// iamRefusal matches the messages of API Gateway's AWS_IAM authorization refusing a
// request (403) by their documented shape: "Missing Authentication Token" (no
// signature) is the whole message; each other begins its message: "User: PRINCIPAL
// is not authorized to perform: execute-api:…" (a caller without execute-api
// permission, or a resource policy's deny), "The security token included in the
// request is invalid" or "… is expired" (credentials it does not know, or expired),
// "The request signature we calculated does not match …", "Signature expired: …",
// "Signature not yet current: …", "Credential should be scoped to …" (another region
// or service), "Authorization header requires …" and "Invalid key=value pair (missing
// equal-sign) in Authorization header …" (the pages Error cites; AWS General
// Reference, "Signature Version 4 error codes"). A message that only quotes one (an
// API's own 403 saying "we log every Missing Authentication Token attempt") is not one.
var iamRefusal = regexp.MustCompile(`^(?:Missing Authentication Token$|` +
	`User: \S+ is not authorized to perform: execute-api:|` +
	`The security token included in the request is (?:invalid|expired)|` +
	`The request signature we calculated does not match|` +
	`Signature expired: |Signature not yet current: |` +
	`Credential should be scoped to |Authorization header requires |` +
	`Invalid key=value pair \(missing equal-sign\) in Authorization header)`)

// maxMessageBytes bounds the message of an answer that is not a contract error
// (the gateway's messages are one sentence).
const maxMessageBytes = 1024

// answerError is the *APIError of status with body data: its code and message, the
// message on one line and at most maxMessageBytes long.
func answerError(method, path string, status int, data []byte) *APIError {
	e := &APIError{Method: method, Path: path, Status: status}
	var body struct{ Code, Message string }
	if json.Unmarshal(data, &body) == nil {
		e.Code, e.Message = printable(body.Code), printable(body.Message)
		e.iam = iamRefusal.MatchString(body.Message)
	}
	return e
}

// printable is s as one line for the operator's terminal: control characters (an
// escape sequence an endpoint sends would recolour or rewrite the terminal), format
// characters (Unicode category Cf: bidirectional overrides and isolates would reorder
// what the line shows, zero-width ones hide text) and runs of white space become one
// space, and at most maxMessageBytes are kept.
func printable(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	}), " ")
	if len(s) > maxMessageBytes {
		s = strings.ToValidUTF8(s[:maxMessageBytes], "") + "…"
	}
	return s
}

// escaped is s, a message that may quote what the operator gave (an endpoint, its
// host, a flag), with every control, format (Cf) and separator character but the
// ASCII space written as its Go escape (\u202e, \u0085, \u00a0) and every invalid
// UTF-8 byte as \xff: text that would reorder, hide or break the line is shown, not
// acted on, and nothing is lost.
func escaped(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r != ' ' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Z)):
			b.WriteString(strings.Trim(strconv.QuoteRuneToASCII(r), "'"))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// RedirectError is an answer 3xx: stockctl follows no redirect, since Go's client
// would send a change's POST again as a GET (a change turned into a read) or, for a
// 307 or 308, send it to another host, and say either was done. Run says it in one
// line and exits ExitError.
type RedirectError struct {
	Method, Path string
	Status       int
	Location     string // the Location header, masked (shownURL) and made printable; "" for none
}

func (e *RedirectError) Error() string {
	if e.Location == "" {
		return fmt.Sprintf("%s %s: %d %s without a Location (where it points): nothing was done; is the endpoint the API's own URL? (stockctl follows no redirect)",
			e.Method, e.Path, e.Status, statusText(e.Status))
	}
	return fmt.Sprintf("%s %s: %d %s to %q: nothing was done; give the API's own URL as --endpoint (stockctl follows no redirect)",
		e.Method, e.Path, e.Status, statusText(e.Status), e.Location)
}

// UnreachableError is a request that got no answer from the endpoint: Run says it in
// one line, "cannot reach ENDPOINT: REASON", and exits ExitUnreachable.
type UnreachableError struct {
	Endpoint string // the endpoint as given (its password, if any, redacted)
	Reason   string // "connection refused", "no such host", "timed out", "the answer is not valid HTTP"…, or the transport's own words
}

func (e *UnreachableError) Error() string { return "cannot reach " + e.Endpoint + ": " + e.Reason }

// What failed when a request got no answer (netFailure).
const (
	connRefused = "connection refused"
	noSuchHost  = "no such host"
	timedOut    = "timed out"
	dnsFailed   = "DNS lookup failed"
	plainHTTP   = "not an HTTPS server"
	untrusted   = "its TLS certificate is not trusted"
	tlsFailed   = "TLS handshake failed"
	connReset   = "connection reset"
	closedEarly = "the server closed the connection without an answer"
	notHTTP     = "the answer is not valid HTTP"
)

// errNotHTTP marks a request whose answer came but Go's client could not read as HTTP:
// a malformed status line or header, or a redirect whose Location is not a URL.
var errNotHTTP = errors.New(notHTTP)

// netFailure names what failed in err, the error of a request that got no answer, in
// a few words (the constants above); "" when err says none of them.
func netFailure(err error) string {
	var dns *net.DNSError
	var netErr net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return connRefused
	case errors.As(err, &dns) && dns.IsNotFound:
		return noSuchHost
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return timedOut
	case errors.As(err, &dns):
		return dnsFailed
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, new(tls.RecordHeaderError)):
		return plainHTTP
	case errors.As(err, new(*tls.CertificateVerificationError)):
		return untrusted
	case errors.As(err, &op) && op.Op == "remote error": // crypto/tls: the server's TLS alert
		return tlsFailed
	case errors.Is(err, syscall.ECONNRESET):
		return connReset
	case errors.Is(err, errNotHTTP):
		return notHTTP
	case errors.Is(err, io.EOF):
		return closedEarly
	}
	return ""
}

// unreachable is the *UnreachableError of the endpoint for err, an error of
// http.Client.Do: its reason in a few words (netFailure, with what to give for an
// answer in plain HTTP or a reset) instead of Go's request and dial text.
func unreachable(endpoint *url.URL, err error) *UnreachableError {
	var dns *net.DNSError
	reason := netFailure(err)
	switch {
	case reason == dnsFailed && errors.As(err, &dns):
		reason = "cannot look up " + dns.Name + ": " + dns.Err
	case reason == plainHTTP:
		reason += " (it answered in plain HTTP: give http://)"
	case reason == connReset:
		reason += " (an HTTPS server given http://?)"
	case reason == "":
		reason = err.Error()
		var urlErr *url.Error
		if errors.As(err, &urlErr) { // not its "Get URL:" prefix
			reason = urlErr.Err.Error()
		}
	}
	return &UnreachableError{Endpoint: endpoint.Redacted(), Reason: reason}
}

// Do sends method path (with query) and body (nil: none), signed when the client has
// credentials, and returns the answer's status (2xx) and body. It returns an *APIError for an answer
// other than 2xx, an *UnreachableError when no answer came or what came is not HTTP
// (errNotHTTP), and another error when the request cannot be signed or its answer not
// read to its end (cutShort).
func (c *Client) Do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	u := c.Endpoint.JoinPath()
	rel, err := url.Parse(path)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	// Keep the escaped form: an id's "/" or ".." (escaped by the caller) must stay
	// inside its path segment, never become one.
	u.Path, u.RawQuery = strings.TrimSuffix(u.Path, "/")+rel.Path, rel.RawQuery
	u.RawPath = strings.TrimSuffix(c.Endpoint.EscapedPath(), "/") + rel.EscapedPath()
	var answered atomic.Bool       // a byte of an answer came: the client's error then is about what came
	var informational atomic.Int32 // the last 1xx status that came, 0 for none
	traced := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { answered.Store(true) },
		Got1xxResponse: func(code int, _ textproto.MIMEHeader) error { informational.Store(int32(code)); return nil }})
	req, err := http.NewRequestWithContext(traced, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := c.sign(ctx, req, body); err != nil {
		return 0, nil, err
	}
	// Asked for here (unsigned, as Go's transport asks), so the transport leaves a gzip
	// body as it came: read whole first, then decoded (gunzip), one cut short is told
	// from one that is not gzip.
	req.Header.Set("Accept-Encoding", "gzip")
	hc := *cmp.Or(c.HTTP, http.DefaultClient)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, noAnswer(c.Endpoint, method, err, answered.Load(), int(informational.Load()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return 0, nil, &RedirectError{Method: method, Path: rel.Path, Status: resp.StatusCode, Location: printable(shownURL(resp.Header.Get("Location")))}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err == nil && len(data) > maxAnswerBytes {
		err = errTooLarge
	}
	if err == nil && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		data, err = gunzip(data)
	}
	if err != nil {
		return 0, nil, cutShort(method, rel.Path, resp.StatusCode, err)
	}
	if resp.StatusCode/100 != 2 {
		return 0, nil, answerError(method, rel.Path, resp.StatusCode, data)
	}
	return resp.StatusCode, data, nil
}

// errNotGzip is an answer whose Content-Encoding is gzip and whose body is not gzip.
var errNotGzip = errors.New("its body is not the gzip its Content-Encoding names")

// gunzip is data, a body whose Content-Encoding is gzip, decoded. Errors: errNotGzip
// when it is not whole gzip, errTooLarge when it decodes to more than maxAnswerBytes.
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, errNotGzip
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxAnswerBytes+1))
	switch {
	case err != nil:
		return nil, errNotGzip
	case len(out) > maxAnswerBytes:
		return nil, errTooLarge
	}
	return out, nil
}

// noAnswer is the *UnreachableError of a request of method to endpoint that got no
// final answer (err, http.Client.Do's): after an answer's first byte (answered), what
// came is not HTTP; after an informational 1xx status and nothing more, that the
// server gave no final answer (not "timed out"); and for a change, unless its TLS
// handshake failed (nothing was sent then), that it may have been applied.
func noAnswer(endpoint *url.URL, method string, err error, answered bool, informational int) *UnreachableError {
	if answered {
		err = fmt.Errorf("%w: %w", errNotHTTP, err)
	}
	u := unreachable(endpoint, err)
	if informational != 0 {
		u.Reason = fmt.Sprintf("the server answered an informational status (%d) with no final answer", informational)
	}
	if kind := netFailure(err); change(method) && kind != plainHTTP && kind != untrusted && kind != tlsFailed {
		// The request may have reached the API before the connection failed.
		u.Reason += "; the change may have been applied: look with get or orders before sending it again"
	}
	return u
}

// cutShort says an answer of status whose body could not be read to its end (err,
// e.g. io.ErrUnexpectedEOF: the connection closed before the length it announced):
// the API's answer was cut short (or malformed, a body that is not the gzip its
// Content-Encoding names), with what failed when netFailure names it, never
// Go's text; after a 2xx to a change, that the API took it.
func cutShort(method, path string, status int, err error) error {
	what := "the API's answer was cut short"
	switch {
	case errors.Is(err, errTooLarge):
		what = fmt.Sprintf("the answer is larger than %d MiB, more than any route of the API gives", maxAnswerBytes>>20)
	case errors.Is(err, errNotGzip):
		what = "the answer is malformed: " + errNotGzip.Error()
	}
	if kind := netFailure(err); kind != "" {
		what += " (" + kind + ")"
	}
	return fmt.Errorf("%s %s: %d %s: %s%s", method, path, status, statusText(status), what, tookChange(method, status))
}

// change reports whether method asks for a change (POST, PUT, PATCH, DELETE), not a
// read.
func change(method string) bool { return method != http.MethodGet && method != http.MethodHead }

// tookChange is what an answer of status to method adds when the API took a change
// whose answer stockctl cannot show (cut short, or not the route's JSON): after a 2xx
// to a change, that it was taken, so it is looked at before it is sent again; "" else.
func tookChange(method string, status int) string {
	if status/100 == 2 && change(method) {
		return ": the API took the change; look with get or orders before sending it again"
	}
	return ""
}

// sign adds the SigV4 headers (Authorization, X-Amz-Date, X-Amz-Security-Token) for
// Service in c.Region, over the body's SHA-256; without credentials (local stack
// only) it names LocalOperator in X-Operator-Id instead.
func (c *Client) sign(ctx context.Context, req *http.Request, body []byte) error {
	if c.Credentials == nil {
		req.Header.Set("X-Operator-Id", LocalOperator)
		return nil
	}
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return credentialsProblem("", false) // not the SDK's error text (credentialsProblem)
	}
	sum := sha256.Sum256(body)
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), Service, c.Region, now())
}

// Loopback reports whether the endpoint is on this machine (the local stack): its host
// is localhost, in any letter case (host names are case-insensitive, RFC 4343), or a
// loopback address.
func Loopback(u *url.URL) bool {
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// RegionOf reads the region of an execute-api endpoint host
// ({api-id}.execute-api.{region}.amazonaws.com), in lower case (host names are
// case-insensitive, RFC 4343: US-EAST-1 is us-east-1), "" for another host.
func RegionOf(u *url.URL) string {
	parts := strings.Split(strings.ToLower(u.Hostname()), ".")
	if len(parts) >= 4 && parts[1] == "execute-api" {
		return parts[2]
	}
	return ""
}
