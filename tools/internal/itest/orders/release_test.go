package orders_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// These tests run the whole local stack (embedded DynamoDB and SQS servers, tables and
// queues from template.yaml, functions wired as the template wires them) and drive
// closeOrder the ways Lambda would. goaws keeps global state, so they do not run in
// parallel.

// closeOrder is the function's logical id in template.yaml.
const closeOrder = "CloseOrderFunction"

var messageSeq atomic.Int64

// record is an SQS record carrying body, as the event source mapping delivers it.
func record(body string) events.SQSMessage {
	return events.SQSMessage{
		MessageId: fmt.Sprintf("msg-%d", messageSeq.Add(1)), ReceiptHandle: "rh", Body: body,
		EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:CloseOrderQueue", AWSRegion: "us-east-1",
	}
}

// closeMessage is the close-order queue message createOrder sends for order id.
func closeMessage(t testing.TB, h *stacktest.Stack, id string) string {
	t.Helper()
	body, _ := json.Marshal(closeq.Message{OrderID: id, ExpiresAt: h.Lookup(t, id).ExpiresAt})
	return string(body)
}

// handleSQS hands closeOrder a batch of records as the event source mapping does.
func handleSQS(t testing.TB, h *stacktest.Stack, recs ...events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	var resp events.SQSEventResponse
	h.Invoke(t, closeOrder, events.SQSEvent{Records: recs}, &resp)
	return resp
}

// releases counts the RELEASE ledger entries of each order.
func releases(t testing.TB, h *stacktest.Stack, ids []string) []int {
	t.Helper()
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = h.Ops(t, id)[string(inventory.OpRelease)]
	}
	return out
}

// dueOrders places n orders of cupAndSaucer (buyer-0 …) on a stack with a one-minute
// payment window and moves its clock to their expiry; it returns their ids and their
// close-order records.
func dueOrders(t testing.TB, h *stacktest.Stack, n int) ([]string, []events.SQSMessage) {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = h.Order(t, fmt.Sprintf("buyer-%d", i), cupAndSaucer)
	}
	h.Clock.Advance(time.Minute)
	recs := make([]events.SQSMessage, n)
	for i, id := range ids {
		recs[i] = record(closeMessage(t, h, id))
	}
	return ids, recs
}

// checkReleasedOnce fails t for each order without exactly one RELEASE entry per line
// (cupAndSaucer has 2).
func checkReleasedOnce(t testing.TB, h *stacktest.Stack, ids []string) {
	t.Helper()
	for i, n := range releases(t, h, ids) {
		if n != 2 {
			t.Errorf("order %s: %d RELEASE entries, want 2", ids[i], n)
		}
	}
}

// checkAllReleased fails t unless each order was released once, all the cups are
// available again and the books balance.
func checkAllReleased(t testing.TB, h *stacktest.Stack, ids []string) {
	t.Helper()
	checkReleasedOnce(t, h, ids)
	if got := h.Available(t, "cup"); got != 100 {
		t.Errorf("cup available %d, want 100", got)
	}
	h.Check(t)
}

// hiddenMessages is the close-order queue's count of delayed and in-flight messages.
func hiddenMessages(t testing.TB, h *stacktest.Stack) int {
	t.Helper()
	out, err := local.NewSQSClient(h.SQS.URL()).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(h.Queues["CloseOrderQueue"]),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var eventually = testkit.Eventually

const cupAndSaucer = `{"items":[{"skuId":"cup","qty":2},{"skuId":"saucer","qty":1}]}`

// The whole path on the real clock: createOrder schedules the close message, the
// local event source mapping delivers it when due, closeOrder releases the stock.
func TestCloseOrder_UnpaidOrderIsReleasedThroughTheQueueOnceDue(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, RealTime: true, Stack: local.StackConfig{PaymentTimeout: 2 * time.Second}})
	h.RunInBackground(t)

	id := h.Order(t, "buyer", cupAndSaucer)
	if got := h.Available(t, "cup"); got != 98 {
		t.Fatalf("cup available %d after the order, want 98", got)
	}
	eventually(t, 20*time.Second, "order CANCELLED", func() bool {
		return h.Lookup(t, id).Status == inventory.StatusCancelled
	})
	if reason := h.Lookup(t, id).CancelReason; reason != "TIMEOUT" {
		t.Errorf("cancelReason %q, want TIMEOUT", reason)
	}
	if cup, saucer := h.Available(t, "cup"), h.Available(t, "saucer"); cup != 100 || saucer != 100 {
		t.Errorf("available cup %d saucer %d, want 100 and 100", cup, saucer)
	}
	status, out := h.Call(t, "GET", "/orders/"+id, "buyer", nil, "")
	if status != http.StatusOK || out["status"] != "CANCELLED" || out["cancelReason"] != "TIMEOUT" || out["cancelledAt"] == nil {
		t.Errorf("GET order: %d %v", status, out)
	}
	if n := h.Ops(t, id)[string(inventory.OpRelease)]; n != 2 {
		t.Errorf("%d RELEASE entries, want 2 (one per line)", n)
	}
	h.Check(t)
}

