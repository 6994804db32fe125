package closeorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/stockguard/stockguard/internal/booktest"
	"github.com/stockguard/stockguard/internal/closeorder"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/local"
	"github.com/stockguard/stockguard/internal/testkit"
)

// These tests run the whole local stack (embedded DynamoDB and SQS servers, tables and
// queues from template.yaml, functions wired as the template wires them) and drive
// closeOrder the ways Lambda would. goaws keeps global state, so they do not run in
// parallel.

var (
	newClock = testkit.NewClock
	parallel = testkit.Parallel
)

// logBuffer collects the stack's JSON log lines.
type logBuffer struct{ testkit.Log }

// lines returns the logged lines whose msg is msg, decoded.
func (b *logBuffer) lines(t testing.TB, msg string) []map[string]any {
	t.Helper()
	all, err := b.Lines()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, m := range all {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

type harness struct {
	*local.Stack
	log *logBuffer
}

// newHarness starts the stack with SQS (unless noSQS), seeded with a 4-shard "cup"
// limited to 4 per user and a plain "saucer".
func newHarness(t *testing.T, cfg local.StackConfig, noSQS bool) *harness {
	t.Helper()
	h := &harness{log: &logBuffer{}}
	cfg.Template = "../../template.yaml"
	if !noSQS {
		cfg.SQSAddr = "127.0.0.1:0"
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(h.log, nil))
	stack, err := local.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stack.Close() })
	h.Stack = stack
	err = stack.Seed(context.Background(), strings.NewReader(`[
		{"skuId":"cup","name":"cup","price":39900,"stock":200,"limitPerUser":4,"shards":4},
		{"skuId":"saucer","name":"saucer","price":12900,"stock":200}]`))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// call sends an HTTP request through the local API as user ("" = no identity).
func (h *harness) call(t testing.TB, method, path, user, body string) (int, map[string]any) {
	t.Helper()
	return testkit.Call(h.API, method, path, user, nil, body)
}

func (h *harness) order(t testing.TB, user, body string) string {
	t.Helper()
	status, out := h.call(t, "POST", "/orders", user, body)
	if status != http.StatusCreated {
		t.Fatalf("create order: %d %v", status, out)
	}
	return out["orderId"].(string)
}

func (h *harness) available(t testing.TB, sku string) int {
	t.Helper()
	status, out := h.call(t, "GET", "/skus/"+sku, "", "")
	if status != http.StatusOK {
		t.Fatalf("GET /skus/%s: %d", sku, status)
	}
	return int(out["available"].(float64))
}

// invoke calls closeOrder as Lambda would, with event as JSON, and decodes its result.
func (h *harness) invoke(t testing.TB, event any, result any) {
	t.Helper()
	payload, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.Handlers["CloseOrderFunction"].Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("closeOrder failed: %v", err)
	}
	if err := json.Unmarshal(out, result); err != nil {
		t.Fatalf("closeOrder result %s: %v", out, err)
	}
}

var messageSeq atomic.Int64

// record is an SQS record carrying body, as the event source mapping delivers it.
func record(body string) events.SQSMessage {
	return events.SQSMessage{
		MessageId: fmt.Sprintf("msg-%d", messageSeq.Add(1)), ReceiptHandle: "rh", Body: body,
		EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:CloseOrderQueue", AWSRegion: "us-east-1",
	}
}

func closeMessage(t testing.TB, h *harness, id string) string {
	t.Helper()
	order, err := h.Store.Order(context.Background(), h.owner(t, id), id)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(closeq.Message{OrderID: id, ExpiresAt: order.ExpiresAt})
	return string(body)
}

// owner finds an order's user by scanning (tests only).
func (h *harness) owner(t testing.TB, id string) string {
	t.Helper()
	for _, it := range h.scan(t, h.Tables.Orders) {
		if it["pk"] == id {
			return it["userId"].(string)
		}
	}
	t.Fatalf("no order %s", id)
	return ""
}

func (h *harness) handleSQS(t testing.TB, recs ...events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	var resp events.SQSEventResponse
	h.invoke(t, events.SQSEvent{Records: recs}, &resp)
	return resp
}

