package local

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/uuid"

	"github.com/stockguard/stockguard/tools/internal/apigw"
)

// MaxRequestBody is the largest request body the gateway accepts, in bytes: the
// HTTP API's "Payload size" quota, 10 MB ("Quotas for configuring and running an HTTP
// API in API Gateway",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html),
// read as the stricter 10,000,000 bytes rather than 10 MiB, so that the local gateway
// is never kinder than the real one. Larger bodies are answered 413 {"message":
// "Request Entity Too Large"} and no function is invoked; each function refuses a body
// above its own, far smaller, limit itself (413 PAYLOAD_TOO_LARGE, httpapi.Body).
const MaxRequestBody = 10_000_000

// MaxRequestHead is the most bytes of request line and header values a request may
// carry: the HTTP API's "Total combined size of request line and header values"
// quota, 10240 bytes (the same page as MaxRequestBody). The gateway answers a request
// over it 431 {"message":"Request Header Fields Too Large"} (RFC 6585 §5; the quota
// page gives the limit, not the status) before routing it: no function is invoked.
// It counts as requestHeadSize does.
const MaxRequestHead = 10240

// MaxHeaderBytes is how much of a request's head NewAPIServer's server reads
// (http.Server.MaxHeaderBytes, 16 MiB): enough that a head far over MaxRequestHead
// (a 2 MB header) still reaches the gateway and gets its 431 answer, where net/http's
// default (1 MiB) would answer a plain-text 431 and hang up while the client is still
// sending, which the client sees as a closed connection. A head over 16 MiB gets that.
const MaxHeaderBytes = 16 << 20

// NewAPIServer returns the http.Server that serves the local API h to clients: a
// client gets 10 s to send its headers and 30 s for the whole request (headers and
// body), so that a slow sender on an exposed listener holds no connection for long
// (API Gateway answers within its 30 s integration timeout too), and up to
// MaxHeaderBytes of head is read so that the gateway answers an over-quota head itself.
func NewAPIServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: MaxHeaderBytes}
}

// Route maps an HTTP API route to a function, as in an AWS SAM template:
// Method is GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS or ANY; Path is a
// route path such as "/orders/{orderId}", where "{name}" matches exactly one
// non-empty path segment and a final "{name+}" matches the rest of the path;
// Function is the key of the route's handler in the handlers map given to
// NewGateway. Public routes have no authorizer (like a route with
// Auth: {Authorizer: NONE}); the others get a JWT-authorizer-like identity.
type Route struct {
	Method   string
	Path     string
	Function string
	Public   bool
	IAM      bool // AWS_IAM authorization: gets the local operator's identity (X-Operator-Id, see localIAMAuthorizer)
}

// routeKey returns the route key API Gateway reports, e.g. "POST /orders".
func (r Route) routeKey() string { return r.Method + " " + r.Path }

// GatewayOptions configures NewGateway. The zero value is ready to use.
type GatewayOptions struct {
	// AccountID is requestContext.accountId; default AccountID.
	AccountID string
	// APIID is requestContext.apiId; default "local".
	APIID string
	// NewRequestID returns requestContext.requestId (also the
	// "apigw-requestid" response header); it must be unique per request.
	// Default: 16 characters of base64 from 11 random bytes, the shape API
	// Gateway uses.
	NewRequestID func() string
	// Now is the clock for requestContext.time and timeEpoch and for access
	// log durations; default time.Now.
	Now func() time.Time
	// Logger, when set, gets one Info record per request, message "request",
	// with requestId, method, path, routeKey ("" when no route matched),
	// status, durationMs and orderId (the {orderId} path parameter or the
	// orderId of the function's JSON answer; "" for none). Give it a
	// slog.JSONHandler for JSON lines, a ConsoleHandler for a terminal.
	Logger *slog.Logger
	// Authorizer, when set, plays the HTTP API's JWT authorizer (apigw.JWTAuthorizer,
	// identity source the Authorization header): on a non-public route a request must
	// carry a token it accepts (else 401 {"message":"Unauthorized"}, the function not
	// invoked), and the token's claims become requestContext.authorizer.jwt.claims. A
	// request sent from this machine without an Authorization header is the exception
	// (see NewGateway).
	Authorizer *apigw.JWTAuthorizer
}

