package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Orders: their records, reads, and the changes the domain decides on them (through
// transact, transition.go), besides the reservation that opens them (reservation.go).

// Order returns the order with id if it belongs to userID, read strongly consistently.
// Anyone else's order, an unknown id or a malformed id gives an error wrapping
// inventory.ErrOrderNotFound, so callers cannot probe for other users' orders.
func (s *OrderStore) Order(ctx context.Context, userID, id string) (*inventory.Order, error) {
	if !inventory.ValidOrderID(id) {
		return nil, inventory.ErrOrderNotFound
	}
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil || order.UserID != userID {
		return nil, inventory.ErrOrderNotFound
	}
	return order, s.withSecondPayments(ctx, order)
}

// Lookup returns the order with id whoever owns it, read strongly consistently, for
// trusted callers (payment notifications, operators, the local runner); a user's
// request must go through Order. Errors: inventory.ErrOrderNotFound, or a store error.
func (s *OrderStore) Lookup(ctx context.Context, id string) (*inventory.Order, error) {
	if !inventory.ValidOrderID(id) {
		return nil, inventory.ErrOrderNotFound
	}
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, inventory.ErrOrderNotFound
	}
	return order, s.withSecondPayments(ctx, order)
}

// withSecondPayments reads the refunds of order's second payments into order.Second
// (one GetItem each; most orders have none).
func (s *store) withSecondPayments(ctx context.Context, order *inventory.Order) error {
	order.Second = nil
	for _, no := range order.SecondRefunds {
		r, err := s.RefundByNo(ctx, no)
		if err != nil {
			return fmt.Errorf("order %s: %w", order.ID, err)
		}
		order.Second = append(order.Second, *r)
	}
	return nil
}

// order reads an order by id; nil without error when there is none.
func (s *store) order(ctx context.Context, id string) (*inventory.Order, error) {
	var rec orderRecord
	if err := s.get(ctx, s.tables.Orders, id, "order "+id, &rec); err != nil {
		return nil, err
	}
	if rec.Kind != kindOrder {
		return nil, nil
	}
	order, err := rec.order()
	if err != nil {
		return nil, fmt.Errorf("decode order %s: %w", id, err)
	}
	return order, nil
}

// Pay records a successful payment of p.OrderID exactly once (docs/design.md,
// "Payment"), decided by inventory.Order.Pay and written by transact:
//   - PENDING → PAID in one TransactWriteItems: the order (conditioned on PENDING,
//     paidAt and transactionId set), on-hand −q and reserved −q on exactly the shards
//     the order reserved (conditioned on reserved >= q), one COMMIT ledger entry per line;
//   - CANCELLED → PAID when every line's units are available again
//     (inventory.Order.LatePayment): one transaction takes them (available −q and
//     on-hand −q, conditioned on available >= q, on whichever shards hold them), counts
//     them on the purchase counters again, and writes RESERVE and COMMIT entries
//     distinct from the order's first RESERVE (ref <orderId>.late);
//   - CANCELLED → REFUND_PENDING otherwise, stock untouched;
//   - a payment already recorded (same transaction id) is inventory.Replayed.
//
// A payment racing a release on the same order either pays it (the release then does
// nothing) or finds it CANCELLED and takes the late path: never both.
//
// Errors: inventory.ErrOrderNotFound (no such order); inventory.ErrPaymentMismatch
// (amount or currency differ: nothing changed); inventory.ErrPaidTwice (the order was
// paid by another transaction: nothing changed, the money must be refunded by hand);
// inventory.ErrBusy (throttled, conflicted or unavailable: nothing changed, retry); or
// another store error.
func (s *OrderStore) Pay(ctx context.Context, p inventory.Payment) (*inventory.Order, inventory.PayResult, error) {
	order, err := s.payable(ctx, &p)
	if err != nil {
		return order, 0, err
	}
	o, c, err := transact(ctx, s.store, s.orderSubject(order.ID), order, func(ctx context.Context, o *inventory.Order, r inventory.Retry) (inventory.Change, error) {
		var stock map[string]inventory.StockNow
		if o.NeedsStock(p, r) {
			var err error
			if stock, err = s.stockNow(ctx, o); err != nil {
				return inventory.Change{}, err
			}
		}
		return o.Pay(p, stock, s.now(), r)
	})
	if err != nil {
		return o, 0, err
	}
	return o, c.PayResult(), nil
}

