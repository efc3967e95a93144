package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/workload"
)

// Validate checks the whole plan, not only its program: every field within
// its range, and the workload and the mapping consistent with each other
// and with the program they say it computes. It knows no hardware (the
// program's hardware rules are engines.Check's). The error is a
// *kernel.FieldError naming the first offending field by its JSON path
// (`cost.cycles`, `mapping.axes[1].size`).
//
// The rules: the version is Version; the workload's einsum and axes parse,
// name the same axes, and its axes are the program's; the mapping has one
// entry per axis, in the workload's order, with its size, a known class and
// factors ≥ 1 whose product is the size; the Chip factors multiply to the
// program's chips; the time order lists exactly the axes with a Time factor
// above 1, the tile order those with a Tile factor above 1; the stationary
// and streaming operands are the two inputs of the program's reference, and
// the reference's tensors hold the einsum's operands (each HBM tensor's
// mappings name exactly its operand's axes); the layouts name the two
// inputs and the output once each; the enumerations (content, packet,
// broadcast, accumulate, bound, planner, optimal, stopped) hold known
// values; the cost is finite and non-negative, with cycles above 0 and the
// utilizations and shares within [0, 1]; the search's counts are
// non-negative, its gap within [0, 1], its lower bound at most the cycles
// (equal to them when the optimum is proven); a plan stopped early claims
// no optimality.
func (p *Plan) Validate() error {
	if p.Version < 1 || p.Version > Version {
		return fieldErr("version", "%d, want 1 to %d", p.Version, Version)
	}
	if p.Program == nil {
		return fieldErr("program", "missing")
	}
	if p.Workload.Kind != "" || p.OpMapping != nil {
		if err := p.validateOp(); err != nil {
			return err
		}
		if err := p.validateCost(); err != nil {
			return err
		}
		return p.validateSearch()
	}
	axes, ein, err := p.validateWorkload()
	if err != nil {
		return err
	}
	if err := p.validateMapping(axes, ein); err != nil {
		return err
	}
	if err := p.validateCost(); err != nil {
		return err
	}
	return p.validateSearch()
}

// fieldErr is a *kernel.FieldError at path.
func fieldErr(path, format string, args ...any) error {
	return &kernel.FieldError{Path: path, Err: fmt.Errorf(format, args...)}
}

// parseEinsum reads the plan's einsum spelling: `I K, K J -> I J`, axes
// separated by spaces, `1` for a scalar operand.
func parseEinsum(s string) (*workload.Einsum, error) {
	lhs, rhs, ok := strings.Cut(s, "->")
	if !ok {
		return nil, fmt.Errorf("%q: want `IN0, IN1 -> OUT`", s)
	}
	side := func(t string) []string {
		f := strings.Fields(t)
		if len(f) == 1 && f[0] == "1" {
			return nil
		}
		return f
	}
	var ins [][]string
	for _, t := range strings.Split(lhs, ",") {
		ins = append(ins, side(t))
	}
	e, err := workload.NewEinsum(ins, side(rhs))
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return e, nil
}

func (p *Plan) validateWorkload() (mapping.Axes, *workload.Einsum, error) {
	w := &p.Workload
	if w.Name == "" {
		return mapping.Axes{}, nil, fieldErr("workload.name", "missing")
	}
	ein, err := parseEinsum(w.Einsum)
	if err != nil {
		return mapping.Axes{}, nil, fieldErr("workload.einsum", "%v", err)
	}
	axes, err := mapping.ParseAxes(w.Axes)
	if err != nil {
		return axes, nil, fieldErr("workload.axes", "%v", err)
	}
	names := axes.Names()
	used := ein.Axes()
	// The program may declare axes of its own after the workload's (the
	// interleave axis of a K-chunked plan's split reduce).
	if got, want := axes.String(), p.Program.Axes.String(); got != want && !extends(p.Program.Axes, axes, used) {
		return axes, nil, fieldErr("workload.axes", "%q, but the program's axes are %q", got, want)
	}
	for _, a := range used {
		if !slices.Contains(names, a) {
			return axes, nil, fieldErr("workload.einsum", "axis %s is not among the workload's axes %q", a, w.Axes)
		}
	}
	for _, a := range names {
		if !slices.Contains(used, a) {
			return axes, nil, fieldErr("workload.axes", "axis %s is in no operand of the einsum %q", a, w.Einsum)
		}
	}
	return axes, ein, nil
}

// The values of the mapping's enumerations (see Mapping).
var (
	axisClasses = []string{"contracted", "batch", "free", "stationary-free"}
	contents    = []string{"contracted", "columns"}
	packetModes = []string{"single", "dual", "half"}
	broadcasts  = []string{"fetch", "align"}
	orders      = []string{"hbm", "compute", "copy"}
)