// gateway is the http.Handler NewGateway returns.
type gateway struct {
	mux  *http.ServeMux
	opts GatewayOptions
}

// NewGateway returns an http.Handler that plays an API Gateway HTTP API with
// Lambda proxy integrations (payload format 2.0, per the API Gateway
// developer guide, "Create AWS Lambda proxy integrations for HTTP APIs").
// For each request it:
//   - answers 431 a request whose request line and header values are over
//     MaxRequestHead bytes, the HTTP API's quota;
//   - matches method and path against routes (a literal segment wins over a
//     "{param}"); no match answers 404 {"message":"Not Found"};
//   - reads at most MaxRequestBody bytes, else answers 413;
//   - builds an events.APIGatewayV2HTTPRequest as API Gateway does: header
//     names lower-cased and repeated values joined with ",", Cookie headers
//     moved to cookies, query values joined with ",", path parameters,
//     requestContext with a unique requestId, stage "$default", time in
//     "02/Jan/2006:15:04:05 -0700" form and timeEpoch in ms; a body whose
//     Content-Type is not text (text/*, JSON, XML, JavaScript) is base64
//     encoded with isBase64Encoded true, and so is a text body that is not
//     valid UTF-8;
//   - identity: on a non-public route, the Authorization header is checked by the
//     Authorizer as the HTTP API's JWT authorizer checks it, its claims passed on,
//     a refused or missing token answered 401 without invoking the function; a
//     request sent from this machine without an Authorization header is the one
//     exception (a local-only shortcut): a non-empty X-User-Id header becomes
//     requestContext.authorizer.jwt.claims.sub, and without it the event has no
//     authorizer and the function decides; public routes never get claims; an
//     AWS_IAM route gets the IAM identity of the operator its X-Operator-Id header
//     names (see OperatorHeader; a value that is not an IAM user name is answered
//     403); a request from another machine gets neither shortcut (see
//     Stack.ExposedAPI);
//   - invokes the route's handler with the event's JSON and a
//     lambdacontext.LambdaContext (AwsRequestID, InvokedFunctionArn);
//   - writes the response: statusCode, headers, multiValueHeaders, cookies
//     as Set-Cookie headers, body (base64-decoded when isBase64Encoded), and
//     an "apigw-requestid" header. A payload without statusCode is sent as
//     200 application/json with the payload as body, as API Gateway infers.
//     A handler error or panic, or a response that cannot be decoded,
//     answers 500 {"message":"Internal Server Error"}.
//
// A path that is not clean (an empty, "." or ".." segment, as in "/orders//cancel")
// matches no route and answers 404 like any unmatched path, as API Gateway does,
// rather than http.ServeMux's redirect to the cleaned path.
//
// NewGateway panics, like http.ServeMux.Handle, on a configuration error: a
// route whose Function has no handler, an unknown Method, a Path not
// starting with "/", or two routes with the same method and path.
func NewGateway(routes []Route, handlers map[string]lambda.Handler, opts GatewayOptions) http.Handler {
	g := &gateway{mux: http.NewServeMux(), opts: withGatewayDefaults(opts)}
	g.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeGatewayError(w, http.StatusNotFound)
	})
	for _, rt := range routes {
		h, ok := handlers[rt.Function]
		if !ok {
			panic(fmt.Sprintf("local: route %s: no handler for function %q", rt.routeKey(), rt.Function))
		}
		g.mux.Handle(servePattern(rt), g.invoker(rt, h))
	}
	return g
}

