package stockctl

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stockguard/stockguard/internal/inventory"
)

// The table views decode the routes' JSON (docs/contract.md, "Merchant API") into these.

type shardView struct {
	Shard, Available, Reserved, OnHand int
}

type skuView struct {
	SKU          string `json:"skuId"`
	Name         string
	Price        money
	Status       string
	SaleStartsAt string
	LimitPerUser int
	// Queue, FairWindowSeconds (seconds) and RiskThreshold (0-4, 0: no check) are the
	// waiting room's settings.
	Queue             bool
	FairWindowSeconds int
	RiskThreshold     int
	Shards            int
	Available         int
	Reserved          int
	OnHand            int
	PerShard          []shardView
	UpdatedBy         string
	UpdatedAt         string
}

// money is an amount in fen: a price, an order's or a refund's amount. The API's are
// never negative (a price is 1 to inventory.MaxPrice fen): decode refuses an answer
// holding a negative one, which fen would show as "¥0.-5".
type money int64

// UnmarshalJSON decodes an amount, refusing null (errUnexpected): no route gives money
// as null, which would show as ¥0.00.
func (m *money) UnmarshalJSON(data []byte) error {
	if null(data) {
		return errUnexpected
	}
	return json.Unmarshal(data, (*int64)(m))
}

// fen is p in yuan, as a buyer reads it: ¥59.00.
func fen(p money) string { return fmt.Sprintf("¥%d.%02d", p/100, p%100) }

// errUnexpected is a 2xx answer that is not the JSON its route answers (an endpoint
// that is not stockguard's API, or a proxy's page); Go's decoding error says nothing
// the operator can use.
var errUnexpected = errors.New("the answer is not the JSON this route gives: is the endpoint a stockguard API?")

// errOtherID is a 2xx answer about another SKU, order or adjustment than the one the
// request named: not the answer to this request, never shown as if it were.
var errOtherID = errors.New("not the answer to this request")

// about is table that also refuses (errOtherID, naming both ids) an answer table
// takes whose field key (skuId, orderId, adjustmentId; its letter case aside, as
// decoding matches it) is not id, the one the request named: a table or -o json would
// show another SKU or order as this one's. What table wrote is then the caller's to
// drop (call.show prints nothing of a refused answer).
func about(key, id string, table func(io.Writer, []byte) error) func(io.Writer, []byte) error {
	return answering(table, func(data []byte) string {
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(data, &fields) // an object: table took it
		if got, ok := stringField(fields, key); ok && got != id {
			return fmt.Sprintf("%s %q, not %q", key, got, id)
		}
		return ""
	})
}

// stringField is the string value of fields' key, matched regardless of letter case
// as decoding matches it; false when there is none, or it is not a string.
func stringField(fields map[string]json.RawMessage, key string) (string, bool) {
	for k, raw := range fields {
		var got string
		if strings.EqualFold(k, key) && json.Unmarshal(raw, &got) == nil {
			return got, true
		}
	}
	return "", false
}

// answering is table that also refuses (errOtherID) an answer table takes that other
// says is about something else than the request sent (what it is about instead, e.g.
// `shipmentId "p2", not "p1"`; "" for this request's answer). What table wrote is
// the caller's to drop, as for about.
func answering(table func(io.Writer, []byte) error, other func(data []byte) string) func(io.Writer, []byte) error {
	return func(w io.Writer, data []byte) error {
		if err := table(w, data); err != nil {
			return err
		}
		if o := other(data); o != "" {
			return fmt.Errorf("%w: it is about %s asked for", errOtherID, o)
		}
		return nil
	}
}

// otherShipment is, for answering, a shipment answer whose shipment.shipmentId is not
// id, the one sent (absent: "").
func otherShipment(id string) func(data []byte) string {
	return func(data []byte) string {
		var a struct{ Shipment struct{ ShipmentID string } }
		_ = json.Unmarshal(data, &a) // an object: table took it
		if a.Shipment.ShipmentID != id {
			return fmt.Sprintf("shipmentId %q, not %q", a.Shipment.ShipmentID, id)
		}
		return ""
	}
}

