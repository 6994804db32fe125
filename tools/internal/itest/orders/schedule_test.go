package orders_test

import (
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	miniserver "github.com/truora/minidyn/server"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// A close message that cannot be sent never fails the order: the new order is
// answered 201, with one warn line and one CloseScheduleFailed metric. A refused cart
// whose message failed the same way reports nothing: there is nothing to release.
func TestCreateOrder_FailedCloseMessageIsWarnedOnlyForCreatedOrders(t *testing.T) {
	stack, _ := newHandler(t)
	h := &harness{stack: stack}
	// Nothing listens on port 1: every send fails at once.
	client := local.NewSQSClient("http://127.0.0.1:1", func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
	var log testkit.Log
	handler := createOrder(t, h.stack.Store, closeq.New(client, "http://127.0.0.1:1/queue/CloseOrderQueue", nil), slog.New(slog.NewJSONHandler(&log, nil)))
	h.handler = handler
	req := fixture(t, "create-order.json")
	resp, order := h.do(t, req)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("order: %d %v", resp.StatusCode, order)
	}
	if resp, body := h.do(t, withBody(req, `{"items":[{"skuId":"cup-01","qty":9}]}`)); resp.StatusCode != http.StatusConflict {
		t.Fatalf("refused cart: %d %v", resp.StatusCode, body)
	}
	lines, err := log.Lines()
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	metrics := 0
	for _, l := range lines {
		if l["level"] == "WARN" {
			warned = append(warned, l["orderId"].(string))
		}
		if v, ok := l["CloseScheduleFailed"]; ok && v == float64(1) {
			metrics++
		}
	}
	if len(warned) != 1 || warned[0] != order["orderId"] || metrics != 1 {
		t.Errorf("warned for %v with %d metrics; want order %v once", warned, metrics, order["orderId"])
	}
}

// Every order request that reaches the reservation writes one Busy sample: 0 when the
// store decided (here: a created order and a refused cart), 1 when it answered 503
// BUSY, so the metric's Average is the BUSY rate. Reads write none.
func TestCreateOrder_EmitsBusySamplePerOrderRequest(t *testing.T) {
	stack, _ := newHandler(t)
	var log testkit.Log
	h := &harness{stack: stack, handler: createOrder(t, stack.Store, nil, slog.New(slog.NewJSONHandler(&log, nil)))}
	req := fixture(t, "create-order.json")
	if resp, body := h.do(t, req); resp.StatusCode != http.StatusCreated {
		t.Fatalf("order: %d %v", resp.StatusCode, body)
	}
	if resp, body := h.do(t, withBody(req, `{"items":[{"skuId":"cup-01","qty":9}]}`)); resp.StatusCode != http.StatusConflict {
		t.Fatalf("refused cart: %d %v", resp.StatusCode, body)
	}
	h.do(t, fixture(t, "get-sku.json"))
	// A SKU not read yet, so that its read fails before any write: BUSY. (A failed write
	// of cup-01, whose record is cached, would leave its outcome unknown: 500.)
	stack.DynamoDB.Minidyn().EmulateFailure(miniserver.FailureConditionInternalServerError)
	resp, _ := h.do(t, withBody(req, `{"items":[{"skuId":"cup-uncached","qty":1}]}`))
	stack.DynamoDB.Minidyn().EmulateFailure(miniserver.FailureConditionNone)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("store down: %d, want 503", resp.StatusCode)
	}
	lines, err := log.Lines()
	if err != nil {
		t.Fatal(err)
	}
	var samples []float64
	for _, l := range lines {
		if v, ok := l["Busy"].(float64); ok {
			samples = append(samples, v)
		}
	}
	if !slices.Equal(samples, []float64{0, 0, 1}) {
		t.Errorf("Busy samples %v, want [0 0 1]", samples)
	}
}
