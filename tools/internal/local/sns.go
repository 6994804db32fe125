package local

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// NewSNSClient returns an SNS client for the endpoint at endpointURL (the embedded
// SQS server's, SQSServer.URL(): goaws serves the SNS API on the same port), signing
// with static dummy credentials for Region.
//
// goaws v0.5.4's SNS, as the local stack uses it: CreateTopic, Subscribe (protocol sqs,
// endpoint a queue ARN or URL) and Publish, through aws-sdk-go-v2's query protocol. A
// message published to a topic is put on each subscribed queue at once, as the JSON
// envelope SNS delivers to SQS ({"Type":"Notification","MessageId","TopicArn",
// "Subject","Message","Timestamp","SignatureVersion","Signature","SigningCertURL",
// "UnsubscribeURL"}), signed with a key goaws makes up. Known gaps: topic ARNs have an
// empty region (arn:aws:sns::<AccountID>:<name>), and Publish finds a topic by the last
// ':'-separated part of the ARN it is given; goaws has no Lambda subscription, so the
// stack plays it (see snsDelivery).
func NewSNSClient(endpointURL string, optFns ...func(*sns.Options)) *sns.Client {
	return sns.NewFromConfig(localConfig(endpointURL), optFns...)
}

// snsDelivery is one function's SNS event played locally: the topic delivers to a
// local queue (not in the template) that Run polls, handing each message to the
// function as an SNS event.
type snsDelivery struct {
	function     string
	event        sam.SNSEvent
	queueURL     string
	subscription string // the subscription ARN goaws gave
	tries        int    // invocations in all: 1 + the function's MaximumRetryAttempts
	// onFailure is the URL of the template queue the function's on-failure destination
	// names ("" for none): after tries failed invocations, Lambda's invocation record
	// goes there (see failed).
	onFailure string
}

// snsRetryVisibility is how long a delivery that failed waits before it is handed to
// the function again, and snsTries how many times in all by default: Lambda retries a
// failed asynchronous invocation twice, about a minute and then two minutes later (AWS
// Lambda Developer Guide, "Error handling and automatic retries in Lambda"), unless
// EventInvokeConfig.MaximumRetryAttempts says otherwise.
const (
	snsRetryVisibility = 60 * time.Second
	snsTries           = 3
)

// deliveryFor is the delivery of f's SNS event ev from queueURL: its tries and its
// on-failure destination's queue URL.
func (s *Stack) deliveryFor(f sam.Function, ev sam.SNSEvent, queueURL, subscription string) (snsDelivery, error) {
	d := snsDelivery{function: f.Name, event: ev, queueURL: queueURL, subscription: subscription, tries: snsTries}
	if inv := f.EventInvoke; inv != nil {
		if inv.MaximumRetryAttempts >= 0 {
			d.tries = inv.MaximumRetryAttempts + 1
		}
		if inv.OnFailure != "" {
			url, ok := s.Queues[inv.OnFailure]
			if !ok {
				return snsDelivery{}, fmt.Errorf("%s: no queue %s for its on-failure destination", f.Name, inv.OnFailure)
			}
			d.onFailure = url
		}
	}
	return d, nil
}

