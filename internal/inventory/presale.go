package inventory

import (
	"fmt"
	"time"
)

// Presales: an order that ships later than 15 days after its payment must be declared
// to WeChat as a presale with its expected ship time ("特殊发货报备" opspecialorder: "发货时效超过15天
// 的订单需报备为预售商品订单"; "预售商品订单预计发货时间必须在订单支付时间的15天后，不得超过330天").
// The declaration is recorded on the order through the one transition path
// (Order.DeclarePresale), queued, and sent by the wechat function, whose answer
// Order.PresaleResult records.

// Presale window after the payment ("特殊发货报备", 注意事项; wxapi.MinPresaleDelay,
// wxapi.MaxPresaleDelay).
const (
	MinPresaleDelay = 15 * 24 * time.Hour
	MaxPresaleDelay = 330 * 24 * time.Hour
)

// Presale statuses: QUEUED (being declared; Error set while retried), DECLARED
// (WeChat accepted it), FAILED (WeChat refused it for good).
const PresaleDeclared ShippingStatus = "DECLARED"

// Presale is an order's presale declaration.
type Presale struct {
	ShipAt     time.Time      // the expected ship time (UTC, whole seconds)
	Status     ShippingStatus // ShippingQueued, PresaleDeclared or ShippingFailed
	DeclaredAt *time.Time     // when WeChat accepted it
	Error      string         // why the last declaration failed
}

// DeclarePresale decides declaring o a presale shipping at shipAt (cut to whole
// seconds, UTC): QUEUED, conditioned on o still PAID with its presale as read. The same
// ship time again is NoChange; another one replaces it (declared again). Errors:
// ErrNotShippable (o is not PAID, or something of it was shipped already); an
// *InvalidRequestError when shipAt is not 15 to 330 days after o's payment.
func (o *Order) DeclarePresale(shipAt time.Time) (Change, error) {
	shipAt = shipAt.UTC().Truncate(time.Second)
	if o.Status != StatusPaid || o.PaidAt == nil || o.Shipping != nil && len(o.Shipping.Shipments) > 0 {
		return Change{}, fmt.Errorf("presale of order %s (%s): %w", o.ID, o.Status, ErrNotShippable)
	}
	if shipAt.Before(o.PaidAt.Add(MinPresaleDelay)) || shipAt.After(o.PaidAt.Add(MaxPresaleDelay)) {
		return Change{}, InvalidError("shipAt must be 15 to 330 days after the payment (%s): WeChat's presale window", o.PaidAt.UTC().Format(time.RFC3339))
	}
	if o.Presale != nil && o.Presale.ShipAt.Equal(shipAt) {
		return Change{}, nil
	}
	next := *o
	next.Presale = &Presale{ShipAt: shipAt, Status: ShippingQueued}
	return Change{Kind: ChangePresale, From: StatusPaid, Order: &next, Guards: GuardPresale}, nil
}

// PresaleResult decides recording WeChat's answer to o's presale declaration at now:
// errText empty means accepted (DECLARED); final tells a refusal for good (FAILED)
// from one being retried (QUEUED with Error). NoChange when o is no longer PAID, has no
// presale queued, or the answer changes nothing.
func (o *Order) PresaleResult(errText string, final bool, now time.Time) Change {
	if o.Status != StatusPaid || o.Presale == nil || o.Presale.Status != ShippingQueued {
		return Change{}
	}
	p := *o.Presale
	switch {
	case errText == "":
		p.Status, p.DeclaredAt, p.Error = PresaleDeclared, &now, ""
	case final:
		p.Status, p.Error = ShippingFailed, errText
	case p.Error == errText:
		return Change{}
	default:
		p.Error = errText
	}
	next := *o
	next.Presale = &p
	return Change{Kind: ChangePresaleResult, From: StatusPaid, Order: &next, Guards: GuardPresale}
}
