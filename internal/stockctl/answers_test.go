package stockctl_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// answering is an API answering every request status with body.
func answering(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// -o json exits as the table does for the same answer: 4 for a reconcile report with
// differences or refund problems, 3 for a reshard not complete, 1 for an answer whose
// fields have the wrong types; the JSON of an answer it takes is still printed.
func TestRun_JSONOutputExitsAsTheTableDoes(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		args         []string
		code         int
	}{
		{"differences", `{"skusChecked":1,"differences":[{"skuId":"a","rule":"r","expected":1,"actual":2}]}`, []string{"reconcile"}, stockctl.ExitDifferences},
		{"refund problems", `{"skusChecked":1,"refundProblems":["o1"]}`, []string{"reconcile", "--latest"}, stockctl.ExitDifferences},
		{"balanced", `{"skusChecked":1,"differences":[]}`, []string{"reconcile"}, stockctl.ExitOK},
		{"differences of the wrong type", `{"skusChecked":1,"differences":"many"}`, []string{"reconcile"}, stockctl.ExitError},
		{"reshard not complete", `{"skuId":"a","shards":4,"targetShards":2,"complete":false}`, []string{"reshard", "a", "--shards", "2"}, stockctl.ExitIncomplete},
		{"reshard without complete", `{"skuId":"a","shards":4,"targetShards":2}`, []string{"reshard", "a", "--shards", "2"}, stockctl.ExitIncomplete},
		{"reshard complete", `{"skuId":"a","shards":2,"targetShards":2,"complete":true}`, []string{"reshard", "a", "--shards", "2"}, stockctl.ExitOK},
		{"reshard complete of the wrong type", `{"skuId":"a","shards":2,"targetShards":2,"complete":"yes"}`, []string{"reshard", "a", "--shards", "2"}, stockctl.ExitError},
	} {
		url := answering(t, http.StatusOK, c.answer)
		for _, format := range []string{"table", "json"} {
			code, out, errOut := runWith(append([]string{"--endpoint", url, "-o", format}, c.args...), "", http.DefaultTransport)
			printed := strings.Contains(out, `"sku`)
			if code != c.code || (format == "json" && code != stockctl.ExitError && !printed) {
				t.Errorf("%s, -o %s: exit %d, out %q, err %q; want exit %d (and the JSON printed)", c.name, format, code, out, errOut, c.code)
			}
		}
	}
}

// An answer that is not the route's JSON prints nothing, not even the part of it a
// table reads first: adjust's line before its SKU that is not one.
func TestRun_AnAnswerRefusedPrintsNothing(t *testing.T) {
	url := answering(t, http.StatusCreated, `{"adjustmentId":"r1","delta":5,"reason":"x","sku":"not a SKU"}`)
	for _, format := range []string{"table", "json"} {
		code, out, errOut := runWith([]string{"--endpoint", url, "-o", format, "adjust", "a", "--id", "r1", "--delta", "5", "--reason", "x"}, "", http.DefaultTransport)
		if code != stockctl.ExitError || out != "" || !strings.Contains(errOut, "not the JSON this route gives") {
			t.Errorf("-o %s: exit %d, out %q, err %q; want exit 1, nothing printed, the answer refused", format, code, out, errOut)
		}
	}
}

// A message quoting what the operator gave (an endpoint, its host, a flag) shows its
// control, format and separator characters escaped (\u202e), never raw: a
// bidirectional override, a zero-width space or NEL would reorder or hide the line.
func TestRun_MessagesEscapeTheInputsInvisibleCharacters(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		rt   http.RoundTripper
	}{
		{"an endpoint with no such host", []string{"--endpoint", "http://a\u202e\u200b.com", "get", "cup-01"}, noHostTransport()},
		{"an endpoint not reached", []string{"--endpoint", "http://a\u202e\u200b.com", "--region", "us-east-1", "get", "cup-01"}, noHostTransport()},
		{"an endpoint with NEL", []string{"--endpoint", "http://a\u0085b.com", "get", "cup-01"}, noHostTransport()},
		{"a custom domain naming no region", []string{"--endpoint", "https://api\u202e\u00a0.example.com", "get", "cup-01"}, noHostTransport()},
		{"an unknown flag", []string{"--endpoint", "http://127.0.0.1:1", "get", "cup-01", "--x\u202e"}, noHostTransport()},
		{"a flag without its value", []string{"get", "cup-01", "--endpoint\u2028"}, noHostTransport()},
	} {
		code, _, errOut := runWith(c.args, "", c.rt)
		if code == stockctl.ExitOK || strings.ContainsFunc(errOut, func(r rune) bool {
			return r != '\n' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || (unicode.Is(unicode.Zs, r) && r != ' '))
		}) || !strings.Contains(errOut, `\u`) && !strings.Contains(errOut, "%E2%80%AE") { // escaped, or as the URL encodes it
			t.Errorf("%s: exit %d, err %q; want its invisible characters escaped", c.name, code, errOut)
		}
	}
}

