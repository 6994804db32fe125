package wechatpay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// PathRefunds is the domestic refund API ("申请退款": POST; "查询单笔退款（通过商户退款单号）":
// GET PathRefunds + "/" + out_refund_no).
const PathRefunds = "/v3/refund/domestic/refunds"

// Limits of a refund request ("申请退款": 请求参数).
const (
	maxOutRefundNoLen     = 64  // out_refund_no string(64) of [0-9A-Za-z_-|*@]
	maxReasonRunes        = 80  // reason string(80)
	maxRefundNotifyURLLen = 256 // notify_url string(256)
)

// Values of refund notifications ("退款结果通知": event_type; resource.original_type).
const (
	EventRefundSuccess  = "REFUND.SUCCESS"  // 退款成功
	EventRefundAbnormal = "REFUND.ABNORMAL" // 退款异常: the money could not reach the buyer
	EventRefundClosed   = "REFUND.CLOSED"   // 退款关闭

	// OriginalTypeRefund is the resource.original_type (and associated_data) of a refund
	// notification.
	OriginalTypeRefund = "refund"
)

// Codes of the refund API ("申请退款", "查询单笔退款": 错误码), kept as data in APIError.Code.
const (
	CodeNotEnough           = "NOT_ENOUGH"            // 余额不足: the merchant's balance cannot cover the refund; retry later with the same out_refund_no
	CodeResourceNotExists   = "RESOURCE_NOT_EXISTS"   // the order (refund request) or refund (query) does not exist
	CodeUserAccountAbnormal = "USER_ACCOUNT_ABNORMAL" // the buyer's account is frozen or closed
	CodeNoAuth              = "NO_AUTH"               // the merchant may not refund this order
)

// FinalRefusal reports whether err, the refund API's answer to "申请退款", is a refusal
// that asking again cannot change (WeChat Pay APIv3 docs, 申请退款: 错误码 and their
// 解决方案), and its code: a 4xx *APIError with CodeUserAccountAbnormal (the buyer's
// account is frozen or closed: settle by hand), CodeNoAuth (this merchant may not
// refund it), CodeInvalidRequest (the request breaks a refund rule: more than is
// refundable, an order over a year old, past 50 refunds), CodeParamError or
// CodeResourceNotExists (no such payment). Everything else is to be retried later with
// the same out_refund_no: transport failures, 5xx and 429, CodeSystemError and
// CodeFrequencyLimited (retry later, "同一笔订单多次退款的请求需相隔1分钟"), CodeNotEnough
// (the merchant's balance: retry once it is topped up), and the merchant's own
// configuration (CodeSignError, CodeMchNotExists), which an operator fixes without the
// refund changing.
func FinalRefusal(err error) (string, bool) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Retryable() {
		return "", false
	}
	switch apiErr.Code {
	case CodeUserAccountAbnormal, CodeNoAuth, CodeInvalidRequest, CodeParamError, CodeResourceNotExists:
		return apiErr.Code, true
	}
	return "", false
}

// WaitsOnMerchant reports whether err, the refund API's answer to "申请退款", is a
// refusal to retry once the merchant acts, and its code: CodeNotEnough (余额不足: the
// merchant's available balance cannot cover the refund; WeChat Pay APIv3 docs, 申请退款,
// 错误码: "此状态代表退款申请失败，商户可根据具体的错误提示做相应的处理" — top up, then retry with
// the same out_refund_no).
func WaitsOnMerchant(err error) (string, bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Code == CodeNotEnough {
		return apiErr.Code, true
	}
	return "", false
}

var (
	// ErrNotFound: WeChat Pay has no such order or refund (an *APIError with HTTP 404 and
	// CodeOrderNotExist or CodeResourceNotExists unwraps to it).
	ErrNotFound = errors.New("wechatpay: no such order or refund")

	// ErrRefundMismatch: a verified refund (an API answer or a notification) is not the
	// refund that was asked for: another out_refund_no, order, transaction or amount (see
	// Refund.Matches). Never treat such a refund as the one requested.
	ErrRefundMismatch = errors.New("wechatpay: refund does not match the request")
)

// RefundStatus is a refund's status ("申请退款", "查询单笔退款": status; "退款结果通知":
// refund_status).
type RefundStatus string

