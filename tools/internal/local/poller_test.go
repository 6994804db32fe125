package local

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// Poller tests use SQS, so they never call t.Parallel either.

// eventually bounds every wait of these tests for something to happen.
const eventually = 15 * time.Second

// invokeFunc is a lambda.Handler from a function of the raw payload.
type invokeFunc func(ctx context.Context, payload []byte) ([]byte, error)

func (f invokeFunc) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return f(ctx, payload)
}

// runPoll runs Poll with cfg in the background until stop is called or ctx
// (canceled by stop or by the handler via cfg) is done. stop cancels and
// waits for Poll to return, failing the test if it does not within
// eventually or returns an error.
func runPoll(ctx context.Context, t *testing.T, cancel context.CancelFunc, cfg PollerConfig) (stop func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Poll(ctx, cfg) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			t.Helper()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Poll: %v", err)
				}
			case <-time.After(eventually):
				t.Errorf("Poll did not return within %v of cancel", eventually)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitDone waits for ctx to be done, as a handler cancelling the poll makes it.
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(eventually):
		t.Fatalf("not done within %v", eventually)
	}
}

func sendBodies(t *testing.T, client *sqs.Client, queueURL string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(b)}); err != nil {
			t.Fatalf("SendMessage %q: %v", b, err)
		}
	}
}

// queueLength returns how many messages the queue holds, visible or not
// (goaws counts in-flight messages in ApproximateNumberOfMessages).
func queueLength(t *testing.T, client *sqs.Client, queueURL string) string {
	t.Helper()
	out, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	return out.Attributes["ApproximateNumberOfMessages"]
}

// drainBodies receives until it has n messages, or for pollLimit 1 s long
// polls, and returns their bodies, sorted.
func drainBodies(t *testing.T, client *sqs.Client, queueURL string, n int) []string {
	t.Helper()
	var bodies []string
	for i := 0; i < pollLimit && len(bodies) < n; i++ {
		out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
	}
	slices.Sort(bodies)
	return bodies
}

func bodiesOf(e events.SQSEvent) []string {
	bodies := make([]string, len(e.Records))
	for i, r := range e.Records {
		bodies[i] = r.Body
	}
	slices.Sort(bodies)
	return bodies
}

