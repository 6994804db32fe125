// Package orders is an order's life before it is paid (docs/design.md,
// "Reservation" and "Release"): placing it (the cart reserved in one transaction, a
// PENDING order opened) and reading it, and releasing the stock of an unpaid order
// exactly once, whichever of its triggers gets there first:
//
//   - close-order messages (package closeq), delivered in batches by the SQS event
//     source mapping with ReportBatchItemFailures: a record that fails is listed in the
//     events.SQSEventResponse and redelivered after the queue's visibility timeout; the
//     others are deleted. A message that arrives before its order is due is sent again
//     with the delay that remains (SQS delays at most 900 seconds, so a 30-minute window
//     takes two hops);
//   - an EventBridge scheduled sweep that pages through the PendingByExpiry index for
//     PENDING orders past their expiry, releasing them with bounded concurrency;
//   - the buyer's POST /orders/{orderId}/cancel.
//
// All three go through the store's Release: one transaction conditioned on the order
// still being PENDING (and on its prepay_id as read), so duplicates, a sweep racing a
// message, and a cancel racing the timeout release the stock once. An order with a
// WeChat Pay order is asked about first (PaymentCheck, package payments).
//
// Its adapters: Checkout.Place and Checkout.Get, Releaser.Cancel and the merchant's
// Listing routes (HTTP routes), Releaser.HandleSQS (the close-order queue) and
// Releaser.Sweep (a schedule). What it needs of the store is declared here, small.
package orders

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// RouteCancel is the route key of the buyer's cancel (API Gateway RouteKey, see
// template.yaml).
const RouteCancel = "POST /orders/{orderId}/cancel"

// Releasing is what releasing needs of the store (dynamo.Store): an order read as its
// owner's (the cancel) or whoever's (a timeout), its release, and the PENDING orders
// due.
type Releasing interface {
	Order(ctx context.Context, userID, id string) (*inventory.Order, error)
	Lookup(ctx context.Context, id string) (*inventory.Order, error)
	Release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error)
	DuePending(ctx context.Context, before time.Time) iter.Seq2[string, error]
}

// PaymentCheck asks WeChat Pay about an order that has a WeChat Pay order before its
// release (payments.Checker): true when it was found paid (the payment is then
// recorded: never release it); an error when WeChat Pay could not be asked.
type PaymentCheck interface {
	BeforeRelease(ctx context.Context, order *inventory.Order) (bool, error)
}

// Options tune a Releaser. Zero values take the defaults.
type Options struct {
	// SweepConcurrency bounds the releases one sweep runs at once; default 8.
	SweepConcurrency int
	// SweepReserve is how much of the invocation's deadline a sweep leaves unused:
	// it stops taking new orders when less remains (the next sweep continues);
	// default 3 seconds.
	SweepReserve time.Duration
	// Now is the clock; default time.Now. It must be the store's clock.
	Now func() time.Time
	// Payments asks WeChat Pay about orders that have a WeChat Pay order before their
	// release. Nil: such an order's cancel answers 503 and a timeout releases it
	// anyway (ReleasedUnsettled).
	Payments PaymentCheck
	// Function is the serving function's short name, the Function dimension of the
	// metrics; default "closeOrder".
	Function string
}

// Releaser releases unpaid orders from queue messages, sweeps and cancels.
type Releaser struct {
	store Releasing
	queue *closeq.Queue
	log   *slog.Logger
	opts  Options
}

