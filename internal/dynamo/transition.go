package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/stockguard/stockguard/internal/inventory"
)

// transition is one order's status change together with its stock and ledger writes,
// built as one TransactWriteItems whose first action is the order's update,
// conditioned on the status it leaves (DESIGN.md: "Every transition is one conditional
// write on the current status, in the same TransactWriteItems as its stock update and
// ledger entry"). Whoever loses that condition changes nothing.
type transition struct {
	verb    string // "release", "commit", … for errors
	orderID string
	items   []types.TransactWriteItem
	actions []action
	err     error // the first build error
}

// action says what one TransactItems entry of a transition is.
type action struct {
	kind  roleKind
	sku   string
	shard int
}

func (a action) String() string {
	switch a.kind {
	case roleShard:
		return fmt.Sprintf("shard %d of %s", a.shard, a.sku)
	case roleLedger:
		return "the ledger entry of " + a.sku + " (already written)"
	case roleLimit:
		return "the purchase counter of " + a.sku
	default:
		return "the order"
	}
}

// newTransition starts the transition of order from status from, with upd applied to
// the order item.
func (s *Store) newTransition(verb string, order *inventory.Order, from inventory.Status, upd expression.UpdateBuilder) *transition {
	t := &transition{verb: verb, orderID: order.ID}
	status := expression.Name("status")
	t.add(update(s.tables.Orders, order.ID, upd, status.Equal(expression.Value(string(from)))))(action{kind: roleOrder})
	return t
}

// add records a built action under the role the returned func is given.
func (t *transition) add(it types.TransactWriteItem, err error) func(action) {
	return func(a action) {
		if t.err == nil && err != nil {
			t.err = err
		}
		t.items = append(t.items, it)
		t.actions = append(t.actions, a)
	}
}

// shard adds a conditional update of one stock shard item.
func (t *transition) shard(s *Store, sku string, n int, upd expression.UpdateBuilder, cond expression.ConditionBuilder) {
	t.add(update(s.tables.SKUs, shardKey(sku, n), upd, cond))(action{kind: roleShard, sku: sku, shard: n})
}

// counter adds an update of the user's purchase counter for sku.
func (t *transition) counter(s *Store, sku, user string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) {
	t.add(update(s.tables.Orders, limitKey(sku, user), upd, cond))(action{kind: roleLimit, sku: sku})
}

// ledger adds a ledger entry Put that fails if the entry exists.
func (t *transition) ledger(s *Store, entry ledgerRecord) {
	t.add(s.putLedger(entry))(action{kind: roleLedger, sku: entry.SKU})
}

// sendResult is what sending a transition came to.
type sendResult int

const (
	applied sendResult = iota // the transition was applied (maybe by an earlier send)
	lost                      // the order had left the from status: nothing changed
	refused                   // another condition failed (see the failed actions): nothing changed
)

// send sends t with a fresh ClientRequestToken: a random UUID, within DynamoDB's 36
// characters (DynamoDB API Reference, TransactWriteItems). The SDK's retries resend the
// same input, token included, so they are idempotent for 10 minutes; any other send, even
// of an equal-looking transaction by a concurrent caller, has its own token, since
// DynamoDB answers IdempotentParameterMismatchException to a token reused with other
// parameters. When the
// outcome is unknown (timeout, 5xx after the SDK's retries) the order is read back:
// mine reports whether the order read shows this very transition applied. Errors wrap
// inventory.ErrBusy when DynamoDB was throttled, conflicted or unavailable.
func (s *Store) send(ctx context.Context, t *transition, mine func(*inventory.Order) bool) (sendResult, []action, error) {
	if t.err != nil {
		return 0, nil, t.err
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: t.items, ClientRequestToken: aws.String(uuid.NewString()),
	})
	if err == nil {
		return applied, nil, nil
	}
	what := t.verb + " order " + t.orderID
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		if ferr := definiteFailure(what, err); ferr != nil {
			return 0, nil, ferr
		}
		cctx, cancel := convergeContext(ctx)
		defer cancel()
		order, rerr := s.order(cctx, t.orderID)
		switch {
		case rerr != nil || order == nil:
			return 0, nil, fmt.Errorf("%s: outcome unknown after %v: %w", what, err, inventory.ErrBusy)
		case mine(order):
			return applied, nil, nil
		default:
			return lost, nil, nil // re-read by the caller: if unchanged, it will try again
		}
	}
	failed := conditionFailures(tce, len(t.actions))
	switch {
	case len(failed) == 0 && isTransient(err):
		return 0, nil, fmt.Errorf("%s: %w (%w)", what, inventory.ErrBusy, err)
	case len(failed) == 0:
		return 0, nil, fmt.Errorf("%s: %w", what, err)
	case slices.Contains(failed, 0):
		return lost, nil, nil
	}
	out := make([]action, len(failed))
	for i, f := range failed {
		out[i] = t.actions[f]
	}
	return refused, out, nil
}

// booksOff is the error for a transition refused by a condition that only fails when
// the counters or the ledger disagree with the order.
func booksOff(verb, id string, failed []action) error {
	return fmt.Errorf("%s order %s: %v failed its condition: the books need reconciling", verb, id, failed)
}
