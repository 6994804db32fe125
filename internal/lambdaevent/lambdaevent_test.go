package lambdaevent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
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
		fixture("../closeorder/testdata/sqs-event.json"):         SQS,
		fixture("../closeorder/testdata/scheduled-event.json"):   Scheduled,
		fixture("../closeorder/testdata/cancel-order.json"):      HTTP,
		fixture("../createorder/testdata/create-order.json"):     HTTP,
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

func TestOnlyScheduled_RefusesOtherEventsWithoutRunning(t *testing.T) {
	runs := 0
	h := OnlyScheduled("reconcile", func(context.Context) (int, error) { runs++; return 7, nil })
	for _, event := range []string{`[]`, `{}`, `{"Records":[{"eventSource":"aws:sqs"}]}`, `{"version":"2.0","routeKey":"POST /orders"}`} {
		if _, err := h(context.Background(), json.RawMessage(event)); !errors.Is(err, ErrNotServed) {
			t.Errorf("%s: %v, want ErrNotServed", event, err)
		}
	}
	if runs != 0 {
		t.Fatalf("ran %d times on foreign events", runs)
	}
	got, err := h(context.Background(), json.RawMessage(`{"source":"aws.events","detail-type":"Scheduled Event"}`))
	if err != nil || got != 7 || runs != 1 {
		t.Errorf("scheduled event: %d %v after %d runs", got, err, runs)
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
