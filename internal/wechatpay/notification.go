package wechatpay

import (
	"encoding/json"
	"fmt"
	"time"
)

// Envelope and resource values from the WeChat Pay APIv3 docs ("支付成功回调通知",
// "证书和回调报文解密").
const (
	// EventTransactionSuccess is the event_type of a payment-success notification, the only
	// payment event the docs define. Parse rejects it paired with a trade_state other than
	// SUCCESS (ErrMalformed) and passes other event types through for the caller to refuse.
	EventTransactionSuccess = "TRANSACTION.SUCCESS"

	// ResourceTypeEncrypted is the only resource_type Parse accepts.
	ResourceTypeEncrypted = "encrypt-resource"

	// OriginalTypeTransaction is the only resource.original_type Parse accepts.
	OriginalTypeTransaction = "transaction"

	// AlgorithmAEADAES256GCM is the only resource.algorithm Parse accepts: AES-256-GCM,
	// 12-byte nonce, 16-byte tag appended to the ciphertext (RFC 5116).
	AlgorithmAEADAES256GCM = "AEAD_AES_256_GCM"
)

// TradeState is a transaction's trade_state ("支付成功回调通知", 交易状态).
type TradeState string

// The trade_state values the docs list; Parse rejects any other (ErrMalformed).
const (
	TradeStateSuccess    TradeState = "SUCCESS"    // 支付成功
	TradeStateRefund     TradeState = "REFUND"     // 转入退款
	TradeStateNotPay     TradeState = "NOTPAY"     // 未支付
	TradeStateClosed     TradeState = "CLOSED"     // 已关闭
	TradeStateRevoked    TradeState = "REVOKED"    // 已撤销（付款码支付）
	TradeStateUserPaying TradeState = "USERPAYING" // 用户支付中（付款码支付）
	TradeStatePayError   TradeState = "PAYERROR"   // 支付失败
)

// Known reports whether s is one of the trade_state values WeChat Pay documents
// (TradeStateSuccess … TradeStatePayError).
func (s TradeState) Known() bool {
	switch s {
	case TradeStateSuccess, TradeStateRefund, TradeStateNotPay, TradeStateClosed,
		TradeStateRevoked, TradeStateUserPaying, TradeStatePayError:
		return true
	}
	return false
}

// Envelope is the verified envelope of a notification of any kind, the fields of the body
// around the encrypted resource ("支付成功回调通知", "退款结果通知": 通知参数).
type Envelope struct {
	ID           string    // id: unique notification id; replays of one notification share it
	CreateTime   time.Time // create_time: when WeChat Pay created the notification (RFC 3339, +08:00)
	EventType    string    // event_type, e.g. EventTransactionSuccess or EventRefundSuccess
	ResourceType string    // resource_type: always ResourceTypeEncrypted
	Summary      string    // summary: human-readable, e.g. "支付成功", "退款成功"
}

// Notification is a verified payment notification: the envelope fields of the body and the
// decrypted resource ("支付成功回调通知").
type Notification struct {
	Envelope
	Transaction *Transaction
}

// Transaction is the decrypted resource of a payment notification (original_type
// "transaction"). Parse guarantees: MchID, AppID and OutTradeNo are non-empty; TradeState is
// one of the documented values; amounts are non-negative; and when TradeState is SUCCESS,
// TransactionID and TradeType are non-empty, SuccessTime is set and Amount.Total > 0.
// Currency is passed through unchecked: comparing it (and Total) with the order is the
// caller's job.
type Transaction struct {
	AppID          string     // appid: the app the payment was made in
	MchID          string     // mchid: the merchant id
	OutTradeNo     string     // out_trade_no: the merchant's order number, as sent when ordering
	TransactionID  string     // transaction_id: WeChat Pay's order number
	TradeType      string     // trade_type: JSAPI, NATIVE, APP, MICROPAY, MWEB, FACEPAY
	TradeState     TradeState // trade_state
	TradeStateDesc string     // trade_state_desc: human-readable
	BankType       string     // bank_type, e.g. "CMC"
	Attach         string     // attach: merchant data echoed back, as sent when ordering
	SuccessTime    time.Time  // success_time (RFC 3339, +08:00); zero when absent
	Payer          Payer      // payer
	Amount         Amount     // amount
}

// Payer identifies who paid.
type Payer struct {
	OpenID string // payer.openid: the user's openid under AppID
}

// Amount is a transaction's money, in fen (1/100 yuan).
type Amount struct {
	Total         int64  // amount.total: order amount, fen
	PayerTotal    int64  // amount.payer_total: what the user paid after discounts, fen
	Currency      string // amount.currency: "CNY"
	PayerCurrency string // amount.payer_currency: "CNY"
}

// wireEnvelope is the notification body; wireResource its encrypted resource.
type wireEnvelope struct {
	ID           string        `json:"id"`
	CreateTime   string        `json:"create_time"`
	ResourceType string        `json:"resource_type"`
	EventType    string        `json:"event_type"`
	Summary      string        `json:"summary"`
	Resource     *wireResource `json:"resource"`

	createTime time.Time
}

type wireResource struct {
	OriginalType   string `json:"original_type"`
	Algorithm      string `json:"algorithm"`
	Ciphertext     string `json:"ciphertext"`
	AssociatedData string `json:"associated_data"`
	Nonce          string `json:"nonce"`
}

