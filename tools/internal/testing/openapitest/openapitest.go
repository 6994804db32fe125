// Package openapitest checks HTTP traffic in tests against stockguard's OpenAPI
// document (package openapi), as net/http/httptest serves it: a Checker wraps an
// http.Handler, validates every request it is sent and every response the handler
// writes with kin-openapi's openapi3filter, and fails the test on any mismatch. Like
// a validating proxy, it requires each request to carry what one of its operation's
// security schemes names (a header, not a valid signature or token). A
// test that means to send a request the contract forbids marks it with
// OutsideContract: the request is then not checked, its response still is.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/stockguard/stockguard/tools/internal/openapi"
)

// Checker validates traffic against the document and reports mismatches to its test.
// It is safe for concurrent use.
type Checker struct {
	t         testing.TB
	doc       *openapi3.T
	router    routers.Router
	requests  atomic.Int64
	responses atomic.Int64
}

// New loads the document (failing t when it does not load or is not valid) and
// returns a Checker reporting to t.
func New(t testing.TB) *Checker {
	t.Helper()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Routes are matched by path alone: tests reach the API on any host and port.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &Checker{t: t, doc: doc, router: router}
}

// Checked returns how many requests and responses c has validated (requests marked
// OutsideContract are not counted; their responses are).
func (c *Checker) Checked() (requests, responses int64) {
	return c.requests.Load(), c.responses.Load()
}

type outsideKey struct{}

// OutsideContract marks the requests made with the returned context as deliberately
// outside the contract (a bad body, a malformed id; why says how): a Checker then
// does not check the request, and still checks the response against the document
// (the route's, or API Gateway's 404 for a route the document does not have).
func OutsideContract(ctx context.Context, why string) context.Context {
	return context.WithValue(ctx, outsideKey{}, why)
}

// Wrap returns a handler that serves with h and checks each exchange: the request
// (unless marked OutsideContract), then the response
// (its status must be one the operation documents, with the headers and body
// documented for it). Mismatches fail the test with t.Errorf.
func (c *Checker) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			c.t.Errorf("openapi: %s %s: read the request body: %v", r.Method, r.URL.Path, err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if err := c.Check(r, body, rec.Result()); err != nil {
			c.t.Errorf("openapi: %v", err)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// Check validates one exchange: the request r with its body (r.Body is not read) and
// the response resp. It returns an error describing every mismatch, nil when the
// exchange is one the document allows (for a request marked OutsideContract: when
// the document allows the response).
func (c *Checker) Check(r *http.Request, body []byte, resp *http.Response) error {
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the response body: %w", r.Method, r.URL.Path, err)
	}
	_, outside := r.Context().Value(outsideKey{}).(string)
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if req.Header.Get("Content-Type") == "" {
		// The functions read every body as JSON, whatever its Content-Type says.
		req.Header.Set("Content-Type", "application/json")
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if !outside {
			return fmt.Errorf("%s %s: no such route in the document: %w", r.Method, r.URL.Path, err)
		}
		return c.checkGatewayAnswer(r, resp.StatusCode, respBody)
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{
			AuthenticationFunc: authenticate, SkipSettingDefaults: true,
			RejectWhenRequestBodyNotSpecified: true, MultiError: true,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.EnableFormatValidation()},
		},
	}
	var errs []error
	if !outside {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			errs = append(errs, fmt.Errorf("request: %w", err))
		}
		c.requests.Add(1)
	}
	in.Options.IncludeResponseStatus = true
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: in.Options,
	}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		errs = append(errs, fmt.Errorf("response %d %s: %w", resp.StatusCode, respBody, err))
	}
	c.responses.Add(1)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, err)
	}
	return nil
}

// authenticate checks that a request carries what one of its operation's security
// requirements names, as a validating proxy does (it verifies no signature or token,
// as the functions' tests need none): an apiKey scheme's header (X-User-Id,
// X-Operator-Id, SigV4's Authorization) present and non-empty, an http bearer
// scheme's Authorization starting "Bearer ".
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	r, scheme := in.RequestValidationInput.Request, in.SecurityScheme
	switch {
	case scheme.Type == "apiKey" && scheme.In == "header":
		if r.Header.Get(scheme.Name) == "" {
			return fmt.Errorf("no %s header", scheme.Name)
		}
	case scheme.Type == "http" && scheme.Scheme == "bearer":
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			return errors.New("no Authorization: Bearer header")
		}
	default:
		return fmt.Errorf("security scheme %s %s: not checked here", scheme.Type, scheme.Scheme)
	}
	return nil
}

// checkGatewayAnswer checks the answer to a request for a route the document does not
// have: API Gateway's own 404 (or 405) {"message"}.
func (c *Checker) checkGatewayAnswer(r *http.Request, status int, body []byte) error {
	c.responses.Add(1)
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		return fmt.Errorf("%s %s: no such route, but the answer is %d %s", r.Method, r.URL.Path, status, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s %s: answer %d is not JSON: %w", r.Method, r.URL.Path, status, err)
	}
	if err := c.doc.Components.Schemas["GatewayMessage"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("%s %s: answer %d %s: %w", r.Method, r.URL.Path, status, body, err)
	}
	return nil
}
