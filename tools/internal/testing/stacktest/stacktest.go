// Package stacktest starts stockguard's local stack for a test, as net/http/httptest
// starts a server: New brings up the embedded DynamoDB API (and the SQS API when
// asked) with the tables, queues and functions of the repository's template.yaml, on a
// settable clock, logging JSON into a sink the test reads back, seeded with
// StandardSeed, and stops it when the test ends. Its methods are what integration
// tests do to the stack: calls through the local HTTP API, orders, reads of the three
// tables, Lambda invocations, payments through the stand-in WeChat Pay platform and
// the conservation check of tools/internal/testing/booktest.
//
// Every request a test sends through the stack's HTTP API, and every answer, is
// checked against the OpenAPI document (openapitest): a mismatch fails the test.
// Requests the test means to be outside the contract go through
// OutsideContract. Benchmarks run without the check: they measure the stack.
//
// goaws keeps global state, so only one stack with SQS may run per process: tests
// that set Options.SQS do not run in parallel.
//
// A test binary whose TestMain calls Main with Moto (the switch AWSEnv,
// STOCKGUARD_AWS=moto) runs its stacks on moto_server instead of the embedded
// servers: DynamoDB, SQS and SNS (local.StackConfig.AWSEndpoint), one moto_server
// per stack while it runs.
package stacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
)

// StandardSeed is the SKUs a stack starts with unless Options.Seed says otherwise
// (prices in fen): "cup", 39,900 fen, 100 units over 4 shards, at most 4 per user;
// "saucer", 12,900 fen, 100 units on one shard, no limit. Neither ships (delivery
// "none"), so their orders need no address; tests of parcels seed SKUs of their own.
const StandardSeed = `[
	{"skuId":"cup","delivery":"none","name":"cup","price":39900,"stock":100,"limitPerUser":4,"shards":4},
	{"skuId":"saucer","delivery":"none","name":"saucer","price":12900,"stock":100}]`

// Options configure New. The zero value is the standard stack: no SQS server, the
// template's settings, StandardSeed, Stack.Clock as every function's clock.
type Options struct {
	// Seed is the SKUs to create, as local.Stack.Seed reads them; "" seeds
	// StandardSeed and "[]" nothing.
	Seed string
	// SQS starts the embedded SQS API on a free port, with the template's queues.
	SQS bool
	// RealTime runs the functions on time.Now instead of Stack.Clock (tests that wait
	// for the queue's real delays); Stack.Clock is then nil.
	RealTime bool
	// Stack is the rest of the stack's configuration. New sets its Template (the
	// repository's template.yaml), Logger (into Stack.Log), Now (Stack.Clock) and,
	// with SQS, SQSAddr.
	Stack local.StackConfig
}

// Stack is a running local stack and what a test reads of it.
type Stack struct {
	*local.Stack
	// Clock is every function's clock, at 2026-11-11T00:00:00Z when New returns; nil
	// with Options.RealTime.
	Clock *testkit.Clock
	// Log holds the JSON log lines of the functions and the gateway.
	Log *testkit.Log
	// Contract checks the HTTP API's traffic against the OpenAPI document; nil in
	// benchmarks.
	Contract *openapitest.Checker
	// Moto is the endpoint of the moto_server the stack runs on (see Main); "" on
	// the embedded servers.
	Moto string

	ctx context.Context // of the requests; set by OutsideContract
}

// New starts a stack configured by opts and registers its Close on t. It fails t when
// the stack does not start or the seed is refused.
func New(t testing.TB, opts Options) *Stack {
	t.Helper()
	s := &Stack{Log: &testkit.Log{}}
	cfg := opts.Stack
	cfg.Template = filepath.Join(testkit.ModuleRoot(t), "template.yaml")
	cfg.Logger = slog.New(slog.NewJSONHandler(s.Log, nil))
	if !opts.RealTime {
		s.Clock = testkit.NewClock()
		cfg.Now = s.Clock.Now
	}
	if opts.SQS {
		cfg.SQSAddr = "127.0.0.1:0"
	}
	if OnMoto() {
		s.Moto = MotoURL(t)
		cfg.AWSEndpoint = s.Moto
	}
	if _, bench := t.(*testing.B); !bench {
		s.Contract = openapitest.New(t)
		cfg.APIWrap = s.Contract.Wrap
	}
	stack, err := local.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stack.Close() })
	s.Stack = stack
	seed := opts.Seed
	if seed == "" {
		seed = StandardSeed
	}
	if err := stack.Seed(context.Background(), strings.NewReader(seed)); err != nil {
		t.Fatal(err)
	}
	return s
}