// A copy of a keyed request sends its close message ahead with its own slot's
// expiry, naming the key's order: arriving before the order's expiry it is dropped,
// not re-enqueued, so copies never pile up at the order's expiry; the order's own
// message still releases it.
func TestCloseOrder_ACopysEarlyMessageIsDropped(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: 35 * time.Minute}})
	keyed := map[string]string{"Idempotency-Key": "tap-1"}
	status, out := h.Call(t, "POST", "/orders", "buyer", keyed, cupAndSaucer)
	if status != http.StatusCreated {
		t.Fatalf("order: %d %v", status, out)
	}
	id := out["orderId"].(string)
	own := closeMessage(t, h, id)
	h.Clock.Advance(time.Minute)
	if status, out := h.Call(t, "POST", "/orders", "buyer", keyed, cupAndSaucer); status != http.StatusOK || out["orderId"] != id {
		t.Fatalf("copy: %d %v, want 200 with %s", status, out, id)
	}
	if n := hiddenMessages(t, h); n != 2 {
		t.Fatalf("%d delayed messages, want 2 (the order's and the copy's)", n)
	}
	copyBody, _ := json.Marshal(closeq.Message{OrderID: id, ExpiresAt: h.Lookup(t, id).ExpiresAt.Add(time.Minute)})
	h.Clock.Advance(15 * time.Minute)
	if resp := handleSQS(t, h, record(string(copyBody))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	if n := hiddenMessages(t, h); n != 2 || len(h.Logged(t, "msg", "close message of a copy dropped")) != 1 {
		t.Errorf("%d delayed messages after the copy's early message, want 2 (nothing re-enqueued), and one drop logged", n)
	}
	h.Clock.Advance(20 * time.Minute)
	if resp := handleSQS(t, h, record(own)); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	if o := h.Lookup(t, id); o.Status != inventory.StatusCancelled {
		t.Errorf("order %s at expiry, want CANCELLED", o.Status)
	}
}

// A window longer than SQS's 900-second delay takes hops: each early delivery sends
// the message again with the delay left, and the last one releases.
func TestCloseOrder_LongWindowIsReenqueuedUntilDue(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: 35 * time.Minute}})
	id := h.Order(t, "buyer", cupAndSaucer)
	if n := hiddenMessages(t, h); n != 1 {
		t.Fatalf("%d delayed messages after the order, want 1", n)
	}
	body := closeMessage(t, h, id)
	for _, hop := range []struct {
		advance time.Duration
		delay   float64 // seconds the re-enqueued message waits
	}{
		{15 * time.Minute, 900},
		{15 * time.Minute, 300},
	} {
		h.Clock.Advance(hop.advance)
		if resp := handleSQS(t, h, record(body)); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("failures %v", resp.BatchItemFailures)
		}
		if status := h.Lookup(t, id).Status; status != "PENDING" {
			t.Fatalf("order %s before its expiry, want PENDING", status)
		}
		requeued := h.Logged(t, "msg", "close message re-enqueued")
		if len(requeued) == 0 || requeued[len(requeued)-1]["delaySeconds"] != hop.delay {
			t.Fatalf("re-enqueue log lines %v, want the last with delaySeconds %v", requeued, hop.delay)
		}
	}
	if n := hiddenMessages(t, h); n != 3 {
		t.Errorf("%d delayed messages, want 3 (the first and two re-enqueued)", n)
	}
	h.Clock.Advance(5 * time.Minute)
	if resp := handleSQS(t, h, record(body)); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	if o := h.Lookup(t, id); o.Status != inventory.StatusCancelled || o.CancelReason != inventory.CancelTimeout {
		t.Errorf("order %s/%s at expiry, want CANCELLED/TIMEOUT", o.Status, o.CancelReason)
	}
	h.Check(t)
}

