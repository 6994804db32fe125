package flashsale

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// htmlText parses page as XML (so it must be well-formed) and returns its text, one
// space between elements, and the text of each <svg> element (each picture's labels).
func htmlText(t *testing.T, page []byte) (string, []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var text strings.Builder
	var svgs []string
	depth := 0 // inside an <svg> element when > 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			text.Write(tok)
			if depth > 0 {
				svgs[len(svgs)-1] += string(tok)
			}
		case xml.EndElement:
			text.WriteByte(' ')
			if tok.Name.Local == "svg" {
				depth--
			}
		case xml.StartElement:
			text.WriteByte(' ')
			if tok.Name.Local == "svg" {
				if depth == 0 {
					svgs = append(svgs, "")
				}
				depth++
			}
		}
	}
	return strings.Join(strings.Fields(text.String()), " "), svgs
}

// The HTML report is well-formed, holds every number of the text report and the
// verdict of every check, opens with the summary, the run's date and build, and draws
// its three pictures as inline SVG in the plots' own font, embedded in the page.
func TestWriteHTML_HoldsTheTextReportsFiguresAndThreePictures(t *testing.T) {
	t.Parallel() // its own stand-in server
	st, srv := newStandIn(t, "cup-01", 30, 0, fault{busyEvery: 10})
	cfg := testConfig(srv)
	cfg.Buyers, cfg.PayRatio, cfg.CancelUnpaid = 100, 0.5, true
	cfg.SampleEvery = time.Millisecond
	var text bytes.Buffer
	rep, err := run(context.Background(), cfg, &text, st.readOnHand)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, text.String())
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	got, svgs := htmlText(t, page.Bytes())
	for _, n := range regexp.MustCompile(`\d+(\.\d+)?`).FindAllString(text.String(), -1) {
		if !strings.Contains(got, n) {
			t.Errorf("HTML report lacks %s of the text report", n)
		}
	}
	for _, c := range rep.Checks {
		if want := string(c.Result) + " " + c.Name + " " + strings.Join(strings.Fields(c.Detail), " "); !strings.Contains(got, want) {
			t.Errorf("HTML report lacks the check %q", want)
		}
	}
	opening := "Flash sale of cup-01: PASS " + rep.Summary + " Run " + rep.RunAt.Format("2006-01-02 15:04:05 MST")
	if !strings.Contains(got, opening) || !strings.Contains(got, rep.Version) || rep.Version == "" {
		t.Errorf("the page does not open with %q and the build %q:\n%.600s", opening, rep.Version, got[strings.Index(got, "Flash sale"):])
	}
	if len(svgs) != 3 {
		t.Fatalf("%d pictures, want 3 (orders/s, latency, available stock)", len(svgs))
	}
	for i, want := range []string{"orders/s", "latency (ms)", "available read (GET /skus)"} {
		if !strings.Contains(svgs[i], want) {
			t.Errorf("picture %d lacks %q: %.200s", i, want, svgs[i])
		}
	}
	face := regexp.MustCompile(`@font-face \{ font-family: "([^"]+)";[^}]*src: url\(data:font/ttf;base64,([A-Za-z0-9+/=]+)\)`).FindSubmatch(page.Bytes())
	if face == nil || len(face[2]) < 100_000 || !bytes.Contains(page.Bytes(), []byte("font-family:"+string(face[1])+";")) {
		t.Errorf("the page does not embed the font its pictures name (family %q)", face)
	}
}

// The settlement's tables carry the money taken and refunded and the refund answers.
func TestWriteHTML_ShowsRefunds(t *testing.T) {
	rep := reportWith(&Settlement{
		PayRatio: 0.7, CancelUnpaid: true, Orders: 30, Payers: 21, Cancels: 9, PaidOrders: 21, PaidUnits: 21, TakenFen: 837900,
		RefundRatio: 0.2, Refunds: 4, RefundedUnits: 4, RefundedOrders: 4, RefundedFen: 159600,
		RefundAnswers: []Answer{{Status: 202, Count: 3}, {Status: 409, Code: "REFUND_NOT_ALLOWED", Count: 1}}, RefundWaitMs: 30000,
	})
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	got, _ := htmlText(t, page.Bytes())
	for _, want := range []string{"money taken ¥8,379.00 money refunded ¥1,596.00", "refunds sent 4 units back 4", "read back REFUNDED 4",
		"refund answer orders 202 3 409 REFUND_NOT_ALLOWED 1", "refund ratio 0.2 refund wait 30.0 s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q:\n%s", want, got)
		}
	}
}

// reportWith is a sale of 30 cups at ¥399.00 to 300 buyers in 0.9 s whose checks all
// passed, settled as st says.
func reportWith(st *Settlement) *Report {
	return &Report{
		RunAt: time.Date(2026, 11, 11, 10, 0, 0, 0, time.UTC), Version: "(devel), go1.26", BaseURL: "http://127.0.0.1:3000",
		SKU: "cup-01", Price: 39900, Buyers: 300, Concurrency: 50, Qty: 1, StartAvailable: 30, Created: 30, Reserved: 30, WallMs: 912,
		Settlement: st, Passed: true,
		Checks: []Check{{Name: "created orders", Result: ResultPass}, {Name: checkOversoldName, Result: ResultPass}},
	}
}

