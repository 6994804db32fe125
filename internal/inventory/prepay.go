package inventory

import (
	"errors"
	"fmt"
	"time"
)

// Errors of starting a payment (docs/contract.md, "POST /orders/{orderId}/pay"), checked with
// errors.Is.
var (
	// ErrNotPayable: the order is not PENDING, or its payment window has ended.
	ErrNotPayable = errors.New("order cannot be paid")
	// ErrPaymentRefused: WeChat Pay refused the request for a reason retrying will not
	// fix (a 4xx other than "already paid/closed", or an answer that failed
	// verification); nothing was changed. WeChat Pay's text stays in the log.
	ErrPaymentRefused = errors.New("payment provider refused the request")
)

// PrepayLifetime is how long WeChat Pay keeps a prepay_id valid (WeChat Pay APIv3,
// "JSAPI下单": prepay_id 有效期为2小时).
const PrepayLifetime = 2 * time.Hour

// PrepayMargin is the life a stored prepay_id must still have to be handed out again:
// a buyer who gets it needs time to confirm the payment.
const PrepayMargin = 10 * time.Minute

// CheckPayable says whether a payment may be started for o at now: nil for a PENDING
// order whose payment window (ExpiresAt) has not ended, else an error wrapping
// ErrNotPayable.
func (o *Order) CheckPayable(now time.Time) error {
	if o.Status != StatusPending || !now.Before(o.ExpiresAt) {
		return fmt.Errorf("pay order %s (%s, expires %s): %w", o.ID, o.Status, o.ExpiresAt.Format(time.RFC3339), ErrNotPayable)
	}
	return nil
}

// ReusablePrepay returns the order's stored prepay_id when it may be handed out again at
// now: the order is PENDING (unchanged since the prepay_id was stored: amount, payer and
// expiry never change while PENDING) and the prepay_id has at least PrepayMargin of its
// PrepayLifetime left.
func (o *Order) ReusablePrepay(now time.Time) (string, bool) {
	if o.Status != StatusPending || o.PrepayID == "" || o.PrepayAt == nil {
		return "", false
	}
	if now.Before(*o.PrepayAt) || now.Add(PrepayMargin).After(o.PrepayAt.Add(PrepayLifetime)) {
		return "", false
	}
	return o.PrepayID, true
}
