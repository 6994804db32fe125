package orders

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

// FuzzDecodeCart: whatever the body, decodeCart never panics, and it either returns a
// cart inside the contract's bounds or an *inventory.InvalidRequestError with a reason.
func FuzzDecodeCart(f *testing.F) {
	for _, seed := range []string{
		`{"items":[{"skuId":"cup-01","qty":2},{"skuId":"saucer-02","qty":1}]}`,
		`{"items":[{"skuId":"cup-01","qty":2},{"skuId":"cup-01","qty":3}]}`,
		`{"items":[]}`, `{"items":null}`, `null`, `[]`, `{"items":[{"skuId":"a","qty":1.0}]}`,
		`{"items":[{"skuId":"a","qty":1e3}]}`, `{"items":[{"skuId":"a","qty":1,"qty":2}]}`,
		`{"items":[{"skuId":"a\u0000","qty":1}]}`, `{"ITEMS":[{"SKUID":"a","QTY":1}]}`,
		`{"items":[{"skuId":"a","qty":9999},{"skuId":"a","qty":1}]}`, "\xff\xfe", `{"items":[{}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cart, err := decodeCart(body)
		if err != nil {
			var invalid *inventory.InvalidRequestError
			if !errors.As(err, &invalid) || invalid.Reason == "" || !errors.Is(err, inventory.ErrInvalidRequest) {
				t.Fatalf("error %v is not an InvalidRequestError with a reason wrapping ErrInvalidRequest", err)
			}
			return
		}
		if len(cart) < 1 || len(cart) > inventory.MaxLines {
			t.Fatalf("%d lines accepted", len(cart))
		}
		for i, l := range cart {
			if !inventory.ValidSKUID(l.SKU) || l.Qty < 1 || l.Qty > inventory.MaxQty {
				t.Fatalf("line %+v accepted", l)
			}
			if i > 0 && cart[i-1].SKU >= l.SKU {
				t.Fatalf("lines not merged and sorted: %v", cart)
			}
		}
	})
}

func TestDecodeCart_MergesManyRawLinesOfOneSKU(t *testing.T) {
	body := `{"items":[` + strings.Repeat(`{"skuId":"cup-01","qty":1},`, 500) + `{"skuId":"cup-01","qty":1}]}`
	cart, err := decodeCart([]byte(body))
	if err != nil || len(cart) != 1 || cart[0].Qty != 501 {
		t.Errorf("501 lines of one SKU: %v %v, want one line of 501", cart, err)
	}
}

// wx.chooseAddress's whole answer, as the picker gives it (its page lists userName,
// postalCode, provinceName, cityName, countyName, streetName, detailInfo,
// detailInfoNew, nationalCode, telNumber, errMsg), passes through: the address fields
// are kept, streetName included; detailInfoNew, nationalCode and errMsg are dropped.
func TestDecodeAddress_TakesTheWholeAnswerOfWxChooseAddress(t *testing.T) {
	picker := `{"errMsg":"chooseAddress:ok","userName":"张三","nationalCode":"510000","telNumber":"18912341234","postalCode":"510000","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","streetName":"新港街道","detailInfo":"新港中路397号","detailInfoNew":"新港街道新港中路397号"}`
	a, err := DecodeAddress(json.RawMessage(picker))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	want := inventory.Address{UserName: "张三", TelNumber: "18912341234", ProvinceName: "广东省", CityName: "广州市", CountyName: "海珠区",
		StreetName: "新港街道", DetailInfo: "新港中路397号", PostalCode: "510000"}
	if *a != want {
		t.Errorf("decoded %+v, want %+v", *a, want)
	}
	if out, _ := json.Marshal(a); strings.Contains(string(out), "errMsg") || strings.Contains(string(out), "detailInfoNew") || strings.Contains(string(out), "nationalCode") {
		t.Errorf("kept what is not kept: %s", out)
	}
}

func TestDecodeOrder_ReadsTheAddressAsWxChooseAddressGivesIt(t *testing.T) {
	body := `{"items":[{"skuId":"vase","qty":1}],"address":{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"新港中路397号"}}`
	in, err := decodeOrder([]byte(body), nil)
	if err != nil || in.address == nil || in.address.DetailInfo != "新港中路397号" || in.address.PostalCode != "" {
		t.Fatalf("decode: %+v %v", in.address, err)
	}
	for want, addr := range map[string]string{
		"address must be":    `null`,
		"nationalCode":       `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x","nationalCode":440105}`,
		"errMsg":             `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x","errMsg":"a\u0000b"}`,
		"unknown field":      `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x","idCard":"x"}`,
		"address.streetName": `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","streetName":"` + strings.Repeat("街", 41) + `","detailInfo":"x"}`,
		"detailInfo":         `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区"}`,
		"address.telNumber":  `{"userName":"张三","telNumber":18912341234,"provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x"}`,
		"address.userName":   `{"userName":"","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x"}`,
	} {
		_, err := decodeOrder([]byte(`{"items":[{"skuId":"vase","qty":1}],"address":`+addr+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "18912341234") {
			t.Errorf("%s: got %v, want an error naming it and not repeating the phone", want, err)
		}
	}
}

// phoneLike matches what reads as a phone number, masked or not (13800138000,
// 189****1234): seven digits or more, some maybe masked, not inside a word (a
// tracking number SF123…), a fraction or a JSON number.
var phoneLike = regexp.MustCompile(`(?:^|[^0-9A-Za-z.:])[0-9*]{7,}(?:$|[^0-9A-Za-z])`)

// A refused address's message reaches the request's log line: it describes the
// address by its fields and holds no example phone number (nor the one sent).
func TestDecodeAddress_MessagesHoldNoPhoneNumber(t *testing.T) {
	for _, raw := range []string{
		`"an address"`, `null`, `[]`,
		`{"userName":"张三","telNumber":"18912341234"}`,
		`{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"新港中路397号","phone":"1"}`,
		`{"userName":"张三","telNumber":"call 18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"新港中路397号"}`,
		`{"userName":"张三","telNumber":18912341234,"provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"新港中路397号"}`,
	} {
		_, err := DecodeAddress(json.RawMessage(raw))
		var invalid *inventory.InvalidRequestError
		if !errors.As(err, &invalid) || !strings.Contains(invalid.Reason, "address") {
			t.Errorf("%s: %v, want an InvalidRequestError naming the address", raw, err)
			continue
		}
		if phoneLike.MatchString(err.Error()) || strings.Contains(err.Error(), "李四") {
			t.Errorf("%s: the message %q holds a phone number or a consignee", raw, err)
		}
	}
}