// The next page's hint pasted back sends its cursor, one starting with '-' too.
func TestRun_TheMoreHintPastedBackSendsItsCursor(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.Query().Get("after")
		io.WriteString(w, `{"skus":[],"next":"--version"}`)
	}))
	defer srv.Close()
	_, out, _ := runWith([]string{"--endpoint", srv.URL, "list"}, "", http.DefaultTransport)
	_, hint, _ := strings.Cut(strings.TrimSpace(out), "more: ")
	code, _, errOut := runWith([]string{"--endpoint", srv.URL, "list", hint}, "", http.DefaultTransport)
	if code != stockctl.ExitOK || query != "--version" {
		t.Errorf("list %s: exit %d, err %q, cursor sent %q; want --version sent", hint, code, errOut, query)
	}
}

// A profile named with --profile must give credentials, to a local endpoint too:
// one that gives none is exit 1, nothing sent, as for a deployed endpoint (it used to
// be ignored and the request sent unsigned as local-operator).
func TestRun_AnExplicitProfileWithoutCredentialsIsRefusedLocallyToo(t *testing.T) {
	sent := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sent = true
		io.WriteString(w, `{"skuId":"cup-01"}`)
	}))
	defer srv.Close()
	var errOut bytes.Buffer
	env := stockctl.Env{Stdout: io.Discard, Stderr: &errOut, Getenv: func(string) string { return "" }, HTTP: http.DefaultClient,
		LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) {
			return aws.Config{Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{}, errors.New("no keys")
			})}, nil
		},
	}
	code := stockctl.Run(context.Background(), []string{"--endpoint", srv.URL, "--profile", "ops", "get", "cup-01"}, env)
	if code != stockctl.ExitError || sent || !strings.Contains(errOut.String(), `AWS profile "ops" gives no usable credentials`) {
		t.Errorf("exit %d, sent %v, err %q; want exit 1, nothing sent, the profile gives no usable credentials", code, sent, errOut.String())
	}
	errOut.Reset()
	if code := stockctl.Run(context.Background(), []string{"--endpoint", srv.URL, "get", "cup-01"}, env); code != stockctl.ExitOK || !sent {
		t.Errorf("no --profile: exit %d, sent %v, err %q; want it sent unsigned", code, sent, errOut.String())
	}
}

