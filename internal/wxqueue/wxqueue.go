// Package wxqueue is the queue of work for WeChat's server API (the WeChat queue of
// template.yaml, with its dead-letter queue): shipping uploads and subscribe messages,
// sent by the functions where the work arises (admin, createOrder, payCallback,
// refund; closeOrder for the waitlist's holds) and done by the wechat function, which alone calls WeChat's server API.
// A message names what to do and on which order or refund; the store stays the
// authority on the rest. Work that fails for a reason worth retrying is delivered
// again with backoff (lambdaevent.BackoffAfter: 30 s doubling, ChangeMessageVisibility);
// after the queue's maxReceiveCount it moves to the dead-letter queue, which is
// alarmed (RUNBOOK.md, WeChatDeadLetterAlarm).
package wxqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
)

// Kinds of work.
const (
	KindUpload      = "upload"      // upload an order's shipping information (package shipping)
	KindPresale     = "presale"     // declare an order a presale (package shipping)
	KindPayReminder = "payReminder" // remind the buyer to pay before expiry (package notices)
	KindRefundDone  = "refundDone"  // tell the buyer a refund went through (package notices)
	KindAftersale   = "aftersale"   // tell the buyer an after-sale was approved or rejected (package notices)
	KindWaitlist    = "waitlist"    // tell a waitlisted buyer units are held for them (package notices)
)

// MaxDelay is the longest delay of one SQS message (Amazon SQS Developer Guide,
// "Amazon SQS delay queues": "The maximum is 15 minutes",
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-delay-queues.html;
// Amazon SQS API Reference, SendMessage: DelaySeconds 0 to 900). Work due later hops: its handler sends it again with what is left.
const MaxDelay = 900 * time.Second

// ErrMalformed is returned by Decode for a body that is not a message of this queue.
var ErrMalformed = errors.New("malformed WeChat queue message")

// Message is the body of a message, as JSON.
type Message struct {
	Kind        string `json:"kind"`
	OrderID     string `json:"orderId,omitempty"`     // upload, presale, payReminder, aftersale
	OutRefundNo string `json:"outRefundNo,omitempty"` // refundDone
	AftersaleID string `json:"aftersaleId,omitempty"` // aftersale
	// WaitlistID and HoldRef, for waitlist, are the entry (inventory.WaitlistEntryID,
	// 32 hex characters) and its hold (inventory.WaitlistEntry.Ref, "wait.<id>.<…>",
	// at most 64 characters): no buyer's openid travels on the queue.
	WaitlistID string `json:"waitlistId,omitempty"`
	HoldRef    string `json:"holdRef,omitempty"`
	// At, for payReminder, is when the reminder is due (RFC 3339, UTC).
	At time.Time `json:"at,omitzero"`
}

// Decode parses a message body. Errors wrap ErrMalformed: not JSON, an unknown kind,
// or an id missing or malformed for the kind.
func Decode(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("%w: not a JSON object (%d bytes)", ErrMalformed, len(body))
	}
	switch m.Kind {
	case KindUpload, KindPresale, KindPayReminder:
		if !inventory.ValidOrderID(m.OrderID) {
			return Message{}, fmt.Errorf("%w: %s without a valid orderId", ErrMalformed, m.Kind)
		}
	case KindAftersale:
		if !inventory.ValidOrderID(m.OrderID) || m.AftersaleID == "" || len(m.AftersaleID) > inventory.MaxAftersaleIDLength {
			return Message{}, fmt.Errorf("%w: aftersale without a valid orderId and aftersaleId", ErrMalformed)
		}
	case KindWaitlist:
		if !validEntryID(m.WaitlistID) || len(m.HoldRef) > 64 || !strings.HasPrefix(m.HoldRef, "wait."+m.WaitlistID+".") {
			return Message{}, fmt.Errorf("%w: waitlist without a valid waitlistId and holdRef", ErrMalformed)
		}
	case KindRefundDone:
		if !inventory.ValidOutRefundNo(m.OutRefundNo) {
			return Message{}, fmt.Errorf("%w: refundDone without a valid outRefundNo", ErrMalformed)
		}
	default:
		return Message{}, fmt.Errorf("%w: unknown kind %.20q", ErrMalformed, m.Kind)
	}
	return m, nil
}

