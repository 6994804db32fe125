package paytest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

const (
	mchID = "1230000109"
	appID = "wxd678efh567hg6787"
)

// keys are generated once per test binary (RSA under -race is slow).
var keys = sync.OnceValues(func() (k struct {
	p        *paytest.Platform
	m, other *paytest.Merchant
}, err error) {
	if k.p, err = paytest.NewPlatform(mchID, appID); err != nil {
		return k, err
	}
	if k.m, err = paytest.NewMerchant(); err != nil {
		return k, err
	}
	k.other, err = paytest.NewMerchant()
	return k, err
})

// clock is a settable time shared by the server and the merchant's client.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// notifyRoute is the merchant's notify route: it verifies each notification with the real
// Verifier and answers statuses[i] to the i-th POST (204 once the list runs out).
type notifyRoute struct {
	t        *testing.T
	v        *wechatpay.Verifier
	mu       sync.Mutex
	statuses []int
	got      []*wechatpay.Notification
	refunds  []*wechatpay.RefundNotification // POSTs to refundNotifyPath
	posts    atomic.Int64
}

func (n *notifyRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(n.posts.Add(1)) - 1
	body, _ := io.ReadAll(r.Body)
	h := map[string]string{}
	for k := range r.Header {
		h[k] = r.Header.Get(k)
	}
	var err error
	var note *wechatpay.Notification
	var refund *wechatpay.RefundNotification
	if r.URL.Path == refundNotifyPath {
		refund, err = n.v.ParseRefund(wechatpay.HeadersFrom(h), body)
	} else {
		note, err = n.v.Parse(wechatpay.HeadersFrom(h), body)
	}
	if err != nil {
		n.t.Errorf("notification does not verify: %v", err)
		w.WriteHeader(401)
		return
	}
	n.mu.Lock()
	if refund != nil {
		n.refunds = append(n.refunds, refund)
	} else {
		n.got = append(n.got, note)
	}
	status := 204
	if i < len(n.statuses) {
		status = n.statuses[i]
	}
	n.mu.Unlock()
	w.WriteHeader(status)
}

func (n *notifyRoute) notifications() []*wechatpay.Notification {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*wechatpay.Notification(nil), n.got...)
}

type harness struct {
	srv    *paytest.Server
	client *wechatpay.Client
	clock  *clock
	notify *notifyRoute
	url    string // notify_url
}

func newHarness(t *testing.T, notifyStatuses ...int) *harness {
	t.Helper()
	k, err := keys()
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Now().Truncate(time.Second)}
	srv := paytest.NewServer(k.p, k.m, paytest.ServerOptions{Now: c.Now, RetryInterval: time.Millisecond})
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cfg := k.p.ClientConfig(k.m, srv.URL())
	cfg.Now = c.Now
	client, err := wechatpay.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vcfg := k.p.Config()
	vcfg.Now = c.Now
	v, err := wechatpay.NewVerifier(vcfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &notifyRoute{t: t, v: v, statuses: notifyStatuses}
	route := httptest.NewServer(n)
	t.Cleanup(route.Close)
	return &harness{srv: srv, client: client, clock: c, notify: n, url: route.URL + "/payments/wechatpay/notify"}
}

func (h *harness) order(id string, total int64) wechatpay.JSAPIOrder {
	return wechatpay.JSAPIOrder{
		Description: "cup-01", OutTradeNo: id, TimeExpire: h.clock.Now().Add(15 * time.Minute),
		NotifyURL: h.url, Total: total, PayerOpenID: "o-alice",
	}
}

// payAfterExpiry prepays order id with a time_expire one minute from now, lets the
// minute and then late pass, and pays it; it returns the order and Pay's error.
func (h *harness) payAfterExpiry(t *testing.T, id string, late time.Duration) (wechatpay.JSAPIOrder, error) {
	o := h.order(id, 100)
	o.TimeExpire = h.clock.Now().Add(time.Minute)
	h.prepay(t, o)
	h.clock.Advance(time.Minute + late)
	_, err := h.srv.Pay(context.Background(), id, paytest.PayOptions{})
	return o, err
}