func TestCloseOrder_DuplicateDeliveriesReleaseOnce(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: time.Minute}})
	id := h.Order(t, "buyer", cupAndSaucer)
	h.Clock.Advance(time.Minute)
	body := closeMessage(t, h, id)
	testkit.Parallel(10, func(int) {
		if resp := handleSQS(t, h, record(body)); len(resp.BatchItemFailures) != 0 {
			t.Errorf("failures %v", resp.BatchItemFailures)
		}
	})
	if n := h.Ops(t, id)[string(inventory.OpRelease)]; n != 2 {
		t.Errorf("%d RELEASE entries, want 2 (one per line, once)", n)
	}
	if released := sumLogged(h.Logged(t, "msg", "close messages"), "released"); released != 1 {
		t.Errorf("invocations reported %d releases, want 1", released)
	}
	if got := h.Available(t, "cup"); got != 100 {
		t.Errorf("cup available %d, want 100", got)
	}
	h.Check(t)
}

func TestCloseOrder_SweepAndQueueOnTheSameOrdersReleaseEachOnce(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: time.Minute}})
	ids, recs := dueOrders(t, h, 20)
	testkit.Parallel(len(ids)+2, func(i int) {
		if i >= len(ids) {
			var res orders.SweepResult
			h.Invoke(t, closeOrder, scheduledEvent(), &res)
			return
		}
		if resp := handleSQS(t, h, recs[i]); len(resp.BatchItemFailures) != 0 {
			t.Errorf("failures %v", resp.BatchItemFailures)
		}
	})
	checkAllReleased(t, h, ids)
}

func TestCloseOrder_UserCancelRacingTheTimeoutReleasesOnce(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: time.Minute}})
	const orders = 20
	ids, recs := dueOrders(t, h, orders)
	reasons := map[string]int{}
	var mu sync.Mutex
	testkit.Parallel(2*orders, func(i int) {
		o := i / 2
		if i%2 == 0 {
			status, out := h.Call(t, "POST", "/orders/"+ids[o]+"/cancel", fmt.Sprintf("buyer-%d", o), nil, "")
			if status != http.StatusOK || out["status"] != "CANCELLED" {
				t.Errorf("cancel %s: %d %v", ids[o], status, out)
			}
			return
		}
		if resp := handleSQS(t, h, recs[o]); len(resp.BatchItemFailures) != 0 {
			t.Errorf("failures %v", resp.BatchItemFailures)
		}
	})
	checkReleasedOnce(t, h, ids)
	for _, id := range ids {
		reason := string(h.Lookup(t, id).CancelReason)
		mu.Lock()
		reasons[reason]++
		mu.Unlock()
	}
	if reasons["USER"]+reasons["TIMEOUT"] != orders {
		t.Errorf("cancel reasons %v, want %d USER or TIMEOUT", reasons, orders)
	}
	t.Logf("winners: %v", reasons)
	h.Check(t)
}

// failTransactionsOf makes DynamoDB fail every TransactWriteItems naming the order
// whose id is in *target with a 500, while *target is set.
func failTransactionsOf(target *atomic.Value) local.Middleware {
	return testkit.FailDynamoDB(func(op string, body []byte) bool {
		id, _ := target.Load().(string)
		return id != "" && strings.HasSuffix(op, ".TransactWriteItems") && bytes.Contains(body, []byte(id))
	})
}

