package paytest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Merchant is the merchant's side of the merchant API: the merchant API private key
// (apiclient_key.pem) and the serial of its certificate ("签名生成").
type Merchant struct {
	Key    *rsa.PrivateKey
	Serial string // 40 upper-case hex digits, like a merchant API certificate serial
}

// NewMerchant generates a KeyBits RSA merchant key and a random 40-hex-digit serial.
func NewMerchant() (*Merchant, error) {
	key, serial, err := newKey()
	if err != nil {
		return nil, err
	}
	return &Merchant{Key: key, Serial: serial}, nil
}

// ClientConfig returns the configuration of a wechatpay.Client that is merchant m, trusts
// this platform (see Config) and calls baseURL (a Server's URL).
func (p *Platform) ClientConfig(m *Merchant, baseURL string) wechatpay.ClientConfig {
	return wechatpay.ClientConfig{Config: p.Config(), MerchantKey: m.Key, MerchantSerial: m.Serial, BaseURL: baseURL}
}

// MerchantSecret returns the full Secrets Manager secret JSON (see wechatpay.Secret): what
// Secret returns plus m's private key as a PEM "PRIVATE KEY" block (PKCS #8), m's serial and
// appSecret.
func (p *Platform) MerchantSecret(m *Merchant, appSecret string) ([]byte, error) {
	base, err := p.Secret()
	if err != nil {
		return nil, err
	}
	var s wechatpay.Secret
	if err := json.Unmarshal(base, &s); err != nil {
		return nil, fmt.Errorf("paytest: secret: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(m.Key)
	if err != nil {
		return nil, fmt.Errorf("paytest: marshal merchant key: %w", err)
	}
	s.MerchantPrivateKey = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	s.MerchantSerial = m.Serial
	s.AppSecret = appSecret
	return json.Marshal(s)
}

// Defaults of ServerOptions.
const (
	DefaultNotifyAttempts = 3                        // first POST plus two resends
	DefaultRetryInterval  = 50 * time.Millisecond    // between notification attempts
	DefaultNotifyTimeout  = 10 * time.Second         // one notification POST
	maxRequestBytes       = 16 << 10                 // merchant API request bodies
	signatureWindow       = wechatpay.DefaultMaxSkew // Authorization timestamp tolerance
)

// ServerOptions tune a Server; the zero value is usable.
type ServerOptions struct {
	// Now is the server's clock for time_expire, Authorization timestamps, signatures and
	// success_time; nil means time.Now. Share it with the merchant's clock in tests.
	Now func() time.Time

	// NotifyAttempts is how many times one notification is POSTed until an answer is 2xx
	// (WeChat Pay resends on any other answer, at growing intervals over 24 hours); zero means
	// DefaultNotifyAttempts.
	NotifyAttempts int

	// RetryInterval is the wait between attempts; zero means DefaultRetryInterval.
	RetryInterval time.Duration

	// HTTPClient POSTs notifications; nil means a client with DefaultNotifyTimeout.
	HTTPClient *http.Client
}

// Errors of Server.Pay.
var (
	// ErrNoOrder: no JSAPI order with that out_trade_no.
	ErrNoOrder = errors.New("paytest: no such order")
	// ErrNotPayable: the order is paid, closed, or past its time_expire; WeChat Pay would
	// not let the buyer pay.
	ErrNotPayable = errors.New("paytest: order not payable")
)

// Server is a stand-in WeChat Pay for one merchant and one platform, for tests and the
// local stack: it serves the merchant API calls wechatpay.Client makes ("JSAPI下单",
// "查询订单", "关闭订单"), checks their Authorization signature with the merchant's public
// key and signs every answer with the platform key ("签名生成", "签名验证"), keeps each
// order's trade_state (NOTPAY → SUCCESS or CLOSED; SUCCESS → REFUND once a refund of it
// is taken, "查询订单": trade_state 转入退款), and through Pay plays a buyer paying,
// followed by the signed, encrypted TRANSACTION.SUCCESS notification POSTed to the order's
// notify_url ("支付成功回调通知"), resent on any non-2xx answer. It takes refunds ("申请退款":
// deduplicated on out_refund_no, at most the paid total per transaction) and answers
// refund queries; SetRefundOutcome, SettleRefund and FailNextAPI shape what happens to
// them, and each settled refund is notified like a payment ("退款结果通知").
//
// Differences from WeChat Pay, kept on purpose: orders and prepay_ids never expire (a
// re-order with the same parameters returns the same prepay_id); an unpaid order past its
// time_expire still queries as NOTPAY but cannot be paid; the error codes are the
// documented ones, their HTTP statuses a best reading of the docs.
//
// A Server is safe for concurrent use; its switches (SetFailAPI and the others) may be
// flipped while requests run.
type Server struct {
	p     *Platform
	m     *rsa.PublicKey
	mSer  string
	now   func() time.Time
	tries int
	wait  time.Duration
	hc    *http.Client

	mu         sync.Mutex
	orders     map[string]*order
	payments   map[string]*payment // by transaction_id
	refunds    map[string]*refund  // by out_refund_no
	outcome    wechatpay.RefundStatus
	refundGap  time.Duration
	refusal    string
	failAPI    bool
	failNext   int
	forge      bool
	forger     *rsa.PrivateKey
	drop       bool
	delay      time.Duration
	deliveries []Delivery
	background sync.WaitGroup
	ctx        context.Context
	cancel     context.CancelFunc
	serving    testkit.Background
}

type order struct {
	req           wechatpay.JSAPIRequest
	prepayID      string
	prepayCalls   int
	state         wechatpay.TradeState
	transactionID string
	successTime   time.Time
	payerTotal    int64
}

// NewServer returns a Server that is platform p for merchant m. It serves nothing until
// Start; it is also an http.Handler for callers that run their own listener.
func NewServer(p *Platform, m *Merchant, opts ServerOptions) *Server {
	s := &Server{
		p: p, m: &m.Key.PublicKey, mSer: m.Serial,
		now: opts.Now, tries: opts.NotifyAttempts, wait: opts.RetryInterval, hc: opts.HTTPClient,
		orders: map[string]*order{}, payments: map[string]*payment{}, refunds: map[string]*refund{},
		refundGap: RefundInterval,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.tries <= 0 {
		s.tries = DefaultNotifyAttempts
	}
	if s.wait <= 0 {
		s.wait = DefaultRetryInterval
	}
	if s.hc == nil {
		s.hc = &http.Client{Timeout: DefaultNotifyTimeout}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves in the background
// until Close. URL then returns the base URL to configure the merchant's client with.
func (s *Server) Start(addr string) error {
	if err := s.serving.Start(addr, s); err != nil {
		return fmt.Errorf("paytest: %w", err)
	}
	return nil
}

// URL is the base URL ("http://127.0.0.1:port") after Start; empty before.
func (s *Server) URL() string { return s.serving.URL() }

// Close stops serving, cancels notifications waiting for their delay or resend, and waits
// for background deliveries to end.
func (s *Server) Close() error {
	s.cancel()
	err := s.serving.Close()
	s.background.Wait()
	return err
}

// SetFailAPI makes every merchant API request answer 500 SYSTEM_ERROR while on (WeChat Pay
// having a bad moment); nothing changes at the server.
func (s *Server) SetFailAPI(on bool) { s.mu.Lock(); s.failAPI = on; s.mu.Unlock() }

// SetForgeAnswers makes the server sign its merchant API answers with a key that is not the
// platform's (same Wechatpay-Serial) while on: a forged answer the client must refuse.
// Requests still take effect.
func (s *Server) SetForgeAnswers(on bool) { s.mu.Lock(); s.forge = on; s.mu.Unlock() }

// SetDropNotifications makes Pay mark orders paid without sending any notification while on
// (a notification lost on the way).
func (s *Server) SetDropNotifications(on bool) { s.mu.Lock(); s.drop = on; s.mu.Unlock() }

// SetNotificationDelay makes Pay return at once and deliver the notification d later, in
// the background (a late notification); see Deliveries and WaitDeliveries. Zero delivers
// synchronously again.
func (s *Server) SetNotificationDelay(d time.Duration) { s.mu.Lock(); s.delay = d; s.mu.Unlock() }

// Order is a snapshot of one JSAPI order at the server.
type Order struct {
	OutTradeNo    string
	PrepayID      string
	PrepayCalls   int // "JSAPI下单" calls answered with PrepayID
	TradeState    wechatpay.TradeState
	Total         int64 // fen
	TimeExpire    time.Time
	NotifyURL     string
	PayerOpenID   string
	TransactionID string // set once paid
}

// Order returns the order with outTradeNo, if any.
func (s *Server) Order(outTradeNo string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[outTradeNo]
	if !ok {
		return Order{}, false
	}
	expires, _ := time.Parse(time.RFC3339, o.req.TimeExpire)
	return Order{
		OutTradeNo: outTradeNo, PrepayID: o.prepayID, PrepayCalls: o.prepayCalls, TradeState: o.state,
		Total: o.req.Amount.Total, TimeExpire: expires, NotifyURL: o.req.NotifyURL,
		PayerOpenID: o.req.Payer.OpenID, TransactionID: o.transactionID,
	}, true
}

// PayOptions shape one Pay call; the zero value pays the ordered amount.
type PayOptions struct {
	// Amount is amount.total (fen) in the notification; zero means the ordered amount. Another
	// value tests the notify route's amount check (the order is marked SUCCESS regardless).
	Amount int64

	// State is the trade_state the buyer's attempt ends in; empty means SUCCESS. Any other
	// value leaves the order unpaid and sends a "TRANSACTION.<State>" notification, which
	// WeChat Pay never sends: it tests the notify route's refusal of other events.
	State wechatpay.TradeState

	// Again pays an order that is already SUCCESS a second time, with a fresh
	// transaction_id, and notifies that second transaction: the double payment the
	// merchant must refund by transaction_id. Without it, paying a paid order is
	// ErrNotPayable.
	Again bool
}

// Delivery is what became of one notification, of a payment or of a refund.
type Delivery struct {
	OutTradeNo  string
	OutRefundNo string // refund notifications only
	Attempts    int    // POSTs made
	StatusCode  int    // status of the last answer; 0 when none came
	Body        []byte // body of the last answer
	Err         error  // transport error of the last attempt, or context cancellation
	Dropped     bool   // SetDropNotifications was on: nothing sent
	Delayed     bool   // returned by Pay before delivery; the outcome is in Deliveries
}

// Pay plays the buyer paying order outTradeNo in WeChat: the order becomes SUCCESS with a
// fresh transaction_id and success_time = now, then the TRANSACTION.SUCCESS notification is
// POSTed to its notify_url (up to NotifyAttempts times until an answer is 2xx), unless a
// switch drops or delays it. With opts.Again a SUCCESS order is paid a second time (see
// PayOptions). Errors: ErrNoOrder; ErrNotPayable when the order is already SUCCESS
// (without Again) or CLOSED or now is after its time_expire (nothing changes); an error building
// the notification. Transport failures and non-2xx answers are not errors: see Delivery.
func (s *Server) Pay(ctx context.Context, outTradeNo string, opts PayOptions) (Delivery, error) {
	s.mu.Lock()
	o, ok := s.orders[outTradeNo]
	if !ok {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("%w: %s", ErrNoOrder, outTradeNo)
	}
	return s.pay(ctx, o, opts, true)
}

// PayUnopened plays a buyer who paid the order req describes while its window was
// open, the notification arriving only now: when the stand-in has no order
// req.OutTradeNo yet, it opens the JSAPI order as "JSAPI下单" would have (NOTPAY,
// its own prepay_id), then pays it as Pay does without the time_expire check (the
// payment was taken in time; only its news is late). An order the stand-in already
// has is paid by Pay, refusals included. So every payment the local stack makes is one
// WeChat Pay knows: it can be queried, closed and refunded. Errors as for Pay;
// ErrNotPayable also for a request the stand-in would refuse ("JSAPI下单": another
// merchant or app, a non-positive amount).
func (s *Server) PayUnopened(ctx context.Context, req wechatpay.JSAPIRequest, opts PayOptions) (Delivery, error) {
	s.mu.Lock()
	if _, ok := s.orders[req.OutTradeNo]; ok {
		s.mu.Unlock()
		return s.Pay(ctx, req.OutTradeNo, opts)
	}
	if req.MchID != s.p.MchID || req.AppID != s.p.AppID || req.Amount.Total <= 0 || wechatpay.CheckOutTradeNo(req.OutTradeNo) != nil {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("%w: %s: not an order this merchant could open", ErrNotPayable, req.OutTradeNo)
	}
	id, err := randomDigits(30)
	if err != nil {
		s.mu.Unlock()
		return Delivery{}, err
	}
	o := &order{req: req, prepayID: "wx" + id, state: wechatpay.TradeStateNotPay}
	s.orders[req.OutTradeNo] = o
	return s.pay(ctx, o, opts, false)
}

// pay is Pay on o, with s.mu held (pay releases it); inTime checks time_expire.
func (s *Server) pay(ctx context.Context, o *order, opts PayOptions, inTime bool) (Delivery, error) {
	now := s.now()
	outTradeNo := o.req.OutTradeNo
	again := opts.Again && o.state == wechatpay.TradeStateSuccess
	if o.state != wechatpay.TradeStateNotPay && !again {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("%w: %s is %s", ErrNotPayable, outTradeNo, o.state)
	}
	if expires, _ := time.Parse(time.RFC3339, o.req.TimeExpire); inTime && now.After(expires) {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("%w: %s expired at %s", ErrNotPayable, outTradeNo, o.req.TimeExpire)
	}
	var tx wechatpay.Transaction
	if opts.State == "" || opts.State == wechatpay.TradeStateSuccess {
		txID, err := randomDigits(28)
		if err != nil {
			s.mu.Unlock()
			return Delivery{}, err
		}
		s.payments["42"+txID] = &payment{outTradeNo: outTradeNo, total: o.req.Amount.Total, paidAt: now}
		if !again {
			o.state, o.transactionID, o.successTime, o.payerTotal = wechatpay.TradeStateSuccess, "42"+txID, now, o.req.Amount.Total
		}
		tx = o.transaction(s.p)
		tx.TransactionID, tx.SuccessTime = "42"+txID, now
	} else {
		tx = o.transaction(s.p)
		tx.TradeState, tx.TradeStateDesc = opts.State, string(opts.State)
	}
	s.mu.Unlock()
	if opts.Amount != 0 {
		tx.Amount.Total, tx.Amount.PayerTotal = opts.Amount, opts.Amount
	}
	return s.send(ctx, o.req.NotifyURL, tx, now)
}

// transaction is the order's transaction as WeChat Pay would report it now, with the
// order (nil when there is none).
func (s *Server) transaction(outTradeNo string) (wechatpay.Transaction, *order) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.orders[outTradeNo]
	if o == nil {
		return wechatpay.Transaction{}, nil
	}
	return o.transaction(s.p), o
}

// Resend sends the notification of a paid order again, as WeChat Pay does until it gets a
// 2xx answer (same transaction, fresh notification id, nonce and signature at now); the
// switches apply as for Pay. Errors: ErrNoOrder; ErrNotPayable wrapped with "not paid" when
// the order is not SUCCESS.
func (s *Server) Resend(ctx context.Context, outTradeNo string) (Delivery, error) {
	tx, o := s.transaction(outTradeNo)
	switch {
	case o == nil:
		return Delivery{}, fmt.Errorf("%w: %s", ErrNoOrder, outTradeNo)
	case tx.TradeState != wechatpay.TradeStateSuccess:
		return Delivery{}, fmt.Errorf("%w: %s is %s, not paid", ErrNotPayable, outTradeNo, tx.TradeState)
	}
	return s.send(ctx, o.req.NotifyURL, tx, s.now())
}

// send builds the payment notification of tx and delivers it as the switches say.
func (s *Server) send(ctx context.Context, notifyURL string, tx wechatpay.Transaction, now time.Time) (Delivery, error) {
	headers, body, err := s.p.Notify(tx, now)
	if err != nil {
		return Delivery{}, err
	}
	return s.dispatch(ctx, Delivery{OutTradeNo: tx.OutTradeNo}, notifyURL, headers, body), nil
}

// dispatch delivers a built notification of any kind as the switches say: dropped,
// delayed in the background, or now. d names what the notification is about.
func (s *Server) dispatch(ctx context.Context, d Delivery, notifyURL string, headers map[string]string, body []byte) Delivery {
	s.mu.Lock()
	drop, delay := s.drop, s.delay
	s.mu.Unlock()
	switch {
	case drop:
		d.Dropped = true
		s.record(d)
		return d
	case delay > 0:
		s.background.Add(1)
		go func(d Delivery) {
			defer s.background.Done()
			select {
			case <-time.After(delay):
				s.record(s.deliver(s.ctx, d, notifyURL, headers, body))
			case <-s.ctx.Done():
				d.Err = s.ctx.Err()
				s.record(d)
			}
		}(d)
		d.Delayed = true
		return d
	}
	d = s.deliver(ctx, d, notifyURL, headers, body)
	s.record(d)
	return d
}

// Deliveries returns every notification outcome so far, in completion order (dropped ones
// included, delayed ones once done).
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// WaitDeliveries waits until every delayed notification is delivered or given up.
func (s *Server) WaitDeliveries() { s.background.Wait() }

func (s *Server) record(d Delivery) {
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
}

// deliver POSTs a notification until a 2xx answer or s.tries attempts.
func (s *Server) deliver(ctx context.Context, d Delivery, notifyURL string, headers map[string]string, body []byte) Delivery {
	for d.Attempts < s.tries {
		if d.Attempts > 0 {
			select {
			case <-time.After(s.wait):
			case <-ctx.Done():
				d.Err = ctx.Err()
				return d
			}
		}
		d.Attempts++
		d.StatusCode, d.Body, d.Err = s.post(ctx, notifyURL, headers, body)
		if d.Err == nil && d.StatusCode >= 200 && d.StatusCode < 300 {
			return d
		}
	}
	return d
}

func (s *Server) post(ctx context.Context, notifyURL string, headers map[string]string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, notifyURL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, answer, err
}

// transaction renders o as the transaction of a query answer or notification.
func (o *order) transaction(p *Platform) wechatpay.Transaction {
	tx := wechatpay.Transaction{
		AppID: o.req.AppID, MchID: o.req.MchID, OutTradeNo: o.req.OutTradeNo,
		TradeState: o.state, TradeStateDesc: stateDesc[o.state], Attach: o.req.Attach,
		Payer:  wechatpay.Payer{OpenID: o.req.Payer.OpenID},
		Amount: wechatpay.Amount{Total: o.req.Amount.Total, Currency: o.req.Amount.Currency, PayerCurrency: o.req.Amount.Currency},
	}
	if o.state == wechatpay.TradeStateSuccess || o.state == wechatpay.TradeStateRefund {
		tx.TransactionID, tx.TradeType, tx.BankType, tx.SuccessTime = o.transactionID, "JSAPI", "OTHERS", o.successTime
		tx.Amount.PayerTotal = o.payerTotal
	}
	return tx
}

var stateDesc = map[wechatpay.TradeState]string{
	wechatpay.TradeStateNotPay:  "订单未支付",
	wechatpay.TradeStateSuccess: "支付成功",
	wechatpay.TradeStateClosed:  "订单已关闭",
	wechatpay.TradeStateRefund:  "转入退款",
}

// ServeHTTP serves the merchant API: POST /v3/pay/transactions/jsapi, GET
// /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid=, POST
// /v3/pay/transactions/out-trade-no/{out_trade_no}/close, POST /v3/refund/domestic/refunds
// and GET /v3/refund/domestic/refunds/{out_refund_no}. Every request must carry a valid
// Authorization for the merchant (else 401 SIGN_ERROR); every answer is signed.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil || len(body) > maxRequestBytes {
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeParamError, "request body unreadable or too large")
		return
	}
	if s.failing() {
		s.answerError(w, http.StatusInternalServerError, wechatpay.CodeSystemError, "系统错误")
		return
	}
	if msg := s.authenticate(r, body); msg != "" {
		s.answerError(w, http.StatusUnauthorized, wechatpay.CodeSignError, msg)
		return
	}
	path := r.URL.Path
	switch {
	case path == wechatpay.PathJSAPI && r.Method == http.MethodPost:
		s.jsapi(w, body)
	case path == wechatpay.PathRefunds && r.Method == http.MethodPost:
		s.refund(w, body)
	case strings.HasPrefix(path, wechatpay.PathRefunds+"/") && r.Method == http.MethodGet:
		s.queryRefund(w, strings.TrimPrefix(path, wechatpay.PathRefunds+"/"))
	case strings.HasPrefix(path, wechatpay.PathOutTradeNo):
		id, closing := strings.CutSuffix(strings.TrimPrefix(path, wechatpay.PathOutTradeNo), "/close")
		switch {
		case closing && r.Method == http.MethodPost:
			s.close(w, id, body)
		case !closing && r.Method == http.MethodGet:
			s.query(w, id, r.URL.Query().Get("mchid"))
		default:
			s.answerError(w, http.StatusNotFound, "NOT_FOUND", "no such API")
		}
	default:
		s.answerError(w, http.StatusNotFound, "NOT_FOUND", "no such API")
	}
}

// authenticate checks the Authorization header as WeChat Pay does; "" means genuine.
func (s *Server) authenticate(r *http.Request, body []byte) string {
	a, err := wechatpay.ParseAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		return "Authorization 格式错误"
	}
	if a.MchID != s.p.MchID {
		return "mchid 不匹配"
	}
	if a.Serial != s.mSer {
		return "商户证书序列号有误"
	}
	sec, err := strconv.ParseInt(a.Timestamp, 10, 64)
	if skew := s.now().Sub(time.Unix(sec, 0)); err != nil || skew > signatureWindow || skew < -signatureWindow {
		return "timestamp 过期"
	}
	if err := a.Verify(s.m, r.Method, r.URL.RequestURI(), body); err != nil {
		return "签名错误"
	}
	return ""
}

