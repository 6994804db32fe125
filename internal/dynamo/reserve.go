package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
)

// IdempotencyWindow is how long an idempotency key keeps answering with its order
// (CONTRACT.md: 24 h), in seconds.
const IdempotencyWindow = 24 * 60 * 60

// maxTransactItems is DynamoDB's limit on actions in one TransactWriteItems
// (DynamoDB API Reference, TransactWriteItems: "up to 100 action requests").
const maxTransactItems = 100

// ReserveRequest asks to reserve a cart for a user.
type ReserveRequest struct {
	UserID         string         // the caller's identity (JWT sub)
	Cart           inventory.Cart // validated, merged lines
	IdempotencyKey string         // optional; same user + key + cart within 24 h → same order
}

// Reserve reserves every line of the cart and opens a PENDING order in one
// TransactWriteItems, or reserves nothing. It returns the order and whether it is a
// replay of an earlier request with the same idempotency key (nothing new reserved).
//
// Errors (check with errors.Is; per-SKU ones come as *inventory.SKUError):
// inventory.ErrSKUNotFound, ErrOffSale, ErrLimitExceeded, ErrStockOut (the SKU's shards
// together cannot cover the line), ErrIdempotencyKeyReused, ErrBusy (throttled or
// conflicted after bounded retries; nothing reserved). Any other error is a store
// failure and also leaves nothing reserved unless the write's outcome could not be
// read back; such an order expires and is released like any unpaid order.
func (s *Store) Reserve(ctx context.Context, req ReserveRequest) (*inventory.Order, bool, error) {
	id, err := inventory.NewOrderID()
	if err != nil {
		return nil, false, err
	}
	r := &reservation{s: s, req: req, id: id, hash: req.Cart.Hash(), createdAt: s.now()}
	order, replayed, err := r.run(ctx)
	// A request refused for its stock, or for lost rounds, may be a copy of a keyed
	// request that already got its order (often the very order that sold the SKU
	// out): that copy gets the order back.
	if err != nil && req.IdempotencyKey != "" && (errors.As(err, new(*inventory.SKUError)) || errors.Is(err, inventory.ErrBusy)) {
		if got, again, rerr := r.replay(ctx); rerr != nil || got != nil {
			return got, again, rerr
		}
	}
	return order, replayed, err
}

// run plans the reservation and sends rounds of it until one is applied or refused.
func (r *reservation) run(ctx context.Context) (*inventory.Order, bool, error) {
	if err := r.plan(ctx); err != nil {
		return nil, false, err
	}
	for round := range r.s.opts.MaxRounds {
		if err := r.fit(ctx); err != nil {
			return nil, false, err
		}
		order, tx, err := r.build(round)
		if err != nil {
			return nil, false, err
		}
		_, err = r.s.db.TransactWriteItems(ctx, tx)
		if err == nil {
			return order, false, nil
		}
		done, got, replayed, err := r.settle(ctx, err)
		if done {
			return got, replayed, err
		}
		// Another buyer took the units this round counted on; wait a random moment so
		// that buyers who collided do not collide again in lockstep.
		if err := sleep(ctx, round+1); err != nil {
			return nil, false, fmt.Errorf("reserve order %s: %w (%w)", r.id, inventory.ErrBusy, err)
		}
	}
	return nil, false, fmt.Errorf("reserve order %s: %d rounds lost to concurrent buyers: %w", r.id, r.s.opts.MaxRounds, inventory.ErrBusy)
}

// reservation is one order's way through Reserve.
type reservation struct {
	s         *Store
	req       ReserveRequest
	id        string
	hash      string
	createdAt time.Time
	lines     []linePlan
	roles     []role
}

type linePlan struct {
	line  inventory.Line
	rec   skuRecord
	alloc map[int]int // shard → units
}

type roleKind int

const (
	roleOrder roleKind = iota
	roleIdem
	roleLimit
	roleShard
	roleLedger
)

// role says what one TransactItems entry is, so a cancellation reason at index i can
// be mapped back to the order, the idempotency record or a cart line.
type role struct {
	kind  roleKind
	line  int
	shard int
}

