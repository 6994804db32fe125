package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
)

// NewSlot returns an order slot on the store's clock and payment timeout for user's
// request with idempotency key key: the key's order id (inventory.KeyedOrderID), or a
// fresh one without a key. Its only error is the order id generator's.
func (s *OrderStore) NewSlot(user, key string) (inventory.OrderSlot, error) {
	id := inventory.KeyedOrderID(user, key)
	if key == "" {
		var err error
		if id, err = inventory.NewOrderID(); err != nil {
			return inventory.OrderSlot{}, err
		}
	}
	now := s.now()
	return inventory.OrderSlot{OrderID: id, CreatedAt: now, ExpiresAt: now.Add(s.opts.PaymentTimeout)}, nil
}

// Reserve reserves every line of the cart and opens a PENDING order in one
// TransactWriteItems, or reserves nothing. It returns the order and whether it is a
// replay of an earlier request with the same idempotency key (nothing new reserved).
//
// With Options.Shaping on, the request is first admitted (Store.shape): a refusal is
// a *inventory.RateLimitedError wrapping inventory.ErrRateLimited, nothing reserved.
//
// Errors (check with errors.Is; per-SKU ones come as *inventory.SKUError):
// inventory.ErrSKUNotFound, ErrOffSale, ErrLimitExceeded, ErrAdmissionRequired (a
// line of a SKU with a waiting room without req.Admission for it, or with one
// another order used), ErrStockOut (the SKU's shards
// together cannot cover the line), ErrCartTooLarge (even over the fewest shards the
// cart needs more than one transaction's actions), ErrIdempotencyKeyReused, ErrBusy (throttled or
// conflicted after bounded retries; nothing reserved; a keyed request is not looked up
// for a copy's order then: the caller sends it again). Any other error is a store
// failure and also leaves nothing reserved unless the write's outcome could not be
// read back; such an order expires and is released like any unpaid order.
func (s *OrderStore) Reserve(ctx context.Context, req inventory.ReserveRequest) (*inventory.Order, bool, error) {
	slot := req.Slot
	if slot.OrderID == "" {
		var err error
		if slot, err = s.NewSlot(req.UserID, req.IdempotencyKey); err != nil {
			return nil, false, err
		}
	}
	if req.IdempotencyKey != "" && slot.OrderID != inventory.KeyedOrderID(req.UserID, req.IdempotencyKey) {
		return nil, false, fmt.Errorf("reserve: slot %s is not the idempotency key's order id", slot.OrderID)
	}
	var nonce [7]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, false, fmt.Errorf("reserve: nonce: %w", err)
	}
	r := &reservation{s: s.store, req: req, id: slot.OrderID, nonce: hex.EncodeToString(nonce[:]), hash: req.Cart.Hash(), createdAt: slot.CreatedAt, expiresAt: slot.ExpiresAt}
	if s.opts.Shaping.On() {
		if order, replayed, err := r.shape(ctx); order != nil || err != nil {
			return order, replayed, err
		}
	}
	order, replayed, err := r.run(ctx)
	// A request refused for its stock or its size may be a copy of a keyed request that
	// already got its order (often the very order that sold the SKU out): that copy
	// gets the order back. A busy one is not read for it: it is answered "try again",
	// and the try that is not busy finds the order.
	if err != nil && req.IdempotencyKey != "" && (errors.As(err, new(*inventory.SKUError)) || errors.Is(err, inventory.ErrCartTooLarge)) {
		if got, again, rerr := r.replay(ctx); rerr != nil || got != nil {
			return got, again, rerr
		}
	}
	return order, replayed, err
}

// KeyedOrder returns the order a request with req's idempotency key already placed,
// replayed when another request opened it, as Reserve answers a refused copy of a
// keyed request (reservation.replay: one strongly consistent GetItem of the key's
// order id): nil with nil error when req has no key or the key has no order yet;
// inventory.ErrIdempotencyKeyReused when the key's order is of another cart; any other
// error is a store failure. The scalper check asks it before refusing a keyed request,
// so that a copy of an order placed before the buyer was rated gets the order back.
func (s *OrderStore) KeyedOrder(ctx context.Context, req inventory.ReserveRequest) (*inventory.Order, bool, error) {
	if req.IdempotencyKey == "" {
		return nil, false, nil
	}
	r := &reservation{s: s.store, req: req, id: inventory.KeyedOrderID(req.UserID, req.IdempotencyKey), hash: req.Cart.Hash()}
	return r.replay(ctx)
}

