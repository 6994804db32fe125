package local

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// A request whose request line and header values come to MaxRequestHead bytes reaches
// the function; one byte more is answered 431 with API Gateway's JSON message, the
// function not invoked (HTTP API quotas: "Total combined size of request line and
// header values", 10240 bytes).
func TestGateway_RefusesARequestHeadOverTheQuota(t *testing.T) {
	t.Parallel()
	var calls []invocation
	gw := recordingGateway(&calls, fixedOptions())
	pad := func(n int) *http.Request {
		r := httptest.NewRequest("GET", "/skus/cup-01", nil)
		r.Header.Set("Ticket-Token", "")
		r.Header.Set("Ticket-Token", strings.Repeat("t", n-requestHeadSize(r)))
		return r
	}
	if w := serve1(gw, pad(MaxRequestHead)); w.Code != http.StatusOK || len(calls) != 1 {
		t.Fatalf("a head of exactly %d bytes: %d with %d invocations, want 200 and 1", MaxRequestHead, w.Code, len(calls))
	}
	w := serve1(gw, pad(MaxRequestHead+1))
	if w.Code != http.StatusRequestHeaderFieldsTooLarge || w.Body.String() != `{"message":"Request Header Fields Too Large"}` ||
		w.Header().Get("Apigw-Requestid") == "" || len(calls) != 1 {
		t.Errorf("a byte over: %d %q with %d invocations, want 431 and no new one", w.Code, w.Body, len(calls))
	}
}

// Over a real connection to the server cmd/local runs, a 2 MB header (more than
// net/http reads by default) is answered 431 by the gateway, not a closed connection.
func TestNewAPIServer_AnswersAHugeHeader431(t *testing.T) {
	t.Parallel()
	srv := NewAPIServer(singleRouteGateway(respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	req, err := http.NewRequestWithContext(context.Background(), "POST", "http://"+ln.Addr().String()+"/things", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ticket-Token", strings.Repeat("t", 2<<20))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a 2 MB header: %v, want a 431 answer", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || string(body) != `{"message":"Request Header Fields Too Large"}` ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a 2 MB header: %d %s %q, want 431 with API Gateway's JSON message", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}
