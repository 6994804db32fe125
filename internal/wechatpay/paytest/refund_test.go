package paytest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

const refundNotifyPath = "/payments/wechatpay/refund-notify"

func (h *harness) refundURL() string {
	return strings.TrimSuffix(h.url, "/payments/wechatpay/notify") + refundNotifyPath
}

func (n *notifyRoute) refundNotifications() []*wechatpay.RefundNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*wechatpay.RefundNotification(nil), n.refunds...)
}

// paid places and pays order id for total fen and returns its transaction_id.
func (h *harness) paid(t *testing.T, id string, total int64) string {
	t.Helper()
	h.prepay(t, h.order(id, total))
	if _, err := h.srv.Pay(context.Background(), id, paytest.PayOptions{}); err != nil {
		t.Fatalf("Pay: %v", err)
	}
	o, _ := h.srv.Order(id)
	return o.TransactionID
}

func (h *harness) refundOf(id string, refund, total int64) wechatpay.RefundRequest {
	return wechatpay.RefundRequest{
		OutTradeNo: id, OutRefundNo: "R" + id, Reason: "买家取消", NotifyURL: h.refundURL(), Refund: refund, Total: total,
	}
}

func TestClient_Refund(t *testing.T) {
	type outcome struct {
		status   wechatpay.RefundStatus // the refund at the stand-in afterwards ("" none)
		refunded int64                  // fen refunded of the payment afterwards
		err      error                  // errors.Is target; nil for success
		code     string                 // WeChat Pay code of the *APIError, if any
	}
	cases := []struct {
		name  string
		setup func(h *harness)
		req   func(h *harness, req wechatpay.RefundRequest) wechatpay.RefundRequest
		want  outcome
	}{
		{"success", nil, nil, outcome{wechatpay.RefundSuccess, 500, nil, ""}},
		{"part of the payment", nil, func(h *harness, r wechatpay.RefundRequest) wechatpay.RefundRequest {
			r.Refund = 200
			return r
		}, outcome{wechatpay.RefundSuccess, 200, nil, ""}},
		{"5xx before taking effect", func(h *harness) { h.srv.FailNextAPI(1) }, nil,
			outcome{"", 0, wechatpay.ErrUnavailable, ""}}, // 5xx bodies are not read
		{"more than paid", nil, func(h *harness, r wechatpay.RefundRequest) wechatpay.RefundRequest {
			r.Refund, r.Total = 501, 501
			return r
		}, outcome{"", 0, nil, wechatpay.CodeInvalidRequest}},
		{"unknown order", nil, func(h *harness, r wechatpay.RefundRequest) wechatpay.RefundRequest {
			r.OutTradeNo = "ord-nobody"
			return r
		}, outcome{"", 0, wechatpay.ErrNotFound, wechatpay.CodeResourceNotExists}},
		{"unknown transaction", nil, func(h *harness, r wechatpay.RefundRequest) wechatpay.RefundRequest {
			r.OutTradeNo, r.TransactionID = "", "4200000000000000000000000000"
			return r
		}, outcome{"", 0, wechatpay.ErrNotFound, wechatpay.CodeResourceNotExists}},
		{"answer signed by another key", func(h *harness) { h.srv.SetForgeAnswers(true) }, nil,
			outcome{wechatpay.RefundSuccess, 500, wechatpay.ErrVerification, ""}},
		{"bad argument, nothing sent", nil, func(h *harness, r wechatpay.RefundRequest) wechatpay.RefundRequest {
			r.Refund = 0
			return r
		}, outcome{"", 0, wechatpay.ErrInvalidArgument, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			txID := h.paid(t, "ord-0001", 500)
			if tc.setup != nil {
				tc.setup(h)
			}
			req := h.refundOf("ord-0001", 500, 500)
			if tc.req != nil {
				req = tc.req(h, req)
			}
			got, err := h.client.Refund(context.Background(), req)
			h.srv.WaitDeliveries()
			checkRefundError(t, err, tc.want.err, tc.want.code)
			if err == nil {
				if got.Status != wechatpay.RefundProcessing || got.RefundID == "" || got.TransactionID != txID || got.Matches(req) != nil {
					t.Errorf("answer %+v", got)
				}
			}
			rec, ok := h.srv.Refund(req.OutRefundNo)
			if ok != (tc.want.status != "") || rec.Status != tc.want.status {
				t.Errorf("refund at WeChat Pay: %v %+v, want status %q", ok, rec, tc.want.status)
			}
			if refunded, _ := h.srv.Refunded(txID); refunded != tc.want.refunded {
				t.Errorf("refunded %d fen, want %d", refunded, tc.want.refunded)
			}
		})
	}
}