// payable fills p's PaidAt (now when zero, UTC) and reads the order it pays.
func (s *OrderStore) payable(ctx context.Context, p *inventory.Payment) (*inventory.Order, error) {
	if p.PaidAt.IsZero() {
		p.PaidAt = s.now()
	}
	p.PaidAt = p.PaidAt.UTC()
	if !inventory.ValidOrderID(p.OrderID) {
		return nil, fmt.Errorf("pay order %q: %w", p.OrderID, inventory.ErrOrderNotFound)
	}
	order, err := s.order(ctx, p.OrderID)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, fmt.Errorf("pay order %s: %w", p.OrderID, inventory.ErrOrderNotFound)
	}
	return order, nil
}

// stockNow reads, strongly consistent, the SKUs of order's lines as a late payment
// needs them, with their per-user limits (absent SKUs are gone).
func (s *OrderStore) stockNow(ctx context.Context, order *inventory.Order) (map[string]inventory.StockNow, error) {
	ids := make([]string, len(order.Items))
	for i, it := range order.Items {
		ids[i] = it.SKU
	}
	recs, err := s.skuRecords(ctx, ids, tableOnly)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for id, e := range recs {
		counts[id] = e.rec.Shards
	}
	shards, err := s.shardRecords(ctx, counts)
	if err != nil {
		return nil, err
	}
	stock := make(map[string]inventory.StockNow, len(recs))
	for id, e := range recs {
		avail := make(inventory.ShardStock, counts[id])
		for _, sh := range shards[id] {
			if sh.Shard >= 0 && sh.Shard < len(avail) && sh.OnSale {
				avail[sh.Shard] = sh.Available
			}
		}
		stock[id] = inventory.StockNow{OnSale: e.rec.OnSale, SaleStartsAt: fromMilli(e.rec.SaleStartsAt), LimitPerUser: e.rec.LimitPerUser, Shards: avail}
	}
	return stock, nil
}

// SetPrepay stores on order the WeChat Pay prepay_id of its JSAPI order and when it
// was obtained (at, UTC), so that repeated taps reuse one WeChat Pay order
// (inventory.Order.ReusablePrepay) and every release first asks WeChat Pay about it.
// It is one UpdateItem conditioned on the order still being PENDING (DynamoDB API
// Reference, UpdateItem, ConditionExpression).
//
// Errors: inventory.ErrNotPayable (the order left PENDING meanwhile: nothing stored);
// inventory.ErrBusy (throttled or unavailable); another store error.
func (s *OrderStore) SetPrepay(ctx context.Context, order *inventory.Order, prepayID string, at time.Time) error {
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("prepayId"), expression.Value(prepayID)).
			Set(expression.Name("prepayAt"), expression.Value(formatTime(at)))).
		WithCondition(expression.Name("status").Equal(expression.Value(string(inventory.StatusPending)))).
		Build()
	if err != nil {
		return fmt.Errorf("build prepay update of %s: %w", order.ID, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(order.ID),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("store prepay of order %s: no longer PENDING: %w", order.ID, inventory.ErrNotPayable)
	case err != nil:
		return s.storeError("store prepay of order "+order.ID, err)
	}
	return nil
}

type orderItemRecord struct {
	SKU       string         `dynamodbav:"skuId"`
	Qty       int            `dynamodbav:"qty"`
	UnitPrice int64          `dynamodbav:"unitPrice"`
	Shards    map[string]int `dynamodbav:"shards"`
	Limited   bool           `dynamodbav:"limited,omitempty"` // counted on the user's limit counter
}

