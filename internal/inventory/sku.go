package inventory

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// SKU bounds.
const (
	// MaxShards is the most stock shard items one SKU may be split into, so that one
	// order line's shards plus the order fit in one transaction.
	MaxShards = 64
	// MaxPrice is the highest unit price, in fen (¥10,000,000), so that no order amount
	// (at most MaxLines lines × MaxQty units) can overflow.
	MaxPrice = 1_000_000_000
)

// NewSKU describes a SKU to put on sale.
type NewSKU struct {
	ID           string // 1-64 of [0-9A-Za-z_.:-]
	Name         string // shown to buyers
	Price        int64  // fen, 1..MaxPrice
	Stock        int    // initial on-hand units, ≥ 0
	LimitPerUser int    // most units per user over all their orders, 0 = no limit
	Shards       int    // stock shard items, 1..MaxShards; 0 means ShardsForPeak(PeakOrdersPerSecond)
	Ref          string // adjustment id naming the initial ADJUST ledger entry; "" means "init"
	OffSale      bool   // create it off sale (the zero value puts it on sale)
	By           string // who creates it (the caller's IAM principal ARN), recorded on the ledger
	// SaleStartsAt, when not zero, is the first instant orders are accepted (UTC).
	SaleStartsAt time.Time
	// PeakOrdersPerSecond is the operator's expected peak of orders per second for
	// the SKU's sale, ≥ 0; it sizes Shards when Shards is 0 (0: no expectation, 1 shard).
	PeakOrdersPerSecond int
	// Delivery is DeliveryExpress or DeliveryNone; "" means DeliveryExpress.
	Delivery string
	// Queue is the SKU's waiting room (QueueSettings.Validate); zero: none.
	Queue QueueSettings
}

// WithDefaults fills the zero fields that have defaults: Shards
// ShardsForPeak(PeakOrdersPerSecond) (1 without a peak), Ref "init", Delivery
// DeliveryExpress.
func (n NewSKU) WithDefaults() NewSKU {
	if n.Shards == 0 {
		n.Shards = ShardsForPeak(n.PeakOrdersPerSecond)
	}
	if n.Ref == "" {
		n.Ref = "init"
	}
	if n.Delivery == "" {
		n.Delivery = DeliveryExpress
	}
	return n
}

// Validate checks n (defaults filled) against the SKU bounds. It returns an error
// wrapping ErrInvalidRequest, with a message safe to show, for a bad id, a name that
// is empty, too long or not text, a price outside 1..MaxPrice fen, a stock or limit
// outside 0..MaxStock, a negative peak, or a shard count outside 1..MaxShards.
func (n NewSKU) Validate() error {
	if err := CheckSKUID("skuId", n.ID); err != nil {
		return err
	}
	switch {
	case !validText(n.Name, MaxNameLength):
		return InvalidError("SKU %s name must be 1 to %d %s", n.ID, MaxNameLength, TextRule)
	case n.Price < 1 || n.Price > MaxPrice:
		return InvalidError("SKU %s price must be 1 to %d fen", n.ID, int64(MaxPrice))
	case n.Stock < 0 || n.LimitPerUser < 0 || n.Stock > MaxStock || n.LimitPerUser > MaxStock:
		return InvalidError("SKU %s stock and limitPerUser must be 0 to %d", n.ID, MaxStock)
	case n.PeakOrdersPerSecond < 0:
		return InvalidError("SKU %s peakOrdersPerSecond must not be negative", n.ID)
	case n.Shards < 1 || n.Shards > MaxShards:
		return InvalidError("SKU %s shards must be 1 to %d", n.ID, MaxShards)
	case !ValidDelivery(n.Delivery):
		return InvalidError("SKU %s delivery must be %q or %q", n.ID, DeliveryExpress, DeliveryNone)
	}
	return n.Queue.Validate()
}

// Split spreads the initial stock over the shards (shard → units): evenly, the
// remainder one unit each on the lowest shards.
func (n NewSKU) Split() map[int]int {
	out := make(map[int]int, n.Shards)
	for i := range n.Shards {
		out[i] = n.Stock / n.Shards
		if i < n.Stock%n.Shards {
			out[i]++
		}
	}
	return out
}