func (h *harness) prepay(t *testing.T, o wechatpay.JSAPIOrder) string {
	t.Helper()
	id, err := h.client.PrepayJSAPI(context.Background(), o)
	if err != nil {
		t.Fatalf("PrepayJSAPI: %v", err)
	}
	return id
}

func (h *harness) state(t *testing.T, id string) wechatpay.TradeState {
	t.Helper()
	tx, err := h.client.QueryOrder(context.Background(), id)
	if err != nil {
		t.Fatalf("QueryOrder: %v", err)
	}
	return tx.TradeState
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var apiErr *wechatpay.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != code {
		t.Fatalf("err %v, want WeChat Pay code %s", err, code)
	}
}

func TestServer_OrderPayNotifyQuery(t *testing.T) {
	h := newHarness(t)
	o := h.order("ord-0001", 79800)
	prepay := h.prepay(t, o)
	if again := h.prepay(t, o); again != prepay {
		t.Errorf("same order again: prepay_id %q, first %q", again, prepay)
	}
	if got, _ := h.srv.Order("ord-0001"); got.PrepayCalls != 2 || got.PrepayID != prepay || got.Total != 79800 || got.PayerOpenID != "o-alice" || !got.TimeExpire.Equal(o.TimeExpire) {
		t.Errorf("server order %+v", got)
	}
	if s := h.state(t, "ord-0001"); s != wechatpay.TradeStateNotPay {
		t.Fatalf("before paying: %s", s)
	}
	d, err := h.srv.Pay(context.Background(), "ord-0001", paytest.PayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Attempts != 1 || d.StatusCode != 204 || d.Err != nil {
		t.Errorf("delivery %+v", d)
	}
	tx, err := h.client.QueryOrder(context.Background(), "ord-0001")
	if err != nil {
		t.Fatal(err)
	}
	notes := h.notify.notifications()
	if len(notes) != 1 {
		t.Fatalf("%d notifications", len(notes))
	}
	n := notes[0].Transaction
	if tx.TradeState != wechatpay.TradeStateSuccess || tx.TransactionID == "" || n.TransactionID != tx.TransactionID ||
		n.Amount.Total != 79800 || tx.Amount.Total != 79800 || n.Payer.OpenID != "o-alice" || !n.SuccessTime.Equal(tx.SuccessTime) {
		t.Errorf("query %+v\nnotification %+v", tx, n)
	}
	if notes[0].EventType != wechatpay.EventTransactionSuccess {
		t.Errorf("event %s", notes[0].EventType)
	}
	if _, err := h.srv.Pay(context.Background(), "ord-0001", paytest.PayOptions{}); !errors.Is(err, paytest.ErrNotPayable) {
		t.Errorf("paying twice: %v", err)
	}
	wantCode(t, h.client.CloseOrder(context.Background(), "ord-0001"), wechatpay.CodeOrderPaid)
	_, err = h.client.PrepayJSAPI(context.Background(), o)
	wantCode(t, err, wechatpay.CodeOrderPaid)
}

func TestServer_OrderRules(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"DifferentParametersAreOutTradeNoUsed", func(t *testing.T, h *harness) {
			h.prepay(t, h.order("ord-0002", 100))
			_, err := h.client.PrepayJSAPI(context.Background(), h.order("ord-0002", 200))
			wantCode(t, err, wechatpay.CodeOutTradeNoUsed)
			if got, _ := h.srv.Order("ord-0002"); got.Total != 100 || got.PrepayCalls != 1 {
				t.Errorf("order changed: %+v", got)
			}
		}},
		{"ClosedOrderCannotBePaidOrReordered", func(t *testing.T, h *harness) {
			o := h.order("ord-0003", 100)
			h.prepay(t, o)
			if err := h.client.CloseOrder(context.Background(), "ord-0003"); err != nil {
				t.Fatal(err)
			}
			if s := h.state(t, "ord-0003"); s != wechatpay.TradeStateClosed {
				t.Errorf("after close: %s", s)
			}
			if err := h.client.CloseOrder(context.Background(), "ord-0003"); err != nil {
				t.Errorf("closing again: %v", err)
			}
			if _, err := h.srv.Pay(context.Background(), "ord-0003", paytest.PayOptions{}); !errors.Is(err, paytest.ErrNotPayable) {
				t.Errorf("Pay after close: %v", err)
			}
			_, err := h.client.PrepayJSAPI(context.Background(), o)
			wantCode(t, err, wechatpay.CodeOrderClosed)
		}},
		{"TimeExpireEnforced", func(t *testing.T, h *harness) {
			o, err := h.payAfterExpiry(t, "ord-0004", time.Second)
			if !errors.Is(err, paytest.ErrNotPayable) {
				t.Errorf("Pay after time_expire: %v", err)
			}
			if s := h.state(t, "ord-0004"); s != wechatpay.TradeStateNotPay {
				t.Errorf("expired order queries as %s", s)
			}
			_, err = h.client.PrepayJSAPI(context.Background(), o)
			wantCode(t, err, wechatpay.CodeInvalidRequest)
		}},
		{"PayAtTimeExpireIsAccepted", func(t *testing.T, h *harness) {
			if _, err := h.payAfterExpiry(t, "ord-0005", 0); err != nil {
				t.Errorf("Pay at time_expire: %v", err)
			}
		}},
		{"UnknownOrder", func(t *testing.T, h *harness) {
			_, err := h.client.QueryOrder(context.Background(), "ord-none")
			wantCode(t, err, wechatpay.CodeOrderNotExist)
			wantCode(t, h.client.CloseOrder(context.Background(), "ord-none"), wechatpay.CodeOrderNotExist)
			if _, err := h.srv.Pay(context.Background(), "ord-none", paytest.PayOptions{}); !errors.Is(err, paytest.ErrNoOrder) {
				t.Errorf("Pay: %v", err)
			}
		}},
		{"FailAPIAnswers5xxAndChangesNothing", func(t *testing.T, h *harness) {
			h.srv.SetFailAPI(true)
			_, err := h.client.PrepayJSAPI(context.Background(), h.order("ord-0006", 100))
			if !errors.Is(err, wechatpay.ErrUnavailable) {
				t.Fatalf("PrepayJSAPI = %v, want ErrUnavailable", err)
			}
			if _, ok := h.srv.Order("ord-0006"); ok {
				t.Error("a failed order was created")
			}
			h.srv.SetFailAPI(false)
			h.prepay(t, h.order("ord-0006", 100))
		}},
		{"ForgedAnswersAreRefused", func(t *testing.T, h *harness) {
			h.srv.SetForgeAnswers(true)
			_, err := h.client.PrepayJSAPI(context.Background(), h.order("ord-0007", 100))
			if !errors.Is(err, wechatpay.ErrVerification) {
				t.Fatalf("PrepayJSAPI = %v, want ErrVerification", err)
			}
			_, err = h.client.QueryOrder(context.Background(), "ord-0007")
			if !errors.Is(err, wechatpay.ErrVerification) {
				t.Fatalf("QueryOrder = %v, want ErrVerification", err)
			}
			h.srv.SetForgeAnswers(false)
			if s := h.state(t, "ord-0007"); s != wechatpay.TradeStateNotPay {
				t.Errorf("state %s", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newHarness(t)) })
	}
}

