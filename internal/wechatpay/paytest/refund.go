package paytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Errors of Server.SettleRefund and Server.ResendRefund.
var (
	// ErrNoRefund: no refund with that out_refund_no.
	ErrNoRefund = errors.New("paytest: no such refund")
	// ErrRefundFinal: the refund is SUCCESS or CLOSED (settle), or still PROCESSING (resend:
	// there is no notification yet).
	ErrRefundFinal = errors.New("paytest: refund cannot move that way")
)

// payment is one successful transaction and how much of it is refunded (fen, counting
// every refund that is not CLOSED).
type payment struct {
	outTradeNo      string
	total, refunded int64
	paidAt          time.Time
	refunds         int       // refunds taken, CLOSED ones included
	lastRefund      time.Time // when the last refund was taken
}

// WeChat Pay's own rules on refunds of one payment (APIv3 docs, 申请退款, 注意: "一笔
// 订单最多支持50次部分退款", "交易时间超过一年的订单无法提交退款", "同一笔订单多次退款
// 的请求需相隔1分钟"). The stand-in enforces all three.
const (
	// MaxRefundsPerPayment is how many refunds one payment takes at most.
	MaxRefundsPerPayment = 50
	// RefundPeriod is how long after its payment a payment can be refunded.
	RefundPeriod = 365 * 24 * time.Hour
	// RefundInterval is the least time between two refund requests of one payment
	// (SetRefundInterval shortens it for local runs).
	RefundInterval = time.Minute
)

// SetRefundRefusal makes every new "申请退款" request answer code (an error code of the
// refund API: e.g. wechatpay.CodeNoAuth, CodeUserAccountAbnormal, CodeNotEnough) with
// nothing refunded, until set to "" again. Requests for a refund already taken are
// answered as before.
func (s *Server) SetRefundRefusal(code string) { s.mu.Lock(); s.refusal = code; s.mu.Unlock() }

// refusalStatus is the HTTP status WeChat Pay answers a refund refusal code with (a best
// reading of the docs: 403 for a refusal of the merchant's rights or funds, else 400).
func refusalStatus(code string) int {
	switch code {
	case wechatpay.CodeNoAuth, wechatpay.CodeNotEnough, wechatpay.CodeUserAccountAbnormal:
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}

// SetRefundInterval sets the least time between two new refunds of one payment (the
// default, RefundInterval, is WeChat Pay's minute); a request sooner is refused 429
// FREQUENCY_LIMITED, as WeChat Pay does. Zero or less lets refunds follow at once.
func (s *Server) SetRefundInterval(d time.Duration) { s.mu.Lock(); s.refundGap = d; s.mu.Unlock() }

// RefundOutside records a refund of amount fen of order outTradeNo's payment made
// outside the merchant's system (in the merchant platform, 商户平台), under a refund
// number of its own: the order's trade_state becomes REFUND and the refund SUCCESS at
// once, with no notification. Errors: ErrNoOrder; ErrNotPayable when the order was never
// paid or amount is more than what is left of it.
func (s *Server) RefundOutside(outTradeNo string, amount int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[outTradeNo]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoOrder, outTradeNo)
	}
	p := s.payments[o.transactionID]
	if p == nil || amount <= 0 || p.refunded+amount > p.total {
		return fmt.Errorf("%w: %s: cannot refund %d fen of it", ErrNotPayable, outTradeNo, amount)
	}
	id, err := randomDigits(27)
	if err != nil {
		return err
	}
	now := s.now()
	p.refunded += amount
	p.refunds++
	p.lastRefund = now
	o.state = wechatpay.TradeStateRefund
	s.refunds["outside"+id] = &refund{r: wechatpay.Refund{
		OutTradeNo: outTradeNo, TransactionID: o.transactionID, OutRefundNo: "outside" + id, RefundID: "50" + id,
		Status: wechatpay.RefundSuccess, Channel: "ORIGINAL", CreateTime: now, SuccessTime: now,
		Amount: wechatpay.RefundAmount{Refund: amount, Total: p.total, PayerTotal: p.total, PayerRefund: amount, Currency: wechatpay.CurrencyCNY},
	}}
	return nil
}

// refund is one refund and where its notifications go.
type refund struct {
	r         wechatpay.Refund
	notifyURL string
	requests  int
}

// RefundRecord is a snapshot of one refund at the server.
type RefundRecord struct {
	wechatpay.Refund
	NotifyURL string
	Requests  int // "申请退款" calls answered with this refund (deduplicated on out_refund_no)
}