// The refund statuses the docs list; decoding rejects any other (ErrMalformed).
const (
	RefundSuccess    RefundStatus = "SUCCESS"    // 退款成功: the money is back with the buyer
	RefundClosed     RefundStatus = "CLOSED"     // 退款关闭: no money moved; the same out_refund_no cannot be retried
	RefundProcessing RefundStatus = "PROCESSING" // 退款处理中: wait for the notification or query
	RefundAbnormal   RefundStatus = "ABNORMAL"   // 退款异常: needs the merchant (e.g. the buyer's card was closed)
)

func (s RefundStatus) known() bool {
	switch s {
	case RefundSuccess, RefundClosed, RefundProcessing, RefundAbnormal:
		return true
	}
	return false
}

// RefundRequest is a refund to ask for ("申请退款"). Money in fen.
type RefundRequest struct {
	// OutTradeNo and TransactionID name the payment to refund; at least one is required.
	// TransactionID (WeChat Pay's transaction_id) refunds that payment specifically — the
	// way to refund a second payment of one order. When both are set, both are sent and
	// WeChat Pay goes by transaction_id.
	OutTradeNo    string
	TransactionID string

	// OutRefundNo is the merchant's refund number: 1..64 of [0-9A-Za-z_-|*@]. WeChat Pay
	// refunds one out_refund_no once, however often it is asked (see CheckOutRefundNo).
	OutRefundNo string

	Reason    string // reason: optional, at most 80 characters, shown to the buyer
	NotifyURL string // notify_url: absolute http(s) URL without query, at most 256 bytes; required here
	Refund    int64  // amount.refund: fen, 1..Total
	Total     int64  // amount.total: fen, the paid total of the payment refunded
}

// RefundRequestBody is the JSON body of a "申请退款" request, field for field as sent
// (amounts in fen, currency CNY). The stand-in (paytest.Server) decodes it.
type RefundRequestBody struct {
	TransactionID string       `json:"transaction_id,omitempty"`
	OutTradeNo    string       `json:"out_trade_no,omitempty"`
	OutRefundNo   string       `json:"out_refund_no"`
	Reason        string       `json:"reason,omitempty"`
	NotifyURL     string       `json:"notify_url"`
	Amount        RefundAmount `json:"amount"`
}

// Refund is a refund as WeChat Pay reports it: the answer of "申请退款" and "查询单笔退款"
// and the decrypted resource of "退款结果通知". Decoding guarantees OutRefundNo, RefundID,
// OutTradeNo and TransactionID are non-empty, Status is a documented value, 0 < Refund ≤
// Total, no amount is negative, and SuccessTime is set when Status is SUCCESS; whether it
// is the refund asked for is Matches's question.
type Refund struct {
	MchID               string       // mchid: notifications only; empty in API answers
	OutTradeNo          string       // out_trade_no
	TransactionID       string       // transaction_id: the payment refunded
	OutRefundNo         string       // out_refund_no
	RefundID            string       // refund_id: WeChat Pay's refund number
	Status              RefundStatus // status (answers) or refund_status (notifications)
	Channel             string       // channel: ORIGINAL, BALANCE, OTHER_BALANCE, OTHER_BANKCARD; answers only
	UserReceivedAccount string       // user_received_account, e.g. "招商银行信用卡0403"
	CreateTime          time.Time    // create_time: answers only; zero when absent
	SuccessTime         time.Time    // success_time; zero unless SUCCESS
	Amount              RefundAmount // amount
}

// RefundAmount is a refund's money, in fen ("申请退款", "退款结果通知": amount).
type RefundAmount struct {
	Refund      int64  `json:"refund"`                 // amount.refund: refunded, fen
	Total       int64  `json:"total"`                  // amount.total: the payment's total, fen
	PayerTotal  int64  `json:"payer_total,omitempty"`  // amount.payer_total: what the buyer paid, fen
	PayerRefund int64  `json:"payer_refund,omitempty"` // amount.payer_refund: what the buyer gets back, fen
	Currency    string `json:"currency,omitempty"`     // amount.currency: "CNY"; absent in notifications
}

func (r *Refund) merchant() string { return r.MchID }