// shape admits the request under Options.Shaping (Store.shape). A keyed request
// that is refused gets the order of its key instead when the key has one (an
// idempotent replay is never refused by shaping). A nil order and nil error mean
// admitted.
func (r *reservation) shape(ctx context.Context) (*inventory.Order, bool, error) {
	err := r.s.shape(ctx, r.req.UserID, r.req.IdempotencyKey, r.req.Cart)
	if err == nil || r.req.IdempotencyKey == "" || !errors.Is(err, inventory.ErrRateLimited) {
		return nil, false, err
	}
	if order, replayed, rerr := r.replay(ctx); rerr != nil || order != nil {
		return order, replayed, rerr
	}
	return nil, false, err
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
		order := r.order()
		out, err := r.s.send(ctx, r.build(order, round))
		switch {
		case errors.Is(err, inventory.ErrBusy):
			// The SDK's last attempt may be refused as conflicted or throttled after an
			// earlier attempt of the same call applied and lost its answer: only the
			// order can tell.
			if got, mine, rerr := r.s.readBack(ctx, "reserve order "+r.id, r.id, err, r.mine); rerr == nil && mine {
				return got, r.copyOf(got), nil
			}
			return nil, false, err
		case err != nil:
			return nil, false, err
		case out.applied:
			return order, false, nil
		case out.unknown != nil:
			got, err := r.readBack(ctx, out.unknown)
			return got, err == nil && r.copyOf(got), err
		}
		ans, err := r.explain(ctx, out)
		if err != nil {
			return nil, false, err
		}
		if ans != nil {
			return ans.order, ans.replayed, nil
		}
		// Another buyer took the units this round counted on; wait a random moment so
		// that buyers who collided do not collide again in lockstep.
		if err := clock.Sleep(ctx, jitter(round+1)); err != nil {
			return nil, false, inventory.Busy("reserve order "+r.id, err)
		}
	}
	return nil, false, fmt.Errorf("reserve order %s: %d rounds lost to concurrent buyers: %w", r.id, r.s.opts.MaxRounds, inventory.ErrBusy)
}

// reservation is one order's way through Reserve.
type reservation struct {
	s         *store
	req       inventory.ReserveRequest
	id        string
	nonce     string // 14 hex digits, this reservation's own (its transactions' tokens)
	hash      string
	createdAt time.Time
	expiresAt time.Time
	lines     []linePlan
}

type linePlan struct {
	line  inventory.Line
	rec   skuRecord
	fresh bool        // rec was read strongly by this reservation (soldOutRead)
	seen  bool        // rec was read by this reservation (strongly or not) since its last refused transaction
	alloc map[int]int // shard → units taken from available
	// hold is the buyer's waitlist hold on the line's SKU (nil: none), and take the
	// part of the line it covers (shard → units; heldTake): those units come out of
	// the hold, only the rest out of available (need).
	hold *inventory.WaitlistEntry
	take map[int]int
}

// need is how many of the line's units come out of available: those its hold does
// not cover.
func (lp *linePlan) need() int {
	n := lp.line.Qty
	for _, q := range lp.take {
		n -= q
	}
	return n
}

// findHold reads the buyer's waitlist entry for line i's SKU, whose record says it
// has a waitlist (1 read unit; SKUs without one read nothing), and plans the line on
// its hold when the entry holds units at the order's time.
func (r *reservation) findHold(ctx context.Context, i int) error {
	lp := &r.lines[i]
	e, err := r.s.waitEntry(ctx, r.req.UserID, lp.line.SKU)
	switch {
	case errors.Is(err, inventory.ErrWaitlistNotFound):
		return nil
	case err != nil:
		return err
	case e.Holds(r.createdAt):
		lp.hold, lp.take = &e, heldTake(e, lp.line.Qty)
	}
	return nil
}

// dropHold plans line i again on its buyer's entry read afresh (1 read unit): the
// hold moved to other shards by a shrinking reshard, or none when it passed or was
// used since it was read.
func (r *reservation) dropHold(ctx context.Context, i int) error {
	r.lines[i].hold, r.lines[i].take = nil, nil
	if err := r.findHold(ctx, i); err != nil {
		return err
	}
	return r.refresh(ctx, i)
}