// now is the stack's time.
func (s *Stack) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// Call sends one request through the local HTTP API as user (X-User-Id; "" sends
// none) with headers and body, and returns the status and the JSON body decoded (nil
// when it is not a JSON object). A request to a merchant route (/admin/) names the
// local operator (X-Operator-Id: local.LocalOperator) unless headers set another.
func (s *Stack) Call(t testing.TB, method, path, user string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequestWithContext(s.context(), method, path, strings.NewReader(body))
	if user != "" {
		req.Header.Set("X-User-Id", user)
	}
	if strings.HasPrefix(path, "/admin/") {
		req.Header.Set(local.OperatorHeader, local.LocalOperator)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.API.ServeHTTP(rec, req)
	var out map[string]any
	json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// OutsideContract returns s for requests that the contract forbids, on purpose (why
// says how: "qty 0", "malformed order id"): the OpenAPI check skips the requests sent
// through the Stack it returns (Call, Notify, Pay) and still checks their answers.
func (s *Stack) OutsideContract(why string) *Stack {
	out := *s
	out.ctx = openapitest.OutsideContract(s.context(), why)
	return &out
}

// context is the context of s's requests.
func (s *Stack) context() context.Context {
	if s.ctx == nil {
		return context.Background()
	}
	return s.ctx
}

// Order places the order body (POST /orders) for user and returns its id; it fails t
// unless the answer is 201 Created.
func (s *Stack) Order(t testing.TB, user, body string) string {
	t.Helper()
	status, out := s.Call(t, http.MethodPost, "/orders", user, nil, body)
	if status != http.StatusCreated {
		t.Fatalf("create order for %s: %d %v", user, status, out)
	}
	return out["orderId"].(string)
}

// Lookup reads the order with id, whoever owns it.
func (s *Stack) Lookup(t testing.TB, id string) *inventory.Order {
	t.Helper()
	order, err := s.Store.Lookup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return order
}

// Available is the SKU's available units summed over its shards, read strongly from
// the store: GET /skus/{skuId} may answer a read up to 1 s old (stock.MaxStale),
// so a test checking what a change did reads the store.
func (s *Stack) Available(t testing.TB, sku string) int {
	t.Helper()
	got, err := s.Store.SKU(context.Background(), sku)
	if err != nil {
		t.Fatal(err)
	}
	return got.Available
}

// OnHand is the SKU's on-hand units summed over its shards.
func (s *Stack) OnHand(t testing.TB, sku string) int {
	t.Helper()
	got, err := s.Store.SKU(context.Background(), sku)
	if err != nil {
		t.Fatal(err)
	}
	return got.OnHand
}

// Scan returns every item of table, read strongly consistently.
func (s *Stack) Scan(t testing.TB, table string) []map[string]any {
	t.Helper()
	items, err := booktest.Scan(context.Background(), s.DB, table)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// Item returns the item pk of table, nil when there is none.
func (s *Stack) Item(t testing.TB, table, pk string) map[string]any {
	t.Helper()
	for _, it := range s.Scan(t, table) {
		if it["pk"] == pk {
			return it
		}
	}
	return nil
}

// Snapshot is every item of the three tables, ordered by key, for before/after
// comparisons.
func (s *Stack) Snapshot(t testing.TB) string {
	t.Helper()
	var all [][]map[string]any
	for _, table := range []string{s.Tables.SKUs, s.Tables.Orders, s.Tables.StockLog} {
		items := s.Scan(t, table)
		slices.SortFunc(items, func(a, b map[string]any) int { return strings.Compare(a["pk"].(string), b["pk"].(string)) })
		all = append(all, items)
	}
	return fmt.Sprint(all)
}

// Ops counts the ledger entries of ref (an order id, a run) by op.
func (s *Stack) Ops(t testing.TB, ref string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, it := range s.Scan(t, s.Tables.StockLog) {
		if it["ref"] == ref {
			out[it["op"].(string)]++
		}
	}
	return out
}

// Set sets one attribute of the item pk of table behind the store's back, as an
// operator's edit would.
func (s *Stack) Set(t testing.TB, table, pk, name string, value any) {
	t.Helper()
	s.update(t, table, pk, expression.Set(expression.Name(name), expression.Value(value)))
}

// Add adds delta (negative: subtracts) to one number attribute of the item pk of table
// behind the store's back.
func (s *Stack) Add(t testing.TB, table, pk, name string, delta int) {
	t.Helper()
	s.update(t, table, pk, expression.Set(expression.Name(name), expression.Name(name).Plus(expression.Value(delta))))
}

func (s *Stack) update(t testing.TB, table, pk string, upd expression.UpdateBuilder) {
	t.Helper()
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}); err != nil {
		t.Fatal(err)
	}
}

// Delete deletes the item pk of table behind the store's back.
func (s *Stack) Delete(t testing.TB, table, pk string) {
	t.Helper()
	if _, err := s.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
		TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
	}); err != nil {
		t.Fatal(err)
	}
}