// failures returns a ReportBatchItemFailures response naming the records of e
// with the given bodies.
func failures(e events.SQSEvent, bodies ...string) []byte {
	var resp events.SQSEventResponse
	for _, r := range e.Records {
		if slices.Contains(bodies, r.Body) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	b, _ := json.Marshal(resp)
	return b
}

// syncBuffer collects the poller's JSON log lines.
type syncBuffer struct{ testkit.Log }

// records decodes the JSON lines written so far.
func (b *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	recs, err := b.Lines()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestPoll_DeletesOnlyWhatLambdaWouldDelete(t *testing.T) {
	sent := []string{"a", "b", "c"}
	reply := func(body string) func(events.SQSEvent) ([]byte, error) {
		return func(events.SQSEvent) ([]byte, error) { return []byte(body), nil }
	}
	// replyNamingFirst answers format with the batch's first message id for its %q.
	replyNamingFirst := func(format string) func(events.SQSEvent) ([]byte, error) {
		return func(e events.SQSEvent) ([]byte, error) { return fmt.Appendf(nil, format, e.Records[0].MessageId), nil }
	}
	tests := []struct {
		name   string
		report bool // ReportBatchItemFailures
		// respond is the function's result for the one batch it gets.
		respond func(e events.SQSEvent) ([]byte, error)
		remain  []string // bodies left in the queue, sorted
	}{
		{"success deletes the batch", false, reply("null"), nil},
		{"success without ReportBatchItemFailures ignores listed failures", false,
			func(e events.SQSEvent) ([]byte, error) { return failures(e, "b"), nil }, nil},
		{"error deletes nothing", false,
			func(events.SQSEvent) ([]byte, error) { return nil, errors.New("boom") }, sent},
		{"error deletes nothing with ReportBatchItemFailures", true,
			func(events.SQSEvent) ([]byte, error) { return nil, errors.New("boom") }, sent},
		{"panic deletes nothing", false,
			func(events.SQSEvent) ([]byte, error) { panic("boom") }, sent},
		{"reported failure is kept, the others deleted", true,
			func(e events.SQSEvent) ([]byte, error) { return failures(e, "b"), nil }, []string{"b"}},
		{"every record reported keeps all", true,
			func(e events.SQSEvent) ([]byte, error) { return failures(e, sent...), nil }, sent},
		{"empty failure list deletes the batch", true, reply(`{"batchItemFailures":[]}`), nil},
		{"null response deletes the batch", true, reply("null"), nil},
		{"empty object response deletes the batch", true, reply("{}"), nil},
		{"unknown itemIdentifier fails the whole batch", true, reply(`{"batchItemFailures":[{"itemIdentifier":"no-such-message"}]}`), sent},
		{"unknown itemIdentifier beside a known one fails the whole batch", true, replyNamingFirst(`{"batchItemFailures":[{"itemIdentifier":%q},{"itemIdentifier":"no-such-message"}]}`), sent},
		{"empty itemIdentifier fails the whole batch", true, reply(`{"batchItemFailures":[{"itemIdentifier":""}]}`), sent},
		{"misspelt itemIdentifier key fails the whole batch", true, replyNamingFirst(`{"batchItemFailures":[{"itemId":%q}]}`), sent},
		{"response not JSON fails the whole batch", true, reply("ok"), sent},
		{"response of another shape fails the whole batch", true, reply(`"ok"`), sent},
	}
	_, client := startSQS(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("q%d", i)
			// The default visibility timeout, 30 s, outlasts any stall between
			// receive and delete; the test makes the kept messages visible.
			queueURL := createQueues(t, client, Queue{Name: name})[name]
			sendBodies(t, client, queueURL, sent...)
			ctx, cancel := context.WithCancel(t.Context())
			var got []events.SQSEvent // written by the handler, read after Poll returns
			logs := &syncBuffer{}
			stop := runPoll(ctx, t, cancel, PollerConfig{
				Client:                  client,
				QueueURL:                queueURL,
				ReportBatchItemFailures: tt.report,
				Logger:                  slog.New(slog.NewJSONHandler(logs, nil)),
				Handler: invokeFunc(func(_ context.Context, payload []byte) ([]byte, error) {
					cancel() // one batch only: Poll stops after acknowledging it
					var e events.SQSEvent
					if err := json.Unmarshal(payload, &e); err != nil {
						return nil, err
					}
					got = append(got, e)
					return tt.respond(e)
				}),
			})
			waitDone(t, ctx)
			stop()

			if len(got) != 1 || !slices.Equal(bodiesOf(got[0]), sent) {
				t.Fatalf("invocations = %+v, want one batch of %v", got, sent)
			}
			if n := queueLength(t, client, queueURL); n != fmt.Sprint(len(tt.remain)) {
				t.Errorf("messages left = %s, want %d (%v)", n, len(tt.remain), tt.remain)
			}
			for _, r := range got[0].Records {
				// Fails, MessageNotInFlight, for the deleted ones.
				_, _ = client.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{
					QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String(r.ReceiptHandle), VisibilityTimeout: 0,
				})
			}
			if left := drainBodies(t, client, queueURL, len(tt.remain)); !slices.Equal(left, tt.remain) {
				t.Errorf("bodies left = %v, want %v", left, tt.remain)
			}
			var batches []map[string]any
			for _, r := range logs.records(t) {
				if strings.HasPrefix(r["msg"].(string), "sqs batch") {
					batches = append(batches, r)
				}
			}
			if len(batches) != 1 {
				t.Fatalf("batch log records = %v, want one", batches)
			}
			if batches[0]["received"] != 3.0 || batches[0]["deleted"] != float64(3-len(tt.remain)) {
				t.Errorf("batch log record = %v, want received 3, deleted %d", batches[0], 3-len(tt.remain))
			}
		})
	}
}

