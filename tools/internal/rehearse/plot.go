package rehearse

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Timeline is the sale in buckets of BucketSeconds (model time, at 1×): how many
// orders were created and pages served, how many buyer requests were answered 429
// (throttled by API Gateway) and 5xx (a Lambda throttle answered 500 by API Gateway,
// or 503 BUSY), and how many DynamoDB requests an index partition, an item's
// partition or a table's quota refused, in each bucket.
type Timeline struct {
	BucketSeconds  float64 `json:"bucketSeconds"`
	Orders         []int   `json:"orders"`
	Pages          []int   `json:"pages"`
	Throttled      []int   `json:"throttled"`
	Failed         []int   `json:"failed"`
	IndexThrottles []int   `json:"indexThrottles"`
	ItemThrottles  []int   `json:"itemThrottles"`
	TableThrottles []int   `json:"tableThrottles"`
}

// perSecondPeak is the most of series in any second (ten buckets in a row).
func perSecondPeak(series []int, per int) float64 {
	best, sum := 0, 0
	for i, v := range series {
		sum += v
		if i >= per {
			sum -= series[i-per]
		}
		best = max(best, sum)
	}
	return float64(best)
}

// The plot's frame: a blank margin inside every edge of the picture, and the legend
// in a column of its own right of the axes, so that it covers no data; the y axis
// goes plotHeadroom above the highest point, so that no peak touches the frame.
const (
	plotWidth, plotHeight = 12 * vg.Inch, 5 * vg.Inch
	plotMargin            = vg.Length(12)
	legendGap             = vg.Length(12)
	plotHeadroom          = 1.08
)

// Plot draws the timeline (per second, at 1×) and saves it as a PNG at path.
func (r *Report) Plot(path string) error {
	p := plot.New()
	c := r.Config
	p.Title.Text = fmt.Sprintf("Whole sale: %d SKUs × %d, %d buyers over %.0f s — %s", c.SKUs, c.Stock, c.Buyers, c.OverSeconds, r.Verdict()[:4])
	p.Title.Padding = vg.Length(6)
	p.X.Label.Text = "seconds since the sale started (at 1×)"
	p.Y.Label.Text = fmt.Sprintf("per second (in %.1f s buckets)", r.Timeline.BucketSeconds)
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Length(3)
	tl := r.Timeline
	top := 0.0
	for _, series := range []struct {
		name   string
		values []int
		color  color.Color
	}{
		{"page views served", tl.Pages, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"orders created", tl.Orders, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
		{"429 answers (API Gateway throttles)", tl.Throttled, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"5xx answers (Lambda throttles, BUSY)", tl.Failed, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
		{"DynamoDB requests refused by an index key", tl.IndexThrottles, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}},
		{"… by an item's partition or a table quota", sum(tl.ItemThrottles, tl.TableThrottles), color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}},
	} {
		if len(series.values) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(series.values))
		for i, v := range series.values {
			xy[i] = plotter.XY{X: (float64(i) + 0.5) * tl.BucketSeconds, Y: float64(v) / tl.BucketSeconds}
			top = max(top, xy[i].Y)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		line.Color = series.color
		line.Width = vg.Points(1.5)
		p.Add(line)
		legend.Add(series.name, line)
	}
	p.Add(plotter.NewGrid())
	p.X.Min, p.Y.Min = 0, 0
	p.Y.Max = max(top*plotHeadroom, 1)
	img := vgimg.New(plotWidth, plotHeight)
	axes, key := plotLayout(draw.New(img), legend, p.Title.TextStyle.Height(p.Title.Text)+p.Title.Padding)
	p.Draw(axes)
	legend.Draw(key)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plotLayout splits the picture dc, inside its margin, into the axes' canvas and the
// legend's column on their right, as wide as the legend's longest entry and starting
// below the title (title high).
func plotLayout(dc draw.Canvas, legend plot.Legend, title vg.Length) (axes, key draw.Canvas) {
	inner := draw.Crop(dc, plotMargin, -plotMargin, plotMargin, -plotMargin)
	width := legend.Rectangle(inner).Size().X
	axes = draw.Crop(inner, 0, -(width + legendGap), 0, 0)
	key = draw.Crop(inner, inner.Size().X-width, 0, 0, -title)
	return axes, key
}

// sum adds series element by element.
func sum(a, b []int) []int {
	out := make([]int, max(len(a), len(b)))
	for i := range out {
		if i < len(a) {
			out[i] += a[i]
		}
		if i < len(b) {
			out[i] += b[i]
		}
	}
	return out
}
