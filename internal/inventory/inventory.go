// Package inventory holds stockguard's domain rules: carts and their validation, orders
// and their state machine (which status may follow which, what a payment or a cancel
// does), SKUs with their bounds and how their sale status is shown, how a line is
// spread over a SKU's shards, what each ledger operation does to the counters
// (docs/design.md, "The ledger": Op.Effect), and the errors callers branch on. It knows nothing
// of DynamoDB, Lambda or HTTP: the store asks it and writes what it decides.
//
// Quantities are whole units; money is integer minor units (fen) in CNY.
package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Cart limits from the API contract (docs/contract.md, "POST /orders").
const (
	// MaxLines is the most distinct SKU lines one order may hold.
	MaxLines = 20
	// MaxQty is the most units of one SKU one order may hold.
	MaxQty = 9999
	// Currency is the only currency stockguard sells in (WeChat Pay APIv3 amount.currency).
	Currency = "CNY"
)

var (
	skuIDPattern   = regexp.MustCompile(`^[0-9A-Za-z_.:-]{1,64}$`)
	orderIDPattern = regexp.MustCompile(`^[0-9A-Za-z_-]{6,32}$`)
)

// Errors callers branch on with errors.Is. Errors about one SKU come wrapped in a
// *SKUError that names it.
var (
	// ErrInvalidRequest: the request breaks the contract's input rules.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrSKUNotFound: no SKU has that id.
	ErrSKUNotFound = errors.New("SKU not found")
	// ErrStockOut: the SKU's shards together hold fewer available units than the line asks.
	ErrStockOut = errors.New("not enough stock available")
	// ErrOffSale: the SKU exists but is not on sale.
	ErrOffSale = errors.New("SKU is not on sale")
	// ErrLimitExceeded: the line would take the user past the SKU's per-user limit.
	ErrLimitExceeded = errors.New("per-user purchase limit exceeded")
	// ErrOrderNotFound: no order with that id belongs to the caller.
	ErrOrderNotFound = errors.New("order not found")
	// ErrNotCancellable: the order is paid (or being refunded), so a user cannot cancel it.
	ErrNotCancellable = errors.New("order cannot be cancelled")
	// ErrPaymentMismatch: a payment's amount or currency differs from its order's.
	ErrPaymentMismatch = errors.New("payment does not match the order")
	// ErrPaidTwice: a payment for an order already paid by another transaction.
	ErrPaidTwice = errors.New("order already paid by another transaction")
	// ErrIdempotencyKeyReused: the idempotency key was used with a different cart.
	ErrIdempotencyKeyReused = errors.New("idempotency key reused with a different request")
	// ErrAftersaleNotFound: the order has no after-sale with that aftersaleId.
	// docs/contract.md: 404 AFTERSALE_NOT_FOUND.
	ErrAftersaleNotFound = errors.New("after-sale not found")
	// ErrBusy: the store stayed throttled or conflicted after bounded retries; nothing
	// was reserved.
	ErrBusy = errors.New("store busy")
	// ErrSaleNotStarted: the SKU's sale starts later (see *SaleNotStartedError).
	ErrSaleNotStarted = errors.New("sale has not started")
	// ErrSKUExists: a different SKU with that id exists (POST /admin/skus).
	ErrSKUExists = errors.New("SKU already exists")
)

// SaleNotStartedError is a reservation refused because the SKU's sale starts at
// StartsAt (UTC), after the order's time. It unwraps to a *SKUError around
// ErrSaleNotStarted, so errors.Is(err, ErrSaleNotStarted) and errors.As(err,
// new(*SKUError)) both hold.
type SaleNotStartedError struct {
	SKU      string    // the SKU id
	StartsAt time.Time // when the sale starts
}

// Error reports the SKU and the start time.
func (e *SaleNotStartedError) Error() string {
	return fmt.Sprintf("%v: %s starts at %s", ErrSaleNotStarted, e.SKU, e.StartsAt.UTC().Format(time.RFC3339))
}

// Unwrap returns the *SKUError naming the SKU.
func (e *SaleNotStartedError) Unwrap() error { return &SKUError{Err: ErrSaleNotStarted, SKU: e.SKU} }

// SKUError ties one of the sentinel errors above to the SKU it is about.
type SKUError struct {
	Err error  // ErrSKUNotFound, ErrStockOut, ErrOffSale or ErrLimitExceeded
	SKU string // the SKU id the line named
}