func (h *harness) scan(t testing.TB, table string) []map[string]any {
	t.Helper()
	items, err := booktest.Scan(context.Background(), h.DB, table)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// releases counts the RELEASE ledger entries per order.
func (h *harness) releases(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, it := range h.scan(t, h.Tables.StockLog) {
		if it["op"] == dynamo.OpRelease {
			out[it["ref"].(string)]++
		}
	}
	return out
}

func (h *harness) status(t testing.TB, id string) (status, reason string) {
	t.Helper()
	for _, it := range h.scan(t, h.Tables.Orders) {
		if it["pk"] == id {
			reason, _ := it["cancelReason"].(string)
			return it["status"].(string), reason
		}
	}
	t.Fatalf("no order %s", id)
	return "", ""
}

// hiddenMessages is the close-order queue's count of delayed and in-flight messages.
func (h *harness) hiddenMessages(t testing.TB) int {
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

// eventually polls cond every 50 ms until it holds or limit passes.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const cupAndSaucer = `{"items":[{"skuId":"cup","qty":2},{"skuId":"saucer","qty":1}]}`

// The whole path on the real clock: createOrder schedules the close message, the
// local event source mapping delivers it when due, closeOrder releases the stock.
func TestCloseOrder_UnpaidOrderIsReleasedThroughTheQueueOnceDue(t *testing.T) {
	h := newHarness(t, local.StackConfig{PaymentTimeout: 2 * time.Second}, false)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.Run(ctx) }()
	defer func() { cancel(); <-ran }()

	id := h.order(t, "buyer", cupAndSaucer)
	if got := h.available(t, "cup"); got != 198 {
		t.Fatalf("cup available %d after the order, want 198", got)
	}
	eventually(t, 20*time.Second, "order CANCELLED", func() bool {
		status, _ := h.status(t, id)
		return status == "CANCELLED"
	})
	if _, reason := h.status(t, id); reason != "TIMEOUT" {
		t.Errorf("cancelReason %q, want TIMEOUT", reason)
	}
	if cup, saucer := h.available(t, "cup"), h.available(t, "saucer"); cup != 200 || saucer != 200 {
		t.Errorf("available cup %d saucer %d, want 200 and 200", cup, saucer)
	}
	status, out := h.call(t, "GET", "/orders/"+id, "buyer", "")
	if status != http.StatusOK || out["status"] != "CANCELLED" || out["cancelReason"] != "TIMEOUT" || out["cancelledAt"] == nil {
		t.Errorf("GET order: %d %v", status, out)
	}
	if n := h.releases(t)[id]; n != 2 {
		t.Errorf("%d RELEASE entries, want 2 (one per line)", n)
	}
	booktest.Check(t, h.DB, h.Tables)
}

// A window longer than SQS's 900-second delay takes hops: each early delivery sends
// the message again with the delay left, and the last one releases.
func TestCloseOrder_LongWindowIsReenqueuedUntilDue(t *testing.T) {
	c := newClock()
	h := newHarness(t, local.StackConfig{PaymentTimeout: 35 * time.Minute, Now: c.Now}, false)
	id := h.order(t, "buyer", cupAndSaucer)
	if n := h.hiddenMessages(t); n != 1 {
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
		c.Advance(hop.advance)
		if resp := h.handleSQS(t, record(body)); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("failures %v", resp.BatchItemFailures)
		}
		if status, _ := h.status(t, id); status != "PENDING" {
			t.Fatalf("order %s before its expiry, want PENDING", status)
		}
		requeued := h.log.lines(t, "close message re-enqueued")
		if len(requeued) == 0 || requeued[len(requeued)-1]["delaySeconds"] != hop.delay {
			t.Fatalf("re-enqueue log lines %v, want the last with delaySeconds %v", requeued, hop.delay)
		}
	}
	if n := h.hiddenMessages(t); n != 3 {
		t.Errorf("%d delayed messages, want 3 (the first and two re-enqueued)", n)
	}
	c.Advance(5 * time.Minute)
	if resp := h.handleSQS(t, record(body)); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	if status, reason := h.status(t, id); status != "CANCELLED" || reason != "TIMEOUT" {
		t.Errorf("order %s/%s at expiry, want CANCELLED/TIMEOUT", status, reason)
	}
	booktest.Check(t, h.DB, h.Tables)
}

