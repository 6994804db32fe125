package lambdaevent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func TestKindOf_TellsTheEventSourcesApart(t *testing.T) {
	fixture := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for event, want := range map[string]Kind{
		fixture("../orders/testdata/sqs-event.json"):             SQS,
		fixture("../orders/testdata/scheduled-event.json"):       Scheduled,
		fixture("../orders/testdata/cancel-order.json"):          HTTP,
		fixture("../orders/testdata/create-order.json"):          HTTP,
		fixture("../alertchat/testdata/alarm-sns-event.json"):    SNS,
		`{"Records":[{"eventSource":"aws:s3"}]}`:                 Unknown,
		`{"Records":[{"EventSource":"aws:sns","Sns":{}}]}`:       SNS,
		`{"routeKey":"POST /orders"}`:                            Unknown, // payload format 1.0 has no version 2.0
		`{"source":"aws.events","detail-type":"Object Created"}`: Unknown,
		`[]`: Unknown, `{}`: Unknown, `null`: Unknown, `not json`: Unknown,
	} {
		if got := KindOf([]byte(event)); got != want {
			t.Errorf("%.60s: %s, want %s", event, got, want)
		}
	}
}

func TestFunction_RefusesEventsItHasNoTriggerForWithoutRunning(t *testing.T) {
	runs := 0
	f := &Function{Name: "reconcile", Scheduled: func(context.Context) (any, error) { runs++; return 7, nil }}
	for _, event := range []string{`[]`, `{}`, `{"Records":[{"eventSource":"aws:sqs"}]}`, `{"version":"2.0","routeKey":"POST /orders"}`} {
		if _, err := f.Invoke(context.Background(), json.RawMessage(event)); !errors.Is(err, ErrNotServed) {
			t.Errorf("%s: %v, want ErrNotServed", event, err)
		}
	}
	if runs != 0 {
		t.Fatalf("ran %d times on foreign events", runs)
	}
	got, err := f.Invoke(context.Background(), json.RawMessage(`{"source":"aws.events","detail-type":"Scheduled Event"}`))
	if err != nil || got != 7 || runs != 1 {
		t.Errorf("scheduled event: %d %v after %d runs", got, err, runs)
	}
}

func TestFunction_HandsEachKindToItsHandler(t *testing.T) {
	var served []string
	f := &Function{
		Name: "closeOrder",
		HTTP: func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			served = append(served, req.RouteKey)
			return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
		},
		SQS: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			served = append(served, "sqs:"+ev.Records[0].MessageId)
			return events.SQSEventResponse{}, nil
		},
		SNS: func(_ context.Context, ev events.SNSEvent) error {
			served = append(served, "sns:"+ev.Records[0].SNS.Subject)
			return nil
		},
	}
	for _, event := range []string{
		`{"version":"2.0","routeKey":"POST /orders/{orderId}/cancel"}`,
		`{"Records":[{"messageId":"m-1","eventSource":"aws:sqs"}]}`,
		`{"Records":[{"EventSource":"aws:sns","Sns":{"Subject":"alarm"}}]}`,
	} {
		if _, err := f.Invoke(context.Background(), json.RawMessage(event)); err != nil {
			t.Errorf("%s: %v", event, err)
		}
	}
	if want := []string{"POST /orders/{orderId}/cancel", "sqs:m-1", "sns:alarm"}; strings.Join(served, ",") != strings.Join(want, ",") {
		t.Errorf("served %q, want %q", served, want)
	}
	if _, err := f.Invoke(context.Background(), json.RawMessage(`{"source":"aws.events","detail-type":"Scheduled Event"}`)); !errors.Is(err, ErrNotServed) {
		t.Errorf("scheduled event without a schedule: %v, want ErrNotServed", err)
	}
}

func TestServe_DecodesTheEventOrRefusesItWithoutRunning(t *testing.T) {
	type batch struct {
		Records []struct{ Body string }
	}
	var got []string
	fn := func(_ context.Context, b batch) (int, error) {
		for _, r := range b.Records {
			got = append(got, r.Body)
		}
		return len(b.Records), nil
	}
	out, err := Serve(context.Background(), "closeOrder", SQS, json.RawMessage(`{"Records":[{"Body":"a"},{"Body":"b"}]}`), fn)
	if n, _ := out.(int); err != nil || n != 2 || len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("Serve = %v, %v after %q; want 2, nil after [a b]", out, err, got)
	}
	out, err = Serve(context.Background(), "closeOrder", SQS, json.RawMessage(`{"Records":"no"}`), fn)
	if out != nil || err == nil || !strings.HasPrefix(err.Error(), "closeOrder: bad SQS batch: ") || len(got) != 2 {
		t.Errorf("a malformed batch: %v, %v (fn saw %q); want an error naming closeOrder and the SQS batch, fn not run", out, err, got)
	}
}