type orderRecord struct {
	PK               string            `dynamodbav:"pk"`
	Kind             string            `dynamodbav:"kind"`
	UserID           string            `dynamodbav:"userId"`
	Status           string            `dynamodbav:"status"`
	Items            []orderItemRecord `dynamodbav:"items"`
	Amount           int64             `dynamodbav:"amount"`
	Currency         string            `dynamodbav:"currency"`
	CreatedAt        string            `dynamodbav:"createdAt"`
	CreatedMs        int64             `dynamodbav:"createdMs"` // CreatedAt in Unix ms: the OrdersByUser range key
	ExpiresAt        string            `dynamodbav:"expiresAt"`
	PaidAt           string            `dynamodbav:"paidAt,omitempty"`
	CancelledAt      string            `dynamodbav:"cancelledAt,omitempty"`
	CancelReason     string            `dynamodbav:"cancelReason,omitempty"`
	TransactionID    string            `dynamodbav:"transactionId,omitempty"`
	CartHash         string            `dynamodbav:"cartHash"`
	ReservedBy       string            `dynamodbav:"reservedBy,omitempty"`
	PendingBucket    string            `dynamodbav:"pendingBucket,omitempty"`
	PendingExpiresAt int64             `dynamodbav:"pendingExpiresAt,omitempty"`
	PrepayID         string            `dynamodbav:"prepayId,omitempty"`
	PrepayAt         string            `dynamodbav:"prepayAt,omitempty"`
	Refunds          []refundRecord    `dynamodbav:"refunds,omitempty"`
	RefundRev        int               `dynamodbav:"refundRev,omitempty"`
	DueCause         string            `dynamodbav:"dueCause,omitempty"`
	// refundFields are the one refund an order had before refunds came in parts: read
	// as its first refund (legacyRefund), never written again.
	refundFields
	Shipping      *shippingRecord `dynamodbav:"shipping,omitempty"`
	Presale       *presaleRecord  `dynamodbav:"presale,omitempty"`
	Subscriptions []string        `dynamodbav:"subscriptions,omitempty"`
	// SecondRefunds are the out_refund_no of its second payments' refunds, added by
	// SecondPayment (a string set).
	SecondRefunds []string `dynamodbav:"secondRefunds,stringset,omitempty"`
	// Address is the order's delivery address (personal data, see the README's privacy
	// notes), stored as the API takes it.
	Address *inventory.Address `dynamodbav:"address,omitempty"`
	// Aftersales are the buyer's after-sales (aftersales.go).
	Aftersales []aftersaleRecord `dynamodbav:"aftersales,omitempty"`
	// Receipt is WeChat's confirmation of receipt (receipt.go).
	Receipt *receiptRecord `dynamodbav:"receipt,omitempty"`
}

// refundRecord is one of an order's refunds (inventory.OrderRefund).
type refundRecord struct {
	RefundID    string             `dynamodbav:"refundId"`
	OutRefundNo string             `dynamodbav:"outRefundNo"`
	Lines       []refundLineRecord `dynamodbav:"lines"`
	Amount      int64              `dynamodbav:"amount"`
	Status      string             `dynamodbav:"status"`
	Since       string             `dynamodbav:"since"`
	Restocked   bool               `dynamodbav:"restocked,omitempty"`
	By          string             `dynamodbav:"by,omitempty"`
	Reason      string             `dynamodbav:"reason,omitempty"`
	// Body is inventory.OrderRefund.Body: lines and goods as asked, the reason apart.
	// Refunds written before carry the reason in it too (`lines=… goods=… reason="…"`,
	// the reason twice on the item): read as their body without it (bodyOf), and written
	// so when the order's refunds next change.
	Body         string `dynamodbav:"body,omitempty"`
	RefundedAt   string `dynamodbav:"refundedAt,omitempty"`
	RefundAmount int64  `dynamodbav:"refundAmount,omitempty"`
	Error        string `dynamodbav:"error,omitempty"`
	Resolution   string `dynamodbav:"resolution,omitempty"`
}

type refundLineRecord struct {
	SKU string `dynamodbav:"skuId"`
	Qty int    `dynamodbav:"qty"`
}

func newRefundRecord(r inventory.OrderRefund) refundRecord {
	rec := refundRecord{
		RefundID: r.RefundID, OutRefundNo: r.OutRefundNo, Amount: r.Amount, Status: string(r.Status), Since: formatTime(r.Since),
		Restocked: r.Restocked, By: r.By, Reason: r.Reason, Body: r.Body, RefundedAt: formatOptional(r.RefundedAt),
		RefundAmount: r.RefundAmount, Error: r.Error, Resolution: r.Resolution,
	}
	for _, l := range r.Lines {
		rec.Lines = append(rec.Lines, refundLineRecord(l))
	}
	return rec
}

func (r refundRecord) refund() (inventory.OrderRefund, error) {
	out := inventory.OrderRefund{
		RefundID: r.RefundID, OutRefundNo: r.OutRefundNo, Amount: r.Amount, Status: inventory.Status(r.Status),
		Restocked: r.Restocked, By: r.By, Reason: r.Reason, Body: bodyOf(r.Body), RefundAmount: r.RefundAmount, Error: r.Error,
		Resolution: r.Resolution,
	}
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, inventory.RefundLine(l))
	}
	var err error
	if out.Since, err = parseTime(r.Since); err != nil {
		return out, err
	}
	out.RefundedAt, err = optionalTime(r.RefundedAt)
	return out, err
}

// bodyOf is the body (inventory.RefundRequest.Body) a refund record holds: as
// written, or for one written while bodies held the reason too, what precedes its
// " reason=" (neither lines, which are SKU ids and quantities, nor goods, a number,
// hold a space).
func bodyOf(stored string) string {
	body, _, _ := strings.Cut(stored, " reason=")
	return body
}

