// Package flashsale drives a flash sale against the stockguard HTTP API and checks, from
// the outside, that it neither oversold nor falsely refused buyers.
//
// Run reads a SKU, fires many concurrent POST /orders at it, reads the SKU and every
// created order back, and returns a Report whose verification checks pass or fail.
// Optionally it then settles the orders: a share of the order holders pays, the rest
// cancel, and the SKU's available and on-hand stock are checked against what was paid.
// The routes and status codes used are those of the API contract: GET /skus/{skuId},
// POST /orders, GET /orders/{orderId}, POST /orders/{orderId}/cancel and the local-only
// POST /_local/pay/{orderId}. On-hand stock, which the buyers' routes do not show, is
// read from the API the run targets, through the merchant route GET /admin/skus/{skuId}
// named as the local operator (unsigned, so the local stack only), as the refunds are
// sent.
package flashsale

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Defaults used by DefaultConfig and by the flashsale command's flags.
const (
	DefaultBaseURL     = "http://127.0.0.1:3000"
	DefaultSKU         = "cup-01"
	DefaultBuyers      = 300
	DefaultConcurrency = 50
	DefaultQty         = 1
	DefaultUserPrefix  = "buyer-"
	DefaultTimeout     = 10 * time.Second
	DefaultRefundWait  = 30 * time.Second
)

// MaxRetries is how many times a request is retried, with the same Idempotency-Key, after
// a transport error or a 5xx answer when Config.Idempotency is set (so at most
// 1+MaxRetries attempts per buyer). Without Idempotency nothing is retried, because a
// retry without a key could reserve stock twice.
const MaxRetries = 2

// maxQty is the contract's largest qty per order line.
const maxQty = 9999

// skuIDPattern is the contract's skuId syntax.
var skuIDPattern = regexp.MustCompile(`^[0-9A-Za-z_.:-]{1,64}$`)

// ErrInvalidConfig is wrapped by Validate and ReadTokens (and so by Run) when the
// configuration cannot describe a run.
var ErrInvalidConfig = errors.New("invalid configuration")

// Config describes one flash-sale run. Start from DefaultConfig; the zero value is
// invalid.
type Config struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:3000"; http or https.
	BaseURL string
	// SKU is the skuId every buyer orders.
	SKU string
	// Buyers is how many buyers order, one POST /orders each (plus retries); at least 1.
	Buyers int
	// Concurrency is how many buyers are in flight at once; at least 1.
	Concurrency int
	// Qty is the units per order, 1..9999.
	Qty int
	// UserPrefix names buyers when no tokens are given: buyer i sends the header
	// X-User-Id: <UserPrefix><i> (local runner only).
	UserPrefix string
	// SameUser makes every buyer use buyer 0's identity. The per-user limit then turns
	// most orders into cheap LIMIT_EXCEEDED answers, which flatters the numbers.
	SameUser bool
	// Tokens, when not empty, are bearer tokens for a deployed API: buyer i sends
	// Authorization: Bearer Tokens[i mod len(Tokens)] and no X-User-Id. Deployed, the
	// identity is the token's sub claim, so distinct buyers need distinct tokens.
	Tokens []string
	// Timeout bounds each HTTP request (one attempt).
	Timeout time.Duration
	// Idempotency sends a unique Idempotency-Key per buyer and retries transport errors
	// and 5xx answers up to MaxRetries times with that key.
	Idempotency bool
	// JSON makes Run write the report as JSON instead of text.
	JSON bool
	// PayRatio is the share of order holders, 0..1, who pay after the sale through the
	// local-only route POST /_local/pay/{orderId} (cmd/local signs a WeChat Pay
	// notification for the full amount and sends it through the notify route): the
	// holders of the first round(PayRatio × orders) orders in buyer order (math.Round,
	// half away from zero), so that runs are reproducible. 0 pays nothing.
	PayRatio float64
	// CancelUnpaid makes the holders of the orders not paid cancel them through
	// POST /orders/{orderId}/cancel after the payments, so that their stock is released
	// at once rather than at the payment timeout. The flashsale command turns it on
	// whenever PayRatio > 0 unless told otherwise; with PayRatio 0 it cancels every order.
	CancelUnpaid bool
	// RefundRatio is the share, 0..1, of the orders read back PAID that an operator
	// then refunds through the local stack's unsigned merchant API (POST
	// /admin/orders/{orderId}/refund, restock true): the first round(RefundRatio ×
	// paid) in buyer order. The available and on-hand checks then expect exactly those
	// units back, and each refunded order must read REFUNDED within RefundWait. With
	// RefundRatio > 0 payers start the payment (POST /orders/{orderId}/pay) before
	// paying, so that the WeChat Pay stand-in holds the payment it refunds. Needs
	// PayRatio > 0.
	RefundRatio float64
	// RefundWait bounds how long refunded orders are read until REFUNDED.
	RefundWait time.Duration
	// SampleEvery, when positive, makes Run read the SKU (GET /skus/{skuId}) at this
	// period during the sale, for the available-stock figure of the HTML report
	// (Report.Timeline.Available). Reads do not change stock, so the checks still hold.
	SampleEvery time.Duration
	// Client, if set, sends every request; by default Run builds one whose connection
	// pool fits Concurrency.
	Client *http.Client
}