// The summary is one sentence: what sold of what in how long, the money, and nothing
// oversold or the first thing that went wrong.
func TestReportSummary(t *testing.T) {
	paid := &Settlement{Payers: 21, PaidOrders: 21, TakenFen: 837900}
	refunded := &Settlement{Payers: 21, PaidOrders: 21, TakenFen: 837900, RefundRatio: 0.2, RefundedOrders: 4, RefundedFen: 159600}
	failed := reportWith(paid)
	failed.Checks[1] = Check{Name: checkOversoldName, Result: ResultFail, Detail: "orders claim 31 units, start available was 30: oversold by 1"}
	unknown := reportWith(nil)
	unknown.Checks[1] = Check{Name: checkOversoldName, Result: ResultSkip, Detail: "2 buyers' outcomes are unknown"}
	slow := reportWith(nil)
	slow.WallMs = 125_400
	for _, tc := range []struct {
		r    *Report
		want string
	}{
		{reportWith(nil), "Sold 30 of 30 cup-01 in 0.9 s (30 orders from 300 buyers); no money taken (nobody paid in this run); nothing oversold, and every check passed."},
		{reportWith(paid), "Sold 30 of 30 cup-01 in 0.9 s (30 orders from 300 buyers); took ¥8,379.00 from 21 paid orders, refunded nothing; nothing oversold, and every check passed."},
		{reportWith(refunded), "Sold 30 of 30 cup-01 in 0.9 s (30 orders from 300 buyers); took ¥8,379.00 from 21 paid orders and refunded ¥1,596.00 for 4; nothing oversold, and every check passed."},
		{failed, `Sold 30 of 30 cup-01 in 0.9 s (30 orders from 300 buyers); took ¥8,379.00 from 21 paid orders, refunded nothing; but the "nothing oversold" check FAILED: orders claim 31 units, start available was 30: oversold by 1.`},
		{unknown, "Sold 30 of 30 cup-01 in 0.9 s (30 orders from 300 buyers); no money taken (nobody paid in this run); overselling could not be ruled out: 2 buyers' outcomes are unknown."},
		{slow, "Sold 30 of 30 cup-01 in 2 min 05 s (30 orders from 300 buyers); no money taken (nobody paid in this run); nothing oversold, and every check passed."},
	} {
		if got := tc.r.summary(); got != tc.want {
			t.Errorf("summary\n got %s\nwant %s", got, tc.want)
		}
	}
	for fen, want := range map[int64]string{0: "¥0.00", 5: "¥0.05", 39900: "¥399.00", 837900: "¥8,379.00", 123456789: "¥1,234,567.89", -1596: "-¥15.96"} {
		if got := yuan(fen); got != want {
			t.Errorf("yuan(%d) = %q, want %q", fen, got, want)
		}
	}
}

func TestNewTimeline_BinsOrdersByAnswerTime(t *testing.T) {
	began := time.Unix(1000, 0)
	at := func(sec float64, status int) outcome {
		return outcome{attempts: []attempt{{sent: began, received: began.Add(time.Duration(sec * float64(time.Second))), status: status}}}
	}
	// A 4 s sale: 40 bins of 0.1 s; the answers at 0.05 s fall in bin 0, 3.95 s in bin 39.
	outcomes := []outcome{at(0.05, 201), at(0.06, 201), at(0.07, 409), at(3.95, 201)}
	cfg := DefaultConfig()
	cfg.Qty = 2
	tl := newTimeline(cfg, outcomes, began, 4*time.Second, nil)
	if len(tl.OrdersPerSec) != 40 || tl.BinSeconds != 0.1 {
		t.Fatalf("%d bins of %g s, want 40 of 0.1", len(tl.OrdersPerSec), tl.BinSeconds)
	}
	for i, want := range map[int]float64{0: 20, 1: 0, 39: 10} {
		if got := tl.OrdersPerSec[i]; got < want-1e-9 || got > want+1e-9 {
			t.Errorf("bin %d: %g orders/s, want %g", i, got, want)
		}
	}
	want := []StockPoint{{0.05, 2}, {0.06, 4}, {3.95, 6}}
	if len(tl.Reserved) != len(want) || len(tl.LatenciesMs) != 4 || tl.LatenciesMs[3] != 3950 {
		t.Fatalf("reserved %v latencies %v, want %v and 4 latencies ending 3950", tl.Reserved, tl.LatenciesMs, want)
	}
	for i, p := range tl.Reserved {
		if p.Units != want[i].Units || p.AtSec < want[i].AtSec-1e-9 || p.AtSec > want[i].AtSec+1e-9 {
			t.Errorf("reserved[%d] = %v, want %v", i, p, want[i])
		}
	}
}

// The build is named with the Go version; a git checkout of this module is described,
// another module's is not.
func TestBuildVersion(t *testing.T) {
	if v := buildVersion(); !strings.HasSuffix(v, runtime.Version()) {
		t.Errorf("buildVersion() = %q, want it to end with %s", v, runtime.Version())
	}
	if got := describeWorkingTree("example.com/another-module"); got != "" {
		t.Errorf("another module's checkout described as %q", got)
	}
	if err := exec.Command("git", "rev-parse", "--show-toplevel").Run(); err != nil {
		t.Skip("not in a git checkout: no working tree to describe")
	}
	if got := describeWorkingTree("github.com/stockguard/stockguard"); !regexp.MustCompile(`^\S+$`).MatchString(got) {
		t.Errorf("this checkout described as %q, want git describe's one word", got)
	}
}
