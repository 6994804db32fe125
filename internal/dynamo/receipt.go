package dynamo

import (
	"context"

	"github.com/stockguard/stockguard/internal/inventory"
)

// WeChat's confirmation of receipt on orders (inventory.Receipt), recorded through
// the one transition path.

type receiptRecord struct {
	ConfirmedAt string `dynamodbav:"confirmedAt"`
	Method      string `dynamodbav:"method,omitempty"`
}

func newReceiptRecord(r *inventory.Receipt) *receiptRecord {
	if r == nil {
		return nil
	}
	return &receiptRecord{ConfirmedAt: formatTime(r.ConfirmedAt), Method: string(r.Method)}
}

func (r *receiptRecord) receipt() (*inventory.Receipt, error) {
	if r == nil {
		return nil, nil
	}
	at, err := parseTime(r.ConfirmedAt)
	if err != nil {
		return nil, err
	}
	return &inventory.Receipt{ConfirmedAt: at, Method: inventory.ReceiptMethod(r.Method)}, nil
}

// ConfirmReceipt records r, WeChat's settlement of the payment transactionID, on the
// order id as inventory.Order.ConfirmReceipt decides, through the one transition
// path: one conditional update of the order (its status as read, no receipt yet). It
// returns the order as it stands and whether this call recorded r (false when a
// receipt was recorded before: the first one stays). Errors:
// inventory.ErrOrderNotFound, inventory.ErrOtherPayment (nothing written),
// inventory.ErrBusy, or another store error.
func (s *OrderStore) ConfirmReceipt(ctx context.Context, id, transactionID string, r inventory.Receipt) (*inventory.Order, bool, error) {
	order, err := s.Lookup(ctx, id)
	if err != nil {
		return nil, false, err
	}
	o, c, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.ConfirmReceipt(transactionID, r)
	})
	if err != nil {
		return nil, false, err
	}
	return o, !c.None(), nil
}