func oneOf(path, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return fieldErr(path, "%q: want one of %s", v, strings.Join(allowed, ", "))
	}
	return nil
}

func (p *Plan) validateMapping(axes mapping.Axes, ein *workload.Einsum) error {
	m := &p.Mapping
	list := axes.List()
	if len(m.Axes) != len(list) {
		return fieldErr("mapping.axes", "%d entries for the %d axes %q", len(m.Axes), len(list), p.Workload.Axes)
	}
	chips := 1
	for i, a := range m.Axes {
		at := fmt.Sprintf("mapping.axes[%d]", i)
		if a.Name != list[i].Name {
			return fieldErr(at+".name", "%q, want %q (the workload's axes in order)", a.Name, list[i].Name)
		}
		if a.Size != list[i].Size {
			return fieldErr(at+".size", "%d, but the workload's %s is %d", a.Size, a.Name, list[i].Size)
		}
		if err := oneOf(at+".class", a.Class, axisClasses); err != nil {
			return err
		}
		var refValid int
		if r := p.Program.Reference; r != nil {
			refValid = r.Valid[a.Name]
		}
		if a.Valid != refValid {
			return fieldErr(at+".valid", "%d, but the program's reference pads %s from %d", a.Valid, a.Name, refValid)
		}
		prod := 1
		for _, f := range []struct {
			name string
			v    int
		}{{"tile", a.Tile}, {"chip", a.Chip}, {"cluster", a.Cluster}, {"slice", a.Slice}, {"time", a.Time}, {"row", a.Row}, {"packet", a.Packet}} {
			if f.v < 1 || f.v > a.Size {
				return fieldErr(at+"."+f.name, "factor %d: want 1 to the axis size %d", f.v, a.Size)
			}
			prod *= f.v
			if prod > a.Size {
				break
			}
		}
		if prod != a.Size {
			return fieldErr(at, "the factors of %s multiply to %d, not its size %d", a.Name, prod, a.Size)
		}
		if a.RowOuter && (a.Row <= 1 || a.Time <= 1) {
			return fieldErr(at+".row_outer", "axis %s (row %d, time %d): only an axis with Row and Time factors above 1 orders them", a.Name, a.Row, a.Time)
		}
		if a.DealtOut && (a.Cluster*a.Slice <= 1 || a.Time <= 1) {
			return fieldErr(at+".dealt_out", "axis %s (cluster %d, slice %d, time %d): only an axis with Time and Cluster or Slice factors above 1 is dealt out", a.Name, a.Cluster, a.Slice, a.Time)
		}
		if a.ClusterInner && (a.Cluster <= 1 || a.Slice <= 1) {
			return fieldErr(at+".cluster_inner", "axis %s (cluster %d, slice %d): only an axis with Cluster and Slice factors above 1 orders them", a.Name, a.Cluster, a.Slice)
		}
		if err := validDigits(a); err != nil {
			return fieldErr(at+".digits", "axis %s: %v", a.Name, err)
		}
		chips *= a.Chip
	}
	if chips != p.Program.Chips {
		return fieldErr("mapping.axes", "the Chip factors multiply to %d chips, the program runs on %d", chips, p.Program.Chips)
	}
	factor := func(name string, get func(AxisMapping) int) int {
		for _, a := range m.Axes {
			if a.Name == name {
				return get(a)
			}
		}
		return 0
	}
	for _, o := range []struct {
		path  string
		order []string
		get   func(AxisMapping) int
		what  string
	}{
		{"mapping.time_order", m.TimeOrder, func(a AxisMapping) int { return a.Time }, "Time"},
		{"mapping.tile_order", m.TileOrder, func(a AxisMapping) int { return a.Tile }, "Tile"},
	} {
		for k, name := range o.order {
			if f := factor(name, o.get); f <= 1 {
				return fieldErr(fmt.Sprintf("%s[%d]", o.path, k), "axis %q has no %s factor above 1", name, o.what)
			}
			if slices.Index(o.order, name) != k {
				return fieldErr(fmt.Sprintf("%s[%d]", o.path, k), "axis %q listed twice", name)
			}
		}
		for _, a := range m.Axes {
			if o.get(a) > 1 && !slices.Contains(o.order, a.Name) {
				return fieldErr(o.path, "misses axis %s, whose %s factor is %d", a.Name, o.what, o.get(a))
			}
		}
	}
	for _, e := range []struct {
		path, v string
		allowed []string
	}{{"mapping.content", m.Content, contents}, {"mapping.packet", m.Packet, packetModes}, {"mapping.broadcast", m.Broadcast, broadcasts}} {
		if err := oneOf(e.path, e.v, e.allowed); err != nil {
			return err
		}
	}
	if _, err := kernel.ParseAccumulationKind(m.Accumulate); err != nil {
		return fieldErr("mapping.accumulate", "%v", err)
	}
	return p.validateOperands(ein)
}

