package local

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

var fixedNow = time.Date(2024, 3, 12, 19, 3, 58, 123e6, time.UTC)

// fixedOptions makes request ids and times deterministic.
func fixedOptions() GatewayOptions {
	return GatewayOptions{
		NewRequestID: func() string { return "req-0001" },
		Now:          func() time.Time { return fixedNow },
	}
}

// invocation is what a test handler saw.
type invocation struct {
	function string
	event    events.APIGatewayV2HTTPRequest
	lambda   *lambdacontext.LambdaContext
}

// recordingHandler records each invocation in calls and answers resp.
func recordingHandler(function string, calls *[]invocation, resp events.APIGatewayV2HTTPResponse) lambda.Handler {
	return lambda.NewHandler(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		*calls = append(*calls, invocation{function: function, event: e, lambda: lc})
		return resp, nil
	})
}

// respondingHandler answers every request with resp and err.
func respondingHandler(resp events.APIGatewayV2HTTPResponse, err error) lambda.Handler {
	return lambda.NewHandler(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return resp, err
	})
}

var testRoutes = []Route{
	{Method: "POST", Path: "/orders", Function: "createOrder"},
	{Method: "GET", Path: "/orders/{orderId}", Function: "getOrder"},
	{Method: "GET", Path: "/orders/mine", Function: "listMyOrders"},
	{Method: "POST", Path: "/orders/{orderId}/cancel", Function: "closeOrder"},
	{Method: "GET", Path: "/skus/{skuId}", Function: "getSku", Public: true},
	{Method: "ANY", Path: "/static/{proxy+}", Function: "static", Public: true},
}

// recordingGateway serves testRoutes with handlers that record into calls.
func recordingGateway(calls *[]invocation, opts GatewayOptions) http.Handler {
	handlers := map[string]lambda.Handler{}
	for _, rt := range testRoutes {
		handlers[rt.Function] = recordingHandler(rt.Function, calls, events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK})
	}
	return NewGateway(testRoutes, handlers, opts)
}

// loggingGateway is recordingGateway with fixedOptions, logging JSON to the buffer
// it returns.
func loggingGateway(calls *[]invocation) (http.Handler, *bytes.Buffer) {
	logs := &bytes.Buffer{}
	opts := fixedOptions()
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	return recordingGateway(calls, opts), logs
}

// singleRouteGateway serves POST /things with h.
func singleRouteGateway(h lambda.Handler) http.Handler {
	return NewGateway([]Route{{Method: "POST", Path: "/things", Function: "things"}}, map[string]lambda.Handler{"things": h}, fixedOptions())
}

