package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/stockguard/stockguard/internal/clock"
)

const (
	// maxSQSBatch is the largest SQS BatchSize for a standard queue without a
	// batching window, and the most messages one ReceiveMessage returns
	// (Lambda developer guide, "Using Lambda with Amazon SQS").
	maxSQSBatch = 10
	// maxSQSWait is the longest ReceiveMessage WaitTimeSeconds (SQS API
	// reference).
	maxSQSWait = 20 * time.Second
	// pollRetryMin and pollRetryMax bound the backoff after a failed
	// ReceiveMessage: it starts at pollRetryMin and doubles up to
	// pollRetryMax until a receive succeeds.
	pollRetryMin = 100 * time.Millisecond
	pollRetryMax = 5 * time.Second
	// deleteTimeout bounds the DeleteMessageBatch that acknowledges a batch,
	// which runs even when Poll's context has just been cancelled.
	deleteTimeout = 5 * time.Second
)

// PollerConfig configures Poll: one SQS event source mapping. Client,
// QueueURL and Handler are required; zero values of the others take the
// defaults noted.
type PollerConfig struct {
	// Client is the SQS client, e.g. from NewSQSClient.
	Client *sqs.Client
	// QueueURL is the queue to poll.
	QueueURL string
	// QueueARN is each record's eventSourceARN; default
	// arn:aws:sqs:<Region>:<account>:<name>, account and name being the last
	// two path segments of QueueURL.
	QueueARN string
	// Region is each record's awsRegion; default Region ("us-east-1").
	Region string
	// Function names the function in logs and in the invocation's
	// lambdacontext InvokedFunctionArn; optional.
	Function string
	// Handler is the function. It is invoked with an events.SQSEvent as JSON.
	Handler lambda.Handler
	// BatchSize is the most records per invocation, 1 to 10; default 10
	// (the SAM default).
	BatchSize int
	// ReportBatchItemFailures is the event source mapping's
	// FunctionResponseTypes [ReportBatchItemFailures]: the function returns
	// an events.SQSEventResponse listing the records that failed.
	ReportBatchItemFailures bool
	// Wait is ReceiveMessage's WaitTimeSeconds, whole seconds from 1 to 20;
	// default 1 s, so that Poll notices a cancelled context promptly even
	// against a server that ignores request cancellation.
	Wait time.Duration
	// Logger receives one record per batch and one per failed SQS call;
	// default: discarded. Give it a slog.JSONHandler for JSON lines.
	Logger *slog.Logger
}

// Poll plays Lambda's SQS event source mapping (Lambda developer guide,
// "Using Lambda with Amazon SQS" and "Handling errors for an SQS event
// source"): it long-polls cfg.QueueURL for up to cfg.BatchSize messages,
// invokes cfg.Handler with them as one events.SQSEvent (messageId,
// receiptHandle, body, md5OfBody, md5OfMessageAttributes, all system
// attributes, message attributes, eventSource "aws:sqs", eventSourceARN,
// awsRegion), and deletes the messages the function processed:
//   - an invocation error (or panic) deletes nothing: every message
//     reappears once its visibility timeout expires;
//   - without ReportBatchItemFailures, success deletes the whole batch;
//   - with it, success deletes every record not listed in the response's
//     batchItemFailures. A null or empty response, or an empty list, means
//     every record succeeded; a response that is not JSON of that shape, or
//     an itemIdentifier that is empty or names no record of the batch,
//     fails the whole batch and deletes nothing.
//
// Batches are processed one at a time (Lambda would scale out; locally the
// order of processing is easier to follow). A failed ReceiveMessage or
// DeleteMessageBatch is logged and the loop goes on, retrying receives
// after a backoff of up to 5 s. Poll runs until ctx is done and then
// returns nil, once the batch in hand, if any, has been invoked and
// acknowledged (the handler sees ctx, so it may stop early and fail).
// It returns an error at once only for an invalid cfg.
func Poll(ctx context.Context, cfg PollerConfig) error {
	p, err := newPoller(cfg)
	if err != nil {
		return err
	}
	retry := pollRetryMin
	for ctx.Err() == nil {
		out, err := p.cfg.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(p.cfg.QueueURL),
			MaxNumberOfMessages:         int32(p.cfg.BatchSize),
			WaitTimeSeconds:             int32(p.cfg.Wait / time.Second),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			p.log.LogAttrs(ctx, slog.LevelWarn, "sqs receive failed",
				slog.String("queueUrl", p.cfg.QueueURL), slog.Duration("retryIn", retry), slog.String("error", err.Error()))
			clock.Sleep(ctx, retry)
			retry = min(2*retry, pollRetryMax)
			continue
		}
		retry = pollRetryMin
		if len(out.Messages) > 0 {
			p.process(ctx, out.Messages)
		}
	}
	return nil
}

// poller is one running Poll.
type poller struct {
	cfg         PollerConfig
	log         *slog.Logger
	functionARN string
}

// newPoller checks cfg and fills in its defaults.
func newPoller(cfg PollerConfig) (*poller, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("poll: no SQS client")
	case cfg.QueueURL == "":
		return nil, errors.New("poll: no queue URL")
	case cfg.Handler == nil:
		return nil, errors.New("poll: no handler")
	case cfg.BatchSize < 0 || cfg.BatchSize > maxSQSBatch:
		return nil, fmt.Errorf("poll %s: batch size %d not in 1..%d", cfg.QueueURL, cfg.BatchSize, maxSQSBatch)
	case cfg.Wait < 0 || cfg.Wait > maxSQSWait || cfg.Wait%time.Second != 0:
		return nil, fmt.Errorf("poll %s: wait %v is not whole seconds from 1 s to %v", cfg.QueueURL, cfg.Wait, maxSQSWait)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = maxSQSBatch
	}
	if cfg.Wait == 0 {
		cfg.Wait = time.Second
	}
	if cfg.Region == "" {
		cfg.Region = Region
	}
	if cfg.QueueARN == "" {
		cfg.QueueARN = queueARN(cfg.Region, cfg.QueueURL)
	}
	p := &poller{cfg: cfg, log: cfg.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Function != "" {
		p.functionARN = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", cfg.Region, AccountID, cfg.Function)
	}
	return p, nil
}

