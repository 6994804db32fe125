package dynamo

import (
	"crypto/sha256"
	"encoding/base64"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Ledger operations as stored in the "op" attribute of stock_log entries (see
// inventory.Op for what each does to the counters).
const (
	OpReserve = string(inventory.OpReserve)
	OpRelease = string(inventory.OpRelease)
	OpCommit  = string(inventory.OpCommit)
	OpReturn  = string(inventory.OpReturn)
	OpAdjust  = string(inventory.OpAdjust)
	OpMove    = string(inventory.OpMove)
	OpRepair  = string(inventory.OpRepair)
)

// Item kinds, stored in the "kind" attribute so a scan can tell items apart.
const (
	kindSKU   = "SKU"
	kindShard = "SHARD"
	kindOrder = "ORDER"
	kindIdem  = "IDEMPOTENCY"
	kindLimit = "LIMIT"
	kindExtra = "EXTRA_PAYMENT" // a second payment of a paid order, refunded (see SecondPayment)
	kindMark  = "REFUNDING"     // a refund under way (see refundingRecord)
)

func skuKey(sku string) string             { return sku }
func shardKey(sku string, n int) string    { return sku + "#shard#" + strconv.Itoa(n) }
func limitKey(sku, user string) string     { return "limit#" + sku + "#" + user }
func ledgerKey(ref, op, sku string) string { return ref + "#" + op + "#" + sku }
func pkOf(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}
}

// idemKey digests user and key so that neither can forge the other's record
// (a '#' inside either would otherwise make two pairs collide).
func idemKey(user, key string) string {
	sum := sha256.Sum256([]byte(user + "\x00" + key))
	return "idem#" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// bucket spreads keys over n index partitions: FNV-1a of key, modulo n.
func bucket(key string, n int) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return strconv.Itoa(int(h.Sum32() % uint32(n)))
}

// pendingBucket spreads PENDING orders over PendingBuckets GSI partitions.
func pendingBucket(orderID string) string { return "P" + bucket(orderID, PendingBuckets) }

type skuRecord struct {
	PK           string `dynamodbav:"pk"`
	Kind         string `dynamodbav:"kind"`
	SKU          string `dynamodbav:"skuId"`
	Name         string `dynamodbav:"name"`
	Price        int64  `dynamodbav:"price"`
	Currency     string `dynamodbav:"currency"`
	OnSale       bool   `dynamodbav:"onSale"`
	Shards       int    `dynamodbav:"shards"`
	LimitPerUser int    `dynamodbav:"limitPerUser"`
	SaleStartsAt int64  `dynamodbav:"saleStartsAt,omitempty"` // Unix milliseconds; 0: none
	// Moves counts changes of where the SKU's units lie (shard count changes and MOVE
	// transactions); a reader that sees it unchanged around its shard reads saw no
	// unit in transit (see settledShards).
	Moves      int    `dynamodbav:"moves"`
	CreateHash string `dynamodbav:"createHash,omitempty"` // digest of the create request (EnsureSKU)
	// Retired keeps, per shard number a reshard deleted, the shard's seq and epoch at
	// the deletion: reconcile's cut of the deleted shard, and where the shard carries
	// on if it is grown again (see dropShards).
	Retired   map[string]ShardMark `dynamodbav:"retired,omitempty"`
	UpdatedBy string               `dynamodbav:"updatedBy,omitempty"` // principal of the last change
	UpdatedAt int64                `dynamodbav:"updatedAt,omitempty"` // Unix milliseconds of the last change
}

type shardRecord struct {
	PK        string `dynamodbav:"pk"`
	Kind      string `dynamodbav:"kind"`
	SKU       string `dynamodbav:"skuId"`
	Shard     int    `dynamodbav:"shard"`
	Available int    `dynamodbav:"available"`
	Reserved  int    `dynamodbav:"reserved"` // units held by PENDING orders: always onHand − available
	OnHand    int    `dynamodbav:"onHand"`
	Price     int64  `dynamodbav:"price"`
	OnSale    bool   `dynamodbav:"onSale"`
	// Copies of the SKU record's sale start (Unix ms, 0: none) and shard count, so the
	// reservation's condition reads them on the one item it updates.
	SaleStartsAt int64 `dynamodbav:"saleStartsAt,omitempty"`
	ShardCount   int   `dynamodbav:"shardCount,omitempty"`
	// Seq counts the ledger entries that ever moved the shard; Epoch is moved on only
	// by reconcile's cuts (see cut.go).
	Seq   int `dynamodbav:"seq"`
	Epoch int `dynamodbav:"epoch"`
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
	ExpiresAt        string            `dynamodbav:"expiresAt"`
	PaidAt           string            `dynamodbav:"paidAt,omitempty"`
	CancelledAt      string            `dynamodbav:"cancelledAt,omitempty"`
	CancelReason     string            `dynamodbav:"cancelReason,omitempty"`
	TransactionID    string            `dynamodbav:"transactionId,omitempty"`
	CartHash         string            `dynamodbav:"cartHash"`
	PendingBucket    string            `dynamodbav:"pendingBucket,omitempty"`
	PendingExpiresAt int64             `dynamodbav:"pendingExpiresAt,omitempty"`
	PrepayID         string            `dynamodbav:"prepayId,omitempty"`
	PrepayAt         string            `dynamodbav:"prepayAt,omitempty"`
	refundFields
}

// refundFields are the refund attributes shared by orders and second-payment records
// (see refund.go).
type refundFields struct {
	OutRefundNo  string `dynamodbav:"outRefundNo,omitempty"`
	RefundingAt  string `dynamodbav:"refundingAt,omitempty"`
	Restocked    bool   `dynamodbav:"restocked,omitempty"`
	RefundBy     string `dynamodbav:"refundBy,omitempty"`
	RefundReason string `dynamodbav:"refundReason,omitempty"`
	RefundedAt   string `dynamodbav:"refundedAt,omitempty"`
	RefundAmount int64  `dynamodbav:"refundAmount,omitempty"`
	RefundError  string `dynamodbav:"refundError,omitempty"`
}

// refundingRecord marks a refund REFUNDING (pk = refunding#<out_refund_no>): put in
// the transaction that starts the refund, deleted in the one that ends it, so the
// sparse RefundingBySince index lists exactly the refunds under way. (A marker of its
// own rather than attributes on the order: an item enters and leaves the index whole.)
type refundingRecord struct {
	PK             string `dynamodbav:"pk"`
	Kind           string `dynamodbav:"kind"`
	RefundBucket   string `dynamodbav:"refundBucket"`
	RefundingSince int64  `dynamodbav:"refundingSince"` // Unix milliseconds
}

// extraRecord is a second successful payment of an order already paid (pk =
// refund#<out_refund_no>, the number derived from its transaction id): owed back
// whole, refunded without touching the order.
type extraRecord struct {
	PK            string `dynamodbav:"pk"`
	Kind          string `dynamodbav:"kind"`
	OrderID       string `dynamodbav:"orderId"`
	TransactionID string `dynamodbav:"transactionId"`
	Amount        int64  `dynamodbav:"amount"`
	Currency      string `dynamodbav:"currency"`
	PaidAt        string `dynamodbav:"paidAt"`
	Status        string `dynamodbav:"status"`
	refundFields
}

type idemRecord struct {
	PK       string `dynamodbav:"pk"`
	Kind     string `dynamodbav:"kind"`
	UserID   string `dynamodbav:"userId"`
	OrderID  string `dynamodbav:"orderId"`
	CartHash string `dynamodbav:"cartHash"`
	TTL      int64  `dynamodbav:"ttl"` // Unix seconds; DynamoDB TTL deletes the record after it
}

type ledgerRecord struct {
	PK         string         `dynamodbav:"pk"`
	Ref        string         `dynamodbav:"ref"`
	Op         string         `dynamodbav:"op"`
	SKU        string         `dynamodbav:"skuId"`
	Qty        int            `dynamodbav:"qty"`
	DAvailable int            `dynamodbav:"dAvailable"`
	DOnHand    int            `dynamodbav:"dOnHand"`
	Shards     map[string]int `dynamodbav:"shards"`
	At         int64          `dynamodbav:"at"` // Unix milliseconds
	Reason     string         `dynamodbav:"reason,omitempty"`
	By         string         `dynamodbav:"by,omitempty"` // operator entries: the caller's IAM principal ARN
	// Shard, on REPAIR entries only, is the one shard whose counters DAvailable and
	// DOnHand (signed) apply to; other entries spread Qty over Shards.
	Shard *int `dynamodbav:"shard,omitempty"`
	// Counter corrections a REPAIR entry records: how much it changed the shard's
	// available and onHand counters (not ledger deltas: see reconcile).
	FixAvailable int `dynamodbav:"fixAvailable,omitempty"`
	FixOnHand    int `dynamodbav:"fixOnHand,omitempty"`
	// Bucket is the LedgerByTime index's hash key (see ledgerBucket).
	Bucket string `dynamodbav:"ledgerBucket"`
	// SKUBucket is the LedgerBySku index's hash key (see skuLedgerBucket).
	SKUBucket string `dynamodbav:"skuBucket"`
	// Epochs are the epochs of the shards (number → epoch) the entry moved, as they
	// were when it was written (see cut.go).
	Epochs map[string]int `dynamodbav:"epochs,omitempty"`
}

const timeLayout = time.RFC3339Nano

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

// formatOptional is formatTime of *t, "" for nil.
func formatOptional(t *time.Time) string {
	if t == nil {
		return ""
	}
	return formatTime(*t)
}

func optionalTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := parseTime(s)
	return &t, err
}

