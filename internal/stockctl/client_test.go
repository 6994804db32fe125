package stockctl_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// signedRegion is the region of a SigV4 Authorization header's credential scope
// (Credential=AKID/DATE/REGION/SERVICE/aws4_request), "" for none.
func signedRegion(auth string) string {
	_, scope, _ := strings.Cut(auth, "Credential=")
	parts := strings.Split(scope, "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

// runWith runs stockctl with args against an AWS configuration whose own region (what
// AWS_REGION, AWS_DEFAULT_REGION or the profile would give) is configured, and an HTTP
// client whose transport is rt.
func runWith(args []string, configured string, rt http.RoundTripper) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	env := stockctl.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, HTTP: &http.Client{Transport: rt},
		LoadConfig: func(_ context.Context, o stockctl.ConfigOptions) (aws.Config, error) {
			// As config.LoadDefaultConfig does: config.WithRegion wins, "" leaves the configuration's.
			return aws.Config{Region: cmp.Or(o.Region, configured), Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
			})}, nil
		},
	}
	code = stockctl.Run(context.Background(), args, env)
	return code, out.String(), errOut.String()
}

// A request is signed for the endpoint's region when its host names one, else for
// --region, else for the AWS configuration's; a custom-domain endpoint with none of
// them is a usage error naming the fix, with nothing sent (it used to be signed for
// us-east-1 and refused by API Gateway far from the cause). A local endpoint needs no
// region.
func TestRun_SignsForTheRightRegionOrAsksForOne(t *testing.T) {
	const custom = "https://api.shop.example.com"
	for _, c := range []struct {
		name       string
		args       []string
		configured string
		want       string // the signing region; "" for a usage error
	}{
		{"custom domain, no region anywhere", []string{"--endpoint", custom, "get", "cup-01"}, "", ""},
		{"custom domain, the configuration's region", []string{"--endpoint", custom, "get", "cup-01"}, "ap-east-1", "ap-east-1"},
		{"custom domain, --region", []string{"--endpoint", custom, "--region", "cn-north-1", "get", "cup-01"}, "", "cn-north-1"},
		{"--region over the configuration's", []string{"--endpoint", custom, "--region", "cn-north-1", "get", "cup-01"}, "ap-east-1", "cn-north-1"},
		{"the endpoint's region over the configuration's", []string{"--endpoint", "https://abc123.execute-api.cn-north-1.amazonaws.com.cn", "get", "cup-01"}, "ap-east-1", "cn-north-1"},
		{"the endpoint's region, none configured", []string{"--endpoint", "https://abc123.execute-api.ap-east-1.amazonaws.com", "get", "cup-01"}, "", "ap-east-1"},
		{"the endpoint's region in capitals", []string{"--endpoint", "https://abc123.EXECUTE-API.US-EAST-1.amazonaws.com", "get", "cup-01"}, "", "us-east-1"},
		{"a local endpoint, no region anywhere", []string{"--endpoint", "http://127.0.0.1:3000", "get", "cup-01"}, "", "us-east-1"},
	} {
		var auths []string
		code, _, errOut := runWith(c.args, c.configured, roundTripFunc(func(r *http.Request) (*http.Response, error) {
			auths = append(auths, r.Header.Get("Authorization"))
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{"skuId":"cup-01"}`)), Header: http.Header{}}, nil
		}))
		if c.want == "" {
			want := "stockctl: usage: no AWS region to sign for: the endpoint's host api.shop.example.com names none and the AWS configuration has none; " +
				"give --region REGION, or set the AWS configuration's region (AWS_REGION, or region in the profile in ~/.aws/config)"
			if code != stockctl.ExitUsage || len(auths) != 0 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
				t.Errorf("%s: exit %d, %d requests sent, err %q; want exit %d, nothing sent, %q", c.name, code, len(auths), errOut, stockctl.ExitUsage, want)
			}
			continue
		}
		if code != stockctl.ExitOK || len(auths) != 1 || signedRegion(auths[0]) != c.want {
			t.Errorf("%s: exit %d, err %q, Authorization %q; want signed for %s", c.name, code, errOut, auths, c.want)
		}
	}
}

// API Gateway's own 403 to a signed request (AWS_IAM authorization: a body
// {"message": ...}, not the contract's error, with one of the gateway's IAM messages)
// is one line saying the gateway refused the credentials, with its message; another
// 403 says the API refused the request, with its message; the contract's errors and
// the gateway's other answers keep their form.
func TestRun_SaysTheGatewaysRefusalOfTheCredentials(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{403, `{"message":"The security token included in the request is invalid."}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: The security token included in the request is invalid.\n"},
		{403, `{"message":"User: arn:aws:iam::123456789012:user/ops is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:ap-east-1:123456789012:abc123/$default/GET/admin/skus/cup-01"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: User: arn:aws:iam::123456789012:user/ops is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:ap-east-1:123456789012:abc123/$default/GET/admin/skus/cup-01\n"},
		{403, "{\"message\":\"The request signature we calculated does not match\\n\\nthe signature you provided.\"}",
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: The request signature we calculated does not match the signature you provided.\n"},
		{403, `{"Message":"User: anonymous is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:ap-east-1:123456789012:abc123/$default/GET/admin/skus/cup-01"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: User: anonymous is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:ap-east-1:123456789012:abc123/$default/GET/admin/skus/cup-01\n"},
		{403, `{"message":"Credential should be scoped to a valid region, not 'us-east-1'. "}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: Credential should be scoped to a valid region, not 'us-east-1'.\n"},
		{403, `{"message":"Missing Authentication Token"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: Missing Authentication Token\n"},
		{403, `{"message":"The security token included in the request is expired"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: The security token included in the request is expired\n"},
		{403, `{"message":"Signature expired: 20260101T000000Z is now earlier than 20260101T000600Z (20260101T001100Z - 5 min.)"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: Signature expired: 20260101T000000Z is now earlier than 20260101T000600Z (20260101T001100Z - 5 min.)\n"},
		{403, `{"message":"Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter."}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter.\n"},
		{403, `{"message":"Invalid key=value pair (missing equal-sign) in Authorization header (hashed with SHA-256 and encoded with Base64): 'c2lnbg=='."}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: API Gateway refused these AWS credentials: Invalid key=value pair (missing equal-sign) in Authorization header (hashed with SHA-256 and encoded with Base64): 'c2lnbg=='.\n"},
		// A message that only quotes one of the gateway's is the API's own: the
		// gateway's messages are told by their shape, not by a phrase inside.
		{403, `{"message":" Missing Authentication Token"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Missing Authentication Token\n"},
		{403, `{"message":"\u200bMissing Authentication Token"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Missing Authentication Token\n"},
		{403, `{"message":"Missing Authentication Token\n"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Missing Authentication Token\n"},
		{403, `{"message":"we log every Missing Authentication Token attempt"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: we log every Missing Authentication Token attempt\n"},
		{403, `{"message":"Missing Authentication Token, and the shop's firewall saw it"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Missing Authentication Token, and the shop's firewall saw it\n"},
		{403, `{"message":"Blocked: The security token included in the request is invalid. (the shop's proxy)"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Blocked: The security token included in the request is invalid. (the shop's proxy)\n"},
		{403, `{"message":"Our firewall: User: ops is not authorized to perform: execute-api:Invoke from this address"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Our firewall: User: ops is not authorized to perform: execute-api:Invoke from this address\n"},
		{403, `{"message":"User: the shop's firewall says no; is not authorized to perform: execute-api:Invoke"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: User: the shop's firewall says no; is not authorized to perform: execute-api:Invoke\n"},
		// A 403 that is not the gateway's IAM refusal (a WAF rule, a proxy, a resource
		// policy) is the API's, with its message; none said, none added.
		{403, `{"message":"Request blocked by the shop's firewall"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: Request blocked by the shop's firewall\n"},
		{403, `{"message":"Forbidden"}`, "stockctl: GET /admin/skus/cup-01: 403 Forbidden\n"},
		{403, `<html>Forbidden</html>`, "stockctl: GET /admin/skus/cup-01: 403 Forbidden\n"},
		// An endpoint's escape sequences never reach the operator's terminal.
		{403, `{"message":"\u001b[2J\u001b[31mdenied\u0007 now"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: [2J [31mdenied now\n"},
		// Nor its format characters: a right-to-left override, an isolate, a zero-width
		// space would reorder or hide what the line shows.
		{403, `{"message":"paid \u202egnp.exe\u2066 x\u200by"}`,
			"stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API refused the request: paid gnp.exe x y\n"},
		{404, `{"code":"SKU_NOT_FOUND","message":"no SKU cup-01","skuId":"cup-01"}`, "stockctl: GET /admin/skus/cup-01: 404 SKU_NOT_FOUND: no SKU cup-01\n"},
		{404, `{"message":"Not Found"}`, "stockctl: GET /admin/skus/cup-01: 404 Not Found\n"},
		{500, `{"message":"Internal Server Error"}`, "stockctl: GET /admin/skus/cup-01: 500 Internal Server Error\n"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		code, out, errOut := runWith([]string{"--endpoint", srv.URL, "get", "cup-01"}, "", http.DefaultTransport)
		srv.Close()
		if code != stockctl.ExitError || out != "" || errOut != c.want {
			t.Errorf("%d %s: exit %d, out %q, err %q; want exit %d and %q", c.status, c.body, code, out, errOut, stockctl.ExitError, c.want)
		}
	}
}

// closedURL is the http URL of a local port nothing listens on: a request to it is
// refused.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // nothing listens there after: connection refused
	return "http://" + l.Addr().String()
}

// silentServer is a server that takes requests and never answers them.
func silentServer(t *testing.T) *httptest.Server {
	stuck := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stuck) }) // runs first: the handlers return, Close does not wait
	return srv
}

// noHostTransport is a transport whose every dial fails as Go's resolver fails for a
// name that does not exist (NXDOMAIN).
func noHostTransport() *http.Transport {
	return &http.Transport{DialContext: func(_ context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}}
}

// rawServer is a server that answers every request with answer, bytes as given, and
// closes the connection.
func rawServer(t *testing.T, answer string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			io.WriteString(conn, answer)
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An endpoint that cannot be reached is one line naming it as given and why
// (connection refused, no such host, timed out; a server that closes the connection
// without an answer, or answers what is not HTTP), with its own exit status; none of
// Go's request text (the method, the URL with its path, "dial tcp", "EOF", "malformed
// HTTP status code").
func TestRun_SaysAnUnreachableEndpointInOneLine(t *testing.T) {
	closed := closedURL(t)
	slow := silentServer(t)
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate is its own
	defer tlsSrv.Close()
	noHost := noHostTransport()
	for _, c := range []struct {
		endpoint string
		client   *http.Client
		reason   string
	}{
		{closed, http.DefaultClient, "connection refused"},
		{"https://api.shop.example.com/", &http.Client{Transport: noHost}, "no such host"},
		{slow.URL, &http.Client{Timeout: 50 * time.Millisecond}, "timed out"},
		{"https://" + strings.TrimPrefix(slow.URL, "http://"), http.DefaultClient, "not an HTTPS server (it answered in plain HTTP: give http://)"},
		{tlsSrv.URL, http.DefaultClient, "its TLS certificate is not trusted"},
		{rawServer(t, ""), http.DefaultClient, "the server closed the connection without an answer"},
		{rawServer(t, "SSH-2.0-OpenSSH_9.6\r\n"), http.DefaultClient, "the answer is not valid HTTP"},
		{rawServer(t, "HTTP/1.1 2000 OK\r\n\r\n"), http.DefaultClient, "the answer is not valid HTTP"},
		{rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type application/json\r\n\r\n{}"), http.DefaultClient, "the answer is not valid HTTP"},
		{rawServer(t, "HTTP/1.1 301 Moved Permanently\r\nLocation: http://[::1\r\nContent-Length: 0\r\n\r\n"), http.DefaultClient, "the answer is not valid HTTP"},
		{rawServer(t, "HTTP/1.1 302 Found\r\nLocation: https://x\x1b]0;pwned\x07/\r\nContent-Length: 0\r\n\r\n"), http.DefaultClient, "the answer is not valid HTTP"},
	} {
		var errOut bytes.Buffer
		env := stockctl.Env{Stdout: io.Discard, Stderr: &errOut, Getenv: func(string) string { return "" }, HTTP: c.client,
			LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) {
				return aws.Config{Region: "ap-east-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
					return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
				})}, nil
			},
		}
		code := stockctl.Run(context.Background(), []string{"--endpoint", c.endpoint, "get", "cup-01"}, env)
		want := "stockctl: cannot reach " + c.endpoint + ": " + c.reason + "\n"
		if code != stockctl.ExitUnreachable || errOut.String() != want {
			t.Errorf("%s: exit %d, err %q; want exit %d and %q", c.endpoint, code, errOut.String(), stockctl.ExitUnreachable, want)
		}
	}
}

// stockctl follows no redirect: Go's client would send a change's POST again as a GET
// after a 301 (a change turned into a read, reported done) or send it to another host
// after a 307. A redirect is one line naming where it pointed, exit 1, and nothing is
// sent to its target.
func TestRun_FollowsNoRedirect(t *testing.T) {
	var targetHits int
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { targetHits++ }))
	defer target.Close()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect} {
		var methods []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			methods = append(methods, r.Method)
			http.Redirect(w, r, target.URL+r.URL.Path, status)
		}))
		code, out, errOut := runWith([]string{"--endpoint", srv.URL, "--region", "ap-east-1", "off-sale", "cup-01"}, "", http.DefaultTransport)
		srv.Close()
		want := fmt.Sprintf("%d %s to %q: nothing was done", status, http.StatusText(status), target.URL+"/admin/skus/cup-01")
		if code != stockctl.ExitError || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 || len(methods) != 1 || targetHits != 0 {
			t.Errorf("%d: exit %d, out %q, err %q, requests %v, target hit %d times; want exit 1, one line with %q, one request, the target never", status, code, out, errOut, methods, targetHits, want)
		}
	}
}

// An answer cut short (the connection closed before the length it announced) is one
// line saying so with its status, not Go's "unexpected EOF"; after a 2xx to a change,
// that the API took it.
func TestRun_SaysAnAnswerCutShort(t *testing.T) {
	for _, c := range []struct {
		status int
		args   []string
		want   string
	}{
		{403, []string{"get", "cup-01"}, "stockctl: GET /admin/skus/cup-01: 403 Forbidden: the API's answer was cut short\n"},
		{500, []string{"get", "cup-01"}, "stockctl: GET /admin/skus/cup-01: 500 Internal Server Error: the API's answer was cut short\n"},
		{200, []string{"get", "cup-01"}, "stockctl: GET /admin/skus/cup-01: 200 OK: the API's answer was cut short\n"},
		{200, []string{"off-sale", "cup-01"},
			"stockctl: PATCH /admin/skus/cup-01: 200 OK: the API's answer was cut short: the API took the change; look with get or orders before sending it again\n"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(c.status)
			io.WriteString(w, `{"message":"Forbi`) // then the connection closes
		}))
		code, out, errOut := runWith(append([]string{"--endpoint", srv.URL, "--region", "ap-east-1"}, c.args...), "", http.DefaultTransport)
		srv.Close()
		if code != stockctl.ExitError || out != "" || errOut != c.want {
			t.Errorf("%d %q: exit %d, out %q, err %q; want exit %d and %q", c.status, c.args, code, out, errOut, stockctl.ExitError, c.want)
		}
	}
}

// With -o json an answer is printed only when it is JSON, and then with every control,
// format and separator character (and every invalid UTF-8 byte) as its JSON escape:
// the same JSON, nothing that acts on a terminal. An answer that is not JSON (a
// proxy's page, escape sequences after the JSON) or is larger than 16 MiB is refused,
// exit 1, never printed or cut to size and used.
func TestRun_JSONOutputIsJSONAndInertOnATerminal(t *testing.T) {
	big := `{"skuId":"cup-01","name":"` + strings.Repeat("x", 16<<20) + `"}`
	for _, c := range []struct {
		name, answer, want, err string
	}{
		{"escapes kept as JSON escapes", `{"skuId":"cup-01","name":"\u001b[2J"}`, `{"skuId":"cup-01","name":"\u001b[2J"}` + "\n", ""},
		{"raw bidi, zero-width, C1, separator", "{\"skuId\":\"cup-01\",\"name\":\"a\u202eb\u200bc\u009bd\u2028e\U000e0001\"}", `{"skuId":"cup-01","name":"a\u202eb\u200bc\u009bd\u2028e\udb40\udc01"}` + "\n", ""},
		{"invalid UTF-8", "{\"skuId\":\"cup-01\",\"name\":\"a\xffb\"}", `{"skuId":"cup-01","name":"a\ufffdb"}` + "\n", ""},
		{"white space around and inside", " {\n\t\"skuId\": \"cup-01\",\"name\": \"a\"\r\n}\n", "{\n\t\"skuId\": \"cup-01\",\"name\": \"a\"\r\n}\n", ""},
		{"an HTML page", "<html>\x1b]0;pwned\x07</html>", "", "stockctl: GET /admin/skus/cup-01: 200 OK: the answer is not the JSON this route gives: is the endpoint a stockguard API?\n"},
		{"escape sequences after the JSON", "{}\x1b[2J", "", "stockctl: GET /admin/skus/cup-01: 200 OK: the answer is not the JSON this route gives: is the endpoint a stockguard API?\n"},
		{"larger than 16 MiB", big, "", "stockctl: GET /admin/skus/cup-01: 200 OK: the answer is larger than 16 MiB, more than any route of the API gives\n"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, c.answer)
		}))
		code, out, errOut := runWith([]string{"--endpoint", srv.URL, "-o", "json", "get", "cup-01"}, "", http.DefaultTransport)
		srv.Close()
		wantCode := stockctl.ExitOK
		if c.err != "" {
			wantCode = stockctl.ExitError
		}
		if code != wantCode || out != c.want || errOut != c.err {
			t.Errorf("%s: exit %d, out %.200q, err %q; want exit %d, out %q, err %q", c.name, code, out, errOut, wantCode, c.want, c.err)
		}
		if c.err == "" {
			var before, after any
			if json.Unmarshal([]byte(c.answer), &before) != nil || json.Unmarshal([]byte(out), &after) != nil || !reflect.DeepEqual(before, after) {
				t.Errorf("%s: the output %q is not the answer's JSON %q", c.name, out, c.answer)
			}
		}
	}
}

// A 2xx answer of JSON null (or one of white space around it) is no route's answer:
// refused as not the route's JSON, exit 1, for a table (it would show an empty SKU) and
// for -o json alike.
func TestRun_AnAnswerOfNullIsNotTheRoutesJSON(t *testing.T) {
	const want = "the answer is not the JSON this route gives: is the endpoint a stockguard API?"
	for _, answer := range []string{"null", " null\n"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer)
		}))
		for _, args := range [][]string{{"get", "cup-01"}, {"-o", "json", "get", "cup-01"}} {
			code, out, errOut := runWith(append([]string{"--endpoint", srv.URL}, args...), "", http.DefaultTransport)
			if code != stockctl.ExitError || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%q, answer %q: exit %d, out %q, err %q; want exit 1 and one line ending %q", args, answer, code, out, errOut, want)
			}
		}
		srv.Close()
	}
}

// A 2xx JSON object without the route's own field (a proxy's {"error":"x"}, a SKU
// of null, a page without its list) is not the route's answer either: reconcile does
// not say the books balance, get and orders show no blank row, list no empty table,
// and adjust prints nothing applied; each exits 1 with one line.
func TestRun_AnObjectWithoutTheRoutesFieldIsNotItsJSON(t *testing.T) {
	const want = "the answer is not the JSON this route gives: is the endpoint a stockguard API?"
	for _, answer := range []string{`{"error":"x"}`, `{"skuId":null,"orderId":null,"skusChecked":null}`, `{"next":"x"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer)
		}))
		for _, args := range [][]string{{"reconcile"}, {"get", "cup-01"}, {"list"}, {"orders", "0123456789abcdef"},
			{"adjust", "cup-01", "--id", "z1", "--delta", "1", "--reason", "r"}} {
			code, out, errOut := runWith(append([]string{"--endpoint", srv.URL}, args...), "", http.DefaultTransport)
			if code != stockctl.ExitError || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%q, answer %s: exit %d, out %q, err %q; want exit 1 and one line with %q", args, answer, code, out, errOut, want)
			}
		}
		srv.Close()
	}
}

// A change whose request got no answer may have reached the API: the one line says
// so, with where to look; a read says only that the endpoint did not answer.
func TestRun_AChangeWithoutAnswerMayHaveBeenApplied(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the request read, no answer
		}
	}))
	defer srv.Close()
	for _, c := range []struct {
		args    []string
		applied bool
	}{
		{[]string{"get", "cup-01"}, false},
		{[]string{"off-sale", "cup-01"}, true},
		{[]string{"adjust", "cup-01", "--id", "a1", "--delta", "1", "--reason", "r"}, true},
	} {
		code, _, errOut := runWith(append([]string{"--endpoint", srv.URL}, c.args...), "", http.DefaultTransport)
		note := strings.Contains(errOut, "the change may have been applied: look with get or orders before sending it again")
		if code != stockctl.ExitUnreachable || note != c.applied || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, err %q; want exit %d, the note on a possible change %v", c.args, code, errOut, stockctl.ExitUnreachable, c.applied)
		}
	}
}

// An answer with a negative or null amount of money (a price, an order's amount, a
// line's unit price, a refund's amount), or a negative count of SKUs checked, is no
// answer of the API, whose prices are 1 fen or more: a table refuses it as not the
// route's JSON, exit 1, and never shows "¥0.-5", ¥0.00 or books that balance.
func TestRun_AnAnswerWithNegativeMoneyIsNotTheRoutesJSON(t *testing.T) {
	const want = "the answer is not the JSON this route gives: is the endpoint a stockguard API?\n"
	for _, c := range []struct {
		args   []string
		answer string
	}{
		{[]string{"get", "cup-01"}, `{"skuId":"cup-01","price":-5}`},
		{[]string{"list"}, `{"skus":[{"skuId":"cup-01","price":100},{"skuId":"cup-02","price":-5}]}`},
		{[]string{"orders", "0123456789abcdef"}, `{"orderId":"o1","amount":-5}`},
		{[]string{"orders", "0123456789abcdef"}, `{"orderId":"o1","amount":5,"items":[{"skuId":"cup-01","qty":1,"unitPrice":-5}]}`},
		{[]string{"orders", "0123456789abcdef"}, `{"orderId":"o1","amount":5,"refunds":[{"refundId":"r1","amount":-5}]}`},
		{[]string{"orders", "--status", "REFUNDING"}, `{"orders":[{"orderId":"o1","amount":-5}]}`},
		{[]string{"orders", "0123456789abcdef"}, `{"orderId":"0123456789abcdef","amount":null}`},
		{[]string{"get", "cup-01"}, `{"skuId":"cup-01","price":null}`},
		{[]string{"reconcile", "--latest"}, `{"skusChecked":-1}`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, c.answer)
		}))
		code, out, errOut := runWith(append([]string{"--endpoint", srv.URL}, c.args...), "", http.DefaultTransport)
		if code != stockctl.ExitError || out != "" || !strings.HasSuffix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q, answer %s: exit %d, out %q, err %q; want exit 1 and one line ending %q", c.args, c.answer, code, out, errOut, want)
		}
		srv.Close()
	}
}

// A status without a standard text (999, 599, 399) is said by its number and
// "unknown status", never a number followed by nothing.
func TestRun_SaysAStatusWithoutStandardTextAsUnknown(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{999, "", "stockctl: GET /admin/skus/cup-01: 999 unknown status\n"},
		{599, `{"message":"upstream gone"}`, "stockctl: GET /admin/skus/cup-01: 599 unknown status: API Gateway: upstream gone\n"},
		{499, `{"message":"Forbidden"}`, "stockctl: GET /admin/skus/cup-01: 499 unknown status: API Gateway: Forbidden\n"},
		{399, "", `stockctl: GET /admin/skus/cup-01: 399 unknown status without a Location (where it points): nothing was done`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		code, out, errOut := runWith([]string{"--endpoint", srv.URL, "get", "cup-01"}, "", http.DefaultTransport)
		srv.Close()
		if code != stockctl.ExitError || out != "" || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%d: exit %d, out %q, err %q; want exit 1 and %q", c.status, code, out, errOut, c.want)
		}
	}
}

// An answer that is not the route's JSON is said with the request's method and path,
// as the API's refusals are, in a table and with -o json alike, without its query,
// and with its status; a 2xx to a change (POST, PUT, PATCH) adds that the API took it,
// as a 2xx cut short does: it was done, whatever the answer says.
func TestRun_AnAnswerNotTheRoutesJSONNamesTheRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, "null")
	}))
	defer srv.Close()
	const not = "the answer is not the JSON this route gives: is the endpoint a stockguard API?"
	const took = ": the API took the change; look with get or orders before sending it again\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "cup-01"}, "stockctl: GET /admin/skus/cup-01: 200 OK: " + not + "\n"},
		{[]string{"list", "--after", "secret-cursor"}, "stockctl: GET /admin/skus: 200 OK: " + not + "\n"},
		{[]string{"orders", "--status", "REFUNDING"}, "stockctl: GET /admin/orders: 200 OK: " + not + "\n"},
		{[]string{"off-sale", "cup-01"}, "stockctl: PATCH /admin/skus/cup-01: 200 OK: " + not + took},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "1"}, "stockctl: POST /admin/skus: 201 Created: " + not + took},
		{[]string{"adjust", "a", "--id", "r1", "--delta", "1", "--reason", "r"}, "stockctl: POST /admin/skus/a/adjustments: 201 Created: " + not + took},
		{[]string{"refund", "o1", "--reason", "r"}, "stockctl: POST /admin/orders/o1/refund: 201 Created: " + not + took},
		{[]string{"reshard", "a", "--shards", "2"}, "stockctl: PUT /admin/skus/a/shards: 200 OK: " + not + took},
	} {
		for _, format := range []string{"table", "json"} {
			code, out, errOut := runWith(append([]string{"--endpoint", srv.URL, "-o", format}, c.args...), "", http.DefaultTransport)
			if code != stockctl.ExitError || out != "" || errOut != c.want {
				t.Errorf("-o %s %q: exit %d, out %q, err %q; want exit 1 and %q", format, c.args, code, out, errOut, c.want)
			}
		}
	}
}

// A region from the AWS configuration (AWS_REGION, AWS_DEFAULT_REGION, the profile)
// that is the one a request would be signed for is checked as --region is, whatever
// the endpoint: one not shaped as a region's name is exit 2, one line naming where it
// came from, its control characters not shown, nothing sent. (To a local endpoint
// with credentials it was signed and sent, or failed exit 5 with Go's "invalid header
// field value".)
func TestRun_RefusesAConfiguredRegionNotShapedAsOne(t *testing.T) {
	for _, endpoint := range []string{"http://127.0.0.1:3000", "http://localhost:3000", "https://api.shop.example.com"} {
		for _, region := range []string{"bad region", "us-east-1\x1b[31m", "us-east-1\n", "US-EAST-1"} {
			sent := 0
			code, out, errOut := runWith([]string{"--endpoint", endpoint, "get", "cup-01"}, region, roundTripFunc(func(*http.Request) (*http.Response, error) {
				sent++
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{"skuId":"cup-01"}`)), Header: http.Header{}}, nil
			}))
			if code != stockctl.ExitUsage || out != "" || sent != 0 || strings.Count(errOut, "\n") != 1 || strings.ContainsRune(errOut, 0x1b) || !strings.Contains(errOut, "AWS_REGION") {
				t.Errorf("%s, configured region %q: exit %d, out %q, %d sent, err %q; want exit 2, one line naming AWS_REGION, nothing sent", endpoint, region, code, out, sent, errOut)
			}
		}
	}
}