// otherAdjustment is, for answering, an adjustment answer about another SKU than sku
// (sku.skuId) or with another delta than the one sent (absent: 0, never sent).
func otherAdjustment(sku string, delta int) func(data []byte) string {
	return func(data []byte) string {
		var a struct {
			Delta int
			SKU   struct{ SKUID string }
		}
		_ = json.Unmarshal(data, &a) // an object: table took it
		switch {
		case a.SKU.SKUID != sku:
			return fmt.Sprintf("skuId %q, not %q", a.SKU.SKUID, sku)
		case a.Delta != delta:
			return fmt.Sprintf("delta %d, not %d", a.Delta, delta)
		}
		return ""
	}
}

// withoutRefund is, for answering, an order answer whose refunds hold none whose
// field key (refundId or outRefundNo) is id, the refund the request named.
func withoutRefund(key, id string) func(data []byte) string {
	return func(data []byte) string {
		var o struct{ Refunds []map[string]json.RawMessage }
		_ = json.Unmarshal(data, &o) // an object: table took it
		for _, r := range o.Refunds {
			if got, ok := stringField(r, key); ok && got == id {
				return ""
			}
		}
		return fmt.Sprintf("refunds without %s %q", key, id)
	}
}

// null reports whether data is JSON null: no route's answer, and one that decodes into
// a Go value as nothing (an empty SKU).
func null(data []byte) bool { return string(bytes.TrimSpace(data)) == "null" }

// terminalJSON is a route's answer for -o json: refused (errUnexpected) unless it is
// JSON other than null, else the answer with every control, format, line or paragraph separator
// character (escape sequences, bidirectional overrides, zero-width characters) and
// every invalid UTF-8 byte written as its JSON escape (\uXXXX, \ufffd). JSON allows
// those only inside strings, where the escape means the same character, so the output
// is the same JSON, and nothing in it acts on the terminal.
func terminalJSON(data []byte) ([]byte, error) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) || null(data) {
		return nil, errUnexpected
	}
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == '\t' || r == '\n' || r == '\r':
			out = append(out, byte(r))
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			for _, u := range utf16.Encode([]rune{r}) {
				out = fmt.Appendf(out, `\u%04x`, u)
			}
		default:
			out = append(out, data[:n]...)
		}
		data = data[n:]
	}
	return out, nil
}

// decode decodes a route's answer into T with every string in it made printable
// (printable): an answer's escape sequences, bidirectional overrides or zero-width
// characters never reach the operator's terminal through a table. An answer that is
// not T's JSON, is null, (T a struct, or a slice of structs) is an object without
// T's first field, the route's own (skuId, orderId, skusChecked, adjustmentId…), or
// holds a negative amount of money, is errUnexpected: {"error":"x"} from a proxy is
// no reconcile report.
func decode[T any](data []byte) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil || null(data) || !hasFirstField(reflect.TypeOf(v), data) {
		return v, errUnexpected
	}
	return v, clean(reflect.ValueOf(&v).Elem())
}

// hasFirstField reports whether data, JSON of type t, holds t's first field, not null,
// when t is a struct (named as encoding/json names it: its tag's name, or the field's
// name, matched without regard to case, as json.Unmarshal matches), in every element
// when t is a slice of structs; true for other types.
func hasFirstField(t reflect.Type, data []byte) bool {
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		var items []json.RawMessage
		if json.Unmarshal(data, &items) != nil {
			return false
		}
		return !slices.ContainsFunc(items, func(it json.RawMessage) bool { return !hasFirstField(t.Elem(), it) })
	case t.Kind() != reflect.Struct || t.NumField() == 0:
		return true
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return false
	}
	f := t.Field(0)
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	name = cmp.Or(name, f.Name)
	for k, raw := range fields {
		if strings.EqualFold(k, name) && !null(raw) {
			return true
		}
	}
	return false
}