func TestCloseOrder_DuplicateDeliveriesReleaseOnce(t *testing.T) {
	c := newClock()
	h := newHarness(t, local.StackConfig{PaymentTimeout: time.Minute, Now: c.Now}, false)
	id := h.order(t, "buyer", cupAndSaucer)
	c.Advance(time.Minute)
	body := closeMessage(t, h, id)
	parallel(10, func(int) {
		if resp := h.handleSQS(t, record(body)); len(resp.BatchItemFailures) != 0 {
			t.Errorf("failures %v", resp.BatchItemFailures)
		}
	})
	if n := h.releases(t)[id]; n != 2 {
		t.Errorf("%d RELEASE entries, want 2 (one per line, once)", n)
	}
	if released := sumLogged(h.log.lines(t, "close messages"), "released"); released != 1 {
		t.Errorf("invocations reported %d releases, want 1", released)
	}
	if got := h.available(t, "cup"); got != 200 {
		t.Errorf("cup available %d, want 200", got)
	}
	booktest.Check(t, h.DB, h.Tables)
}

func TestCloseOrder_SweepAndQueueOnTheSameOrdersReleaseEachOnce(t *testing.T) {
	c := newClock()
	h := newHarness(t, local.StackConfig{PaymentTimeout: time.Minute, Now: c.Now}, false)
	var ids []string
	for i := range 20 {
		ids = append(ids, h.order(t, fmt.Sprintf("buyer-%d", i), cupAndSaucer))
	}
	c.Advance(time.Minute)
	var recs []events.SQSMessage
	for _, id := range ids {
		recs = append(recs, record(closeMessage(t, h, id)))
	}
	parallel(len(ids)+2, func(i int) {
		if i >= len(ids) {
			var res closeorder.SweepResult
			h.invoke(t, scheduledEvent(), &res)
			return
		}
		if resp := h.handleSQS(t, recs[i]); len(resp.BatchItemFailures) != 0 {
			t.Errorf("failures %v", resp.BatchItemFailures)
		}
	})
	rel := h.releases(t)
	for _, id := range ids {
		if rel[id] != 2 {
			t.Errorf("order %s: %d RELEASE entries, want 2", id, rel[id])
		}
	}
	if got := h.available(t, "cup"); got != 200 {
		t.Errorf("cup available %d, want 200", got)
	}
	booktest.Check(t, h.DB, h.Tables)
}