func TestPoll_RedeliversReportedFailureAfterVisibilityTimeout(t *testing.T) {
	_, client := startSQS(t)
	// 2 s: time enough, even on a loaded machine, to delete a and c before
	// they would reappear.
	queueURL := createQueues(t, client, Queue{Name: "orders", Attributes: map[string]string{"VisibilityTimeout": "2"}})["orders"]
	sendBodies(t, client, queueURL, "a", "b", "c")
	ctx, cancel := context.WithCancel(t.Context())
	var got []events.SQSEvent // written by the handler, read after Poll returns
	stop := runPoll(ctx, t, cancel, PollerConfig{
		Client:                  client,
		QueueURL:                queueURL,
		ReportBatchItemFailures: true,
		Logger:                  slog.New(slog.NewJSONHandler(t.Output(), nil)),
		Handler: lambda.NewHandler(func(_ context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
			got = append(got, e)
			if len(got) == 1 {
				var resp events.SQSEventResponse
				if err := json.Unmarshal(failures(e, "b"), &resp); err != nil {
					return resp, err
				}
				return resp, nil
			}
			cancel() // the redelivery succeeds and ends the test
			return events.SQSEventResponse{}, nil
		}),
	})
	waitDone(t, ctx)
	stop()

	if len(got) != 2 {
		t.Fatalf("%d invocations, want 2: %+v", len(got), got)
	}
	if bodies := bodiesOf(got[0]); !slices.Equal(bodies, []string{"a", "b", "c"}) {
		t.Fatalf("first batch = %v, want [a b c]", bodies)
	}
	if bodies := bodiesOf(got[1]); !slices.Equal(bodies, []string{"b"}) {
		t.Fatalf("second batch = %v, want only the failed b", bodies)
	}
	first := got[0].Records[slices.IndexFunc(got[0].Records, func(r events.SQSMessage) bool { return r.Body == "b" })]
	again := got[1].Records[0]
	if again.MessageId != first.MessageId {
		t.Errorf("redelivered messageId = %q, want %q", again.MessageId, first.MessageId)
	}
	if again.ReceiptHandle == first.ReceiptHandle {
		t.Errorf("redelivery reused receipt handle %q", again.ReceiptHandle)
	}
	if n := queueLength(t, client, queueURL); n != "0" {
		t.Errorf("messages left = %s, want 0", n)
	}
}

func TestPoll_RecordsAreWhatLambdaSends(t *testing.T) {
	tests := []struct {
		name     string
		queue    string
		queueARN string // PollerConfig.QueueARN
		region   string // PollerConfig.Region
		wantARN  string
		wantReg  string
	}{
		{"given ARN and region", "given", "arn:aws:sqs:eu-west-1:123456789012:orders", "eu-west-1", "arn:aws:sqs:eu-west-1:123456789012:orders", "eu-west-1"},
		{"defaults from the queue URL", "orders", "", "", "arn:aws:sqs:us-east-1:" + AccountID + ":orders", "us-east-1"},
	}
	_, client := startSQS(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queueURL := createQueues(t, client, Queue{Name: tt.queue})[tt.queue]
			body := `{"orderId":"ord-1"}`
			if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{
				QueueUrl:          aws.String(queueURL),
				MessageBody:       aws.String(body),
				MessageAttributes: map[string]types.MessageAttributeValue{"remaining": {DataType: aws.String("Number"), StringValue: aws.String("300")}},
			}); err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			var got events.SQSEvent // written by the handler, read after Poll returns
			stop := runPoll(ctx, t, cancel, PollerConfig{
				Client:   client,
				QueueURL: queueURL,
				QueueARN: tt.queueARN,
				Region:   tt.region,
				Handler: lambda.NewHandler(func(_ context.Context, e events.SQSEvent) error {
					got = e
					cancel()
					return errors.New("keep it: the test deletes it by its receipt handle")
				}),
			})
			waitDone(t, ctx)
			stop()

			if len(got.Records) != 1 {
				t.Fatalf("records = %+v, want one", got.Records)
			}
			r := got.Records[0]
			sum := md5.Sum([]byte(body))
			for _, c := range []struct{ field, got, want string }{
				{"body", r.Body, body},
				{"md5OfBody", r.Md5OfBody, hex.EncodeToString(sum[:])},
				{"eventSource", r.EventSource, "aws:sqs"},
				{"eventSourceARN", r.EventSourceARN, tt.wantARN},
				{"awsRegion", r.AWSRegion, tt.wantReg},
				{"remaining dataType", r.MessageAttributes["remaining"].DataType, "Number"},
				{"remaining stringValue", aws.ToString(r.MessageAttributes["remaining"].StringValue), "300"},
			} {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
				}
			}
			for _, name := range []string{"ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp"} {
				if r.Attributes[name] == "" {
					t.Errorf("attribute %s missing: %v", name, r.Attributes)
				}
			}
			if r.MessageId == "" {
				t.Error("empty messageId")
			}
			if _, err := client.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String(r.ReceiptHandle)}); err != nil {
				t.Fatalf("DeleteMessage with the record's receipt handle: %v", err)
			}
			if n := queueLength(t, client, queueURL); n != "0" {
				t.Errorf("messages left after delete = %s, want 0", n)
			}
		})
	}
}