// withGatewayDefaults fills the zero fields of opts.
func withGatewayDefaults(opts GatewayOptions) GatewayOptions {
	if opts.AccountID == "" {
		opts.AccountID = AccountID
	}
	if opts.APIID == "" {
		opts.APIID = "local"
	}
	if opts.NewRequestID == nil {
		opts.NewRequestID = randomRequestID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts
}

// randomRequestID returns 11 random bytes in standard base64 (16 characters).
func randomRequestID() string {
	b := make([]byte, 11)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes instead)
	return base64.StdEncoding.EncodeToString(b)
}

// servePattern translates a route to an http.ServeMux pattern: "ANY" drops
// the method and a greedy "{name+}" becomes "{name...}".
func servePattern(rt Route) string {
	switch rt.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "ANY":
	default:
		panic(fmt.Sprintf("local: route %s: unknown method %q", rt.routeKey(), rt.Method))
	}
	if !strings.HasPrefix(rt.Path, "/") {
		panic(fmt.Sprintf("local: route %s: path must start with /", rt.routeKey()))
	}
	path := strings.TrimSuffix(rt.Path, "+}")
	if path != rt.Path {
		path += "...}"
	}
	if rt.Method == "ANY" {
		return path
	}
	return rt.Method + " " + path
}

// pathParamNames returns the parameter names of a route path, in order.
func pathParamNames(path string) []string {
	var names []string
	for seg := range strings.SplitSeq(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.Trim(seg, "{}"), "+"))
		}
	}
	return names
}

// ServeHTTP routes the request and writes one access log record.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := g.opts.Now()
	rec := &statusRecorder{ResponseWriter: w, requestID: g.opts.NewRequestID()}
	rec.Header().Set("Apigw-Requestid", rec.requestID)
	switch {
	case requestHeadSize(r) > MaxRequestHead:
		writeGatewayError(rec, http.StatusRequestHeaderFieldsTooLarge)
	case cleanPath(r.URL.EscapedPath()):
		g.mux.ServeHTTP(rec, r)
	default:
		writeGatewayError(rec, http.StatusNotFound)
	}
	if g.opts.Logger != nil {
		level, attrs := slog.LevelInfo, []slog.Attr{
			slog.String("requestId", rec.requestID),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("routeKey", rec.routeKey),
			slog.Int("status", rec.status),
			slog.Int64("durationMs", g.opts.Now().Sub(start).Milliseconds()),
			slog.String("orderId", rec.orderID),
		}
		if rec.unread != nil { // the client's fault: warned, never an error of the stack
			level, attrs = slog.LevelWarn, append(attrs, slog.String("error", "the request body could not be read (the client hung up or sent it malformed): "+rec.unread.Error()))
		}
		g.opts.Logger.LogAttrs(r.Context(), level, "request", attrs...)
	}
}

// requestHeadSize is the bytes of r's request line ("METHOD target PROTO") and of its
// header values, Host and Cookie included, names not (MaxRequestHead's quota counts
// "request line and header values").
func requestHeadSize(r *http.Request) int {
	n := len(r.Method) + 1 + len(cmp.Or(r.RequestURI, r.URL.RequestURI())) + 1 + len(r.Proto) + len(r.Host)
	for _, values := range r.Header {
		for _, v := range values {
			n += len(v)
		}
	}
	return n
}

// cleanPath reports whether p has no empty, "." or ".." segment (a final "/" aside):
// the paths http.ServeMux serves without redirecting.
func cleanPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// statusRecorder is the ResponseWriter route handlers get: it carries the
// request id and remembers the matched route key and the status written,
// for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status    int
	requestID string
	routeKey  string
	orderID   string // the order the request names or created; "" for none
	unread    error  // why the request body could not be read; nil when it was
}

