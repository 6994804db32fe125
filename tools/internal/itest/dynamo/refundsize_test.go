package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/core"
	minidyn "github.com/truora/minidyn/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
)

// itemSizes measures items as DynamoDB counts them (core.ItemSize, "DynamoDB item
// sizes and formats", what the embedded server refuses items past 400 KB by): it
// keeps the last GetItem answer the server gave, in DynamoDB's JSON.
type itemSizes struct {
	mu   sync.Mutex
	last []byte
}

func (s *itemSizes) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetItem") {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		s.mu.Lock()
		s.last = rec.Body.Bytes()
		s.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// of is the size in bytes of the item pk of the orders table.
func (s *itemSizes) of(t *testing.T, e *env, pk string) int {
	t.Helper()
	if _, err := e.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.Tables.Orders), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}, ConsistentRead: aws.Bool(true),
	}); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out struct{ Item map[string]*minidyn.Item }
	if err := json.Unmarshal(s.last, &out); err != nil || out.Item == nil {
		t.Fatalf("GetItem %s: %v %s", pk, err, s.last)
	}
	return core.ItemSize(out.Item)
}

// writeUnits is what a transactional write of an item of size bytes costs: 2 per KB
// (Developer Guide, "Capacity management for transactions").
func writeUnits(size int) int { return 2 * ((size + 1023) / 1024) }

// A refund keeps its reason once on the order's item: one with the longest reason
// (200 characters, of 1 or 3 UTF-8 bytes each) grows the item by the reason and the
// refund's own fields, not by the reason twice.
func TestStartRefund_StoresItsReasonOnceOnTheOrder(t *testing.T) {
	for _, reason := range []string{strings.Repeat("x", inventory.MaxReasonLength), strings.Repeat("退", inventory.MaxReasonLength)} {
		sizes := &itemSizes{}
		e := newEnv(t, dynamo.Options{}, sizes.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
		order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 2})
		paid := sizes.of(t, e, order.ID)
		req := operator
		req.Reason = reason
		if _, _, err := e.store.StartRefund(context.Background(), order, req, 0); err != nil {
			t.Fatal(err)
		}
		refunded := sizes.of(t, e, order.ID)
		t.Logf("order item: %d bytes paid (%d WU a transactional write), %d with one refund of a %d-byte reason (%d WU)",
			paid, writeUnits(paid), refunded, len(req.Reason), writeUnits(refunded))
		// The refund's other fields (refundId, out_refund_no, lines, amount, status,
		// times, who) take about 250 bytes.
		if grown := refunded - paid; grown > len(req.Reason)+400 {
			t.Errorf("one refund grew the order's item by %d bytes, more than its %d-byte reason once and 400 bytes", grown, len(req.Reason))
		}
	}
}

// An order whose refund was stored with its reason inside the body too (before the
// reason was kept once) still answers a replay of that refund as a replay, refuses the
// same refundId with another reason, and loses the second copy when its refunds next
// change.
func TestStartRefund_ReadsRefundsStoredWithTheReasonTwice(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 10})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 2})
	req := operator
	req.RefundID = "r-1"
	if _, _, err := e.store.StartRefund(context.Background(), order, req, 0); err != nil {
		t.Fatal(err)
	}
	// The body as it was written before: lines, goods and the reason quoted.
	old := req.Body() + ` reason="` + req.Reason + `"`
	expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("refunds[0].body"), expression.Value(old))).Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(e.Tables.Orders), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: order.ID}},
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}); err != nil {
		t.Fatal(err)
	}
	storedBody := func() string {
		refunds, _ := e.Item(t, e.Tables.Orders, order.ID)["refunds"].([]any)
		if len(refunds) != 1 {
			t.Fatalf("refunds %v, want one", refunds)
		}
		body, _ := refunds[0].(map[string]any)["body"].(string)
		return body
	}
	if got := storedBody(); got != old {
		t.Fatalf("stored body %q, want the old form %q", got, old)
	}

	read, err := e.store.Lookup(context.Background(), order.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, started, err := e.store.StartRefund(context.Background(), read, req, 0); err != nil || started != "" || len(got.Refunds) != 1 {
		t.Errorf("the same refund again: %d refunds, started %q, %v; want a replay", len(got.Refunds), started, err)
	}
	other := req
	other.Reason = "another reason"
	if _, _, err := e.store.StartRefund(context.Background(), read, other, 0); !errors.Is(err, inventory.ErrIdempotencyKeyReused) {
		t.Errorf("refundId r-1 with another reason: %v, want ErrIdempotencyKeyReused", err)
	}
	refund, err := e.store.RefundByNo(context.Background(), read.Refunds[0].OutRefundNo)
	if err != nil {
		t.Fatal(err)
	}
	if _, did, err := e.store.MarkRefunded(context.Background(), result(refund, "SUCCESS")); err != nil || !did {
		t.Fatalf("MarkRefunded: %v %v", did, err)
	}
	if got := storedBody(); got != req.Body() {
		t.Errorf("stored body after the refund's result %q, want %q (the reason once, in reason)", got, req.Body())
	}
	e.Check(t)
}

// An order takes at most inventory.MaxOrderRefunds refunds, so its item stays bounded
// however it is refunded: each of them with the longest reason keeps it under 20 KB.
func TestStartRefund_AnOrderItemStaysBoundedByTheRefundCap(t *testing.T) {
	sizes := &itemSizes{}
	e := newEnv(t, dynamo.Options{}, sizes.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 30})
	order := e.paidOrder(t, "u1", "tx-1", inventory.Line{SKU: "cup", Qty: 25})
	req := operator
	req.Reason = strings.Repeat("退", inventory.MaxReasonLength)
	req.Lines = []inventory.RefundLine{{SKU: "cup", Qty: 1}}
	for i := range inventory.MaxOrderRefunds {
		req.RefundID = "r-" + strconv.Itoa(i)
		var err error
		if order, _, err = e.store.StartRefund(context.Background(), order, req, 0); err != nil {
			t.Fatalf("refund %d: %v", i+1, err)
		}
	}
	req.RefundID = "one-more"
	if _, _, err := e.store.StartRefund(context.Background(), order, req, 0); !errors.Is(err, inventory.ErrRefundNotAllowed) {
		t.Errorf("refund %d: %v, want ErrRefundNotAllowed", inventory.MaxOrderRefunds+1, err)
	}
	size := sizes.of(t, e, order.ID)
	t.Logf("order item with %d refunds of %d-byte reasons: %d bytes (%d WU a transactional write)", inventory.MaxOrderRefunds, len(req.Reason), size, writeUnits(size))
	if size > 20<<10 {
		t.Errorf("order item with %d refunds: %d bytes, want under 20 KB", inventory.MaxOrderRefunds, size)
	}
	e.Check(t)
}
