// Package closeq is the close-order queue: createOrder sends one message per new
// order, delayed until the order's payment window ends, and closeOrder consumes it and
// releases the order's stock if it is still unpaid. SQS delays a message by at most
// 900 seconds (Amazon SQS API Reference, SendMessage, DelaySeconds), so a longer
// window takes several hops: a message that arrives before its order is due is sent
// again with the delay that remains. The scheduled sweep over the PendingByExpiry
// index releases whatever a lost message misses.
package closeq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/inventory"
)

// MaxDelay is the longest delay SQS accepts for one message: 900 seconds (Amazon SQS
// API Reference, SendMessage, DelaySeconds).
const MaxDelay = 900 * time.Second

// maxIDInError bounds the order id a malformed message's error quotes, so that a
// hostile message's log line stays short (order ids are at most 32 characters).
const maxIDInError = 64

// ErrMalformed is returned by Decode for a body that is not a close message.
var ErrMalformed = errors.New("malformed close-order message")

// Message is the body of a close-order message, as JSON:
// {"orderId": "…", "expiresAt": "RFC 3339 UTC"}. ExpiresAt is a copy of the order's;
// the order itself stays the authority on when it is due.
type Message struct {
	OrderID   string    `json:"orderId"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Decode parses a message body. It returns an error wrapping ErrMalformed unless the
// body is a JSON object with a valid order id and an expiry time.
func Decode(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("%w: not a JSON object of orderId and expiresAt (%d bytes)", ErrMalformed, len(body))
	}
	if !inventory.ValidOrderID(m.OrderID) || m.ExpiresAt.IsZero() {
		id := m.OrderID
		if len(id) > maxIDInError {
			id = id[:maxIDInError] + "…"
		}
		return Message{}, fmt.Errorf("%w: order id %q, expiresAt %v", ErrMalformed, id, m.ExpiresAt)
	}
	return m, nil
}

// Delay is the DelaySeconds that makes a message sent at now visible no earlier than
// due: the time left rounded up to whole seconds, 0 when due has passed, at most
// MaxDelay (900 seconds).
func Delay(now, due time.Time) int32 {
	left := due.Sub(now)
	if left <= 0 {
		return 0
	}
	secs := (left + time.Second - 1) / time.Second
	return int32(min(secs, MaxDelay/time.Second))
}

// Queue sends close-order messages to one SQS queue.
type Queue struct {
	client *sqs.Client
	url    string
	now    func() time.Time
}

// New returns a Queue sending to the queue at url. now is the clock delays are
// measured from; nil means time.Now.
func New(client *sqs.Client, url string, now func() time.Time) *Queue {
	if now == nil {
		now = time.Now
	}
	return &Queue{client: client, url: url, now: now}
}

// Schedule sends m delayed by Delay(now, m.ExpiresAt), and returns that delay in
// seconds. Errors are the SQS client's, wrapped with the order id.
func (q *Queue) Schedule(ctx context.Context, m Message) (int32, error) {
	body, err := json.Marshal(Message{OrderID: m.OrderID, ExpiresAt: m.ExpiresAt.UTC()})
	if err != nil {
		return 0, fmt.Errorf("encode close message for %s: %w", m.OrderID, err)
	}
	delay := Delay(q.now(), m.ExpiresAt)
	if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(q.url), MessageBody: aws.String(string(body)), DelaySeconds: delay,
	}); err != nil {
		return 0, fmt.Errorf("schedule close of order %s: %w", m.OrderID, err)
	}
	return delay, nil
}
