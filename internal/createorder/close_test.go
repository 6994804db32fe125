package createorder_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/createorder"
	"github.com/stockguard/stockguard/internal/local"
	"github.com/stockguard/stockguard/internal/testkit"
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
	handler := createorder.New(h.stack.Store, closeq.New(client, "http://127.0.0.1:1/queue/CloseOrderQueue", nil), slog.New(slog.NewJSONHandler(&log, nil)))
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
