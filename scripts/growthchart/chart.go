package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// drawChart writes the family's PNG: time per verification on the left,
// heap per verification on the right, each against the family's size on
// log-log axes with a dashed line of slope 1 through its largest point.
func drawChart(f family, file string) error {
	tm, tl := f.timeMetric()
	times := []series{{tm, tl + " time", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}}}
	if tm != "ns/op" {
		times = append(times, series{"ns/op", "wall time", color.RGBA{R: 0x9e, G: 0xc5, B: 0xe0, A: 0xff}})
	}
	left, err := panel(f, "time per verification", geometricTicks{base: 10, minor: true, labelThree: true, format: labelNs}, times)
	if err != nil {
		return err
	}
	right, err := panel(f, "heap per verification", geometricTicks{base: 4, unit: 1024, format: labelBytes}, []series{
		{"peak-B", "peak heap", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
		{"B/op", "allocated", color.RGBA{R: 0xf0, G: 0xa0, B: 0xa0, A: 0xff}},
	})
	if err != nil {
		return err
	}
	img := vgimg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	plots := [][]*plot.Plot{{left, right}}
	canvases := plot.Align(plots, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// series is one metric drawn on a panel.
type series struct {
	metric, label string
	color         color.Color
}

// panel draws the given metrics of f against its size; the first series
// gets the slope-1 reference line. Series with a missing or zero value are
// left out (a log axis has no zero).
func panel(f family, title string, yTicks plot.Ticker, all []series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.title() + ": " + title
	p.X.Label.Text = xLabel(f)
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	xs := make([]float64, len(f.points))
	for i, pt := range f.points {
		xs[i] = pt.size
	}
	p.X.Tick.Marker = valueTicks{values: xs, format: xFormat(f)}
	p.Y.Tick.Marker = yTicks
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	var ref plotter.XYs
	for i, s := range all {
		xys := make(plotter.XYs, 0, len(f.points))
		for _, pt := range f.points {
			if v := pt.metrics[s.metric]; v > 0 {
				xys = append(xys, plotter.XY{X: pt.size, Y: v})
			}
		}
		if len(xys) < len(f.points) {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.metric, err)
		}
		line.Color, points.Color = s.color, s.color
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.label, line, points)
		if i == 0 {
			last := xys[len(xys)-1]
			ref = plotter.XYs{{X: xys[0].X, Y: last.Y * xys[0].X / last.X}, last}
		}
	}
	if ref != nil {
		line, err := plotter.NewLine(ref)
		if err != nil {
			return nil, err
		}
		line.Color = color.Gray{Y: 0x60}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
		p.Legend.Add("slope 1 (linear)", line)
	}
	return p, nil
}

// xLabel names a family's horizontal axis.
func xLabel(f family) string {
	switch f.param {
	case "bytes":
		return "request size"
	case "checks":
		return "schema checks (schema_compliance.total)"
	}
	return f.param
}

// xFormat labels a family's sizes.
func xFormat(f family) func(float64) string {
	if f.param == "bytes" {
		return labelBytes
	}
	return formatCount
}

// valueTicks puts a labelled tick at each given value.
type valueTicks struct {
	values []float64
	format func(float64) string
}

// Ticks implements plot.Ticker.
func (t valueTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range t.values {
		if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: t.format(v)})
		}
	}
	return ticks
}

// geometricTicks puts a labelled tick at unit times each power of base
// and, with minor, ticks at its multiples 2 … base-1, of which 3 is
// labelled too with labelThree (a decade is wide).
type geometricTicks struct {
	base, unit        float64 // unit 0 means 1
	minor, labelThree bool
	format            func(float64) string
}

// Ticks implements plot.Ticker.
func (t geometricTicks) Ticks(lo, hi float64) []plot.Tick {
	unit := max(t.unit, 1)
	var ticks []plot.Tick
	first := unit * math.Pow(t.base, math.Floor(math.Log(lo/unit)/math.Log(t.base)))
	for d := first; d <= hi; d *= t.base {
		for m := 1.0; m < t.base && (m == 1 || t.minor); m++ {
			if v := d * m; v >= lo && v <= hi {
				tick := plot.Tick{Value: v}
				if m == 1 || m == 3 && t.labelThree {
					tick.Label = t.format(v)
				}
				ticks = append(ticks, tick)
			}
		}
	}
	return ticks
}

// labelNs labels a tick of nanoseconds: "100 µs", "2.5 ms".
func labelNs(ns float64) string {
	switch {
	case ns < 1e3:
		return short(ns) + " ns"
	case ns < 1e6:
		return short(ns/1e3) + " µs"
	case ns < 1e9:
		return short(ns/1e6) + " ms"
	}
	return short(ns/1e9) + " s"
}

// labelBytes labels a tick of bytes: "16 KB", "1.16 KB", "1 MB".
func labelBytes(b float64) string {
	switch {
	case b < 1<<10:
		return short(b) + " B"
	case b < 1<<20:
		return short(b/(1<<10)) + " KB"
	}
	return short(b/(1<<20)) + " MB"
}

// short writes v with up to three significant digits and no trailing
// zeros.
func short(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