// WriteHeader records the status and writes it.
func (s *statusRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

// Unwrap returns the underlying ResponseWriter (for http.ResponseController).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Write records an implicit 200 and writes b.
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// invoker returns the handler of one route.
func (g *gateway) invoker(rt Route, h lambda.Handler) http.Handler {
	params := pathParamNames(rt.Path)
	arn := fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, g.opts.AccountID, rt.Function)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := w.(*statusRecorder) // set by ServeHTTP
		// http.ServeMux lets a GET pattern match HEAD; API Gateway does not.
		if rt.Method != "ANY" && rt.Method != r.Method {
			writeGatewayError(w, http.StatusNotFound)
			return
		}
		rec.routeKey = rt.routeKey()
		auth, refused := g.identity(r, rt)
		if refused != 0 {
			writeGatewayError(w, refused)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
		if err != nil {
			rec.unread = err
			writeGatewayError(w, readErrorStatus(err))
			return
		}
		event := g.event(r, rt, params, body, rec.requestID)
		event.RequestContext.Authorizer = auth
		ctx := lambdacontext.NewContext(r.Context(), &lambdacontext.LambdaContext{
			AwsRequestID:       uuid.NewString(),
			InvokedFunctionArn: arn,
		})
		payload, err := invoke(ctx, h, event)
		if err != nil {
			writeGatewayError(w, http.StatusInternalServerError)
			return
		}
		rec.orderID = cmp.Or(r.PathValue("orderId"), orderIDIn(payload))
		if err := writeFunctionResponse(w, payload); err != nil {
			writeGatewayError(w, http.StatusInternalServerError)
		}
	})
}