// plan reads the SKU records (cache first) and picks the shards each line starts on.
func (r *reservation) plan(ctx context.Context) error {
	ids := make([]string, len(r.req.Cart))
	for i, l := range r.req.Cart {
		ids[i] = l.SKU
	}
	entries, err := r.s.skuRecords(ctx, ids, cacheFirst)
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
		if e.rec.Waitlist {
			if err := r.findHold(ctx, i); err != nil {
				return err
			}
		}
		err := r.replan(ctx, i, e, hintsFirst)
		stale := errors.Is(err, inventory.ErrLimitExceeded) || r.needsAddress(e.rec) || errors.Is(err, inventory.ErrAdmissionRequired) && r.otherSale(e.rec)
		if stale && e.fetched.Before(r.createdAt) {
			err = r.refresh(ctx, i) // the limit, the delivery or the sale came from the cache: check it afresh
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// planFrom says what a line's shard allocation starts from.
type planFrom int

const (
	hintsFirst planFrom = iota // the cached shard counts, reading the shards only when they say short
	shardsRead                 // the shards read first
)

// replan sets line i's SKU record and shard allocation (inventory.ShardStock.Allocate):
// from the shard hints, reading the shards only when the hints say they are short
// (hintsFirst), or from the shards read first (shardsRead). Only a strongly consistent
// read of every shard, or of a SKU record that says soldOut, can answer ErrStockOut;
// the hints (the last counts seen, one shard or many) refuse nobody on their own, they
// only send a line whose shards they say are short to those reads instead of to a
// transaction, the record first (soldOutCheck), and a line planned on a shard while
// another was seen empty reads the record before its transaction (docs/design.md,
// "Sell-out: the in-flight herd"): after a sell-out a buyer is refused with reads and
// no write.
func (r *reservation) replan(ctx context.Context, i int, e catalogEntry, plan planFrom) error {
	lp := &r.lines[i]
	lp.rec, lp.fresh, lp.seen = e.rec, !e.fetched.IsZero() && !e.fetched.Before(r.createdAt), !e.readAt.Before(r.createdAt)
	if e.rec.Currency != inventory.Currency {
		return fmt.Errorf("SKU %s is priced in %q, not %s", e.rec.SKU, e.rec.Currency, inventory.Currency)
	}
	// A line its buyer's waitlist hold covers takes no unit anyone else could buy:
	// it needs no admission.
	if e.rec.Queue && lp.need() > 0 && !r.admitted(e.rec) {
		return &inventory.SKUError{Err: inventory.ErrAdmissionRequired, SKU: e.rec.SKU}
	}
	if r.needsAddress(e.rec) {
		return inventory.InvalidError("address is required: SKU %s ships by express; give \"address\" as wx.chooseAddress returns it", e.rec.SKU)
	}
	if e.rec.LimitPerUser > 0 && lp.line.Qty > e.rec.LimitPerUser {
		return &inventory.SKUError{Err: inventory.ErrLimitExceeded, SKU: lp.line.SKU}
	}
	// An admission claims max(LimitPerUser, 1) units (inventory.AdmissionInput): a
	// queued SKU without a limit sells one unit per admission.
	if e.rec.Queue && e.rec.LimitPerUser == 0 && lp.need() > 1 {
		return &inventory.RefusalError{Err: &inventory.SKUError{Err: inventory.ErrLimitExceeded, SKU: lp.line.SKU},
			Reason: fmt.Sprintf("SKU %s sells through its waiting room without a per-user limit: one admission buys one unit; order qty 1", lp.line.SKU)}
	}
	if lp.need() == 0 {
		lp.alloc = map[int]int{} // the hold covers the line
		return nil
	}
	if e.rec.Shards == 1 && plan == shardsRead {
		lp.alloc = map[int]int{0: lp.need()} // the transaction's condition reads it
		return nil
	}
	if plan == hintsFirst && e.rec.SoldOut == 0 {
		if alloc, ok := e.hint.Allocate(lp.need()); ok {
			// A shard seen empty says the SKU is running low: a record from the cache
			// is read again before the transaction, which then often fails (read
			// before write, docs/design.md "Sell-out: the in-flight herd").
			if slices.Contains(e.hint, 0) {
				if err := r.soldOutCheck(ctx, i); err != nil {
					return err
				}
			}
			lp.alloc = alloc
			return nil
		}
	}
	if err := r.soldOutCheck(ctx, i); err != nil {
		return err
	}
	shards, err := r.unmarkedShards(ctx, []int{i})
	if err != nil {
		return err
	}
	return r.confirmStockOut(ctx, i, shards[lp.rec.SKU])
}

// admitted reports whether the request's admission lets its user order rec's SKU at
// the order's time, in its current sale (the waiting room; its ticket is marked used
// in the transaction).
func (r *reservation) admitted(rec skuRecord) bool {
	return r.req.Admission != nil && r.req.Admission.Admits(r.req.UserID, rec.SKU, fromMilli(rec.SaleStartsAt), r.createdAt)
}

// otherSale reports whether the request's admission would let its user order rec's
// SKU but for its ticket, of another sale than rec's: at a sale change, a record from
// the cache may be behind the admission's sale, so the refusal is read again
// (strongly consistent, 1 read unit, and the SKU's shards) before it is answered
// (docs/design.md, "A new sale, a new line").
func (r *reservation) otherSale(rec skuRecord) bool {
	return r.req.Admission != nil && r.req.Admission.OtherSale(r.req.UserID, rec.SKU, fromMilli(rec.SaleStartsAt), r.createdAt)
}

// needsAddress reports whether rec's SKU ships by express while the request gives no
// address: the request is refused (a refusal read from the cache is read again; an
// order accepted from the cache may miss a change of delivery made in the last
// Options.CatalogTTL, as a lowered limit may).
func (r *reservation) needsAddress(rec skuRecord) bool {
	return r.req.Address == nil && rec.delivery() == inventory.DeliveryExpress
}

// allocateFrom sets line i's allocation from freshly read shard items
// (inventory.ShardStock.Allocate).
func (r *reservation) allocateFrom(i int, shards []shardRecord) error {
	lp := &r.lines[i]
	avail := make(inventory.ShardStock, lp.rec.Shards)
	for _, sh := range shards {
		if sh.Shard < 0 || sh.Shard >= len(avail) {
			continue
		}
		if !sh.OnSale {
			return &inventory.SKUError{Err: inventory.ErrOffSale, SKU: lp.line.SKU}
		}
		avail[sh.Shard] = sh.Available
	}
	if lp.need() == 0 {
		lp.alloc = map[int]int{} // the hold covers the line
		return nil
	}
	alloc, ok := avail.Allocate(lp.need())
	if !ok {
		return &inventory.SKUError{Err: inventory.ErrStockOut, SKU: lp.line.SKU}
	}
	lp.alloc = alloc
	return nil
}

// rereadShards reads the shards of every sharded line at once and plans them all
// again: when one line's guess was wrong, the others' guesses were as blind.
func (r *reservation) rereadShards(ctx context.Context) error {
	var sharded []int
	for i, lp := range r.lines {
		if lp.rec.Shards > 1 {
			sharded = append(sharded, i)
		}
	}
	shards, err := r.unmarkedShards(ctx, sharded)
	if err != nil {
		return err
	}
	for i, lp := range r.lines {
		if lp.rec.Shards > 1 {
			if err := r.confirmStockOut(ctx, i, shards[lp.rec.SKU]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fit makes the plan fit in one transaction (inventory.MaxTransactionActions): when
// the planned lines need too many actions, the sharded lines are planned again from a
// strongly consistent read of their shards, each over the fewest shards that cover
// it. If they still do not fit (many lines, each split thin over many shards), the
// cart is refused whole with inventory.ErrCartTooLarge (inventory.CheckCartSize).
// Units are never moved between shards to make room: a concurrent read could then
// count them twice or not at all. Fewer, fuller shards are the cure.
func (r *reservation) fit(ctx context.Context) error {
	if inventory.CheckCartSize(r.order().Items) == nil {
		return nil
	}
	if err := r.rereadShards(ctx); err != nil {
		return err
	}
	if err := inventory.CheckCartSize(r.order().Items); err != nil {
		return fmt.Errorf("reserve order %s: %w", r.id, err)
	}
	return nil
}

// order is the order a round would open: the plan's lines at their SKU's price.
func (r *reservation) order() *inventory.Order {
	order := &inventory.Order{
		ID: r.id, UserID: r.req.UserID, Status: inventory.StatusPending,
		Currency: inventory.Currency, CartHash: r.hash, ReservedBy: r.nonce,
		CreatedAt: r.createdAt, ExpiresAt: r.expiresAt, Subscriptions: r.req.Subscriptions, Address: r.req.Address,
	}
	for _, lp := range r.lines {
		shards := maps.Clone(lp.alloc)
		for n, q := range lp.take {
			shards[n] += q
		}
		order.Items = append(order.Items, inventory.OrderItem{
			SKU: lp.line.SKU, Qty: lp.line.Qty, UnitPrice: lp.rec.Price, Shards: shards, Limited: lp.rec.LimitPerUser > 0,
		})
		order.Amount += int64(lp.line.Qty) * lp.rec.Price
	}
	return order
}

// build assembles round's transaction for order: the order Put (conditioned on its
// id being new, which makes a keyed request idempotent: its id is the key's), then
// per line the purchase counter Update, for a SKU with a waiting room its ticket's
// usedBy (ticketUse), for a line on its buyer's waitlist hold the hold's use
// (txn.heldLine), else the RESERVE of its units on
// each shard used (conditioned on available >= q, on sale, the order's price, the
// sale having started by the order's time and the shard count the plan used) and its
// RESERVE ledger entry.
func (r *reservation) build(order *inventory.Order, round int) *txn {
	t := r.s.newTxn("reserve order " + r.id)
	// One token per round of this reservation: the SDK's own retries of this exact
	// input are idempotent for 10 minutes (DynamoDB API Reference,
	// ClientRequestToken, at most 36 characters). Copies of a keyed request share the
	// order id, so the token also carries the reservation's nonce: two copies never
	// send one token with different inputs (IdempotentParameterMismatchException).
	t.token = r.id[:min(16, len(r.id))] + "-" + r.nonce + "-" + strconv.Itoa(round)
	t.put(part{kind: partOrder}, r.s.tables.Orders, newOrderRecord(order), nil)
	ref := entryRef{key: r.id, ref: r.id, at: order.CreatedAt.UnixMilli()}
	for i, it := range order.Items {
		rec := r.lines[i].rec
		if limit := rec.LimitPerUser; limit > 0 {
			t.counter(i, it.SKU, r.req.UserID, countUpdate(r.req.UserID, it.SKU, it.Qty), limitCondition(it.Qty, limit))
		}
		if rec.Queue && r.admitted(rec) { // replan checked it, unless a hold covers the line
			t.ticketUse(r.req.Admission, r.id)
		}
		cond := func(q int) expression.ConditionBuilder {
			return availableOnSale(q).And(expression.Name("price").Equal(expression.Value(rec.Price))).
				And(saleStarted(ref.at)).And(sameShardCount(rec.Shards))
		}
		if hold := r.lines[i].hold; hold != nil {
			t.heldLine(i, it, *hold, ref, cond, order.CreatedAt)
			continue
		}
		if rec.Queue && r.admitted(rec) {
			t.claimCredit(*r.req.Admission, rec.LimitPerUser, it.SKU, it.Shards)
		}
		t.lineStock(i, it, ref, cond, inventory.OpReserve)
	}
	return t
}

// saleStarted holds on a shard whose SKU has no sale start, or one at or before at
// (Unix milliseconds): the database, not the client, decides when a sale opens.
func saleStarted(at int64) expression.ConditionBuilder {
	starts := expression.Name("saleStartsAt")
	return expression.AttributeNotExists(starts).Or(starts.LessThanEqual(expression.Value(at)))
}

// sameShardCount holds on a shard of a SKU still split into n shards: a plan made
// before a reshard fails and is made again, instead of reading a shard that units
// left as out of stock.
func sameShardCount(n int) expression.ConditionBuilder {
	count := expression.Name("shardCount")
	return expression.AttributeNotExists(count).Or(count.Equal(expression.Value(n)))
}

// countUpdate counts qty units on the user's purchase counter for sku.
func countUpdate(user, sku string, qty int) expression.UpdateBuilder {
	return expression.Add(expression.Name("bought"), expression.Value(qty)).
		Set(expression.Name("kind"), expression.Value(kindLimit)).
		Set(expression.Name("skuId"), expression.Value(sku)).
		Set(expression.Name("userId"), expression.Value(user))
}

// limitCondition keeps a counter within limit after qty more units; with limit 0 (no
// limit, or one lifted since the units were first counted) there is no condition.
func limitCondition(qty, limit int) expression.ConditionBuilder {
	if limit <= 0 {
		return expression.ConditionBuilder{}
	}
	bought := expression.Name("bought")
	return expression.AttributeNotExists(bought).Or(bought.LessThanEqual(expression.Value(limit - qty)))
}

// answer is a reservation's final result.
type answer struct {
	order    *inventory.Order
	replayed bool
}

// explain reads the failed conditions of a refused round: the final answer, or nil
// (and no error) when another round may run with the plan adjusted.
func (r *reservation) explain(ctx context.Context, out outcome) (*answer, error) {
	// The order's own items first: if they exist, an earlier send of this very
	// transaction was applied and its response lost, or (a keyed request) an earlier
	// request with the same key opened the order. A ledger entry refused with the
	// hold's entry is the hold's UNHOLD (one key per hold): another order used the
	// hold, which the hold's own case below answers.
	if out.has(partOrder) || out.has(partLedger) && !out.has(partWait) {
		order, replayed, err := r.replay(ctx)
		if err == nil && order == nil {
			err = fmt.Errorf("order %s refused as existing, then not found", r.id)
		}
		if err != nil {
			return nil, err
		}
		return &answer{order: order, replayed: replayed}, nil
	}
	if out.has(partTicket) { // the admission opened another order already
		return nil, &inventory.SKUError{Err: inventory.ErrAdmissionRequired, SKU: r.req.Admission.SKU}
	}
	for _, f := range out.failed {
		if f.kind == partWait { // the hold passed or was used since it was read
			return nil, r.dropHold(ctx, f.line)
		}
	}
	f := out.failed[0]
	if f.kind == partLimit {
		return r.limitFailed(ctx, f.line)
	}
	if err := r.shardFailed(ctx, f.part, f.old); err != nil {
		return nil, err
	}
	return nil, nil
}

// limitFailed answers a refused purchase counter: ErrLimitExceeded, unless the limit
// changed since it was cached (then another round runs).
func (r *reservation) limitFailed(ctx context.Context, line int) (*answer, error) {
	lp := r.lines[line]
	if err := r.refresh(ctx, line); err != nil {
		return nil, err
	}
	if r.lines[line].rec.LimitPerUser == lp.rec.LimitPerUser {
		return nil, &inventory.SKUError{Err: inventory.ErrLimitExceeded, SKU: lp.line.SKU}
	}
	return nil, nil
}

// readBack answers a round whose outcome is unknown even after store.resend: this
// reservation's order if it is there, else outcomeUnknown (never ErrBusy).
func (r *reservation) readBack(ctx context.Context, cause error) (*inventory.Order, error) {
	order, mine, err := r.s.readBack(ctx, "reserve order "+r.id, r.id, cause, r.mine)
	if err == nil && !mine {
		err = outcomeUnknown("reserve order "+r.id, cause)
	}
	if err != nil {
		return nil, err
	}
	return order, nil
}

// mine reports whether o is the order this reservation writes: its user and cart (a
// copy of a keyed request finds the order of the key, also its user's and cart's).
func (r *reservation) mine(o *inventory.Order) bool {
	return o.UserID == r.req.UserID && o.CartHash == r.hash
}

// copyOf reports whether o, which this reservation found under its id, was opened by
// another request with the same idempotency key (another reservation's nonce): the
// answer is then a replay.
func (r *reservation) copyOf(o *inventory.Order) bool {
	return r.req.IdempotencyKey != "" && o.ReservedBy != r.nonce
}

// shardFailed explains a failed shard condition from the shard's old image and adjusts
// the plan, or returns the answer: off sale, or out of stock when a strongly consistent
// read of every shard cannot cover the line.
func (r *reservation) shardFailed(ctx context.Context, ro part, old map[string]types.AttributeValue) error {
	lp := &r.lines[ro.line]
	sku := lp.line.SKU
	var sh shardRecord
	if len(old) > 0 {
		if err := attributevalue.UnmarshalMap(old, &sh); err != nil {
			return fmt.Errorf("decode shard %d of %s: %w", ro.shard, sku, err)
		}
	}
	sameLayout := sh.ShardCount == 0 || sh.ShardCount == lp.rec.Shards
	switch {
	case len(old) > 0 && !sh.OnSale:
		return &inventory.SKUError{Err: inventory.ErrOffSale, SKU: sku}
	case len(old) > 0 && sh.SaleStartsAt > r.createdAt.UnixMilli():
		return &inventory.SaleNotStartedError{SKU: sku, StartsAt: fromMilli(sh.SaleStartsAt)}
	case len(old) > 0 && sh.Price == lp.rec.Price && sameLayout && sh.Available < lp.alloc[ro.shard]:
		r.s.catalog.noteShard(sku, ro.shard, sh.Available)
		if lp.rec.Shards == 1 {
			r.enter(ctx, ro.line, []shardRecord{sh}) // the condition read the one shard
			return &inventory.SKUError{Err: inventory.ErrStockOut, SKU: sku}
		}
		lp.seen = false // the record read before the transaction may be out of date
		if err := r.soldOutCheck(ctx, ro.line); err != nil {
			return err
		}
		return r.rereadShards(ctx)
	}
	// Missing shard, a changed price or shard count: the cached SKU record is stale.
	return r.refresh(ctx, ro.line)
}

// refresh re-reads line i's SKU record and shards (strongly consistent) and plans the
// line again from them.
func (r *reservation) refresh(ctx context.Context, i int) error {
	sku := r.lines[i].line.SKU
	r.s.catalog.forget(sku)
	entries, err := r.s.skuRecords(ctx, []string{sku}, tableOnly)
	if err != nil {
		return err
	}
	e, ok := entries[sku]
	if !ok {
		return &inventory.SKUError{Err: inventory.ErrSKUNotFound, SKU: sku}
	}
	return r.replan(ctx, i, e, shardsRead)
}

// replay reads the order under this reservation's id once its put found the id
// taken, or a keyed request was refused: the same user and cart get it, replayed when
// another request with the key opened it (copyOf; this reservation's own write, read
// back after a lost answer, is not a replay). Another cart under the same idempotency
// key gets ErrIdempotencyKeyReused. A nil order with nil error means there is none.
func (r *reservation) replay(ctx context.Context) (*inventory.Order, bool, error) {
	order, err := r.s.order(ctx, r.id)
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("read order %s: %w", r.id, err)
	case order == nil:
		return nil, false, nil
	case !r.mine(order) && r.req.IdempotencyKey != "":
		return nil, false, inventory.ErrIdempotencyKeyReused
	case !r.mine(order):
		return nil, false, fmt.Errorf("order id %s already taken by another order", r.id)
	}
	return order, r.copyOf(order), nil
}

// steadyRounds bounds how often a STOCK_OUT answer is re-checked while units are on
// the move between shards.
const steadyRounds = 6

// confirmStockOut plans line i from its shards, read after the line's SKU record
// was, and confirms a STOCK_OUT that allocation answers. Units in transit between
// shards while they were read (a reshard's MOVE) could be missed, so STOCK_OUT is
// answered only when the shards show that no MOVE touched them since that record
// (unmoved), or when one read of the record after them shows the same move counter
// and shard count (it brackets them), or else from reads of every shard that the
// record's move counter brackets unchanged (steadyShards, at most steadyRounds
// times). After a sell-out with no reshard under way that costs no read beyond the
// shards'. Other errors, and nil, pass through.
func (r *reservation) confirmStockOut(ctx context.Context, i int, shards []shardRecord) error {
	err := r.allocateFrom(i, shards)
	if !errors.Is(err, inventory.ErrStockOut) {
		return err
	}
	if unmoved(shards, r.lines[i].rec) {
		r.enter(ctx, i, shards)
		return err
	}
	sku, before := r.lines[i].line.SKU, r.lines[i].rec
	after, rerr := r.s.skuRecordOf(ctx, sku)
	if rerr != nil {
		return rerr
	}
	if after.Moves == before.Moves && after.Shards == before.Shards {
		r.s.catalog.put(*after, r.s.now())
		return err
	}
	for range steadyRounds {
		shards, rec, err := r.s.steadyShards(ctx, sku)
		if err != nil {
			return err
		}
		if rec == nil {
			continue // units moved while the shards were read
		}
		r.s.catalog.put(*rec, r.s.now())
		r.lines[i].rec = *rec
		return r.allocateFrom(i, shards)
	}
	return fmt.Errorf("reserve order %s: the shards of %s kept moving: %w", r.id, sku, inventory.ErrBusy)
}
