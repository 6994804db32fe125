// Package refunds is money going back (docs/design.md, "Refunds: goods before
// money"): starting refunds, the goods step first (Starter: the buyer's and the
// merchant's refund routes, and the refunds a payment owes with no person involved),
// then the money step (Refunder), and what WeChat Pay says of each refund (Apply).
//
// Once an order's goods step has committed (the store's StartRefund: the order
// REFUNDING, its units back on the ledger) or a second payment was recorded as owed
// (SecondPayment), the Starter puts the refund's out_refund_no on the refund queue.
// The Refunder takes the queue's batches (partial batch responses), asks WeChat Pay's
// domestic refund API for the refund's amount of its payment under that out_refund_no, checks the
// answer names the same refund and amount before trusting it, and records what it says
// (Apply). A transient failure (WeChat Pay unreachable, 5xx, 429) fails the record,
// which SQS delivers again after the visibility timeout; WeChat Pay deduplicates on
// out_refund_no, so repeats refund once. A scheduled pass (Refunder.Stuck) asks WeChat
// Pay about refunds REFUNDING longer than a bound: SUCCESS turns them REFUNDED (a lost
// notification), never requested sends them again (a lost message), and the
// RefundingStuck metric counts those still waiting.
//
// Its adapters: Routes.Buyer and Routes.Merchant (HTTP routes), Notify (the
// refund-notify route), Refunder.HandleSQS (the refund queue) and Refunder.Stuck (a
// schedule). What it needs of the store and of WeChat Pay is declared here, small.
package refunds

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// MetricFunction is the Function dimension of refunds' metrics, whichever function
// records them: one metric for each alarm to watch.
const MetricFunction = "refund"

// Starting is what starting refunds needs of the store (dynamo.Store): the goods step
// of an order's refund, and a second payment recorded as a refund owed.
type Starting interface {
	StartRefund(ctx context.Context, order *inventory.Order, r inventory.RefundRequest, window time.Duration) (*inventory.Order, string, error)
	SecondPayment(ctx context.Context, p inventory.Payment) (*inventory.Refund, bool, error)
}

// Results is where what WeChat Pay says of a refund is recorded (dynamo.Store).
type Results interface {
	MarkRefunded(ctx context.Context, res inventory.RefundResult) (*inventory.Refund, bool, error)
}

// Settling is what the money step needs of the store (dynamo.Store): a refund by its
// out_refund_no, its result recorded, and the refunds REFUNDING since a time.
type Settling interface {
	Results
	RefundByNo(ctx context.Context, outRefundNo string) (*inventory.Refund, error)
	RefundingBefore(ctx context.Context, before time.Time) iter.Seq2[string, error]
}

// Payments is the part of WeChat Pay's merchant API that refunds use
// (wechatpay.Client): Refund asks for a refund (申请退款), QueryRefund asks about one
// (查询单笔退款), answering wechatpay.ErrNotFound when WeChat Pay has none. Errors
// wrapping wechatpay.ErrUnavailable are worth retrying.
type Payments interface {
	Refund(ctx context.Context, req wechatpay.RefundRequest) (wechatpay.Refund, error)
	QueryRefund(ctx context.Context, outRefundNo string) (wechatpay.Refund, error)
}

// Result is what WeChat Pay says of a refund, in the fields stockguard checks and
// records.
func Result(r wechatpay.Refund) inventory.RefundResult {
	return inventory.RefundResult{
		OutRefundNo: r.OutRefundNo, OutTradeNo: r.OutTradeNo, TransactionID: r.TransactionID,
		Amount: r.Amount.Refund, Total: r.Amount.Total, State: string(r.Status), At: r.SuccessTime,
	}
}

// reason is the refund reason shown to the buyer (at most 80 characters).
const reason = "stockguard refund"

// Options tune a Refunder.
type Options struct {
	// NotifyURL is the refund-notify route's absolute URL, the refunds' notify_url.
	NotifyURL string
	// StuckAfter is how long a refund may stay REFUNDING before the stuck pass asks
	// WeChat Pay about it; default 30 minutes.
	StuckAfter time.Duration
	// Backoff is how long a failed refund message waits before its second delivery,
	// doubling with every further receive (see lambdaevent.BackoffAfter); default lambdaevent.BackoffBase.
	Backoff time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Refunder asks WeChat Pay for the refunds the queue names and finds stuck ones.
type Refunder struct {
	store Settling
	pay   Payments
	queue *Queue
	log   *slog.Logger
	opts  Options
}

// NewRefunder returns a Refunder over store asking pay, sending refunds found never
// requested to queue, logging JSON lines (and EMF metrics) to log.
func NewRefunder(store Settling, pay Payments, queue *Queue, log *slog.Logger, opts Options) *Refunder {
	if opts.StuckAfter <= 0 {
		opts.StuckAfter = 30 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Backoff <= 0 {
		opts.Backoff = lambdaevent.BackoffBase
	}
	return &Refunder{store: store, pay: pay, queue: queue, log: log, opts: opts}
}

// HandleSQS handles a batch of refund messages concurrently: each refund still owed is
// asked of WeChat Pay and the answer recorded; a refund already REFUNDED or unknown is
// dropped. A record that cannot be handled (malformed, WeChat Pay unavailable, an
// answer about another refund, a store failure) is listed in BatchItemFailures so
// that only it is delivered again after the visibility timeout (the queue's redrive
// policy moves it to the dead-letter queue after repeated failures; the stuck pass
// requests it again later). The error result is always nil.
func (r *Refunder) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		mu       sync.Mutex
		resp     = events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		wg       sync.WaitGroup
		refunded int
	)
	for _, rec := range ev.Records {
		wg.Go(func() {
			done, err := r.handleRecord(ctx, rec)
			if err != nil {
				r.log.LogAttrs(ctx, slog.LevelWarn, "refund request failed; it will be retried",
					slog.String("messageId", rec.MessageId), slog.Duration("after", lambdaevent.BackoffAfter(r.opts.Backoff, lambdaevent.Receives(rec))), slog.String("error", err.Error()))
				r.backoff(ctx, rec)
			}
			mu.Lock()
			defer mu.Unlock()
			if done {
				refunded++
			}
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
		})
	}
	wg.Wait()
	metric.Emit(ctx, r.log, MetricFunction, metric.RefundRequested.Of(float64(len(ev.Records)-len(resp.BatchItemFailures))),
		metric.RefundRequestFailed.Of(float64(len(resp.BatchItemFailures))),
		metric.RefundedAtOnce.Of(float64(refunded)))
	return resp, nil
}