// One record failing in a batch is reported alone; the others are released and,
// when the failed record comes back, nothing is redone.
func TestCloseOrder_FailedRecordIsRetriedWithoutRedoingTheOthers(t *testing.T) {
	var target atomic.Value
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: time.Minute, DynamoDBWrap: failTransactionsOf(&target)}})
	ids, recs := dueOrders(t, h, 3)
	recs = append(recs, record(`{"orderId":"x"}`))
	target.Store(ids[1])
	resp := handleSQS(t, h, recs...)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if want := []string{recs[1].MessageId, recs[3].MessageId}; fmt.Sprint(sorted(failed)) != fmt.Sprint(sorted(want)) {
		t.Fatalf("batchItemFailures %v, want %v (the failing order and the malformed body)", failed, want)
	}
	if rel := releases(t, h, ids); rel[0] != 2 || rel[1] != 0 || rel[2] != 2 {
		t.Fatalf("RELEASE entries %v, want 2, 0, 2", rel)
	}
	h.Check(t)

	target.Store("")
	if resp := handleSQS(t, h, recs[1]); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("redelivery failed: %v", resp.BatchItemFailures)
	}
	checkAllReleased(t, h, ids)
}

// With no queue at all, the sweep finds every due order through the PendingByExpiry
// index and releases it; a second sweep finds nothing left to release.
func TestCloseOrder_SweepReleasesWhatTheQueueMissed(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{Stack: local.StackConfig{PaymentTimeout: time.Minute}})
	var ids []string
	for i := range 30 {
		ids = append(ids, h.Order(t, fmt.Sprintf("buyer-%d", i), `{"items":[{"skuId":"cup","qty":1}]}`))
	}
	h.Clock.Advance(59 * time.Second)
	notDue := h.Order(t, "late", `{"items":[{"skuId":"cup","qty":1}]}`)
	h.Clock.Advance(time.Second)

	status, out := h.Call(t, "POST", "/_local/invoke/closeOrder", "", nil, "")
	if status != http.StatusOK || out["released"] != 30.0 || out["failed"] != 0.0 {
		t.Fatalf("sweep: %d %v, want 30 released", status, out)
	}
	if s := h.Lookup(t, notDue).Status; s != inventory.StatusPending {
		t.Errorf("order not yet due is %s, want PENDING", s)
	}
	for i, n := range releases(t, h, ids) {
		if n != 1 {
			t.Errorf("order %s: %d RELEASE entries, want 1", ids[i], n)
		}
	}
	status, out = h.Call(t, "POST", "/_local/invoke/closeOrder", "", nil, "")
	if status != http.StatusOK || out["released"] != 0.0 {
		t.Errorf("second sweep: %d %v, want 0 released", status, out)
	}
	if got := h.Available(t, "cup"); got != 99 {
		t.Errorf("cup available %d, want 99 (one order still open)", got)
	}
	h.Check(t)
}

func TestCancel_FollowsTheContract(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{})
	id := h.Order(t, "owner", cupAndSaucer)
	paid := h.Order(t, "owner", cupAndSaucer)
	h.Set(t, h.Tables.Orders, paid, "status", "PAID")
	before := h.Snapshot(t)
	for _, tc := range []struct {
		name, path, user string
		status           int
		code             string
	}{
		{"no identity", "/orders/" + id + "/cancel", "", 401, "UNAUTHORIZED"},
		{"another user's order", "/orders/" + id + "/cancel", "intruder", 404, "ORDER_NOT_FOUND"},
		{"unknown order", "/orders/0123456789abcdef0123456789abcdef/cancel", "owner", 404, "ORDER_NOT_FOUND"},
		{"malformed id", "/orders/not%20an%20id/cancel", "owner", 400, "INVALID_REQUEST"},
		{"paid order", "/orders/" + paid + "/cancel", "owner", 409, "ORDER_NOT_CANCELLABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := h
			if tc.name == "malformed id" || tc.name == "no identity" { // outside the contract (the id pattern, the security), on purpose
				api = h.OutsideContract(tc.name)
			}
			status, out := api.Call(t, "POST", tc.path, tc.user, nil, "")
			if status != tc.status || out["code"] != tc.code {
				t.Errorf("%d %v, want %d %s", status, out, tc.status, tc.code)
			}
		})
	}
	if h.Snapshot(t) != before {
		t.Fatal("a rejected cancel changed the tables")
	}
	var first map[string]any
	for i := range 3 {
		status, out := h.Call(t, "POST", "/orders/"+id+"/cancel", "owner", nil, "")
		if status != http.StatusOK || out["status"] != "CANCELLED" || out["cancelReason"] != "USER" {
			t.Fatalf("cancel #%d: %d %v", i+1, status, out)
		}
		if first == nil {
			first = out
		} else if out["cancelledAt"] != first["cancelledAt"] {
			t.Errorf("cancel #%d cancelledAt %v, first said %v", i+1, out["cancelledAt"], first["cancelledAt"])
		}
	}
	if n := h.Ops(t, id)[string(inventory.OpRelease)]; n != 2 {
		t.Errorf("%d RELEASE entries after 3 cancels, want 2 (one per line)", n)
	}
	if got := h.Available(t, "cup"); got != 98 {
		t.Errorf("cup available %d, want 98 (the paid order keeps its 2)", got)
	}
}