// An answer about another SKU or order than the one asked for is not this request's
// answer: exit 1 naming both ids, nothing printed, in a table or as JSON.
func TestRun_RefusesAnAnswerAboutAnotherID(t *testing.T) {
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(seedFile, []byte(`[{"skuId":"cup-01","name":"Cup","price":1}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	ship := []string{"ship", "o1", "--shipment-id", "p1", "--type", "virtual"}
	adjust := []string{"adjust", "a", "--id", "j1", "--delta", "5", "--reason", "r"}
	for _, c := range []struct {
		name, answer, want string
		args               []string
	}{
		{"get", `{"skuId":"mug-99"}`, `skuId "mug-99", not "cup-01"`, []string{"get", "cup-01"}},
		{"orders", `{"orderId":"other"}`, `orderId "other", not "o1"`, []string{"orders", "o1"}},
		{"ship", `{"orderId":"o2","shipment":{"shipmentId":"p1"}}`, `orderId "o2", not "o1"`, []string{"ship", "o1", "--shipment-id", "p1", "--type", "virtual"}},
		{"reshard", `{"skuId":"zz","shards":2,"targetShards":2,"complete":true}`, `skuId "zz", not "a"`, []string{"reshard", "a", "--shards", "2"}},
		{"seed", `{"skuId":"zz"}`, `skuId "zz", not "cup-01"`, []string{"seed", seedFile}},
		{"escaped", `{"skuId":"mug\u202e99"}`, `skuId "mug\u202e99", not "cup-01"`, []string{"get", "cup-01"}},
		{"another shipment", `{"orderId":"o1","shipment":{"shipmentId":"p\u202e2"}}`, `shipmentId "p\u202e2", not "p1"`, ship},
		{"another SKU adjusted", `{"adjustmentId":"j1","delta":5,"reason":"r","sku":{"skuId":"b"}}`, `skuId "b", not "a"`, adjust},
		{"another delta", `{"adjustmentId":"j1","delta":6,"reason":"r","sku":{"skuId":"a"}}`, `delta 6, not 5`, adjust},
		{"refund not listed", `{"orderId":"o1","refunds":[{"refundId":"other"}]}`, `refunds without refundId "mine"`, []string{"refund", "o1", "--reason", "r", "--refund-id", "mine"}},
		{"retry not listed", `{"orderId":"o1","refunds":[{"outRefundNo":"r2"}]}`, `refunds without outRefundNo "r1"`, []string{"refund-retry", "o1", "r1", "--reason", "r"}},
	} {
		url := answering(t, http.StatusOK, c.answer)
		for _, format := range []string{"table", "json"} {
			code, out, errOut := runWith(append([]string{"--endpoint", url, "-o", format}, c.args...), "", http.DefaultTransport)
			if code != stockctl.ExitError || out != "" || !strings.Contains(errOut, "not the answer to this request: it is about "+c.want+" asked for") {
				t.Errorf("%s, -o %s: exit %d, out %q, err %q; want exit 1, nothing printed, naming %s", c.name, format, code, out, errOut, c.want)
			}
			if c.args[0] != "get" && c.args[0] != "orders" && !strings.Contains(errOut, "the API took the change; look") {
				t.Errorf("%s, -o %s: err %q; want it to say the API took the change", c.name, format, errOut)
			}
		}
	}
}

// What the contract says is invalid is refused before anything is sent, exit 2: a
// --status orders does not list, a --at that is not an RFC 3339 time, a fair window
// without the queue, an SF contact that is not a masked phone number.
func TestRun_RefusesWhatTheContractCallsInvalidWithoutSendingIt(t *testing.T) {
	srv, paths := fakeAPI(t)
	create := []string{"create", "--sku", "a", "--name", "Cup", "--price", "1"}
	ship := []string{"ship", "o1", "--shipment-id", "p1", "--type", "express", "--carrier", "SF", "--tracking", "SF1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"orders", "--status", "PAID"}, "--status must be PENDING_OVERDUE, REFUND_PENDING, REFUNDING"},
		{[]string{"on-sale", "a", "--at", "now"}, `--at "now" is not an RFC 3339 time`},
		{[]string{"on-sale", "a", "--at", "2026-13-01T10:00:00Z"}, "is not an RFC 3339 time"},
		{[]string{"on-sale", "a", "--at", " 2026-11-11T10:00:00Z"}, "is not an RFC 3339 time"},
		{append(create, "--at", "now"), "is not an RFC 3339 time"},
		{append(create, "--fair-window", "30"), "--fair-window needs --queue"},
		{append(create, "--fair-window", "30", "--queue=false"), "--fair-window needs --queue"},
		{append(ship, "--contact", "18912341234"), "contact must be a masked phone number"},
		{[]string{"queue", "a", "--off", "--fair-window", "10"}, "queue: --fair-window needs the queue"},
		{[]string{"queue", "a", "--fair-window=0", "--off"}, "queue: --fair-window needs the queue"},
		{[]string{"orders", "o1", "--after", "x"}, "orders takes --after with --status only"},
	} {
		code, out, errOut := run(append([]string{"--endpoint", srv.URL}, c.args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2 saying %q", c.args, code, out, errOut, c.want)
		}
	}
	if len(*paths) != 0 {
		t.Errorf("sent: %q; want nothing sent", *paths)
	}
	for _, args := range [][]string{append(create, "--fair-window", "30", "--queue"), append(ship, "--contact", "189****1234"), {"on-sale", "a", "--at", "2026-11-11T10:00:00+08:00"}} {
		if code, _, errOut := run(append([]string{"--endpoint", srv.URL}, args...), nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK {
			t.Errorf("%q: exit %d, err %q; want it sent", args, code, errOut)
		}
	}
}

// informationalServer answers every request with a 102 Processing and nothing after,
// holding the connection open until the test ends.
func informationalServer(t *testing.T) string {
	stuck := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusProcessing)
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stuck) })
	return srv.URL
}

// Each failure is said by what it is: a change to a plain-HTTP server given https://
// was never sent (the TLS handshake failed), a body whose Content-Encoding: gzip is not
// gzip is malformed (not cut short), an empty order id is said empty, and a server
// that answers only an informational 1xx gave no final answer (not "timed out").
func TestRun_SaysEachFailureByWhatItIs(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	notGzip := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello")
	for _, c := range []struct {
		name, endpoint string
		args           []string
		rt             http.RoundTripper
		want, not      string
	}{
		{"a change to plain HTTP", strings.Replace(plain.URL, "http://", "https://", 1), []string{"off-sale", "cup-01"}, http.DefaultTransport,
			"not an HTTPS server", "may have been applied"},
		{"gzip that is not", notGzip, []string{"get", "cup-01"}, http.DefaultTransport, "the answer is malformed", "cut short"},
		{"an empty order id", plain.URL, []string{"orders", ""}, http.DefaultTransport, "the order id is empty", `unexpected ""`},
		{"only a 1xx", informationalServer(t), []string{"get", "cup-01"}, &http.Transport{ResponseHeaderTimeout: time.Second},
			"answered an informational status (102) with no final answer", "timed out"},
	} {
		code, _, errOut := runWith(append([]string{"--endpoint", c.endpoint}, c.args...), "", c.rt)
		if code == stockctl.ExitOK || !strings.Contains(errOut, c.want) || strings.Contains(errOut, c.not) {
			t.Errorf("%s: exit %d, err %q; want %q, not %q", c.name, code, errOut, c.want, c.not)
		}
	}
}

// An answer in gzip (Content-Encoding: gzip) is read as its JSON.
func TestRun_ReadsAGzipAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, `{"skuId":"cup-01","name":"Cup"}`)
		zw.Close()
	}))
	defer srv.Close()
	if code, out, errOut := runWith([]string{"--endpoint", srv.URL, "get", "cup-01"}, "", http.DefaultTransport); code != stockctl.ExitOK || !strings.Contains(out, "Cup") {
		t.Errorf("exit %d, out %q, err %q; want the SKU shown", code, out, errOut)
	}
}

// A list's first page is asked for without a cursor (no empty after= in its query),
// the next with the cursor given; a cursor holding anything but printable ASCII, which
// a list's table would refuse to print back, is refused, exit 2, nothing sent.
func TestRun_SendsTheCursorOnlyWhenGivenAndPrintable(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		io.WriteString(w, `{"skus":[],"entries":[],"orders":[]}`)
	}))
	defer srv.Close()
	for _, c := range []struct {
		args  []string
		query string
	}{
		{[]string{"list"}, ""},
		{[]string{"ledger", "a"}, ""},
		{[]string{"orders", "--status", "REFUNDING"}, "status=REFUNDING"},
		{[]string{"list", "--after", "c 1"}, "after=c%201"},
		{[]string{"orders", "--status", "REFUNDING", "--after", "c1"}, "after=c1&status=REFUNDING"},
	} {
		queries = nil
		code, _, errOut := runWith(append([]string{"--endpoint", srv.URL}, c.args...), "", http.DefaultTransport)
		if code != stockctl.ExitOK || len(queries) != 1 || queries[0] != c.query {
			t.Errorf("%q: exit %d, err %q, queries %q; want %q sent", c.args, code, errOut, queries, c.query)
		}
	}
	queries = nil
	for _, args := range [][]string{{"list", "--after", "c\x1b[2J"}, {"ledger", "a", "--after", "c\u202e"}, {"orders", "--status", "REFUNDING", "--after", "c\n"}} {
		code, out, errOut := runWith(append([]string{"--endpoint", srv.URL}, args...), "", http.DefaultTransport)
		if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "--after holds characters other than printable ASCII") {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2 refusing the cursor", args, code, out, errOut)
		}
	}
	if len(queries) != 0 {
		t.Errorf("sent %q; want nothing sent", queries)
	}
}
