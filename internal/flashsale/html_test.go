package flashsale

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// htmlText parses page as XML (so it must be well-formed) and returns its text, one
// space between elements, and the src of every img.
func htmlText(t *testing.T, page []byte) (string, []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var text strings.Builder
	var srcs []string
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
		case xml.EndElement:
			text.WriteByte(' ')
		case xml.StartElement:
			text.WriteByte(' ')
			for _, a := range tok.Attr {
				if tok.Name.Local == "img" && a.Name.Local == "src" {
					srcs = append(srcs, a.Value)
				}
			}
		}
	}
	return strings.Join(strings.Fields(text.String()), " "), srcs
}

// The HTML report is well-formed, holds every number of the text report and the
// verdict of every check, and embeds its three pictures as SVG.
func TestWriteHTML_HoldsTheTextReportsFiguresAndThreePictures(t *testing.T) {
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
	got, srcs := htmlText(t, page.Bytes())
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
	if len(srcs) != 3 {
		t.Fatalf("%d pictures, want 3 (orders/s, latency, available stock)", len(srcs))
	}
	for i, src := range srcs {
		data, ok := strings.CutPrefix(src, "data:image/svg+xml;base64,")
		svg, err := base64.StdEncoding.DecodeString(data)
		if !ok || err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("picture %d is not an SVG data: URI (%.60s…)", i, src)
			continue
		}
		htmlText(t, svg) // well-formed too
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