func serve1(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGateway_BuildsPayloadFormat2Event(t *testing.T) {
	t.Parallel()
	var calls []invocation
	gw := recordingGateway(&calls, fixedOptions())
	r := httptest.NewRequest("POST", "http://localhost:3000/orders/ord-123/cancel?lang=en&tag=a&tag=b", strings.NewReader(`{"reason":"changed my mind"}`))
	r.RemoteAddr = "192.0.2.10:51000"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("User-Agent", "test-agent/1.0")
	r.Header.Set("X-User-Id", "user-42")
	r.Header.Add("X-Trace", "one")
	r.Header.Add("X-Trace", "two")
	r.Header.Add("Cookie", "session=abc; theme=dark")

	w := serve1(gw, r)

	if w.Code != http.StatusOK || len(calls) != 1 {
		t.Fatalf("status %d, %d invocations; want 200 and 1", w.Code, len(calls))
	}
	raw, err := os.ReadFile("testdata/apigw-v2-cancel-order.json")
	if err != nil {
		t.Fatal(err)
	}
	var want events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if got := calls[0].event; !reflect.DeepEqual(got, want) {
		gotJSON, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("event differs from testdata/apigw-v2-cancel-order.json; got:\n%s", gotJSON)
	}
	if got := w.Header().Get("Apigw-Requestid"); got != "req-0001" {
		t.Errorf("apigw-requestid header = %q, want req-0001", got)
	}
	lc := calls[0].lambda
	if lc == nil || lc.AwsRequestID == "" || lc.InvokedFunctionArn != "arn:aws:lambda:us-east-1:000000000000:function:closeOrder" {
		t.Errorf("lambda context = %+v", lc)
	}
}

func TestGateway_MatchesRoutesLikeHTTPAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, target string
		wantFunction         string // "" for 404
		wantParams           map[string]string
		wantRawPath          string
	}{
		{"collection", "POST", "/orders", "createOrder", nil, "/orders"},
		{"path parameter", "GET", "/orders/ord-1", "getOrder", map[string]string{"orderId": "ord-1"}, "/orders/ord-1"},
		{"literal segment wins over parameter", "GET", "/orders/mine", "listMyOrders", nil, "/orders/mine"},
		{"escaped parameter is decoded", "GET", "/orders/a%20b", "getOrder", map[string]string{"orderId": "a b"}, "/orders/a%20b"},
		{"nested parameter", "POST", "/orders/ord-1/cancel", "closeOrder", map[string]string{"orderId": "ord-1"}, "/orders/ord-1/cancel"},
		{"greedy parameter", "GET", "/static/css/site.css", "static", map[string]string{"proxy": "css/site.css"}, "/static/css/site.css"},
		{"ANY matches every method", "DELETE", "/static/x", "static", map[string]string{"proxy": "x"}, "/static/x"},
		{"unknown path", "GET", "/nowhere", "", nil, ""},
		{"parameter spans one segment only", "GET", "/orders/ord-1/extra", "", nil, ""},
		{"method not routed", "DELETE", "/orders/ord-1", "", nil, ""},
		{"HEAD is not GET", "HEAD", "/orders/ord-1", "", nil, ""},
		{"empty parameter", "GET", "/skus/", "", nil, ""},
		{"empty segment", "POST", "/orders//cancel", "", nil, ""},
		{"empty first segment", "GET", "//orders/ord-1", "", nil, ""},
		{"dot segment", "GET", "/orders/./ord-1", "", nil, ""},
		{"dot-dot segment", "GET", "/orders/x/../ord-1", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls []invocation
			w := serve1(recordingGateway(&calls, fixedOptions()), httptest.NewRequest(tt.method, tt.target, nil))
			if tt.wantFunction == "" {
				if w.Code != http.StatusNotFound || w.Body.String() != `{"message":"Not Found"}` || len(calls) != 0 {
					t.Errorf("got %d %q with %d invocations, want 404 {\"message\":\"Not Found\"} and none", w.Code, w.Body, len(calls))
				}
				return
			}
			if len(calls) != 1 || calls[0].function != tt.wantFunction {
				t.Fatalf("status %d, invocations %+v; want one of %s", w.Code, calls, tt.wantFunction)
			}
			e := calls[0].event
			if !maps.Equal(e.PathParameters, tt.wantParams) || (e.PathParameters == nil) != (tt.wantParams == nil) {
				t.Errorf("pathParameters = %#v, want %#v", e.PathParameters, tt.wantParams)
			}
			if e.RawPath != tt.wantRawPath {
				t.Errorf("rawPath = %q, want %q", e.RawPath, tt.wantRawPath)
			}
		})
	}
}

func TestGateway_PutsXUserIDInSubClaimOnProtectedRoutesOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, target, userID string
		wantSub                      string // "" for no authorizer at all
	}{
		{"protected route with user", "GET", "/orders/ord-1", "user-42", "user-42"},
		{"protected route without user", "GET", "/orders/ord-1", "", ""},
		{"public route ignores user", "GET", "/skus/cup-01", "user-42", ""},
		{"public route without user", "GET", "/skus/cup-01", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls []invocation
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.userID != "" {
				r.Header.Set("X-User-Id", tt.userID)
			}
			serve1(recordingGateway(&calls, fixedOptions()), r)
			if len(calls) != 1 {
				t.Fatalf("%d invocations, want 1", len(calls))
			}
			auth := calls[0].event.RequestContext.Authorizer
			switch {
			case tt.wantSub == "" && auth != nil:
				t.Errorf("authorizer = %+v, want none", auth)
			case tt.wantSub != "" && (auth == nil || auth.JWT == nil || auth.JWT.Claims["sub"] != tt.wantSub):
				t.Errorf("authorizer = %+v, want jwt claim sub %q", auth, tt.wantSub)
			}
		})
	}
}

