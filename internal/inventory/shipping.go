package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Shipping: what a merchant tells WeChat about how a paid order is delivered
// (docs/design.md, "Shipping"). A shipment is recorded on its order through the one
// transition path (Order.Ship), queued, and uploaded to WeChat's upload_shipping_info
// ("发货信息录入") by the wechat function, whose answer is recorded by
// Order.ShippingResult. The order's status stays PAID throughout.

// ShippingStatus is where an order's shipping information stands with WeChat.
type ShippingStatus string

// Shipping statuses (docs/contract.md, "POST /admin/orders/{orderId}/shipments").
const (
	// ShippingQueued: a shipment was recorded and its upload is queued (or being
	// retried, Error saying why).
	ShippingQueued ShippingStatus = "QUEUED"
	// ShippingUploaded: WeChat accepted every shipment recorded so far.
	ShippingUploaded ShippingStatus = "UPLOADED"
	// ShippingFailed: WeChat refused the upload for good (Error says why); an operator
	// must look (RUNBOOK.md, ShippingUploadFailedAlarm).
	ShippingFailed ShippingStatus = "FAILED"
	// ShippingCancelled: the order was refunded before anything was uploaded; nothing
	// will be.
	ShippingCancelled ShippingStatus = "CANCELLED"
)

// Logistics is how a shipment travels, in the contract's words; WeChat's
// logistics_type numbers are package wxapi's ("发货信息录入": logistics_type 1-4).
type Logistics string

// Logistics kinds.
const (
	LogisticsExpress    Logistics = "express"     // 实体物流配送 (1): carrier and tracking number required
	LogisticsSameCity   Logistics = "same-city"   // 同城配送 (2)
	LogisticsVirtual    Logistics = "virtual"     // 虚拟商品 (3)
	LogisticsSelfPickup Logistics = "self-pickup" // 用户自提 (4)
)

// MaxShipments is how many shipments (parcels) one order may be split into:
// "发货信息录入", 注意事项 5: "一笔支付单最多分拆成 15 个包裹" (wxapi.MaxPackages;
// https://developers.weixin.qq.com/miniprogram/dev/server/API/order_shipping/api_uploadshippinginfo.html). Only
// express shipments may be split (errcode 10060006 "非快递发货时不允许分拆发货").
const MaxShipments = 15

// Limits of a shipment's fields ("发货信息录入": tracking_no and express_company are
// 1..128 bytes; wxapi.MaxTrackingNoBytes, wxapi.MaxExpressCompanyBytes).
const (
	MaxTrackingNoBytes = 128
	MaxCarrierBytes    = 128
)

// ErrNotShippable: the order is not PAID (unpaid, released, refunding or refunded),
// or every unit of it was shipped already; nothing was recorded or sent.
var ErrNotShippable = errors.New("order cannot be shipped")

var (
	shipmentIDPattern = regexp.MustCompile(`^[0-9A-Za-z_.:-]{1,64}$`)
	printablePattern  = regexp.MustCompile(`^[\x21-\x7e]+$`)
)

// ShippedItem is units of one SKU of the order in a shipment.
type ShippedItem struct {
	SKU string `json:"skuId"`
	Qty int    `json:"qty"`
}

// Shipment is one parcel of an order as the merchant declares it. ID is the
// idempotency key of its request: the same ID with the same fields is the same
// shipment.
type Shipment struct {
	ID         string        `json:"shipmentId"`         // 1-64 of [0-9A-Za-z_.:-]
	Logistics  Logistics     `json:"type"`               // how it travels
	Carrier    string        `json:"carrier,omitempty"`  // express_company (e.g. SF, YTO): required for express
	TrackingNo string        `json:"tracking,omitempty"` // tracking_no: required for express
	Items      []ShippedItem `json:"items,omitempty"`    // what it holds; empty: every unit not shipped yet
	// Contact is a masked phone number ("189****1234"), required by WeChat for the
	// carrier SF ("发货信息录入": contact "当发货的物流公司为顺丰时，联系方式为必填").
	Contact string `json:"contact,omitempty"`
	// ReceiverContact is the order's address phone masked (MaskPhone), filled by Ship
	// for the carrier SF when the merchant gives no Contact, and uploaded as
	// contact.receiver_contact ("发货信息录入": contact.receiver_contact, "采用掩码传输，
	// 最后4位数字不能打掩码"; https://developers.weixin.qq.com/miniprogram/dev/server/API/order_shipping/api_uploadshippinginfo).
	ReceiverContact string `json:"receiverContact,omitempty"`
	// UploadedAt is when WeChat accepted the upload that first held this shipment
	// (Order.ShippingResult); nil until then. Not part of the request (Hash).
	UploadedAt *time.Time `json:"-"`
}

// asked is s as the merchant asked it: without what Ship filled from the order.
func (s Shipment) asked() Shipment {
	s.ReceiverContact = ""
	return s
}

