package rehearse

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Timeline is the sale second by second (model time, at 1×): orders created, pages
// served, and buyer requests answered 429 (throttled by API Gateway) and 5xx (a
// Lambda throttle answered 500 by API Gateway, or 503 BUSY).
type Timeline struct {
	Orders    []int `json:"orders"`
	Pages     []int `json:"pages"`
	Throttled []int `json:"throttled"`
	Failed    []int `json:"failed"`
}

// Plot draws the timeline (per second, at 1×) and saves it as a PNG at path.
func (r *Report) Plot(path string) error {
	p := plot.New()
	c := r.Config
	p.Title.Text = fmt.Sprintf("Whole sale: %d SKUs × %d, %d buyers over %.0f s — %s", c.SKUs, c.Stock, c.Buyers, c.OverSeconds, r.Verdict()[:4])
	p.X.Label.Text = "seconds since the sale started (at 1×)"
	p.Y.Label.Text = "per second"
	p.Legend.Top = true
	for _, series := range []struct {
		name   string
		values []int
		color  color.Color
	}{
		{"page views served", r.Timeline.Pages, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"orders created", r.Timeline.Orders, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
		{"429 (API Gateway throttle)", r.Timeline.Throttled, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"5xx (Lambda throttle, BUSY)", r.Timeline.Failed, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
	} {
		if len(series.values) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(series.values))
		for i, v := range series.values {
			xy[i] = plotter.XY{X: float64(i) + 0.5, Y: float64(v)}
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		line.Color = series.color
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(series.name, line)
	}
	p.Add(plotter.NewGrid())
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}
