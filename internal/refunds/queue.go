package refunds

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

// ErrMalformed is returned by Decode for a body that is not a refund message.
var ErrMalformed = errors.New("malformed refund message")

// Message is the body of a refund message, as JSON: {"outRefundNo": "…"}. It names
// the refund only; the store stays the authority on what to refund (out_trade_no,
// amount) and whether it is still owed.
type Message struct {
	OutRefundNo string `json:"outRefundNo"`
}

// Decode parses a message body. It returns an error wrapping ErrMalformed unless the
// body is a JSON object with a valid out_refund_no.
func Decode(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("%w: not a JSON object with outRefundNo (%d bytes)", ErrMalformed, len(body))
	}
	if !inventory.ValidOutRefundNo(m.OutRefundNo) {
		return Message{}, fmt.Errorf("%w: outRefundNo is not a valid out_refund_no", ErrMalformed)
	}
	return m, nil
}

// Queue sends refund messages to one SQS queue.
type Queue struct {
	client *sqs.Client
	url    string
}

// NewQueue returns a Queue sending to the queue at url.
func NewQueue(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// Send puts the refund outRefundNo on the queue, at once. Errors are the SQS client's,
// wrapped with the number.
func (q *Queue) Send(ctx context.Context, outRefundNo string) error {
	body, err := json.Marshal(Message{OutRefundNo: outRefundNo})
	if err != nil {
		return fmt.Errorf("encode refund message for %s: %w", outRefundNo, err)
	}
	if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(string(body))}); err != nil {
		return fmt.Errorf("enqueue refund %s: %w", outRefundNo, err)
	}
	return nil
}

// Hide makes the message with receiptHandle invisible for d (whole seconds), so that
// a refund WeChat Pay keeps refusing is tried less and less often. Errors are the SQS
// client's (the message then comes back after the queue's visibility timeout).
func (q *Queue) Hide(ctx context.Context, receiptHandle string, d time.Duration) error {
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(receiptHandle),
		VisibilityTimeout: int32(d / time.Second),
	})
	if err != nil {
		return fmt.Errorf("back off refund message: %w", err)
	}
	return nil
}