// legacyRefund is the one refund of an order recorded before refunds came in parts:
// the whole order, under its first out_refund_no, refundId "all".
func (r orderRecord) legacyRefund(o *inventory.Order) (inventory.OrderRefund, error) {
	out := inventory.OrderRefund{
		RefundID: "all", OutRefundNo: r.OutRefundNo, Amount: r.Amount, Status: inventory.StatusRefunding,
		Restocked: r.Restocked, By: r.RefundBy, Reason: r.RefundReason, RefundAmount: r.RefundAmount, Error: r.RefundError,
	}
	if o.Status == inventory.StatusRefunded {
		out.Status = inventory.StatusRefunded
	}
	for _, it := range o.Items {
		out.Lines = append(out.Lines, inventory.RefundLine{SKU: it.SKU, Qty: it.Qty})
	}
	goods := inventory.KeepGoods
	if r.Restocked {
		goods = inventory.ReturnGoods
	}
	out.Body = inventory.RefundRequest{Goods: goods, Reason: r.RefundReason}.Body()
	var err error
	if out.Since, err = parseTime(r.RefundingAt); err != nil {
		return out, err
	}
	out.RefundedAt, err = optionalTime(r.RefundedAt)
	return out, err
}

// newOrderRecord is the item that holds o, every field of it: what a reservation
// puts, and what a change's update is the difference of (transition.go).
func newOrderRecord(o *inventory.Order) orderRecord {
	rec := orderRecord{
		PK: o.ID, Kind: kindOrder, UserID: o.UserID, Status: string(o.Status),
		Amount: o.Amount, Currency: o.Currency, CartHash: o.CartHash, ReservedBy: o.ReservedBy,
		CreatedAt: formatTime(o.CreatedAt), CreatedMs: o.CreatedAt.UnixMilli(), ExpiresAt: formatTime(o.ExpiresAt),
		PaidAt: formatOptional(o.PaidAt), CancelledAt: formatOptional(o.CancelledAt), CancelReason: string(o.CancelReason),
		TransactionID: o.TransactionID, PrepayID: o.PrepayID, PrepayAt: formatOptional(o.PrepayAt),
		RefundRev: o.RefundRev, DueCause: o.DueCause,
		Shipping: newShippingRecord(o.Shipping), Presale: newPresaleRecord(o.Presale), Subscriptions: o.Subscriptions,
		SecondRefunds: o.SecondRefunds, Address: o.Address, Aftersales: newAftersaleRecords(o.Aftersales),
		Receipt: newReceiptRecord(o.Receipt),
	}
	for _, r := range o.Refunds {
		rec.Refunds = append(rec.Refunds, newRefundRecord(r))
	}
	if o.Status == inventory.StatusPending {
		rec.PendingBucket = pendingBucket(o.ID)
		rec.PendingExpiresAt = o.ExpiresAt.UnixMilli()
	}
	for _, it := range o.Items {
		rec.Items = append(rec.Items, orderItemRecord{SKU: it.SKU, Qty: it.Qty, UnitPrice: it.UnitPrice, Shards: shardsToRecord(it.Shards), Limited: it.Limited})
	}
	return rec
}

func (r orderRecord) order() (*inventory.Order, error) {
	o := &inventory.Order{
		ID: r.PK, UserID: r.UserID, Status: inventory.Status(r.Status), Amount: r.Amount,
		Currency: r.Currency, CancelReason: inventory.CancelReason(r.CancelReason),
		TransactionID: r.TransactionID, CartHash: r.CartHash, ReservedBy: r.ReservedBy, PrepayID: r.PrepayID, RefundRev: r.RefundRev, DueCause: r.DueCause,
		Subscriptions: r.Subscriptions, SecondRefunds: slices.Sorted(slices.Values(r.SecondRefunds)), Address: r.Address,
	}
	var err error
	if o.Shipping, err = r.Shipping.shipping(); err != nil {
		return nil, err
	}
	if o.Presale, err = r.Presale.presale(); err != nil {
		return nil, err
	}
	if o.Aftersales, err = r.aftersales(); err != nil {
		return nil, err
	}
	if o.Receipt, err = r.Receipt.receipt(); err != nil {
		return nil, err
	}
	if o.CreatedAt, err = parseTime(r.CreatedAt); err != nil {
		return nil, err
	}
	if o.ExpiresAt, err = parseTime(r.ExpiresAt); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		dst **time.Time
		src string
	}{{&o.PaidAt, r.PaidAt}, {&o.CancelledAt, r.CancelledAt}, {&o.PrepayAt, r.PrepayAt}} {
		if *t.dst, err = optionalTime(t.src); err != nil {
			return nil, err
		}
	}
	for _, it := range r.Items {
		shards, err := shardsFromRecord(it.Shards)
		if err != nil {
			return nil, err
		}
		o.Items = append(o.Items, inventory.OrderItem{SKU: it.SKU, Qty: it.Qty, UnitPrice: it.UnitPrice, Shards: shards, Limited: it.Limited})
	}
	for _, rec := range r.Refunds {
		ref, err := rec.refund()
		if err != nil {
			return nil, fmt.Errorf("decode refund %s: %w", rec.OutRefundNo, err)
		}
		o.Refunds = append(o.Refunds, ref)
	}
	if r.OutRefundNo != "" && len(r.Refunds) == 0 {
		ref, err := r.legacyRefund(o)
		if err != nil {
			return nil, fmt.Errorf("decode refund %s: %w", r.OutRefundNo, err)
		}
		o.Refunds = []inventory.OrderRefund{ref}
	}
	return o, nil
}