// startSNS creates the template's topics on the embedded server and, for each SNS
// event of a function, a delivery queue (<function>-<event>, with a dead-letter queue
// <function>-<event>-failed after the function's tries, for a function without an
// on-failure destination) subscribed to its topic.
func (s *Stack) startSNS(ctx context.Context, tpl *sam.Template, functions []sam.Function) error {
	client := NewSNSClient(s.SQS.URL())
	s.alerts = client
	topics := map[string]string{} // local name → ARN
	s.Topics = topics
	for _, topic := range tpl.Topics() {
		name := topic.Name
		out, err := client.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name)})
		if err != nil {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
		topics[name] = aws.ToString(out.TopicArn)
	}
	for _, f := range functions {
		for _, ev := range f.Events.SNS {
			arn, ok := topics[ev.Topic]
			if !ok {
				return fmt.Errorf("%s event %s: no topic %s in the template", f.Name, ev.Name, ev.Topic)
			}
			name := f.Name + "-" + ev.Name
			d, err := s.deliveryFor(f, ev, "", "")
			if err != nil {
				return err
			}
			retry := snsRetryVisibility
			if s.cfg.AsyncRetryDelay > 0 {
				retry = s.cfg.AsyncRetryDelay
			}
			urls, err := CreateQueues(ctx, s.SQSClient(), []Queue{
				{Name: name + "-failed"},
				{Name: name, Attributes: map[string]string{
					"VisibilityTimeout": fmt.Sprint(int(max(retry, time.Second).Seconds())),
					"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":"%d"}`, queueARN(Region, name+"-failed"), d.tries),
				}},
			})
			if err != nil {
				return err
			}
			sub, err := client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(arn), Protocol: aws.String("sqs"), Endpoint: aws.String(queueARN(Region, name))})
			if err != nil {
				return fmt.Errorf("subscribe %s to %s: %w", name, ev.Topic, err)
			}
			d.queueURL, d.subscription = urls[name], aws.ToString(sub.SubscriptionArn)
			s.snsDeliveries = append(s.snsDeliveries, d)
		}
	}
	return nil
}

// poll plays the subscription of d until ctx is done: each message on its queue is
// handed to the function h as an SNS event of one record, as Lambda invokes a function
// subscribed to a topic; a failed invocation leaves the message for another try, and
// the last failed try goes to the on-failure destination (see failed).
func (d snsDelivery) poll(ctx context.Context, s *Stack, h lambda.Handler) {
	Poll(ctx, PollerConfig{
		Client: s.SQSClient(), QueueURL: d.queueURL, Function: d.function, BatchSize: 1,
		ReportBatchItemFailures: true, Logger: s.cfg.Logger,
		Handler: newHandler(func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
			var resp events.SQSEventResponse
			for _, m := range batch.Records {
				ev, err := d.invoke(ctx, h, m.Body)
				if err == nil {
					continue
				}
				s.cfg.Logger.Warn("sns delivery failed", "function", d.function, "event", d.event.Name, "error", err)
				if d.failed(ctx, s, m, ev, err) != nil {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				}
			}
			return resp, nil
		}),
	})
}

// failed handles a failed invocation with ev from m: before the last try it returns
// the error, so the message is tried again; at the last, with an on-failure
// destination, it sends Lambda's invocation record there (AWS Lambda Developer Guide,
// "Capturing records of Lambda asynchronous invocations": condition RetriesExhausted,
// the event as requestPayload, the error as responsePayload) and returns nil, the
// message done; without one, the message goes to the delivery's -failed queue.
func (d snsDelivery) failed(ctx context.Context, s *Stack, m events.SQSMessage, ev events.SNSEvent, cause error) error {
	tries := lambdaevent.Receives(m) // each receive was one invocation
	if d.onFailure == "" || tries < d.tries {
		return cause
	}
	record := map[string]any{
		"version":   "1.0",
		"timestamp": s.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"requestContext": map[string]any{
			"requestId": m.MessageId, "functionArn": "arn:aws:lambda:" + Region + ":" + AccountID + ":function:" + d.function + ":$LATEST",
			"condition": "RetriesExhausted", "approximateInvokeCount": tries,
		},
		"requestPayload":  ev,
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"responsePayload": map[string]string{"errorMessage": cause.Error(), "errorType": "error"},
	}
	body, err := json.Marshal(record)
	if err == nil {
		_, err = s.SQSClient().SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(d.onFailure), MessageBody: aws.String(string(body))})
	}
	if err != nil {
		return fmt.Errorf("send to the on-failure destination: %w", err)
	}
	return nil
}

// invoke hands one SNS-to-SQS envelope to h as the SNS event Lambda builds from it
// (AWS Lambda Developer Guide, "Invoking Lambda functions with Amazon SNS
// notifications": Records[0].EventSource "aws:sns", EventVersion "1.0",
// EventSubscriptionArn, Sns = the notification).
func (d snsDelivery) invoke(ctx context.Context, h lambda.Handler, envelope string) (events.SNSEvent, error) {
	var n events.SNSEntity // the envelope's SigningCertURL and UnsubscribeURL match case-insensitively
	if err := json.Unmarshal([]byte(envelope), &n); err != nil {
		return events.SNSEvent{}, fmt.Errorf("not an SNS notification: %w", err)
	}
	ev := events.SNSEvent{Records: []events.SNSEventRecord{{EventVersion: "1.0", EventSource: "aws:sns", EventSubscriptionArn: d.subscription, SNS: n}}}
	_, err := invoke(ctx, h, ev)
	return ev, err
}