// An AWS_IAM route gets the IAM identity of the operator X-Operator-Id names (the
// local operator without it); a value that is not an IAM user name is refused 403
// before the function runs, as API Gateway refuses a request it cannot authorize.
func TestGateway_PutsXOperatorIDInIAMPrincipalOnIAMRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		operator, wantARN string
		wantStatus        int
	}{
		{"", LocalOperatorARN, http.StatusOK},
		{"alice@shop", "arn:aws:iam::" + AccountID + ":user/alice@shop", http.StatusOK},
		{"ops.team-1_b+c=d,e", "arn:aws:iam::" + AccountID + ":user/ops.team-1_b+c=d,e", http.StatusOK},
		{"a/b", "", http.StatusForbidden},
		{"with space", "", http.StatusForbidden},
		{strings.Repeat("x", 65), "", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.operator, func(t *testing.T) {
			t.Parallel()
			var calls []invocation
			gw := NewGateway([]Route{{Method: "POST", Path: "/admin/skus", Function: "admin", IAM: true}},
				map[string]lambda.Handler{"admin": recordingHandler("admin", &calls, events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK})}, fixedOptions())
			r := httptest.NewRequest("POST", "/admin/skus", strings.NewReader(`{}`))
			if tt.operator != "" {
				r.Header.Set(OperatorHeader, tt.operator)
			}
			w := serve1(gw, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tt.wantStatus)
			}
			if tt.wantStatus != http.StatusOK {
				if len(calls) != 0 || w.Body.String() != `{"message":"Forbidden"}` {
					t.Errorf("refused: %d invocations, body %s; want none, API Gateway's Forbidden", len(calls), w.Body)
				}
				return
			}
			if auth := calls[0].event.RequestContext.Authorizer; auth == nil || auth.IAM == nil || auth.IAM.UserARN != tt.wantARN || auth.JWT != nil {
				t.Errorf("authorizer %+v, want IAM userArn %s", auth, tt.wantARN)
			}
		})
	}
}

func TestGateway_EncodesNonTextRequestBodiesInBase64(t *testing.T) {
	t.Parallel()
	binary := []byte{0x89, 'P', 'N', 'G', 0, 0xff}
	tests := []struct {
		name, contentType string
		body              []byte
		wantBody          string
		wantBase64        bool
	}{
		{"json", "application/json", []byte(`{"a":1}`), `{"a":1}`, false},
		{"text with charset", "text/plain; charset=utf-8", []byte("hi"), "hi", false},
		{"json suffix", "application/vnd.api+json", []byte(`{}`), `{}`, false},
		{"binary", "image/png", binary, base64.StdEncoding.EncodeToString(binary), true},
		{"json, not UTF-8", "application/json", []byte("{\"a\":\"\xff\"}"), base64.StdEncoding.EncodeToString([]byte("{\"a\":\"\xff\"}")), true},
		{"form", "application/x-www-form-urlencoded", []byte("a=1"), "YT0x", true},
		{"no content type", "", []byte("raw"), "cmF3", true},
		{"empty body", "application/octet-stream", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls []invocation
			r := httptest.NewRequest("POST", "/orders", bytes.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			serve1(recordingGateway(&calls, fixedOptions()), r)
			if len(calls) != 1 {
				t.Fatalf("%d invocations, want 1", len(calls))
			}
			if e := calls[0].event; e.Body != tt.wantBody || e.IsBase64Encoded != tt.wantBase64 {
				t.Errorf("body %q base64 %v, want %q %v", e.Body, e.IsBase64Encoded, tt.wantBody, tt.wantBase64)
			}
		})
	}
}