func TestCloseOrder_UserCancelRacingTheTimeoutReleasesOnce(t *testing.T) {
	c := newClock()
	h := newHarness(t, local.StackConfig{PaymentTimeout: time.Minute, Now: c.Now}, false)
	const orders = 20
	ids := make([]string, orders)
	for i := range ids {
		ids[i] = h.order(t, fmt.Sprintf("buyer-%d", i), cupAndSaucer)
	}
	c.Advance(time.Minute)
	recs := make([]events.SQSMessage, orders)
	for i, id := range ids {
		recs[i] = record(closeMessage(t, h, id))
	}
	reasons := map[string]int{}
	var mu sync.Mutex
	parallel(2*orders, func(i int) {
		o := i / 2
		if i%2 == 0 {
			status, out := h.call(t, "POST", "/orders/"+ids[o]+"/cancel", fmt.Sprintf("buyer-%d", o), "")
			if status != http.StatusOK || out["status"] != "CANCELLED" {
				t.Errorf("cancel %s: %d %v", ids[o], status, out)
			}
			return
		}
		if resp := h.handleSQS(t, recs[o]); len(resp.BatchItemFailures) != 0 {
			t.Errorf("failures %v", resp.BatchItemFailures)
		}
	})
	rel := h.releases(t)
	for _, id := range ids {
		if rel[id] != 2 {
			t.Errorf("order %s: %d RELEASE entries, want 2", id, rel[id])
		}
		_, reason := h.status(t, id)
		mu.Lock()
		reasons[reason]++
		mu.Unlock()
	}
	if reasons["USER"]+reasons["TIMEOUT"] != orders {
		t.Errorf("cancel reasons %v, want %d USER or TIMEOUT", reasons, orders)
	}
	t.Logf("winners: %v", reasons)
	booktest.Check(t, h.DB, h.Tables)
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
	c := newClock()
	var target atomic.Value
	h := newHarness(t, local.StackConfig{PaymentTimeout: time.Minute, Now: c.Now, DynamoDBWrap: failTransactionsOf(&target)}, false)
	ids := []string{h.order(t, "a", cupAndSaucer), h.order(t, "b", cupAndSaucer), h.order(t, "c", cupAndSaucer)}
	c.Advance(time.Minute)
	recs := []events.SQSMessage{record(closeMessage(t, h, ids[0])), record(closeMessage(t, h, ids[1])), record(closeMessage(t, h, ids[2])), record(`{"orderId":"x"}`)}
	target.Store(ids[1])
	resp := h.handleSQS(t, recs...)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if want := []string{recs[1].MessageId, recs[3].MessageId}; fmt.Sprint(sorted(failed)) != fmt.Sprint(sorted(want)) {
		t.Fatalf("batchItemFailures %v, want %v (the failing order and the malformed body)", failed, want)
	}
	if rel := h.releases(t); rel[ids[0]] != 2 || rel[ids[1]] != 0 || rel[ids[2]] != 2 {
		t.Fatalf("RELEASE entries %v, want 2, 0, 2", rel)
	}
	booktest.Check(t, h.DB, h.Tables)

	target.Store("")
	if resp := h.handleSQS(t, recs[1]); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("redelivery failed: %v", resp.BatchItemFailures)
	}
	if rel := h.releases(t); rel[ids[0]] != 2 || rel[ids[1]] != 2 || rel[ids[2]] != 2 {
		t.Errorf("RELEASE entries %v, want 2 each", rel)
	}
	if got := h.available(t, "cup"); got != 200 {
		t.Errorf("cup available %d, want 200", got)
	}
	booktest.Check(t, h.DB, h.Tables)
}

// With no queue at all, the sweep finds every due order through the PendingByExpiry
// index and releases it; a second sweep finds nothing left to release.
func TestCloseOrder_SweepReleasesWhatTheQueueMissed(t *testing.T) {
	c := newClock()
	h := newHarness(t, local.StackConfig{PaymentTimeout: time.Minute, Now: c.Now}, true)
	var ids []string
	for i := range 30 {
		ids = append(ids, h.order(t, fmt.Sprintf("buyer-%d", i), `{"items":[{"skuId":"cup","qty":1}]}`))
	}
	c.Advance(59 * time.Second)
	notDue := h.order(t, "late", `{"items":[{"skuId":"cup","qty":1}]}`)
	c.Advance(time.Second)

	status, out := h.call(t, "POST", "/_local/invoke/closeOrder", "", "")
	if status != http.StatusOK || out["released"] != 30.0 || out["failed"] != 0.0 {
		t.Fatalf("sweep: %d %v, want 30 released", status, out)
	}
	if s, _ := h.status(t, notDue); s != "PENDING" {
		t.Errorf("order not yet due is %s, want PENDING", s)
	}
	status, out = h.call(t, "POST", "/_local/invoke/closeOrder", "", "")
	if status != http.StatusOK || out["released"] != 0.0 {
		t.Errorf("second sweep: %d %v, want 0 released", status, out)
	}
	if got := h.available(t, "cup"); got != 199 {
		t.Errorf("cup available %d, want 199 (one order still open)", got)
	}
	booktest.Check(t, h.DB, h.Tables)
}