func TestPoll_DeliversDelayedMessageOnlyOnceVisible(t *testing.T) {
	_, client := startSQS(t)
	queueURL := createQueues(t, client, Queue{Name: "close"})["close"]
	if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("late"), DelaySeconds: 1}); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	sendBodies(t, client, queueURL, "now")
	ctx, cancel := context.WithCancel(t.Context())
	var got [][]string // bodies of each batch, written by the handler, read after Poll returns
	stop := runPoll(ctx, t, cancel, PollerConfig{
		Client:   client,
		QueueURL: queueURL,
		Handler: lambda.NewHandler(func(_ context.Context, e events.SQSEvent) error {
			got = append(got, bodiesOf(e))
			if slices.Contains(bodiesOf(e), "late") {
				cancel()
			}
			return nil
		}),
	})
	waitDone(t, ctx)
	stop()

	if want := [][]string{{"now"}, {"late"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	if n := queueLength(t, client, queueURL); n != "0" {
		t.Errorf("messages left = %s, want 0", n)
	}
}

func TestPoll_KeepsPollingAfterReceiveErrors(t *testing.T) {
	const failing = 3 // ReceiveMessage calls answered 500
	var mu sync.Mutex
	receives := 0
	srv, err := StartSQS(t.Context(), "127.0.0.1:0", SQSOptions{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Amz-Target") == "AmazonSQS.ReceiveMessage" {
				mu.Lock()
				receives++
				fail := receives <= failing
				mu.Unlock()
				if fail {
					w.Header().Set("Content-Type", "application/x-amz-json-1.0")
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = io.WriteString(w, `{"__type":"InternalError","message":"injected"}`)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}})
	if err != nil {
		t.Fatalf("StartSQS: %v", err)
	}
	closeAtEnd(t, srv)
	client := NewSQSClient(srv.URL(), func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
	queueURL := createQueues(t, client, Queue{Name: "flaky"})["flaky"]
	sendBodies(t, client, queueURL, "x")
	ctx, cancel := context.WithCancel(t.Context())
	logs := &syncBuffer{}
	var got []string // written by the handler, read after Poll returns
	stop := runPoll(ctx, t, cancel, PollerConfig{
		Client:   client,
		QueueURL: queueURL,
		Logger:   slog.New(slog.NewJSONHandler(logs, nil)),
		Handler: lambda.NewHandler(func(_ context.Context, e events.SQSEvent) error {
			got = append(got, bodiesOf(e)...)
			cancel()
			return nil
		}),
	})
	waitDone(t, ctx)
	stop()

	if !slices.Equal(got, []string{"x"}) {
		t.Errorf("handled %v, want [x]", got)
	}
	failures := 0
	for _, r := range logs.records(t) {
		if r["msg"] == "sqs receive failed" {
			failures++
		}
	}
	if failures != failing {
		t.Errorf("%d receive failures logged, want %d", failures, failing)
	}
	if n := queueLength(t, client, queueURL); n != "0" {
		t.Errorf("messages left = %s, want 0", n)
	}
}

func TestPoll_ReturnsPromptlyOnCancel(t *testing.T) {
	_, client := startSQS(t)
	queueURL := createQueues(t, client, Queue{Name: "idle"})["idle"]
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Poll(ctx, PollerConfig{
			Client:   client,
			QueueURL: queueURL,
			Wait:     20 * time.Second, // far longer than the wait below: cancel must end the long poll
			Handler:  lambda.NewHandler(func(context.Context, events.SQSEvent) error { return nil }),
		})
	}()
	time.Sleep(100 * time.Millisecond) // usually inside ReceiveMessage by now; either way Poll must stop
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Poll after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Poll still running 10 s after cancel")
	}
}

func TestPoll_RejectsInvalidConfig(t *testing.T) {
	client := NewSQSClient("http://127.0.0.1:1")
	h := lambda.NewHandler(func(context.Context, events.SQSEvent) error { return nil })
	url := "http://127.0.0.1:1/" + AccountID + "/q"
	tests := []struct {
		name string
		cfg  PollerConfig
	}{
		{"no client", PollerConfig{QueueURL: url, Handler: h}},
		{"no queue URL", PollerConfig{Client: client, Handler: h}},
		{"no handler", PollerConfig{Client: client, QueueURL: url}},
		{"batch size above 10", PollerConfig{Client: client, QueueURL: url, Handler: h, BatchSize: 11}},
		{"negative batch size", PollerConfig{Client: client, QueueURL: url, Handler: h, BatchSize: -1}},
		{"wait not whole seconds", PollerConfig{Client: client, QueueURL: url, Handler: h, Wait: 1500 * time.Millisecond}},
		{"wait above 20 s", PollerConfig{Client: client, QueueURL: url, Handler: h, Wait: 21 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A valid config would poll until the test's deadline: bound it.
			ctx, cancel := context.WithTimeout(t.Context(), eventually)
			defer cancel()
			if err := Poll(ctx, tt.cfg); err == nil {
				t.Error("Poll: got nil error")
			}
		})
	}
}
