package flashsale

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is one picture of the HTML report: an SVG element, inline in the page.
type figure struct {
	Title, Caption string
	SVG            template.HTML
}

// The size of a figure, and the blank margin inside its frame that the plot is drawn
// within, so that no label, tick or legend touches the frame.
const (
	figureWidth  = 16 * vg.Centimeter
	figureHeight = 8 * vg.Centimeter
	figureMargin = 4 * vg.Millimeter
)

// WriteHTML writes the report as one self-contained HTML page (no outside files,
// fonts or scripts). It opens with the summary sentence, the run's date, the build
// and the settings, then the sale's figures, the settlement's (payments, cancels,
// refunds and their money), three pictures drawn from the Timeline (orders/s over
// time, the buyers' latency histogram, available stock over time), the verification
// lines and the notes. The pictures are inline SVG whose text is set in the font the
// plots were measured with, embedded once in the page, so that every label and legend
// sits where it was laid out, inside the figure's frame, whatever fonts the reader's
// machine has. The page is well-formed XML as well as HTML. A report without a
// Timeline gets no pictures.
func (r *Report) WriteHTML(w io.Writer) error {
	figs, err := r.figures()
	if err != nil {
		return fmt.Errorf("draw report: %w", err)
	}
	var fontFace template.CSS
	if len(figs) > 0 {
		if fontFace, err = plotFontFace(); err != nil {
			return fmt.Errorf("draw report: %w", err)
		}
	}
	if err := htmlPage.Execute(w, struct {
		R        *Report
		Verdict  Result
		Figures  []figure
		FontFace template.CSS
	}{r, verdict(r.Passed), figs, fontFace}); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}

// plotFontFace is the CSS @font-face rule of the plots' font (plot.DefaultFont, from
// gonum's font cache): the font file as a data: URL, under the family name that the
// SVG text names.
func plotFontFace() (template.CSS, error) {
	face := font.DefaultCache.Lookup(plot.DefaultFont, 12)
	if face.Face == nil {
		return "", fmt.Errorf("no font %v in the font cache", plot.DefaultFont.Typeface)
	}
	family, err := face.Face.Name(nil, 1) // name ID 1: the font family, as vgsvg writes it
	if err != nil {
		return "", fmt.Errorf("font family of %v: %w", plot.DefaultFont.Typeface, err)
	}
	var raw bytes.Buffer
	if _, err := face.Face.WriteSourceTo(nil, &raw); err != nil {
		return "", fmt.Errorf("font %s: %w", family, err)
	}
	// Our own font's bytes in base64 and its family name quoted: safe CSS.
	return template.CSS(fmt.Sprintf(`@font-face { font-family: %q; font-weight: normal; font-style: normal; src: url(data:font/ttf;base64,%s) format("truetype"); }`,
		family, base64.StdEncoding.EncodeToString(raw.Bytes()))), nil
}

// figures draws the report's pictures.
func (r *Report) figures() ([]figure, error) {
	t := r.Timeline
	if t == nil {
		return nil, nil
	}
	var figs []figure
	add := func(title, caption string, p *plot.Plot, err error) error {
		if err != nil || p == nil {
			return err
		}
		svg, err := svgElement(p)
		figs = append(figs, figure{Title: title, Caption: caption, SVG: svg})
		return err
	}
	p, err := t.throughputPlot()
	if err := add("Orders per second", fmt.Sprintf("orders created per %.1f s bin, by when their answer arrived", t.BinSeconds), p, err); err != nil {
		return nil, err
	}
	p, err = t.latencyPlot()
	if err := add("Latency", "buyers by wait, first request sent to final answer (ms)", p, err); err != nil {
		return nil, err
	}
	p, err = t.stockPlot(r.StartAvailable)
	if err := add("Available stock", "GET /skus reads during the sale, and the start less the units of the orders answered so far", p, err); err != nil {
		return nil, err
	}
	return figs, nil
}

func (t *Timeline) throughputPlot() (*plot.Plot, error) {
	pts := make(plotter.XYs, len(t.OrdersPerSec))
	for i, v := range t.OrdersPerSec {
		pts[i] = plotter.XY{X: (float64(i) + 0.5) * t.BinSeconds, Y: v}
	}
	return linePlot("seconds since the first order", "orders/s", line{"orders/s", pts, color.RGBA{B: 200, A: 255}, 1.5})
}

func (t *Timeline) latencyPlot() (*plot.Plot, error) {
	if len(t.LatenciesMs) == 0 {
		return nil, nil
	}
	h, err := plotter.NewHist(plotter.Values(t.LatenciesMs), 40)
	if err != nil {
		return nil, err
	}
	h.FillColor = color.RGBA{G: 120, B: 200, A: 255}
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = "latency (ms)", "buyers"
	p.Add(h)
	return p, nil
}