// Invoke calls the function with logical id function (e.g. "CloseOrderFunction") as
// Lambda would, with event marshalled to JSON, and decodes its result into result. It
// fails t when the function returns an error.
func (s *Stack) Invoke(t testing.TB, function string, event, result any) {
	t.Helper()
	payload, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Handlers[function].Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("%s failed: %v", function, err)
	}
	if err := json.Unmarshal(out, result); err != nil {
		t.Fatalf("%s result %s: %v", function, out, err)
	}
}

// RunInBackground runs the stack's event sources (local.Stack.Run: SQS pollers and
// schedules) until the test ends, then stops them and waits for them to return.
func (s *Stack) RunInBackground(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
}

// Drained waits up to 20 s until the queue with logical id queue holds no message:
// visible, in flight or delayed (SQS API Reference, GetQueueAttributes:
// ApproximateNumberOfMessages counts the messages available for retrieval,
// ApproximateNumberOfMessagesNotVisible those in flight and
// ApproximateNumberOfMessagesDelayed the delayed ones; goaws counts them all in the
// first and leaves out the last).
func (s *Stack) Drained(t testing.TB, queue string) {
	t.Helper()
	counts := []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}
	testkit.Eventually(t, 20*time.Second, queue+" drained", func() bool {
		out, err := s.SQSClient().GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(s.Queues[queue]), AttributeNames: counts})
		if err != nil {
			return false
		}
		for _, name := range counts {
			if n, ok := out.Attributes[string(name)]; ok && n != "0" {
				return false
			}
		}
		return true
	})
}

// RunScheduled runs function ("closeOrder", "reconcile") now, as its schedule does,
// through POST /_local/invoke/{function}, and decodes its result into result.
func (s *Stack) RunScheduled(t testing.TB, function string, result any) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.API.ServeHTTP(rec, httptest.NewRequestWithContext(s.context(), http.MethodPost, "/_local/invoke/"+function, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", function, rec.Code, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), result); err != nil {
		t.Fatalf("%s result %s: %v", function, rec.Body.String(), err)
	}
}

// Notify sends a WeChat Pay notification (headers and body) through the notify route.
func (s *Stack) Notify(t testing.TB, headers map[string]string, body []byte) (int, map[string]any) {
	t.Helper()
	return s.Call(t, http.MethodPost, "/payments/wechatpay/notify", "", headers, string(body))
}

// Pay sends the notification the stand-in platform (Stack.Payments) signs for tx, at
// the stack's time, through the notify route.
func (s *Stack) Pay(t testing.TB, tx wechatpay.Transaction) (int, map[string]any) {
	t.Helper()
	headers, body, err := s.Payments.Notify(tx, s.now())
	if err != nil {
		t.Fatal(err)
	}
	return s.Notify(t, headers, body)
}

// Logged returns the log lines whose key holds value, decoded (e.g. "msg", "close
// messages" or "level", "ERROR").
func (s *Stack) Logged(t testing.TB, key string, value any) []map[string]any {
	t.Helper()
	lines, err := s.Log.Lines()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range lines {
		if l[key] == value {
			out = append(out, l)
		}
	}
	return out
}

// Check fails t for every conservation rule the tables break (docs/design.md,
// "Conservation"; booktest.Check).
func (s *Stack) Check(t testing.TB) {
	t.Helper()
	booktest.Check(t, s.DB, s.Tables)
}

// CountGetItems is a DynamoDB client option (local.StackConfig.DynamoDBOptions) that
// adds 1 to n for every GetItem the client sends of an item whose pk starts with
// prefix (tests count the reads of tickets, "ticket#", or waitlist entries, "wait#").
func CountGetItems(prefix string, n *atomic.Int64) func(*dynamodb.Options) {
	count := middleware.InitializeMiddlewareFunc("countGetItems",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if g, ok := in.Parameters.(*dynamodb.GetItemInput); ok {
				if pk, ok := g.Key["pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, prefix) {
					n.Add(1)
				}
			}
			return next.HandleInitialize(ctx, in)
		})
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error { return st.Initialize.Add(count, middleware.After) })
	}
}
