package wechatpay

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/origin"
)

// DefaultBaseURL is the WeChat Pay APIv3 host ("请求域名", 主域名). The backup host
// https://api2.mch.weixin.qq.com serves the same API from another site.
const DefaultBaseURL = "https://api.mch.weixin.qq.com"

// DefaultTimeout bounds one merchant API call, connection to last body byte, when
// ClientConfig.HTTPClient is nil (5 seconds: a Lambda answering a buyer must not hang).
const DefaultTimeout = 5 * time.Second

// AuthorizationScheme is the scheme of the Authorization header of a merchant API request
// and of the Wechatpay-Signature-Type of its answer ("签名生成").
const AuthorizationScheme = SignatureType

// Merchant API paths ("JSAPI下单", "查询订单", "关闭订单").
const (
	PathJSAPI           = "/v3/pay/transactions/jsapi"
	PathOutTradeNo      = "/v3/pay/transactions/out-trade-no/" // + out_trade_no [+ "/close"]
	closePathSuffix     = "/close"
	maxPrepayIDLen      = 64  // "JSAPI下单": prepay_id string(64)
	maxDescriptionLen   = 127 // "JSAPI下单": description string(127), in bytes (UTF-8)
	maxOpenIDLen        = 128 // "JSAPI下单": payer.openid string(128)
	maxAttachLen        = 128 // "JSAPI下单": attach string(128)
	maxNotifyURLLen     = 255 // "JSAPI下单": notify_url string(255)
	minOutTradeNoLen    = 6   // "JSAPI下单": out_trade_no 6..32 of [0-9A-Za-z_-|*]
	maxOutTradeNoLen    = 32
	CurrencyCNY         = "CNY" // the only currency of mini-program JSAPI payments in China
	SignTypeRSA         = "RSA" // wx.requestPayment signType of APIv3 ("JSAPI调起支付")
	prepayPackagePrefix = "prepay_id="
)

// Codes WeChat Pay answers in the code field of a 4xx/5xx body ("JSAPI下单", "查询订单",
// "关闭订单": 错误码), kept as data in APIError.Code. The list is not exhaustive.
const (
	CodeOrderPaid          = "ORDERPAID"             // the order was already paid
	CodeOrderClosed        = "ORDER_CLOSED"          // the order was closed; it can no longer be paid
	CodeOutTradeNoUsed     = "OUT_TRADE_NO_USED"     // the out_trade_no exists with other parameters
	CodeOrderNotExist      = "ORDER_NOT_EXIST"       // no order with this out_trade_no
	CodeParamError         = "PARAM_ERROR"           // a parameter is invalid
	CodeInvalidRequest     = "INVALID_REQUEST"       // the request breaks a rule (e.g. time_expire passed)
	CodeSignError          = "SIGN_ERROR"            // the Authorization signature did not verify
	CodeSystemError        = "SYSTEM_ERROR"          // WeChat Pay failed; retry with the same parameters
	CodeFrequencyLimited   = "FREQUENCY_LIMITED"     // too many requests; retry later
	CodeMchNotExists       = "MCH_NOT_EXISTS"        // unknown mchid
	CodeAppIDMchIDMismatch = "APPID_MCHID_NOT_MATCH" // the appid is not bound to the mchid
)

var (
	// ErrUnavailable: WeChat Pay could not be reached, timed out, or answered 5xx or 429;
	// the call may or may not have taken effect and may be retried with the same
	// parameters. docs/contract.md: 503 BUSY with Retry-After.
	ErrUnavailable = errors.New("wechatpay: WeChat Pay unavailable")

	// ErrInvalidArgument: a Client method was called with an argument WeChat Pay would
	// refuse (see the method); nothing was sent.
	ErrInvalidArgument = errors.New("wechatpay: invalid argument")
)

// APIError is an answer of the merchant API other than 2xx ("错误码"). For 4xx answers it
// carries WeChat Pay's code and message from the verified body; 5xx and 429 answers are
// not parsed (Code and Message empty) and unwrap to ErrUnavailable, as do 4xx answers whose
// code is SYSTEM_ERROR or FREQUENCY_LIMITED. Message is WeChat Pay's text, for logs only:
// never show it to a buyer.
type APIError struct {
	Op         string // "JSAPI下单", "查询订单", "关闭订单", "申请退款" or "查询单笔退款"
	StatusCode int    // HTTP status
	Code       string // e.g. CodeOrderPaid; empty when the body was not parsed
	Message    string // WeChat Pay's message
	RequestID  string // Request-ID header, for WeChat Pay support
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("wechatpay: %s: HTTP %d (Request-ID %q)", e.Op, e.StatusCode, e.RequestID)
	}
	return fmt.Sprintf("wechatpay: %s: HTTP %d %s: %s (Request-ID %q)", e.Op, e.StatusCode, e.Code, truncate(e.Message), e.RequestID)
}

