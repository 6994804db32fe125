package wxapi

// Message push (消息推送): the requests WeChat sends to the URL configured in the
// mini-program admin (开发管理 → 开发设置 → 消息推送), and the one event stockguard
// reads from them, trade_manage_order_settlement.
//
// Pages relied on:
//   - "消息推送" (server configuration, URL check, signature, 明文/兼容/安全模式, JSON or XML,
//     the answer "success"): https://developers.weixin.qq.com/miniprogram/dev/framework/server-ability/message-push.html
//   - "小程序发货信息管理服务", 九、相关消息推送 (trade_manage_order_settlement, "订单将要结算或
//     已经结算", pushed "订单完成发货时/订单结算时"; its fields, confirm_receive_method "1. 自动
//     确认收货；2. 手动确认收货。结算时推送才有该字段"):
//     https://developers.weixin.qq.com/miniprogram/dev/platform-capabilities/business-capabilities/order-shipping/order-shipping.html
//
// One developer reports receiving 1 for a buyer's confirmation and 2 for an automatic
// one (https://developers.weixin.qq.com/community/develop/doc/00082c49688a8053f18fb31c45b800,
// unanswered by WeChat's staff); the documented numbers are the ones read here.

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Push event names ("小程序发货信息管理服务", 九、相关消息推送).
const (
	// EventOrderSettlement is trade_manage_order_settlement: sent when an order's
	// shipping is complete (with estimated_settlement_time) and again when it is
	// settled (with confirm_receive_method, confirm_receive_time, settlement_time).
	EventOrderSettlement = "trade_manage_order_settlement"
	// MsgTypeEvent is MsgType of every event push.
	MsgTypeEvent = "event"
)

// ConfirmMethod is confirm_receive_method: how the receipt was confirmed.
type ConfirmMethod int

// Confirm methods, as "小程序发货信息管理服务" numbers them.
const (
	ConfirmAuto   ConfirmMethod = 1 // 自动确认收货
	ConfirmManual ConfirmMethod = 2 // 手动确认收货: the buyer, in the confirm-receipt component
)

// PushSuccess is the answer to a push handled (or deliberately ignored): "消息推送"
// asks for "success" (or an empty body), after which WeChat does not send it again.
const PushSuccess = "success"

// MaxPushSkew is how far the timestamp of a push may be from now, either way. "消息推送"
// sets no window; five minutes is the one WeChat Pay gives its notifications, and
// WeChat retries an unanswered push within seconds.
const MaxPushSkew = 5 * time.Minute

// Errors of VerifyPush and ParsePush.
var (
	// ErrPushSignature: the signature is missing or not the token's, or the timestamp
	// is missing, malformed or further than MaxPushSkew from now. Answer 401.
	ErrPushSignature = errors.New("wxapi: message push not signed with the token")
	// ErrPushMalformed: the body is neither a JSON nor an XML push. Answer 400.
	ErrPushMalformed = errors.New("wxapi: malformed message push")
	// ErrPushEncrypted: the push carries only an encrypted body (安全模式), which
	// stockguard does not decrypt: configure 明文模式 or 兼容模式. Answer 400.
	ErrPushEncrypted = errors.New("wxapi: encrypted message push (安全模式) not supported")
)

// PushSignature is the signature of a push: the SHA-1, in lower-case hex, of token,
// timestamp and nonce sorted in byte order and joined ("消息推送": "将token、timestamp、
// nonce三个参数进行字典序排序 … 拼接成一个字符串进行sha1加密").
func PushSignature(token, timestamp, nonce string) string {
	parts := []string{token, timestamp, nonce}
	sort.Strings(parts)
	sum := sha1.Sum([]byte(strings.Join(parts, "")))
	return hex.EncodeToString(sum[:])
}

// PushQuery is what the query string of a push (and of the URL check) carries.
type PushQuery struct {
	Signature, Timestamp, Nonce string
	// Echostr is the URL check's random string, answered as it is once verified.
	Echostr string
}

