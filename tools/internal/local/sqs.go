package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/models"
	"github.com/Admiral-Piett/goaws/app/router"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sirupsen/logrus"
)

// ErrSQSRunning is returned by StartSQS while another goaws server runs in
// this process: goaws keeps its configuration and queues in package-level
// variables, so there can be only one at a time.
var ErrSQSRunning = errors.New("an embedded SQS server already runs in this process")

// sqsTick is how often goaws returns messages whose visibility timeout has
// expired to their queue, and moves them to a dead-letter queue.
const sqsTick = time.Second

// SQSOptions configures StartSQS. The zero value is ready to use.
type SQSOptions struct {
	// Wrap, when set, wraps the goaws handler.
	Wrap Middleware
	// Endpoint, when set, is another SQS and SNS API (MotoServer.URL()): the server
	// runs no goaws and forwards every request to it, through Wrap; such servers
	// share no state, so any number may run in one process.
	Endpoint string
}

// SQSServer is an in-memory SQS-compatible API (goaws v0.5.4, patched as
// third_party/goaws/PATCHES.md says) served over
// HTTP; the same server answers goaws' SNS API (see NewSNSClient). It speaks the SQS JSON protocol (Content-Type
// application/x-amz-json-1.0, X-Amz-Target "AmazonSQS.<Operation>") used by
// aws-sdk-go-v2, and the older query protocol.
//
// Exercised by this package's tests: CreateQueue, SendMessage with
// DelaySeconds and message attributes, ReceiveMessage with WaitTimeSeconds and
// ApproximateReceiveCount (the receives so far, across queues),
// ChangeMessageVisibility, DeleteMessage, GetQueueAttributes, ListQueues, and a
// RedrivePolicy that moves a message to its dead-letter queue once it has been
// received maxReceiveCount times and becomes visible again (goaws checks expired
// visibility timeouts once per second). goaws also serves GetQueueUrl,
// SetQueueAttributes, SendMessageBatch, DeleteMessageBatch, PurgeQueue and
// DeleteQueue.
//
// Known gaps of goaws v0.5.4:
//   - DelaySeconds above 900 is accepted (real SQS rejects it).
//   - MessageRetentionPeriod is stored but messages never expire.
//   - Policy and RedriveAllowPolicy make CreateQueue fail (it expects JSON
//     objects, SQS sends strings); CreateQueues drops them.
//   - SetQueueAttributes resets every attribute it is not given to 0
//     (VisibilityTimeout 0 makes received messages reappear at once).
//   - CreateQueue with an existing name returns its URL and ignores the new
//     attributes (real SQS fails with QueueAlreadyExists when they differ).
//   - Errors carry codes such as "AWS.SimpleQueueService.NonExistentQueue",
//     so the SDK returns them as generic smithy.APIError values, not as the
//     typed errors (types.QueueDoesNotExist) real SQS produces.
//   - SentTimestamp is the receive time, and ApproximateFirstReceiveTimestamp
//     the latest receive's; QueueArn has an empty region (arn:aws:sqs::<AccountID>:<queue>);
//     FIFO queues are not dependable.
//
// With SQSOptions.Endpoint the server is a front of another SQS and SNS API
// instead (moto_server's), which answers every request as it does; queue URLs
// still name this server.
//
// goaws logs through logrus's standard logger; StartSQS sets it to JSON on
// stderr at error level: its warnings ("No messages in Queue" for each empty
// ReceiveMessage, an unknown receipt handle or queue) also reach the caller as
// the answer, and would print one line per poll.
type SQSServer struct {
	http  *httpServer
	close func() error // stops everything, run once
}

