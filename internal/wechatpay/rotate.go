package wechatpay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of RotateOptions.
const (
	// DefaultSecretTTL is how long a configuration read from the merchant secret is used
	// before the secret is read again (when RotateOptions.TTL is zero).
	DefaultSecretTTL = 10 * time.Minute
	// DefaultMinReread is the least time between two reads of the merchant secret (when
	// RotateOptions.MinInterval is zero): a flood of notifications naming unknown
	// serials costs at most one read per interval.
	DefaultMinReread = time.Minute
)

// SecretReader returns the merchant secret's JSON (see Secret), e.g. an AWS Secrets
// Manager GetSecretValue of its current version.
type SecretReader func(context.Context) ([]byte, error)

// RotateOptions tune a RotatingVerifier or RotatingClient; the zero value is usable.
type RotateOptions struct {
	// TTL: after it the next call reads the secret again. Zero means DefaultSecretTTL.
	TTL time.Duration
	// MinInterval is the least time between two reads (after an unknown
	// Wechatpay-Serial, or a TTL re-read that failed). Zero means DefaultMinReread.
	MinInterval time.Duration
	// Now is the clock of the re-reads and of the Verifier or Client built (Config.Now);
	// nil means time.Now.
	Now func() time.Time
	// BaseURL and HTTPClient are ClientConfig's, for a RotatingClient.
	BaseURL    string
	HTTPClient *http.Client
	// OnReload, when set, is called after each re-read (not the first read) with its
	// error: nil when the new configuration is in use, else the old one stays.
	OnReload func(ctx context.Context, err error)
}

// rotating holds what was built from the merchant secret and builds it again from a
// fresh read when the TTL has passed or a caller met an unknown Wechatpay-Serial, at
// most once per MinInterval. Reads of the current value take no lock; re-reads are
// serialised, so concurrent callers wait for one read instead of each making one.
type rotating[T any] struct {
	read    SecretReader
	build   func([]byte) (T, error)
	opts    RotateOptions
	current atomic.Pointer[T]
	mu      sync.Mutex
	readAt  time.Time // last successful read
	tried   time.Time // last read attempt
}