// TestServer_RefusesRequestsNotSignedByTheMerchant: WeChat Pay answers 401 SIGN_ERROR to a
// request signed with another key, another serial or another mchid.
func TestServer_RefusesRequestsNotSignedByTheMerchant(t *testing.T) {
	h := newHarness(t)
	k, _ := keys()
	stranger := k.p.ClientConfig(k.other, h.srv.URL()) // another key, another serial
	wrongKey := k.p.ClientConfig(&paytest.Merchant{Key: k.other.Key, Serial: k.m.Serial}, h.srv.URL())
	otherMch := k.p.ClientConfig(k.m, h.srv.URL())
	otherMch.MchID = "1230000110"
	stale := k.p.ClientConfig(k.m, h.srv.URL())
	stale.Now = func() time.Time { return h.clock.Now().Add(-6 * time.Minute) }
	stale.MaxSkew = time.Hour // so that the client still reads the answer
	for name, cfg := range map[string]wechatpay.ClientConfig{"Stranger": stranger, "WrongKey": wrongKey, "OtherMchID": otherMch, "StaleTimestamp": stale} {
		t.Run(name, func(t *testing.T) {
			c, err := wechatpay.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.PrepayJSAPI(context.Background(), h.order("ord-0010", 100))
			wantCode(t, err, wechatpay.CodeSignError)
			if _, ok := h.srv.Order("ord-0010"); ok {
				t.Error("an unauthenticated request created an order")
			}
		})
	}
}