// Error reports the sentinel's text and the SKU.
func (e *SKUError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.SKU) }

// Unwrap lets errors.Is see the sentinel.
func (e *SKUError) Unwrap() error { return e.Err }

// InvalidError returns an *InvalidRequestError (wrapping ErrInvalidRequest) whose
// reason, the formatted text, is safe to show to the client.
func InvalidError(format string, args ...any) error {
	return &InvalidRequestError{Reason: fmt.Sprintf(format, args...)}
}

// Line is one cart line as the client sends it: a SKU id and a quantity in units.
type Line struct {
	SKU string `json:"skuId"` // SKU id, 1-64 of [0-9A-Za-z_.:-]
	Qty int    `json:"qty"`   // units, 1..MaxQty
}

// Cart is a validated cart: 1..MaxLines lines with distinct SKU ids, sorted by SKU id,
// each quantity 1..MaxQty. Build it with NewCart.
type Cart []Line

// NewCart validates lines and merges those naming the same SKU (quantities summed)
// before checking bounds, as the contract says. It returns an error wrapping
// ErrInvalidRequest for a bad SKU id, a quantity below 1 or (after merging) above
// MaxQty, or a line count (after merging) of 0 or above MaxLines; its message names
// POST /orders' field, items.
func NewCart(lines []Line) (Cart, error) { return newCart("items", lines) }

// newCart is NewCart for lines given in the request's field, whose name the errors use
// (items for an order, lines for a refund).
func newCart(field string, lines []Line) (Cart, error) {
	merged := make(map[string]int, len(lines))
	for i, l := range lines {
		if err := CheckSKUID(fmt.Sprintf("%s[%d].skuId", field, i), l.SKU); err != nil {
			return nil, err
		}
		if l.Qty < 1 || l.Qty > MaxQty {
			return nil, InvalidError("%s[%d].qty must be an integer from 1 to %d", field, i, MaxQty)
		}
		merged[l.SKU] += l.Qty
	}
	if len(merged) == 0 || len(merged) > MaxLines {
		return nil, InvalidError("%s must hold 1 to %d distinct SKUs", field, MaxLines)
	}
	cart := make(Cart, 0, len(merged))
	for sku, qty := range merged {
		if qty > MaxQty {
			return nil, InvalidError("total qty for %s must not exceed %d", sku, MaxQty)
		}
		cart = append(cart, Line{SKU: sku, Qty: qty})
	}
	slices.SortFunc(cart, func(a, b Line) int { return strings.Compare(a.SKU, b.SKU) })
	return cart, nil
}

// Hash is a stable digest of the merged cart (hex SHA-256): two requests whose lines
// merge to the same cart have the same hash, whatever their order or splitting.
func (c Cart) Hash() string {
	h := sha256.New()
	for _, l := range c {
		h.Write([]byte(l.SKU))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(l.Qty)))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ValidOrderID reports whether id has the shape of a stockguard order id, which is a
// valid WeChat Pay out_trade_no: 6-32 characters of [0-9A-Za-z_-].
func ValidOrderID(id string) bool { return orderIDPattern.MatchString(id) }

// NewOrderID returns a fresh order id: 32 hex characters of a UUIDv7 (time-ordered,
// 74 random bits), a valid out_trade_no.
func NewOrderID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new order id: %w", err)
	}
	return strings.ReplaceAll(u.String(), "-", ""), nil
}

// KeyedOrderID is the order id of user's request with Idempotency-Key key: 32 hex
// digits of SHA-256 over both (a 0 byte between, so that no two pairs give the same
// input). The order's put is conditioned on its id being new, so a copy of the request
// finds the order that the first one opened, for as long as the order is kept: that
// is the key's idempotency, with no record of its own (docs/design.md, "Reservation").
func KeyedOrderID(user, key string) string {
	sum := sha256.Sum256([]byte("order\x00" + user + "\x00" + key))
	return hex.EncodeToString(sum[:16])
}

// Status is an order's lifecycle state (docs/design.md, "State machine").
type Status string

// Order statuses.
const (
	StatusPending       Status = "PENDING"
	StatusPaid          Status = "PAID"
	StatusCancelled     Status = "CANCELLED"
	StatusRefundPending Status = "REFUND_PENDING"
	StatusRefunding     Status = "REFUNDING"
	StatusRefunded      Status = "REFUNDED"
)

