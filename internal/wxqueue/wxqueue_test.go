package wxqueue_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/wxqueue"
)

const (
	order = "01a22e5575f07d0ea5bc5c5688f0f062"
	entry = "5f07d0ea5bc5c5688f0f06201a22e557"
)

func TestDecode_RefusesWhatIsNotAMessageOfTheQueue(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `{"kind":"upload"}`, `{"kind":"upload","orderId":"x y"}`, `{"kind":"refundDone","orderId":"` + order + `"}`,
		`{"kind":"ship","orderId":"` + order + `"}`, `{"kind":"payReminder","orderId":"` + order + `","at":"tomorrow"}`,
		`{"kind":"aftersale","orderId":"` + order + `"}`, `{"kind":"aftersale","aftersaleId":"as-1"}`,
		`{"kind":"waitlist","waitlistId":"` + entry + `"}`, `{"kind":"waitlist","holdRef":"wait.` + entry + `.x"}`,
		`{"kind":"waitlist","waitlistId":"` + order + `","holdRef":"wait.` + entry + `.x"}`,
		`{"kind":"waitlist","waitlistId":"X` + entry[1:] + `","holdRef":"wait.X` + entry[1:] + `.x"}`,
	} {
		if _, err := wxqueue.Decode(body); !errors.Is(err, wxqueue.ErrMalformed) {
			t.Errorf("%q: %v", body, err)
		}
	}
	for _, body := range []string{`{"kind":"upload","orderId":"` + order + `"}`, `{"kind":"refundDone","outRefundNo":"` + order + `_R"}`,
		`{"kind":"aftersale","orderId":"` + order + `","aftersaleId":"as-1"}`,
		`{"kind":"waitlist","waitlistId":"` + entry + `","holdRef":"wait.` + entry + `.mf3k2"}`} {
		if _, err := wxqueue.Decode(body); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// A batch: each record goes to its kind's handler; a handler's error lists only its
// record for another delivery; a malformed record is dropped, not retried.
func TestWorker_RetriesOnlyTheFailedRecords(t *testing.T) {
	handled := map[string]int{}
	w := wxqueue.NewWorker(nil, slog.New(slog.NewJSONHandler(io.Discard, nil)), 0, map[string]wxqueue.Handler{
		wxqueue.KindUpload: func(_ context.Context, m wxqueue.Message) error {
			handled[m.OrderID]++ // records of one kind run one at a time here: a single record each
			return nil
		},
		wxqueue.KindPresale: func(context.Context, wxqueue.Message) error { return errors.New("WeChat busy") },
	})
	resp, err := w.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "a", Body: `{"kind":"upload","orderId":"` + order + `"}`},
		{MessageId: "b", Body: `{"kind":"presale","orderId":"` + order + `"}`},
		{MessageId: "c", Body: `not json`},
	}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "b" || handled[order] != 1 {
		t.Errorf("failures %+v, err %v, uploads %v; want only b retried and one upload", resp.BatchItemFailures, err, handled)
	}
}