// NewReleaser returns a Releaser over store that re-enqueues early messages on queue
// and logs JSON lines (and EMF metrics) to log. With a nil queue an early message
// fails (and is redelivered after the visibility timeout).
func NewReleaser(store Releasing, queue *closeq.Queue, log *slog.Logger, opts Options) *Releaser {
	if opts.SweepConcurrency <= 0 {
		opts.SweepConcurrency = 8
	}
	if opts.SweepReserve <= 0 {
		opts.SweepReserve = 3 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Function == "" {
		opts.Function = "closeOrder"
	}
	return &Releaser{store: store, queue: queue, log: log, opts: opts}
}

// errNoPaymentCheck: an order has a WeChat Pay order and nothing can ask WeChat Pay.
var errNoPaymentCheck = errors.New("no WeChat Pay merchant client configured")

// beforeRelease asks WeChat Pay about order (Options.Payments).
func (c *Releaser) beforeRelease(ctx context.Context, order *inventory.Order) (bool, error) {
	if order.PrepayID == "" {
		return false, nil
	}
	if c.opts.Payments == nil {
		return false, errNoPaymentCheck
	}
	return c.opts.Payments.BeforeRelease(ctx, order)
}

// Cancel serves RouteCancel (docs/contract.md, "POST /orders/{orderId}/cancel"): the
// owner's PENDING order is asked about at WeChat Pay when it has a WeChat Pay order
// (found paid: the payment is recorded and the answer is 409 ORDER_NOT_CANCELLABLE;
// WeChat Pay not reachable: 503 BUSY, nothing released), then cancelled and its stock
// released once; the order is answered as it stands.
func (c *Releaser) Cancel(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	order, err := c.store.Order(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if order.Status == inventory.StatusPending {
		paid, err := c.beforeRelease(ctx, order)
		switch {
		case paid && err == nil:
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("cancel order %s: paid at WeChat Pay: %w", order.ID, inventory.ErrNotCancellable)
		case err != nil:
			return events.APIGatewayV2HTTPResponse{}, inventory.Busy("cancel order "+order.ID, err)
		}
	}
	if order, _, err = c.store.Release(ctx, order, inventory.CancelUser); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if err := order.CheckCancelled(); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, httpapi.Order(order)), nil
}

// outcome is what closing one order came to.
type outcome int

const (
	released outcome = iota // this call released the stock
	closed                  // already paid, cancelled or gone: nothing to do
	notDue                  // still inside its payment window
)

// expire releases one order if it is due, returning the order as it stands. An order
// with a WeChat Pay order is asked about first (beforeRelease): found paid, it is
// committed instead of released; when WeChat Pay cannot be asked, the order is released anyway
// (its JSAPI order's time_expire already bars new payments; a payment made before it
// takes the late-payment path) and the ReleasedUnsettled metric counts it.
func (c *Releaser) expire(ctx context.Context, id string) (*inventory.Order, outcome, error) {
	order, err := c.store.Lookup(ctx, id)
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		return nil, closed, nil
	case err != nil:
		return nil, 0, err
	case !order.Expired(c.opts.Now()):
		if order.Status == inventory.StatusPending {
			return order, notDue, nil
		}
		return order, closed, nil
	}
	paid, err := c.beforeRelease(ctx, order)
	switch {
	case paid: // committed; a failed commit is retried, never released
		return order, closed, err
	case err != nil:
		c.log.LogAttrs(ctx, slog.LevelWarn, "WeChat Pay not asked before release; releasing anyway",
			slog.String("orderId", order.ID), slog.String("error", err.Error()))
		metric.Emit(ctx, c.log, c.opts.Function, metric.ReleasedUnsettled.Of(1))
	}
	order, rel, err := c.store.Release(ctx, order, inventory.CancelTimeout)
	switch {
	case err != nil:
		return nil, 0, err
	case rel:
		return order, released, nil
	case order.Status == inventory.StatusPending:
		return order, notDue, nil
	default:
		return order, closed, nil
	}
}

// tally counts outcomes and release lags (cancelledAt − expiresAt) for metrics.
type tally struct {
	mu                     sync.Mutex
	released, closed, fail int
	requeued               int
	lagMs                  []float64
}

func (t *tally) add(order *inventory.Order, o outcome, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		t.fail++
	case o == released:
		t.released++
		if order.CancelledAt != nil {
			t.lagMs = append(t.lagMs, float64(order.CancelledAt.Sub(order.ExpiresAt).Milliseconds()))
		}
	case o == notDue:
		t.requeued++
	default:
		t.closed++
	}
}

func (t *tally) emit(ctx context.Context, log *slog.Logger, function string, extra ...metric.Value) {
	metric.Emit(ctx, log, function, append([]metric.Value{
		metric.Released.Of(float64(t.released)),
		metric.ReleaseFailed.Of(float64(t.fail)),
		metric.ReleaseLag.Of(t.lagMs...),
	}, extra...)...)
}