// Retryable reports whether the same request may succeed later: 5xx, 429, or a
// SYSTEM_ERROR / FREQUENCY_LIMITED code.
func (e *APIError) Retryable() bool {
	return e.StatusCode >= 500 || e.StatusCode == http.StatusTooManyRequests ||
		e.Code == CodeSystemError || e.Code == CodeFrequencyLimited
}

// Unwrap returns ErrUnavailable when Retryable, so errors.Is(err, ErrUnavailable) selects
// every answer worth retrying, and ErrNotFound for an HTTP 404 with code ORDER_NOT_EXIST or
// RESOURCE_NOT_EXISTS.
func (e *APIError) Unwrap() error {
	switch {
	case e.Retryable():
		return ErrUnavailable
	case e.StatusCode == http.StatusNotFound && (e.Code == CodeOrderNotExist || e.Code == CodeResourceNotExists):
		return ErrNotFound
	}
	return nil
}

// ClientConfig is what a Client needs: the merchant and the platform keys it trusts
// (Config, as for notifications; the APIv3 key is required there even though the API
// answers are not encrypted), the merchant API private key and its certificate serial
// ("签名生成"), and where to send requests.
type ClientConfig struct {
	Config

	// MerchantKey is the merchant API private key (apiclient_key.pem, RSA ≥ MinRSABits).
	MerchantKey *rsa.PrivateKey

	// MerchantSerial is the merchant API certificate serial number (hex), sent as
	// serial_no in Authorization.
	MerchantSerial string

	// BaseURL is the scheme and host of the API, without a path; empty means
	// DefaultBaseURL. The local stand-in (paytest.Server) serves http://127.0.0.1:port.
	BaseURL string

	// HTTPClient sends the requests; nil means a client with DefaultTimeout.
	HTTPClient *http.Client
}

// Client calls the WeChat Pay APIv3 merchant API for one merchant: every request is signed
// with the merchant key and every answer verified with the platform keys before its body is
// read as JSON. It is immutable and safe for concurrent use.
type Client struct {
	v       *Verifier
	key     *rsa.PrivateKey
	serial  string
	baseURL string
	http    *http.Client
}

// NewClient validates cfg and returns a Client. Besides NewVerifier's checks it returns an
// error (never quoting key material) when MerchantKey is nil or under MinRSABits bits,
// MerchantSerial is not 1..128 printable ASCII characters, or BaseURL is not an absolute
// http(s) URL without path, query or fragment.
func NewClient(cfg ClientConfig) (*Client, error) {
	v, err := NewVerifier(cfg.Config)
	if err != nil {
		return nil, err
	}
	if cfg.MerchantKey == nil {
		return nil, errors.New("wechatpay: config: MerchantKey is required")
	}
	if err := checkRSAKey(&cfg.MerchantKey.PublicKey); err != nil {
		return nil, fmt.Errorf("wechatpay: config: MerchantKey: %w", err)
	}
	if cfg.MerchantSerial == "" || len(cfg.MerchantSerial) > maxSerialLen || !printable(cfg.MerchantSerial) {
		return nil, fmt.Errorf("wechatpay: config: MerchantSerial must be 1..%d printable ASCII characters", maxSerialLen)
	}
	base, err := origin.Parse(cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: config: BaseURL %w", err)
	}
	return &Client{
		v:       v,
		key:     cfg.MerchantKey,
		serial:  cfg.MerchantSerial,
		baseURL: base,
		http:    cmp.Or(cfg.HTTPClient, &http.Client{Timeout: DefaultTimeout}),
	}, nil
}

// JSAPIOrder is a JSAPI order ("JSAPI下单" request body). Money in fen.
type JSAPIOrder struct {
	Description string    // description: 1..127 bytes, shown to the buyer
	OutTradeNo  string    // out_trade_no: 6..32 of [0-9A-Za-z_-|*], unique per merchant
	TimeExpire  time.Time // time_expire: after it WeChat Pay refuses payment; sent as RFC 3339 at +08:00, whole seconds
	NotifyURL   string    // notify_url: absolute http(s) URL without query, at most 255 bytes
	Total       int64     // amount.total: fen, > 0
	Currency    string    // amount.currency: empty means CurrencyCNY
	PayerOpenID string    // payer.openid: the buyer's openid under the configured app id
	Attach      string    // attach: optional, at most 128 bytes, echoed back in queries and notifications
}

