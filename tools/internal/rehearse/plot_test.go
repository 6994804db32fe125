package rehearse

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// saleReport is a report whose timeline is shaped like a sale's: a spike of page
// views and orders in the first second, throttles at its peak, a tail.
func saleReport() *Report {
	r := &Report{Config: Settings{SKUs: 10, Stock: 1000, Buyers: 20000, OverSeconds: 10}, ReconcileClean: true}
	tl := Timeline{BucketSeconds: 0.1}
	for i := range 150 {
		spike := math.Exp(-float64(i)/10) * 1000
		tl.Pages = append(tl.Pages, int(spike*1.2+50))
		tl.Orders = append(tl.Orders, int(spike*0.3+10))
		tl.Throttled = append(tl.Throttled, int(spike*0.1))
		tl.Failed = append(tl.Failed, int(spike*0.05))
		tl.IndexThrottles = append(tl.IndexThrottles, int(spike*0.02))
		tl.ItemThrottles = append(tl.ItemThrottles, int(spike*0.01))
		tl.TableThrottles = append(tl.TableThrottles, 0)
	}
	r.Timeline = tl
	return r
}

// The plot leaves a blank margin inside every edge (the title and the first
// second's peak used to touch the top one), and its legend stands in a column of its
// own right of the axes, covering no data. (PLOT_PNG=file keeps the picture to look
// at.)
func TestPlot_KeepsAMarginAndTheLegendOffTheData(t *testing.T) {
	path := os.Getenv("PLOT_PNG")
	if path == "" {
		path = filepath.Join(t.TempDir(), "plot.png")
	}
	if err := saleReport().Plot(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	const margin = 8 // pixels, within the 12-point margin
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if inside := image.Pt(x, y).In(b.Inset(margin)); inside {
				continue
			}
			if r, g, bl, _ := img.At(x, y).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
				t.Fatalf("pixel (%d, %d) within %d px of the picture's edge is drawn on", x, y, margin)
			}
		}
	}
}
