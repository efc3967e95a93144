package constraints

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
	"tcpmap/model/pos"
	"tcpmap/model/workload"
)

// MaxAxes bounds the axes of a planned contraction, so that a Candidate is
// a fixed-size value.
const MaxAxes = 8

// Class is the role of an einsum axis in a binary contraction
// (002 L104-120): summed, kept by both inputs, or kept by one of them.
type Class uint8

// The axis classes.
const (
	// Contracted axes are in both inputs and not in the output: they are
	// summed (002 L111), spatially in the Reducer's tree and temporally in
	// its accumulator.
	Contracted Class = iota
	// Batch axes are in both inputs and in the output (V in VMK, VNK -> VMN,
	// 002 L3710).
	Batch
	// Free0 and Free1 are output axes of input 0 or input 1 only: the other
	// input is broadcast along them (002 L120).
	Free0
	Free1
)

func (c Class) String() string {
	switch c {
	case Contracted:
		return "contracted"
	case Batch:
		return "batch"
	case Free0:
		return "free0"
	case Free1:
		return "free1"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Axis is one axis of a contraction.
type Axis struct {
	Name string
	// Size is the axis's extent in the mapspace: the workload's size, or
	// the size it is padded to (Valid).
	Size  int
	Class Class
	// Valid is the workload's size of a padded axis (Size > Valid: the
	// positions from Valid on are padding), 0 when the axis is not padded
	// (Problem.Pad).
	Valid int
}

// Padded reports whether the axis is padded.
func (a Axis) Padded() bool { return a.Valid > 0 && a.Valid < a.Size }

// Operand is one tensor of a contraction as it lives in HBM.
type Operand struct {
	// Name is the workload's tensor name.
	Name string
	// Axes are the tensor's axes, in the workload's order.
	Axes  []string
	DType dtype.DType
	// Layout is the HBM element mapping (the workload's layout, or
	// row-major in Axes order, 002 L574).
	Layout *mapping.Expr
}

// Bytes is the operand's size in bytes.
func (o *Operand) Bytes() (int64, error) {
	n, err := o.DType.BytesFor(o.Layout.Size())
	return int64(n), err
}

// Has reports whether the operand holds the axis.
func (o *Operand) Has(axis string) bool {
	for _, a := range o.Axes {
		if a == axis {
			return true
		}
	}
	return false
}

// Problem is one binary contraction to plan: C = einsum(In[0], In[1]) with
// the accumulator Acc, on Chips chips.
type Problem struct {
	// Workload and File name the workload; Op the einsum op of a graph.
	Workload, File, Op string
	// Decl declares the program's axes (the contraction's axes, in the
	// workload's declaration order).
	Decl mapping.Axes
	// Axes are the contraction's axes in declaration order.
	Axes []Axis
	In   [2]Operand
	Out  Operand
	// Acc is the accumulator type the Reducer widens the inputs to
	// (002 L3782, L4391).
	Acc   dtype.DType
	Chips int
	// Epilogue are the ops the main chain's Vector Engine pass does on
	// the accumulator before the commit (a fused workload's einsum,
	// workload.Fuse), in order; Out is the last one's output.
	Epilogue []*workload.Op
	// Operands are the epilogue's tensor operands (workload.EpilogueOperand,
	// in the epilogue's order): each spans the output's axes and is loaded
	// tile by tile beside the output, into the VRF, for the Vector Engine
	// pass to read per position (002 L5066-5079).
	Operands []Operand
}

// EpilogueVector reports whether the epilogue needs the main chain's
// Vector Engine pass: an op other than a cast (a cast alone is the chain's
// own cast of the accumulator to the output type).
func (p *Problem) EpilogueVector() bool {
	for _, o := range p.Epilogue {
		if o.Kind != workload.KindCast {
			return true
		}
	}
	return false
}

// Einsum prints the contraction in einsum notation (`I K, K J -> I J`,
// `A, A -> 1`).
func (p *Problem) Einsum() string {
	side := func(o *Operand) string {
		if len(o.Axes) == 0 {
			return "1" // a scalar, as "I, I -> 1" (002 L114)
		}
		return strings.Join(o.Axes, " ")
	}
	return side(&p.In[0]) + ", " + side(&p.In[1]) + " -> " + side(&p.Out)
}

// axis returns the index of the named axis.
func (p *Problem) axis(name string) int {
	for i, a := range p.Axes {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// NewProblem extracts the contraction to plan from a workload: the einsum
// of the single-einsum form, or the einsum op named op of a graph (op may be
// empty when the graph has exactly one einsum).
func NewProblem(w *workload.Workload, op string) (*Problem, error) {
	if w == nil {
		return nil, fmt.Errorf("search: no workload")
	}
	var o *workload.Op
	switch {
	case op != "":
		for _, x := range w.Ops {
			if x.Name == op {
				o = x
			}
		}
		if o == nil {
			return nil, fmt.Errorf("%s: no op named %q", w.File, op)
		}
	case len(w.Ops) == 1:
		o = w.Ops[0]
	default:
		var names []string
		for _, x := range w.Ops {
			if x.Kind == workload.KindEinsum {
				names = append(names, x.Name)
			}
		}
		if len(names) == 1 {
			for _, x := range w.Ops {
				if x.Name == names[0] {
					o = x
				}
			}
		} else {
			return nil, fmt.Errorf("%s: a graph of %d ops: name the einsum op (one of %s); `tcpmap plan` without --op plans the whole graph",
				w.File, len(w.Ops), strings.Join(names, ", "))
		}
	}
	if o.Kind != workload.KindEinsum || o.Einsum == nil {
		return nil, opError(w.File, o.Line, "op %q is a %s; the planner maps einsum contractions", o.Name, o.Kind)
	}
	var extra []string // the epilogue's tensor operands, after the two
	for _, e := range o.Epilogue {
		if y := workload.EpilogueOperand(e); y != "" {
			extra = append(extra, y)
		}
	}
	if len(o.Inputs) != 2+len(extra) || len(o.Outputs) != 1 || !slices.Equal(o.Inputs[2:], extra) {
		return nil, opError(w.File, o.Line, "op %q: want 2 inputs, its epilogue's tensors after them, and 1 output", o.Name)
	}
	p := &Problem{Workload: w.Name, File: w.File, Chips: w.Chips}
	if w.Form == workload.FormGraph {
		p.Op = o.Name
	}
	operand := func(name string) (Operand, error) {
		t := w.Tensor(name)
		if t == nil {
			return Operand{}, fmt.Errorf("%s: op %q: unknown tensor %q", w.File, o.Name, name)
		}
		op := Operand{Name: t.Name, Axes: append([]string(nil), t.Axes...), DType: t.DType, Layout: t.LayoutExpr}
		if op.Layout == nil {
			parts := make([]*mapping.Expr, 0, len(t.Axes))
			for _, a := range t.Axes {
				n, ok := w.Axes.Size(a)
				if !ok {
					return Operand{}, fmt.Errorf("%s: tensor %q: undeclared axis %q", w.File, name, a)
				}
				parts = append(parts, mapping.Sym(a, n))
			}
			op.Layout = mapping.Pair(parts...)
			if len(parts) == 0 {
				op.Layout = mapping.Identity()
			}
		}
		if err := op.Layout.Err(); err != nil {
			return Operand{}, fmt.Errorf("%s: tensor %q: layout: %w", w.File, name, err)
		}
		return op, nil
	}
	var err error
	for i := range p.In {
		if p.In[i], err = operand(o.Inputs[i]); err != nil {
			return nil, err
		}
	}
	if p.Out, err = operand(o.Outputs[0]); err != nil {
		return nil, err
	}
	if p.In[0].DType != p.In[1].DType {
		return nil, opError(w.File, o.Line, "op %q: inputs of %s and %s; a contraction multiplies operands of one type (002 L3891-3894)", o.Name, p.In[0].DType, p.In[1].DType)
	}
	if w.DTypes != nil {
		p.Acc = w.DTypes.Acc
	} else if p.Acc, err = dtype.AccType(p.In[0].DType); err != nil {
		return nil, opError(w.File, o.Line, "op %q: %v", o.Name, err)
	}

	if len(o.Epilogue) > 0 {
		// The Float cluster works on f32 lanes (002 L4893-4900): the
		// accumulator's f32 (002 L4391) enters it, the output is cast
		// after it.
		if p.Acc != dtype.F32 || !p.Out.DType.IsFloat() {
			return nil, opError(w.File, o.Line, "op %q: an epilogue runs on an f32 accumulator into a float output, not %s into %s", o.Name, p.Acc, p.Out.DType)
		}
		p.Epilogue = o.Epilogue
		for _, y := range extra {
			x, err := operand(y)
			if err != nil {
				return nil, err
			}
			if !x.DType.IsFloat() || slices.ContainsFunc(x.Axes, func(a string) bool { return !p.Out.Has(a) }) {
				return nil, opError(w.File, o.Line, "op %q: the epilogue's tensor %s (%s over %v) is not a float tensor over some of the output's axes %v", o.Name, y, x.DType, x.Axes, p.Out.Axes)
			}
			p.Operands = append(p.Operands, x)
		}
	}

	// The axes, in declaration order, with their classes.
	used := map[string]bool{}
	for _, op := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		for _, a := range op.Axes {
			used[a] = true
		}
	}
	var decl []mapping.Axis
	for _, ax := range w.Axes.List() {
		if !used[ax.Name] {
			continue
		}
		in0, in1, out := p.In[0].Has(ax.Name), p.In[1].Has(ax.Name), p.Out.Has(ax.Name)
		var c Class
		switch {
		case in0 && in1 && !out:
			c = Contracted
		case in0 && in1 && out:
			c = Batch
		case in0 && out:
			c = Free0
		case in1 && out:
			c = Free1
		default:
			return nil, opError(w.File, o.Line, "op %q: axis %s is summed inside one operand; the mapspace contracts axes both inputs hold", o.Name, ax.Name)
		}
		p.Axes = append(p.Axes, Axis{Name: ax.Name, Size: ax.Size, Class: c})
		decl = append(decl, ax)
	}
	if len(p.Axes) > MaxAxes {
		return nil, opError(w.File, o.Line, "op %q has %d axes; the mapspace handles at most %d", o.Name, len(p.Axes), MaxAxes)
	}
	if p.Decl, err = mapping.NewAxes(decl...); err != nil {
		return nil, fmt.Errorf("%s: axes: %w", w.File, err)
	}
	return p, nil
}

// hbmOrder returns the operand's axes ordered as its HBM layout stores
// them, major first: by the position of each axis's innermost digit in the
// layout's factorized form (002 L574).
func hbmOrder(p *Problem, o *Operand) ([]int, error) {
	fs, err := mapping.Factorize(o.Layout)
	if err != nil {
		return nil, fmt.Errorf("search: layout %s of %s: %w", o.Layout.Text(), o.Name, err)
	}
	pos := map[string]int{}
	for i, f := range fs {
		if f.Kind == mapping.FactorTerm {
			if _, ok := pos[f.Axis]; !ok {
				pos[f.Axis] = i
			}
		}
	}
	var out []int
	for _, name := range o.Axes {
		a := p.axis(name)
		if a < 0 {
			return nil, fmt.Errorf("search: tensor %s: unknown axis %s", o.Name, name)
		}
		if _, ok := pos[name]; !ok {
			pos[name] = -1 // a size-1 axis has no factor
		}
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool { return pos[p.Axes[out[i]].Name] > pos[p.Axes[out[j]].Name] })
	return out, nil
}

// plainLayout reports whether o's HBM layout is each of its axes whole,
// once, and nothing else (no padding, broadcast or split axis).
func plainLayout(p *Problem, o *Operand) bool {
	fs, err := mapping.Factorize(o.Layout)
	if err != nil {
		return false
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if f.Kind != mapping.FactorTerm {
			if f.Extent > 1 {
				return false
			}
			continue
		}
		a := p.axis(f.Axis)
		if a < 0 || seen[f.Axis] || f.Stride != 1 || f.Extent != p.Axes[a].Size {
			return false
		}
		seen[f.Axis] = true
	}
	return true
}

// Pad returns p with the axes named in sizes padded to those sizes (each at
// least the axis's workload size). The kernel is planned for the padded
// sizes and its tensors are stored padded, in HBM too (a padded row pitch:
// docs/spec-decisions.md "Padded shapes"); the axes' Valid sizes tell the
// reference which positions are padding: zero in a contracted axis (they
// add nothing to the sums), arbitrary in the others, never compared in the
// output. Only operands stored plainly (each axis whole, once) are padded:
// a layout the workload states would no longer hold.
func (p *Problem) Pad(sizes map[string]int) (*Problem, error) {
	q := *p
	q.Axes = append([]Axis(nil), p.Axes...)
	for name, n := range sizes {
		a := p.axis(name)
		if a < 0 {
			return nil, fmt.Errorf("%s: pad: no axis %s", p.File, name)
		}
		ax := &q.Axes[a]
		valid := ax.Size
		if ax.Padded() {
			valid = ax.Valid
		}
		if n < valid {
			return nil, fmt.Errorf("%s: pad: axis %s of %d padded to %d", p.File, name, valid, n)
		}
		ax.Size, ax.Valid = n, valid
		if n == valid {
			ax.Valid = 0
		}
	}
	decl := make([]mapping.Axis, len(q.Axes))
	for a, ax := range q.Axes {
		decl[a] = mapping.Axis{Name: ax.Name, Size: ax.Size}
	}
	var err error
	if q.Decl, err = mapping.NewAxes(decl...); err != nil {
		return nil, fmt.Errorf("%s: pad: %w", p.File, err)
	}
	ops := []*Operand{&q.In[0], &q.In[1], &q.Out}
	for i, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		if !plainLayout(p, o) {
			return nil, fmt.Errorf("%s: pad: tensor %s has a stated layout %s; pad it in the workload", p.File, o.Name, o.Layout.Text())
		}
		order, err := hbmOrder(p, o)
		if err != nil {
			return nil, err
		}
		parts := make([]*mapping.Expr, 0, len(order))
		for _, a := range order {
			parts = append(parts, mapping.Sym(q.Axes[a].Name, q.Axes[a].Size))
		}
		n := *o
		n.Layout = mapping.Identity()
		if len(parts) > 0 {
			n.Layout = mapping.Pair(parts...)
		}
		*ops[i] = n
	}
	return &q, nil
}

// Valid returns the workload's size of each padded axis (nil when none is
// padded).
func (p *Problem) Valid() map[string]int {
	var v map[string]int
	for _, a := range p.Axes {
		if a.Padded() {
			if v == nil {
				v = map[string]int{}
			}
			v[a.Name] = a.Valid
		}
	}
	return v
}

// Padded reports whether some axis of p is padded.
func (p *Problem) Padded() bool {
	for _, a := range p.Axes {
		if a.Padded() {
			return true
		}
	}
	return false
}

// opError is an error about a graph workload's op, placed at the op's line.
func opError(file string, line int, format string, args ...any) error {
	return &pos.Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
