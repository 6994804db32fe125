package inventory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

func goodAddress() inventory.Address {
	return inventory.Address{UserName: "张三", TelNumber: "18912341234", ProvinceName: "广东省", CityName: "广州市", CountyName: "海珠区", DetailInfo: "新港中路397号", PostalCode: "510000"}
}

func TestAddress_Validate_NamesTheBadField(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*inventory.Address)
	}{
		{"userName", func(a *inventory.Address) { a.UserName = "" }},
		{"userName", func(a *inventory.Address) { a.UserName = strings.Repeat("张", 41) }},
		{"provinceName", func(a *inventory.Address) { a.ProvinceName = " " }},
		{"cityName", func(a *inventory.Address) { a.CityName = "广州\n市" }},
		{"detailInfo", func(a *inventory.Address) { a.DetailInfo = strings.Repeat("路", 201) }},
		{"countyName", func(a *inventory.Address) { a.CountyName = "\x00" }},
		{"detailInfo", func(a *inventory.Address) { a.DetailInfo = "新港中路\u202e号793" }}, // right-to-left override
		{"detailInfo", func(a *inventory.Address) { a.DetailInfo = "新港中路\u2028397号" }}, // line separator
		{"userName", func(a *inventory.Address) { a.UserName = "\u2066张三\u2069" }},     // isolates
		{"telNumber", func(a *inventory.Address) { a.TelNumber = "1234" }},
		{"telNumber", func(a *inventory.Address) { a.TelNumber = "189-1234-abcd" }},
		{"telNumber", func(a *inventory.Address) { a.TelNumber = strings.Repeat("1", 21) }},
		{"postalCode", func(a *inventory.Address) { a.PostalCode = "51000a" }},
		{"streetName", func(a *inventory.Address) { a.StreetName = strings.Repeat("街", 41) }},
		{"streetName", func(a *inventory.Address) { a.StreetName = "新港\n街道" }},
	} {
		a := goodAddress()
		tc.edit(&a)
		err := a.Validate()
		if !errors.Is(err, inventory.ErrInvalidRequest) || !strings.Contains(err.Error(), "address."+tc.field) {
			t.Errorf("%s: got %v, want an invalid request naming address.%s", tc.field, err, tc.field)
		}
	}
	ok := goodAddress()
	ok.CountyName, ok.PostalCode = "", "" // a city without counties (东莞市); no postal code
	ok.UserName = "张三👨\u200d👩\u200d👧"     // an emoji sequence keeps its joiners
	if err := ok.Validate(); err != nil {
		t.Errorf("valid address refused: %v", err)
	}
}

func TestMaskPhone_KeepsTheLastFourDigits(t *testing.T) {
	for in, want := range map[string]string{
		"18912341234":   "189****1234",
		"021-12345678":  "021-****5678",
		"+86 189123412": "+86 *****3412",
		"12345":         "*2345",
		"1234":          "1234",
	} {
		if got := inventory.MaskPhone(in); got != want {
			t.Errorf("MaskPhone(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAddress_Masked_DropsStreetAndPhone(t *testing.T) {
	a := goodAddress()
	a.StreetName = "新港街道"
	m := a.Masked()
	want := inventory.Address{UserName: "张*", TelNumber: "189****1234", ProvinceName: "广东省", CityName: "广州市", CountyName: "海珠区"}
	if m != want {
		t.Errorf("Masked = %+v, want %+v", m, want)
	}
}

func TestOrder_AddressChangeable_UntilTheFirstShipmentWhilePendingOrPaid(t *testing.T) {
	shipped := &inventory.Shipping{Shipments: []inventory.Shipment{{}}}
	for _, tc := range []struct {
		status   inventory.Status
		shipping *inventory.Shipping
		want     bool
	}{
		{inventory.StatusPending, nil, true},
		{inventory.StatusPaid, nil, true},
		{inventory.StatusPaid, &inventory.Shipping{}, true},
		{inventory.StatusPaid, shipped, false},
		{inventory.StatusCancelled, nil, false},
		{inventory.StatusRefunding, nil, false},
		{inventory.StatusRefunded, nil, false},
	} {
		o := &inventory.Order{Status: tc.status, Shipping: tc.shipping}
		if got := o.AddressChangeable(); got != tc.want {
			t.Errorf("%s, shipping %v: %t, want %t", tc.status, tc.shipping, got, tc.want)
		}
	}
}

// invisibles are the format characters (Cf) a text field refuses: direction marks,
// zero-width characters, word joiner, BOM, soft hyphen, bidi overrides and isolates,
// a tag character, and a joiner that joins no emoji.
var invisibles = map[string]string{
	"RLM": "\u200f", "LRM": "\u200e", "ALM": "\u061c", "ZWSP": "\u200b", "ZWNJ": "\u200c", "ZWJ": "\u200d",
	"WJ": "\u2060", "BOM": "\ufeff", "SHY": "\u00ad", "LRE": "\u202a", "RLO": "\u202e", "LRI": "\u2066", "PDI": "\u2069",
	"TAG": "\U000E0041",
}

// Each invisible character is refused in each text field, the message naming the
// field; Chinese and ASCII text, and emoji sequences with their joiners, pass.
func TestTextFields_RefuseInvisibleFormatCharacters(t *testing.T) {
	for name, c := range invisibles {
		for field, edit := range map[string]func(*inventory.Address){
			"address.userName":   func(a *inventory.Address) { a.UserName = "张" + c + "三" },
			"address.detailInfo": func(a *inventory.Address) { a.DetailInfo = "新港中路" + c + "397号" },
			"address.cityName":   func(a *inventory.Address) { a.CityName = c + "广州市" },
			"address.streetName": func(a *inventory.Address) { a.StreetName = "新港街道" + c },
		} {
			a := goodAddress()
			edit(&a)
			if err := a.Validate(); !errors.Is(err, inventory.ErrInvalidRequest) || !strings.Contains(err.Error(), field) {
				t.Errorf("%s in %s: %v, want an invalid request naming it", name, field, err)
			}
		}
		for _, reason := range []string{"broken" + c, c + "坏了", "坏" + c + "了"} {
			if err := (inventory.RefundRequest{Reason: reason}).ValidateReason(); !errors.Is(err, inventory.ErrInvalidRequest) || !strings.Contains(err.Error(), "reason") {
				t.Errorf("%s in a reason: %v, want an invalid request naming it", name, err)
			}
		}
		if err := (inventory.NewSKU{ID: "cup", Name: "Cup" + c, Price: 100}).Validate(); !errors.Is(err, inventory.ErrInvalidRequest) || !strings.Contains(err.Error(), "name") {
			t.Errorf("%s in a SKU name: %v, want an invalid request naming it", name, err)
		}
	}
	for _, ok := range []string{
		"arrived broken, box crushed", "杯子碎了，包装也坏了", "坏了😭", "👩\u200d💻 works from home", "👍🏽\u200d", // the last joins nothing
	} {
		err := (inventory.RefundRequest{Reason: ok}).ValidateReason()
		if want := !strings.HasSuffix(ok, "\u200d"); (err == nil) != want {
			t.Errorf("reason %q: %v", ok, err)
		}
	}
	for _, ok := range []string{"👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "👩🏽\u200d🚀"} {
		if err := (inventory.RefundRequest{Reason: ok}).ValidateReason(); err != nil {
			t.Errorf("emoji sequence %q refused: %v", ok, err)
		}
	}
}
