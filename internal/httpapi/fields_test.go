package httpapi_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Each malformed line is refused naming the field and the element at fault.
func TestDecodeLines_NamesTheFieldAtFault(t *testing.T) {
	for raw, want := range map[string]string{
		`[{"skuId":"cup","qty":1.5}]`:                       "lines[0].qty must be an integer",
		`[{"skuId":"cup","qty":1},{"skuId":"b","qty":"1"}]`: "lines[1].qty must be an integer",
		`[{"skuId":"cup","qty":9223372036854775808}]`:       "lines[0].qty must be an integer",
		`[{"skuId":"cup","qty":1,"price":1}]`:               `unknown field "price"`,
		`[null]`:                                            "lines[0] must be an object",
		`[{"skuId":7,"qty":1}]`:                             "lines[0].skuId must be a string",
		`{"skuId":"cup","qty":1}`:                           "lines must be an array",
	} {
		_, err := httpapi.DecodeLines(json.RawMessage(raw), "lines")
		if !errors.Is(err, inventory.ErrInvalidRequest) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	lines, err := httpapi.DecodeLines(json.RawMessage(`[{"skuId":"cup","qty":2},{"qty":1,"skuId":"cup"}]`), "lines")
	if err != nil || len(lines) != 2 || lines[0] != (inventory.Line{SKU: "cup", Qty: 2}) {
		t.Errorf("two lines of one SKU, not merged yet: %v %v", lines, err)
	}
}
