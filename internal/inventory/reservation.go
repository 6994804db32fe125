package inventory

import "time"

// ReserveRequest asks to reserve a cart for a user.
type ReserveRequest struct {
	UserID string // the caller's identity (JWT sub)
	Cart   Cart   // validated, merged lines
	// IdempotencyKey is optional: with one the order id is KeyedOrderID of
	// the user and key, so the same user, key and cart get the same order for as long
	// as it is kept (another cart under the key: ErrIdempotencyKeyReused).
	IdempotencyKey string
	// Subscriptions are the subscribe-message template ids the buyer accepted, kept on
	// the order (Order.Subscriptions); not part of the cart's idempotency.
	Subscriptions []string
	// Address is where the parcel goes, validated (Address.Validate); it is required
	// when a line's SKU ships by express (DeliveryExpress), and kept on the order; not
	// part of the cart's idempotency.
	Address *Address
	// Slot, when set (from the store's NewSlot, orders.Placing), is the id and times the new order gets, so that
	// work needing only those (the close message) can start before the outcome is
	// known; zero means a fresh slot.
	Slot OrderSlot
	// Admission is the caller's admission from the waiting room, its token's
	// signature checked (nil: none). A line whose SKU has a waiting room needs one
	// for its SKU and user, unexpired and unused (ErrAdmissionRequired otherwise);
	// the order marks its ticket used in the reservation's transaction.
	Admission *Admission
}

// OrderSlot is the id and times of an order before it is reserved. Until a reservation
// with it opens the order, nothing names it: an order id that never opens is never
// found, so anything sent ahead for it (a close message) releases nothing.
type OrderSlot struct {
	OrderID   string    // a fresh order id (NewOrderID), or the key's (KeyedOrderID)
	CreatedAt time.Time // UTC, from the store's clock
	ExpiresAt time.Time // CreatedAt + the store's payment timeout
}