// checkRefundError checks err against the sentinel want (nil: no error unless code) and
// WeChat Pay's code.
func checkRefundError(t *testing.T, err, want error, code string) {
	t.Helper()
	if want == nil && code == "" {
		if err != nil {
			t.Fatalf("Refund: %v", err)
		}
		return
	}
	if err == nil || (want != nil && !errors.Is(err, want)) {
		t.Fatalf("err %v, want %v", err, want)
	}
	if code != "" {
		wantCode(t, err, code)
	}
}

// TestServer_RefundSucceedsAndNotifies: the answer is PROCESSING, then a REFUND.SUCCESS
// notification that verifies and matches the request reaches notify_url (resent, same
// notification id, after a failed attempt), and a query sees SUCCESS.
func TestServer_RefundSucceedsAndNotifies(t *testing.T) {
	h := newHarness(t, 204, 500) // the payment's is taken, the refund's first attempt fails and is resent
	txID := h.paid(t, "ord-0001", 500)
	req := h.refundOf("ord-0001", 500, 500)
	if _, err := h.client.Refund(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	h.srv.WaitDeliveries()
	ns := h.notify.refundNotifications()
	if len(ns) != 2 || ns[1].EventType != wechatpay.EventRefundSuccess || ns[1].Summary != "退款成功" {
		t.Fatalf("notifications %+v, want REFUND.SUCCESS twice (one resend)", ns)
	}
	r := ns[1].Refund
	if err := r.Matches(req); err != nil || r.MchID != mchID || r.TransactionID != txID || r.Status != wechatpay.RefundSuccess ||
		r.SuccessTime.IsZero() || r.Amount.PayerRefund != 500 || ns[0].ID != ns[1].ID {
		t.Errorf("notified refund %+v: %v", r, err)
	}
	q, err := h.client.QueryRefund(context.Background(), req.OutRefundNo)
	if err != nil || q.Status != wechatpay.RefundSuccess || q.RefundID != r.RefundID || q.Matches(req) != nil {
		t.Errorf("QueryRefund = %+v, %v", q, err)
	}
	if _, err := h.client.QueryRefund(context.Background(), "R-none"); !errors.Is(err, wechatpay.ErrNotFound) {
		t.Errorf("QueryRefund of an unknown refund: %v, want ErrNotFound", err)
	}
	if ds := h.srv.Deliveries(); len(ds) != 2 || ds[1].OutRefundNo != req.OutRefundNo || ds[1].Attempts != 2 || ds[1].StatusCode != 204 {
		t.Errorf("deliveries %+v", ds)
	}
}

// TestServer_RefundDeduplicatesOnOutRefundNo: the same out_refund_no from 20 goroutines,
// then once more with another amount, refunds once; the other amount is a mismatch the
// client reports with the refund as answered.
func TestServer_RefundDeduplicatesOnOutRefundNo(t *testing.T) {
	h := newHarness(t)
	h.srv.SetRefundOutcome(wechatpay.RefundProcessing)
	txID := h.paid(t, "ord-0001", 500)
	req := h.refundOf("ord-0001", 300, 500)
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := h.client.Refund(context.Background(), req)
			if err != nil {
				t.Errorf("Refund: %v", err)
			}
			ids[i] = r.RefundID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("refund ids %v, want one", ids)
		}
	}
	other := req
	other.Refund = 200
	r, err := h.client.Refund(context.Background(), other)
	if !errors.Is(err, wechatpay.ErrRefundMismatch) || r.RefundID != ids[0] || r.Amount.Refund != 300 {
		t.Errorf("another amount under the same out_refund_no: %+v, %v", r, err)
	}
	rec, _ := h.srv.Refund(req.OutRefundNo)
	if refunded, _ := h.srv.Refunded(txID); refunded != 300 || rec.Requests != n+1 {
		t.Errorf("refunded %d fen in %d requests, want 300 in %d", refunded, rec.Requests, n+1)
	}
}