// A redirect's Location is quoted as an endpoint is: its user and password as xxxxx
// and its query as ?… (a presigned URL's signature, a token). A 3xx without one says
// it points nowhere, not `to ""` with the advice to give its URL.
func TestRun_SaysARedirectsTargetMasked(t *testing.T) {
	for _, c := range []struct {
		location string // "" for none
		want     string
		not      []string
	}{
		{"https://u:SECRETPW@host.example/prod?X-Amz-Signature=abc", `301 Moved Permanently to "https://xxxxx@host.example/prod?…": nothing was done`, []string{"SECRETPW", "X-Amz-Signature", "abc"}},
		{"https://host.example/prod#tok", `301 Moved Permanently to "https://host.example/prod#…"`, []string{"tok"}},
		{"//u:SECRETPW@evil.example/x", `301 Moved Permanently to "//xxxxx@evil.example/x"`, []string{"SECRETPW"}},
		{"", "301 Moved Permanently without a Location (where it points): nothing was done", []string{`to ""`, "give the API's own URL"}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if c.location != "" {
				w.Header().Set("Location", c.location)
			}
			w.WriteHeader(http.StatusMovedPermanently)
		}))
		code, out, errOut := runWith([]string{"--endpoint", srv.URL, "--region", "ap-east-1", "off-sale", "cup-01"}, "", http.DefaultTransport)
		srv.Close()
		if code != stockctl.ExitError || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("Location %q: exit %d, out %q, err %q; want exit 1, one line with %q", c.location, code, out, errOut, c.want)
		}
		for _, n := range c.not {
			if strings.Contains(errOut, n) {
				t.Errorf("Location %q: err %q shows %q", c.location, errOut, n)
			}
		}
	}
}