func (s *Server) jsapi(w http.ResponseWriter, body []byte) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req wechatpay.JSAPIRequest
	if err := dec.Decode(&req); err != nil {
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeParamError, "请求体格式错误")
		return
	}
	expires, terr := time.Parse(time.RFC3339, req.TimeExpire)
	switch {
	case req.MchID != s.p.MchID:
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeMchNotExists, "商户号不存在")
		return
	case req.AppID != s.p.AppID:
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeAppIDMchIDMismatch, "appid和mch_id不匹配")
		return
	case wechatpay.CheckOutTradeNo(req.OutTradeNo) != nil, req.Description == "", req.NotifyURL == "",
		req.Amount.Total <= 0, req.Amount.Currency != wechatpay.CurrencyCNY, req.Payer.OpenID == "", terr != nil:
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeParamError, "参数错误")
		return
	}
	status, code, message, prepayID := s.placeOrder(req, expires)
	if code != "" {
		s.answerError(w, status, code, message)
		return
	}
	s.answerJSON(w, http.StatusOK, map[string]string{"prepay_id": prepayID})
}

// placeOrder applies a "JSAPI下单" request: the prepay_id, or the status, code and message
// of the refusal.
func (s *Server) placeOrder(req wechatpay.JSAPIRequest, expires time.Time) (status int, code, message, prepayID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[req.OutTradeNo]
	switch {
	case ok && (o.state == wechatpay.TradeStateSuccess || o.state == wechatpay.TradeStateRefund):
		return http.StatusForbidden, wechatpay.CodeOrderPaid, "该订单已支付", ""
	case ok && o.state == wechatpay.TradeStateClosed:
		return http.StatusBadRequest, wechatpay.CodeOrderClosed, "订单已关闭", ""
	case ok && o.req != req:
		return http.StatusForbidden, wechatpay.CodeOutTradeNoUsed, "商户订单号重复", ""
	case !expires.After(s.now()):
		return http.StatusBadRequest, wechatpay.CodeInvalidRequest, "time_expire 已过期", ""
	case !ok:
		id, err := randomDigits(30)
		if err != nil {
			return http.StatusInternalServerError, wechatpay.CodeSystemError, "系统错误", ""
		}
		o = &order{req: req, prepayID: "wx" + id, state: wechatpay.TradeStateNotPay}
		s.orders[req.OutTradeNo] = o
	}
	o.prepayCalls++
	return http.StatusOK, "", "", o.prepayID
}