type wireTransaction struct {
	AppID          string `json:"appid"`
	MchID          string `json:"mchid"`
	OutTradeNo     string `json:"out_trade_no"`
	TransactionID  string `json:"transaction_id"`
	TradeType      string `json:"trade_type"`
	TradeState     string `json:"trade_state"`
	TradeStateDesc string `json:"trade_state_desc"`
	BankType       string `json:"bank_type"`
	Attach         string `json:"attach"`
	SuccessTime    string `json:"success_time"`
	Payer          *struct {
		OpenID string `json:"openid"`
	} `json:"payer"`
	Amount *struct {
		Total         *int64 `json:"total"`
		PayerTotal    *int64 `json:"payer_total"`
		Currency      string `json:"currency"`
		PayerCurrency string `json:"payer_currency"`
	} `json:"amount"`
}

func (e *wireEnvelope) envelope() Envelope {
	return Envelope{ID: e.ID, CreateTime: e.createTime, EventType: e.EventType, ResourceType: e.ResourceType, Summary: e.Summary}
}

func (tx *Transaction) merchant() string { return tx.MchID }

// decodeEnvelope parses a verified body; every error wraps ErrMalformed.
func decodeEnvelope(body []byte) (*wireEnvelope, error) {
	var env wireEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("%w: body is not a notification JSON object: %w", ErrMalformed, err)
	}
	switch {
	case env.ID == "":
		return nil, fmt.Errorf("%w: missing id", ErrMalformed)
	case env.EventType == "":
		return nil, fmt.Errorf("%w: missing event_type", ErrMalformed)
	case env.ResourceType != ResourceTypeEncrypted:
		return nil, fmt.Errorf("%w: resource_type %q, want %s", ErrMalformed, truncate(env.ResourceType), ResourceTypeEncrypted)
	case env.Resource == nil:
		return nil, fmt.Errorf("%w: missing resource", ErrMalformed)
	}
	t, err := time.Parse(time.RFC3339, env.CreateTime)
	if err != nil {
		return nil, fmt.Errorf("%w: create_time %q is not RFC 3339", ErrMalformed, truncate(env.CreateTime))
	}
	env.createTime = t
	return &env, nil
}

// decodeTransaction parses and checks decrypted transaction JSON; every error wraps
// ErrMalformed. Messages name fields, never plaintext values beyond enum-like ones.
func decodeTransaction(plaintext []byte) (*Transaction, error) {
	var w wireTransaction
	if err := json.Unmarshal(plaintext, &w); err != nil {
		return nil, fmt.Errorf("%w: decrypted resource is not transaction JSON", ErrMalformed)
	}
	tx := &Transaction{
		AppID:          w.AppID,
		MchID:          w.MchID,
		OutTradeNo:     w.OutTradeNo,
		TransactionID:  w.TransactionID,
		TradeType:      w.TradeType,
		TradeState:     TradeState(w.TradeState),
		TradeStateDesc: w.TradeStateDesc,
		BankType:       w.BankType,
		Attach:         w.Attach,
	}
	if err := checkIdentity(tx, w.TradeState); err != nil {
		return nil, err
	}
	if w.SuccessTime != "" {
		t, err := time.Parse(time.RFC3339, w.SuccessTime)
		if err != nil {
			return nil, fmt.Errorf("%w: transaction: success_time is not RFC 3339", ErrMalformed)
		}
		tx.SuccessTime = t
	}
	if w.Payer != nil {
		tx.Payer.OpenID = w.Payer.OpenID
	}
	hasTotal := w.Amount != nil && w.Amount.Total != nil
	if a := w.Amount; a != nil {
		tx.Amount = Amount{Total: deref(a.Total), PayerTotal: deref(a.PayerTotal), Currency: a.Currency, PayerCurrency: a.PayerCurrency}
	}
	if tx.Amount.Total < 0 || tx.Amount.PayerTotal < 0 {
		return nil, fmt.Errorf("%w: transaction: negative amount", ErrMalformed)
	}
	if err := checkSuccess(tx, hasTotal); err != nil {
		return nil, err
	}
	return tx, nil
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// checkIdentity requires what names a transaction: appid, mchid, out_trade_no and a
// known trade_state (rawState as sent, for the message).
func checkIdentity(tx *Transaction, rawState string) error {
	switch {
	case tx.AppID == "":
		return fmt.Errorf("%w: transaction: missing appid", ErrMalformed)
	case tx.MchID == "":
		return fmt.Errorf("%w: transaction: missing mchid", ErrMalformed)
	case tx.OutTradeNo == "":
		return fmt.Errorf("%w: transaction: missing out_trade_no", ErrMalformed)
	case !tx.TradeState.Known():
		return fmt.Errorf("%w: transaction: unknown trade_state %q", ErrMalformed, truncate(rawState))
	}
	return nil
}

// checkSuccess requires what a SUCCESS transaction must carry: transaction_id,
// trade_type, success_time and a positive amount.total (hasTotal: it was sent).
func checkSuccess(tx *Transaction, hasTotal bool) error {
	if tx.TradeState != TradeStateSuccess {
		return nil
	}
	switch {
	case tx.TransactionID == "":
		return fmt.Errorf("%w: transaction: SUCCESS without transaction_id", ErrMalformed)
	case tx.TradeType == "":
		return fmt.Errorf("%w: transaction: SUCCESS without trade_type", ErrMalformed)
	case tx.SuccessTime.IsZero():
		return fmt.Errorf("%w: transaction: SUCCESS without success_time", ErrMalformed)
	case !hasTotal || tx.Amount.Total == 0:
		return fmt.Errorf("%w: transaction: SUCCESS without a positive amount.total", ErrMalformed)
	}
	return nil
}