func newRotating[T any](ctx context.Context, read SecretReader, build func([]byte) (T, error), opts RotateOptions) (*rotating[T], error) {
	if opts.TTL <= 0 {
		opts.TTL = DefaultSecretTTL
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = DefaultMinReread
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &rotating[T]{read: read, build: build, opts: opts}
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// load reads the secret and builds a new value; on error the old value stays.
func (r *rotating[T]) load(ctx context.Context) error {
	now := r.opts.Now()
	r.tried = now
	data, err := r.read(ctx)
	if err != nil {
		return fmt.Errorf("wechatpay: read the merchant secret: %w", err)
	}
	v, err := r.build(data)
	if err != nil {
		return err
	}
	r.current.Store(&v)
	r.readAt = now
	return nil
}

// get returns the current value, first reading the secret again when the TTL has
// passed (and MinInterval since the last attempt).
func (r *rotating[T]) get(ctx context.Context) *T {
	r.mu.Lock()
	now := r.opts.Now()
	if now.Sub(r.readAt) >= r.opts.TTL && now.Sub(r.tried) >= r.opts.MinInterval {
		r.reload(ctx)
	}
	r.mu.Unlock()
	return r.current.Load()
}

// refresh reads the secret again unless that was tried less than MinInterval ago, and
// returns the current value and whether it differs from seen.
func (r *rotating[T]) refresh(ctx context.Context, seen *T) (T, bool) {
	r.mu.Lock()
	if r.opts.Now().Sub(r.tried) >= r.opts.MinInterval {
		r.reload(ctx)
	}
	r.mu.Unlock()
	cur := r.current.Load()
	return *cur, cur != seen
}

// reload is load reported to OnReload; r.mu is held.
func (r *rotating[T]) reload(ctx context.Context) {
	err := r.load(ctx)
	if r.opts.OnReload != nil {
		r.opts.OnReload(ctx, err)
	}
}

// call runs f with the current value; when f fails with ErrUnknownSerial it re-reads
// the secret (see refresh) and, when that gave a new value, runs f once more with it.
func call[T, R any](ctx context.Context, r *rotating[T], f func(T) (R, error)) (R, error) {
	seen := r.get(ctx)
	out, err := f(*seen)
	if !errors.Is(err, ErrUnknownSerial) {
		return out, err
	}
	if v, changed := r.refresh(ctx, seen); changed {
		return f(v)
	}
	return out, err
}

// RotatingVerifier verifies notifications with the configuration of the merchant
// secret, read again (at most once per RotateOptions.MinInterval) when a notification
// names an unknown Wechatpay-Serial, and after RotateOptions.TTL: WeChat Pay's key
// rotation and the merchant's APIv3 key change take effect without a redeploy once
// the secret lists the new key. Safe for concurrent use.
type RotatingVerifier struct{ r *rotating[*Verifier] }

// NewRotatingVerifier reads the secret with read and builds the first Verifier (see
// ConfigFromSecret and NewVerifier); it returns their error, naming no secret value.
func NewRotatingVerifier(ctx context.Context, read SecretReader, opts RotateOptions) (*RotatingVerifier, error) {
	r, err := newRotating(ctx, read, func(data []byte) (*Verifier, error) {
		cfg, err := ConfigFromSecret(data)
		if err != nil {
			return nil, err
		}
		cfg.Now = opts.Now
		return NewVerifier(cfg)
	}, opts)
	if err != nil {
		return nil, err
	}
	return &RotatingVerifier{r}, nil
}

// Parse is Verifier.Parse with the current configuration; a notification whose
// Wechatpay-Serial is unknown is parsed again after a re-read of the secret (if one is
// allowed now), so the first notification signed with a new key is accepted.
func (v *RotatingVerifier) Parse(ctx context.Context, h Headers, body []byte) (*Notification, error) {
	return call(ctx, v.r, func(x *Verifier) (*Notification, error) { return x.Parse(h, body) })
}

// ParseRefund is Verifier.ParseRefund with the current configuration, re-reading the
// secret on an unknown Wechatpay-Serial as Parse does.
func (v *RotatingVerifier) ParseRefund(ctx context.Context, h Headers, body []byte) (*RefundNotification, error) {
	return call(ctx, v.r, func(x *Verifier) (*RefundNotification, error) { return x.ParseRefund(h, body) })
}

// RotatingClient is a Client whose configuration is the merchant secret's, read again
// like RotatingVerifier's (an answer signed with an unknown Wechatpay-Serial is
// re-sent once after a re-read: the calls are idempotent). Safe for concurrent use.
type RotatingClient struct{ r *rotating[*Client] }

// NewRotatingClient reads the secret with read and builds the first Client (see
// ClientConfigFromSecret and NewClient, with opts' Now, BaseURL and HTTPClient); it
// returns their error, naming no secret value.
func NewRotatingClient(ctx context.Context, read SecretReader, opts RotateOptions) (*RotatingClient, error) {
	r, err := newRotating(ctx, read, func(data []byte) (*Client, error) {
		cfg, err := ClientConfigFromSecret(data)
		if err != nil {
			return nil, err
		}
		cfg.Now, cfg.BaseURL, cfg.HTTPClient = opts.Now, opts.BaseURL, opts.HTTPClient
		return NewClient(cfg)
	}, opts)
	if err != nil {
		return nil, err
	}
	return &RotatingClient{r}, nil
}

// PrepayJSAPI is Client.PrepayJSAPI with the current configuration.
func (c *RotatingClient) PrepayJSAPI(ctx context.Context, o JSAPIOrder) (string, error) {
	return call(ctx, c.r, func(x *Client) (string, error) { return x.PrepayJSAPI(ctx, o) })
}

// QueryOrder is Client.QueryOrder with the current configuration.
func (c *RotatingClient) QueryOrder(ctx context.Context, outTradeNo string) (*Transaction, error) {
	return call(ctx, c.r, func(x *Client) (*Transaction, error) { return x.QueryOrder(ctx, outTradeNo) })
}

// Refund is Client.Refund with the current configuration.
func (c *RotatingClient) Refund(ctx context.Context, req RefundRequest) (Refund, error) {
	return call(ctx, c.r, func(x *Client) (Refund, error) { return x.Refund(ctx, req) })
}

// QueryRefund is Client.QueryRefund with the current configuration.
func (c *RotatingClient) QueryRefund(ctx context.Context, outRefundNo string) (Refund, error) {
	return call(ctx, c.r, func(x *Client) (Refund, error) { return x.QueryRefund(ctx, outRefundNo) })
}

// CloseOrder is Client.CloseOrder with the current configuration.
func (c *RotatingClient) CloseOrder(ctx context.Context, outTradeNo string) error {
	_, err := call(ctx, c.r, func(x *Client) (struct{}, error) { return struct{}{}, x.CloseOrder(ctx, outTradeNo) })
	return err
}

// PaymentParams is Client.PaymentParams with the current configuration (the merchant
// key signs; no answer is verified).
func (c *RotatingClient) PaymentParams(ctx context.Context, prepayID string, now time.Time) (PaymentParams, error) {
	return (*c.r.get(ctx)).PaymentParams(prepayID, now)
}
