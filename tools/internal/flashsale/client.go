package flashsale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Error codes and statuses of the API contract that this tool branches on.
const (
	codeStockOut      = "STOCK_OUT"
	codeBusy          = "BUSY"
	codeSKUNotFound   = "SKU_NOT_FOUND"
	codeLimitExceeded = "LIMIT_EXCEEDED"
	skuSoldOut        = "SOLD_OUT"
	skuOffSale        = "OFF_SALE"
	statusPending     = string(inventory.StatusPending)
	statusPaid        = string(inventory.StatusPaid)
	statusCancelled   = string(inventory.StatusCancelled)
)

// maxBody caps how much of a response body is read (bytes).
const maxBody = 1 << 20

// maxBackoff caps the wait before a retry, whatever Retry-After says.
const maxBackoff = 2 * time.Second

// skuView is the GET /skus/{skuId} body.
type skuView struct {
	SKUID     string `json:"skuId"`
	Price     int64  `json:"price"`
	Status    string `json:"status"`
	Available int    `json:"available"`
}

// orderLine is one line of a POST /orders body or of an order.
type orderLine struct {
	SKUID string `json:"skuId"`
	Qty   int    `json:"qty"`
}

// orderView is the part of an order (201/200 body, GET /orders/{id}) that is checked.
type orderView struct {
	OrderID string      `json:"orderId"`
	Status  string      `json:"status"`
	Items   []orderLine `json:"items"`
}

// errorBody is the contract's error body.
type errorBody struct {
	Code string `json:"code"`
}

// request is one HTTP call, repeatable for retries.
type request struct {
	method string
	path   string
	who    identity
	key    string // Idempotency-Key, empty for none
	body   []byte
}

// attempt is one HTTP exchange. status is 0 when err (a transport error) is set.
type attempt struct {
	sent       time.Time
	received   time.Time
	status     int
	code       string // error code of a non-2xx JSON body, if any
	body       []byte
	retryAfter time.Duration
	replayed   bool // Idempotent-Replayed: true
	err        error
}

// serverError reports a 5xx answer other than 503 BUSY.
func (a attempt) serverError() bool {
	return a.status >= 500 && !a.busy()
}

// busy reports the contract's back-pressure answer, 503 BUSY.
func (a attempt) busy() bool {
	return isBusy(a.status, a.code)
}

// retryable reports whether a real client would retry the same request: transport
// errors and 5xx answers.
func (a attempt) retryable() bool {
	return a.err != nil || a.status >= 500
}

// api calls the HTTP API.
type api struct {
	base    string
	client  *http.Client
	timeout time.Duration
}

// send makes r once and then, while the answer is retryable, up to retries more times,
// waiting per backoff in between. It returns every attempt, the final one last; it stops
// early when ctx ends.
func (a *api) send(ctx context.Context, r request, retries int) []attempt {
	attempts := []attempt{a.once(ctx, r)}
	for n := 1; n <= retries; n++ {
		last := attempts[len(attempts)-1]
		if !last.retryable() || clock.Sleep(ctx, backoff(last, n)) != nil {
			break
		}
		attempts = append(attempts, a.once(ctx, r))
	}
	return attempts
}

// backoff is the wait before retry n (1-based): Retry-After when the answer set it,
// else 100 ms doubling; never above maxBackoff.
func backoff(last attempt, n int) time.Duration {
	d := last.retryAfter
	if d < 0 {
		d = 100 * time.Millisecond << (n - 1)
	}
	return min(d, maxBackoff)
}

// once makes one HTTP exchange bounded by a.timeout.
func (a *api) once(ctx context.Context, r request) attempt {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	at := attempt{sent: time.Now(), retryAfter: -1}
	req, err := a.newRequest(ctx, r)
	if err == nil {
		at.err = a.exchange(req, &at)
	} else {
		at.err = err
	}
	at.received = time.Now()
	return at
}

func (a *api) newRequest(ctx context.Context, r request) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, a.base+r.path, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", r.method, r.path, err)
	}
	r.who.apply(req.Header)
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		req.Header.Set("Idempotency-Key", r.key)
	}
	return req, nil
}

// exchange sends req and fills at from the answer.
func (a *api) exchange(req *http.Request, at *attempt) error {
	resp, err := a.client.Do(req)
	if err != nil {
		return err // a *url.Error, which names the method and URL already
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	at.status, at.body = resp.StatusCode, body
	at.replayed = strings.EqualFold(resp.Header.Get("Idempotent-Replayed"), "true")
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		at.retryAfter = time.Duration(s) * time.Second
	}
	if resp.StatusCode >= 300 {
		var e errorBody
		if json.Unmarshal(body, &e) == nil {
			at.code = e.Code
		}
	}
	return nil
}

// readSKU reads the SKU; GETs are safe, so transport errors and 5xx are retried.
func (a *api) readSKU(ctx context.Context, sku string) (skuView, error) {
	return get[skuView](ctx, a, request{method: http.MethodGet, path: "/skus/" + url.PathEscape(sku)}, "sku "+sku, ErrSKUNotFound)
}

// readOrder reads one order with its owner's identity. Any answer but a decodable 200
// is an error naming the order.
func (a *api) readOrder(ctx context.Context, who identity, orderID string) (orderView, error) {
	return get[orderView](ctx, a, request{method: http.MethodGet, path: "/orders/" + url.PathEscape(orderID), who: who}, "order "+orderID, nil)
}

// get sends the GET r (retried, as GETs are safe) and decodes its 200 answer into a T.
// Any other answer is an error naming what (e.g. "sku cup"); a 404 wraps notFound when
// it is not nil.
func get[T any](ctx context.Context, a *api, r request, what string, notFound error) (T, error) {
	var v T
	attempts := a.send(ctx, r, MaxRetries)
	last := attempts[len(attempts)-1]
	switch {
	case last.err != nil:
		return v, fmt.Errorf("read %s: %w", what, last.err)
	case last.status == http.StatusNotFound && notFound != nil:
		return v, fmt.Errorf("read %s: %w (404 %s)", what, notFound, last.code)
	case last.status != http.StatusOK:
		return v, fmt.Errorf("read %s: unexpected status %d %s", what, last.status, last.code)
	}
	if err := json.Unmarshal(last.body, &v); err != nil {
		return v, fmt.Errorf("read %s: decode body: %w", what, err)
	}
	return v, nil
}

// newClient returns an HTTP client whose connection pool keeps up to concurrency idle
// connections to the API, so that buyers reuse connections instead of churning them.
func newClient(concurrency int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(t.MaxIdleConns, concurrency)
	t.MaxIdleConnsPerHost = concurrency
	return &http.Client{Transport: t}
}
