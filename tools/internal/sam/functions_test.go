package sam

import (
	"reflect"
	"strings"
	"testing"
)

func TestFunctions_AppliesGlobalsTheWaySAMMergesThem(t *testing.T) {
	tpl := load(t, "functions.yaml")
	tests := []struct {
		name string
		want Function
	}{
		{
			// Scalars set on the function win; unset ones come from Globals; the
			// environment is Globals' merged with the function's; reserved concurrency
			// is the function's own.
			name: "CloseOrderFunction",
			want: Function{
				Name: "CloseOrderFunction", Runtime: "provided.al2023", Architectures: []string{"arm64"},
				Handler: "bootstrap", CodeURI: ".", BuildMethod: "makefile", Timeout: 30, MemorySize: 256,
				ReservedConcurrency: new(7),
			},
		},
		{
			// Lists are Globals' entries followed by the function's; an S3 CodeUri has
			// no path; no Metadata means no BuildMethod.
			name: "ReconcileFunction",
			want: Function{
				Name: "ReconcileFunction", Runtime: "provided.al2", Architectures: []string{"arm64", "arm64"},
				Handler: "reconcile", Timeout: 10, MemorySize: 256,
				Environment: map[string]string{"STAGE": "test", "LOG_LEVEL": "info"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := functionNamed(t, tpl, tt.name)
			got.Events, got.Policies = Events{}, Policies{}
			if tt.want.Environment == nil {
				got.Environment = nil // checked in TestLoad_ResolvesIntrinsicsToLocalValues
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestFunctions_DefaultsToLambdaDefaultsWhenNeitherFunctionNorGlobalsSetsThem(t *testing.T) {
	got := functionNamed(t, load(t, "api.yaml"), "OrdersFunction")
	if got.Timeout != 3 || got.MemorySize != 128 || !reflect.DeepEqual(got.Architectures, []string{"x86_64"}) {
		t.Errorf("Timeout %d, MemorySize %d, Architectures %v; want Lambda's defaults 3, 128, [x86_64]",
			got.Timeout, got.MemorySize, got.Architectures)
	}
}

func TestFunctions_DecodesEventsByType(t *testing.T) {
	got := functionNamed(t, load(t, "functions.yaml"), "CloseOrderFunction").Events
	want := Events{
		SQS: []SQSEvent{
			{Name: "Refunds", Queue: "RefundQueue.fifo", BatchSize: 10, Enabled: false},
			{
				Name: "Timeouts", Queue: "CloseOrderQueue", BatchSize: 5, MaximumBatchingWindow: 2,
				FunctionResponseTypes: []string{"ReportBatchItemFailures"}, Enabled: true, MaximumConcurrency: 4,
			},
		},
		Schedule: []ScheduleEvent{
			{Name: "NightlyAudit", Type: "ScheduleV2", Expression: "cron(0 3 * * ? *)", Timezone: "Asia/Shanghai", Enabled: false},
			{Name: "Sweep", Type: "Schedule", Expression: "rate(1 minute)", Input: `{"sweep":true}`, Enabled: true},
		},
		SNS: []SNSEvent{{Name: "Alerts", Topic: "AlertTopic"}},
	}
	equalJSON(t, "events", got, want)
}

func TestFunctions_SplitsPoliciesByKind(t *testing.T) {
	got := functionNamed(t, load(t, "functions.yaml"), "CloseOrderFunction").Policies
	want := Policies{
		Managed:   []string{"AWSLambdaBasicExecutionRole"},
		Templates: []string{"SQSPollerPolicy"},
		Statements: []Statement{
			{
				Effect:   "Allow",
				Action:   []string{"dynamodb:Query"},
				Resource: []string{"arn:aws:dynamodb:us-east-1:000000000000:table/OrdersTable/index/PendingByExpiry"},
			},
			{
				Sid:    "ReleaseStock",
				Effect: "Allow",
				Action: []string{"dynamodb:UpdateItem", "dynamodb:PutItem"},
				Resource: []string{
					"arn:aws:dynamodb:us-east-1:000000000000:table/OrdersTable",
					"arn:aws:dynamodb:us-east-1:000000000000:table/SkusTable",
				},
			},
		},
	}
	equalJSON(t, "policies", got, want)
}

func TestFunctions_RejectsSQSEventOnQueueOutsideTemplate(t *testing.T) {
	_, err := load(t, "invalid/sqs_event_external_queue.yaml").Functions()
	if err == nil || !strings.Contains(err.Error(), "function Fn: event Work (SQS)") {
		t.Errorf("err = %v, want an error naming the function and event", err)
	}
}