// JSAPIRequest is the JSON body of a "JSAPI下单" request, field for field as sent (amount
// in fen, time_expire RFC 3339). It is comparable: WeChat Pay's stand-in (paytest.Server)
// compares a re-order with ==.
type JSAPIRequest struct {
	AppID       string `json:"appid"`
	MchID       string `json:"mchid"`
	Description string `json:"description"`
	OutTradeNo  string `json:"out_trade_no"`
	TimeExpire  string `json:"time_expire"`
	Attach      string `json:"attach,omitempty"`
	NotifyURL   string `json:"notify_url"`
	Amount      struct {
		Total    int64  `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
	Payer struct {
		OpenID string `json:"openid"`
	} `json:"payer"`
}

// wire validates o and returns the request body; every error wraps ErrInvalidArgument.
func (o JSAPIOrder) wire(appID, mchID string) (*JSAPIRequest, error) {
	if err := CheckOutTradeNo(o.OutTradeNo); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: JSAPI order %s: %s", ErrInvalidArgument, o.OutTradeNo, fmt.Sprintf(format, args...))
	}
	switch {
	case o.Description == "" || len(o.Description) > maxDescriptionLen:
		return nil, bad("description must be 1..%d bytes", maxDescriptionLen)
	case o.TimeExpire.IsZero():
		return nil, bad("time_expire is required")
	case o.Total <= 0:
		return nil, bad("amount.total %d fen must be positive", o.Total)
	case o.Currency != "" && o.Currency != CurrencyCNY:
		return nil, bad("currency %q, want %s", truncate(o.Currency), CurrencyCNY)
	case o.PayerOpenID == "" || len(o.PayerOpenID) > maxOpenIDLen || !printable(o.PayerOpenID):
		return nil, bad("payer.openid must be 1..%d printable ASCII characters", maxOpenIDLen)
	case len(o.Attach) > maxAttachLen:
		return nil, bad("attach is longer than %d bytes", maxAttachLen)
	}
	if !validNotifyURL(o.NotifyURL, maxNotifyURLLen) {
		return nil, bad("notify_url must be an absolute http(s) URL of at most %d bytes without query", maxNotifyURLLen)
	}
	w := &JSAPIRequest{
		AppID:       appID,
		MchID:       mchID,
		Description: o.Description,
		OutTradeNo:  o.OutTradeNo,
		TimeExpire:  o.TimeExpire.In(beijing).Format(time.RFC3339),
		Attach:      o.Attach,
		NotifyURL:   o.NotifyURL,
	}
	w.Amount.Total = o.Total
	w.Amount.Currency = CurrencyCNY
	w.Payer.OpenID = o.PayerOpenID
	return w, nil
}

// validNotifyURL reports whether s is an absolute http(s) URL of at most limit bytes
// without query or fragment, as notify_url must be ("JSAPI下单", "申请退款").
func validNotifyURL(s string, limit int) bool {
	u, err := url.Parse(s)
	return err == nil && len(s) <= limit && (u.Scheme == "https" || u.Scheme == "http") &&
		u.Host != "" && u.RawQuery == "" && u.Fragment == ""
}

// beijing is the +08:00 offset WeChat Pay writes and expects times in.
var beijing = time.FixedZone("CST", 8*60*60)

// CheckOutTradeNo returns an error wrapping ErrInvalidArgument unless s is a valid
// out_trade_no: 6..32 characters of [0-9A-Za-z_-|*] ("JSAPI下单"). stockguard's order ids
// (docs/contract.md, "Conventions": 6–32 of [0-9A-Za-z_-]) always are.
func CheckOutTradeNo(s string) error {
	if len(s) < minOutTradeNoLen || len(s) > maxOutTradeNoLen {
		return fmt.Errorf("%w: out_trade_no must be %d..%d characters, got %d", ErrInvalidArgument, minOutTradeNoLen, maxOutTradeNoLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("_-|*", c) >= 0) {
			return fmt.Errorf("%w: out_trade_no may hold only [0-9A-Za-z_-|*]", ErrInvalidArgument)
		}
	}
	return nil
}

// PrepayJSAPI places a JSAPI order ("JSAPI下单": POST /v3/pay/transactions/jsapi) with the
// configured appid and mchid and returns its prepay_id (valid 2 hours at WeChat Pay). Placing
// the same out_trade_no again with the same parameters is how WeChat Pay expects a lost
// answer to be retried. Errors: ErrInvalidArgument (nothing sent); ErrUnavailable
// (unreachable, 5xx, 429; an *APIError unless the transport failed); ErrVerification (the
// answer's signature does not verify); *APIError for other 4xx, e.g. CodeOrderPaid,
// CodeOrderClosed, CodeOutTradeNoUsed; ErrMalformed (a verified 2xx body without a valid
// prepay_id).
func (c *Client) PrepayJSAPI(ctx context.Context, o JSAPIOrder) (string, error) {
	const op = "JSAPI下单"
	req, err := o.wire(c.v.appID, c.v.mchID)
	if err != nil {
		return "", err
	}
	body, err := c.do(ctx, op, http.MethodPost, PathJSAPI, req)
	if err != nil {
		return "", err
	}
	return decodePrepay(body)
}

// decodePrepay parses a verified "JSAPI下单" answer; every error wraps ErrMalformed.
func decodePrepay(body []byte) (string, error) {
	var w struct {
		PrepayID string `json:"prepay_id"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return "", fmt.Errorf("%w: JSAPI下单 answer is not a JSON object", ErrMalformed)
	}
	if w.PrepayID == "" || len(w.PrepayID) > maxPrepayIDLen || !printable(w.PrepayID) {
		return "", fmt.Errorf("%w: JSAPI下单 answer: prepay_id must be 1..%d printable ASCII characters", ErrMalformed, maxPrepayIDLen)
	}
	return w.PrepayID, nil
}