// Matches returns nil when r is the refund req asked for — same out_refund_no, refund and
// total amounts, and out_trade_no and transaction_id where req names them — and otherwise
// an error wrapping ErrRefundMismatch that lists each difference. Use it on the answer of
// Refund (which calls it already), of QueryRefund, and on a refund notification, with the
// request rebuilt from the order.
func (r Refund) Matches(req RefundRequest) error {
	var diffs []string
	differ := func(field string, got, want any) {
		diffs = append(diffs, fmt.Sprintf("%s %v, asked %v", field, got, want))
	}
	if r.OutRefundNo != req.OutRefundNo {
		differ("out_refund_no", truncate(r.OutRefundNo), req.OutRefundNo)
	}
	if req.OutTradeNo != "" && r.OutTradeNo != req.OutTradeNo {
		differ("out_trade_no", truncate(r.OutTradeNo), req.OutTradeNo)
	}
	if req.TransactionID != "" && r.TransactionID != req.TransactionID {
		differ("transaction_id", truncate(r.TransactionID), req.TransactionID)
	}
	if r.Amount.Refund != req.Refund {
		differ("amount.refund (fen)", r.Amount.Refund, req.Refund)
	}
	if r.Amount.Total != req.Total {
		differ("amount.total (fen)", r.Amount.Total, req.Total)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s", ErrRefundMismatch, strings.Join(diffs, "; "))
	}
	return nil
}

// CheckOutRefundNo returns an error wrapping ErrInvalidArgument unless s is a valid
// out_refund_no: 1..64 characters of [0-9A-Za-z_-|*@] ("申请退款").
func CheckOutRefundNo(s string) error {
	if s == "" || len(s) > maxOutRefundNoLen {
		return fmt.Errorf("%w: out_refund_no must be 1..%d characters, got %d", ErrInvalidArgument, maxOutRefundNoLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("_-|*@", c) >= 0) {
			return fmt.Errorf("%w: out_refund_no may hold only [0-9A-Za-z_-|*@]", ErrInvalidArgument)
		}
	}
	return nil
}

// wire validates req and returns the request body; every error wraps ErrInvalidArgument.
func (req RefundRequest) wire() (*RefundRequestBody, error) {
	if err := CheckOutRefundNo(req.OutRefundNo); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: refund %s: %s", ErrInvalidArgument, req.OutRefundNo, fmt.Sprintf(format, args...))
	}
	switch {
	case req.OutTradeNo == "" && req.TransactionID == "":
		return nil, bad("out_trade_no or transaction_id is required")
	case req.OutTradeNo != "" && CheckOutTradeNo(req.OutTradeNo) != nil:
		return nil, CheckOutTradeNo(req.OutTradeNo)
	case len(req.TransactionID) > maxOutRefundNoLen || !printable(req.TransactionID) && req.TransactionID != "":
		return nil, bad("transaction_id must be at most %d printable ASCII characters", maxOutRefundNoLen)
	case req.Total <= 0 || req.Refund <= 0 || req.Refund > req.Total:
		return nil, bad("amounts refund %d, total %d fen: want 0 < refund <= total", req.Refund, req.Total)
	case !utf8.ValidString(req.Reason) || utf8.RuneCountInString(req.Reason) > maxReasonRunes:
		return nil, bad("reason must be at most %d characters of UTF-8", maxReasonRunes)
	case !validNotifyURL(req.NotifyURL, maxRefundNotifyURLLen):
		return nil, bad("notify_url must be an absolute http(s) URL of at most %d bytes without query", maxRefundNotifyURLLen)
	}
	return &RefundRequestBody{
		TransactionID: req.TransactionID,
		OutTradeNo:    req.OutTradeNo,
		OutRefundNo:   req.OutRefundNo,
		Reason:        req.Reason,
		NotifyURL:     req.NotifyURL,
		Amount:        RefundAmount{Refund: req.Refund, Total: req.Total, Currency: CurrencyCNY},
	}, nil
}