// validateOperands ties the mapping's operands and layouts to the program's
// reference and the reference's tensors to the einsum.
func (p *Plan) validateOperands(ein *workload.Einsum) error {
	m := &p.Mapping
	ref := p.Program.Reference
	if ref == nil || ref.Op != kernel.RefEinsum || len(ref.Factors()) != 2 {
		return fieldErr("program.reference", "a plan's program states the einsum it computes: want an einsum of two inputs (then its epilogue's tensors)")
	}
	if (len(p.Workload.Epilogue) > 0) != (ref.Epilogue != "") {
		return fieldErr("workload.epilogue", "%q, but the program's reference states the epilogue %q: want both or neither", p.Workload.Epilogue, ref.Epilogue)
	}
	if m.Stationary == m.Streaming || !slices.Contains(ref.Inputs, m.Stationary) {
		return fieldErr("mapping.stationary", "%q: want one of the program's inputs %q", m.Stationary, ref.Inputs)
	}
	if !slices.Contains(ref.Inputs, m.Streaming) {
		return fieldErr("mapping.streaming", "%q: want the program's other input (of %q)", m.Streaming, ref.Inputs)
	}
	axesOf := func(name string) ([]string, error) {
		t, ok := p.Program.Tensor(name)
		if !ok {
			return nil, fieldErr("program.reference", "unknown tensor %q", name)
		}
		got, err := mapping.AxesOf(t.Chip, t.Element)
		if err != nil {
			return nil, fieldErr("program.reference", "tensor %q: %v", name, err)
		}
		var names []string
		for _, a := range got.List() {
			names = append(names, a.Name)
		}
		return names, nil
	}
	operands := append(slices.Clone(ref.Factors()), ref.Output)
	want := append(slices.Clone(ein.Inputs), ein.Output)
	for k, name := range operands {
		names, err := axesOf(name)
		if err != nil {
			return err
		}
		if !sameSet(names, want[k]) {
			return fieldErr("workload.einsum", "operand %d has axes [%s], but the program's tensor %q holds [%s]", k, strings.Join(want[k], " "), name, strings.Join(names, " "))
		}
	}
	// An epilogue's tensor operands span some of the output's axes.
	for _, y := range ref.EpilogueOperands() {
		names, err := axesOf(y)
		if err != nil {
			return err
		}
		for _, a := range names {
			if !slices.Contains(ein.Output, a) {
				return fieldErr("program.reference", "the epilogue's tensor %q holds %s, which the output [%s] lacks", y, a, strings.Join(ein.Output, " "))
			}
		}
	}
	if len(m.Layouts) != len(operands) {
		return fieldErr("mapping.layouts", "%d entries, want one for each of %q", len(m.Layouts), operands)
	}
	for i, l := range m.Layouts {
		at := fmt.Sprintf("mapping.layouts[%d]", i)
		if l.Tensor != operands[i] {
			return fieldErr(at+".tensor", "%q, want %q (inputs, then the output)", l.Tensor, operands[i])
		}
		if err := oneOf(at+".order", l.Order, orders); err != nil {
			return err
		}
		if l.Order == "copy" && i != len(operands)-1 {
			return fieldErr(at+".order", "copy is for the output only")
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func (p *Plan) validateCost() error {
	c := &p.Cost
	if c.Model == "" {
		return fieldErr("cost.model", "missing")
	}
	for _, f := range []struct {
		name   string
		v      float64
		oneMax bool
	}{
		{"cycles", c.Cycles, false}, {"seconds", c.Seconds, false},
		{"mac_utilization", c.MACUtilization, true}, {"hbm_utilization", c.HBMUtilization, true},
		{"bottleneck_share", c.BottleneckShare, true},
	} {
		switch {
		case math.IsNaN(f.v) || math.IsInf(f.v, 0):
			return fieldErr("cost."+f.name, "%v is not a number", f.v)
		case f.v < 0:
			return fieldErr("cost."+f.name, "%v is negative", f.v)
		case f.oneMax && f.v > 1:
			return fieldErr("cost."+f.name, "%v: a share, at most 1", f.v)
		}
	}
	if c.Cycles == 0 {
		return fieldErr("cost.cycles", "0: a kernel takes time")
	}
	if c.Bottleneck == "" {
		return fieldErr("cost.bottleneck", "missing")
	}
	if err := oneOf("cost.bound", c.Bound, []string{"compute", "memory", "none"}); err != nil {
		return err
	}
	if c.HBMBytes < 0 {
		return fieldErr("cost.hbm_bytes", "%d is negative", c.HBMBytes)
	}
	if c.Findings < 0 {
		return fieldErr("cost.findings", "%d is negative", c.Findings)
	}
	return nil
}

func (p *Plan) validateSearch() error {
	s := &p.Search
	if err := oneOf("search.planner", s.Planner, []string{"sat", "exhaustive"}); err != nil {
		return err
	}
	if err := oneOf("search.optimal", s.Optimal, []string{"", "exhaustive", "proven"}); err != nil {
		return err
	}
	if err := oneOf("search.stopped", s.Stopped, []string{"", "timeout", "interrupted", "evaluations", "memory"}); err != nil {
		return err
	}
	if s.Stopped != "" && s.Optimal != "" {
		return fieldErr("search.optimal", "%q, but the search stopped early (%s)", s.Optimal, s.Stopped)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"candidates", s.Candidates}, {"legal", s.Legal}, {"cost_evaluations", s.CostEvaluations}, {"pruned", s.Pruned},
		{"skipped", s.Skipped}, {"sat_models", s.SATModels}, {"illegal_skeletons", s.IllegalSkeletons}, {"learned_clauses", s.LegacyLearned},
		{"placement_cuts", s.Placements}, {"bound_skips", s.BoundSkips}, {"tiling_skips", s.TilingSkips}, {"order_skips", s.OrderSkips}, {"clauses", s.Clauses},
	} {
		if f.v < 0 {
			return fieldErr("search."+f.name, "%d is negative", f.v)
		}
	}
	if s.MaxTiles < 1 {
		return fieldErr("search.max_tiles", "%d: want at least 1", s.MaxTiles)
	}
	for i, r := range s.Illegal {
		if r.Rule == "" || r.Count < 1 {
			return fieldErr(fmt.Sprintf("search.illegal[%d]", i), "want a rule and a count of at least 1")
		}
	}
	switch lb, gap := s.LowerBound, s.Gap; {
	case math.IsNaN(lb) || math.IsInf(lb, 0) || lb < 0:
		return fieldErr("search.lower_bound_cycles", "%v: want a finite bound ≥ 0", lb)
	case lb > p.Cost.Cycles:
		return fieldErr("search.lower_bound_cycles", "%v, above the plan's %v cycles", lb, p.Cost.Cycles)
	case s.Optimal == "proven" && lb != p.Cost.Cycles:
		return fieldErr("search.lower_bound_cycles", "%v: a proven plan's bound is its cycles, %v", lb, p.Cost.Cycles)
	case math.IsNaN(gap) || gap < 0 || gap > 1:
		return fieldErr("search.gap", "%v: want a share within [0, 1]", gap)
	}
	return nil
}

// extends reports whether prog declares the workload's axes w first, in
// order and with their sizes and skews, and then only axes the einsum
// does not use.
func extends(prog, w mapping.Axes, used []string) bool {
	pl, wl := prog.List(), w.List()
	if len(pl) < len(wl) || !slices.Equal(pl[:len(wl)], wl) || !slices.Equal(prog.Skews(), w.Skews()) {
		return false
	}
	for _, ax := range pl[len(wl):] {
		if slices.Contains(used, ax.Name) {
			return false
		}
	}
	return true
}

// validDigits checks an axis's digit order (AxisMapping.Digits): each of
// its levels with a factor above 1 once, no other, and none of the named
// orders beside it.
func validDigits(a AxisMapping) error {
	if a.Digits == "" {
		return nil
	}
	if a.RowOuter || a.DealtOut || a.ClusterInner {
		return fmt.Errorf("digits %q beside row_outer, dealt_out or cluster_inner: the digits state the whole order", a.Digits)
	}
	factors := map[string]int{"tile": a.Tile, "chip": a.Chip, "cluster": a.Cluster, "slice": a.Slice, "time": a.Time, "row": a.Row, "packet": a.Packet}
	seen := map[string]bool{}
	for _, l := range strings.Split(a.Digits, ".") {
		f, ok := factors[l]
		switch {
		case !ok:
			return fmt.Errorf("digits %q: no level %q (want tile, chip, cluster, slice, time, row or packet)", a.Digits, l)
		case seen[l]:
			return fmt.Errorf("digits %q: level %s twice", a.Digits, l)
		case f <= 1:
			return fmt.Errorf("digits %q: level %s has factor %d; the order lists the levels with factors above 1", a.Digits, l, f)
		}
		seen[l] = true
	}
	for _, l := range []string{"tile", "chip", "cluster", "slice", "time", "row", "packet"} {
		if f := factors[l]; f > 1 && !seen[l] {
			return fmt.Errorf("digits %q: level %s (factor %d) missing", a.Digits, l, f)
		}
	}
	return nil
}