// QueryOrder asks for an order by out_trade_no ("查询订单", 商户订单号查询订单:
// GET /v3/pay/transactions/out-trade-no/{out_trade_no}?mchid=). The answer is checked as a
// notification's transaction is (see Transaction: the documented trade_state values,
// SUCCESS only with transaction_id, trade_type, success_time and a positive amount.total),
// then for this merchant (ErrMerchantMismatch) and for the out_trade_no asked (ErrMalformed).
// Errors as for PrepayJSAPI; an unknown order is an *APIError with CodeOrderNotExist
// (HTTP 404).
func (c *Client) QueryOrder(ctx context.Context, outTradeNo string) (*Transaction, error) {
	const op = "查询订单"
	if err := CheckOutTradeNo(outTradeNo); err != nil {
		return nil, err
	}
	path := PathOutTradeNo + url.PathEscape(outTradeNo) + "?mchid=" + url.QueryEscape(c.v.mchID)
	body, err := c.do(ctx, op, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	return c.decodeQuery(body, outTradeNo)
}

// decodeQuery parses and checks a verified "查询订单" answer.
func (c *Client) decodeQuery(body []byte, outTradeNo string) (*Transaction, error) {
	tx, err := decodeTransaction(body)
	if err != nil {
		return nil, err
	}
	if tx.MchID != c.v.mchID {
		return nil, fmt.Errorf("%w: 查询订单 answer: mchid %q, configured %q", ErrMerchantMismatch, truncate(tx.MchID), c.v.mchID)
	}
	if tx.AppID != c.v.appID {
		return nil, fmt.Errorf("%w: 查询订单 answer: appid %q, configured %q", ErrMerchantMismatch, truncate(tx.AppID), c.v.appID)
	}
	if tx.OutTradeNo != outTradeNo {
		return nil, fmt.Errorf("%w: 查询订单 answer: out_trade_no %q, asked %q", ErrMalformed, truncate(tx.OutTradeNo), outTradeNo)
	}
	return tx, nil
}

// CloseOrder closes an unpaid order ("关闭订单": POST
// /v3/pay/transactions/out-trade-no/{out_trade_no}/close, body {"mchid"}, answer 204), after
// which WeChat Pay refuses to take money for it. Errors as for PrepayJSAPI; closing a paid
// order is an *APIError with CodeOrderPaid. Query first: WeChat Pay's docs ask merchants to
// close only orders they know to be unpaid.
func (c *Client) CloseOrder(ctx context.Context, outTradeNo string) error {
	const op = "关闭订单"
	if err := CheckOutTradeNo(outTradeNo); err != nil {
		return err
	}
	req := struct {
		MchID string `json:"mchid"`
	}{c.v.mchID}
	_, err := c.do(ctx, op, http.MethodPost, PathOutTradeNo+url.PathEscape(outTradeNo)+closePathSuffix, req)
	return err
}

// PaymentParams are the arguments of wx.requestPayment for a prepay_id ("JSAPI调起支付"),
// with the JSON names POST /orders/{orderId}/pay answers (docs/contract.md).
type PaymentParams struct {
	TimeStamp string `json:"timeStamp"` // Unix seconds, decimal string
	NonceStr  string `json:"nonceStr"`  // random, 26 characters of [A-Z2-7]
	Package   string `json:"package"`   // "prepay_id=" + prepay_id
	SignType  string `json:"signType"`  // SignTypeRSA
	PaySign   string `json:"paySign"`   // base64 SHA256-RSA (PKCS #1 v1.5) over appId\ntimeStamp\nnonceStr\npackage\n
}

// PaymentParams signs the wx.requestPayment parameters for prepayID at now with the
// merchant key ("JSAPI调起支付": paySign over the configured appid, timeStamp, nonceStr and
// package, each followed by "\n"). Errors: ErrInvalidArgument for a prepayID that is not
// 1..64 printable ASCII characters; an error from the signer (crypto/rand failing).
func (c *Client) PaymentParams(prepayID string, now time.Time) (PaymentParams, error) {
	if prepayID == "" || len(prepayID) > maxPrepayIDLen || !printable(prepayID) {
		return PaymentParams{}, fmt.Errorf("%w: prepay_id must be 1..%d printable ASCII characters", ErrInvalidArgument, maxPrepayIDLen)
	}
	p := PaymentParams{
		TimeStamp: strconv.FormatInt(now.Unix(), 10),
		NonceStr:  rand.Text(),
		Package:   prepayPackagePrefix + prepayID,
		SignType:  SignTypeRSA,
	}
	sig, err := signMessage(c.key, c.v.appID, p.TimeStamp, p.NonceStr, p.Package)
	if err != nil {
		return PaymentParams{}, err
	}
	p.PaySign = sig
	return p, nil
}

// do sends one signed request and returns the verified body of a 2xx answer.
func (c *Client) do(ctx context.Context, op, method, uri string, reqBody any) ([]byte, error) {
	var payload []byte
	if reqBody != nil {
		var err error
		if payload, err = json.Marshal(reqBody); err != nil {
			return nil, fmt.Errorf("wechatpay: %s: encode request: %w", op, err)
		}
	}
	auth, err := c.authorization(method, uri, payload, c.v.now())
	if err != nil {
		return nil, fmt.Errorf("wechatpay: %s: %w", op, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+uri, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("wechatpay: %s: build request: %w", op, err)
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "stockguard")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, op, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: read answer: %w", ErrUnavailable, op, err)
	}
	return c.checkResponse(op, resp.StatusCode, resp.Header, body)
}

// checkResponse verifies an answer before reading it ("签名验证": the answer is signed like
// a notification, over Wechatpay-Timestamp\nWechatpay-Nonce\nbody\n) and returns the body
// of a 2xx answer. 5xx and 429 answers are not verified or parsed: they are retryable
// *APIErrors whatever they say. A 4xx answer is verified, then its code and message read.
func (c *Client) checkResponse(op string, status int, header http.Header, body []byte) ([]byte, error) {
	requestID := header.Get("Request-ID")
	if status >= 500 || status == http.StatusTooManyRequests {
		return nil, &APIError{Op: op, StatusCode: status, RequestID: requestID}
	}
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("%w: %s: answer longer than %d bytes", ErrMalformed, op, MaxBodyBytes)
	}
	h := Headers{
		Timestamp: header.Get(HeaderTimestamp),
		Nonce:     header.Get(HeaderNonce),
		Signature: header.Get(HeaderSignature),
		Serial:    header.Get(HeaderSerial),
	}
	if err := c.v.verify(h, body); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d answer (Request-ID %q): %w", op, status, requestID, err)
	}
	return readAnswer(op, status, requestID, body)
}

