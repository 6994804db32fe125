package local

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// SQS tests never call t.Parallel: goaws keeps its state in package-level
// variables, so one server runs at a time.

// startSQS starts the SQS server on a free port for the test and returns it
// with a client that does not retry.
func startSQS(t *testing.T) (*SQSServer, *sqs.Client) {
	t.Helper()
	srv, err := StartSQS(t.Context(), "127.0.0.1:0", SQSOptions{})
	if err != nil {
		t.Fatalf("StartSQS: %v", err)
	}
	closeAtEnd(t, srv)
	return srv, NewSQSClient(srv.URL(), func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
}

func createQueues(t *testing.T, client *sqs.Client, queues ...Queue) map[string]string {
	t.Helper()
	urls, err := CreateQueues(t.Context(), client, queues)
	if err != nil {
		t.Fatalf("CreateQueues: %v", err)
	}
	return urls
}

// redriveTo returns a RedrivePolicy attribute value, as template.yaml's
// RedrivePolicy serialises to.
func redriveTo(dlq, maxReceiveCount string) string {
	return `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:` + AccountID + `:` + dlq + `","maxReceiveCount":"` + maxReceiveCount + `"}`
}

// receive long-polls queueURL for up to 1 s and returns at most one message, with all
// its message and system attributes.
func receive(ctx context.Context, t *testing.T, client *sqs.Client, queueURL string) *types.Message {
	t.Helper()
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(queueURL),
		WaitTimeSeconds:             1,
		MaxNumberOfMessages:         1,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	if len(out.Messages) == 0 {
		return nil
	}
	return &out.Messages[0]
}

// pollLimit bounds every "eventually" loop of these tests (1 s long polls).
const pollLimit = 15

func TestSQS_DelayedMessageRoundTrip(t *testing.T) {
	ctx := t.Context()
	_, client := startSQS(t)
	urls := createQueues(t, client, Queue{Name: "CloseOrderQueue", Attributes: map[string]string{"VisibilityTimeout": "30"}})
	queueURL := urls["CloseOrderQueue"]

	sentAt := time.Now()
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          aws.String(queueURL),
		MessageBody:       aws.String(`{"orderId":"ord-1"}`),
		DelaySeconds:      1,
		MessageAttributes: map[string]types.MessageAttributeValue{"remaining": {DataType: aws.String("Number"), StringValue: aws.String("300")}},
	}); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	var msg *types.Message
	for i := 0; i < pollLimit && msg == nil; i++ {
		msg = receive(ctx, t, client, queueURL)
	}
	if msg == nil {
		t.Fatalf("message not received within %d polls", pollLimit)
	}
	if waited := time.Since(sentAt); waited < time.Second {
		t.Errorf("message delivered after %v, before its 1 s delay", waited)
	}
	if got := aws.ToString(msg.Body); got != `{"orderId":"ord-1"}` {
		t.Errorf("body = %q", got)
	}
	if got := aws.ToString(msg.MessageAttributes["remaining"].StringValue); got != "300" {
		t.Errorf("message attribute remaining = %q, want 300", got)
	}
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: msg.ReceiptHandle}); err != nil {
		t.Fatalf("DeleteMessage: %v", err)
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	if got := attrs.Attributes["ApproximateNumberOfMessages"]; got != "0" {
		t.Errorf("ApproximateNumberOfMessages after delete = %q, want 0", got)
	}
}

func TestSQS_RedrivesToDeadLetterQueueAfterMaxReceiveCount(t *testing.T) {
	ctx := t.Context()
	_, client := startSQS(t)
	urls := createQueues(t, client,
		Queue{Name: "CloseOrderQueue", Attributes: map[string]string{"VisibilityTimeout": "1", "RedrivePolicy": redriveTo("CloseOrderDLQ", "2")}},
		Queue{Name: "CloseOrderDLQ"},
	)
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(urls["CloseOrderQueue"]), MessageBody: aws.String("poison")}); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	receives := 0
	var dead *types.Message
	for i := 0; i < pollLimit && dead == nil; i++ {
		if receive(ctx, t, client, urls["CloseOrderQueue"]) != nil {
			receives++ // never deleted: its visibility timeout expires
		}
		dead = receive(ctx, t, client, urls["CloseOrderDLQ"])
	}
	if dead == nil {
		t.Fatalf("message not in the dead-letter queue within %d polls (received %d times)", pollLimit, receives)
	}
	if got := aws.ToString(dead.Body); got != "poison" {
		t.Errorf("dead-letter body = %q, want poison", got)
	}
	if receives != 2 {
		t.Errorf("received %d times from the source queue, want maxReceiveCount = 2", receives)
	}
}

