package inventory

import (
	"errors"
	"fmt"
	"time"
)

// ErrOtherPayment: a settlement names a payment (transaction_id) that is not the
// order's own (a second payment of it, or an order never paid); nothing is recorded.
var ErrOtherPayment = errors.New("settlement names another payment than the order's")

// ErrNothingShipped: a settlement names an order with no shipment recorded; WeChat's
// confirm-receipt component confirms only shipped orders, so nothing is recorded.
var ErrNothingShipped = errors.New("settlement of an order with no shipment recorded")

// Confirm receipt (确认收货): the buyer confirms in WeChat's own confirm-receipt
// component (小程序发货信息管理服务, "小程序确认收货组件"), or WeChat confirms by itself
// once the confirmation period is over; WeChat then pushes trade_manage_order_settlement
// to the mini-program's message endpoint, which records it on the order through the
// one transition path (Order.ConfirmReceipt; docs/design.md, "Confirm receipt").

// ReceiptStatus is where the buyer's receipt of an order's parcels stands.
type ReceiptStatus string

// Receipt statuses (docs/contract.md, "GET /orders/{orderId}": receipt).
const (
	// ReceiptWaiting: something was shipped and WeChat has not reported a confirmation.
	ReceiptWaiting ReceiptStatus = "WAITING"
	// ReceiptConfirmed: WeChat reported the receipt confirmed (by the buyer, or
	// automatically).
	ReceiptConfirmed ReceiptStatus = "CONFIRMED"
)

// ReceiptMethod says who confirmed the receipt, in the contract's words; WeChat's
// confirm_receive_method numbers are package wxapi's.
type ReceiptMethod string

// Receipt methods.
const (
	ReceiptByBuyer ReceiptMethod = "buyer" // 手动确认收货: the buyer, in WeChat's component
	ReceiptAuto    ReceiptMethod = "auto"  // 自动确认收货: WeChat, once the period passed
	// ReceiptUnknown: WeChat named a method its pages do not list; the receipt is
	// recorded all the same, without a method.
	ReceiptUnknown ReceiptMethod = ""
)

// Receipt is WeChat's word that an order's parcels were received: when (UTC, whole
// seconds, WeChat's confirm_receive_time) and how.
type Receipt struct {
	ConfirmedAt time.Time
	Method      ReceiptMethod
}

// ReceiptState is o's receipt as the contract shows it: CONFIRMED once WeChat
// reported it, WAITING while something shipped (a shipping not CANCELLED) waits for
// it, and "" (no receipt) before any shipment.
func (o *Order) ReceiptState() ReceiptStatus {
	switch {
	case o.Receipt != nil:
		return ReceiptConfirmed
	case o.Shipping != nil && o.Shipping.Status != ShippingCancelled && len(o.Shipping.Shipments) > 0:
		return ReceiptWaiting
	}
	return ""
}

// ConfirmReceipt decides recording r, WeChat's settlement of the payment
// transactionID, on o: the receipt set, conditioned on o's status and its receipt as
// read (GuardReceipt: still none), whatever the order's status (a receipt is a fact
// about the parcel, refunds or not). A receipt already recorded is NoChange: WeChat's
// repeats (and a second event after the first) change nothing, the first one stays.
// Errors: ErrOtherPayment when transactionID is not o's payment (a second payment of
// the order, or an order never paid), ErrNothingShipped when o has no shipment:
// nothing is recorded.
func (o *Order) ConfirmReceipt(transactionID string, r Receipt) (Change, error) {
	if o.TransactionID == "" || o.TransactionID != transactionID {
		return Change{}, fmt.Errorf("receipt of order %s: %w", o.ID, ErrOtherPayment)
	}
	if o.Shipping == nil || len(o.Shipping.Shipments) == 0 {
		return Change{}, fmt.Errorf("receipt of order %s: %w", o.ID, ErrNothingShipped)
	}
	if o.Receipt != nil {
		return Change{}, nil
	}
	next := *o
	r.ConfirmedAt = r.ConfirmedAt.UTC().Truncate(time.Second)
	next.Receipt = &r
	return Change{Kind: ChangeReceipt, From: o.Status, Order: &next, Guards: GuardReceipt}, nil
}