// Refund asks WeChat Pay to refund a payment ("申请退款": POST /v3/refund/domestic/refunds)
// and returns the refund as answered, usually PROCESSING; the outcome follows as a refund
// notification (see Verifier.ParseRefund) or through QueryRefund. Asking again with the
// same OutRefundNo is safe: WeChat Pay refunds one out_refund_no once and answers with that
// refund. The answer is verified with the platform keys, decoded as described on Refund and
// checked with Matches against req.
//
// Errors: ErrInvalidArgument (nothing sent); ErrUnavailable (unreachable, 5xx, 429,
// SYSTEM_ERROR, FREQUENCY_LIMITED: retry with the same req); ErrVerification (the answer's
// signature does not verify); ErrNotFound (HTTP 404 RESOURCE_NOT_EXISTS: no such order
// or transaction); *APIError for other refusals, e.g. CodeNotEnough, CodeInvalidRequest
// (more than the payment's refundable amount), CodeUserAccountAbnormal; ErrMalformed (a
// verified 2xx body that is not a valid refund); ErrRefundMismatch, returned together with
// the verified Refund as answered, when the answer is another refund than req's.
func (c *Client) Refund(ctx context.Context, req RefundRequest) (Refund, error) {
	const op = "申请退款"
	body, err := req.wire()
	if err != nil {
		return Refund{}, err
	}
	answer, err := c.do(ctx, op, http.MethodPost, PathRefunds, body)
	if err != nil {
		return Refund{}, err
	}
	return readRefund(op, answer, func(r Refund) error { return r.Matches(req) })
}

// QueryRefund asks for a refund by out_refund_no ("查询单笔退款（通过商户退款单号）": GET
// /v3/refund/domestic/refunds/{out_refund_no}), the way to learn the outcome of a refund
// whose notification never came. Errors as for Refund; an unknown out_refund_no is
// ErrNotFound (*APIError, HTTP 404 RESOURCE_NOT_EXISTS); an answer for another
// out_refund_no is ErrRefundMismatch, returned with the Refund as answered.
func (c *Client) QueryRefund(ctx context.Context, outRefundNo string) (Refund, error) {
	const op = "查询单笔退款"
	if err := CheckOutRefundNo(outRefundNo); err != nil {
		return Refund{}, err
	}
	answer, err := c.do(ctx, op, http.MethodGet, PathRefunds+"/"+url.PathEscape(outRefundNo), nil)
	if err != nil {
		return Refund{}, err
	}
	return readRefund(op, answer, func(r Refund) error {
		if r.OutRefundNo != outRefundNo {
			return fmt.Errorf("%w: out_refund_no %q, asked %q", ErrRefundMismatch, truncate(r.OutRefundNo), outRefundNo)
		}
		return nil
	})
}

// readRefund decodes a verified refund answer of op and checks it with match.
func readRefund(op string, body []byte, match func(Refund) error) (Refund, error) {
	r, err := decodeRefund(body, false)
	if err != nil {
		return Refund{}, fmt.Errorf("%s answer: %w", op, err)
	}
	if err := match(*r); err != nil {
		return *r, fmt.Errorf("wechatpay: %s answer: %w", op, err)
	}
	return *r, nil
}

// RefundNotification is a verified refund notification ("退款结果通知"): the envelope and
// the decrypted refund, whose MchID is the configured merchant's and whose Status is
// SUCCESS, CLOSED or ABNORMAL, as EventType says.
type RefundNotification struct {
	Envelope
	Refund *Refund
}

// ParseRefund verifies a refund notification ("退款结果通知") and returns its envelope and
// decrypted refund. It runs exactly the checks of Parse, in the same order and by the same
// code — size, headers, sign-test probes, timestamp window, serial, RSA signature,
// envelope, AEAD_AES_256_GCM decryption, mchid — with resource original_type "refund"
// instead of "transaction"; then the refund is decoded as described on Refund (mchid
// required), and its refund_status must be SUCCESS, CLOSED or ABNORMAL and event_type
// "REFUND." + refund_status (ErrMalformed). Errors wrap exactly one of ErrVerification,
// ErrMalformed or ErrMerchantMismatch.
//
// A nil error means the notification is genuine and for this merchant; whether it is the
// refund the order asked for is the caller's check (Refund.Matches). ParseRefund is
// stateless: WeChat Pay resends a notification until it is answered 2xx, and a replay
// within MaxSkew parses again, so the caller's state change must be idempotent.
func (v *Verifier) ParseRefund(h Headers, body []byte) (*RefundNotification, error) {
	if err := v.check(h, body); err != nil {
		return nil, err
	}
	return v.decodeRefundNotification(body)
}