func TestCreateQueues_CreatesDeadLetterQueuesFirstAndReturnsURLs(t *testing.T) {
	srv, client := startSQS(t)
	urls := createQueues(t, client,
		Queue{Name: "a", Attributes: map[string]string{"RedrivePolicy": redriveTo("b", "3"), "Policy": `{"Version":"2012-10-17"}`}},
		Queue{Name: "b", Attributes: map[string]string{"RedrivePolicy": redriveTo("c", "3"), "SqsManagedSseEnabled": "true"}},
		Queue{Name: "c", Attributes: map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"allowAll"}`}},
	)
	for _, name := range []string{"a", "b", "c"} {
		if want := srv.URL() + "/" + AccountID + "/" + name; urls[name] != want {
			t.Errorf("url of %s = %q, want %q", name, urls[name], want)
		}
	}
	attrs, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(urls["a"]),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy, types.QueueAttributeNameVisibilityTimeout},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	if got := attrs.Attributes["RedrivePolicy"]; !strings.Contains(got, ":b\"") {
		t.Errorf("RedrivePolicy of a = %q, want its dead-letter queue b", got)
	}
	if got := attrs.Attributes["VisibilityTimeout"]; got != "30" {
		t.Errorf("default VisibilityTimeout = %q, want 30", got)
	}
}

func TestCreateQueues_RejectsBadListsBeforeCreatingAnything(t *testing.T) {
	tests := []struct {
		name   string
		queues []Queue
	}{
		{"name listed twice", []Queue{{Name: "a"}, {Name: "a"}}},
		{"dead-letter cycle", []Queue{
			{Name: "a", Attributes: map[string]string{"RedrivePolicy": redriveTo("b", "1")}},
			{Name: "b", Attributes: map[string]string{"RedrivePolicy": redriveTo("a", "1")}},
		}},
		{"redrive policy not JSON", []Queue{{Name: "a", Attributes: map[string]string{"RedrivePolicy": "b"}}}},
	}
	_, client := startSQS(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := CreateQueues(t.Context(), client, tt.queues); err == nil {
				t.Fatal("CreateQueues: got nil error")
			}
			out, err := client.ListQueues(t.Context(), &sqs.ListQueuesInput{})
			if err != nil {
				t.Fatalf("ListQueues: %v", err)
			}
			if len(out.QueueUrls) != 0 {
				t.Errorf("queues created: %v", out.QueueUrls)
			}
		})
	}
}

func TestCreateQueues_WrapsServerRejectionWithQueueName(t *testing.T) {
	_, client := startSQS(t)
	_, err := CreateQueues(t.Context(), client, []Queue{{Name: "a", Attributes: map[string]string{"VisibilityTimeout": "soon"}}})
	if err == nil || !strings.HasPrefix(err.Error(), "create queue a: ") {
		t.Fatalf("error = %v, want one starting %q", err, "create queue a: ")
	}
}

func TestSQS_UnknownQueueIsGenericAPIError(t *testing.T) {
	srv, client := startSQS(t)
	_, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(srv.URL() + "/" + AccountID + "/missing"), MessageBody: aws.String("x")})
	apiErr, ok := errors.AsType[smithy.APIError](err)
	if !ok {
		t.Fatalf("SendMessage to a missing queue: err = %v, want a smithy.APIError", err)
	}
	if got := apiErr.ErrorCode(); got != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Errorf("error code = %q", got)
	}
}

func TestStartSQS_OneServerPerProcessAtATime(t *testing.T) {
	ctx := t.Context()
	first, err := StartSQS(ctx, "127.0.0.1:0", SQSOptions{})
	if err != nil {
		t.Fatalf("first StartSQS: %v", err)
	}
	createQueues(t, NewSQSClient(first.URL()), Queue{Name: "left-over"})
	if _, err := StartSQS(ctx, "127.0.0.1:0", SQSOptions{}); !errors.Is(err, ErrSQSRunning) {
		t.Fatalf("second StartSQS while the first runs: err = %v, want ErrSQSRunning", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, client := startSQS(t)
	out, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatalf("ListQueues: %v", err)
	}
	if len(out.QueueUrls) != 0 {
		t.Errorf("restarted server kept queues: %v", out.QueueUrls)
	}
}

// ApproximateReceiveCount is "the number of times a message has been received across all
// queues but not deleted" (Amazon SQS API Reference, ReceiveMessage,
// MessageSystemAttributeName), and a RedrivePolicy's maxReceiveCount counts the same
// receives: received maxReceiveCount times, the message moves to the dead-letter queue,
// where the count goes on.
func TestSQS_ApproximateReceiveCountCountsReceivesUntilRedrive(t *testing.T) {
	ctx := t.Context()
	_, client := startSQS(t)
	urls := createQueues(t, client,
		Queue{Name: "RefundQueue", Attributes: map[string]string{"VisibilityTimeout": "30", "RedrivePolicy": redriveTo("RefundDLQ", "3")}},
		Queue{Name: "RefundDLQ"},
	)
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(urls["RefundQueue"]), MessageBody: aws.String("refund")}); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	for want := 1; want <= 3; want++ {
		msg := receive(ctx, t, client, urls["RefundQueue"])
		if msg == nil {
			t.Fatalf("receive %d: no message", want)
		}
		if got := msg.Attributes["ApproximateReceiveCount"]; got != strconv.Itoa(want) {
			t.Errorf("receive %d: ApproximateReceiveCount = %q, want %d", want, got, want)
		}
		// Visible again at once, as after its visibility timeout.
		if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(urls["RefundQueue"]), ReceiptHandle: msg.ReceiptHandle, VisibilityTimeout: 0,
		}); err != nil {
			t.Fatalf("ChangeMessageVisibility after receive %d: %v", want, err)
		}
	}
	if msg := receive(ctx, t, client, urls["RefundQueue"]); msg != nil {
		t.Fatalf("received a 4th time from the source queue (ApproximateReceiveCount %q), want it redriven after maxReceiveCount = 3",
			msg.Attributes["ApproximateReceiveCount"])
	}
	dead := receive(ctx, t, client, urls["RefundDLQ"])
	if dead == nil {
		t.Fatal("message not in the dead-letter queue after maxReceiveCount = 3 receives")
	}
	if got := dead.Attributes["ApproximateReceiveCount"]; got != "4" {
		t.Errorf("ApproximateReceiveCount in the dead-letter queue = %q, want 4 (counted across all queues)", got)
	}
}