func (t *Timeline) stockPlot(start int) (*plot.Plot, error) {
	read := make(plotter.XYs, len(t.Available))
	for i, s := range t.Available {
		read[i] = plotter.XY{X: s.AtSec, Y: float64(s.Units)}
	}
	left := plotter.XYs{{X: 0, Y: float64(start)}}
	for _, s := range t.Reserved {
		left = append(left, plotter.XY{X: s.AtSec, Y: float64(start - s.Units)})
	}
	return linePlot("seconds since the first order", "units",
		line{"available read (GET /skus)", read, color.RGBA{R: 220, G: 60, A: 255}, 4},
		line{"start − units of orders answered", left, color.RGBA{G: 90, B: 40, A: 255}, 1})
}

// line is one named series of a line plot, width in points.
type line struct {
	name  string
	pts   plotter.XYs
	color color.Color
	width float64
}

// linePlot draws the series that have points, with a legend when there are several.
func linePlot(x, y string, lines ...line) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Y.Min = 0
	drawn := 0
	for _, l := range lines {
		if len(l.pts) == 0 {
			continue
		}
		pl, err := plotter.NewLine(l.pts)
		if err != nil {
			return nil, err
		}
		pl.Color, pl.Width = l.color, vg.Points(l.width)
		p.Add(pl)
		if len(lines) > 1 {
			p.Legend.Add(l.name, pl)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, nil
	}
	// At the top right of the data area, a little way in from its corner.
	p.Legend.Top, p.Legend.XOffs, p.Legend.YOffs = true, -vg.Millimeter, -vg.Millimeter
	return p, nil
}