// readAnswer reads a verified answer: the body of a 2xx, an *APIError for a 4xx, and
// ErrMalformed for any other status.
func readAnswer(op string, status int, requestID string, body []byte) ([]byte, error) {
	switch {
	case status >= 200 && status < 300:
		return body, nil
	case status >= 400:
		e := &APIError{Op: op, StatusCode: status, RequestID: requestID}
		var w struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &w) == nil {
			e.Code, e.Message = truncate(w.Code), w.Message
		}
		return nil, e
	default:
		return nil, fmt.Errorf("%w: %s: unexpected HTTP status %d", ErrMalformed, op, status)
	}
}

// authorization returns the Authorization header of a request ("签名生成"): the merchant
// key's SHA256-RSA signature over method\nuri\ntimestamp\nnonce\nbody\n, uri being the
// absolute path with its query string.
func (c *Client) authorization(method, uri string, body []byte, now time.Time) (string, error) {
	a := Authorization{
		MchID:     c.v.mchID,
		Nonce:     rand.Text(),
		Timestamp: strconv.FormatInt(now.Unix(), 10),
		Serial:    c.serial,
	}
	sig, err := signMessage(c.key, method, uri, a.Timestamp, a.Nonce, string(body))
	if err != nil {
		return "", err
	}
	a.Signature = sig
	return a.String(), nil
}