// Release releases order (read just before and, when it has a WeChat Pay order,
// asked about there) for reason, as inventory.Order.Release decides, through the one
// transition path (transact): in one TransactWriteItems the order PENDING → CANCELLED
// (conditioned on PENDING and on the prepay_id as read), per reserved shard
// available += q and reserved −= q (conditioned on reserved >= q, so available never
// passes on-hand), the purchase counters given back, and one RELEASE ledger entry per
// line (attribute_not_exists). A timeout releases only an order whose window has ended.
// It returns the order as it stands and whether this call released its stock; an
// order not releasable (paid, released already, not yet due) is returned as it is.
// Any number of calls on one order, sequential or concurrent, release its stock at
// most once.
//
// Errors: inventory.ErrBusy (throttled, conflicted or unavailable; or a WeChat Pay
// order was opened since the read: ask WeChat Pay again; nothing released), or
// another store error.
func (s *OrderStore) Release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error) {
	seen, now := order.PrepayID, s.now()
	o, c, err := transact(ctx, s.store, s.orderSubject(order.ID), order, func(_ context.Context, o *inventory.Order, r inventory.Retry) (inventory.Change, error) {
		return o.Release(reason, seen, now, r)
	})
	if err != nil {
		return nil, false, err
	}
	return o, !c.None(), nil
}

// mustOrder reads an order that must exist.
func (s *store) mustOrder(ctx context.Context, id string) (*inventory.Order, error) {
	order, err := s.order(ctx, id)
	if err != nil {
		return nil, err
	}
	if order == nil {
		return nil, fmt.Errorf("order %s vanished: %w", id, inventory.ErrOrderNotFound)
	}
	return order, nil
}

// SetAddress sets the address of userID's order id to a (validated) while the order
// may still take one (inventory.Order.AddressChangeable): one UpdateItem conditioned on
// the owner, the status PENDING or PAID and no shipping recorded (DynamoDB API
// Reference, UpdateItem, ConditionExpression), so a shipment that lands first locks
// it. It returns the order as it then is. The same address again is no change and no
// error, whatever the order's state.
//
// Errors: inventory.ErrOrderNotFound (anyone else's, unknown or malformed id);
// inventory.ErrAddressLocked (shipped or closed: nothing changed); inventory.ErrBusy;
// another store error.
func (s *OrderStore) SetAddress(ctx context.Context, userID, id string, a inventory.Address) (*inventory.Order, error) {
	order, err := s.Order(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if order.Address != nil && *order.Address == a {
		return order, nil
	}
	if !order.AddressChangeable() {
		return nil, fmt.Errorf("set address of order %s: %w", id, inventory.ErrAddressLocked)
	}
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("address"), expression.Value(a))).
		WithCondition(expression.Name("userId").Equal(expression.Value(userID)).
			And(expression.Name("status").In(expression.Value(string(inventory.StatusPending)), expression.Value(string(inventory.StatusPaid)))).
			And(expression.AttributeNotExists(expression.Name("shipping")))).
		Build()
	if err != nil {
		return nil, fmt.Errorf("build address update of %s: %w", id, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(id),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return nil, fmt.Errorf("set address of order %s: changed meanwhile: %w", id, inventory.ErrAddressLocked)
	case err != nil:
		return nil, s.storeError("set address of order "+id, err)
	}
	order.Address = &a
	return order, nil
}