// svgElement draws p within figureMargin of a figureWidth × figureHeight SVG canvas and
// returns the <svg> element, without the XML declaration before it, for the page.
func svgElement(p *plot.Plot) (template.HTML, error) {
	c := vgsvg.New(figureWidth, figureHeight)
	p.Draw(draw.Crop(draw.New(c), figureMargin, -figureMargin, figureMargin, -figureMargin))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	svg := buf.String()
	start := strings.Index(svg, "<svg")
	if start < 0 {
		return "", fmt.Errorf("the SVG canvas wrote no <svg> element")
	}
	// Our own plot's SVG (its only text is this package's labels and numbers, escaped
	// by the canvas): safe in the page.
	return template.HTML(svg[start:]), nil
}

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"label": answerLabel, "onOff": onOff, "yuan": yuan, "duration": duration,
	"f1":   func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"when": func(r *Report) string { return r.RunAt.Format("2006-01-02 15:04:05 MST") },
}).Parse(`<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8" />
<title>Flash sale of {{.R.SKU}}, {{when .R}}: {{.Verdict}}</title>
<style>
{{.FontFace}}
body { font-family: sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; }
p.summary { font-size: 125%; line-height: 1.4; margin: 0.5em 0; }
p.meta { color: #555; margin: 0.5em 0 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.n { text-align: right; }
.PASS { color: #080; font-weight: bold; } .FAIL { color: #c00; font-weight: bold; } .SKIP { color: #888; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 90%; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #ddd; }
</style>
</head>
<body>
{{- $r := .R}}
<h1>Flash sale of {{$r.SKU}}: <span class="{{.Verdict}}">{{.Verdict}}</span></h1>
<p class="summary">{{$r.Summary}}</p>
<p class="meta">Run {{when $r}} against {{$r.BaseURL}}; build {{$r.Version}}.</p>

<h2>Settings</h2>
<table>
<tr><th>API</th><td>{{$r.BaseURL}}</td><th>SKU</th><td>{{$r.SKU}} at {{yuan $r.Price}}</td></tr>
<tr><th>buyers</th><td class="n">{{$r.Buyers}}</td><th>concurrency</th><td class="n">{{$r.Concurrency}}</td></tr>
<tr><th>qty per order</th><td class="n">{{$r.Qty}}</td><th>identities</th><td class="n">{{$r.Identities}}{{if $r.SameUser}} (-same-user){{end}}</td></tr>
<tr><th>idempotency keys</th><td>{{onOff $r.Idempotency}}</td><th>timeout per request</th><td class="n">{{duration $r.TimeoutMs}}</td></tr>
{{- with $r.Settlement}}
<tr><th>pay ratio</th><td class="n">{{.PayRatio}}</td><th>cancel unpaid</th><td>{{onOff .CancelUnpaid}}</td></tr>
{{- if .RefundRatio}}
<tr><th>refund ratio</th><td class="n">{{.RefundRatio}}</td><th>refund wait</th><td class="n">{{duration .RefundWaitMs}}</td></tr>
{{- end}}
{{- end}}
</table>

<h2>Sale</h2>
<table>
<tr><th>final answer</th><th>buyers</th></tr>
{{- range $r.Answers}}
<tr><td>{{label .}}</td><td class="n">{{.Count}}</td></tr>
{{- end}}
</table>
<table>
<tr><th>start available</th><td class="n">{{$r.StartAvailable}}</td><th>demand</th><td class="n">{{$r.Demand}}</td></tr>
<tr><th>created orders</th><td class="n">{{$r.Created}}</td><th>units reserved</th><td class="n">{{$r.Reserved}}</td></tr>
<tr><th>end available</th><td class="n">{{$r.EndAvailable}}</td><th>end status</th><td>{{$r.EndStatus}}</td></tr>
<tr><th>requests</th><td class="n">{{$r.Requests}}</td><th>retries</th><td class="n">{{$r.Retries}}</td></tr>
<tr><th>replayed orders</th><td class="n">{{$r.Replayed}}</td><th>BUSY</th><td class="n">{{$r.Busy}}</td></tr>
<tr><th>no HTTP answer</th><td class="n">{{$r.TransportErrors}}</td><th>wall (ms)</th><td class="n">{{f1 $r.WallMs}}</td></tr>
<tr><th>orders/s</th><td class="n">{{f1 $r.OrdersPerSec}}</td><th>requests/s</th><td class="n">{{f1 $r.RequestsPerSec}}</td></tr>
<tr><th>latency p50 (ms)</th><td class="n">{{f1 $r.Latency.P50Ms}}</td><th>p90</th><td class="n">{{f1 $r.Latency.P90Ms}}</td></tr>
<tr><th>latency p99 (ms)</th><td class="n">{{f1 $r.Latency.P99Ms}}</td><th>max</th><td class="n">{{f1 $r.Latency.MaxMs}}</td></tr>
</table>
{{- with $r.Settlement}}

<h2>Payments, cancels and refunds</h2>
<table>
<tr><th>orders</th><td class="n">{{.Orders}}</td><th>pay / cancel</th><td class="n">{{.Payers}} / {{.Cancels}}</td></tr>
<tr><th>paid orders</th><td class="n">{{.PaidOrders}}</td><th>paid units</th><td class="n">{{.PaidUnits}}</td></tr>
<tr><th>money taken</th><td class="n">{{yuan .TakenFen}}</td><th>money refunded</th><td class="n">{{yuan .RefundedFen}}</td></tr>
<tr><th>cancelled orders</th><td class="n">{{.CancelledOrders}}</td><th>released units</th><td class="n">{{.ReleasedUnits}}</td></tr>
{{- if .RefundRatio}}
<tr><th>refunds sent</th><td class="n">{{.Refunds}}</td><th>units back</th><td class="n">{{.RefundedUnits}}</td></tr>
<tr><th>read back REFUNDED</th><td class="n">{{.RefundedOrders}}</td><th></th><td></td></tr>
{{- end}}
<tr><th>available after</th><td class="n">{{.Available}}</td><th>status</th><td>{{.Status}}</td></tr>
<tr><th>on-hand before</th><td class="n">{{.StartOnHand}}</td><th>on-hand after</th><td class="n">{{with .OnHand}}{{.}}{{else}}unreadable{{end}}</td></tr>
</table>
<table>
<tr><th>pay answer</th><th>orders</th></tr>
{{- range .PayAnswers}}
<tr><td>{{label .}}</td><td class="n">{{.Count}}</td></tr>
{{- end}}
<tr><th>cancel answer</th><th>orders</th></tr>
{{- range .CancelAnswers}}
<tr><td>{{label .}}</td><td class="n">{{.Count}}</td></tr>
{{- end}}
{{- if .RefundRatio}}
<tr><th>refund answer</th><th>orders</th></tr>
{{- range .RefundAnswers}}
<tr><td>{{label .}}</td><td class="n">{{.Count}}</td></tr>
{{- end}}
{{- end}}
</table>
<table>
<tr><th></th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>wall</th></tr>
<tr><th>pay (ms)</th><td class="n">{{f1 .PayLatency.P50Ms}}</td><td class="n">{{f1 .PayLatency.P90Ms}}</td><td class="n">{{f1 .PayLatency.P99Ms}}</td><td class="n">{{f1 .PayLatency.MaxMs}}</td><td class="n">{{f1 .PayWallMs}}</td></tr>
<tr><th>cancel (ms)</th><td class="n">{{f1 .CancelLatency.P50Ms}}</td><td class="n">{{f1 .CancelLatency.P90Ms}}</td><td class="n">{{f1 .CancelLatency.P99Ms}}</td><td class="n">{{f1 .CancelLatency.MaxMs}}</td><td class="n">{{f1 .CancelWallMs}}</td></tr>
</table>
{{- end}}
{{- range .Figures}}

<figure>
<h2>{{.Title}}</h2>
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{- end}}

<h2>Verification</h2>
<table>
{{- range $r.Checks}}
<tr><td class="{{.Result}}">{{.Result}}</td><td>{{.Name}}</td><td>{{.Detail}}</td></tr>
{{- end}}
</table>
<p>result: <span class="{{.Verdict}}">{{.Verdict}}</span></p>

<h2>Notes</h2>
<ul>
{{- range $r.Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
</body>
</html>
`))
