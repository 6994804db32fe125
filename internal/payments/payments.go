// Package payments is money coming in (docs/design.md, "Payment"): starting a
// payment (POST /orders/{orderId}/pay: the WeChat Pay JSAPI order and the
// wx.requestPayment parameters), recording a successful payment exactly once whoever
// learns of it (Recorder: WeChat Pay's notification on POST /payments/wechatpay/notify,
// or a query before a release), and asking WeChat Pay about an order before its stock
// is released (Checker). Its adapters: Start and Notify (HTTP routes); Checker is what
// package orders asks before a release.
//
// What it needs of others is declared here, small: the store's orders and payments
// (Orders, Payments), WeChat Pay's merchant API (Merchant) and notification verifier
// (Verifier), and the refunds a payment may owe (Refunds, package refunds' Starter).
package payments

import (
	"context"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Orders is what starting a payment needs of the store (dynamo.Store): the caller's
// order, and its prepay_id stored while it is PENDING.
type Orders interface {
	Order(ctx context.Context, userID, id string) (*inventory.Order, error)
	SetPrepay(ctx context.Context, order *inventory.Order, prepayID string, at time.Time) error
}

// Payments is where a payment is recorded exactly once (dynamo.Store.Pay).
type Payments interface {
	Pay(ctx context.Context, p inventory.Payment) (*inventory.Order, inventory.PayResult, error)
}

// Merchant is the part of WeChat Pay's merchant API payments use
// (wechatpay.RotatingClient): JSAPI ordering, the wx.requestPayment parameters, query
// and close (WeChat Pay APIv3 docs: JSAPI下单, 查询订单, 关闭订单).
type Merchant interface {
	PrepayJSAPI(ctx context.Context, o wechatpay.JSAPIOrder) (string, error)
	PaymentParams(ctx context.Context, prepayID string, now time.Time) (wechatpay.PaymentParams, error)
	QueryOrder(ctx context.Context, outTradeNo string) (*wechatpay.Transaction, error)
	CloseOrder(ctx context.Context, outTradeNo string) error
}

// Verifier verifies and decrypts payment notifications (wechatpay.RotatingVerifier).
type Verifier interface {
	Parse(ctx context.Context, h wechatpay.Headers, body []byte) (*wechatpay.Notification, error)
}

// Refunds begins the refunds a payment owes, with no person involved (refunds.Starter):
// an order paid with no stock left (REFUND_PENDING), and a second payment of a paid
// order.
type Refunds interface {
	Order(ctx context.Context, order *inventory.Order, r inventory.RefundRequest, window time.Duration) (*inventory.Order, error)
	SecondPayment(ctx context.Context, p inventory.Payment) (*inventory.Refund, error)
}

// paymentOf is the payment a WeChat Pay transaction stands for.
func paymentOf(tx *wechatpay.Transaction) inventory.Payment {
	return inventory.Payment{
		OrderID: tx.OutTradeNo, TransactionID: tx.TransactionID,
		Amount: tx.Amount.Total, Currency: tx.Amount.Currency, PaidAt: tx.SuccessTime,
	}
}