func TestCancel_FollowsTheContract(t *testing.T) {
	h := newHarness(t, local.StackConfig{}, true)
	id := h.order(t, "owner", cupAndSaucer)
	paid := h.order(t, "owner", cupAndSaucer)
	if _, err := h.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(h.Tables.Orders), Key: map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: paid}},
		UpdateExpression:          aws.String("SET #s = :p"),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":p": &dbtypes.AttributeValueMemberS{Value: "PAID"}},
	}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		return fmt.Sprint(h.scan(t, h.Tables.SKUs), h.scan(t, h.Tables.Orders), h.scan(t, h.Tables.StockLog))
	}
	before := snapshot()
	for _, tc := range []struct {
		name, path, user string
		status           int
		code             string
	}{
		{"no identity", "/orders/" + id + "/cancel", "", 401, "UNAUTHORIZED"},
		{"another user's order", "/orders/" + id + "/cancel", "intruder", 404, "ORDER_NOT_FOUND"},
		{"unknown order", "/orders/0123456789abcdef0123456789abcdef/cancel", "owner", 404, "ORDER_NOT_FOUND"},
		{"malformed id", "/orders/not%20an%20id/cancel", "owner", 404, "ORDER_NOT_FOUND"},
		{"paid order", "/orders/" + paid + "/cancel", "owner", 409, "ORDER_NOT_CANCELLABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := h.call(t, "POST", tc.path, tc.user, "")
			if status != tc.status || out["code"] != tc.code {
				t.Errorf("%d %v, want %d %s", status, out, tc.status, tc.code)
			}
		})
	}
	if snapshot() != before {
		t.Fatal("a rejected cancel changed the tables")
	}
	var first map[string]any
	for i := range 3 {
		status, out := h.call(t, "POST", "/orders/"+id+"/cancel", "owner", "")
		if status != http.StatusOK || out["status"] != "CANCELLED" || out["cancelReason"] != "USER" {
			t.Fatalf("cancel #%d: %d %v", i+1, status, out)
		}
		if first == nil {
			first = out
		} else if out["cancelledAt"] != first["cancelledAt"] {
			t.Errorf("cancel #%d cancelledAt %v, first said %v", i+1, out["cancelledAt"], first["cancelledAt"])
		}
	}
	if n := h.releases(t)[id]; n != 2 {
		t.Errorf("%d RELEASE entries after 3 cancels, want 2 (one per line)", n)
	}
	if got := h.available(t, "cup"); got != 198 {
		t.Errorf("cup available %d, want 198 (the paid order keeps its 2)", got)
	}
}

// The function's three event shapes, as documented fixtures, reach the right code.
func TestFunction_DispatchesEachEventShape(t *testing.T) {
	c := newClock()
	h := newHarness(t, local.StackConfig{PaymentTimeout: 15 * time.Minute, Now: c.Now}, false)
	expiring := h.order(t, "7d3f2a9e-buyer-0001", cupAndSaucer)
	cancelled := h.order(t, "7d3f2a9e-buyer-0001", cupAndSaucer)
	swept := h.order(t, "someone-else", cupAndSaucer)
	c.Advance(15 * time.Minute)

	sqsEvent := strings.ReplaceAll(fixture(t, "sqs-event.json"), "0193a1b2c3d4e5f60718293a4b5c6d7e", expiring)
	var resp events.SQSEventResponse
	h.invoke(t, json.RawMessage(sqsEvent), &resp)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("SQS: failures %v", resp.BatchItemFailures)
	}
	cancelEvent := strings.ReplaceAll(fixture(t, "cancel-order.json"), "0193a1b2c3d4e5f60718293a4b5c6d7e", cancelled)
	var httpResp events.APIGatewayV2HTTPResponse
	h.invoke(t, json.RawMessage(cancelEvent), &httpResp)
	if httpResp.StatusCode != http.StatusOK || !strings.Contains(httpResp.Body, `"cancelReason":"USER"`) {
		t.Errorf("cancel: %d %s", httpResp.StatusCode, httpResp.Body)
	}
	var sweep closeorder.SweepResult
	h.invoke(t, json.RawMessage(fixture(t, "scheduled-event.json")), &sweep)
	if sweep.Released != 1 {
		t.Errorf("sweep %+v, want 1 released", sweep)
	}
	for id, want := range map[string]string{expiring: "TIMEOUT", cancelled: "USER", swept: "TIMEOUT"} {
		if status, reason := h.status(t, id); status != "CANCELLED" || reason != want {
			t.Errorf("order %s: %s/%s, want CANCELLED/%s", id, status, reason, want)
		}
	}
	for _, bad := range []string{`{}`, `{"Records":[{"eventSource":"aws:s3"}]}`, `[1,2]`, `not json`} {
		if _, err := h.Handlers["CloseOrderFunction"].Invoke(context.Background(), []byte(bad)); err == nil {
			t.Errorf("event %s: no error", bad)
		}
	}
	booktest.Check(t, h.DB, h.Tables)
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
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