// Authorization is the Authorization header of a merchant API request ("签名生成"):
//
//	WECHATPAY2-SHA256-RSA2048 mchid="…",nonce_str="…",signature="…",timestamp="…",serial_no="…"
type Authorization struct {
	MchID     string // mchid
	Nonce     string // nonce_str
	Signature string // signature: base64
	Timestamp string // timestamp: Unix seconds, decimal
	Serial    string // serial_no: merchant API certificate serial
}

// String renders the header value in the documented field order.
func (a Authorization) String() string {
	return fmt.Sprintf(`%s mchid="%s",nonce_str="%s",signature="%s",timestamp="%s",serial_no="%s"`,
		AuthorizationScheme, a.MchID, a.Nonce, a.Signature, a.Timestamp, a.Serial)
}

// ParseAuthorization reads an Authorization header value as String writes it (fields in
// any order, each exactly once, values quoted and printable ASCII). It is what the WeChat
// Pay side does with a request; the stand-in server uses it.
func ParseAuthorization(v string) (Authorization, error) {
	rest, ok := strings.CutPrefix(v, AuthorizationScheme+" ")
	if !ok {
		return Authorization{}, fmt.Errorf("%w: Authorization scheme is not %s", ErrVerification, AuthorizationScheme)
	}
	var a Authorization
	fields := map[string]*string{"mchid": &a.MchID, "nonce_str": &a.Nonce, "signature": &a.Signature, "timestamp": &a.Timestamp, "serial_no": &a.Serial}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(rest, ",") {
		name, quoted, ok := strings.Cut(part, "=")
		value, unq := strings.CutPrefix(quoted, `"`)
		value, unq2 := strings.CutSuffix(value, `"`)
		dst, known := fields[name]
		if !ok || !unq || !unq2 || !known || seen[name] || value == "" || len(value) > maxSignatureLen || !printable(value) || strings.Contains(value, `"`) {
			return Authorization{}, fmt.Errorf("%w: malformed Authorization field %q", ErrVerification, truncate(name))
		}
		seen[name] = true
		*dst = value
	}
	if len(seen) != len(fields) {
		return Authorization{}, fmt.Errorf("%w: Authorization lacks a field", ErrVerification)
	}
	return a, nil
}

// Verify checks a's signature over method\nuri\ntimestamp\nnonce\nbody\n with the
// merchant's public key ("签名生成", as WeChat Pay checks it). It does not check the
// timestamp, mchid or serial: the caller compares them with what it expects.
func (a Authorization) Verify(key *rsa.PublicKey, method, uri string, body []byte) error {
	sig, err := base64.StdEncoding.DecodeString(a.Signature)
	if err != nil {
		return fmt.Errorf("%w: Authorization signature is not base64", ErrVerification)
	}
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, digest(method, uri, a.Timestamp, a.Nonce, string(body)), sig); err != nil {
		return fmt.Errorf("%w: Authorization signature does not verify", ErrVerification)
	}
	return nil
}

// digest is SHA-256 over each line followed by "\n", the message shape of every WeChat Pay
// signature ("签名生成", "签名验证", "JSAPI调起支付").
func digest(lines ...string) []byte {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return h.Sum(nil)
}

// signMessage returns base64(SHA256-RSA PKCS #1 v1.5 over digest(lines...)).
func signMessage(key *rsa.PrivateKey, lines ...string) (string, error) {
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest(lines...))
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}