// readErrorStatus maps a request body read error to the gateway's status: 413 for a
// body over MaxRequestBody, else 400, the client's fault (it hung up mid-body, or sent
// a malformed chunked body): no failure of the stack.
func readErrorStatus(err error) int {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// writeGatewayError writes the response API Gateway HTTP APIs give when
// they, not the function, answer: 400, 401, 403, 404, 413, 431 or 500 with a JSON message.
func writeGatewayError(w http.ResponseWriter, status int) {
	body := `{"message":"Internal Server Error"}`
	switch status {
	case http.StatusBadRequest:
		body = `{"message":"Bad Request"}`
	case http.StatusNotFound:
		body = `{"message":"Not Found"}`
	case http.StatusUnauthorized:
		body = `{"message":"Unauthorized"}`
	case http.StatusForbidden:
		body = `{"message":"Forbidden"}`
	case http.StatusRequestEntityTooLarge:
		body = `{"message":"Request Entity Too Large"}`
	case http.StatusRequestHeaderFieldsTooLarge:
		body = `{"message":"Request Header Fields Too Large"}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// invoke marshals the event, calls the handler and turns a panic into an
// error, as the Lambda runtime reports a panicking function as failed.
func invoke(ctx context.Context, h lambda.Handler, event any) (payload []byte, err error) {
	in, err := json.Marshal(event)
	if err != nil {
		return nil, fmt.Errorf("marshal event: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("function panicked: %v", p)
		}
	}()
	return h.Invoke(ctx, in)
}

// event builds the payload format 2.0 event for r matched by rt.
func (g *gateway) event(r *http.Request, rt Route, params []string, body []byte, requestID string) events.APIGatewayV2HTTPRequest {
	now := g.opts.Now().UTC()
	host := hostName(r.Host)
	e := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              rt.routeKey(),
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               requestCookies(r.Header),
		Headers:               eventHeaders(r),
		QueryStringParameters: joinValues(r.URL.Query()),
		PathParameters:        pathParams(r, params),
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     rt.routeKey(),
			AccountID:    g.opts.AccountID,
			Stage:        "$default",
			RequestID:    requestID,
			APIID:        g.opts.APIID,
			DomainName:   host,
			DomainPrefix: strings.Split(host, ".")[0],
			Time:         now.Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.EscapedPath(),
				Protocol:  r.Proto,
				SourceIP:  hostName(r.RemoteAddr),
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		e.Body, e.IsBase64Encoded = encodeBody(r.Header.Get("Content-Type"), body)
	}
	return e
}

// identity is the authorizer part of the event for r on rt (see NewGateway), and the
// status of the gateway's refusal, 0 for none: 401 when the JWT authorizer refuses the
// Authorization header (or there is none and the request is not from this machine),
// 403 when an AWS_IAM route's X-Operator-Id is not an IAM user name or its
// Authorization header is not SigV4 (notSigV4). A request from
// another machine (see Stack.ExposedAPI) gets no local shortcut: its X-User-Id is not
// read, and an AWS_IAM route is refused 403.
func (g *gateway) identity(r *http.Request, rt Route) (*events.APIGatewayV2HTTPRequestContextAuthorizerDescription, int) {
	network := fromNetwork(r.Context())
	// A header sent twice reaches API Gateway's authorizer as the two values joined
	// with a comma (payload format 2.0), which no token or signature is; the local
	// identity headers sent twice name nobody either.
	twice := len(r.Header.Values("Authorization")) > 1 || len(r.Header.Values("X-User-Id")) > 1 || len(r.Header.Values(OperatorHeader)) > 1
	switch {
	case twice && rt.IAM:
		return nil, http.StatusForbidden
	case twice && !rt.Public:
		return nil, http.StatusUnauthorized
	case rt.IAM && network:
		return nil, http.StatusForbidden // no IAM here to verify a SigV4 signature with
	case rt.IAM && notSigV4(r.Header.Get("Authorization")):
		return nil, http.StatusForbidden // a bearer token (a buyer's, a staff member's) is no signature
	case rt.IAM:
		if auth, ok := localIAMAuthorizer(r.Header.Get(OperatorHeader)); ok {
			return auth, 0
		}
		return nil, http.StatusForbidden
	case rt.Public:
		return nil, 0
	}
	token := r.Header.Get("Authorization")
	switch {
	case !network && (token == "" || g.opts.Authorizer == nil):
		return localAuthorizer(r.Header.Get("X-User-Id")), 0
	case g.opts.Authorizer == nil:
		return nil, http.StatusUnauthorized // nothing here can check a token
	}
	claims, err := g.opts.Authorizer.Authorize(r.Context(), token)
	if err != nil {
		return nil, http.StatusUnauthorized
	}
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims},
	}, 0
}

// notSigV4 reports whether authorization, an Authorization header, is present and not
// a SigV4 one ("AWS4-HMAC-SHA256 Credential=…": Signature Version 4, "Create a signed
// AWS API request"). API Gateway's AWS_IAM authorization answers such a request 403
// ("Control access to HTTP APIs with IAM authorization"), so a token meant for a JWT
// authorizer never reaches a merchant route of HttpApi; locally an unsigned request
// (no header) keeps the X-Operator-Id shortcut, and stockctl's signed ones pass.
func notSigV4(authorization string) bool {
	return authorization != "" && !strings.HasPrefix(authorization, "AWS4-HMAC-SHA256 ")
}

// localAuthorizer returns what a JWT authorizer would put in the event for
// a token whose sub claim is userID, or nil for no identity.
func localAuthorizer(userID string) *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
	// A JWT's claims are JSON, so a sub is valid UTF-8; other bytes would be
	// mangled into U+FFFD on the way to the function, merging distinct users.
	if userID == "" || !utf8.ValidString(userID) {
		return nil
	}
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{
			Claims: map[string]string{"sub": userID},
		},
	}
}

// hostName returns hostport without its port, if it has one.
func hostName(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return hostport
}

// eventHeaders returns r's headers with lower-case names and repeated values
// joined with ",", without Cookie (moved to cookies), with host and the
// x-forwarded-* headers API Gateway adds.
func eventHeaders(r *http.Request) map[string]string {
	h := make(map[string]string, len(r.Header)+4)
	for name, values := range r.Header {
		if name != "Cookie" {
			h[strings.ToLower(name)] = strings.Join(values, ",")
		}
	}
	h["host"] = r.Host
	client := hostName(r.RemoteAddr)
	if prior := h["x-forwarded-for"]; prior != "" {
		client = prior + ", " + client
	}
	h["x-forwarded-for"] = client
	h["x-forwarded-proto"], h["x-forwarded-port"] = "http", "80"
	if r.TLS != nil {
		h["x-forwarded-proto"], h["x-forwarded-port"] = "https", "443"
	}
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		h["x-forwarded-port"] = port
	}
	return h
}

// requestCookies returns each "name=value" pair of the Cookie headers, or
// nil when there is none.
func requestCookies(h http.Header) []string {
	var cookies []string
	for _, line := range h.Values("Cookie") {
		for c := range strings.SplitSeq(line, ";") {
			if c = strings.TrimSpace(c); c != "" {
				cookies = append(cookies, c)
			}
		}
	}
	return cookies
}

// joinValues joins each key's values with ","; nil when there are none.
func joinValues(values map[string][]string) map[string]string {
	if len(values) == 0 {
		return nil
	}
	joined := make(map[string]string, len(values))
	for k, v := range values {
		joined[k] = strings.Join(v, ",")
	}
	return joined
}

// pathParams returns the values of the named path parameters; nil for none.
func pathParams(r *http.Request, names []string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	params := make(map[string]string, len(names))
	for _, name := range names {
		params[name] = r.PathValue(name)
	}
	return params
}

// encodeBody returns the body as the event carries it: as is for text
// content types, base64 for anything else (binary, forms, no type) and for a
// text body that is not valid UTF-8, which a JSON event string cannot carry
// unchanged (encoding/json would turn its bytes into U+FFFD).
func encodeBody(contentType string, body []byte) (string, bool) {
	if isTextMediaType(contentType) && utf8.Valid(body) {
		return string(body), false
	}
	return base64.StdEncoding.EncodeToString(body), true
}

// isTextMediaType reports whether a Content-Type value names text: text/*,
// application/json, application/xml, application/javascript, and the
// +json and +xml structured syntax suffixes.
func isTextMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}

// writeFunctionResponse writes a function's payload format 2.0 response, or
// returns an error, having written nothing, when the payload is not one.
func writeFunctionResponse(w http.ResponseWriter, payload []byte) error {
	resp, err := decodeFunctionResponse(payload)
	if err != nil {
		return err
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("decode base64 body: %w", err)
		}
	}
	for name, value := range resp.Headers {
		w.Header().Set(name, value)
	}
	for name, values := range resp.MultiValueHeaders {
		for _, v := range values {
			w.Header().Add(name, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	w.WriteHeader(resp.StatusCode)
	if len(body) > 0 {
		_, _ = w.Write(body) // an error here means the client went away
	}
	return nil
}

// orderIDIn returns the orderId of a function response's JSON body (POST /orders
// answers the order it created), or "".
func orderIDIn(payload []byte) string {
	resp, err := decodeFunctionResponse(payload)
	if err != nil || resp.IsBase64Encoded {
		return ""
	}
	var body struct {
		OrderID string `json:"orderId"`
	}
	_ = json.Unmarshal([]byte(resp.Body), &body) // not every body is an order
	return body.OrderID
}

// decodeFunctionResponse reads a function's payload. A JSON object with a
// statusCode is a response; any other valid JSON is the body of a 200
// application/json response, as API Gateway infers for payload format 2.0.
func decodeFunctionResponse(payload []byte) (events.APIGatewayV2HTTPResponse, error) {
	var probe struct {
		StatusCode *int `json:"statusCode"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil || probe.StatusCode == nil {
		if !json.Valid(payload) {
			return events.APIGatewayV2HTTPResponse{}, errors.New("function response is not JSON")
		}
		return events.APIGatewayV2HTTPResponse{
			StatusCode: http.StatusOK,
			Headers:    map[string]string{"Content-Type": "application/json"},
			Body:       string(payload),
		}, nil
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		return resp, fmt.Errorf("decode function response: %w", err)
	}
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return resp, fmt.Errorf("function response status %d out of range", resp.StatusCode)
	}
	return resp, nil
}