// DefaultConfig returns the configuration of the flashsale command with no flags.
func DefaultConfig() Config {
	return Config{
		BaseURL:     DefaultBaseURL,
		SKU:         DefaultSKU,
		Buyers:      DefaultBuyers,
		Concurrency: DefaultConcurrency,
		Qty:         DefaultQty,
		UserPrefix:  DefaultUserPrefix,
		Timeout:     DefaultTimeout,
		RefundWait:  DefaultRefundWait,
	}
}

// settles reports whether Run settles the orders after the sale (pays, cancels or both).
func (c Config) settles() bool { return c.PayRatio > 0 || c.CancelUnpaid }

// payers is how many of n orders are paid: round(PayRatio × n), within [0, n].
func (c Config) payers(n int) int {
	return min(max(int(math.Round(c.PayRatio*float64(n))), 0), n)
}

// Validate reports the first problem with c as an error wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	if err := validateBaseURL(c.BaseURL); err != nil {
		return err
	}
	switch {
	case !skuIDPattern.MatchString(c.SKU):
		return invalid("sku %q: want 1-64 of [0-9A-Za-z_.:-]", c.SKU)
	case c.Buyers < 1:
		return invalid("buyers %d: want at least 1", c.Buyers)
	case c.Concurrency < 1:
		return invalid("concurrency %d: want at least 1", c.Concurrency)
	case c.Qty < 1 || c.Qty > maxQty:
		return invalid("qty %d: want 1..%d", c.Qty, maxQty)
	case c.Timeout <= 0:
		return invalid("timeout %s: want > 0", c.Timeout)
	case len(c.Tokens) == 0 && c.UserPrefix == "":
		return invalid("user prefix is empty and no tokens are given")
	case !(c.PayRatio >= 0 && c.PayRatio <= 1): // also refuses NaN
		return invalid("pay ratio %v: want 0..1", c.PayRatio)
	case !(c.RefundRatio >= 0 && c.RefundRatio <= 1) || c.RefundRatio > 0 && c.PayRatio == 0:
		return invalid("refund ratio %v: want 0..1, and a pay ratio above 0 to refund anything", c.RefundRatio)
	case c.RefundRatio > 0 && c.RefundWait <= 0:
		return invalid("refund wait %s: want > 0", c.RefundWait)
	}
	for i, t := range c.Tokens {
		if t == "" || strings.ContainsAny(t, " \t\r\n") {
			return invalid("token %d: empty or contains white space", i+1)
		}
	}
	return nil
}

// validateBaseURL checks that raw is an http(s) URL with a host.
func validateBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return invalid("url %q: %v", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("url %q: want http(s)://host[:port]", raw)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// ReadTokens reads bearer tokens, one per line; surrounding white space and blank lines
// are ignored. It returns an error wrapping ErrInvalidConfig when r holds no token, or
// the read error.
func ReadTokens(r io.Reader) ([]string, error) {
	var tokens []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			tokens = append(tokens, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	if len(tokens) == 0 {
		return nil, invalid("token file holds no token")
	}
	return tokens, nil
}

// identity is who a request claims to be: at most one of userID (X-User-Id, local
// runner), token (Authorization: Bearer, deployed) and operator (X-Operator-Id, the
// local runner's merchant routes) is set; none for anonymous requests (GET /skus,
// POST /_local/pay).
type identity struct {
	userID   string
	token    string
	operator string
}

// localOperator is the operator the merchant requests name locally: the local stack
// records arn:aws:iam::000000000000:user/local-operator (local.LocalOperator).
var localOperator = identity{operator: "local-operator"}

func (id identity) apply(h http.Header) {
	switch {
	case id.token != "":
		h.Set("Authorization", "Bearer "+id.token)
	case id.userID != "":
		h.Set("X-User-Id", id.userID)
	case id.operator != "":
		h.Set("X-Operator-Id", id.operator)
	}
}

// key names the identity for counting distinct buyers; it never leaves the process.
func (id identity) key() string {
	if id.token != "" {
		return "token:" + id.token
	}
	return "user:" + id.userID
}

// buyer returns buyer i's identity.
func (c Config) buyer(i int) identity {
	if c.SameUser {
		i = 0
	}
	if len(c.Tokens) > 0 {
		return identity{token: c.Tokens[i%len(c.Tokens)]}
	}
	return identity{userID: c.UserPrefix + strconv.Itoa(i)}
}

// identities counts the distinct identities the buyers use.
func (c Config) identities() int {
	seen := make(map[string]struct{})
	for i := range c.Buyers {
		seen[c.buyer(i).key()] = struct{}{}
	}
	return len(seen)
}