func TestGateway_Base64BodyRoundTripsOverHTTP(t *testing.T) {
	t.Parallel()
	echo := lambda.NewHandler(func(_ context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{
			StatusCode:      http.StatusOK,
			Headers:         map[string]string{"Content-Type": e.Headers["content-type"]},
			Body:            e.Body,
			IsBase64Encoded: e.IsBase64Encoded,
		}, nil
	})
	srv := httptest.NewServer(singleRouteGateway(echo))
	defer srv.Close()
	payload := make([]byte, 256)
	for i := range payload {
		payload[i] = byte(i)
	}
	resp, err := http.Post(srv.URL+"/things", "application/octet-stream", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, payload) {
		t.Errorf("status %d, body %x; want 200 and the 256 bytes sent", resp.StatusCode, got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("content-type = %q", ct)
	}
}

func TestGateway_WritesFunctionResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		handler    lambda.Handler
		wantStatus int
		wantHeader http.Header
		wantBody   string
	}{
		{
			name: "status, headers, multi-value headers and cookies",
			handler: respondingHandler(events.APIGatewayV2HTTPResponse{
				StatusCode:        http.StatusCreated,
				Headers:           map[string]string{"Content-Type": "application/json", "Idempotent-Replayed": "true"},
				MultiValueHeaders: map[string][]string{"Vary": {"Accept", "Origin"}},
				Cookies:           []string{"a=1; Path=/", "b=2; HttpOnly"},
				Body:              `{"orderId":"ord-1"}`,
			}, nil),
			wantStatus: http.StatusCreated,
			wantHeader: http.Header{
				"Content-Type":        {"application/json"},
				"Idempotent-Replayed": {"true"},
				"Vary":                {"Accept", "Origin"},
				"Set-Cookie":          {"a=1; Path=/", "b=2; HttpOnly"},
			},
			wantBody: `{"orderId":"ord-1"}`,
		},
		{
			name: "base64 body is decoded",
			handler: respondingHandler(events.APIGatewayV2HTTPResponse{
				StatusCode:      http.StatusOK,
				Headers:         map[string]string{"Content-Type": "image/png"},
				Body:            base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff}),
				IsBase64Encoded: true,
			}, nil),
			wantStatus: http.StatusOK,
			wantHeader: http.Header{"Content-Type": {"image/png"}},
			wantBody:   string([]byte{0, 1, 2, 0xff}),
		},
		{
			name:       "empty body",
			handler:    respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: http.StatusNoContent}, nil),
			wantStatus: http.StatusNoContent,
		},
		{
			name: "payload without statusCode is a 200 JSON body",
			handler: lambda.NewHandler(func(context.Context, events.APIGatewayV2HTTPRequest) (map[string]bool, error) {
				return map[string]bool{"ok": true}, nil
			}),
			wantStatus: http.StatusOK,
			wantHeader: http.Header{"Content-Type": {"application/json"}},
			wantBody:   `{"ok":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := serve1(singleRouteGateway(tt.handler), httptest.NewRequest("POST", "/things", nil))
			if w.Code != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body, tt.wantStatus, tt.wantBody)
			}
			for name, want := range tt.wantHeader {
				if got := w.Header().Values(name); !reflect.DeepEqual(got, want) {
					t.Errorf("header %s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

func TestGateway_AnswersLikeAPIGatewayWhenTheFunctionFails(t *testing.T) {
	t.Parallel()
	const internal = `{"message":"Internal Server Error"}`
	tests := []struct {
		name       string
		handler    lambda.Handler
		body       io.Reader
		wantStatus int
		wantBody   string
	}{
		{"handler error", respondingHandler(events.APIGatewayV2HTTPResponse{}, errors.New("boom")), nil, http.StatusInternalServerError, internal},
		{"handler panic", lambda.NewHandler(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			panic("boom")
		}), nil, http.StatusInternalServerError, internal},
		{"status out of range", respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 0}, nil), nil, http.StatusInternalServerError, internal},
		{"invalid base64 body", respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "%%%", IsBase64Encoded: true}, nil), nil, http.StatusInternalServerError, internal},
		{"body over 10 MB", respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil), bytes.NewReader(make([]byte, MaxRequestBody+1)), http.StatusRequestEntityTooLarge, `{"message":"Request Entity Too Large"}`},
		{"body of exactly 10 MB", respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "ok"}, nil), bytes.NewReader(make([]byte, MaxRequestBody)), http.StatusOK, "ok"},
		{"body cut short", respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "ok"}, nil), cutBody(), http.StatusBadRequest, `{"message":"Bad Request"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/things", tt.body)
			r.Header.Set("Content-Type", "application/octet-stream")
			w := serve1(singleRouteGateway(tt.handler), r)
			if w.Code != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// cutBody is a request body whose client hung up mid-body, as net/http reads it.
func cutBody() io.Reader {
	return io.MultiReader(strings.NewReader(`{"items":[`), iotest.ErrReader(io.ErrUnexpectedEOF))
}

// A body cut short is the client's doing: the gateway's 400, logged at warn with why,
// never as the 500 of a failure (no ERROR line, the function not run).
func TestGateway_LogsABodyCutShortAsTheClientsWarning(t *testing.T) {
	t.Parallel()
	var calls []invocation
	gw, logs := loggingGateway(&calls)
	w := serve1(gw, httptest.NewRequest("POST", "/orders", cutBody()))
	var line struct {
		Level, Error string
		Status       int
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if w.Code != http.StatusBadRequest || len(calls) != 0 || line.Level != "WARN" || line.Status != http.StatusBadRequest || !strings.Contains(line.Error, "unexpected EOF") {
		t.Errorf("answer %d, %d invocations, log %+v; want 400, none, WARN 400 with the read error", w.Code, len(calls), line)
	}
}

func TestGateway_GivesEachRequestAUniqueID(t *testing.T) {
	t.Parallel()
	var calls []invocation
	gw := recordingGateway(&calls, GatewayOptions{})
	seen := map[string]bool{}
	for range 200 {
		w := serve1(gw, httptest.NewRequest("GET", "/skus/cup-01", nil))
		id := w.Header().Get("Apigw-Requestid")
		if len(id) != 16 || seen[id] {
			t.Fatalf("request id %q: want 16 characters, never repeated", id)
		}
		seen[id] = true
		if got := calls[len(calls)-1].event.RequestContext.RequestID; got != id {
			t.Fatalf("event requestId %q, header %q", got, id)
		}
	}
}

func TestGateway_LogsOneJSONLinePerRequest(t *testing.T) {
	t.Parallel()
	var calls []invocation
	gw, logs := loggingGateway(&calls)
	serve1(gw, httptest.NewRequest("GET", "/orders/ord-1", nil))
	serve1(gw, httptest.NewRequest("GET", "/nowhere", nil))

	type line struct {
		Msg        string `json:"msg"`
		RequestID  string `json:"requestId"`
		Method     string `json:"method"`
		Path       string `json:"path"`
		RouteKey   string `json:"routeKey"`
		Status     int    `json:"status"`
		DurationMs *int64 `json:"durationMs"`
	}
	var got []line
	for _, raw := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("log line %q is not JSON: %v", raw, err)
		}
		if l.DurationMs == nil || *l.DurationMs != 0 {
			t.Errorf("durationMs = %v, want 0 with a fixed clock", l.DurationMs)
		}
		l.DurationMs = nil
		got = append(got, l)
	}
	want := []line{
		{Msg: "request", RequestID: "req-0001", Method: "GET", Path: "/orders/ord-1", RouteKey: "GET /orders/{orderId}", Status: 200},
		{Msg: "request", RequestID: "req-0001", Method: "GET", Path: "/nowhere", RouteKey: "", Status: 404},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log lines = %+v, want %+v", got, want)
	}
}

func TestNewGateway_PanicsOnConfigurationErrors(t *testing.T) {
	t.Parallel()
	ok := respondingHandler(events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil)
	tests := []struct {
		name   string
		routes []Route
	}{
		{"missing handler", []Route{{Method: "GET", Path: "/a", Function: "nobody"}}},
		{"unknown method", []Route{{Method: "FETCH", Path: "/a", Function: "f"}}},
		{"relative path", []Route{{Method: "GET", Path: "a", Function: "f"}}},
		{"same route twice", []Route{{Method: "GET", Path: "/a/{x}", Function: "f"}, {Method: "GET", Path: "/a/{y}", Function: "f"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Error("NewGateway did not panic")
				}
			}()
			NewGateway(tt.routes, map[string]lambda.Handler{"f": ok}, GatewayOptions{})
		})
	}
}

// An identity header sent twice (two tokens, two X-User-Id, two X-Operator-Id) names
// nobody: API Gateway's authorizer sees the values joined by a comma, which no token
// or signature is. Refused before the function runs.
func TestGateway_RefusesAnIdentityHeaderSentTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, target, header string
		want                   int
	}{
		{"GET", "/orders/ord-1", "X-User-Id", http.StatusUnauthorized},
		{"GET", "/orders/ord-1", "Authorization", http.StatusUnauthorized},
		{"POST", "/admin/skus", OperatorHeader, http.StatusForbidden},
	} {
		var calls []invocation
		gw := NewGateway([]Route{{Method: "GET", Path: "/orders/{orderId}", Function: "f"}, {Method: "POST", Path: "/admin/skus", Function: "f", IAM: true}},
			map[string]lambda.Handler{"f": recordingHandler("f", &calls, events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK})}, fixedOptions())
		r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(`{}`))
		r.Header.Add(tc.header, "alice")
		r.Header.Add(tc.header, "bob")
		if w := serve1(gw, r); w.Code != tc.want || len(calls) != 0 {
			t.Errorf("%s twice on %s: %d with %d invocations, want %d and none", tc.header, tc.target, w.Code, len(calls), tc.want)
		}
	}
}