func shardsToRecord(m map[int]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[strconv.Itoa(k)] = v
	}
	return out
}

func shardsFromRecord(m map[string]int) (map[int]int, error) {
	out := make(map[int]int, len(m))
	for k, v := range m {
		n, err := strconv.Atoi(k)
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// newOrderRecord is the item that holds o, every field of it: what a reservation
// puts, and what a change's update is the difference of (transition.go).
func newOrderRecord(o *inventory.Order) orderRecord {
	rec := orderRecord{
		PK: o.ID, Kind: kindOrder, UserID: o.UserID, Status: string(o.Status),
		Amount: o.Amount, Currency: o.Currency, CartHash: o.CartHash,
		CreatedAt: formatTime(o.CreatedAt), ExpiresAt: formatTime(o.ExpiresAt),
		PaidAt: formatOptional(o.PaidAt), CancelledAt: formatOptional(o.CancelledAt), CancelReason: string(o.CancelReason),
		TransactionID: o.TransactionID, PrepayID: o.PrepayID, PrepayAt: formatOptional(o.PrepayAt),
		refundFields: refundFields{
			OutRefundNo: o.OutRefundNo, RefundingAt: formatOptional(o.RefundingAt), Restocked: o.Restocked,
			RefundBy: o.RefundBy, RefundReason: o.RefundReason, RefundedAt: formatOptional(o.RefundedAt),
			RefundAmount: o.RefundAmount, RefundError: o.RefundError,
		},
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

// refundState is the part of the record holding a refund (its order, or a second
// payment's record) that the refund's result changes, under the same attribute names
// on both.
type refundState struct {
	Status       string `dynamodbav:"status"`
	OutRefundNo  string `dynamodbav:"outRefundNo,omitempty"`
	RefundedAt   string `dynamodbav:"refundedAt,omitempty"`
	RefundAmount int64  `dynamodbav:"refundAmount,omitempty"`
	RefundError  string `dynamodbav:"refundError,omitempty"`
}

func newRefundState(r *inventory.Refund) refundState {
	return refundState{
		Status: string(r.Status), OutRefundNo: r.OutRefundNo, RefundedAt: formatOptional(r.RefundedAt),
		RefundAmount: r.RefundAmount, RefundError: r.Error,
	}
}

func (r orderRecord) order() (*inventory.Order, error) {
	o := &inventory.Order{
		ID: r.PK, UserID: r.UserID, Status: inventory.Status(r.Status), Amount: r.Amount,
		Currency: r.Currency, CancelReason: inventory.CancelReason(r.CancelReason),
		TransactionID: r.TransactionID, CartHash: r.CartHash, PrepayID: r.PrepayID,
		OutRefundNo: r.OutRefundNo, Restocked: r.Restocked, RefundBy: r.RefundBy, RefundReason: r.RefundReason,
		RefundAmount: r.RefundAmount, RefundError: r.RefundError,
	}
	var err error
	if o.CreatedAt, err = parseTime(r.CreatedAt); err != nil {
		return nil, err
	}
	if o.ExpiresAt, err = parseTime(r.ExpiresAt); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		dst **time.Time
		src string
	}{{&o.PaidAt, r.PaidAt}, {&o.CancelledAt, r.CancelledAt}, {&o.PrepayAt, r.PrepayAt}, {&o.RefundingAt, r.RefundingAt}, {&o.RefundedAt, r.RefundedAt}} {
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
	return o, nil
}
