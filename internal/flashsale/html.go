package flashsale

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// figure is one picture of the HTML report: an SVG image as a data: URI.
type figure struct {
	Title, Caption string
	Src            template.URL
}

// WriteHTML writes the report as one self-contained HTML page (no outside files, fonts
// or scripts): the configuration, the figures of the text report, three pictures drawn
// from the Timeline (orders/s over time, the buyers' latency histogram, available stock
// over time) as SVG data: URIs, the notes and the verification lines. The page is
// well-formed XML as well as HTML. A report without a Timeline gets no pictures.
func (r *Report) WriteHTML(w io.Writer) error {
	figs, err := r.figures()
	if err != nil {
		return fmt.Errorf("draw report: %w", err)
	}
	if err := htmlPage.Execute(w, struct {
		R       *Report
		Verdict Result
		Figures []figure
	}{r, verdict(r.Passed), figs}); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
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
		src, err := svgURI(p)
		figs = append(figs, figure{Title: title, Caption: caption, Src: src})
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
	p.Legend.Top = true
	return p, nil
}

// svgURI renders p as an SVG image in a data: URI.
func svgURI(p *plot.Plot) (template.URL, error) {
	wt, err := p.WriterTo(16*vg.Centimeter, 8*vg.Centimeter, "svg")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", err
	}
	// The bytes are our own SVG, base64-encoded: safe in a src attribute.
	return template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"label": answerLabel, "onOff": onOff,
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
}).Parse(`<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8" />
<title>flashsale {{.R.SKU}}: {{.Verdict}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.n { text-align: right; }
.PASS { color: #080; font-weight: bold; } .FAIL { color: #c00; font-weight: bold; } .SKIP { color: #888; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 90%; }
img { max-width: 100%; }
</style>
</head>
<body>
{{- $r := .R}}
<h1>flashsale: {{$r.Buyers}} buyers x qty {{$r.Qty}} of {{$r.SKU}} <span class="{{.Verdict}}">{{.Verdict}}</span></h1>

<h2>Configuration</h2>
<table>
<tr><th>API</th><td>{{$r.BaseURL}}</td></tr>
<tr><th>SKU</th><td>{{$r.SKU}}</td></tr>
<tr><th>buyers</th><td class="n">{{$r.Buyers}}</td></tr>
<tr><th>concurrency</th><td class="n">{{$r.Concurrency}}</td></tr>
<tr><th>qty per order</th><td class="n">{{$r.Qty}}</td></tr>
<tr><th>identities</th><td class="n">{{$r.Identities}}</td></tr>
<tr><th>idempotency keys</th><td>{{onOff $r.Idempotency}}</td></tr>
{{- with $r.Settlement}}
<tr><th>pay ratio</th><td class="n">{{.PayRatio}}</td></tr>
<tr><th>cancel unpaid</th><td>{{onOff .CancelUnpaid}}</td></tr>
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
<tr><th>requests</th><td class="n">{{$r.Requests}}</td><th>retries</th><td class="n">{{$r.Retries}}</td></tr>
<tr><th>replayed orders</th><td class="n">{{$r.Replayed}}</td><th>BUSY</th><td class="n">{{$r.Busy}}</td></tr>
<tr><th>no HTTP answer</th><td class="n">{{$r.TransportErrors}}</td><th>wall (ms)</th><td class="n">{{f1 $r.WallMs}}</td></tr>
<tr><th>orders/s</th><td class="n">{{f1 $r.OrdersPerSec}}</td><th>requests/s</th><td class="n">{{f1 $r.RequestsPerSec}}</td></tr>
<tr><th>latency p50 (ms)</th><td class="n">{{f1 $r.Latency.P50Ms}}</td><th>p90</th><td class="n">{{f1 $r.Latency.P90Ms}}</td></tr>
<tr><th>latency p99 (ms)</th><td class="n">{{f1 $r.Latency.P99Ms}}</td><th>max</th><td class="n">{{f1 $r.Latency.MaxMs}}</td></tr>
<tr><th>start available</th><td class="n">{{$r.StartAvailable}}</td><th>demand</th><td class="n">{{$r.Demand}}</td></tr>
<tr><th>created orders</th><td class="n">{{$r.Created}}</td><th>units reserved</th><td class="n">{{$r.Reserved}}</td></tr>
<tr><th>end available</th><td class="n">{{$r.EndAvailable}}</td><th>end status</th><td>{{$r.EndStatus}}</td></tr>
</table>
{{- with $r.Settlement}}

<h2>Settlement</h2>
<table>
<tr><th>orders</th><td class="n">{{.Orders}}</td><th>pay / cancel</th><td class="n">{{.Payers}} / {{.Cancels}}</td></tr>
<tr><th>paid orders</th><td class="n">{{.PaidOrders}}</td><th>paid units</th><td class="n">{{.PaidUnits}}</td></tr>
<tr><th>cancelled orders</th><td class="n">{{.CancelledOrders}}</td><th>released units</th><td class="n">{{.ReleasedUnits}}</td></tr>
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
<img src="{{.Src}}" alt="{{.Title}}" />
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