// plan reads the SKU records (cache first) and picks the shards each line starts on.
func (r *reservation) plan(ctx context.Context) error {
	ids := make([]string, len(r.req.Cart))
	for i, l := range r.req.Cart {
		ids[i] = l.SKU
	}
	entries, err := r.s.skuRecords(ctx, ids, false)
	if err != nil {
		return err
	}
	r.lines = make([]linePlan, len(r.req.Cart))
	for i, l := range r.req.Cart {
		e, ok := entries[l.SKU]
		if !ok {
			return &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: l.SKU}
		}
		r.lines[i] = linePlan{line: l}
		err := r.replan(ctx, i, e, false)
		if errors.Is(err, inventory.ErrLimitExceeded) && e.fetched.Before(r.createdAt) {
			err = r.refresh(ctx, i) // the limit came from the cache: check it afresh
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// replan sets line i's SKU record and shard allocation. With readShards false it
// uses the shard hints and reads the shards only when the hints say they are short;
// with true it reads them first. Only a strongly consistent read of every shard can
// answer ErrStockOut for a sharded SKU.
func (r *reservation) replan(ctx context.Context, i int, e catalogEntry, readShards bool) error {
	lp := &r.lines[i]
	lp.rec = e.rec
	if e.rec.Currency != inventory.Currency {
		return fmt.Errorf("SKU %s is priced in %q, not %s", e.rec.SKU, e.rec.Currency, inventory.Currency)
	}
	if e.rec.LimitPerUser > 0 && lp.line.Qty > e.rec.LimitPerUser {
		return &inventory.SKUError{Err: inventory.ErrLimitExceeded, SKU: lp.line.SKU}
	}
	if e.rec.Shards == 1 {
		lp.alloc = map[int]int{0: lp.line.Qty}
		return nil
	}
	if !readShards {
		if alloc, ok := allocate(lp.line.Qty, e.hint, false); ok {
			lp.alloc = alloc
			return nil
		}
	}
	shards, err := r.s.shardRecords(ctx, map[string]int{e.rec.SKU: e.rec.Shards})
	if err != nil {
		return err
	}
	return r.allocateFrom(i, shards[e.rec.SKU], false)
}

// allocateFrom sets line i's allocation from freshly read shard items (see allocate
// for fewest).
func (r *reservation) allocateFrom(i int, shards []shardRecord, fewest bool) error {
	lp := &r.lines[i]
	avail := make([]int, lp.rec.Shards)
	for _, sh := range shards {
		if sh.Shard < 0 || sh.Shard >= len(avail) {
			continue
		}
		if !sh.OnSale {
			return &inventory.SKUError{Err: inventory.ErrOffSale, SKU: lp.line.SKU}
		}
		avail[sh.Shard] = sh.Available
	}
	alloc, ok := allocate(lp.line.Qty, avail, fewest)
	if !ok {
		return &inventory.SKUError{Err: inventory.ErrStockOut, SKU: lp.line.SKU}
	}
	lp.alloc = alloc
	return nil
}

// rereadShards reads the shards of every sharded line at once and plans them all
// again: when one line's guess was wrong, the others' guesses were as blind.
func (r *reservation) rereadShards(ctx context.Context, fewest bool) error {
	counts := map[string]int{}
	for _, lp := range r.lines {
		if lp.rec.Shards > 1 {
			counts[lp.rec.SKU] = lp.rec.Shards
		}
	}
	shards, err := r.s.shardRecords(ctx, counts)
	if err != nil {
		return err
	}
	for i, lp := range r.lines {
		if lp.rec.Shards > 1 {
			if err := r.allocateFrom(i, shards[lp.rec.SKU], fewest); err != nil {
				return err
			}
		}
	}
	return nil
}

// actions counts the TransactWriteItems actions the current plan needs.
func (r *reservation) actions() int {
	n := 1 // the order
	if r.req.IdempotencyKey != "" {
		n++
	}
	for _, lp := range r.lines {
		n += 1 + len(lp.alloc) // ledger entry + shard updates
		if lp.rec.LimitPerUser > 0 {
			n++
		}
	}
	return n
}

// fit makes the plan fit in one transaction (at most 100 actions): split lines are
// planned again over the fullest shards. If they still do not fit (many lines, each
// split thin over many shards), the cart is refused whole with ErrBusy. Units are
// never moved between shards to make room: a concurrent read could then count them
// twice or not at all. Fewer, fuller shards are the cure.
func (r *reservation) fit(ctx context.Context) error {
	if r.actions() <= maxTransactItems {
		return nil
	}
	if err := r.rereadShards(ctx, true); err != nil {
		return err
	}
	if n := r.actions(); n > maxTransactItems {
		return fmt.Errorf("reserve order %s: the cart needs %d transaction actions, more than DynamoDB's %d: %w", r.id, n, maxTransactItems, inventory.ErrBusy)
	}
	return nil
}

// build assembles round's order and its TransactWriteItems input: the order Put, the
// idempotency record Put, then per line the purchase counter Update, one conditional
// Update per shard used and the RESERVE ledger entry.
func (r *reservation) build(round int) (*inventory.Order, *dynamodb.TransactWriteItemsInput, error) {
	s := r.s
	order := &inventory.Order{
		ID: r.id, UserID: r.req.UserID, Status: inventory.StatusPending,
		Currency: inventory.Currency, CartHash: r.hash,
		CreatedAt: r.createdAt, ExpiresAt: r.createdAt.Add(s.opts.PaymentTimeout),
	}
	var items []types.TransactWriteItem
	r.roles = r.roles[:0]
	add := func(it types.TransactWriteItem, ro role) {
		items = append(items, it)
		r.roles = append(r.roles, ro)
	}
	for _, lp := range r.lines {
		order.Items = append(order.Items, inventory.OrderItem{
			SKU: lp.line.SKU, Qty: lp.line.Qty, UnitPrice: lp.rec.Price, Shards: maps.Clone(lp.alloc), Limited: lp.rec.LimitPerUser > 0,
		})
		order.Amount += int64(lp.line.Qty) * lp.rec.Price
	}
	put, err := s.putNew(s.tables.Orders, newOrderRecord(order), nil)
	if err != nil {
		return nil, nil, err
	}
	add(put, role{kind: roleOrder})
	if r.req.IdempotencyKey != "" {
		rec := idemRecord{
			PK: idemKey(r.req.UserID, r.req.IdempotencyKey), Kind: kindIdem, UserID: r.req.UserID,
			OrderID: r.id, CartHash: r.hash, TTL: order.CreatedAt.Unix() + IdempotencyWindow,
		}
		expired := expression.Name("ttl").LessThan(expression.Value(order.CreatedAt.Unix()))
		put, err := s.putNew(s.tables.Orders, rec, &expired)
		if err != nil {
			return nil, nil, err
		}
		add(put, role{kind: roleIdem})
	}
	at := order.CreatedAt.UnixMilli()
	for i, lp := range r.lines {
		if lp.rec.LimitPerUser > 0 {
			upd, err := s.limitUpdate(r.req.UserID, lp.line.SKU, lp.line.Qty, lp.rec.LimitPerUser)
			if err != nil {
				return nil, nil, err
			}
			add(upd, role{kind: roleLimit, line: i})
		}
		for _, shard := range slices.Sorted(maps.Keys(lp.alloc)) {
			upd, err := s.reserveUpdate(lp.line.SKU, shard, lp.alloc[shard], lp.rec.Price)
			if err != nil {
				return nil, nil, err
			}
			add(upd, role{kind: roleShard, line: i, shard: shard})
		}
		entry := ledgerRecord{
			PK: ledgerKey(r.id, OpReserve, lp.line.SKU), Ref: r.id, Op: OpReserve, SKU: lp.line.SKU,
			Qty: lp.line.Qty, DAvailable: -lp.line.Qty, Shards: shardsToRecord(lp.alloc), At: at,
		}
		put, err := s.putLedger(entry)
		if err != nil {
			return nil, nil, err
		}
		add(put, role{kind: roleLedger, line: i})
	}
	return order, &dynamodb.TransactWriteItemsInput{
		TransactItems: items,
		// One token per round: the SDK's own retries of this exact input are
		// idempotent for 10 minutes (DynamoDB API Reference, ClientRequestToken).
		ClientRequestToken: aws.String(r.id + "-" + strconv.Itoa(round)),
	}, nil
}