// VerifyPush checks q against token at now: the signature PushSignature makes (in
// constant time), a timestamp of decimal Unix seconds within MaxPushSkew of now.
// An empty token verifies nothing. Errors: ErrPushSignature.
func VerifyPush(token string, q PushQuery, now time.Time) error {
	if token == "" || q.Signature == "" || q.Nonce == "" {
		return fmt.Errorf("%w: token, signature or nonce missing", ErrPushSignature)
	}
	want := PushSignature(token, q.Timestamp, q.Nonce)
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(q.Signature)), []byte(want)) != 1 {
		return fmt.Errorf("%w: signature mismatch", ErrPushSignature)
	}
	sec, err := strconv.ParseInt(q.Timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp is not Unix seconds", ErrPushSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxPushSkew || d < -MaxPushSkew {
		return fmt.Errorf("%w: timestamp %s from now", ErrPushSignature, d.Round(time.Second))
	}
	return nil
}

// Push is a message push as ParsePush reads it: the common fields and those of
// trade_manage_order_settlement (zero for other events). Times are Unix seconds, 0
// when absent.
type Push struct {
	ToUserName   string `json:"ToUserName" xml:"ToUserName"`     // the mini-program's original id
	FromUserName string `json:"FromUserName" xml:"FromUserName"` // the sender: a system account for events
	CreateTime   int64  `json:"CreateTime" xml:"CreateTime"`
	MsgType      string `json:"MsgType" xml:"MsgType"`
	Event        string `json:"Event" xml:"Event"`
	// Encrypt is the encrypted body (兼容模式 and 安全模式); not decrypted.
	Encrypt string `json:"Encrypt" xml:"Encrypt"`

	TransactionID           string        `json:"transaction_id" xml:"transaction_id"`       // 支付订单号
	MerchantID              string        `json:"merchant_id" xml:"merchant_id"`             // 商户号
	SubMerchantID           string        `json:"sub_merchant_id" xml:"sub_merchant_id"`     // 子商户号
	MerchantTradeNo         string        `json:"merchant_trade_no" xml:"merchant_trade_no"` // 商户订单号: out_trade_no
	PayTime                 int64         `json:"pay_time" xml:"pay_time"`
	ShippedTime             int64         `json:"shipped_time" xml:"shipped_time"`
	EstimatedSettlementTime int64         `json:"estimated_settlement_time" xml:"estimated_settlement_time"` // pushed at shipping only
	ConfirmReceiveMethod    ConfirmMethod `json:"confirm_receive_method" xml:"confirm_receive_method"`       // pushed at settlement only
	ConfirmReceiveTime      int64         `json:"confirm_receive_time" xml:"confirm_receive_time"`           // pushed at settlement only
	SettlementTime          int64         `json:"settlement_time" xml:"settlement_time"`                     // pushed at settlement only
}

// Confirmed reports whether p is a settlement push saying the receipt was confirmed
// (trade_manage_order_settlement with confirm_receive_time), not the one sent when
// shipping completed.
func (p *Push) Confirmed() bool {
	return p.MsgType == MsgTypeEvent && p.Event == EventOrderSettlement && p.ConfirmReceiveTime > 0
}

// ParsePush reads a push body in either data format "消息推送" offers (JSON or XML,
// told apart by the first character), in 明文模式 or 兼容模式 (where the plain fields
// sit beside Encrypt). Unknown fields are ignored: WeChat adds fields to events.
// Errors: ErrPushMalformed, ErrPushEncrypted (a body of Encrypt alone, 安全模式).
func ParsePush(body []byte) (*Push, error) {
	body = bytes.TrimSpace(body)
	var p Push
	var err error
	switch {
	case len(body) > 0 && body[0] == '{':
		err = json.Unmarshal(body, &p)
	case len(body) > 0 && body[0] == '<':
		err = xml.Unmarshal(body, &p)
	default:
		err = errors.New("neither JSON nor XML")
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrPushMalformed, err)
	case p.MsgType == "" && p.Encrypt != "":
		return nil, ErrPushEncrypted
	case p.MsgType == "":
		return nil, fmt.Errorf("%w: no MsgType", ErrPushMalformed)
	}
	return &p, nil
}