func TestServer_NotificationDelivery(t *testing.T) {
	tests := []struct {
		name         string
		statuses     []int
		drop         bool
		wantAttempts int
		wantStatus   int
		wantNotes    int
	}{
		{"DeliveredOnce", nil, false, 1, 204, 1},
		{"ResentUntil2xx", []int{500, 503}, false, 3, 204, 3},
		{"GivesUpAfterNotifyAttempts", []int{500, 500, 500, 500}, false, paytest.DefaultNotifyAttempts, 500, paytest.DefaultNotifyAttempts},
		{"FourXXIsResentToo", []int{400}, false, 2, 204, 2},
		{"Dropped", nil, true, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.statuses...)
			h.srv.SetDropNotifications(tt.drop)
			h.prepay(t, h.order("ord-0020", 100))
			d, err := h.srv.Pay(context.Background(), "ord-0020", paytest.PayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Attempts != tt.wantAttempts || d.StatusCode != tt.wantStatus || d.Dropped != tt.drop {
				t.Errorf("delivery %+v", d)
			}
			if n := len(h.notify.notifications()); n != tt.wantNotes {
				t.Errorf("%d notifications reached the route, want %d", n, tt.wantNotes)
			}
			if s := h.state(t, "ord-0020"); s != wechatpay.TradeStateSuccess {
				t.Errorf("paid order queries as %s", s)
			}
		})
	}
}

func TestServer_DelayedNotificationArrivesAfterPay(t *testing.T) {
	h := newHarness(t)
	h.srv.SetNotificationDelay(50 * time.Millisecond)
	h.prepay(t, h.order("ord-0030", 100))
	d, err := h.srv.Pay(context.Background(), "ord-0030", paytest.PayOptions{Amount: 99})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Delayed || d.Attempts != 0 {
		t.Errorf("Pay returned %+v", d)
	}
	if s := h.state(t, "ord-0030"); s != wechatpay.TradeStateSuccess {
		t.Errorf("paid order queries as %s before the notification", s)
	}
	h.srv.WaitDeliveries()
	notes := h.notify.notifications()
	if len(notes) != 1 || notes[0].Transaction.Amount.Total != 99 {
		t.Fatalf("notifications %+v", notes)
	}
	ds := h.srv.Deliveries()
	if len(ds) != 1 || ds[0].StatusCode != 204 || ds[0].OutTradeNo != "ord-0030" {
		t.Errorf("deliveries %+v", ds)
	}
}