// backoff lengthens a failed record's wait before its next delivery (Queue.Backoff);
// without a queue, or when that fails, the queue's visibility timeout applies.
func (r *Refunder) backoff(ctx context.Context, rec events.SQSMessage) {
	if r.queue == nil || rec.ReceiptHandle == "" {
		return
	}
	if err := r.queue.Hide(ctx, rec.ReceiptHandle, lambdaevent.BackoffAfter(r.opts.Backoff, lambdaevent.Receives(rec))); err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "refund message kept its visibility timeout", slog.String("error", err.Error()))
	}
}

// handleRecord requests the refund one message names; it reports whether WeChat Pay
// answered it done.
func (r *Refunder) handleRecord(ctx context.Context, rec events.SQSMessage) (bool, error) {
	m, err := Decode(rec.Body)
	if err != nil {
		return false, err
	}
	refund, err := r.store.RefundByNo(ctx, m.OutRefundNo)
	switch {
	case errors.Is(err, inventory.ErrRefundNotFound):
		r.log.LogAttrs(ctx, slog.LevelWarn, "refund message for no refund owed; dropped", slog.String("outRefundNo", m.OutRefundNo))
		return false, nil
	case err != nil:
		return false, err
	case refund.Status != inventory.StatusRefunding:
		return false, nil // REFUNDED already: a duplicate message
	case refund.Refused():
		return false, nil // refused for good: only an operator's retry asks again
	}
	answer, err := r.pay.Refund(ctx, wechatpay.RefundRequest{
		OutTradeNo: refund.OrderID, TransactionID: refund.TransactionID, OutRefundNo: refund.OutRefundNo,
		Reason: reason, NotifyURL: r.opts.NotifyURL, Refund: refund.Amount, Total: refund.Total,
	})
	if code, final := wechatpay.FinalRefusal(err); final {
		// Refused for good: asking again cannot help. Recorded on the refund (still
		// REFUNDING, shown to the merchant with the reason), alarmed to be settled by
		// hand, and the message dropped.
		_, _, err := Apply(ctx, r.store, r.log, inventory.RefundResult{
			OutRefundNo: refund.OutRefundNo, OutTradeNo: refund.OrderID, Amount: refund.Amount, State: inventory.RefundStateRefused, Code: code,
		})
		return false, err
	}
	if code, waits := wechatpay.WaitsOnMerchant(err); waits {
		// The merchant must act (top up): recorded on the refund for the operator to
		// see; the message is retried as any other failure.
		if _, _, aerr := Apply(ctx, r.store, r.log, inventory.RefundResult{
			OutRefundNo: refund.OutRefundNo, OutTradeNo: refund.OrderID, Amount: refund.Amount, State: inventory.RefundStateWaiting, Code: code,
		}); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	if err != nil {
		return false, fmt.Errorf("refund %s: %w", refund.OutRefundNo, err)
	}
	res := Result(answer)
	got, _, err := Apply(ctx, r.store, r.log, res)
	return err == nil && got.Status == inventory.StatusRefunded, err
}

// Apply records res, what WeChat Pay said of a refund (its refund API's answer, a
// query, a notification), with store.MarkRefunded, which checks it names the refund
// and amount owed. A result that newly marks a refund CLOSED or ABNORMAL is logged at
// error level and counted in the RefundAbnormal metric (Function dimension "refund",
// whichever function records it: one metric for the alarm to watch):
// the money must be returned by hand. One that newly waits on the merchant (WAITING,
// e.g. NOT_ENOUGH) is logged at warn level with what to do, and not alarmed as such. Errors are MarkRefunded's.
func Apply(ctx context.Context, store Results, log *slog.Logger, res inventory.RefundResult) (*inventory.Refund, bool, error) {
	refund, changed, err := store.MarkRefunded(ctx, res)
	if err != nil {
		return refund, false, err
	}
	if changed && refund.Waiting() {
		log.LogAttrs(ctx, slog.LevelWarn, "WeChat Pay waits on the merchant: "+refund.Error,
			slog.String("outRefundNo", refund.OutRefundNo), slog.String("outTradeNo", refund.OrderID), slog.Int64("amount", refund.Amount))
	} else if changed && refund.Status == inventory.StatusRefunding && refund.Error != "" {
		log.LogAttrs(ctx, slog.LevelError, "WeChat Pay did not refund: return the money by hand",
			slog.String("outRefundNo", refund.OutRefundNo), slog.String("outTradeNo", refund.OrderID),
			slog.Int64("amount", refund.Amount), slog.String("refundStatus", res.State))
		metric.Emit(ctx, log, MetricFunction, metric.RefundAbnormal.Of(1))
	}
	return refund, changed, nil
}