// More SKU bounds, for the merchant API (docs/contract.md, "Merchant API").
const (
	// MaxStock bounds a SKU's initial stock, a per-user limit and one adjustment's
	// units, so that no counter sum can overflow.
	MaxStock = 100_000_000
	// MaxNameLength bounds a SKU name, in characters.
	MaxNameLength = 200
	// MaxReasonLength bounds an adjustment's reason, in characters.
	MaxReasonLength = 200
)

// SKUPatch changes some fields of a SKU (PATCH /admin/skus/{skuId}); nil fields stay
// as they are. Prices apply to orders placed after the change only.
type SKUPatch struct {
	Name         *string    // shown to buyers
	Price        *int64     // fen, 1..MaxPrice
	LimitPerUser *int       // units per user, 0..MaxStock, 0 = no limit
	OnSale       *bool      // false: orders answer SKU_OFF_SALE
	SaleStartsAt *time.Time // UTC; orders before it answer SALE_NOT_STARTED; zero clears it
	Delivery     *string    // DeliveryExpress or DeliveryNone
	// Queue, FairWindowSeconds and RiskThreshold change the SKU's QueueSettings
	// (Apply checks the result).
	Queue             *bool
	FairWindowSeconds *int
	RiskThreshold     *int
}

// queueChange reports whether p changes any waiting-room setting.
func (p SKUPatch) queueChange() bool {
	return p.Queue != nil || p.FairWindowSeconds != nil || p.RiskThreshold != nil
}

// ApplyQueue returns the SKU's waiting-room settings q after p, or an error wrapping
// ErrInvalidRequest when they break QueueSettings.Validate (turning the queue off
// while a fair window is set clears the window).
func (p SKUPatch) ApplyQueue(q QueueSettings) (QueueSettings, error) {
	if p.Queue != nil {
		q.Queue = *p.Queue
		if !q.Queue && p.FairWindowSeconds == nil {
			q.FairWindowSeconds = 0
		}
	}
	if p.FairWindowSeconds != nil {
		q.FairWindowSeconds = *p.FairWindowSeconds
	}
	if p.RiskThreshold != nil {
		q.RiskThreshold = *p.RiskThreshold
	}
	return q, q.Validate()
}

// Validate checks p against the SKU bounds: at least one field, and each set field
// within them. It returns an *InvalidRequestError otherwise.
func (p SKUPatch) Validate() error {
	switch {
	case p.Name == nil && p.Price == nil && p.LimitPerUser == nil && p.OnSale == nil && p.SaleStartsAt == nil && p.Delivery == nil && !p.queueChange():
		return InvalidError("nothing to change: give name, price, limitPerUser, onSale, saleStartsAt, delivery, queue, fairWindowSeconds or riskThreshold")
	case p.Delivery != nil && !ValidDelivery(*p.Delivery):
		return InvalidError("delivery must be %q or %q", DeliveryExpress, DeliveryNone)
	case p.Name != nil && !validText(*p.Name, MaxNameLength):
		return InvalidError("name must be 1 to %d %s", MaxNameLength, TextRule)
	case p.Price != nil && (*p.Price < 1 || *p.Price > MaxPrice):
		return InvalidError("price must be 1 to %d fen", int64(MaxPrice))
	case p.LimitPerUser != nil && (*p.LimitPerUser < 0 || *p.LimitPerUser > MaxStock):
		return InvalidError("limitPerUser must be 0 to %d", MaxStock)
	}
	if p.queueChange() {
		_, err := p.ApplyQueue(QueueSettings{Queue: true}) // bounds only: the SKU's settings are checked with them
		return err
	}
	return nil
}

// ErrSaleInProgress: a PATCH /admin/skus/{skuId} that would raise the units one
// admission may buy (limitPerUser), or turn the waiting room off, while the SKU's
// queued sale is on (docs/contract.md, 409 SALE_IN_PROGRESS). Nothing is changed.
var ErrSaleInProgress = errors.New("the SKU's queued sale is on")