// queueARN returns the ARN of the queue at queueURL
// (http://host/<account>/<name>).
func queueARN(region, queueURL string) string {
	parts := strings.Split(strings.TrimSuffix(queueURL, "/"), "/")
	account, name := AccountID, parts[len(parts)-1]
	if len(parts) >= 2 && parts[len(parts)-2] != "" && !strings.Contains(parts[len(parts)-2], ":") {
		account = parts[len(parts)-2]
	}
	return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", region, account, name)
}

// process invokes the function with one batch, deletes what it processed
// and logs one record.
func (p *poller) process(ctx context.Context, msgs []types.Message) {
	event := p.event(msgs)
	attrs := []slog.Attr{slog.String("queueUrl", p.cfg.QueueURL), slog.Int("received", len(msgs))}
	if p.cfg.Function != "" {
		attrs = append(attrs, slog.String("function", p.cfg.Function))
	}
	payload, err := p.invoke(ctx, event)
	if err != nil {
		p.log.LogAttrs(ctx, slog.LevelWarn, "sqs batch failed",
			append(attrs, slog.Int("deleted", 0), slog.String("error", err.Error()))...)
		return
	}
	done := msgs
	if p.cfg.ReportBatchItemFailures {
		done, err = processedMessages(msgs, payload)
		if err != nil {
			p.log.LogAttrs(ctx, slog.LevelWarn, "sqs batch failed",
				append(attrs, slog.Int("deleted", 0), slog.String("error", err.Error()))...)
			return
		}
	}
	deleted := p.delete(ctx, done)
	p.log.LogAttrs(ctx, slog.LevelInfo, "sqs batch",
		append(attrs, slog.Int("itemFailures", len(msgs)-len(done)), slog.Int("deleted", deleted))...)
}

// event builds the events.SQSEvent Lambda sends for msgs.
func (p *poller) event(msgs []types.Message) events.SQSEvent {
	records := make([]events.SQSMessage, len(msgs))
	for i, m := range msgs {
		records[i] = events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             m.Attributes,
			MessageAttributes:      make(map[string]events.SQSMessageAttribute, len(m.MessageAttributes)),
			EventSourceARN:         p.cfg.QueueARN,
			EventSource:            "aws:sqs",
			AWSRegion:              p.cfg.Region,
		}
		if records[i].Attributes == nil {
			records[i].Attributes = map[string]string{}
		}
		for name, a := range m.MessageAttributes {
			records[i].MessageAttributes[name] = events.SQSMessageAttribute{
				StringValue:      a.StringValue,
				BinaryValue:      a.BinaryValue,
				StringListValues: a.StringListValues,
				BinaryListValues: a.BinaryListValues,
				DataType:         aws.ToString(a.DataType),
			}
		}
	}
	return events.SQSEvent{Records: records}
}

// invoke calls the handler with event as JSON, in a lambdacontext with a
// fresh request id, and turns a panic into an error, as the Lambda runtime
// reports a panicking function as failed.
func (p *poller) invoke(ctx context.Context, event events.SQSEvent) ([]byte, error) {
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       uuid.NewString(),
		InvokedFunctionArn: p.functionARN,
	})
	return invoke(ctx, p.cfg.Handler, event)
}

// processedMessages returns the messages that a ReportBatchItemFailures
// response does not list as failed, or an error when the response fails the
// whole batch.
func processedMessages(msgs []types.Message, payload []byte) ([]types.Message, error) {
	var resp events.SQSEventResponse
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &resp); err != nil {
			return nil, fmt.Errorf("invalid batch item failures response: %w", err)
		}
	}
	failed := make(map[string]bool, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var ok []types.Message
	for _, m := range msgs {
		if id := aws.ToString(m.MessageId); failed[id] {
			delete(failed, id)
		} else {
			ok = append(ok, m)
		}
	}
	for id := range failed {
		return nil, fmt.Errorf("batch item failure names no record of the batch: itemIdentifier %q", id)
	}
	return ok, nil
}

// delete deletes msgs with one DeleteMessageBatch and returns how many were
// deleted. It runs even when ctx was cancelled during the invocation, so
// that a processed batch is acknowledged before Poll returns.
func (p *poller) delete(ctx context.Context, msgs []types.Message) int {
	if len(msgs) == 0 {
		return 0
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	out, err := p.cfg.Client.DeleteMessageBatch(dctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.cfg.QueueURL), Entries: entries})
	if err != nil {
		p.log.LogAttrs(ctx, slog.LevelWarn, "sqs delete failed",
			slog.String("queueUrl", p.cfg.QueueURL), slog.Int("messages", len(msgs)), slog.String("error", err.Error()))
		return 0
	}
	for _, f := range out.Failed {
		p.log.LogAttrs(ctx, slog.LevelWarn, "sqs delete failed",
			slog.String("queueUrl", p.cfg.QueueURL), slog.String("entry", aws.ToString(f.Id)),
			slog.String("code", aws.ToString(f.Code)), slog.String("error", aws.ToString(f.Message)))
	}
	return len(out.Successful)
}