// CancelReason says why an order was cancelled.
type CancelReason string

// Cancel reasons.
const (
	CancelUser    CancelReason = "USER"
	CancelTimeout CancelReason = "TIMEOUT"
)

// OrderItem is one reserved line of an order. Shards maps the SKU's shard number to the
// units reserved on it; the units sum to Qty.
type OrderItem struct {
	SKU       string      // SKU id
	Qty       int         // units reserved
	UnitPrice int64       // fen, from the SKU record when the order was placed
	Shards    map[int]int // shard number → units reserved on it
	Limited   bool        // the units were counted against the user's per-SKU limit
}

// Order is a customer order. Amount is Σ Qty×UnitPrice in fen; times are UTC.
type Order struct {
	ID            string       // out_trade_no-compatible id, see NewOrderID
	UserID        string       // owner: the JWT sub claim
	Status        Status       // lifecycle state
	Items         []OrderItem  // one per distinct SKU, sorted by SKU id
	Amount        int64        // fen: Σ Qty × UnitPrice
	Currency      string       // always Currency (CNY)
	CreatedAt     time.Time    // when the reservation was made
	ExpiresAt     time.Time    // end of the payment window: CreatedAt + payment timeout
	PaidAt        *time.Time   // set once PAID
	CancelledAt   *time.Time   // set once CANCELLED
	CancelReason  CancelReason // USER or TIMEOUT once CANCELLED
	TransactionID string       // WeChat Pay transaction_id once paid
	CartHash      string       // Cart.Hash of the request that opened it
	// ReservedBy is the reservation that opened it (the store's nonce of that
	// Reserve call): a copy of a keyed request, which shares the order id, tells the
	// order it finds from one it opened itself by it.
	ReservedBy string
	PrepayID   string     // WeChat Pay prepay_id of the JSAPI order for it, once a payment was started
	PrepayAt   *time.Time // when PrepayID was obtained (it is valid PrepayLifetime)
	// DueCause says why a payment after its release could not be honoured (once
	// REFUND_PENDING: DueNoStock, DueOffSale, DueNotStarted, DueOverLimit, DueTooLarge).
	DueCause string
	// Refunds are the refunds of its payment, in the order they were started (see
	// StartRefund): while they cover part of what was paid the order stays PAID; the
	// refund that covers the rest makes it REFUNDING, and it is REFUNDED once every
	// refund is.
	Refunds []OrderRefund
	// RefundRev counts the changes of Refunds: every refund change is conditioned on
	// it as read (GuardRefunds), so two refunds of one order never overwrite each other.
	RefundRev int
	// Shipping is what the merchant shipped and where its upload to WeChat stands (see
	// Order.Ship); nil until the first shipment.
	Shipping *Shipping
	// Presale is the order's presale declaration to WeChat (see Order.DeclarePresale);
	// nil when it ships within 15 days of payment.
	Presale *Presale
	// Subscriptions are the template ids of WeChat subscribe messages the buyer accepted
	// at checkout (wx.requestSubscribeMessage), for this order's messages.
	Subscriptions []string
	// SecondRefunds are the out_refund_no of the refunds of second payments of the order
	// (ExtraOutRefundNo: each a refund of its own record, owed back whole), sorted; and
	// Second those refunds as read with the order for its views (nil when not read).
	SecondRefunds []string
	Second        []Refund
	// Aftersales are the buyer's after-sale requests, oldest first (aftersale.go).
	Aftersales []Aftersale
	// Address is where the parcel goes (nil when no line ships by express).
	Address *Address
	// Receipt is WeChat's confirmation that the parcels were received (see
	// Order.ConfirmReceipt); nil until WeChat reports one.
	Receipt *Receipt
}

// SaleStatus is how a SKU's availability is shown to buyers.
type SaleStatus string

// Sale statuses (docs/contract.md, "GET /skus/{skuId}").
const (
	SaleUpcoming SaleStatus = "UPCOMING"
	SaleOnSale   SaleStatus = "ON_SALE"
	SaleLowStock SaleStatus = "LOW_STOCK"
	SaleSoldOut  SaleStatus = "SOLD_OUT"
	SaleOffSale  SaleStatus = "OFF_SALE"
)