// HandleSQS handles a batch of close-order messages: each due order is released, each
// early one re-enqueued with the delay left, each already closed or unknown one
// dropped. Records are handled concurrently. A record that cannot be handled
// (malformed body, store or queue failure) is listed in BatchItemFailures so that
// only it is redelivered; a malformed one keeps failing until the queue's redrive
// policy moves it to the dead-letter queue. The error result is always nil.
func (c *Releaser) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		t    tally
		mu   sync.Mutex
		resp = events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		wg   sync.WaitGroup
	)
	for _, rec := range ev.Records {
		wg.Go(func() {
			order, o, err := c.handleRecord(ctx, rec)
			t.add(order, o, err)
			if err != nil {
				c.log.LogAttrs(ctx, inventory.FailureLevel(ctx, err), "close message failed; it will be redelivered",
					slog.String("messageId", rec.MessageId), slog.String("error", err.Error()))
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	c.log.LogAttrs(ctx, slog.LevelInfo, "close messages", slog.Int("records", len(ev.Records)),
		slog.Int("released", t.released), slog.Int("requeued", t.requeued), slog.Int("closed", t.closed), slog.Int("failed", t.fail))
	t.emit(ctx, c.log, c.opts.Function)
	return resp, nil
}

func (c *Releaser) handleRecord(ctx context.Context, rec events.SQSMessage) (*inventory.Order, outcome, error) {
	m, err := closeq.Decode(rec.Body)
	if err != nil {
		return nil, 0, err
	}
	order, o, err := c.expire(ctx, m.OrderID)
	if err != nil || o != notDue {
		return order, o, err
	}
	if !m.ExpiresAt.IsZero() && !m.ExpiresAt.Equal(order.ExpiresAt) {
		// Sent ahead by a copy of a keyed request (its own slot's expiry): the order's
		// own message is on its way, so this one is dropped, not re-enqueued to pile
		// up at the order's expiry.
		c.log.LogAttrs(ctx, slog.LevelInfo, "close message of a copy dropped", slog.String("orderId", order.ID))
		return order, notDue, nil
	}
	if c.queue == nil {
		return nil, 0, fmt.Errorf("order %s is not due until %v and there is no queue to re-enqueue on", order.ID, order.ExpiresAt)
	}
	delay, err := c.queue.Schedule(ctx, closeq.Message{OrderID: order.ID, ExpiresAt: order.ExpiresAt})
	if err != nil {
		return nil, 0, err
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "close message re-enqueued", slog.String("orderId", order.ID), slog.Int("delaySeconds", int(delay)))
	return order, notDue, nil
}

// SweepResult is a sweep's JSON result (the body of POST /_local/invoke/closeOrder).
type SweepResult struct {
	Due        int   `json:"due"`        // orders the index listed as PENDING and due
	Released   int   `json:"released"`   // of those, released by this sweep
	Closed     int   `json:"closed"`     // already paid or cancelled (the index lags)
	Failed     int   `json:"failed"`     // releases that failed; the next sweep retries
	Truncated  bool  `json:"truncated"`  // stopped early to finish before the deadline
	DurationMs int64 `json:"durationMs"` // wall time, milliseconds
}

// Sweep releases every order that the PendingByExpiry index lists as PENDING with an
// expiry at or before now, running at most SweepConcurrency releases at once. It
// stops taking new orders when less than SweepReserve of ctx's deadline remains. A
// failed release is counted and logged at error level, and left for the next sweep;
// the error result is for a failed index query.
func (c *Releaser) Sweep(ctx context.Context) (SweepResult, error) {
	start := time.Now()
	var (
		t    tally
		res  SweepResult
		wg   sync.WaitGroup
		sem  = make(chan struct{}, c.opts.SweepConcurrency)
		qerr error
	)
	deadline, hasDeadline := ctx.Deadline()
	for id, err := range c.store.DuePending(ctx, c.opts.Now()) {
		if err != nil {
			qerr = err
			break
		}
		if hasDeadline && time.Until(deadline) < c.opts.SweepReserve {
			res.Truncated = true
			break
		}
		res.Due++
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			order, o, err := c.expire(ctx, id)
			if err != nil {
				c.log.LogAttrs(ctx, inventory.FailureLevel(ctx, err), "sweep could not release order", slog.String("orderId", id), slog.String("error", err.Error()))
			}
			t.add(order, o, err)
		})
	}
	wg.Wait()
	res.Released, res.Closed, res.Failed = t.released, t.closed+t.requeued, t.fail
	res.DurationMs = time.Since(start).Milliseconds()
	level := slog.LevelInfo
	if qerr != nil || res.Failed > 0 {
		// warn when the sweep was cut short by its context (its caller hung up, its
		// time ran out), error otherwise
		level = inventory.FailureLevel(ctx, cmp.Or(qerr, ctx.Err()))
	}
	c.log.LogAttrs(ctx, level, "sweep", slog.Int("due", res.Due), slog.Int("released", res.Released),
		slog.Int("closed", res.Closed), slog.Int("failed", res.Failed), slog.Bool("truncated", res.Truncated),
		slog.Int64("durationMs", res.DurationMs))
	t.emit(ctx, c.log, c.opts.Function, metric.SweepDue.Of(float64(res.Due)))
	if qerr != nil {
		return res, fmt.Errorf("sweep: %w", qerr)
	}
	return res, nil
}
