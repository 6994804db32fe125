package closeorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// errNoWeChatPay: an order has a WeChat Pay order but closeOrder has no merchant client.
var errNoWeChatPay = errors.New("no WeChat Pay merchant client configured")

// settle asks WeChat Pay about order's JSAPI order before its release (DESIGN.md,
// Payment: "Before any release of an order that has a WeChat Pay order, query it").
// An order without a prepay_id has none: (false, nil). Paid (trade_state SUCCESS,
// the notification lost or late) → the payment is recorded through the same
// dynamo.Store.Pay the notify route uses, exactly once, and settle returns true. Not
// paid → the WeChat Pay order is closed, so it can never take money, and settle
// returns false: release it. A close that finds the order paid meanwhile
// (ORDERPAID) queries again. Any failure to learn the answer (WeChat Pay unreachable,
// 5xx, an answer that does not verify) is returned as an error and nothing is changed.
func (c *Closer) settle(ctx context.Context, order *inventory.Order) (bool, error) {
	if order.PrepayID == "" {
		return false, nil
	}
	if c.opts.WeChatPay == nil {
		return false, errNoWeChatPay
	}
	for range 2 { // a second round only after a close found the order paid
		tx, err := c.opts.WeChatPay.QueryOrder(ctx, order.ID)
		var apiErr *wechatpay.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Code == wechatpay.CodeOrderNotExist:
			return false, nil // never reached WeChat Pay: nothing can be paid
		case err != nil:
			return false, fmt.Errorf("query WeChat Pay order %s: %w", order.ID, err)
		case tx.TradeState == wechatpay.TradeStateSuccess:
			return true, c.commit(ctx, tx)
		case tx.TradeState == wechatpay.TradeStateClosed:
			return false, nil
		}
		err = c.opts.WeChatPay.CloseOrder(ctx, order.ID)
		switch {
		case err == nil, errors.As(err, &apiErr) && apiErr.Code == wechatpay.CodeOrderClosed:
			return false, nil // closed, by this call or a racing one
		case !errors.As(err, &apiErr) || apiErr.Code != wechatpay.CodeOrderPaid:
			return false, fmt.Errorf("close WeChat Pay order %s: %w", order.ID, err)
		}
	}
	return false, fmt.Errorf("WeChat Pay order %s: closed as paid but not queried as paid", order.ID)
}

// commit records a payment that a query found (payCallback's path: dynamo.Store.Pay).
func (c *Closer) commit(ctx context.Context, tx *wechatpay.Transaction) error {
	_, result, err := c.store.Pay(ctx, inventory.Payment{
		OrderID: tx.OutTradeNo, TransactionID: tx.TransactionID,
		Amount: tx.Amount.Total, Currency: tx.Amount.Currency, PaidAt: tx.SuccessTime,
	})
	if errors.Is(err, inventory.ErrPaidTwice) {
		c.log.LogAttrs(ctx, slog.LevelError, "second payment for a paid order: refund it", slog.String("outTradeNo", tx.OutTradeNo), slog.String("error", err.Error()))
		return nil
	}
	if err != nil {
		return fmt.Errorf("record payment of %s found by query: %w", tx.OutTradeNo, err)
	}
	level := slog.LevelInfo
	if result == inventory.RefundDue {
		level = slog.LevelError
	}
	c.log.LogAttrs(ctx, level, "payment found by query before release", slog.String("outTradeNo", tx.OutTradeNo),
		slog.String("transactionId", tx.TransactionID), slog.String("result", result.String()))
	metric.Emit(ctx, c.log, FunctionName, metric.PaidByQuery.Of(1))
	return nil
}
