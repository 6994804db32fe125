package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Checker asks WeChat Pay about an order before its stock is released (docs/design.md,
// "Payment": "Before any release of an order that has a WeChat Pay order, query it").
type Checker struct {
	merchant Merchant
	rec      *Recorder
	log      *slog.Logger
	function string
}

// NewChecker returns a Checker asking merchant (nil: an order with a WeChat Pay order
// cannot be checked), recording payments it finds with rec, logging to log with
// function (the serving function's short name) as the Function dimension of its
// metrics.
func NewChecker(merchant Merchant, rec *Recorder, log *slog.Logger, function string) *Checker {
	return &Checker{merchant: merchant, rec: rec, log: log, function: function}
}

// BeforeRelease asks WeChat Pay about order's JSAPI order before its release, by the
// trade_state its query answers (WeChat Pay APIv3 docs, 查询订单: trade_state; 关闭订单).
// An order without a prepay_id has none: (false, nil).
//   - SUCCESS (paid; the notification lost or late) → the payment is recorded by the
//     Recorder, exactly once whoever else records it, and BeforeRelease returns true:
//     do not release.
//   - REFUND (转入退款: paid, then some or all of it refunded — never by stockguard, whose
//     refunds only follow a recorded payment) → paid all the same: the payment is
//     recorded (committed, never resold), the refund made outside stockguard is logged
//     at ERROR and counted (RefundedOutside: the merchant settles it), and true.
//   - CLOSED, REVOKED → never paid and never payable: false, release it.
//   - NOTPAY, USERPAYING, PAYERROR → not paid: the WeChat Pay order is closed, so it can
//     never take money, and false. A close answering ORDERPAID (paid meanwhile) queries
//     again.
//
// Any failure to learn the answer (WeChat Pay unreachable, 5xx, an answer that does
// not verify) is returned as an error and nothing is changed; true with an error is a
// payment found and not recorded (retry, never release).
func (c *Checker) BeforeRelease(ctx context.Context, order *inventory.Order) (bool, error) {
	if order.PrepayID == "" {
		return false, nil
	}
	if c.merchant == nil {
		return false, errNoWeChatPay
	}
	for range 2 { // a second round only after a close found the order paid
		tx, err := c.merchant.QueryOrder(ctx, order.ID)
		var apiErr *wechatpay.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Code == wechatpay.CodeOrderNotExist:
			return false, nil // never reached WeChat Pay: nothing can be paid
		case err != nil:
			return false, fmt.Errorf("query WeChat Pay order %s: %w", order.ID, err)
		case tx.TradeState == wechatpay.TradeStateSuccess, tx.TradeState == wechatpay.TradeStateRefund:
			return true, c.record(ctx, tx)
		case tx.TradeState == wechatpay.TradeStateClosed, tx.TradeState == wechatpay.TradeStateRevoked:
			return false, nil
		}
		err = c.merchant.CloseOrder(ctx, order.ID)
		switch {
		case err == nil, errors.As(err, &apiErr) && apiErr.Code == wechatpay.CodeOrderClosed:
			return false, nil // closed, by this call or a racing one
		case !errors.As(err, &apiErr) || apiErr.Code != wechatpay.CodeOrderPaid:
			return false, fmt.Errorf("close WeChat Pay order %s: %w", order.ID, err)
		}
	}
	return false, fmt.Errorf("WeChat Pay order %s: closed as paid but not queried as paid", order.ID)
}

// record records a payment that a query found, as the notification would have.
func (c *Checker) record(ctx context.Context, tx *wechatpay.Transaction) error {
	rec, err := c.rec.Record(ctx, paymentOf(tx))
	if err != nil {
		return fmt.Errorf("record payment of %s found by query: %w", tx.OutTradeNo, err)
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "payment found by query before release", slog.String("outTradeNo", tx.OutTradeNo),
		slog.String("transactionId", tx.TransactionID), slog.String("tradeState", string(tx.TradeState)), slog.String("result", resultName(rec)))
	metric.Emit(ctx, c.log, c.function, metric.PaidByQuery.Of(1))
	if tx.TradeState == wechatpay.TradeStateRefund {
		c.log.LogAttrs(ctx, slog.LevelError, "payment refunded outside stockguard: recorded as paid, the merchant settles the refund",
			slog.String("outTradeNo", tx.OutTradeNo), slog.String("transactionId", tx.TransactionID), slog.Int64("amount", tx.Amount.Total))
		metric.Emit(ctx, c.log, c.function, metric.RefundedOutside.Of(1))
	}
	return nil
}

// resultName names what recording a payment did, for logs.
func resultName(rec Recorded) string {
	if rec.Twice {
		return "PAID_TWICE"
	}
	return rec.Result.String()
}