// decodeRefundNotification opens a refund notification whose signature has been verified.
func (v *Verifier) decodeRefundNotification(body []byte) (*RefundNotification, error) {
	env, r, err := open(v, body, OriginalTypeRefund, func(plaintext []byte) (*Refund, error) {
		return decodeRefund(plaintext, true)
	})
	if err != nil {
		return nil, err
	}
	if r.Status == RefundProcessing || env.EventType != "REFUND."+string(r.Status) {
		return nil, fmt.Errorf("%w: event_type %q with refund_status %s", ErrMalformed, truncate(env.EventType), r.Status)
	}
	return &RefundNotification{Envelope: env.envelope(), Refund: r}, nil
}

// wireRefund is a refund answer or notification resource; notifications name the status
// refund_status and carry mchid.
type wireRefund struct {
	MchID               string `json:"mchid"`
	OutTradeNo          string `json:"out_trade_no"`
	TransactionID       string `json:"transaction_id"`
	OutRefundNo         string `json:"out_refund_no"`
	RefundID            string `json:"refund_id"`
	Status              string `json:"status"`
	RefundStatus        string `json:"refund_status"`
	Channel             string `json:"channel"`
	UserReceivedAccount string `json:"user_received_account"`
	CreateTime          string `json:"create_time"`
	SuccessTime         string `json:"success_time"`
	Amount              *struct {
		Total       *int64 `json:"total"`
		Refund      *int64 `json:"refund"`
		PayerTotal  *int64 `json:"payer_total"`
		PayerRefund *int64 `json:"payer_refund"`
		Currency    string `json:"currency"`
	} `json:"amount"`
}

// decodeRefund parses and checks refund JSON, a notification's resource when notice (status
// in refund_status, mchid required) and an API answer otherwise; every error wraps
// ErrMalformed and names fields, never their values beyond enum-like ones.
func decodeRefund(plaintext []byte, notice bool) (*Refund, error) {
	var w wireRefund
	if err := json.Unmarshal(plaintext, &w); err != nil || w.Amount == nil {
		return nil, fmt.Errorf("%w: refund: not refund JSON with an amount", ErrMalformed)
	}
	status := w.Status
	if notice {
		status = w.RefundStatus
	}
	r := &Refund{
		MchID: w.MchID, OutTradeNo: w.OutTradeNo, TransactionID: w.TransactionID, OutRefundNo: w.OutRefundNo,
		RefundID: w.RefundID, Status: RefundStatus(status), Channel: w.Channel, UserReceivedAccount: w.UserReceivedAccount,
		Amount: RefundAmount{
			Total: deref(w.Amount.Total), Refund: deref(w.Amount.Refund), PayerTotal: deref(w.Amount.PayerTotal),
			PayerRefund: deref(w.Amount.PayerRefund), Currency: w.Amount.Currency,
		},
	}
	var err error
	if r.CreateTime, err = optionalTime("create_time", w.CreateTime); err != nil {
		return nil, err
	}
	if r.SuccessTime, err = optionalTime("success_time", w.SuccessTime); err != nil {
		return nil, err
	}
	return r, r.check(notice)
}

// check requires what every refund carries (see Refund).
func (r *Refund) check(notice bool) error {
	a := r.Amount
	switch {
	case notice && r.MchID == "":
		return fmt.Errorf("%w: refund: missing mchid", ErrMalformed)
	case r.OutRefundNo == "" || r.RefundID == "" || r.OutTradeNo == "" || r.TransactionID == "":
		return fmt.Errorf("%w: refund: missing out_refund_no, refund_id, out_trade_no or transaction_id", ErrMalformed)
	case !r.Status.known():
		return fmt.Errorf("%w: refund: unknown status %q", ErrMalformed, truncate(string(r.Status)))
	case a.Refund <= 0 || a.Refund > a.Total || a.PayerTotal < 0 || a.PayerRefund < 0:
		return fmt.Errorf("%w: refund: amounts must hold 0 < refund <= total, payer amounts >= 0", ErrMalformed)
	case r.Status == RefundSuccess && r.SuccessTime.IsZero():
		return fmt.Errorf("%w: refund: SUCCESS without success_time", ErrMalformed)
	}
	return nil
}

// optionalTime parses an RFC 3339 time, zero when s is empty; errors wrap ErrMalformed.
func optionalTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: refund: %s is not RFC 3339", ErrMalformed, field)
	}
	return t, nil
}
