package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// -h explains the command: exit status 0, the help on stdout, every flag named with an
// example of its use, the local-only conveniences and the exposure rule.
func TestRun_HelpNamesEveryFlagWithAnExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr); code != exitOK || stderr.Len() > 0 {
		t.Fatalf("-h: exit %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
	help := stdout.String()
	fs, _, _ := newFlags()
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if !strings.Contains(help, "\n  -"+f.Name+" ") && !strings.Contains(help, "\n  -"+f.Name+"\n") {
			t.Errorf("the help does not list -%s", f.Name)
		}
		if !strings.Contains(f.Usage, "e.g. -"+f.Name) {
			t.Errorf("-%s: usage %q has no example (e.g. -%s …)", f.Name, f.Usage, f.Name)
		}
	})
	if n < 13 {
		t.Errorf("%d flags, want at least 13", n)
	}
	for _, want := range []string{"X-User-Id", "X-Operator-Id", "/_local/pay/{orderId}", "/_local/invoke/{function}", "/openapi.yaml",
		"Exposure:", "127.0.0.1:3000", "127.0.0.1:8000", "127.0.0.1:9324", "127.0.0.1:9401", "127.0.0.1:9402", "Examples:"} {
		if !strings.Contains(help, want) {
			t.Errorf("the help does not mention %s", want)
		}
	}
}

// Every listen address must be a loopback one unless -expose is given; a refusal names
// the flag and -expose and starts nothing. Other usage errors exit 2 too.
func TestRun_RefusesAnAddressOtherMachinesReachWithoutExpose(t *testing.T) {
	fs, _, _ := newFlags()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-addr", "0.0.0.0:3000"}, "-addr 0.0.0.0:3000 is not a loopback address"},
		{[]string{"-addr", ":3000"}, "-addr :3000 is not a loopback address"},
		{[]string{"-addr", "192.0.2.1:3000"}, "-addr 192.0.2.1:3000 is not a loopback address"},
		{[]string{"-dynamodb-addr", "0.0.0.0:8000"}, "-dynamodb-addr 0.0.0.0:8000 is not a loopback address"},
		{[]string{"-sqs-addr", "[::]:9324"}, "-sqs-addr [::]:9324 is not a loopback address"},
		{[]string{"-wechatpay-addr", ":9401"}, "-wechatpay-addr :9401 is not a loopback address"},
		{[]string{"-wxlogin-addr", "example.com:9402"}, "-wxlogin-addr example.com:9402 is not a loopback address"},
		{[]string{"-nope"}, "flag provided but not defined: -nope"},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-log-format", "yaml"}, "-log-format must be text or json"},
		{[]string{"-payment-timeout", "0s"}, "-payment-timeout must be positive"},
		{[]string{"-alert-quiet-period", "1500ms"}, "-alert-quiet-period must be whole seconds"},
		{[]string{"-refund-interval", "-1s"}, "-refund-interval must be positive"},
	} {
		// A template that does not exist: anything that got as far as starting would fail
		// with exit status 1, not 2.
		args := append([]string{"-template", "no-such-template.yaml"}, tc.args...)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2 and %q", tc.args, code, stderr.String(), stdout.String(), tc.want)
		}
		if strings.Contains(tc.want, "loopback") && !strings.Contains(stderr.String(), "Add -expose") {
			t.Errorf("%q: stderr %q does not name -expose", tc.args, stderr.String())
		}
	}
	if fs.Lookup("expose") == nil {
		t.Error("no -expose flag")
	}
}

// With -expose the stack listens on every interface: a request sent to this machine's
// network address gets only what the deployed API serves, one sent to 127.0.0.1 keeps
// the local conveniences, and the terminal says what is exposed.
func TestRun_ExposeServesOtherMachinesOnlyTheDeployedAPI(t *testing.T) {
	lan := testkit.NetworkAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testkit.Log{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-expose", "-addr", "0.0.0.0:0", "-template", "../../template.yaml", "-seed", "../../examples/seed.json",
			"-dynamodb-addr", "127.0.0.1:0", "-sqs-addr", "127.0.0.1:0", "-wechatpay-addr", "127.0.0.1:0", "-wxlogin-addr", "127.0.0.1:0", "-wxapi-addr", "127.0.0.1:0"}, out, io.Discard)
	}()
	port := readyPort(t, out, done)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readyKeys(out.String()), readyKeys(string(readme)); !slices.Equal(got, want) {
		t.Errorf("the ready line has the fields %v, the README's sample %v", got, want)
	}
	if log := out.String(); !strings.Contains(log, "WARN exposed to other machines (-expose): the HTTP API at 0.0.0.0:0 (-addr)") ||
		strings.Contains(log, "exposed to other machines (-expose): the DynamoDB API") {
		t.Errorf("the log does not say (only) that the HTTP API is exposed:\n%s", log)
	}
	for _, tc := range []struct {
		host, method, path string
		headers            map[string]string
		want               int
	}{
		{"127.0.0.1", "POST", "/_local/invoke/reconcile", nil, 200},
		{"127.0.0.1", "GET", "/admin/skus/cup-01", nil, 200},
		{"127.0.0.1", "GET", "/openapi.yaml", nil, 200},
		{lan.String(), "POST", "/_local/invoke/reconcile", nil, 404},
		{lan.String(), "GET", "/admin/skus/cup-01", map[string]string{"X-Operator-Id": "local-operator"}, 403},
		{lan.String(), "GET", "/openapi.yaml", nil, 404},
		{lan.String(), "POST", "/orders", map[string]string{"X-User-Id": "alice"}, 401},
		{lan.String(), "GET", "/skus/cup-01", nil, 200},
	} {
		req, err := http.NewRequest(tc.method, "http://"+net.JoinHostPort(tc.host, port)+tc.path, strings.NewReader(`{"items":[{"skuId":"cup-01","qty":1}]}`))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s at %s: %d %.100s, want %d", tc.method, tc.path, tc.host, resp.StatusCode, body, tc.want)
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("stopped with exit status %d, want 0", code)
	}
}

// readyKeys returns the field names of the first ready line in text, in order.
func readyKeys(text string) []string {
	line := regexp.MustCompile(`(?m) ready (.*)$`).FindStringSubmatch(text)
	if line == nil {
		return nil
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(\w+)=`).FindAllStringSubmatch(line[1], -1) {
		keys = append(keys, m[1])
	}
	return keys
}

// readyPort waits for the ready line and returns the API's port.
func readyPort(t *testing.T, out *testkit.Log, done chan int) string {
	t.Helper()
	ready := regexp.MustCompile(`ready api=http://[^ ]*:(\d+) `)
	deadline := time.After(60 * time.Second)
	for {
		if m := ready.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("stopped with exit status %d before it was ready:\n%s", code, out.String())
		case <-deadline:
			t.Fatalf("not ready after 60 s:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// -version prints the build's version line and starts nothing.
func TestRun_VersionPrintsTheBuild(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-version"}, &stdout, &stderr); code != exitOK || !strings.HasPrefix(stdout.String(), "local ") || stderr.Len() > 0 {
		t.Errorf("-version: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
