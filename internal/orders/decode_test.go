package orders

import (
	"errors"
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

func TestDecodeOrder_ReadsTheAddressAsWxChooseAddressGivesIt(t *testing.T) {
	body := `{"items":[{"skuId":"vase","qty":1}],"address":{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"新港中路397号"}}`
	in, err := decodeOrder([]byte(body), nil)
	if err != nil || in.address == nil || in.address.DetailInfo != "新港中路397号" || in.address.PostalCode != "" {
		t.Fatalf("decode: %+v %v", in.address, err)
	}
	for want, addr := range map[string]string{
		"address must be":   `null`,
		"nationalCode":      `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x","nationalCode":"440105"}`,
		"detailInfo":        `{"userName":"张三","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区"}`,
		"address.telNumber": `{"userName":"张三","telNumber":18912341234,"provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x"}`,
		"address.userName":  `{"userName":"","telNumber":"18912341234","provinceName":"广东省","cityName":"广州市","countyName":"海珠区","detailInfo":"x"}`,
	} {
		_, err := decodeOrder([]byte(`{"items":[{"skuId":"vase","qty":1}],"address":`+addr+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "18912341234") {
			t.Errorf("%s: got %v, want an error naming it and not repeating the phone", want, err)
		}
	}
}