// Shipping is an order's shipping information: its shipments, oldest first, and
// where their upload to WeChat stands.
type Shipping struct {
	Status     ShippingStatus
	Shipments  []Shipment
	Uploaded   int        // how many of Shipments WeChat accepted (the last upload's count)
	UploadedAt *time.Time // when WeChat last accepted an upload
	Error      string     // why the last upload failed (retried while QUEUED, final when FAILED)
}

// Hash identifies s's fields: two requests with the same shipment id must carry the
// same hash.
func (s Shipment) Hash() string {
	b, _ := json.Marshal(s) // a plain struct: always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Check validates s's own fields (not against an order): an id, a known type, a
// carrier and tracking number for express (printable ASCII, within their limits),
// items of valid SKU ids and positive quantities, each SKU once. Errors are
// *InvalidRequestError.
func (s Shipment) Check() error {
	switch {
	case !shipmentIDPattern.MatchString(s.ID):
		return InvalidError("shipmentId must be 1-64 of [0-9A-Za-z_.:-]")
	case !slices.Contains([]Logistics{LogisticsExpress, LogisticsSameCity, LogisticsVirtual, LogisticsSelfPickup}, s.Logistics):
		return InvalidError("type must be express, same-city, virtual or self-pickup")
	case s.Logistics == LogisticsExpress && (s.Carrier == "" || s.TrackingNo == ""):
		return InvalidError("an express shipment needs carrier and tracking")
	case s.Carrier != "" && (len(s.Carrier) > MaxCarrierBytes || !printablePattern.MatchString(s.Carrier)):
		return InvalidError("carrier must be 1-%d printable ASCII characters (WeChat's delivery id, e.g. SF)", MaxCarrierBytes)
	case s.TrackingNo != "" && (len(s.TrackingNo) > MaxTrackingNoBytes || !printablePattern.MatchString(s.TrackingNo)):
		return InvalidError("tracking must be 1-%d printable ASCII characters", MaxTrackingNoBytes)
	case s.Contact != "" && (len(s.Contact) > 64 || !maskedContact.MatchString(s.Contact)):
		return InvalidError("contact must be a masked phone number: digits, '+' and '-', at least one digit masked as '*', the last 4 digits shown")
	}
	seen := map[string]bool{}
	for i, it := range s.Items {
		if err := CheckSKUID(fmt.Sprintf("items[%d].skuId", i), it.SKU); err != nil {
			return err
		}
		switch {
		case it.Qty < 1 || it.Qty > MaxQty:
			return InvalidError("items[%d].qty must be an integer from 1 to %d", i, MaxQty)
		case seen[it.SKU]:
			return InvalidError("items[%d].skuId names %s a second time", i, it.SKU)
		}
		seen[it.SKU] = true
	}
	return nil
}

// maskedContact is a phone number masked with '*' whose last 4 digits show
// ("发货信息录入": contact "采用掩码传输，最后4位数字不能打掩码").
var maskedContact = regexp.MustCompile(`^[0-9+-]*\*[0-9*+-]*[0-9]{4}$`)

// Unshipped is what of o is left to ship: SKU → units neither held by a shipment nor
// refunded. A refunded unit is taken to be one not shipped yet (refunds and shipments
// name units, not which ones), so an order partly refunded ships only what the buyer
// still paid for.
func (o *Order) Unshipped() map[string]int {
	left := map[string]int{}
	for _, it := range o.Items {
		left[it.SKU] += it.Qty - o.RefundedUnits(it.SKU, false)
	}
	if o.Shipping != nil {
		for _, s := range o.Shipping.Shipments {
			for _, it := range s.Items {
				left[it.SKU] -= it.Qty
			}
		}
	}
	for sku, n := range left {
		if n <= 0 {
			delete(left, sku)
		}
	}
	return left
}

// Shipment returns o's shipment with id, if any.
func (o *Order) Shipment(id string) (Shipment, bool) {
	if o.Shipping == nil {
		return Shipment{}, false
	}
	for _, s := range o.Shipping.Shipments {
		if s.ID == id {
			return s, true
		}
	}
	return Shipment{}, false
}

// Ship decides recording shipment s (checked with Check) on o: s with its items
// (when it lists none, every unit not shipped yet) appended to o's shipments and the
// upload QUEUED, conditioned on o still PAID with its shipping as read. The same
// shipment again (same id, same fields) is NoChange; the id with other fields wraps
// ErrIdempotencyKeyReused. Errors: ErrNotShippable (o is not PAID, or nothing is left
// to ship); *InvalidRequestError (items naming a SKU not in o or more units than are
// left unshipped; a non-express shipment that does not ship the whole order, or any
// shipment after one: WeChat allows split delivery for express only (errcode
// 10060006); more than MaxShipments shipments).
func (o *Order) Ship(s Shipment) (Change, error) {
	if old, ok := o.Shipment(s.ID); ok {
		if old.asked().Hash() != s.Hash() && !sameItemsFilled(old.asked(), s) {
			return Change{}, fmt.Errorf("shipment %s of order %s: %w", s.ID, o.ID, ErrIdempotencyKeyReused)
		}
		return Change{}, nil
	}
	left := o.Unshipped()
	if o.Status != StatusPaid || len(left) == 0 {
		return Change{}, fmt.Errorf("ship order %s (%s): %w", o.ID, o.Status, ErrNotShippable)
	}
	if s.Carrier == "SF" && s.Contact == "" {
		if o.Address == nil {
			return Change{}, InvalidError("WeChat needs a contact (masked phone number) for the carrier SF, and the order has no address to take it from")
		}
		s.ReceiverContact = MaskPhone(o.Address.TelNumber)
	}
	var prior []Shipment
	if o.Shipping != nil {
		prior = o.Shipping.Shipments
	}
	if len(s.Items) == 0 {
		for _, it := range o.Items {
			if left[it.SKU] > 0 {
				s.Items = append(s.Items, ShippedItem{SKU: it.SKU, Qty: left[it.SKU]})
			}
		}
	}
	complete := true
	for i, it := range s.Items {
		switch {
		case left[it.SKU] == 0:
			return Change{}, InvalidError("items[%d]: order %s has no unshipped units of %s", i, o.ID, it.SKU)
		case it.Qty > left[it.SKU]:
			return Change{}, InvalidError("items[%d]: order %s has %d unshipped units of %s", i, o.ID, left[it.SKU], it.SKU)
		}
		left[it.SKU] -= it.Qty
	}
	for _, n := range left {
		complete = complete && n == 0
	}
	switch {
	case len(prior) >= MaxShipments:
		return Change{}, InvalidError("an order ships in at most %d parcels (WeChat's limit)", MaxShipments)
	case s.Logistics != LogisticsExpress && (len(prior) > 0 || !complete):
		return Change{}, InvalidError("only express shipments may split an order (WeChat's rule): a %s shipment ships the whole order", s.Logistics)
	case len(prior) > 0 && prior[0].Logistics != LogisticsExpress:
		return Change{}, InvalidError("this order was shipped whole already")
	}
	next := *o
	sh := Shipping{Status: ShippingQueued}
	if o.Shipping != nil {
		sh = *o.Shipping
	}
	sh.Shipments = append(slices.Clone(sh.Shipments), s)
	sh.Status, sh.Error = ShippingQueued, ""
	next.Shipping = &sh
	// Refunds as read too: what is left to ship depends on them (Unshipped).
	return Change{Kind: ChangeShip, From: StatusPaid, Order: &next, Guards: GuardShipping | GuardRefunds}, nil
}

// sameItemsFilled reports whether b is a replay of a, a shipment recorded with the
// items Ship filled in because the request listed none.
func sameItemsFilled(a, b Shipment) bool {
	if len(b.Items) != 0 {
		return false
	}
	b.Items = a.Items
	return a.Hash() == b.Hash()
}

// ShippingResult decides recording WeChat's answer to an upload of o's first n
// shipments at now: errText empty means accepted (UPLOADED once n covers every
// shipment, else still QUEUED for the newer ones); final tells a refusal for good
// (FAILED) from one being retried (QUEUED with Error). NoChange when o is no longer
// PAID, its shipping was cancelled, or the answer changes nothing.
func (o *Order) ShippingResult(n int, errText string, final bool, now time.Time) Change {
	if o.Status != StatusPaid || o.Shipping == nil || o.Shipping.Status == ShippingCancelled {
		return Change{}
	}
	sh := *o.Shipping
	switch {
	case errText == "" && n >= sh.Uploaded:
		sh.Shipments = slices.Clone(sh.Shipments)
		for i := sh.Uploaded; i < n && i < len(sh.Shipments); i++ {
			if sh.Shipments[i].UploadedAt == nil {
				sh.Shipments[i].UploadedAt = &now
			}
		}
		sh.Uploaded, sh.UploadedAt, sh.Error = n, &now, ""
		sh.Status = ShippingQueued
		if n >= len(sh.Shipments) {
			sh.Status = ShippingUploaded
		}
	case errText == "":
		return Change{}
	case final:
		sh.Status, sh.Error = ShippingFailed, errText
	default:
		if sh.Error == errText && sh.Status == ShippingQueued {
			return Change{}
		}
		sh.Status, sh.Error = ShippingQueued, errText
	}
	next := *o
	next.Shipping = &sh
	return Change{Kind: ChangeShippingResult, From: StatusPaid, Order: &next, Guards: GuardShipping}
}

// cancelPresale is o's presale as a refund of the whole order leaves it: a
// declaration not made yet (QUEUED) is CANCELLED, never sent; one WeChat holds stays.
func (o *Order) cancelPresale() *Presale {
	if o.Presale == nil || o.Presale.Status != ShippingQueued {
		return o.Presale
	}
	p := *o.Presale
	p.Status, p.Error = ShippingCancelled, ""
	return &p
}

// cancelShipping is o's shipping as a refund of the whole order leaves it: a
// shipment nothing of which was uploaded is CANCELLED (never uploaded); shipping
// WeChat already holds stays as it is.
func (o *Order) cancelShipping() *Shipping {
	if o.Shipping == nil || o.Shipping.Uploaded > 0 {
		return o.Shipping
	}
	sh := *o.Shipping
	sh.Status, sh.Error = ShippingCancelled, ""
	return &sh
}
