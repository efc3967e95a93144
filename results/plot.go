package results

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"tcpmap/internal/atomicfile"
	"tcpmap/results/record"
)

// PlotOptions choose what Plot draws.
type PlotOptions struct {
	// X is the swept parameter on the horizontal axis of the cycles, %
	// of peak and bottleneck plots.
	X string
	// Series are the parameters that tell the lines apart (one line per
	// combination of their values). Every other parameter must take one
	// value among the results plotted.
	Series []string
	// Pareto, when both are set, adds the Pareto front of the two
	// objectives (numeric columns or parameters, both minimized), one
	// front per series.
	Pareto [2]string
	// Title heads every plot (default: the sweep's name).
	Title string
	// Only, when set, names the plots to draw (PlotCycles, …); the
	// default is every plot (the Pareto plot when Pareto is set).
	Only []string
}

// wants reports whether the options ask for the named plot.
func (o *PlotOptions) wants(name string) bool {
	if len(o.Only) == 0 {
		return name != PlotPareto || (o.Pareto[0] != "" && o.Pareto[1] != "")
	}
	for _, n := range o.Only {
		if n == name {
			return true
		}
	}
	return false
}

// PlotNames are the plots Plot draws, in order.
var PlotNames = []string{PlotCycles, PlotPeak, PlotRoofline, PlotBottleneck, PlotPareto}

// Plot names: Plot writes PREFIX-NAME.svg and PREFIX-NAME.png for each.
const (
	PlotCycles     = "cycles"     // cycles against X, a line per series
	PlotPeak       = "peak"       // % of the MAC peak against X
	PlotRoofline   = "roofline"   // every point on the hardware's roofline
	PlotBottleneck = "bottleneck" // the points' bottlenecks, stacked per X value
	PlotPareto     = "pareto"     // the Pareto front of two objectives, per series
)

// plotSize is every plot's size.
const plotW, plotH = 16 * vg.Centimeter, 11 * vg.Centimeter

// Plot draws the planned results of rs and writes each plot as SVG and
// PNG next to prefix (PREFIX-cycles.svg, …), replacing files atomically.
// It returns the files written, in order.
func Plot(rs []*record.Record, o PlotOptions, prefix string) ([]string, error) {
	var planned []*record.Record
	for _, r := range rs {
		if r.Status == record.StatusPlanned {
			planned = append(planned, r)
		}
	}
	if len(planned) == 0 {
		return nil, fmt.Errorf("plot: no planned results to plot (%d results selected)", len(rs))
	}
	if o.X == "" {
		return nil, fmt.Errorf("plot: name the swept parameter for the horizontal axis (--x)")
	}
	for _, n := range o.Only {
		if !contains(PlotNames, n) {
			return nil, fmt.Errorf("plot: no plot %q (want %s)", n, strings.Join(PlotNames, ", "))
		}
	}
	if o.wants(PlotPareto) && (o.Pareto[0] == "" || o.Pareto[1] == "") {
		return nil, fmt.Errorf("plot: the pareto plot needs two objectives (--pareto A,B)")
	}
	// Lines need one point per X in each series; the other plots take any
	// points.
	if o.wants(PlotCycles) || o.wants(PlotPeak) {
		if err := checkVaried(planned, o); err != nil {
			return nil, err
		}
	} else if _, ok := planned[0].Params[o.X]; !ok && !record.IsNumericColumn(o.X) {
		return nil, fmt.Errorf("plot: --x %s is not a parameter of the results (they have %s)", o.X, strings.Join(record.ParamNames(planned), ", "))
	}
	if o.Title == "" {
		o.Title = planned[0].Sweep
	}
	type made struct {
		name string
		p    *plot.Plot
	}
	var plots []made
	add := func(name string, p *plot.Plot, err error) error {
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		plots = append(plots, made{name, p})
		return nil
	}
	series := groupSeries(planned, o)
	for _, name := range PlotNames {
		if !o.wants(name) {
			continue
		}
		var p *plot.Plot
		var err error
		switch name {
		case PlotCycles:
			p, err = linePlot(series, o, "cycles", "predicted cycles", func(r *record.Record) float64 { return r.Cycles }, true)
		case PlotPeak:
			p, err = linePlot(series, o, "% of MAC peak", "MAC utilization (% of the chip's peak)", func(r *record.Record) float64 { return 100 * r.MACUtilization }, false)
		case PlotRoofline:
			p, err = rooflinePlot(series, o)
		case PlotBottleneck:
			p, err = bottleneckPlot(planned, o)
		case PlotPareto:
			p, err = paretoPlot(series, o)
		}
		if err := add(name, p, err); err != nil {
			return nil, err
		}
	}
	var files []string
	for _, m := range plots {
		for _, format := range []string{"svg", "png"} {
			wt, err := m.p.WriterTo(plotW, plotH, format)
			if err != nil {
				return files, err
			}
			file := prefix + "-" + m.name + "." + format
			if err := atomicfile.Write(file, 0o644, func(w io.Writer) error {
				_, err := wt.WriteTo(w)
				return err
			}); err != nil {
				return files, err
			}
			files = append(files, file)
		}
	}
	return files, nil
}