// clean makes every string v holds printable: itself, or in the fields, elements, map
// values and pointees it holds, at any depth; a negative money there is errUnexpected.
func clean(v reflect.Value) error {
	var err error
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(printable(v.String()))
		}
	case reflect.Int64:
		if v.Type() == reflect.TypeFor[money]() && v.Int() < 0 {
			return errUnexpected
		}
	case reflect.Pointer:
		if !v.IsNil() {
			err = clean(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField() && err == nil; i++ {
			err = clean(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len() && err == nil; i++ {
			err = clean(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			err = cmp.Or(err, clean(e))
			v.SetMapIndex(k, e)
		}
	}
	return err
}

func printSKU(w io.Writer, data []byte) error {
	s, err := decode[skuView](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SKU\t%s\t%s\n", s.SKU, s.Name)
	fmt.Fprintf(tw, "price\t%s\t(%d fen)\n", fen(s.Price), s.Price)
	fmt.Fprintf(tw, "status\t%s\t%s\n", s.Status, s.SaleStartsAt)
	fmt.Fprintf(tw, "limit per user\t%d\t\n", s.LimitPerUser)
	fmt.Fprintf(tw, "queue\t%s\t\n", s.queueSettings())
	fmt.Fprintf(tw, "stock\tavailable %d\treserved %d\ton-hand %d\n", s.Available, s.Reserved, s.OnHand)
	fmt.Fprintf(tw, "updated\t%s\t%s\n\n", s.UpdatedAt, s.UpdatedBy)
	fmt.Fprintf(tw, "SHARD\tAVAILABLE\tRESERVED\tON-HAND\n")
	for _, sh := range s.PerShard {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\n", sh.Shard, sh.Available, sh.Reserved, sh.OnHand)
	}
	return tw.Flush()
}

// queueSettings says how the SKU sells: "off", or "on" with its fair window, and its risk
// threshold when it has one ("on, fair window 30s, risk threshold 3").
func (s skuView) queueSettings() string {
	out := "off"
	if s.Queue {
		out = fmt.Sprintf("on, fair window %ds", s.FairWindowSeconds)
	}
	if s.RiskThreshold > 0 {
		out += fmt.Sprintf(", risk threshold %d", s.RiskThreshold)
	}
	return out
}

func printSKULine(w io.Writer, data []byte) error {
	s, err := decode[skuView](data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\t%s\t%s\tavailable %d\n", s.SKU, s.Status, fen(s.Price), s.Available)
	return err
}

// printPage returns the printer of one page of a list route's answer (docs/contract.md,
// "Merchant API": the items under key, and next, the after= of the next page, absent on
// the last): a table of header and a row of each item, then the next page's cursor.
func printPage[T any](key, header string, row func(T) string) func(io.Writer, []byte) error {
	return func(w io.Writer, data []byte) error {
		fields, err := decode[map[string]json.RawMessage](data)
		if err != nil {
			return err
		}
		raw, ok := fields[key]
		if !ok {
			return errUnexpected // a page always lists its items, if none
		}
		items, err := decode[[]T](raw)
		if err != nil {
			return err
		}
		more, err := moreHint(fields["next"])
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, header)
		for _, it := range items {
			fmt.Fprint(tw, row(it))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err = io.WriteString(w, more)
		return err
	}
}

// shellSafe matches a cursor no POSIX shell reads anything into: it is pasted as it is.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_.,:/=+@%-]+$`)

// moreHint is the line that ends a page whose answer's next is next (absent or "":
// the last page, no line): "more: --after=CURSOR", the cursor one shell word an
// operator may paste, as given when shellSafe, else in single quotes (each quote in it
// closed, escaped and opened again). A cursor that is not a JSON string, or holds a character other than
// printable ASCII (a control or format character a table would show as a space, so a
// copy would be another cursor; a character that only looks like another), is no
// route's cursor: errUnexpected.
func moreHint(next json.RawMessage) (string, error) {
	var cursor string
	switch {
	case next == nil:
		return "", nil
	case json.Unmarshal(next, &cursor) != nil || null(next) || !utf8.Valid(next):
		return "", errUnexpected
	case strings.ContainsFunc(cursor, unprintableASCII):
		return "", fmt.Errorf("%w (its next page's cursor holds characters other than printable ASCII)", errUnexpected)
	case cursor == "":
		return "", nil
	case !shellSafe.MatchString(cursor):
		cursor = "'" + strings.ReplaceAll(cursor, "'", `'\''`) + "'"
	}
	return "\nmore: --after=" + cursor + "\n", nil // with '=': a cursor starting with '-' stays its value
}

// unprintableASCII reports whether r is other than printable ASCII (' ' to '~').
func unprintableASCII(r rune) bool { return r < ' ' || r > '~' }

// ledgerEntry is one entry of GET /admin/skus/{skuId}/ledger.
type ledgerEntry struct {
	At, Op, Ref, Reason, By  string
	Qty, DAvailable, DOnHand int
}

// The printers of the list routes' pages.
var (
	printSKUs = printPage("skus", "SKU\tNAME\tPRICE\tSTATUS\tAVAILABLE\tRESERVED\tON-HAND\tSHARDS\tQUEUE\n", func(s skuView) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", s.SKU, s.Name, fen(s.Price), s.Status, s.Available, s.Reserved, s.OnHand, s.Shards, s.queueSettings())
	})
	printLedger = printPage("entries", "AT\tOP\tREF\tQTY\tΔAVAILABLE\tΔON-HAND\tBY\tREASON\n", func(e ledgerEntry) string {
		return fmt.Sprintf("%s\t%s\t%s\t%d\t%+d\t%+d\t%s\t%s\n", e.At, e.Op, e.Ref, e.Qty, e.DAvailable, e.DOnHand, e.By, e.Reason)
	})
	printOrders = printPage("orders", "ORDER\tSTATUS\tUSER\tAMOUNT\tEXPIRES\n", func(o orderView) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\n", o.OrderID, o.Status, o.UserID, fen(o.Amount), o.ExpiresAt)
	})
)

func printAdjustment(w io.Writer, data []byte) error {
	a, err := decode[struct {
		AdjustmentID string
		Delta        int
		Reason       string
		Replayed     bool
		SKU          json.RawMessage
	}](data)
	if err != nil {
		return err
	}
	what := "applied"
	if a.Replayed {
		what = "already applied before (nothing changed)"
	}
	fmt.Fprintf(w, "adjustment %s (%+d, %s): %s\n\n", a.AdjustmentID, a.Delta, a.Reason, what)
	return printSKU(w, a.SKU)
}

func printReshard(w io.Writer, data []byte) error {
	r, err := decode[struct {
		SKU                  string `json:"skuId"`
		Shards, TargetShards int
		Moved                int
		Complete             bool
	}](data)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d shards (asked %d), %d units moved\n", r.SKU, r.Shards, r.TargetShards, r.Moved)
	return nil // not complete: reshard says so on stderr and exits ExitIncomplete
}

type orderView struct {
	OrderID, Status, UserID, CreatedAt, ExpiresAt, PaidAt string
	Amount, RefundedAmount                                money
	Address                                               *inventory.Address
	Shipping                                              *struct{ Status, UploadedAt, Error string }
	Shipments                                             []shipmentView
	Receipt                                               *struct{ Status, ConfirmedAt, Method string }
	Items                                                 []struct {
		SKU       string `json:"skuId"`
		Qty       int
		UnitPrice money
	}
	Refunds []struct {
		RefundID, OutRefundNo, Status, RequestedAt, Error string
		Amount                                            money
		Restocked                                         bool
		Lines                                             []struct {
			SKU string `json:"skuId"`
			Qty int
		}
	}
	Aftersales []struct {
		AftersaleID, Kind, Reason, Status, RequestedAt, RejectReason, OutRefundNo string
		Lines                                                                     []struct {
			SKU string `json:"skuId"`
			Qty int
		}
	}
}

func printOrder(w io.Writer, data []byte) error {
	o, err := decode[orderView](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "order\t%s\t%s\nuser\t%s\t\namount\t%s\t\ncreated\t%s\t\nexpires\t%s\t\n", o.OrderID, o.Status, o.UserID, fen(o.Amount), o.CreatedAt, o.ExpiresAt)
	if o.PaidAt != "" {
		fmt.Fprintf(tw, "paid\t%s\t\n", o.PaidAt)
	}
	if a := o.Address; a != nil { // the merchant's view: whole, to ship by
		fmt.Fprintf(tw, "ship to\t%s %s\t\n\t%s%s%s%s %s\t\n", a.UserName, a.TelNumber, a.ProvinceName, a.CityName, a.CountyName, a.DetailInfo, a.PostalCode)
	}
	if sh := o.Shipping; sh != nil {
		fmt.Fprintf(tw, "shipping\t%s %s\t%s\n", sh.Status, sh.UploadedAt, sh.Error)
		for _, p := range o.Shipments {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.ShipmentID, p.summary(), p.upload(sh.Status, sh.Error))
		}
	}
	if r := o.Receipt; r != nil { // WAITING, or CONFIRMED at WeChat's time by buyer or auto
		fmt.Fprintf(tw, "receipt\t%s %s\t%s\n", r.Status, r.ConfirmedAt, r.Method)
	}
	fmt.Fprintf(tw, "\nSKU\tQTY\tUNIT PRICE\n")
	for _, it := range o.Items {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", it.SKU, it.Qty, fen(it.UnitPrice))
	}
	if len(o.Refunds) > 0 {
		fmt.Fprintf(tw, "\nREFUND\tOUT_REFUND_NO\tLINES\tAMOUNT\tSTATUS\tRESTOCKED\tREQUESTED\tERROR (REFUSED/CLOSED/ABNORMAL: settle by hand; WAITING: see its text)\n")
	}
	for _, r := range o.Refunds {
		var lines []string
		for _, l := range r.Lines {
			lines = append(lines, fmt.Sprintf("%s:%d", l.SKU, l.Qty))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", r.RefundID, r.OutRefundNo, strings.Join(lines, ","), fen(r.Amount), r.Status, r.Restocked, r.RequestedAt, r.Error)
	}
	if len(o.Refunds) > 0 {
		fmt.Fprintf(tw, "refunded\t%s\t\n", fen(o.RefundedAmount))
	}
	if len(o.Aftersales) > 0 {
		fmt.Fprintf(tw, "\nAFTER-SALE\tKIND\tLINES\tSTATUS\tREQUESTED\tREASON\tREFUND\n")
	}
	for _, a := range o.Aftersales {
		var lines []string
		for _, l := range a.Lines {
			lines = append(lines, fmt.Sprintf("%s:%d", l.SKU, l.Qty))
		}
		reason := a.Reason
		if a.RejectReason != "" {
			reason += " (rejected: " + a.RejectReason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.AftersaleID, a.Kind, strings.Join(lines, ","), a.Status, a.RequestedAt, reason, a.OutRefundNo)
	}
	return tw.Flush()
}

// shipmentView is one shipment of an answer (httpapi.ShipmentJSON).
type shipmentView struct {
	ShipmentID, Type, Carrier, Tracking, UploadedAt string
	Items                                           []struct {
		SKU string `json:"skuId"`
		Qty int
	}
}

// summary is how p travels: its type, carrier and tracking number.
func (p shipmentView) summary() string {
	return strings.TrimSpace(strings.Join([]string{p.Type, p.Carrier, p.Tracking}, " "))
}

// upload is where p's own upload stands: UPLOADED at its own time once WeChat accepted
// an upload holding it, else the order's shipping status (QUEUED, FAILED, CANCELLED)
// and error, never the time another shipment was uploaded.
func (p shipmentView) upload(status, errText string) string {
	if p.UploadedAt != "" {
		return "UPLOADED " + p.UploadedAt
	}
	if status == "UPLOADED" { // the order's last upload did not hold p: p waits for the next
		status = "QUEUED"
	}
	return strings.TrimSpace(status + " " + errText)
}

// printShipment prints POST /admin/orders/{orderId}/shipments' answer: the shipment
// with its own upload state, then what it holds.
func printShipment(w io.Writer, data []byte) error {
	a, err := decode[struct {
		OrderID  string
		Shipment shipmentView
		Shipping struct{ Status, Error string }
	}](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "order\t%s\nshipment\t%s\t%s\nupload\t%s\n\nSKU\tQTY\n", a.OrderID,
		a.Shipment.ShipmentID, a.Shipment.summary(), a.Shipment.upload(a.Shipping.Status, a.Shipping.Error))
	for _, it := range a.Shipment.Items {
		fmt.Fprintf(tw, "%s\t%d\n", it.SKU, it.Qty)
	}
	return tw.Flush()
}

// report is reconcile's report (docs/contract.md, "Merchant API").
type report struct {
	SKUsChecked int `json:"skusChecked"`
	Differences []struct {
		SKU              string `json:"skuId"`
		Rule             string `json:"rule"`
		Expected, Actual int
	} `json:"differences"`
	OverdueOrders []string `json:"overdueOrders"`
	Repaired      []struct {
		SKU   string `json:"skuId"`
		Rule  string `json:"rule"`
		Delta int    `json:"delta"`
	} `json:"repaired"`
	RefundProblems []string `json:"refundProblems"`
	StuckRefunds   []string `json:"stuckRefunds"`
}

// printReport prints a reconcile report: a summary line, then each difference, each
// repair and each overdue order.
func printReport(w io.Writer, data []byte) error {
	r, err := decode[report](data)
	if err != nil {
		return err
	}
	if r.SKUsChecked < 0 { // no count the API gives; "the books balance" would follow
		return errUnexpected
	}
	fmt.Fprintf(w, "%d SKUs checked, %d differences, %d overdue orders, %d repairs, %d refund problems, %d stuck refunds\n",
		r.SKUsChecked, len(r.Differences), len(r.OverdueOrders), len(r.Repaired), len(r.RefundProblems), len(r.StuckRefunds))
	if len(r.Differences) == 0 && len(r.RefundProblems) == 0 {
		fmt.Fprintln(w, "the books balance")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Differences) > 0 {
		fmt.Fprintf(tw, "\nSKU\tRULE\tEXPECTED\tACTUAL\n")
		for _, d := range r.Differences {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", d.SKU, d.Rule, d.Expected, d.Actual)
		}
	}
	if len(r.Repaired) > 0 {
		fmt.Fprintf(tw, "\nREPAIRED SKU\tRULE\tDELTA\n")
		for _, d := range r.Repaired {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", d.SKU, d.Rule, d.Delta)
		}
	}
	if len(r.OverdueOrders) > 0 {
		fmt.Fprintf(tw, "\nOVERDUE ORDER\n")
		for _, id := range r.OverdueOrders {
			fmt.Fprintf(tw, "%s\n", id)
		}
	}
	for _, list := range []struct {
		head  string
		lines []string
	}{{"REFUND PROBLEM", r.RefundProblems}, {"STUCK REFUND (out_refund_no)", r.StuckRefunds}} {
		if len(list.lines) > 0 {
			fmt.Fprintf(tw, "\n%s\n%s\n", list.head, strings.Join(list.lines, "\n"))
		}
	}
	return tw.Flush()
}
