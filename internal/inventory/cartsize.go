package inventory

import (
	"errors"
	"fmt"
)

// MaxTransactionActions is the most actions one DynamoDB TransactWriteItems may hold
// (DynamoDB API Reference, TransactWriteItems: "up to 100 action requests").
const MaxTransactionActions = 100

// ErrCartTooLarge: reserving the cart would take more than MaxTransactionActions
// actions with the stock spread over the shards as it is now (docs/contract.md,
// "POST /orders", 409 CART_TOO_LARGE). Retrying the same cart does not help; a smaller cart,
// or fewer and fuller shards, does.
var ErrCartTooLarge = errors.New("cart needs more actions than one transaction holds")

// ReservationActions is how many write actions reserving items takes in one
// transaction: the order (which is also what makes an idempotency key hold), and per item its
// RESERVE ledger entry, one update per shard it takes units from (Shards) and its
// purchase counter when Limited.
func ReservationActions(items []OrderItem) int {
	n := 1
	for _, it := range items {
		n += 1 + len(it.Shards)
		if it.Limited {
			n++
		}
	}
	return n
}

// CheckCartSize decides whether items, each allocated over the fewest shards that
// cover it (ShardStock.Allocate), fit one transaction. It returns an error wrapping
// ErrCartTooLarge, giving the count, when they need more than MaxTransactionActions.
func CheckCartSize(items []OrderItem) error {
	if n := ReservationActions(items); n > MaxTransactionActions {
		return fmt.Errorf("the cart needs %d transaction actions, more than %d: %w", n, MaxTransactionActions, ErrCartTooLarge)
	}
	return nil
}