// checkVaried refuses parameters that vary among results with the same X
// and series: those results would fall on one another. A parameter that
// changes with X (the DM's geometry with its size) is fine.
func checkVaried(rs []*record.Record, o PlotOptions) error {
	shown := map[string]bool{o.X: true}
	for _, s := range o.Series {
		shown[s] = true
	}
	if _, ok := rs[0].Params[o.X]; !ok && !record.IsNumericColumn(o.X) {
		return fmt.Errorf("plot: --x %s is not a parameter of the results (they have %s)", o.X, strings.Join(record.ParamNames(rs), ", "))
	}
	var extra []string
	for _, name := range record.ParamNames(rs) {
		if shown[name] {
			continue
		}
		at := map[string]string{}
		vals := map[string]bool{}
		clash := false
		for _, r := range rs {
			place := record.Field(r, o.X)
			for _, s := range o.Series {
				place += "\x00" + record.Field(r, s)
			}
			v := r.Params[name]
			vals[v] = true
			if w, ok := at[place]; ok && w != v {
				clash = true
			}
			at[place] = v
		}
		if clash {
			extra = append(extra, fmt.Sprintf("%s (%d values)", name, len(vals)))
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("plot: %s vary too: fix each with --where NAME=VALUE or add it to --series", strings.Join(extra, ", "))
	}
	return nil
}

// series is one line: its label and its points sorted by X.
type series struct {
	label string
	rs    []*record.Record
	xs    []float64
}

// groupSeries splits the results into lines by the series parameters,
// in the order of their first result, each sorted by X.
func groupSeries(rs []*record.Record, o PlotOptions) []*series {
	var out []*series
	by := map[string]*series{}
	for _, r := range rs {
		var parts []string
		for _, s := range o.Series {
			parts = append(parts, s+"="+record.Field(r, s))
		}
		label := strings.Join(parts, " ")
		if label == "" {
			label = r.Workload
		}
		s := by[label]
		if s == nil {
			s = &series{label: label}
			by[label] = s
			out = append(out, s)
		}
		s.rs = append(s.rs, r)
	}
	for _, s := range out {
		sort.SliceStable(s.rs, func(i, j int) bool { return xValue(s.rs[i], o.X) < xValue(s.rs[j], o.X) })
		for _, r := range s.rs {
			s.xs = append(s.xs, xValue(r, o.X))
		}
	}
	return out
}

// xValue is a result's value of a numeric parameter or column.
func xValue(r *record.Record, name string) float64 {
	f, err := strconv.ParseFloat(record.Field(r, name), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// unit labels a parameter with its unit.
func unit(name string) string {
	switch {
	case name != "" && name[0] >= 'A' && name[0] <= 'Z':
		return name + " (elements)"
	case strings.HasPrefix(name, "hw.") && strings.Contains(name, "bytes"):
		return name + " (bytes)"
	case strings.HasSuffix(name, "ghz"):
		return name + " (GHz)"
	case name == "cycles":
		return "cycles"
	case name == "hbm_bytes" || name == "min_hbm_bytes":
		return name + " (bytes)"
	case name == "wall_seconds" || name == "seconds":
		return name + " (s)"
	}
	return name
}

// newPlot is a plot with the house style.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// logX sets a log scale on the axis when the values are positive and span
// a factor of 8 or more (powers of two, byte sizes).
func logAxis(a *plot.Axis, vals []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > 0 && hi/lo >= 8 {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = decadeTicks{}
		if allPow2(vals) {
			a.Tick.Marker = pow2Ticks{}
		}
	}
}

func allPow2(vals []float64) bool {
	for _, v := range vals {
		if v < 1 || v != math.Trunc(v) || int64(v)&(int64(v)-1) != 0 {
			return false
		}
	}
	return true
}

// pow2Ticks marks every power of two in the range.
type pow2Ticks struct{}

// Ticks returns a tick at each power of two from min to max.
func (pow2Ticks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for v := math.Exp2(math.Floor(math.Log2(min))); v <= max*1.0001; v *= 2 {
		if v >= min*0.9999 {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	return ts
}

// decadeTicks marks the powers of ten in the range, labelled, and the
// steps between them; unlike plot.LogTicks it marks nothing outside the
// range (which would squeeze the plot).
type decadeTicks struct{}

// Ticks returns the ticks from min to max.
func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for d := math.Pow(10, math.Floor(math.Log10(min))); d <= max; d *= 10 {
		for k := 1.0; k < 10; k++ {
			v := k * d
			if v < min*0.9999 || v > max*1.0001 {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	if len(ts) < 2 || countLabels(ts) < 2 {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	return ts
}

func countLabels(ts []plot.Tick) int {
	n := 0
	for _, t := range ts {
		if t.Label != "" {
			n++
		}
	}
	return n
}

// linePlot draws y(r) against X, one line with points per series.
func linePlot(ss []*series, o PlotOptions, what, ylabel string, y func(*record.Record) float64, logY bool) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("%s: %s", o.Title, what), unit(o.X), ylabel)
	var xs, ys []float64
	for i, s := range ss {
		pts := make(plotter.XYs, len(s.rs))
		for j, r := range s.rs {
			pts[j] = plotter.XY{X: s.xs[j], Y: y(r)}
			xs, ys = append(xs, s.xs[j]), append(ys, y(r))
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		p.Legend.Add(s.label, l, sc)
	}
	logAxis(&p.X, xs)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	// Headroom above the data for the legend, a line per series.
	room := 0.07 * float64(len(ss)+1)
	if logY {
		logAxis(&p.Y, ys)
	}
	if _, isLog := p.Y.Scale.(plot.LogScale); isLog {
		p.Y.Label.Text += " (log scale)"
		p.Y.Min, p.Y.Max = lo/1.2, hi*math.Pow(hi/lo, room)
	} else {
		p.Y.Min, p.Y.Max = 0, hi*(1+room)
	}
	return p, nil
}

// rooflinePlot places every result on the hardware's roofline: MACs per
// cycle against MACs per HBM byte (the workload's inputs read and output
// written once), under the roofs min(peak, bandwidth × intensity) of each
// hardware spec the results were planned on.
func rooflinePlot(ss []*series, o PlotOptions) (*plot.Plot, error) {
	p := newPlot(o.Title+": roofline", "arithmetic intensity (MACs per HBM byte)", "attained MACs per cycle")
	var xs, ys []float64
	type roof struct{ peak, bw float64 }
	roofs := map[roof]bool{}
	var order []roof
	for i, s := range ss {
		var pts plotter.XYs
		for _, r := range s.rs {
			if r.MinHBMBytes <= 0 || r.Cycles <= 0 {
				continue
			}
			x, y := r.MACs/float64(r.MinHBMBytes), r.MACs/r.Cycles
			pts = append(pts, plotter.XY{X: x, Y: y})
			xs, ys = append(xs, x), append(ys, y)
			if rf := (roof{r.PeakMACsPerCycle, r.PeakHBMBytesPerCycle}); !roofs[rf] && rf.peak > 0 && rf.bw > 0 {
				roofs[rf] = true
				order = append(order, rf)
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape = plotutil.Color(i), plotutil.Shape(i)
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("no result has MACs and HBM bytes")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	for _, rf := range order {
		ridge := rf.peak / rf.bw
		lo, hi = math.Min(lo, ridge/4), math.Max(hi, ridge*4)
	}
	lo, hi = lo/2, hi*2
	for i, rf := range order {
		ridge := rf.peak / rf.bw
		pts := plotter.XYs{{X: lo, Y: rf.bw * lo}}
		if ridge > lo && ridge < hi {
			pts = append(pts, plotter.XY{X: ridge, Y: rf.peak})
		}
		pts = append(pts, plotter.XY{X: hi, Y: math.Min(rf.peak, rf.bw*hi)})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 40}
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("roof: %.0f MACs/cycle, %.0f B/cycle", rf.peak, rf.bw), l)
		ys = append(ys, rf.bw*lo, rf.peak)
	}
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = decadeTicks{}, decadeTicks{}
	p.X.Min, p.X.Max = lo, hi
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
	}
	p.Y.Min, p.Y.Max = ylo/2, yhi*2
	p.Legend.Left, p.Legend.Top = false, false
	return p, nil
}

// bottleneckPlot stacks, for each X value, the count of results by their
// bottleneck.
func bottleneckPlot(rs []*record.Record, o PlotOptions) (*plot.Plot, error) {
	var xvals []float64
	seenX := map[float64]bool{}
	var kinds []string
	seenK := map[string]bool{}
	count := map[string]map[float64]float64{}
	for _, r := range rs {
		x := xValue(r, o.X)
		if !seenX[x] {
			seenX[x] = true
			xvals = append(xvals, x)
		}
		if !seenK[r.Bottleneck] {
			seenK[r.Bottleneck] = true
			kinds = append(kinds, r.Bottleneck)
			count[r.Bottleneck] = map[float64]float64{}
		}
		count[r.Bottleneck][x]++
	}
	sort.Float64s(xvals)
	sort.Strings(kinds)
	p := newPlot(o.Title+": bottlenecks", unit(o.X), "results (count)")
	names := make([]string, len(xvals))
	for i, x := range xvals {
		names[i] = strconv.FormatFloat(x, 'f', -1, 64)
	}
	// Bars as wide as a good share of each category's room.
	width := vg.Length(math.Min(40, 0.5*float64(plotW.Points())/float64(len(xvals)+1)))
	var below *plotter.BarChart
	for i, k := range kinds {
		vals := make(plotter.Values, len(xvals))
		for j, x := range xvals {
			vals[j] = count[k][x]
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(k, b)
	}
	p.NominalX(names...)
	p.Legend.Left = false
	tallest := 0.0
	for _, x := range xvals {
		n := 0.0
		for _, k := range kinds {
			n += count[k][x]
		}
		tallest = math.Max(tallest, n)
	}
	// Headroom above the bars for the legend, a line per bottleneck.
	p.Y.Min, p.Y.Max = 0, tallest*(1+0.08*float64(len(kinds)+1))
	return p, nil
}

// paretoPlot scatters every result on the two objectives and draws, for
// each series, the front of the results no other result of the series
// beats on both.
func paretoPlot(ss []*series, o PlotOptions) (*plot.Plot, error) {
	a, b := o.Pareto[0], o.Pareto[1]
	p := newPlot(fmt.Sprintf("%s: Pareto fronts of %s and %s (both minimized)", o.Title, a, b), unit(a), unit(b))
	var xs, ys []float64
	for i, s := range ss {
		var pts plotter.XYs
		for _, r := range s.rs {
			x, y := xValue(r, a), xValue(r, b)
			if math.IsNaN(x) || math.IsNaN(y) {
				return nil, fmt.Errorf("--pareto %s,%s: result %s has no numeric %s or %s", a, b, r.Key.ID()[:12], a, b)
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
			xs, ys = append(xs, x), append(ys, y)
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape = plotutil.Color(i), plotutil.Shape(i)
		l, err := plotter.NewLine(ParetoFront(pts))
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.StepStyle = plotter.PostStep
		l.Width = vg.Points(1.5)
		p.Add(sc, l)
		p.Legend.Add(fmt.Sprintf("%s (front: %d of %d)", s.label, len(ParetoFront(pts)), len(pts)), sc, l)
	}
	p.Legend.Left = false
	logAxis(&p.X, xs)
	logAxis(&p.Y, ys)
	return p, nil
}

// ParetoFront returns the points no other point beats on both coordinates
// (both minimized), sorted by X.
func ParetoFront(pts plotter.XYs) plotter.XYs {
	s := append(plotter.XYs(nil), pts...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].X != s[j].X {
			return s[i].X < s[j].X
		}
		return s[i].Y < s[j].Y
	})
	var front plotter.XYs
	best := math.Inf(1)
	for _, q := range s {
		if q.Y < best {
			front = append(front, q)
			best = q.Y
		}
	}
	return front
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
