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
}

// snsRetryVisibility is how long a delivery that failed waits before it is handed to
// the function again, and snsTries how many times in all: Lambda retries a failed
// asynchronous invocation twice, about a minute and then two minutes later (AWS Lambda
// Developer Guide, "Error handling and automatic retries in Lambda").
const (
	snsRetryVisibility = 60 * time.Second
	snsTries           = 3
)

// startSNS creates the template's topics on the embedded server and, for each SNS
// event of a function, a delivery queue (<function>-<event>, with a dead-letter queue
// <function>-<event>-failed after snsTries receives) subscribed to its topic.
func (s *Stack) startSNS(ctx context.Context, tpl *sam.Template, functions []sam.Function) error {
	client := NewSNSClient(s.SQS.URL())
	s.alerts = client
	topics := map[string]string{} // local name → ARN
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
			urls, err := CreateQueues(ctx, s.SQSClient(), []Queue{
				{Name: name + "-failed"},
				{Name: name, Attributes: map[string]string{
					"VisibilityTimeout": fmt.Sprint(snsRetryVisibility.Seconds()),
					"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":"%d"}`, queueARN(Region, name+"-failed"), snsTries),
				}},
			})
			if err != nil {
				return err
			}
			sub, err := client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(arn), Protocol: aws.String("sqs"), Endpoint: aws.String(queueARN(Region, name))})
			if err != nil {
				return fmt.Errorf("subscribe %s to %s: %w", name, ev.Topic, err)
			}
			s.snsDeliveries = append(s.snsDeliveries, snsDelivery{function: f.Name, event: ev, queueURL: urls[name], subscription: aws.ToString(sub.SubscriptionArn)})
		}
	}
	return nil
}

// poll plays the subscription of d until ctx is done: each message on its queue is
// handed to the function h as an SNS event of one record, as Lambda invokes a function
// subscribed to a topic; a failed invocation leaves the message for another try.
func (d snsDelivery) poll(ctx context.Context, s *Stack, h lambda.Handler) {
	Poll(ctx, PollerConfig{
		Client: s.SQSClient(), QueueURL: d.queueURL, Function: d.function, BatchSize: 1,
		ReportBatchItemFailures: true, Logger: s.cfg.Logger,
		Handler: newHandler(func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
			var resp events.SQSEventResponse
			for _, m := range batch.Records {
				if err := d.invoke(ctx, h, m.Body); err != nil {
					s.cfg.Logger.Warn("sns delivery failed", "function", d.function, "event", d.event.Name, "error", err)
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				}
			}
			return resp, nil
		}),
	})
}

// invoke hands one SNS-to-SQS envelope to h as the SNS event Lambda builds from it
// (AWS Lambda Developer Guide, "Invoking Lambda functions with Amazon SNS
// notifications": Records[0].EventSource "aws:sns", EventVersion "1.0",
// EventSubscriptionArn, Sns = the notification).
func (d snsDelivery) invoke(ctx context.Context, h lambda.Handler, envelope string) error {
	var n events.SNSEntity // the envelope's SigningCertURL and UnsubscribeURL match case-insensitively
	if err := json.Unmarshal([]byte(envelope), &n); err != nil {
		return fmt.Errorf("not an SNS notification: %w", err)
	}
	ev := events.SNSEvent{Records: []events.SNSEventRecord{{EventVersion: "1.0", EventSource: "aws:sns", EventSubscriptionArn: d.subscription, SNS: n}}}
	_, err := invoke(ctx, h, ev)
	return err
}
