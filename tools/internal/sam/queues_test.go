package sam

import (
	"strings"
	"testing"
)

func TestQueues_CreatesDeadLetterQueuesFirst(t *testing.T) {
	queues, err := load(t, "functions.yaml").Queues()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range queues {
		got = append(got, q.Name)
	}
	// By name alone CloseOrderQueue would come before its dead-letter queue.
	want := "DeadLetterQueue RefundDeadLetterQueue.fifo RefundQueue.fifo CloseOrderQueue"
	if strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %s", got, want)
	}
}

func TestQueues_MapsPropertiesToCreateQueueAttributes(t *testing.T) {
	queues, err := load(t, "functions.yaml").Queues()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Queue{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	tests := []struct {
		name string
		want Queue
	}{
		{"CloseOrderQueue", Queue{
			Name: "CloseOrderQueue",
			Attributes: map[string]string{
				"DelaySeconds":                  "0",
				"VisibilityTimeout":             "60",
				"MessageRetentionPeriod":        "345600",
				"ReceiveMessageWaitTimeSeconds": "20",
				"RedrivePolicy":                 `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:DeadLetterQueue","maxReceiveCount":5}`,
			},
			DeadLetterQueue: "DeadLetterQueue",
		}},
		{"DeadLetterQueue", Queue{
			Name:       "DeadLetterQueue",
			Attributes: map[string]string{"MessageRetentionPeriod": "1209600"},
		}},
		{"FIFOQueueWithJSONStringRedrivePolicy", Queue{
			Name: "RefundQueue.fifo",
			Attributes: map[string]string{
				"FifoQueue":                 "true",
				"ContentBasedDeduplication": "true",
				"RedrivePolicy":             `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:RefundDeadLetterQueue.fifo","maxReceiveCount":3}`,
			},
			DeadLetterQueue: "RefundDeadLetterQueue.fifo",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equalJSON(t, "queue", byName[tt.want.Name], tt.want)
		})
	}
}