// StartSQS configures goaws (or a front of opts.Endpoint) and serves it on addr ("127.0.0.1:9324" for
// cmd/local, "127.0.0.1:0" in tests); queues get URLs
// http://<addr>/<AccountID>/<name>. ctx bounds only the listen call: call
// Close to stop the server. Only one may run per process at a time: while
// one runs, StartSQS returns ErrSQSRunning; after Close, a new one starts
// empty. Tests that share a process must not start servers concurrently.
func StartSQS(ctx context.Context, addr string, opts SQSOptions) (*SQSServer, error) {
	if opts.Endpoint != "" {
		return startSQSFront(ctx, addr, opts)
	}
	ln, err := listen(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("start sqs: %w", err)
	}
	host, port, err := net.SplitHostPort(ln.Addr().String())
	if err == nil {
		err = configureGoaws(host, port)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start sqs: %w", err), ln.Close())
	}
	stopTicks, ticksDone := make(chan bool), make(chan struct{})
	go func() {
		defer close(ticksDone)
		gosqs.PeriodicTasks(sqsTick, stopTicks)
	}()
	h := serve(ln, router.New(), opts.Wrap)
	return &SQSServer{http: h, close: sync.OnceValue(func() error {
		err := h.close()
		close(stopTicks)
		<-ticksDone
		resetGoaws()
		return err
	})}, nil
}

// startSQSFront serves a front of opts.Endpoint on addr.
func startSQSFront(ctx context.Context, addr string, opts SQSOptions) (*SQSServer, error) {
	h, err := forward(opts.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("start sqs: %w", err)
	}
	ln, err := listen(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("start sqs: %w", err)
	}
	srv := serve(ln, h, opts.Wrap)
	return &SQSServer{http: srv, close: srv.close}, nil
}

// URL returns the endpoint, "http://host:port", to pass to NewSQSClient or
// to `aws sqs --endpoint-url`.
func (s *SQSServer) URL() string { return s.http.url }

// Close stops the server (ending long polls early), stops goaws' periodic
// task, and forgets every queue and message, so that StartSQS may run again.
// Calling it again returns the first call's result.
func (s *SQSServer) Close() error { return s.close() }

// configureGoaws claims goaws' package-level configuration for a server at
// host:port, or reports ErrSQSRunning if another server holds it. goaws
// derives queue URLs and ARNs from models.CurrentEnvironment; its SqsPort
// field, set only while a server runs, marks the claim.
func configureGoaws(host, port string) error {
	models.SyncQueues.Lock()
	defer models.SyncQueues.Unlock()
	if running := models.CurrentEnvironment.SqsPort; running != "" {
		return fmt.Errorf("%w (port %s)", ErrSQSRunning, running)
	}
	logrus.SetFormatter(&logrus.JSONFormatter{})
	logrus.SetOutput(os.Stderr)
	logrus.SetLevel(logrus.ErrorLevel)
	models.CurrentEnvironment = models.Environment{
		Host:      host,
		Port:      port,
		SqsPort:   port,
		Region:    "", // a region would be prefixed to the queue URLs' host name
		AccountID: AccountID,
		// Defaults from the SQS API reference (CreateQueue attributes); goaws
		// gives them to queues created without the attribute.
		QueueAttributeDefaults: models.EnvQueueAttributes{
			VisibilityTimeout:      30,
			MaximumMessageSize:     262144,
			MessageRetentionPeriod: 345600,
		},
	}
	models.SyncQueues.Queues = make(map[string]*models.Queue)
	return nil
}

// resetGoaws forgets goaws' configuration, queues and SNS topics, releasing the
// claim taken by configureGoaws.
func resetGoaws() {
	models.SyncTopics.Lock()
	models.SyncTopics.Topics = make(map[string]*models.Topic)
	models.SyncTopics.Unlock()
	models.SyncQueues.Lock()
	defer models.SyncQueues.Unlock()
	models.CurrentEnvironment = models.Environment{}
	models.SyncQueues.Queues = make(map[string]*models.Queue)
}