// TestServer_RefundHeldThenSettled: held refunds stay PROCESSING without notification
// until settled; CLOSED and ABNORMAL send their notifications and CLOSED makes the money
// refundable again.
func TestServer_RefundHeldThenSettled(t *testing.T) {
	for _, end := range []wechatpay.RefundStatus{wechatpay.RefundSuccess, wechatpay.RefundClosed, wechatpay.RefundAbnormal} {
		t.Run(string(end), func(t *testing.T) {
			h := newHarness(t)
			h.srv.SetRefundOutcome(wechatpay.RefundProcessing)
			txID := h.paid(t, "ord-0001", 500)
			req := h.refundOf("ord-0001", 500, 500)
			if _, err := h.client.Refund(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			h.srv.WaitDeliveries()
			if q, err := h.client.QueryRefund(context.Background(), req.OutRefundNo); err != nil || q.Status != wechatpay.RefundProcessing ||
				len(h.notify.refundNotifications()) != 0 {
				t.Fatalf("held: %+v, %v, %d notifications", q, err, len(h.notify.refundNotifications()))
			}
			d, err := h.srv.SettleRefund(context.Background(), req.OutRefundNo, end)
			if err != nil || d.StatusCode != 204 {
				t.Fatalf("SettleRefund: %+v, %v", d, err)
			}
			ns := h.notify.refundNotifications()
			if len(ns) != 1 || ns[0].EventType != "REFUND."+string(end) || ns[0].Refund.Status != end {
				t.Fatalf("notifications %+v", ns)
			}
			wantRefunded := int64(500)
			if end == wechatpay.RefundClosed {
				wantRefunded = 0
			}
			if refunded, _ := h.srv.Refunded(txID); refunded != wantRefunded {
				t.Errorf("refunded %d, want %d", refunded, wantRefunded)
			}
			_, err = h.srv.SettleRefund(context.Background(), req.OutRefundNo, wechatpay.RefundSuccess)
			if final := end != wechatpay.RefundAbnormal; final != errors.Is(err, paytest.ErrRefundFinal) {
				t.Errorf("settling a %s refund again: %v", end, err)
			}
		})
	}
}

// TestServer_RefundOutcomesSentInTheBackground: SetRefundOutcome CLOSED and ABNORMAL end
// new refunds that way after the answer, with their notifications.
func TestServer_RefundOutcomesSentInTheBackground(t *testing.T) {
	for _, end := range []wechatpay.RefundStatus{wechatpay.RefundClosed, wechatpay.RefundAbnormal} {
		h := newHarness(t)
		h.srv.SetRefundOutcome(end)
		h.paid(t, "ord-0001", 500)
		if _, err := h.client.Refund(context.Background(), h.refundOf("ord-0001", 500, 500)); err != nil {
			t.Fatal(err)
		}
		h.srv.WaitDeliveries()
		if ns := h.notify.refundNotifications(); len(ns) != 1 || ns[0].EventType != "REFUND."+string(end) {
			t.Errorf("%s: notifications %+v", end, ns)
		}
	}
}

// TestServer_RefundsTheSecondPaymentByTransactionID: a second payment of one order is
// refunded by its transaction_id and the first payment keeps its money.
func TestServer_RefundsTheSecondPaymentByTransactionID(t *testing.T) {
	h := newHarness(t)
	first := h.paid(t, "ord-0001", 500)
	if _, err := h.srv.Pay(context.Background(), "ord-0001", paytest.PayOptions{Again: true}); err != nil {
		t.Fatal(err)
	}
	ns := h.notify.notifications()
	second := ns[len(ns)-1].Transaction.TransactionID
	if second == first || second == "" {
		t.Fatalf("second transaction_id %q, first %q", second, first)
	}
	req := h.refundOf("ord-0001", 500, 500)
	req.TransactionID = second
	r, err := h.client.Refund(context.Background(), req)
	if err != nil || r.TransactionID != second {
		t.Fatalf("Refund: %+v, %v", r, err)
	}
	h.srv.WaitDeliveries()
	a, _ := h.srv.Refunded(first)
	b, _ := h.srv.Refunded(second)
	if a != 0 || b != 500 {
		t.Errorf("refunded first %d, second %d; want 0 and 500", a, b)
	}
}

// TestServer_FailAPIUntilSwitchedOff: SetFailAPI fails every refund call until off, and
// nothing is refunded meanwhile.
func TestServer_FailAPIUntilSwitchedOff(t *testing.T) {
	h := newHarness(t)
	txID := h.paid(t, "ord-0001", 500)
	req := h.refundOf("ord-0001", 500, 500)
	h.srv.SetFailAPI(true)
	for range 3 {
		if _, err := h.client.Refund(context.Background(), req); !errors.Is(err, wechatpay.ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
	}
	if refunded, _ := h.srv.Refunded(txID); refunded != 0 {
		t.Fatalf("refunded %d while failing", refunded)
	}
	h.srv.SetFailAPI(false)
	if _, err := h.client.Refund(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// WeChat Pay's rules on refunds of one payment, as the stand-in keeps them (申请退款):
// a second refund within the minute is FREQUENCY_LIMITED (retry later), none past the
// 50th or a year after the payment (INVALID_REQUEST, final); a refunded payment queries
// as trade_state REFUND and cannot be closed; a refusal switch answers its code.
func TestServer_RefundRulesAndTradeStateRefund(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.paid(t, "ord-rules", 100)
	refund := func(n int) error {
		r := h.refundOf("ord-rules", 1, 100)
		r.OutRefundNo = "R" + strings.Repeat("x", n)
		_, err := h.client.Refund(ctx, r)
		return err
	}
	if err := refund(1); err != nil {
		t.Fatal(err)
	}
	if st := h.state(t, "ord-rules"); st != wechatpay.TradeStateRefund {
		t.Errorf("trade_state after a refund: %s, want REFUND", st)
	}
	if err := h.client.CloseOrder(ctx, "ord-rules"); err == nil {
		t.Error("a refunded payment was closed")
	} else {
		wantCode(t, err, wechatpay.CodeOrderPaid)
	}
	err := refund(2)
	if _, final := wechatpay.FinalRefusal(err); !errors.Is(err, wechatpay.ErrUnavailable) || final {
		t.Errorf("a second refund within the minute: %v, want FREQUENCY_LIMITED to retry later", err)
	}
	h.clock.Advance(paytest.RefundInterval)
	for n := 2; n <= paytest.MaxRefundsPerPayment; n++ {
		h.srv.SetRefundInterval(0)
		if err := refund(n); err != nil {
			t.Fatalf("refund %d: %v", n, err)
		}
	}
	err = refund(paytest.MaxRefundsPerPayment + 1)
	if code, final := wechatpay.FinalRefusal(err); !final || code != wechatpay.CodeInvalidRequest {
		t.Errorf("the 51st refund: %v, want a final INVALID_REQUEST", err)
	}

	h.paid(t, "ord-old", 100)
	h.clock.Advance(paytest.RefundPeriod + time.Second)
	_, err = h.client.Refund(ctx, h.refundOf("ord-old", 1, 100))
	if code, final := wechatpay.FinalRefusal(err); !final || code != wechatpay.CodeInvalidRequest {
		t.Errorf("a refund a year after the payment: %v, want a final INVALID_REQUEST", err)
	}

	h.paid(t, "ord-outside", 100)
	if err := h.srv.RefundOutside("ord-outside", 100); err != nil || h.state(t, "ord-outside") != wechatpay.TradeStateRefund {
		t.Errorf("refund outside: %v, trade_state %s", err, h.state(t, "ord-outside"))
	}
	h.srv.SetRefundRefusal(wechatpay.CodeNoAuth)
	_, err = h.client.Refund(ctx, h.refundOf("ord-outside", 1, 100))
	if code, final := wechatpay.FinalRefusal(err); !final || code != wechatpay.CodeNoAuth {
		t.Errorf("refused: %v, want a final NO_AUTH", err)
	}
}

// An order the stand-in never opened is opened and paid in time by PayUnopened; the
// payment can then be queried and refunded like one made after a JSAPI order.
func TestServer_PayUnopenedOpensThenPays(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	// Its window ended a minute ago: the payment was taken in time, its news is late.
	req := wechatpay.JSAPIRequest{AppID: appID, MchID: mchID, Description: "cup", OutTradeNo: "ord-unopened",
		TimeExpire: h.clock.Now().Add(-time.Minute).Format(time.RFC3339), NotifyURL: h.url}
	req.Amount.Total, req.Amount.Currency, req.Payer.OpenID = 100, "CNY", "o-alice"
	d, err := h.srv.PayUnopened(ctx, req, paytest.PayOptions{})
	if err != nil || d.StatusCode != 204 {
		t.Fatalf("PayUnopened: %+v %v", d, err)
	}
	if st := h.state(t, "ord-unopened"); st != wechatpay.TradeStateSuccess {
		t.Errorf("trade_state %s, want SUCCESS", st)
	}
	if _, err := h.client.Refund(ctx, h.refundOf("ord-unopened", 100, 100)); err != nil {
		t.Errorf("refund of a payment PayUnopened took: %v", err)
	}
	if _, err := h.srv.PayUnopened(ctx, req, paytest.PayOptions{}); !errors.Is(err, paytest.ErrNotPayable) {
		t.Errorf("paying it again: %v, want ErrNotPayable", err)
	}
}
