package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tcpmap/model/dtype"
)

// Expansion is one op of a graph that Expand replaced by ops of kinds
// with kernels: Op is the op as the workload states it, Parts the names of
// the ops that compute its outputs, in order (the last writes them).
type Expansion struct {
	Op    *Op
	Parts []string
}

// scanLimit bounds the elements of a scan's product tensor (x times the
// prefix indicator along the scanned axis): 2^24 i32 elements, 64 MiB. A
// longer scan is split into two axes (a view) and scanned in two levels.
const scanLimit = 1 << 24

// maxScan bounds the product tensor of a scan along an axis of prime
// length, which cannot be split: 2^28 elements (1 GiB of i32); a longer
// one is not expanded.
const maxScan = 1 << 28

// Expand returns w with each op that has no kernel of its own but an
// exact form in ops that have one replaced by that form, and the ops it
// replaced (none: w itself). The forms, all over i32 values, where the
// integer Fxp cluster's wrapping add, sub and multiply are exact
// (docs/spec-decisions.md "Index ops in kernels of other kinds"):
//
//   - cumsum along one axis A: the input viewed with A renamed A'
//     (reshape), times a prefix indicator over (A', A) (Values{Kind:
//     prefix}), summed over A' (reduce). Along several axes, the inner axes' scan plus the
//     exclusive scan of their totals along the outer one (add, sub). An
//     axis whose product tensor would pass scanLimit elements is split in
//     two (reshape) and scanned in two levels.
//   - gather of one element along A, the index sharing axes with the
//     table (a batched gather, the MoE's Token_Rank, 002 L8648): the
//     table times the index's one-hot along A (one_hot with the positions
//     along A, an existing one_hot of the same index reused), summed over
//     A. An index outside A reads 0, as the gather's reference does.
//   - compact of x where keep (keep a comparison's or a one-hot's 0/1)
//     into one axis P: each kept element's rank (a cumsum of keep, less
//     one; −1 where not kept), its one-hot along P, and x + 1 summed
//     against it, less one: the slots past the kept elements hold −1.
//     When x has an axis P, x and keep are viewed with it renamed.
//   - topk of bf16 scores along an axis of at most 2^15: the manual's
//     branchless form (topk below).
//
// Each part but a view writes a tensor of its own, and the last writes the
// op's output, except after a split scan (a view). The parts are named
// after the op (mask_scan_prod, …), new axes after the scanned ones (Kr;
// Thi, Tlo; GRIDs); parts and new tensors carry the op's line.
func Expand(w *Workload) (*Workload, []Expansion, error) { return ExpandExcept(w, nil) }

// ExpandExcept is Expand keeping the ops named in except as they are.
func ExpandExcept(w *Workload, except []string) (*Workload, []Expansion, error) {
	if w == nil || w.Form != FormGraph || len(w.Axes.Skews()) > 0 {
		return w, nil, nil
	}
	e := &expander{w: w, names: map[string]bool{}, opNames: map[string]bool{}, axes: map[string]int64{}}
	for _, a := range w.Axes.List() {
		e.axes[a.Name] = int64(a.Size)
		e.axisOrder = append(e.axisOrder, a.Name)
		e.names[a.Name] = true
	}
	for _, t := range w.Tensors {
		e.names[t.Name] = true
		c := *t
		e.tensors = append(e.tensors, &c)
	}
	for _, o := range w.Ops {
		e.opNames[o.Name] = true
	}
	var exps []Expansion
	for _, o := range w.Ops {
		e.line = o.Line
		if slices.Contains(except, o.Name) {
			e.ops = append(e.ops, o)
			continue
		}
		parts, ok := e.expand(o)
		if !ok {
			e.ops = append(e.ops, o)
			continue
		}
		x := Expansion{Op: o}
		for _, p := range parts {
			x.Parts = append(x.Parts, p.Name)
		}
		exps = append(exps, x)
		e.ops = append(e.ops, parts...)
	}
	if len(exps) == 0 {
		return w, nil, nil
	}
	out, err := Parse(e.yaml(), w.File)
	if err != nil {
		return nil, nil, fmt.Errorf("expanding %s: %w", w.Name, err)
	}
	// Every error about a part points at the op it stands for.
	lines := map[string]int{}
	for _, t := range e.tensors {
		lines[t.Name] = t.Line
	}
	for _, t := range out.Tensors {
		t.Line = lines[t.Name]
	}
	olines := map[string]int{}
	for _, o := range e.ops {
		olines[o.Name] = o.Line
	}
	for _, o := range out.Ops {
		o.Line = olines[o.Name]
	}
	return out, exps, nil
}

