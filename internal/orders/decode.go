package orders

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// MaxSubscriptions is how many template ids one order may carry: what one
// wx.requestSubscribeMessage call may ask for ("wx.requestSubscribeMessage": tmplIds,
// "一次性模板 id 和永久模板 id 不可同时使用 … 最多为3个").
const MaxSubscriptions = 3

// decodeCart parses a POST /orders body strictly: one JSON object with the field
// "items" (an array), each line exactly the fields "skuId" (string) and "qty"
// (integer), and optionally "subscriptions"; field names match case-sensitively, and
// unknown fields, fields named twice and trailing data are rejected. The lines are
// then validated and merged by inventory.NewCart. Every error is an
// *inventory.InvalidRequestError.
func decodeCart(body []byte) (inventory.Cart, error) {
	in, err := decodeOrder(body, nil)
	return in.cart, err
}

// orderBody is a POST /orders body decoded.
type orderBody struct {
	cart    inventory.Cart
	subs    []string
	address *inventory.Address // nil when not given
}

// decodeOrder is decodeCart that also reads "subscriptions" (the subscribe-message
// template ids the buyer accepted at checkout, an array of distinct strings, each one
// of allowed (the configured templates), at most MaxSubscriptions) and "address" (see
// decodeAddress).
func decodeOrder(body []byte, allowed []string) (orderBody, error) {
	var top map[string]json.RawMessage
	if err := httpapi.DecodeStrict(body, &top); err != nil || top == nil {
		return orderBody{}, inventory.InvalidError("body must be a JSON object like {\"items\":[{\"skuId\":\"cup-01\",\"qty\":1}]}")
	}
	if err := httpapi.NoDuplicateKeys(body); err != nil {
		return orderBody{}, err
	}
	var out orderBody
	var err error
	if out.subs, err = subscriptions(top, allowed); err != nil {
		return orderBody{}, err
	}
	if raw, ok := top["address"]; ok {
		if out.address, err = DecodeAddress(raw); err != nil {
			return orderBody{}, err
		}
	}
	delete(top, "subscriptions")
	delete(top, "address")
	if err := httpapi.OnlyFields(top, "items"); err != nil {
		return orderBody{}, err
	}
	out.cart, err = decodeLines(top)
	return out, err
}

// ExampleAddress is a POST /orders "address" as wx.chooseAddress gives it (a made-up
// consignee): what tools and tests that place orders send. Error messages show
// AddressShape instead: a message reaches the request's log line, and a log never
// holds anything that reads as an address or a phone number.
const ExampleAddress = `{"userName":"李四","telNumber":"13800138000","provinceName":"广东省","cityName":"广州市","countyName":"天河区","detailInfo":"天河路1号","postalCode":"510000"}`

// AddressShape is the address as error messages describe it: its fields, without
// values.
const AddressShape = `an object of the strings wx.chooseAddress returns: userName, telNumber, provinceName, cityName, countyName, detailInfo, and optionally streetName and postalCode`

// DecodeAddress reads raw, a body's "address", strictly: an object of the string
// fields userName, telNumber, provinceName, cityName, countyName, detailInfo and
// optionally postalCode and streetName (kept), and optionally
// inventory.PickerOnlyFields (taken, checked and dropped): what wx.chooseAddress
// returns, so its answer passes through unchanged. Any other field is refused. The
// kept fields are checked by inventory.Address.Validate. Every error is an
// *inventory.InvalidRequestError naming the field; none repeats a value.
func DecodeAddress(raw json.RawMessage) (*inventory.Address, error) {
	var fields map[string]json.RawMessage
	if err := httpapi.DecodeStrict(raw, &fields); err != nil || fields == nil {
		return nil, inventory.InvalidError("address must be %s", AddressShape)
	}
	for _, name := range inventory.PickerOnlyFields {
		v, given := fields[name]
		if !given {
			continue
		}
		var s string
		if err := httpapi.DecodeStrict(v, &s); err != nil || !inventory.ValidPickerOnly(s) {
			return nil, inventory.InvalidError("address.%s must be a string of at most %d %s", name, inventory.MaxAddressDetail, inventory.TextRule)
		}
		delete(fields, name)
	}
	for _, optional := range []string{"postalCode", "streetName"} {
		if _, given := fields[optional]; !given {
			fields[optional] = json.RawMessage(`""`)
		}
	}
	if err := httpapi.OnlyFields(fields, "userName", "telNumber", "provinceName", "cityName", "countyName", "streetName", "detailInfo", "postalCode"); err != nil {
		var invalid *inventory.InvalidRequestError
		errors.As(err, &invalid) // OnlyFields' errors are all *InvalidRequestError
		return nil, inventory.InvalidError("address: %s; an address is %s", invalid.Reason, AddressShape)
	}
	var a inventory.Address
	for name, dst := range map[string]*string{
		"userName": &a.UserName, "telNumber": &a.TelNumber, "provinceName": &a.ProvinceName, "cityName": &a.CityName,
		"countyName": &a.CountyName, "streetName": &a.StreetName, "detailInfo": &a.DetailInfo, "postalCode": &a.PostalCode,
	} {
		if err := httpapi.DecodeStrict(fields[name], dst); err != nil {
			return nil, inventory.InvalidError("address.%s must be a string", name)
		}
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return &a, nil
}

// subscriptions reads and checks top's optional "subscriptions".
func subscriptions(top map[string]json.RawMessage, allowed []string) ([]string, error) {
	raw, ok := top["subscriptions"]
	if !ok {
		return nil, nil
	}
	var subs []string
	if err := httpapi.DecodeStrict(raw, &subs); err != nil {
		return nil, inventory.InvalidError("subscriptions must be an array of template ids")
	}
	if len(subs) > MaxSubscriptions {
		return nil, inventory.InvalidError("subscriptions holds at most %d template ids", MaxSubscriptions)
	}
	for i, id := range subs {
		if !slices.Contains(allowed, id) || slices.Index(subs, id) != i {
			return nil, inventory.InvalidError("subscriptions[%d] is not a subscribe-message template of this shop, or named twice", i)
		}
	}
	return subs, nil
}

// decodeLines reads the cart of top's "items".
func decodeLines(top map[string]json.RawMessage) (inventory.Cart, error) {
	lines, err := httpapi.DecodeLines(top["items"], "items")
	if err != nil {
		return nil, err
	}
	return inventory.NewCart(lines)
}