// MidSale refuses p for s at now when s sells through its waiting room, is on sale
// and its sale has started (no SaleStartsAt, or one before now), and p raises the
// units an admission may buy (max(limitPerUser, 1): the admitter's claim per
// admission, docs/design.md "Waiting room") or turns the queue off: admissions
// already given were counted at the old claim, so they could buy more than the
// admitter left room for. Lowering the limit is allowed (fewer units than counted).
// It returns a *RefusalError wrapping a *SKUError wrapping ErrSaleInProgress, or nil.
func (p SKUPatch) MidSale(s SKU, now time.Time) error {
	if !s.Queue.Queue || !s.OnSale || s.Upcoming(now) {
		return nil
	}
	var what, instead string
	switch {
	case p.LimitPerUser != nil && max(*p.LimitPerUser, 1) > max(s.LimitPerUser, 1):
		what = fmt.Sprintf("raising limitPerUser from %d to %d would let admissions already given buy more units than the waiting room counted", s.LimitPerUser, *p.LimitPerUser)
		instead = "Lower the limit, or take the SKU off sale first (onSale false)"
	case p.Queue != nil && !*p.Queue:
		what = "turning the queue off would let buyers order around the admissions already given"
		instead = "Take the SKU off sale first (onSale false)"
	default:
		return nil
	}
	return refusal(&SKUError{Err: ErrSaleInProgress, SKU: s.ID},
		"SKU %s sells through its waiting room and its sale has started: %s; nothing was changed. %s", s.ID, what, instead)
}

// Adjustment is an operator's restock (Delta > 0) or write-off (Delta < 0) of a SKU,
// recorded as one ADJUST ledger entry keyed by ID, so it applies once.
type Adjustment struct {
	ID     string // adjustment id: 1-64 of [0-9A-Za-z_.:-], the idempotency key
	Delta  int    // units, non-zero, |Delta| ≤ MaxStock
	Reason string // why, 1..MaxReasonLength characters
	By     string // who asks (the caller's IAM principal ARN), recorded on the entry
}

// Validate checks a against the contract's bounds; it returns an
// *InvalidRequestError otherwise.
func (a Adjustment) Validate() error {
	switch {
	case !skuIDPattern.MatchString(a.ID):
		return InvalidError("adjustmentId must be 1-64 characters of [0-9A-Za-z_.:-]")
	case a.Delta == 0 || a.Delta > MaxStock || a.Delta < -MaxStock:
		return InvalidError("delta must be a non-zero integer from %d to %d", -MaxStock, MaxStock)
	case !validText(a.Reason, MaxReasonLength):
		return InvalidError("reason must be 1 to %d %s", MaxReasonLength, TextRule)
	}
	return nil
}

// TextRule is what a text field (a SKU name, a reason, an address part) must be
// made of, as refusals name it.
const TextRule = "characters of visible text: no control characters, line separators or invisible format characters (zero-width spaces, joiners other than within an emoji, direction marks and overrides, soft hyphens, byte order marks)"

// validText reports whether s is 1..n characters of valid UTF-8, not blank, without
// control characters (Cc), line or paragraph separators (U+2028, U+2029) or format
// characters (Unicode category Cf: zero-width space, non-joiner and joiner
// U+200B–U+200D, the direction marks LRM U+200E, RLM U+200F and ALM U+061C, the
// bidirectional embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
// word joiner U+2060, BOM U+FEFF, soft hyphen U+00AD, tag characters …; The Unicode
// Standard, chapter 23 "Special Areas and Format Characters", and Annex #9). They are
// invisible: a name, a reason or an address on a parcel's label would read otherwise
// than it is stored, or two that look alike would differ.
//
// One stays: a zero width joiner (U+200D) between two emoji, which emoji ZWJ sequences
// need (Unicode Technical Standard #51, "Emoji ZWJ Sequences": 👩‍💻 is U+1F469 U+200D
// U+1F4BB), as a buyer writing a reason or a contact name on the phone's keyboard may
// send. It joins visible symbols and hides nothing. Here an emoji is a symbol (So),
// and the joiner may follow a skin tone modifier (Sk) or the emoji presentation
// selector U+FE0F; a joiner anywhere else is refused.
func validText(s string, n int) bool {
	if strings.TrimSpace(s) == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > n {
		return false
	}
	prev := rune(-1)
	for i, r := range s {
		switch {
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return false
		case r == '\u200d':
			next, size := utf8.DecodeRuneInString(s[i+len("\u200d"):])
			if !(unicode.In(prev, unicode.So, unicode.Sk) || prev == '\ufe0f') || size == 0 || !unicode.Is(unicode.So, next) {
				return false
			}
		case unicode.Is(unicode.Cf, r):
			return false
		}
		prev = r
	}
	return true
}