func (s *Server) query(w http.ResponseWriter, id, mchID string) {
	if mchID != s.p.MchID {
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeParamError, "mchid 与请求方不一致")
		return
	}
	tx, o := s.transaction(id)
	if o == nil {
		s.answerError(w, http.StatusNotFound, wechatpay.CodeOrderNotExist, "订单不存在")
		return
	}
	b, err := MarshalTransaction(tx)
	s.answerOK(w, b, err)
}

func (s *Server) close(w http.ResponseWriter, id string, body []byte) {
	var req struct {
		MchID string `json:"mchid"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.MchID != s.p.MchID {
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeParamError, "mchid 与请求方不一致")
		return
	}
	s.mu.Lock()
	o, ok := s.orders[id]
	var state wechatpay.TradeState
	if ok {
		state = o.state
		if state == wechatpay.TradeStateNotPay {
			o.state = wechatpay.TradeStateClosed
		}
	}
	s.mu.Unlock()
	switch {
	case !ok:
		s.answerError(w, http.StatusNotFound, wechatpay.CodeOrderNotExist, "订单不存在")
	case state == wechatpay.TradeStateSuccess, state == wechatpay.TradeStateRefund:
		s.answerError(w, http.StatusForbidden, wechatpay.CodeOrderPaid, "订单已支付")
	default:
		s.answer(w, http.StatusNoContent, nil)
	}
}

// answerOK answers 200 with body, made by one of the Marshal functions, or 500
// SYSTEM_ERROR when making it failed (err); it reports whether it answered 200.
func (s *Server) answerOK(w http.ResponseWriter, body []byte, err error) bool {
	if err != nil {
		s.answerError(w, http.StatusInternalServerError, wechatpay.CodeSystemError, "系统错误")
		return false
	}
	s.answer(w, http.StatusOK, body)
	return true
}

func (s *Server) answerError(w http.ResponseWriter, status int, code, message string) {
	s.answerJSON(w, status, map[string]string{"code": code, "message": message})
}

func (s *Server) answerJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		http.Error(w, "marshal", http.StatusInternalServerError)
		return
	}
	s.answer(w, status, b)
}

// answer signs body with the platform key (or the forger's, see SetForgeAnswers) and writes it.
func (s *Server) answer(w http.ResponseWriter, status int, body []byte) {
	signer := s.p
	s.mu.Lock()
	if s.forge {
		if s.forger == nil {
			key, err := rsa.GenerateKey(rand.Reader, KeyBits)
			if err != nil {
				s.mu.Unlock()
				http.Error(w, "forger key", http.StatusInternalServerError)
				return
			}
			s.forger = key
		}
		signer = &Platform{Key: s.forger, Serial: s.p.Serial}
	}
	s.mu.Unlock()
	headers, err := signer.Headers(body, s.now())
	if err != nil {
		http.Error(w, "sign", http.StatusInternalServerError)
		return
	}
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	if body == nil {
		w.Header().Del("Content-Type")
	}
	requestID, _ := RandomString(32)
	w.Header().Set("Request-ID", requestID)
	w.WriteHeader(status)
	w.Write(body)
}

// randomDigits returns n random decimal digits, the shape of WeChat Pay ids.
func randomDigits(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("paytest: random: %w", err)
	}
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b), nil
}
