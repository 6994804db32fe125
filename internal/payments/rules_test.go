package payments_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// These tests are the payment rules alone, on in-test implementations of what
// payments declares it needs (Orders, Payments, Merchant, Refunds): no database, no
// WeChat Pay. How the store keeps orders and payments is dynamo's tests' business
// (against the embedded DynamoDB); the whole path is the stack tests' (start_test.go,
// notify_test.go).

var now = time.Date(2026, 11, 11, 10, 0, 0, 0, time.UTC)

// orderBook is an in-test Orders: orders by id, SetPrepay as the store's rule (only
// while PENDING).
type orderBook struct {
	orders  map[string]*inventory.Order
	prepays int
}

func (b *orderBook) Order(_ context.Context, user, id string) (*inventory.Order, error) {
	o, ok := b.orders[id]
	if !ok || o.UserID != user {
		return nil, inventory.ErrOrderNotFound
	}
	c := *o
	return &c, nil
}

func (b *orderBook) SetPrepay(_ context.Context, order *inventory.Order, prepayID string, at time.Time) error {
	o := b.orders[order.ID]
	if o.Status != inventory.StatusPending {
		return fmt.Errorf("set prepay: %w", inventory.ErrNotPayable)
	}
	b.prepays++
	o.PrepayID, o.PrepayAt = prepayID, &at
	return nil
}

// merchant is an in-test Merchant answering prepay with err when set.
type merchant struct {
	prepays, closes int
	err             error
	trade           wechatpay.TradeState
}

func (m *merchant) PrepayJSAPI(_ context.Context, o wechatpay.JSAPIOrder) (string, error) {
	m.prepays++
	if m.err != nil {
		return "", m.err
	}
	return fmt.Sprintf("wx-%s-%d", o.OutTradeNo, m.prepays), nil
}

func (m *merchant) PaymentParams(_ context.Context, prepayID string, _ time.Time) (wechatpay.PaymentParams, error) {
	return wechatpay.PaymentParams{Package: "prepay_id=" + prepayID}, nil
}

func (m *merchant) QueryOrder(_ context.Context, id string) (*wechatpay.Transaction, error) {
	if m.err != nil {
		return nil, m.err
	}
	return &wechatpay.Transaction{OutTradeNo: id, TransactionID: "tx-" + id, TradeState: m.trade,
		Amount: wechatpay.Amount{Total: 100, Currency: "CNY"}, SuccessTime: now}, nil
}

func (m *merchant) CloseOrder(context.Context, string) error { m.closes++; return nil }

func pending(id string) *inventory.Order {
	return &inventory.Order{ID: id, UserID: "alice", Status: inventory.StatusPending, Amount: 100, Currency: "CNY",
		CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(14 * time.Minute)}
}

func pay(t *testing.T, s *payments.Start, id string) (events.APIGatewayV2HTTPResponse, error) {
	t.Helper()
	return s.Route(context.Background(), events.APIGatewayV2HTTPRequest{
		RouteKey: payments.RoutePay, PathParameters: map[string]string{"orderId": id},
		RequestContext: events.APIGatewayV2HTTPRequestContext{Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "alice"}},
		}},
	})
}

func newStart(book *orderBook, m *merchant, clock func() time.Time) *payments.Start {
	return payments.NewStart(book, m, slog.New(slog.DiscardHandler), payments.StartOptions{NotifyBaseURL: "https://shop.example.com", Now: clock})
}

// A stored prepay_id is handed out again while it has PrepayMargin of its two hours
// left; then a new JSAPI order is placed.
func TestStart_ReusesAPrepayWhileItLasts(t *testing.T) {
	book := &orderBook{orders: map[string]*inventory.Order{"order-1": pending("order-1")}}
	m := &merchant{}
	clock := now
	s := newStart(book, m, func() time.Time { return clock })
	book.orders["order-1"].ExpiresAt = now.Add(3 * time.Hour)
	for i, at := range []time.Duration{0, time.Hour, inventory.PrepayLifetime - inventory.PrepayMargin, inventory.PrepayLifetime - inventory.PrepayMargin + time.Second} {
		clock = now.Add(at)
		resp, err := pay(t, s, "order-1")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("pay %d: %d %v", i, resp.StatusCode, err)
		}
	}
	if m.prepays != 2 || book.prepays != 2 {
		t.Errorf("%d JSAPI orders, %d prepay_ids stored; want 2 and 2 (one reused until its margin)", m.prepays, book.prepays)
	}
}

