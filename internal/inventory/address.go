package inventory

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Address is where an order's parcel goes: what wx.chooseAddress returns, so the
// mini-program passes its answer through unchanged ("wx.chooseAddress", object.success
// res: userName, postalCode, provinceName, cityName, countyName, streetName,
// detailInfo, detailInfoNew, nationalCode, telNumber, errMsg;
// https://developers.weixin.qq.com/miniprogram/dev/api/open-api/address/wx.chooseAddress.html).
// The fields below are kept; PickerOnlyFields are taken and not kept.
// It is personal data: the owner's order view and the merchant's order view show it
// whole, lists show Masked, and it never goes to logs, alerts or metrics.
type Address struct {
	UserName     string `json:"userName" dynamodbav:"userName"`                         // consignee, 1..MaxAddressName characters
	TelNumber    string `json:"telNumber" dynamodbav:"telNumber"`                       // consignee's phone, see ValidPhone
	ProvinceName string `json:"provinceName" dynamodbav:"provinceName"`                 // 1..MaxAddressName characters
	CityName     string `json:"cityName" dynamodbav:"cityName"`                         // 1..MaxAddressName characters
	CountyName   string `json:"countyName" dynamodbav:"countyName,omitempty"`           // 0..MaxAddressName characters (some cities have none)
	StreetName   string `json:"streetName,omitempty" dynamodbav:"streetName,omitempty"` // the fourth level (街道, 镇), 0..MaxAddressName characters; newer pickers only
	DetailInfo   string `json:"detailInfo,omitempty" dynamodbav:"detailInfo"`           // street and house, 1..MaxAddressDetail characters
	PostalCode   string `json:"postalCode,omitempty" dynamodbav:"postalCode,omitempty"` // optional, up to 10 ASCII digits
}

// PickerOnlyFields are the fields of wx.chooseAddress's answer that an address takes
// and does not keep, so that the client may send the answer as it is: detailInfoNew
// (the new picker's form of detailInfo, which is kept), nationalCode (the country
// code: the shop ships within one country) and errMsg (the call's result,
// "chooseAddress:ok"). Each must be a string of at most MaxAddressDetail characters
// of text, or empty.
var PickerOnlyFields = []string{"detailInfoNew", "nationalCode", "errMsg"}

// ValidPickerOnly reports whether v may be the value of one of PickerOnlyFields:
// empty, or text (see Validate) of at most MaxAddressDetail characters.
func ValidPickerOnly(v string) bool { return v == "" || validText(v, MaxAddressDetail) }

// Address bounds, in characters.
const (
	MaxAddressName   = 40
	MaxAddressDetail = 200
	maxPostalCode    = 10
	minPhoneDigits   = 5
	maxPhone         = 20
)

// DeliveryExpress and DeliveryNone say whether a SKU's units ship by express (its
// orders need an Address) or are not shipped (a service, a voucher).
const (
	DeliveryExpress = "express"
	DeliveryNone    = "none"
)

// ErrAddressLocked: the order's address can no longer be changed: something of it was
// shipped, or it is no longer PENDING or PAID.
var ErrAddressLocked = errors.New("order address can no longer be changed")

// AddressChangeable reports whether o's address may still be changed by its owner: o
// is PENDING or PAID and nothing of it was shipped.
func (o *Order) AddressChangeable() bool {
	return (o.Status == StatusPending || o.Status == StatusPaid) && (o.Shipping == nil || len(o.Shipping.Shipments) == 0)
}

// ValidDelivery reports whether d is a delivery a SKU may have.
func ValidDelivery(d string) bool { return d == DeliveryExpress || d == DeliveryNone }

// Validate checks a against the address bounds and returns an *InvalidRequestError
// naming the first field (address.userName, …) that is empty where required, too long,
// not text, or not a phone number or postal code. The message never repeats the value.
func (a Address) Validate() error {
	for _, f := range []struct {
		name, value string
		max         int
		optional    bool
	}{
		{"userName", a.UserName, MaxAddressName, false},
		{"provinceName", a.ProvinceName, MaxAddressName, false},
		{"cityName", a.CityName, MaxAddressName, false},
		{"countyName", a.CountyName, MaxAddressName, true},
		{"streetName", a.StreetName, MaxAddressName, true},
		{"detailInfo", a.DetailInfo, MaxAddressDetail, false},
	} {
		if f.optional && f.value == "" {
			continue
		}
		if !validText(f.value, f.max) {
			return InvalidError("address.%s must be 1 to %d %s", f.name, f.max, TextRule)
		}
	}
	if !ValidPhone(a.TelNumber) {
		return InvalidError("address.telNumber must be a phone number: up to %d of digits, spaces, '+' and '-', at least %d digits", maxPhone, minPhoneDigits)
	}
	if len(a.PostalCode) > maxPostalCode || strings.ContainsFunc(a.PostalCode, notDigit) {
		return InvalidError("address.postalCode must be up to %d digits", maxPostalCode)
	}
	return nil
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// ValidPhone reports whether s reads as a phone number: at most 20 characters of
// ASCII digits, spaces, '+' and '-', with at least 5 digits.
func ValidPhone(s string) bool {
	if len(s) > maxPhone || !utf8.ValidString(s) {
		return false
	}
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '+' || r == '-':
		default:
			return false
		}
	}
	return digits >= minPhoneDigits
}

// MaskPhone masks a phone number as WeChat's upload_shipping_info asks of an SF
// Express contact ("采用掩码传输，最后4位数字不能打掩码", e.g. 189****1234,
// 021-****1234): the last 4 digits and, for a number of 11 or more characters, the
// first 3 characters stay; every other digit becomes '*'.
func MaskPhone(s string) string {
	b := []byte(s)
	keepHead := 0
	if len(b) >= 11 {
		keepHead = 3
	}
	kept := 0
	for i := len(b) - 1; i >= keepHead; i-- {
		if b[i] < '0' || b[i] > '9' {
			continue
		}
		if kept < 4 {
			kept++
			continue
		}
		b[i] = '*'
	}
	return string(b)
}

// Masked is a as lists show it: the consignee's first character then '*', the phone
// masked (MaskPhone), the province, city and county; no street (neither streetName
// nor detailInfo) and no postal code.
func (a Address) Masked() Address {
	name := ""
	if r, n := utf8.DecodeRuneInString(a.UserName); n > 0 {
		name = string(r) + "*"
	}
	return Address{UserName: name, TelNumber: MaskPhone(a.TelNumber), ProvinceName: a.ProvinceName, CityName: a.CityName, CountyName: a.CountyName}
}