// SetRefundOutcome sets what refunds requested from now on become after the answer
// (PROCESSING): SUCCESS (the default, also for ""), CLOSED or ABNORMAL, each followed in
// the background by its signed, encrypted refund notification (REFUND.SUCCESS,
// REFUND.CLOSED, REFUND.ABNORMAL: "退款结果通知") to the request's notify_url, resent as
// payment notifications are; or PROCESSING, which holds them, sending nothing until
// SettleRefund. Any other value is treated as PROCESSING.
func (s *Server) SetRefundOutcome(status wechatpay.RefundStatus) {
	s.mu.Lock()
	s.outcome = status
	s.mu.Unlock()
}

// FailNextAPI makes the next n merchant API requests, of any kind, answer 500
// SYSTEM_ERROR without taking effect (WeChat Pay having a short bad moment); SetFailAPI
// fails them until switched off.
func (s *Server) FailNextAPI(n int) { s.mu.Lock(); s.failNext = n; s.mu.Unlock() }

// failing reports whether this request is to fail, counting it against FailNextAPI.
func (s *Server) failing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext > 0 {
		s.failNext--
		return true
	}
	return s.failAPI
}

// Refund returns the refund with outRefundNo, if any.
func (s *Server) Refund(outRefundNo string) (RefundRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rf, ok := s.refunds[outRefundNo]
	if !ok {
		return RefundRecord{}, false
	}
	return RefundRecord{Refund: rf.r, NotifyURL: rf.notifyURL, Requests: rf.requests}, true
}

// Refunded returns how much of the payment transactionID is refunded or being refunded, in
// fen (refunds that are not CLOSED), and whether the payment exists.
func (s *Server) Refunded(transactionID string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[transactionID]
	if !ok {
		return 0, false
	}
	return p.refunded, true
}

// SettleRefund ends a PROCESSING (held) or ABNORMAL refund as status — SUCCESS (success_time
// now), CLOSED (the amount becomes refundable again) or ABNORMAL — and sends its refund
// notification as Pay sends payment notifications (switches, resends; see Delivery).
// Errors: ErrNoRefund; ErrRefundFinal when the refund is SUCCESS or CLOSED already or
// status is not one of the three; an error building the notification.
func (s *Server) SettleRefund(ctx context.Context, outRefundNo string, status wechatpay.RefundStatus) (Delivery, error) {
	now := s.now()
	s.mu.Lock()
	rf, ok := s.refunds[outRefundNo]
	var r wechatpay.Refund
	switch {
	case !ok:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("%w: %s", ErrNoRefund, outRefundNo)
	case rf.r.Status != wechatpay.RefundProcessing && rf.r.Status != wechatpay.RefundAbnormal,
		status != wechatpay.RefundSuccess && status != wechatpay.RefundClosed && status != wechatpay.RefundAbnormal:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("%w: %s is %s, asked %s", ErrRefundFinal, outRefundNo, rf.r.Status, status)
	}
	rf.r.Status = status
	switch status {
	case wechatpay.RefundSuccess:
		rf.r.SuccessTime = now
	case wechatpay.RefundClosed:
		s.payments[rf.r.TransactionID].refunded -= rf.r.Amount.Refund
	}
	r = rf.r
	s.mu.Unlock()
	return s.sendRefund(ctx, rf.notifyURL, r)
}

// ResendRefund sends the notification of a settled refund again, as WeChat Pay does until
// it gets a 2xx answer (same refund, fresh notification id, nonce and signature at now).
// Errors: ErrNoRefund; ErrRefundFinal when the refund is still PROCESSING.
func (s *Server) ResendRefund(ctx context.Context, outRefundNo string) (Delivery, error) {
	s.mu.Lock()
	rf, ok := s.refunds[outRefundNo]
	var r wechatpay.Refund
	if ok {
		r = rf.r
	}
	s.mu.Unlock()
	switch {
	case !ok:
		return Delivery{}, fmt.Errorf("%w: %s", ErrNoRefund, outRefundNo)
	case r.Status == wechatpay.RefundProcessing:
		return Delivery{}, fmt.Errorf("%w: %s is PROCESSING, nothing to resend", ErrRefundFinal, outRefundNo)
	}
	return s.sendRefund(ctx, rf.notifyURL, r)
}

// sendRefund builds the refund notification of r and delivers it as the switches say.
func (s *Server) sendRefund(ctx context.Context, notifyURL string, r wechatpay.Refund) (Delivery, error) {
	headers, body, err := s.p.NotifyRefund(r, s.now())
	if err != nil {
		return Delivery{}, err
	}
	return s.dispatch(ctx, Delivery{OutTradeNo: r.OutTradeNo, OutRefundNo: r.OutRefundNo}, notifyURL, headers, body), nil
}

