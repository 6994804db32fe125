package rehearse

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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

// Plot draws the timeline (per second, at 1×) and saves it as a PNG at path.
func (r *Report) Plot(path string) error {
	p := plot.New()
	c := r.Config
	p.Title.Text = fmt.Sprintf("Whole sale: %d SKUs × %d, %d buyers over %.0f s — %s", c.SKUs, c.Stock, c.Buyers, c.OverSeconds, r.Verdict()[:4])
	p.X.Label.Text = "seconds since the sale started (at 1×)"
	p.Y.Label.Text = fmt.Sprintf("per second (in %.1f s buckets)", r.Timeline.BucketSeconds)
	p.Legend.Top = true
	tl := r.Timeline
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