// SKU is a sellable item with its stock summed over all its shards.
type SKU struct {
	ID           string // SKU id
	Name         string // shown to buyers
	Price        int64  // fen
	Currency     string // always Currency (CNY)
	OnSale       bool   // false: orders answer SKU_OFF_SALE
	Shards       int    // number of stock shard items, ≥ 1
	LimitPerUser int    // most units one user may hold in open or paid orders; 0 = no limit
	OnHand       int    // physical units
	Available    int    // sellable units; reserved = OnHand − Available
	// SaleStartsAt is when orders are first accepted (UTC); zero means no start time.
	SaleStartsAt time.Time
	// Delivery is DeliveryExpress (its orders need an address) or DeliveryNone.
	Delivery string
	// Queue is the SKU's waiting room (docs/design.md, "Waiting room"); the zero
	// value is none.
	Queue QueueSettings
}

// Upcoming reports whether the SKU's sale starts after now.
func (s SKU) Upcoming(now time.Time) bool { return now.Before(s.SaleStartsAt) }

// Status derives the sale status shown at now: OFF_SALE when not on sale, UPCOMING
// before SaleStartsAt, SOLD_OUT when nothing is available, LOW_STOCK when at most
// max(5, OnHand/10) units are available, ON_SALE otherwise.
func (s SKU) Status(now time.Time) SaleStatus {
	switch {
	case !s.OnSale:
		return SaleOffSale
	case s.Upcoming(now):
		return SaleUpcoming
	case s.Available <= 0:
		return SaleSoldOut
	case s.Available <= max(5, s.OnHand/10):
		return SaleLowStock
	default:
		return SaleOnSale
	}
}

// Sellable is the number of units a buyer could order at now: Available while on
// sale, 0 when off sale or before SaleStartsAt.
func (s SKU) Sellable(now time.Time) int {
	if !s.OnSale || s.Available < 0 || s.Upcoming(now) {
		return 0
	}
	return s.Available
}

// ValidSKUID reports whether id has the shape of a SKU id: 1-64 of [0-9A-Za-z_.:-],
// other than "." and ".." (URL dot segments: a client resolves them out of a path such
// as /admin/skus/{skuId} before it is sent, RFC 3986 section 5.2.4, so such a SKU could
// be sold but never managed).
func ValidSKUID(id string) bool {
	return skuIDPattern.MatchString(id) && id != "." && id != ".."
}

// The id checks below are the one validation of an id wherever a request carries it, in
// a body or in a route's path (httpapi checks every path parameter with them). Each
// returns nil for a valid id, else an *InvalidRequestError naming field (e.g. "skuId",
// "items[0].skuId") and the rule, never the value: an id of any length is not echoed
// back to the client.

// CheckSKUID checks a SKU id (ValidSKUID): 1-64 of [0-9A-Za-z_.:-], other than "." and "..".
func CheckSKUID(field, id string) error {
	return check(ValidSKUID(id), field, `1-64 characters of [0-9A-Za-z_.:-], other than "." and ".."`)
}

// CheckOrderID checks an order id (ValidOrderID): 6-32 of [0-9A-Za-z_-].
func CheckOrderID(field, id string) error {
	return check(ValidOrderID(id), field, "6-32 characters of [0-9A-Za-z_-]")
}

// CheckTicketID checks a waiting-room ticket id (ValidTicketID): 32 lower-case hex digits.
func CheckTicketID(field, id string) error {
	return check(ValidTicketID(id), field, "32 lower-case hex digits")
}

// CheckOutRefundNo checks an out_refund_no (ValidOutRefundNo): 1-64 of [0-9A-Za-z_-|*@].
func CheckOutRefundNo(field, no string) error {
	return check(ValidOutRefundNo(no), field, "1-64 characters of [0-9A-Za-z_-|*@]")
}

// CheckAftersaleID checks an aftersaleId: 1 to MaxAftersaleIDLength printable ASCII.
func CheckAftersaleID(field, id string) error {
	return check(validKey(id, MaxAftersaleIDLength), field, fmt.Sprintf("1 to %d printable ASCII characters", MaxAftersaleIDLength))
}

// check is nil when ok, else an *InvalidRequestError saying field must be rule.
func check(ok bool, field, rule string) error {
	if ok {
		return nil
	}
	return InvalidError("%s must be %s", field, rule)
}