// validEntryID says whether id is a waitlist entry id: 32 lowercase hex characters.
func validEntryID(id string) bool {
	return len(id) == 32 && strings.Trim(id, "0123456789abcdef") == ""
}

// Queue sends messages to the WeChat queue.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns a Queue sending to the queue at url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// Send puts m on the queue, delivered after delay (cut to 0..MaxDelay). Errors are the
// SQS client's, wrapped with the kind.
func (q *Queue) Send(ctx context.Context, m Message, delay time.Duration) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s message: %w", m.Kind, err)
	}
	delay = min(max(delay, 0), MaxDelay)
	_, err = q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(q.url), MessageBody: aws.String(string(body)), DelaySeconds: int32(delay / time.Second),
	})
	if err != nil {
		return fmt.Errorf("enqueue %s message: %w", m.Kind, err)
	}
	return nil
}

// Hide keeps the message with receiptHandle invisible for d (whole seconds): the
// backoff of work that failed. Errors are the SQS client's.
func (q *Queue) Hide(ctx context.Context, receiptHandle string, d time.Duration) error {
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(receiptHandle), VisibilityTimeout: int32(d / time.Second),
	})
	if err != nil {
		return fmt.Errorf("back off WeChat queue message: %w", err)
	}
	return nil
}

// Handler does the work of one message. An error means: deliver it again later.
type Handler func(ctx context.Context, m Message) error

// Worker dispatches the queue's batches to a handler per kind.
type Worker struct {
	queue    *Queue
	log      *slog.Logger
	handlers map[string]Handler
	backoff  time.Duration
}

// NewWorker returns a Worker handing each message to handlers[kind]; queue (nil:
// none) lengthens failed messages' visibility by lambdaevent.BackoffAfter(backoff, receives)
// (backoff zero: lambdaevent.BackoffBase).
func NewWorker(queue *Queue, log *slog.Logger, backoff time.Duration, handlers map[string]Handler) *Worker {
	if backoff <= 0 {
		backoff = lambdaevent.BackoffBase
	}
	return &Worker{queue: queue, log: log, handlers: handlers, backoff: backoff}
}

// HandleSQS handles a batch concurrently. A malformed message or one of a kind
// without a handler is dropped (logged at error level: it can never succeed); a
// handler's error lists the record in BatchItemFailures, after lengthening its
// visibility, so that only it comes back. The error result is always nil.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		mu   sync.Mutex
		resp = events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		wg   sync.WaitGroup
	)
	for _, rec := range ev.Records {
		wg.Go(func() {
			m, err := Decode(rec.Body)
			h := w.handlers[m.Kind]
			if err == nil && h == nil {
				err = fmt.Errorf("%w: no handler for %s", ErrMalformed, m.Kind)
			}
			if err != nil {
				w.log.LogAttrs(ctx, slog.LevelError, "WeChat queue message dropped", slog.String("messageId", rec.MessageId), slog.String("error", err.Error()))
				return
			}
			if err := h(ctx, m); err != nil {
				after := lambdaevent.BackoffAfter(w.backoff, lambdaevent.Receives(rec))
				w.log.LogAttrs(ctx, slog.LevelWarn, "WeChat queue work failed; it will be retried", slog.String("kind", m.Kind),
					slog.String("messageId", rec.MessageId), slog.Duration("after", after), slog.String("error", err.Error()))
				if w.queue != nil && rec.ReceiptHandle != "" {
					if herr := w.queue.Hide(ctx, rec.ReceiptHandle, after); herr != nil {
						w.log.LogAttrs(ctx, slog.LevelWarn, "WeChat queue message kept its visibility timeout", slog.String("error", herr.Error()))
					}
				}
				mu.Lock()
				defer mu.Unlock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
		})
	}
	wg.Wait()
	return resp, nil
}
