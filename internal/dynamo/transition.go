package dynamo

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/stockguard/stockguard/internal/inventory"
)

// maxTransitionRounds bounds the transactions one release or payment sends; rounds
// after the first only run when the order changed meanwhile or a counter had drifted.
const maxTransitionRounds = 4

// sendResult is what sending a transition came to.
type sendResult int

const (
	applied sendResult = iota // the transition was applied (maybe by an earlier send)
	lost                      // the order had left the from status: nothing changed
	refused                   // another condition failed (see the failed parts): nothing changed
)

// sendTransition sends t, the transition of order id (built with txn.transition
// first), with a fresh ClientRequestToken: a random UUID, within DynamoDB's 36
// characters (DynamoDB API Reference, TransactWriteItems). The SDK's retries resend
// the same input, token included, so they are idempotent for 10 minutes; any other
// send, even of an equal-looking transaction by a concurrent caller, has its own
// token, since DynamoDB answers IdempotentParameterMismatchException to a token
// reused with other parameters. When the outcome is unknown the order is read back:
// mine reports whether it shows this very transition applied. Errors wrap
// inventory.ErrBusy when DynamoDB was throttled, conflicted or unavailable.
func (s *Store) sendTransition(ctx context.Context, t *txn, id string, mine func(*inventory.Order) bool) (sendResult, parts, error) {
	t.token = uuid.NewString()
	out, err := s.send(ctx, t)
	switch {
	case err != nil:
		return 0, nil, err
	case out.applied:
		return applied, nil, nil
	case out.unknown != nil:
		_, ok, err := s.readBack(ctx, t.what, id, out.unknown, mine)
		switch {
		case err != nil:
			return 0, nil, err
		case ok:
			return applied, nil, nil
		}
		return lost, nil, nil // re-read by the caller: if unchanged, it will try again
	case out.has(partOrder):
		return lost, nil, nil
	}
	return refused, out.parts(), nil
}

// booksOff is the error for a transition refused by a condition that only fails when
// the counters or the ledger disagree with the order.
func booksOff(what string, failed parts) error {
	return fmt.Errorf("%s: %v failed its condition: the books need reconciling", what, failed)
}

// mustOrder reads an order that must exist.
func (s *Store) mustOrder(ctx context.Context, id string) (*inventory.Order, error) {
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, fmt.Errorf("order %s vanished: %w", id, inventory.ErrOrderNotFound)
	}
	return order, nil
}