// TestServer_ConcurrentOrdersPayAndClose: 20 rounds of 10 concurrent re-orders, a payment
// and a close racing on one order: one WeChat order, one prepay_id, and exactly one of pay
// and close wins.
func TestServer_ConcurrentOrdersPayAndClose(t *testing.T) {
	h := newHarness(t)
	var paid, closed int
	for round := range 20 {
		id := fmt.Sprintf("race-%04d", round)
		o := h.order(id, 100)
		ids := make([]string, 10)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				var err error
				if ids[i], err = h.client.PrepayJSAPI(context.Background(), o); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for _, p := range ids[1:] {
			if p != ids[0] {
				t.Fatalf("round %d: prepay_ids %v", round, ids)
			}
		}
		var payErr, closeErr error
		wg.Go(func() { _, payErr = h.srv.Pay(context.Background(), id, paytest.PayOptions{}) })
		wg.Go(func() { closeErr = h.client.CloseOrder(context.Background(), id) })
		wg.Wait()
		switch {
		case payErr == nil && closeErr != nil:
			wantCode(t, closeErr, wechatpay.CodeOrderPaid)
			paid++
		case closeErr == nil && errors.Is(payErr, paytest.ErrNotPayable):
			closed++
		default:
			t.Fatalf("round %d: pay %v, close %v", round, payErr, closeErr)
		}
		if got, _ := h.srv.Order(id); got.PrepayCalls != 10 {
			t.Errorf("round %d: %d prepay calls recorded", round, got.PrepayCalls)
		}
	}
	if got := len(h.notify.notifications()); got != paid {
		t.Errorf("%d notifications for %d payments", got, paid)
	}
	t.Logf("paid %d, closed %d of 20", paid, closed)
}

func TestPlatform_MerchantSecretConfiguresAClient(t *testing.T) {
	h := newHarness(t)
	k, _ := keys()
	secret, err := k.p.MerchantSecret(k.m, "app-secret-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := wechatpay.ClientConfigFromSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL, cfg.Now = h.srv.URL(), h.clock.Now
	c, err := wechatpay.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PrepayJSAPI(context.Background(), h.order("ord-0040", 100)); err != nil {
		t.Errorf("PrepayJSAPI with the secret's config: %v", err)
	}
	s, err := wechatpay.ParseSecret(secret)
	if err != nil || s.AppSecret != "app-secret-1" || s.MerchantSerial != k.m.Serial {
		t.Errorf("ParseSecret = %+v, %v", s, err)
	}
	if _, err := wechatpay.ConfigFromSecret(secret); err != nil {
		t.Errorf("ConfigFromSecret refuses the full secret: %v", err)
	}
}

func TestServer_ResendRepeatsThePayment(t *testing.T) {
	h := newHarness(t)
	h.prepay(t, h.order("ord-0050", 100))
	if _, err := h.srv.Resend(context.Background(), "ord-0050"); !errors.Is(err, paytest.ErrNotPayable) {
		t.Errorf("Resend before payment: %v", err)
	}
	if _, err := h.srv.Pay(context.Background(), "ord-0050", paytest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := h.srv.Resend(context.Background(), "ord-0050")
	if err != nil || d.StatusCode != 204 {
		t.Fatalf("Resend = %+v, %v", d, err)
	}
	notes := h.notify.notifications()
	if len(notes) != 2 || notes[0].ID == notes[1].ID || notes[0].Transaction.TransactionID != notes[1].Transaction.TransactionID ||
		!notes[0].Transaction.SuccessTime.Equal(notes[1].Transaction.SuccessTime) {
		t.Errorf("notifications %+v / %+v", notes[0], notes[len(notes)-1])
	}
	if _, err := h.srv.Resend(context.Background(), "ord-none"); !errors.Is(err, paytest.ErrNoOrder) {
		t.Errorf("Resend of an unknown order: %v", err)
	}
}

func TestServer_FailedAttemptLeavesTheOrderPayable(t *testing.T) {
	h := newHarness(t)
	h.prepay(t, h.order("ord-0060", 100))
	if _, err := h.srv.Pay(context.Background(), "ord-0060", paytest.PayOptions{State: wechatpay.TradeStatePayError}); err != nil {
		t.Fatal(err)
	}
	notes := h.notify.notifications()
	if len(notes) != 1 || notes[0].EventType != "TRANSACTION.PAYERROR" || notes[0].Transaction.TradeState != wechatpay.TradeStatePayError {
		t.Fatalf("notifications %+v", notes)
	}
	if s := h.state(t, "ord-0060"); s != wechatpay.TradeStateNotPay {
		t.Errorf("after a failed attempt the order is %s", s)
	}
	if _, err := h.srv.Pay(context.Background(), "ord-0060", paytest.PayOptions{}); err != nil {
		t.Errorf("paying after a failed attempt: %v", err)
	}
}
