package hotsku

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Ideal is the most orders per second n shards can take with a strategy if every
// shard ran at the model's write ceiling (Config.WriteUnits, 1,000 units/s) and a
// 1-unit order's shard write fits in 1 KB: 2 units per order inside a transaction,
// 1 for a plain conditional UpdateItem.
func Ideal(s Strategy, shards int, writeUnits float64) float64 {
	if s == Transaction {
		return float64(shards) * writeUnits / 2
	}
	return float64(shards) * writeUnits
}

// WriteTable writes results as a Markdown table, one row per point.
func WriteTable(w io.Writer, results []Result) error {
	fmt.Fprintln(w, "| strategy | shards | offered/s | orders/s | ideal/s | p50 ms | p99 ms | conflicts/req | throttles/req | lost answers | BUSY | STOCK_OUT | oversold | false STOCK_OUT | unbacked | orphans | leaked | lag ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		req := float64(max(r.Requests, 1))
		if _, err := fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.0f | %.1f | %.1f | %.3f | %.3f | %d | %d | %d | %d | %d | %d | %d | %d | %.1f |\n",
			r.Strategy, r.Shards, r.Offered, r.PerSecond, Ideal(r.Strategy, r.Shards, r.Model.WriteUnits),
			ms(r.P50), ms(r.P99), float64(r.Conflicts)/req, float64(r.Throttles)/req,
			r.Lost, r.Busy, r.StockOut, r.Oversold, r.FalseStockOut, r.Unbacked, r.Orphans, r.Leaked, ms(r.Lag)); err != nil {
			return err
		}
	}
	return nil
}

// Plot draws orders/s against shards (both axes logarithmic) for each strategy, the
// best over its offered loads, next to each strategy's Ideal, with a line at target
// orders/s, and saves it as a PNG at path.
func Plot(results []Result, target float64, path string) error {
	p := plot.New()
	p.Title.Text = "One hot SKU through the DynamoDB limits model"
	p.X.Label.Text = "shards"
	p.Y.Label.Text = "orders/s (at 1×)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	best := map[Strategy]map[int]float64{}
	writeUnits := 0.0
	var shardTicks []plot.Tick
	for _, r := range results {
		if best[r.Strategy] == nil {
			best[r.Strategy] = map[int]float64{}
		}
		best[r.Strategy][r.Shards] = max(best[r.Strategy][r.Shards], r.PerSecond)
		writeUnits = r.Model.WriteUnits
	}
	colors := map[Strategy]color.Color{Transaction: color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, Conditional: color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}}
	var allShards []int
	for _, s := range slices.Sorted(maps.Keys(best)) {
		allShards = slices.Sorted(maps.Keys(best[s]))
		if err := addStrategy(p, s, best[s], writeUnits, colors[s]); err != nil {
			return err
		}
	}
	for _, n := range allShards {
		shardTicks = append(shardTicks, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(shardTicks)
	if len(allShards) > 0 {
		// Explicit ranges: a log axis cannot take the padding gonum/plot gives a range
		// of one value.
		p.X.Min, p.X.Max = float64(allShards[0])/1.3, float64(allShards[len(allShards)-1])*1.3
		p.Y.Min, p.Y.Max = min(p.Y.Min, target)/2, max(p.Y.Max, target)*2
		goal, err := plotter.NewLine(plotter.XYs{{X: float64(allShards[0]), Y: target}, {X: float64(allShards[len(allShards)-1]), Y: target}})
		if err != nil {
			return err
		}
		goal.Color, goal.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(goal)
		p.Legend.Add(fmt.Sprintf("target %.0f orders/s", target), goal)
	}
	p.Add(plotter.NewGrid())
	if p.Y.Min <= 0 {
		p.Y.Min = 1
	}
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}

// addStrategy draws strategy s on p: its best orders/s per shard count (a solid line
// with points) and its ideal, shards × the per-shard ceiling (dashed), in c.
func addStrategy(p *plot.Plot, s Strategy, perShards map[int]float64, writeUnits float64, c color.Color) error {
	shards := slices.Sorted(maps.Keys(perShards))
	measured, ideal := make(plotter.XYs, len(shards)), make(plotter.XYs, len(shards))
	for i, n := range shards {
		measured[i] = plotter.XY{X: float64(n), Y: max(perShards[n], 1)}
		ideal[i] = plotter.XY{X: float64(n), Y: Ideal(s, n, writeUnits)}
	}
	line, points, err := plotter.NewLinePoints(measured)
	if err != nil {
		return err
	}
	line.Color, points.Color, points.Shape = c, c, draw.CircleGlyph{}
	dashed, err := plotter.NewLine(ideal)
	if err != nil {
		return err
	}
	dashed.Color, dashed.Dashes = c, []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(line, points, dashed)
	p.Legend.Add(string(s)+": measured", line, points)
	p.Legend.Add(fmt.Sprintf("%s: ideal, shards × %.0f", s, Ideal(s, 1, writeUnits)), dashed)
	return nil
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return d.Seconds() * 1000 }
