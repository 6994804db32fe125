package sam

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/awslabs/goformation/v7/cloudformation/sqs"
)

// Queue is an AWS::SQS::Queue of the template, ready for SQS CreateQueue.
type Queue struct {
	// Name is the local queue name: the logical id, plus ".fifo" for a FIFO queue
	// (SQS requires the suffix; CloudFormation adds it to generated FIFO names too).
	Name string
	// Attributes are SQS CreateQueue attributes (SQS API reference, CreateQueue
	// Attributes) for each property the template sets: DelaySeconds,
	// MaximumMessageSize, MessageRetentionPeriod, ReceiveMessageWaitTimeSeconds and
	// VisibilityTimeout (seconds or bytes, decimal strings); FifoQueue,
	// ContentBasedDeduplication and SqsManagedSseEnabled ("true"/"false");
	// DeduplicationScope, FifoThroughputLimit, KmsMasterKeyId,
	// KmsDataKeyReusePeriodSeconds; RedrivePolicy as JSON
	// {"deadLetterTargetArn": "<local ARN>", "maxReceiveCount": n}; RedriveAllowPolicy
	// as JSON. Unset properties are left to SQS defaults, which match CloudFormation's.
	Attributes map[string]string
	// DeadLetterQueue is the Name of the queue the RedrivePolicy moves messages to, ""
	// without one.
	DeadLetterQueue string
}

// redrivePolicy is the SQS RedrivePolicy attribute
// (SQS Developer Guide, "Using dead-letter queues").
type redrivePolicy struct {
	DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	MaxReceiveCount     int    `json:"maxReceiveCount"`
}

// Queues returns every AWS::SQS::Queue of the template in creation order: a queue's
// dead-letter queue comes before it (SQS checks that the target exists), otherwise
// ordered by Name. It returns an error when a RedrivePolicy is malformed, names a queue
// that is not in the template, or the redrive targets form a cycle.
func (t *Template) Queues() ([]Queue, error) {
	queues, err := inIDOrder("queue", t.cf.GetAllSQSQueueResources(), newQueue)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Queue, len(queues))
	for _, q := range queues {
		byName[q.Name] = q
	}
	return dependencyOrder(byName)
}

func newQueue(id string, q *sqs.Queue) (Queue, error) {
	queue := Queue{Name: id, Attributes: map[string]string{}}
	if q.FifoQueue != nil && *q.FifoQueue {
		queue.Name += ".fifo"
	}
	props := reflect.ValueOf(q).Elem()
	for _, name := range plainAttributes {
		if v := props.FieldByName(name); !v.IsNil() {
			queue.Attributes[name] = fmt.Sprint(v.Elem()) // as the SQS API writes it: 30, true, text
		}
	}
	if q.RedriveAllowPolicy != nil {
		policy, err := jsonAttribute(q.RedriveAllowPolicy)
		if err != nil {
			return Queue{}, fmt.Errorf("RedriveAllowPolicy: %w", err)
		}
		queue.Attributes["RedriveAllowPolicy"] = policy
	}
	if q.RedrivePolicy != nil {
		policy, target, err := redrive(q.RedrivePolicy)
		if err != nil {
			return Queue{}, fmt.Errorf("RedrivePolicy: %w", err)
		}
		queue.Attributes["RedrivePolicy"] = policy
		queue.DeadLetterQueue = target
	}
	return queue, nil
}

// redrive normalises a RedrivePolicy, given as an object or as a JSON string, and
// returns it with the name of its target queue.
func redrive(value any) (policy, target string, err error) {
	raw, err := jsonAttribute(value)
	if err != nil {
		return "", "", err
	}
	var p struct {
		DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "", "", fmt.Errorf("decode %s: %w", raw, err)
	}
	count, err := strconv.Atoi(string(unquote(p.MaxReceiveCount)))
	if err != nil || count < 1 {
		return "", "", fmt.Errorf("maxReceiveCount %s: want a positive integer", p.MaxReceiveCount)
	}
	target, ok := queueFromARN(p.DeadLetterTargetArn)
	if !ok {
		return "", "", fmt.Errorf("deadLetterTargetArn %q is not the ARN of a queue in this template", p.DeadLetterTargetArn)
	}
	out, err := json.Marshal(redrivePolicy{DeadLetterTargetArn: p.DeadLetterTargetArn, MaxReceiveCount: count})
	if err != nil {
		return "", "", fmt.Errorf("encode: %w", err)
	}
	return string(out), target, nil
}

// unquote strips the quotes of a JSON string, so that "5" and 5 read alike.
func unquote(raw json.RawMessage) json.RawMessage {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		return raw[1 : len(raw)-1]
	}
	return raw
}

// jsonAttribute returns a policy attribute as a JSON string: a string is taken to be
// JSON already, anything else is encoded.
func jsonAttribute(value any) (string, error) {
	if s, ok := value.(string); ok {
		if !json.Valid([]byte(s)) {
			return "", fmt.Errorf("%q is not JSON", s)
		}
		return s, nil
	}
	out, err := json.Marshal(value)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return string(out), nil
}

// dependencyOrder orders queues so that every dead-letter queue precedes the queues
// that redrive to it, breaking ties by name (Kahn's algorithm over sorted names).
func dependencyOrder(byName map[string]Queue) ([]Queue, error) {
	for _, q := range byName {
		if _, ok := byName[q.DeadLetterQueue]; q.DeadLetterQueue != "" && !ok {
			return nil, fmt.Errorf("queue %s: dead-letter queue %s is not in the template", q.Name, q.DeadLetterQueue)
		}
	}
	placed := make(map[string]bool, len(byName))
	ordered := make([]Queue, 0, len(byName))
	names := slices.Sorted(maps.Keys(byName))
	for len(ordered) < len(byName) {
		progress := false
		for _, name := range names {
			q := byName[name]
			if placed[name] || (q.DeadLetterQueue != "" && !placed[q.DeadLetterQueue]) {
				continue
			}
			placed[name] = true
			ordered = append(ordered, q)
			progress = true
		}
		if !progress {
			return nil, fmt.Errorf("queues redrive to each other in a cycle: %v", unplaced(names, placed))
		}
	}
	return ordered, nil
}

func unplaced(names []string, placed map[string]bool) []string {
	var out []string
	for _, name := range names {
		if !placed[name] {
			out = append(out, name)
		}
	}
	return out
}

// plainAttributes are the AWS::SQS::Queue properties that are SQS CreateQueue
// attributes of the same name with a plain value (a number, true/false or text):
// goformation's sqs.Queue names its fields after the properties, as pointers, nil when
// the template leaves them out.
var plainAttributes = []string{
	"DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds",
	"VisibilityTimeout", "KmsDataKeyReusePeriodSeconds", "FifoQueue", "ContentBasedDeduplication",
	"SqsManagedSseEnabled", "DeduplicationScope", "FifoThroughputLimit", "KmsMasterKeyId",
}