// NewSQSClient returns an SQS client for the endpoint at endpointURL (e.g.
// SQSServer.URL()), signing with static dummy credentials for Region. It
// reads no environment variables or shared config files.
func NewSQSClient(endpointURL string, optFns ...func(*sqs.Options)) *sqs.Client {
	return sqs.NewFromConfig(localConfig(endpointURL), optFns...)
}

// Queue describes one SQS queue to create: its name and its CreateQueue
// attributes as the SQS API takes them (string values, e.g.
// "VisibilityTimeout": "30", "RedrivePolicy":
// `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":"5"}`).
type Queue struct {
	Name       string
	Attributes map[string]string
}

// CreateQueues creates the queues with client.CreateQueue and returns each
// queue's URL by name. A queue whose RedrivePolicy names another queue of the
// list (by the last ":"-separated part of deadLetterTargetArn) is created
// after that queue, whatever the order of the list. Policy and
// RedriveAllowPolicy are left out (goaws cannot parse them); other
// attributes goaws does not know (FifoQueue, KmsMasterKeyId,
// SqsManagedSseEnabled, ...) are sent and ignored by it. It stops at the
// first failure and returns it wrapped with the queue name, having created
// nothing when the list itself is wrong: a name listed twice, a
// RedrivePolicy that is not JSON, dead-letter references that form a cycle.
func CreateQueues(ctx context.Context, client *sqs.Client, queues []Queue) (map[string]string, error) {
	ordered, err := orderByDeadLetter(queues)
	if err != nil {
		return nil, fmt.Errorf("create queues: %w", err)
	}
	urls := make(map[string]string, len(queues))
	for _, q := range ordered {
		attrs := maps.Clone(q.Attributes)
		// goaws v0.5.4 decodes these as JSON objects, not the strings SQS
		// sends, and would reject the whole request.
		delete(attrs, "Policy")
		delete(attrs, "RedriveAllowPolicy")
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: attrs})
		if err != nil {
			return nil, fmt.Errorf("create queue %s: %w", q.Name, err)
		}
		urls[q.Name] = aws.ToString(out.QueueUrl)
	}
	return urls, nil
}

// orderByDeadLetter returns the queues ordered so that every dead-letter
// queue of the list comes before the queues that redrive to it.
func orderByDeadLetter(queues []Queue) ([]Queue, error) {
	deps := make(map[string]string, len(queues)) // queue name → its DLQ name in the list
	inList := make(map[string]bool, len(queues))
	for _, q := range queues {
		if inList[q.Name] {
			return nil, fmt.Errorf("queue %s is listed twice", q.Name)
		}
		inList[q.Name] = true
	}
	for _, q := range queues {
		dlq, err := deadLetterQueueName(q)
		if err != nil {
			return nil, err
		}
		if inList[dlq] {
			deps[q.Name] = dlq
		}
	}
	ordered := make([]Queue, 0, len(queues))
	done := make(map[string]bool, len(queues))
	for len(ordered) < len(queues) {
		progress := false
		for _, q := range queues {
			if dlq, ok := deps[q.Name]; done[q.Name] || (ok && !done[dlq]) {
				continue
			}
			ordered = append(ordered, q)
			done[q.Name] = true
			progress = true
		}
		if !progress {
			return nil, errors.New("dead-letter queues form a cycle")
		}
	}
	return ordered, nil
}

// deadLetterQueueName returns the queue name in q's RedrivePolicy
// deadLetterTargetArn ("arn:aws:sqs:<region>:<account>:<name>"), or "" when
// q has no RedrivePolicy.
func deadLetterQueueName(q Queue) (string, error) {
	policy, ok := q.Attributes["RedrivePolicy"]
	if !ok {
		return "", nil
	}
	var p struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	}
	if err := json.Unmarshal([]byte(policy), &p); err != nil {
		return "", fmt.Errorf("queue %s: RedrivePolicy: %w", q.Name, err)
	}
	return p.DeadLetterTargetArn[strings.LastIndex(p.DeadLetterTargetArn, ":")+1:], nil
}