// refund serves "申请退款": the refund of the request's out_refund_no if there is one
// (whatever else the request says: one out_refund_no is refunded once), else a new
// PROCESSING refund, settled in the background as SetRefundOutcome says.
func (s *Server) refund(w http.ResponseWriter, body []byte) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req wechatpay.RefundRequestBody
	if err := dec.Decode(&req); err != nil || wechatpay.CheckOutRefundNo(req.OutRefundNo) != nil || req.NotifyURL == "" ||
		(req.OutTradeNo == "" && req.TransactionID == "") || req.Amount.Currency != wechatpay.CurrencyCNY || req.Amount.Refund <= 0 || req.Amount.Total <= 0 {
		s.answerError(w, http.StatusBadRequest, wechatpay.CodeParamError, "参数错误")
		return
	}
	r, outcome, status, code, message := s.placeRefund(req)
	if code != "" {
		s.answerError(w, status, code, message)
		return
	}
	if b, err := MarshalRefund(r); !s.answerOK(w, b, err) || outcome == "" {
		return
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		if _, err := s.SettleRefund(s.ctx, r.OutRefundNo, outcome); err != nil {
			s.record(Delivery{OutTradeNo: r.OutTradeNo, OutRefundNo: r.OutRefundNo, Err: err})
		}
	}()
}

// placeRefund applies a "申请退款" request: the refund and, for a new one, the outcome to
// settle it as (empty: hold or already known); or the status, code and message of the
// refusal.
func (s *Server) placeRefund(req wechatpay.RefundRequestBody) (r wechatpay.Refund, outcome wechatpay.RefundStatus, status int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rf, ok := s.refunds[req.OutRefundNo]; ok {
		rf.requests++
		return rf.r, "", http.StatusOK, "", ""
	}
	if s.refusal != "" {
		return r, "", refusalStatus(s.refusal), s.refusal, "退款被拒绝"
	}
	txID := req.TransactionID
	if txID == "" {
		if o, ok := s.orders[req.OutTradeNo]; ok {
			txID = o.transactionID
		}
	}
	p, ok := s.payments[txID]
	switch {
	case !ok || (req.OutTradeNo != "" && p.outTradeNo != req.OutTradeNo):
		return r, "", http.StatusNotFound, wechatpay.CodeResourceNotExists, "订单不存在"
	case req.Amount.Total != p.total:
		return r, "", http.StatusBadRequest, wechatpay.CodeInvalidRequest, "订单金额与原订单不一致"
	case p.refunded+req.Amount.Refund > p.total:
		return r, "", http.StatusBadRequest, wechatpay.CodeInvalidRequest, "申请退款金额超过订单可退金额"
	case p.refunds >= MaxRefundsPerPayment:
		return r, "", http.StatusBadRequest, wechatpay.CodeInvalidRequest, "该订单退款次数已达上限"
	case s.now().Sub(p.paidAt) > RefundPeriod:
		return r, "", http.StatusBadRequest, wechatpay.CodeInvalidRequest, "订单已超过退款期限"
	case p.refunds > 0 && s.now().Sub(p.lastRefund) < s.refundGap:
		return r, "", http.StatusTooManyRequests, wechatpay.CodeFrequencyLimited, "同一笔订单多次退款的请求需相隔1分钟"
	}
	p.refunds++
	p.lastRefund = s.now()
	if o, ok := s.orders[p.outTradeNo]; ok && o.transactionID == txID {
		o.state = wechatpay.TradeStateRefund
	}
	id, err := randomDigits(27)
	if err != nil {
		return r, "", http.StatusInternalServerError, wechatpay.CodeSystemError, "系统错误"
	}
	p.refunded += req.Amount.Refund
	r = wechatpay.Refund{
		OutTradeNo: p.outTradeNo, TransactionID: txID, OutRefundNo: req.OutRefundNo, RefundID: "50" + id,
		Status: wechatpay.RefundProcessing, Channel: "ORIGINAL", UserReceivedAccount: "支付用户零钱", CreateTime: s.now(),
		Amount: wechatpay.RefundAmount{
			Refund: req.Amount.Refund, Total: p.total, PayerTotal: p.total, PayerRefund: req.Amount.Refund, Currency: wechatpay.CurrencyCNY,
		},
	}
	s.refunds[req.OutRefundNo] = &refund{r: r, notifyURL: req.NotifyURL, requests: 1}
	switch s.outcome {
	case "", wechatpay.RefundSuccess:
		outcome = wechatpay.RefundSuccess
	case wechatpay.RefundClosed, wechatpay.RefundAbnormal:
		outcome = s.outcome
	}
	return r, outcome, http.StatusOK, "", ""
}

// queryRefund serves "查询单笔退款（通过商户退款单号）".
func (s *Server) queryRefund(w http.ResponseWriter, outRefundNo string) {
	rf, ok := s.Refund(outRefundNo)
	if !ok {
		s.answerError(w, http.StatusNotFound, wechatpay.CodeResourceNotExists, "退款单不存在")
		return
	}
	b, err := MarshalRefund(rf.Refund)
	s.answerOK(w, b, err)
}