// The function's three event shapes, as documented fixtures, reach the right code.
func TestFunction_DispatchesEachEventShape(t *testing.T) {
	h := stacktest.New(t, stacktest.Options{SQS: true, Stack: local.StackConfig{PaymentTimeout: 15 * time.Minute}})
	expiring := h.Order(t, "7d3f2a9e-buyer-0001", cupAndSaucer)
	cancelled := h.Order(t, "7d3f2a9e-buyer-0001", cupAndSaucer)
	swept := h.Order(t, "someone-else", cupAndSaucer)
	h.Clock.Advance(15 * time.Minute)

	sqsEvent := strings.ReplaceAll(rawFixture(t, "sqs-event.json"), "0193a1b2c3d4e5f60718293a4b5c6d7e", expiring)
	var resp events.SQSEventResponse
	h.Invoke(t, closeOrder, json.RawMessage(sqsEvent), &resp)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("SQS: failures %v", resp.BatchItemFailures)
	}
	cancelEvent := strings.ReplaceAll(rawFixture(t, "cancel-order.json"), "0193a1b2c3d4e5f60718293a4b5c6d7e", cancelled)
	var httpResp events.APIGatewayV2HTTPResponse
	h.Invoke(t, closeOrder, json.RawMessage(cancelEvent), &httpResp)
	if httpResp.StatusCode != http.StatusOK || !strings.Contains(httpResp.Body, `"cancelReason":"USER"`) {
		t.Errorf("cancel: %d %s", httpResp.StatusCode, httpResp.Body)
	}
	var sweep orders.SweepResult
	h.Invoke(t, closeOrder, json.RawMessage(rawFixture(t, "scheduled-event.json")), &sweep)
	if sweep.Released != 1 {
		t.Errorf("sweep %+v, want 1 released", sweep)
	}
	for id, want := range map[string]string{expiring: "TIMEOUT", cancelled: "USER", swept: "TIMEOUT"} {
		if o := h.Lookup(t, id); o.Status != inventory.StatusCancelled || string(o.CancelReason) != want {
			t.Errorf("order %s: %s/%s, want CANCELLED/%s", id, o.Status, o.CancelReason, want)
		}
	}
	for _, bad := range []string{`{}`, `{"Records":[{"eventSource":"aws:s3"}]}`, `[1,2]`, `not json`} {
		if _, err := h.Handlers["CloseOrderFunction"].Invoke(context.Background(), []byte(bad)); err == nil {
			t.Errorf("event %s: no error", bad)
		}
	}
	h.Check(t)
}

func rawFixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("../../../../internal/orders/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func scheduledEvent() json.RawMessage {
	return json.RawMessage(`{"version":"0","id":"x","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`)
}

func sumLogged(lines []map[string]any, key string) int {
	n := 0
	for _, l := range lines {
		f, _ := l[key].(float64)
		n += int(f)
	}
	return n
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
