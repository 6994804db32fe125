package wxapitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"

	"github.com/stockguard/stockguard/internal/wxapi"
)

// ErrNotConfirmable: the stand-in cannot confirm the receipt of that payment, as WeChat
// would not: unknown, refunded in full, or no shipping uploaded for it (the confirm-
// receipt component confirms shipped orders; "小程序发货信息管理服务").
var ErrNotConfirmable = errors.New("wxapitest: no shipped payment to confirm")

// ConfirmReceipt plays the receipt of the payment whose transaction_id or out_trade_no
// is orderID being confirmed, at the stand-in's clock: by the buyer in WeChat's
// confirm-receipt component (wxapi.ConfirmManual) or by WeChat once the period passed
// (wxapi.ConfirmAuto); and returns the trade_manage_order_settlement push WeChat then
// sends to the message push URL, its fields as "小程序发货信息管理服务", 九、相关消息推送 lists
// them (settled at once: the stand-in holds no money back). A payment is confirmed
// once: later calls return the first push again (WeChat pushes it again until it is
// acknowledged). Errors: ErrNotConfirmable.
func (s *Server) ConfirmReceipt(orderID string, method wxapi.ConfirmMethod) (wxapi.Push, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID(orderID)
	switch {
	case p == nil || p.Refunded || len(p.uploads) == 0:
		return wxapi.Push{}, fmt.Errorf("%w: %s", ErrNotConfirmable, orderID)
	case p.settled != nil:
		return *p.settled, nil
	}
	now := s.now().Unix()
	push := wxapi.Push{
		ToUserName: "gh_" + s.appID, FromUserName: "o4_t144jTUSEoxydysUA2E234_tc", CreateTime: now,
		MsgType: wxapi.MsgTypeEvent, Event: wxapi.EventOrderSettlement,
		TransactionID: p.TransactionID, MerchantID: p.MchID, MerchantTradeNo: p.OutTradeNo,
		PayTime: p.PaidAt.Unix(), ShippedTime: p.lastAt.Unix(),
		ConfirmReceiveMethod: method, ConfirmReceiveTime: now, SettlementTime: now,
	}
	p.settled = &push
	return push, nil
}

// SignPush is the request WeChat sends for push (any event; ConfirmReceipt's for a
// settlement) to a message push URL configured with token, at now, in 明文模式 with
// the JSON data format ("消息推送"): the query string (signature, timestamp, nonce;
// signature = wxapi.PushSignature) and the body.
func SignPush(token string, push wxapi.Push, now time.Time) (url.Values, []byte) {
	body, _ := json.Marshal(newPushJSON(push)) // a plain struct: always encodes
	ts, nonce := strconv.FormatInt(now.Unix(), 10), strconv.FormatUint(uint64(rand.Uint32()), 10)
	return url.Values{"signature": {wxapi.PushSignature(token, ts, nonce)}, "timestamp": {ts}, "nonce": {nonce}}, body
}

// pushJSON is a push as WeChat writes it in 明文模式: the common fields and those of
// the event (a settlement's fields each only in the push that carries it), without
// the Encrypt of the other modes.
type pushJSON struct {
	ToUserName              string `json:"ToUserName"`
	FromUserName            string `json:"FromUserName"`
	CreateTime              int64  `json:"CreateTime"`
	MsgType                 string `json:"MsgType"`
	Event                   string `json:"Event,omitempty"`
	TransactionID           string `json:"transaction_id,omitempty"`
	MerchantID              string `json:"merchant_id,omitempty"`
	SubMerchantID           string `json:"sub_merchant_id,omitempty"`
	MerchantTradeNo         string `json:"merchant_trade_no,omitempty"`
	PayTime                 int64  `json:"pay_time,omitempty"`
	ShippedTime             int64  `json:"shipped_time,omitempty"`
	EstimatedSettlementTime int64  `json:"estimated_settlement_time,omitempty"` // the push at shipping only
	ConfirmReceiveMethod    int    `json:"confirm_receive_method,omitempty"`    // the push at settlement only
	ConfirmReceiveTime      int64  `json:"confirm_receive_time,omitempty"`
	SettlementTime          int64  `json:"settlement_time,omitempty"`
}

func newPushJSON(p wxapi.Push) pushJSON {
	return pushJSON{p.ToUserName, p.FromUserName, p.CreateTime, p.MsgType, p.Event, p.TransactionID, p.MerchantID,
		p.SubMerchantID, p.MerchantTradeNo, p.PayTime, p.ShippedTime, p.EstimatedSettlementTime, int(p.ConfirmReceiveMethod), p.ConfirmReceiveTime, p.SettlementTime}
}