// WeChat Pay's refusals map to the contract: unreachable → 503 BUSY, paid or closed
// there → 409 ORDER_NOT_PAYABLE, anything else → 502; nothing is stored.
func TestStart_MapsWeChatPayRefusals(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("dial: %w", wechatpay.ErrUnavailable), http.StatusServiceUnavailable},
		{&wechatpay.APIError{StatusCode: 400, Code: wechatpay.CodeOrderPaid}, http.StatusConflict},
		{&wechatpay.APIError{StatusCode: 400, Code: wechatpay.CodeOrderClosed}, http.StatusConflict},
		{&wechatpay.APIError{StatusCode: 400, Code: "PARAM_ERROR"}, http.StatusBadGateway},
	} {
		book := &orderBook{orders: map[string]*inventory.Order{"order-1": pending("order-1")}}
		_, err := pay(t, newStart(book, &merchant{err: tc.err}, func() time.Time { return now }), "order-1")
		if got := httpapi.Answer(err).StatusCode; got != tc.status || book.prepays != 0 {
			t.Errorf("%v: answered %d with %d prepay_ids stored, want %d and none", tc.err, got, book.prepays, tc.status)
		}
	}
}

// An order that is not PENDING, or past its window, is not payable and nothing is
// asked of WeChat Pay; an order that left PENDING while its JSAPI order was placed
// gets that WeChat Pay order closed again.
func TestStart_OnlyPendingOrdersInsideTheirWindow(t *testing.T) {
	paid := pending("paid-1")
	paid.Status = inventory.StatusPaid
	late := pending("late-1")
	late.ExpiresAt = now
	book := &orderBook{orders: map[string]*inventory.Order{"paid-1": paid, "late-1": late}}
	m := &merchant{}
	s := newStart(book, m, func() time.Time { return now })
	for _, id := range []string{"paid-1", "late-1"} {
		if _, err := pay(t, s, id); !errors.Is(err, inventory.ErrNotPayable) {
			t.Errorf("%s: %v, want ErrNotPayable", id, err)
		}
	}
	if _, err := pay(t, s, "nobody"); !errors.Is(err, inventory.ErrOrderNotFound) {
		t.Errorf("unknown order: %v", err)
	}
	if m.prepays != 0 {
		t.Errorf("%d JSAPI orders placed for orders that may not be paid", m.prepays)
	}
	racing := pending("racing-1")
	book.orders["racing-1"] = racing
	s = payments.NewStart(&leaving{book}, m, slog.New(slog.DiscardHandler), payments.StartOptions{NotifyBaseURL: "https://shop.example.com", Now: func() time.Time { return now }})
	if _, err := pay(t, s, "racing-1"); !errors.Is(err, inventory.ErrNotPayable) || m.prepays != 1 || m.closes != 1 {
		t.Errorf("an order cancelled while paying: %v, %d placed, %d closed; want ErrNotPayable, 1, 1", err, m.prepays, m.closes)
	}
}

// leaving is an orderBook whose order is cancelled between the read and the prepay.
type leaving struct{ *orderBook }

func (l *leaving) Order(ctx context.Context, user, id string) (*inventory.Order, error) {
	o, err := l.orderBook.Order(ctx, user, id)
	if err == nil {
		l.orders[id].Status = inventory.StatusCancelled
	}
	return o, err
}

// ledger is an in-test Payments: every payment's result fixed by its order id.
type ledger map[string]struct {
	result inventory.PayResult
	status inventory.Status
	err    error
}

func (l ledger) Pay(_ context.Context, p inventory.Payment) (*inventory.Order, inventory.PayResult, error) {
	e := l[p.OrderID]
	if e.err != nil {
		return nil, 0, e.err
	}
	return &inventory.Order{ID: p.OrderID, Status: e.status, TransactionID: p.TransactionID}, e.result, nil
}

// refunds is an in-test Refunds counting what it was asked to start.
type refunds struct {
	orders, seconds []string
	err             error
}

func (r *refunds) Order(_ context.Context, o *inventory.Order, req inventory.RefundRequest, _ time.Duration) (*inventory.Order, error) {
	if req.By != "stockguard" {
		return nil, fmt.Errorf("refund of %s asked by %q, want stockguard", o.ID, req.By)
	}
	r.orders = append(r.orders, o.ID)
	return o, r.err
}