type expander struct {
	w         *Workload
	names     map[string]bool // tensors and axes
	opNames   map[string]bool
	axes      map[string]int64
	axisOrder []string
	tensors   []*Tensor
	ops       []*Op
	line      int
	// done are the ops already emitted for the op being expanded; failed
	// says its form cannot be built (a scan too long to split).
	done   []*Op
	failed bool
}

func (e *expander) tensor(name string) *Tensor {
	for _, t := range e.tensors {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// fresh returns a name made from base that is not in used, and marks it.
func fresh(used map[string]bool, base string) string {
	n := base
	for k := 2; used[n]; k++ {
		n = base + strconv.Itoa(k)
	}
	used[n] = true
	return n
}

func (e *expander) newAxis(base string, size int64) string {
	a := fresh(e.names, base)
	e.axes[a] = size
	e.axisOrder = append(e.axisOrder, a)
	return a
}

func (e *expander) newTensor(base string, axes []string, dt dtype.DType, v *Values) string {
	t := &Tensor{Name: fresh(e.names, base), Axes: slices.Clone(axes), DType: dt, Values: v, Line: e.line}
	e.tensors = append(e.tensors, t)
	return t.Name
}

func (e *expander) op(base string, kind Kind, ins []string, out string, set func(*Op)) {
	o := &Op{Name: fresh(e.opNames, base), Kind: kind, Inputs: ins, Outputs: []string{out}, Line: e.line}
	if set != nil {
		set(o)
	}
	e.done = append(e.done, o)
}

func scalarOf(v float64) func(*Op) { return func(o *Op) { o.Scalar = &v } }

// expand returns the parts of o, or false when o keeps its kind.
func (e *expander) expand(o *Op) ([]*Op, bool) {
	e.done, e.failed = nil, false
	nt, na := len(e.tensors), len(e.axisOrder)
	var ok bool
	switch o.Kind {
	case KindCumsum:
		x := e.tensor(o.Inputs[0])
		if ok = x.DType == dtype.I32 && e.tensor(o.Outputs[0]).DType == dtype.I32; ok {
			e.cumsum(o.Name, x.Name, o.Axes, o.Outputs[0])
		}
	case KindGather:
		ok = e.batchedGather(o)
	case KindCompact:
		ok = e.compact(o)
	case KindTopK:
		ok = e.topk(o)
	}
	if !ok || e.failed {
		// Nothing of it stays: its tensors and axes go too.
		e.tensors, e.axisOrder = e.tensors[:nt], e.axisOrder[:na]
		return nil, false
	}
	return e.done, true
}

// cumsum emits the inclusive scan of x over axes (in x's axis order) into
// out (a tensor of x's axes and dtype, "" for a new one); it returns out.
func (e *expander) cumsum(base, x string, axes []string, out string) string {
	xt := e.tensor(x)
	var scan []string
	for _, a := range xt.Axes {
		if slices.Contains(axes, a) {
			scan = append(scan, a)
		}
	}
	if out == "" {
		out = e.newTensor(base+"_scan", xt.Axes, xt.DType, nil)
	}
	if len(scan) > 1 {
		// Along (A1, rest): the scan along rest, plus the exclusive scan
		// along A1 of rest's totals.
		rest := scan[1:]
		inner := e.cumsum(base, x, rest, "")
		tot := e.newTensor(base+"_tot", minus(xt.Axes, rest), xt.DType, nil)
		e.op(base+"_tot", KindReduce, []string{x}, tot, func(o *Op) { o.Reduce, o.Axes = ReduceSum, slices.Clone(rest) })
		ctot := e.cumsum(base, tot, scan[:1], "")
		ex := e.newTensor(base+"_excl", minus(xt.Axes, rest), xt.DType, nil)
		e.op(base+"_excl", KindSub, []string{ctot, tot}, ex, nil)
		e.op(base+"_sum", KindAdd, []string{inner, ex}, out, nil)
		return out
	}
	a := scan[0]
	n := e.axes[a]
	var elems int64 = 1
	for _, b := range xt.Axes {
		// Saturated past maxScan (no product overflows): only the
		// comparisons below read it.
		if elems > maxScan/e.axes[b] {
			elems = maxScan + 1
			continue
		}
		elems *= e.axes[b]
	}
	lo := splitFactor(n)
	if elems > scanLimit/n && lo == 1 && elems > maxScan/n {
		// A prime length whose product no split can shorten.
		e.failed = true
		return out
	}
	if elems > scanLimit/n && lo > 1 {
		// Split A into (Ahi, Alo), a view, and scan both levels.
		hi := e.newAxis(a+"hi", n/lo)
		lw := e.newAxis(a+"lo", lo)
		split := replaceAxis(xt.Axes, a, hi, lw)
		xs := e.newTensor(base+"_split", split, xt.DType, nil)
		e.op(base+"_split", KindReshape, []string{x}, xs, nil)
		ss := e.cumsum(base, xs, []string{hi, lw}, "")
		e.op(base+"_join", KindReshape, []string{ss}, out, nil)
		return out
	}
	// x viewed with A renamed A', the product over (A', A), summed over
	// A': the output itself.
	r := e.newAxis(a+"r", n)
	xr := e.newTensor(base+"_in", replaceAxis(xt.Axes, a, r), xt.DType, nil)
	e.op(base+"_in", KindReshape, []string{x}, xr, nil)
	tri := e.newTensor(base+"_prefix", []string{r, a}, dtype.I32, &Values{Kind: ValuesPrefix, Query: a, Key: r})
	prodAxes := replaceAxis(xt.Axes, a, r, a)
	prod := e.newTensor(base+"_prod", prodAxes, xt.DType, nil)
	e.op(base+"_prod", KindMul, []string{xr, tri}, prod, nil)
	e.op(base+"_psum", KindReduce, []string{prod}, out, func(o *Op) { o.Reduce, o.Axes = ReduceSum, []string{r} })
	return out
}

// splitFactor is the divisor of n nearest its square root from below (1
// for a prime).
func splitFactor(n int64) int64 {
	best := int64(1)
	for d := int64(2); d*d <= n; d++ {
		if n%d == 0 {
			best = d
		}
	}
	return best
}

func replaceAxis(axes []string, a string, with ...string) []string {
	var out []string
	for _, b := range axes {
		if b == a {
			out = append(out, with...)
			continue
		}
		out = append(out, b)
	}
	return out
}

// positions returns a tensor of the positions along a (an iota), an
// existing one when the graph has it.
func (e *expander) positions(base, a string) string {
	for _, t := range e.tensors {
		if v := t.Values; v != nil && v.Kind == ValuesIota && v.Axis == a && t.DType == dtype.I32 {
			return t.Name
		}
	}
	return e.newTensor(base+"_pos", []string{a}, dtype.I32, &Values{Kind: ValuesIota, Axis: a})
}

// oneHot returns the one-hot of index along a: an existing one_hot op's
// output (earlier in the graph, of the same index and positions), or a
// new part's.
func (e *expander) oneHot(base, index, a string) string {
	pos := e.positions(base, a)
	for _, o := range e.ops {
		if o.Kind == KindOneHot && o.Axis == a && slices.Equal(o.Inputs, []string{index, pos}) && e.tensor(o.Outputs[0]).DType == dtype.I32 {
			return o.Outputs[0]
		}
	}
	it := e.tensor(index)
	oh := e.newTensor(base+"_onehot", append(slices.Clone(it.Axes), a), dtype.I32, nil)
	e.op(base+"_onehot", KindOneHot, []string{index, pos}, oh, func(o *Op) { o.Axis = a })
	return oh
}

// batchedGather expands a gather of one element along an axis whose index
// shares axes with the table.
func (e *expander) batchedGather(o *Op) bool {
	table, index, out := e.tensor(o.Inputs[0]), e.tensor(o.Inputs[1]), e.tensor(o.Outputs[0])
	if len(o.Axes) != 1 || table.DType != dtype.I32 || index.DType != dtype.I32 {
		return false
	}
	a := o.Axes[0]
	rest := minus(table.Axes, o.Axes)
	shared := false
	for _, b := range index.Axes {
		if !slices.Contains(rest, b) {
			return false
		}
		shared = true
	}
	if !shared || !setEq(out.Axes, rest) {
		return false
	}
	oh := e.oneHot(o.Name, index.Name, a)
	prod := e.newTensor(o.Name+"_masked", table.Axes, dtype.I32, nil)
	e.op(o.Name+"_masked", KindMul, []string{table.Name, oh}, prod, nil)
	e.op(o.Name+"_sum", KindReduce, []string{prod}, out.Name, func(p *Op) { p.Reduce, p.Axes = ReduceSum, []string{a} })
	return true
}

// boolean reports whether t's values are 0 or 1: a comparison's or a
// one-hot's output.
func (e *expander) boolean(t string) bool {
	for _, o := range e.ops {
		if slices.Contains(o.Outputs, t) && zeroOne(o.Kind) {
			return true
		}
	}
	return false
}

// zeroOne reports whether ops of kind k write only 0s and 1s.
func zeroOne(k Kind) bool {
	switch k {
	case KindGT, KindGE, KindLT, KindOneHot:
		return true
	}
	return false
}

// compact expands a compaction of all of x's axes into one.
func (e *expander) compact(o *Op) bool {
	x, keep, out := e.tensor(o.Inputs[0]), e.tensor(o.Inputs[1]), e.tensor(o.Outputs[0])
	if x.DType != dtype.I32 || keep.DType != dtype.I32 || len(out.Axes) != 1 || len(minus(x.Axes, o.Axes)) != 0 || !e.boolean(keep.Name) {
		return false
	}
	p := out.Axes[0]
	xn, kn, axes := x.Name, keep.Name, o.Axes
	if slices.Contains(x.Axes, p) {
		// x and keep viewed with their axis P renamed, so that the slots
		// are P itself.
		ps := e.newAxis(p+"s", e.axes[p])
		xn = e.newTensor(o.Name+"_x", replaceAxis(x.Axes, p, ps), x.DType, nil)
		e.op(o.Name+"_x", KindReshape, []string{x.Name}, xn, nil)
		kn = e.newTensor(o.Name+"_keep", replaceAxis(keep.Axes, p, ps), keep.DType, nil)
		e.op(o.Name+"_keep", KindReshape, []string{keep.Name}, kn, nil)
		axes = replaceAxis(axes, p, ps)
	}
	xa := e.tensor(xn).Axes
	rank := e.cumsum(o.Name, kn, axes, "")
	less := e.newTensor(o.Name+"_rank", xa, dtype.I32, nil)
	e.op(o.Name+"_rank", KindSub, []string{rank}, less, scalarOf(1))
	slot := e.newTensor(o.Name+"_slot", xa, dtype.I32, nil)
	e.op(o.Name+"_slot", KindWhere, []string{kn, less}, slot, scalarOf(-1))
	oh := e.oneHot(o.Name, slot, p)
	plus := e.newTensor(o.Name+"_plus", xa, dtype.I32, nil)
	e.op(o.Name+"_plus", KindAdd, []string{xn}, plus, scalarOf(1))
	prod := e.newTensor(o.Name+"_placed", e.tensor(oh).Axes, dtype.I32, nil)
	e.op(o.Name+"_placed", KindMul, []string{oh, plus}, prod, nil)
	// Summed over x's axes one reduce an axis, the innermost first, so
	// that each reduce's slices split the axes it keeps: one reduce over
	// them all keeps only P, which the slices alone split (the MoE's
	// 2 MiB of placed Expert_IDs over a GRID of 254 = 2 × 127, at most 2 slices of
	// 512 KiB of DM, 002 L138).
	src, kept := prod, e.tensor(oh).Axes
	for i := len(xa) - 1; i >= 0; i-- {
		kept = minus(kept, xa[i:i+1])
		sum := e.newTensor(o.Name+"_sum", kept, dtype.I32, nil)
		e.op(o.Name+"_sum", KindReduce, []string{src}, sum, func(q *Op) { q.Reduce, q.Axes = ReduceSum, []string{xa[i]} })
		src = sum
	}
	e.op(o.Name+"_fill", KindSub, []string{src}, out.Name, scalarOf(1))
	return true
}

// topk expands a top-k of bf16 scores along axis E into the manual's
// branchless form (002 L8534-8594): each score packed with its index
// (pack), its sort key (sort_key), the all-to-all comparison of the keys
// along a copy Ec of E (gt of the keys viewed with E renamed Ec, against the
// keys), each element's rank the sum of the keys above it, and the kept
// elements placed by rank: the one-hot of the rank along K, times the
// packed values, summed over E (where the manual compacts with the
// Filter, this places them in rank order, as top-k returns them). The
// scores are the packed values' upper half (unpack, exact for an index
// below 0x8000: an axis of at most 2^15), the indices the lower (bit_and
// 0xffff).
func (e *expander) topk(o *Op) bool {
	x, vals, idx := e.tensor(o.Inputs[0]), e.tensor(o.Outputs[0]), e.tensor(o.Outputs[1])
	a := o.Axis
	n := e.axes[a]
	if x.DType != dtype.BF16 || vals.DType != dtype.BF16 || idx.DType != dtype.I32 || n > 1<<15 {
		return false
	}
	// The comparison's elements, n times x's, within maxScan (checked
	// factor by factor: no product overflows).
	elems := n
	for _, b := range x.Axes {
		if elems > maxScan/e.axes[b] {
			return false
		}
		elems *= e.axes[b]
	}
	pos := e.positions(o.Name, a)
	packed := e.newTensor(o.Name+"_packed", x.Axes, dtype.I32, nil)
	e.op(o.Name+"_pack", KindPack, []string{x.Name, pos}, packed, nil)
	key := e.newTensor(o.Name+"_key", x.Axes, dtype.I32, nil)
	e.op(o.Name+"_key", KindSortKey, []string{packed}, key, nil)
	r := e.newAxis(a+"c", n)
	keyr := e.newTensor(o.Name+"_keyr", replaceAxis(x.Axes, a, r), dtype.I32, nil)
	e.op(o.Name+"_keyr", KindReshape, []string{key}, keyr, nil)
	above := e.newTensor(o.Name+"_above", replaceAxis(x.Axes, a, a, r), dtype.I32, nil)
	e.op(o.Name+"_above", KindGT, []string{keyr, key}, above, nil)
	rank := e.newTensor(o.Name+"_rank", x.Axes, dtype.I32, nil)
	e.op(o.Name+"_rank", KindReduce, []string{above}, rank, func(p *Op) { p.Reduce, p.Axes = ReduceSum, []string{r} })
	sel := e.oneHot(o.Name, rank, o.K)
	placed := e.newTensor(o.Name+"_placed", e.tensor(sel).Axes, dtype.I32, nil)
	e.op(o.Name+"_placed", KindMul, []string{packed, sel}, placed, nil)
	selected := e.newTensor(o.Name+"_selected", replaceAxis(x.Axes, a, o.K), dtype.I32, nil)
	e.op(o.Name+"_selected", KindReduce, []string{placed}, selected, func(p *Op) { p.Reduce, p.Axes = ReduceSum, []string{a} })
	e.op(o.Name+"_scores", KindUnpack, []string{selected}, vals.Name, nil)
	e.op(o.Name+"_indices", KindBitAnd, []string{selected}, idx.Name, scalarOf(0xffff))
	return true
}

// yaml writes the expanded graph in the workload format.
func (e *expander) yaml() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nchips: %d\naxes: {", e.w.Name, e.w.Chips)
	for i, a := range e.axisOrder {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", a, e.axes[a])
	}
	b.WriteString("}\ntensors:\n")
	for _, t := range e.tensors {
		fmt.Fprintf(&b, "  %s: {axes: [%s], dtype: %s", t.Name, strings.Join(t.Axes, ", "), t.DType)
		if t.Layout != "" {
			fmt.Fprintf(&b, ", layout: %s", strconv.Quote(t.Layout))
		}
		if t.Values != nil {
			fmt.Fprintf(&b, ", values: %s", t.Values.Text())
		}
		b.WriteString("}\n")
	}
	b.WriteString("ops:\n")
	for _, o := range e.ops {
		fmt.Fprintf(&b, "  - {name: %s, kind: %s, inputs: [%s], outputs: [%s]", o.Name, o.Kind, strings.Join(o.Inputs, ", "), strings.Join(o.Outputs, ", "))
		for _, p := range []struct{ k, v string }{{"axis", o.Axis}, {"k", o.K}, {"query", o.Query}, {"key", o.Key}, {"op", o.Reduce}} {
			if p.v != "" {
				fmt.Fprintf(&b, ", %s: %s", p.k, p.v)
			}
		}
		if len(o.Axes) > 0 {
			fmt.Fprintf(&b, ", axes: [%s]", strings.Join(o.Axes, ", "))
		}
		if o.Scalar != nil {
			fmt.Fprintf(&b, ", scalar: %s", strconv.FormatFloat(*o.Scalar, 'g', -1, 64))
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// OpGraph returns the graph of w's op name alone: its tensors (the
// inputs as the graph's inputs, with their layouts and values) and the
// axes they use, so that an op planned by expansion can be planned,
// priced and verified by itself (`tcpmap plan --op`). A compaction comes
// with the comparison (or one-hot) that writes its mask (MaskOp): its
// form holds only for a mask of 0s and 1s, which the op alone does not
// say.
func OpGraph(w *Workload, name string) (*Workload, error) {
	var op *Op
	for _, o := range w.Ops {
		if o.Name == name {
			op = o
		}
	}
	if op == nil {
		return nil, fmt.Errorf("%s: no op %q", w.File, name)
	}
	ops := []*Op{op}
	if m := MaskOp(w, op); m != nil {
		ops = []*Op{m, op}
	}
	e := &expander{w: w, axes: map[string]int64{}}
	used := map[string]bool{}
	var names []string
	for _, o := range ops {
		for _, n := range append(slices.Clone(o.Inputs), o.Outputs...) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		t := w.Tensor(n)
		c := *t
		e.tensors = append(e.tensors, &c)
		for _, a := range t.Axes {
			used[a] = true
		}
	}
	for _, o := range ops {
		for _, a := range append([]string{o.Axis, o.K, o.Query, o.Key}, o.Axes...) {
			if a != "" {
				used[a] = true
			}
		}
	}
	for _, a := range w.Axes.List() {
		if used[a.Name] {
			e.axes[a.Name] = int64(a.Size)
			e.axisOrder = append(e.axisOrder, a.Name)
		}
	}
	e.ops = ops
	g, err := Parse(e.yaml(), w.File)
	if err != nil {
		return nil, fmt.Errorf("op %s alone: %w", name, err)
	}
	g.Name = w.Name + "-" + name
	for i, o := range ops {
		g.Ops[i].Line = o.Line
	}
	for _, t := range g.Tensors {
		t.Line = w.Tensor(t.Name).Line
	}
	return g, nil
}

// MaskOp returns the op of w that writes compaction op's mask when it is a
// comparison or a one-hot (its values 0 or 1), else nil.
func MaskOp(w *Workload, op *Op) *Op {
	if op.Kind != KindCompact || len(op.Inputs) < 2 {
		return nil
	}
	for _, o := range w.Ops {
		if slices.Contains(o.Outputs, op.Inputs[1]) {
			if zeroOne(o.Kind) {
				return o
			}
			return nil
		}
	}
	return nil
}