func (r *refunds) SecondPayment(_ context.Context, p inventory.Payment) (*inventory.Refund, error) {
	r.seconds = append(r.seconds, p.TransactionID)
	return &inventory.Refund{OutRefundNo: inventory.ExtraOutRefundNo(p.OrderID, p.TransactionID)}, r.err
}

// A payment is recorded one way whoever learnt of it: what it owes back is started at
// once — the refund of an order paid with no stock left, a second payment's own
// refund — and a step that fails says which.
func TestRecorder_StartsWhatAPaymentOwes(t *testing.T) {
	book := ledger{
		"paid":  {result: inventory.PaidNow, status: inventory.StatusPaid},
		"owed":  {result: inventory.RefundDue, status: inventory.StatusRefundPending},
		"again": {err: fmt.Errorf("pay: %w", inventory.ErrPaidTwice)},
		"gone":  {err: inventory.ErrOrderNotFound},
	}
	r := &refunds{}
	rec := payments.NewRecorder(book, r, slog.New(slog.DiscardHandler))
	for id, want := range map[string]payments.Recorded{
		"paid": {Result: inventory.PaidNow}, "owed": {Result: inventory.RefundDue}, "again": {Twice: true},
	} {
		got, err := rec.Record(context.Background(), inventory.Payment{OrderID: id, TransactionID: "tx-" + id})
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", id, got, err, want)
		}
	}
	if len(r.orders) != 1 || r.orders[0] != "owed" || len(r.seconds) != 1 || r.seconds[0] != "tx-again" {
		t.Errorf("refunds started: orders %v, second payments %v; want [owed] and [tx-again]", r.orders, r.seconds)
	}
	if _, err := rec.Record(context.Background(), inventory.Payment{OrderID: "gone"}); !errors.Is(err, inventory.ErrOrderNotFound) {
		t.Errorf("unknown order: %v", err)
	}
	r.err = errors.New("throttled")
	if got, err := rec.Record(context.Background(), inventory.Payment{OrderID: "owed"}); !errors.Is(err, payments.ErrRefundNotStarted) || got.Result != inventory.RefundDue {
		t.Errorf("refund not started: %+v %v", got, err)
	}
	if _, err := rec.Record(context.Background(), inventory.Payment{OrderID: "again"}); !errors.Is(err, payments.ErrSecondNotRecorded) {
		t.Errorf("second payment not recorded: %v", err)
	}
}

// Before a release, WeChat Pay is asked: paid → recorded, not released; unpaid →
// closed there, released; not reachable → an error, nothing changed.
func TestChecker_AsksWeChatPayBeforeARelease(t *testing.T) {
	book := ledger{"order-1": {result: inventory.PaidNow, status: inventory.StatusPaid}}
	prepaid := pending("order-1")
	prepaid.PrepayID = "wx-1"
	for _, tc := range []struct {
		m      *merchant
		paid   bool
		closes int
		err    bool
	}{
		{&merchant{trade: wechatpay.TradeStateSuccess}, true, 0, false},
		{&merchant{trade: wechatpay.TradeStateRefund}, true, 0, false}, // paid, then refunded outside: paid
		{&merchant{trade: wechatpay.TradeStateNotPay}, false, 1, false},
		{&merchant{trade: wechatpay.TradeStateUserPaying}, false, 1, false},
		{&merchant{trade: wechatpay.TradeStatePayError}, false, 1, false},
		{&merchant{trade: wechatpay.TradeStateClosed}, false, 0, false},
		{&merchant{trade: wechatpay.TradeStateRevoked}, false, 0, false},
		{&merchant{err: wechatpay.ErrUnavailable}, false, 0, true},
	} {
		c := payments.NewChecker(tc.m, payments.NewRecorder(book, &refunds{}, slog.New(slog.DiscardHandler)), slog.New(slog.DiscardHandler), "closeOrder")
		paid, err := c.BeforeRelease(context.Background(), prepaid)
		if paid != tc.paid || tc.m.closes != tc.closes || (err != nil) != tc.err {
			t.Errorf("%s %v: paid %v, %d closed, %v; want %v, %d, error %v", tc.m.trade, tc.m.err, paid, tc.m.closes, err, tc.paid, tc.closes, tc.err)
		}
	}
	if paid, err := payments.NewChecker(nil, nil, slog.New(slog.DiscardHandler), "closeOrder").BeforeRelease(context.Background(), pending("order-2")); paid || err != nil {
		t.Errorf("an order without a WeChat Pay order: %v %v, want nothing asked", paid, err)
	}
}
