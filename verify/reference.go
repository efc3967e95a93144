package verify

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Expected is what a kernel must produce: the output its Reference states,
// computed directly from the definition, plus what Compare needs to bound the
// hardware's rounding element by element.
type Expected struct {
	// Out is the reference output, shaped like the output tensor
	// (NewLogical). Float outputs are computed in float64 and are not
	// rounded to the output dtype (Compare accounts for the rounding);
	// integer outputs are exact, wrapped to the output dtype's width.
	Out *Logical
	// Abs holds, per element of Out, Σ|t| over the terms t that make it up
	// (Σ_k |a·b| for an einsum, |a·b| for mul, Σ|x_j| + |Scalar| for add):
	// the magnitude the rounding-error bound scales with. Nil for integer
	// outputs, which are compared exactly.
	Abs *Logical
	// Depth is the largest number of roundings any one term goes through on
	// its way into an element, before the output cast: the n of γ_n in
	// Compare's bound. An einsum over two inputs with R terms per element
	// has Depth R (one product and at most R−1 additions); over one input,
	// R−1; mul of two inputs 1; add of m addends m−1.
	Depth int
	// Ops is the number of rounded operations per element (products and
	// additions): each can underflow, and Compare adds one smallest normal
	// f32 per op for it.
	Ops int
	// Lo and Hi, when set, bound each element explicitly (an expression
	// reference's interval evaluation, refexpr.go): the output lies in
	// [Lo, Hi] before its rounding to the output dtype; −∞ and +∞ together
	// leave the element unchecked. Abs, Depth and Ops are then unused.
	Lo, Hi *Logical
	// UncheckedWhy says why elements are left unchecked, when not for an
	// interval across a pole or a domain edge (Comparison.UncheckedWhy).
	UncheckedWhy string
}

// Reference computes the output of p.Reference from the kernel's HBM input
// values, directly from the Reference's definition: it uses the tensors'
// axes and nothing else of the kernel (no mapping, no engine
// configuration), so it is independent of the simulator. inputs maps each
// input tensor's name to its values, shaped as NewLogical gives them.
//
// The computations (kernel.RefOp):
//   - einsum of one or two inputs: the output at an index is the sum, over
//     the axes of the inputs the output does not have (the contracted
//     axes), of the product of the inputs at that index; an input that lacks
//     one of the output's axes is broadcast along it (002 L109-121). The
//     Contraction Engine multiplies two operands, a stream and a TRF
//     (002 L110, L4387), so more inputs are an error.
//   - mul of one or two inputs: the elementwise product (002 L221-298); the
//     inputs may lack output axes (broadcast) but must not have others.
//   - add: the sum of the inputs plus Scalar, elementwise (002 L158-219);
//     broadcast as for mul.
//
// Arithmetic is float64 for float dtypes and exact int64 for integer ones.
// Integer results wrap to the output dtype's width in two's complement: the
// i32 accumulator and the Vector Engine's AddFxp and MulInt wrap
// (vector-and-kernels.md §2.4: "AddFxp … wrapping add", "MulInt … integer
// multiply" = wrapping_mul; 002 L4824-4836), and a narrowing cast wraps
// (reference-notes L897), so the result modulo 2^bits is the same whatever
// the order of the operations. The inputs and the output must all be float
// types or all integer types.
//
// Reference is parallel over GOMAXPROCS goroutines; its loops run the
// contraction with the smallest combined strides innermost.
func Reference(p *kernel.Program, inputs map[string]*Logical) (*Expected, error) {
	return ReferenceFor(p, inputs, nil)
}

// ReferenceFor is Reference computed only at the output elements need
// marks (nil: every element); the others hold 0 for an einsum or mul, and
// what Reference gives for the other ops. Verify with sampled slices
// compares only their elements, and an einsum's reference over a whole
// prefill output would cost more than the sampled simulation itself.
func ReferenceFor(p *kernel.Program, inputs map[string]*Logical, need []bool) (*Expected, error) {
	if p == nil || p.Reference == nil {
		return nil, fmt.Errorf("reference: the kernel states no reference")
	}
	r := p.Reference
	outT, ok := p.Tensor(r.Output)
	if !ok {
		return nil, fmt.Errorf("reference: unknown output tensor %q", r.Output)
	}
	if r.Op == kernel.RefExpr {
		exp, err := refExpr(p, r, inputs)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		return exp, nil
	}
	out, err := NewLogical(p, outT)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	isInt := outT.DType.IsInt()
	if !isInt && !outT.DType.IsFloat() {
		return nil, fmt.Errorf("reference: output %q has dtype %s, neither float nor integer", outT.Name, outT.DType)
	}
	if r.Op == kernel.RefScatter {
		if len(r.Inputs) != 2 {
			return nil, fmt.Errorf("reference: scatter needs the data and the index, not %d inputs", len(r.Inputs))
		}
		data, err := checkInput(p, r.Inputs[0], inputs[r.Inputs[0]], isInt)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		index, err := checkInput(p, r.Inputs[1], inputs[r.Inputs[1]], true)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		e, err := scatter(out, data, index)
		if err != nil {
			return nil, fmt.Errorf("reference: scatter: %w", err)
		}
		return e, nil
	}
	if r.Op == kernel.RefGather {
		if len(r.Inputs) != 2 {
			return nil, fmt.Errorf("reference: gather needs the table and the index, not %d inputs", len(r.Inputs))
		}
		table, err := checkInput(p, r.Inputs[0], inputs[r.Inputs[0]], isInt)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		index, err := checkInput(p, r.Inputs[1], inputs[r.Inputs[1]], true)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		e, err := gather(out, table, index, isInt)
		if err != nil {
			return nil, fmt.Errorf("reference: gather: %w", err)
		}
		return e, nil
	}
	var ins []*Logical
	for _, name := range r.Factors() {
		in, err := checkInput(p, name, inputs[name], isInt)
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		ins = append(ins, in)
	}
	switch r.Op {
	case kernel.RefEinsum, kernel.RefMul:
		if len(ins) < 1 || len(ins) > 2 {
			return nil, fmt.Errorf("reference: %s of %d inputs: want 1 or 2 (the Contraction Engine multiplies a stream by a TRF operand, 002 L110, L4387)", r.Op, len(ins))
		}
		if r.Scalar != 0 {
			return nil, fmt.Errorf("reference: %s takes no scalar", r.Op)
		}
		if r.Op == kernel.RefMul {
			if err := noExtraAxes(out, ins); err != nil {
				return nil, fmt.Errorf("reference: mul: %w", err)
			}
		}
		var e *Expected
		if need != nil {
			if len(need) != len(out.Vals) {
				return nil, fmt.Errorf("reference: %d elements marked, the output has %d", len(need), len(out.Vals))
			}
			e = einsumAt(p, out, ins, isInt, need)
		} else {
			e = einsum(p, out, ins, isInt)
		}
		if r.Epilogue != "" {
			ops := map[string]*Logical{}
			for _, name := range r.EpilogueOperands() {
				if ops[name], err = checkInput(p, name, inputs[name], false); err != nil {
					return nil, fmt.Errorf("reference: epilogue: %w", err)
				}
			}
			if e, err = epilogue(p, r, e, ops); err != nil {
				return nil, fmt.Errorf("reference: %w", err)
			}
		}
		return e, nil
	case kernel.RefAdd:
		if len(ins) < 1 {
			return nil, fmt.Errorf("reference: add needs inputs")
		}
		if err := noExtraAxes(out, ins); err != nil {
			return nil, fmt.Errorf("reference: add: %w", err)
		}
		return add(out, ins, r.Scalar, isInt)
	case kernel.RefUpdateSlice:
		e, err := updateSlice(out, ins, r.Axis, isInt)
		if err != nil {
			return nil, fmt.Errorf("reference: update_slice: %w", err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("reference: unknown op %q: want einsum, add, mul, update_slice, gather or expr", r.Op)
}

// checkInput checks that in holds the values of input tensor name: its
// shape, its dtype, and that every value is one of the dtype's.
func checkInput(p *kernel.Program, name string, in *Logical, isInt bool) (*Logical, error) {
	t, ok := p.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("unknown input tensor %q", name)
	}
	if in == nil {
		return nil, fmt.Errorf("no values for input %q", name)
	}
	want, err := NewLogical(p, t)
	if err != nil {
		return nil, err
	}
	if in.DType != t.DType {
		return nil, fmt.Errorf("input %q: values are %s, the tensor is %s", name, in.DType, t.DType)
	}
	if t.DType.IsInt() != isInt || (!isInt && !t.DType.IsFloat()) {
		return nil, fmt.Errorf("input %q is %s: inputs and output must all be floats or all integers", name, t.DType)
	}
	if !sameAxes(in.Axes, want.Axes) || len(in.Vals) != len(want.Vals) {
		return nil, fmt.Errorf("input %q: values have axes %s and %d elements, the tensor has %s and %d",
			name, axesString(in.Axes), len(in.Vals), axesString(want.Axes), len(want.Vals))
	}
	for i, v := range in.Vals {
		if math.IsNaN(v) && !isInt {
			if math.IsNaN(dtype.Round(v, t.DType)) {
				continue
			}
		}
		if dtype.Round(v, t.DType) != v {
			return nil, fmt.Errorf("input %q at %s: %v is not a %s value", name, in.IndexString(i), v, t.DType)
		}
	}
	return in, nil
}

func sameAxes(a, b []mapping.Axis) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func axesString(as []mapping.Axis) string {
	s := "["
	for i, a := range as {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%d", a.Name, a.Size)
	}
	return s + "]"
}

// noExtraAxes checks that every input axis is an output axis (elementwise
// ops broadcast, they do not reduce).
func noExtraAxes(out *Logical, ins []*Logical) error {
	for _, in := range ins {
		for _, a := range in.Axes {
			if _, ok := strideOf(out, a.Name); !ok {
				return fmt.Errorf("input %q has axis %s, which the output %q lacks (an elementwise op does not reduce)", in.Name, a.Name, out.Name)
			}
		}
	}
	return nil
}

// strideOf is the stride in l.Vals of axis name, and whether l has it.
func strideOf(l *Logical, name string) (int, bool) {
	s := 1
	for i := len(l.Axes) - 1; i >= 0; i-- {
		if l.Axes[i].Name == name {
			return s, true
		}
		s *= l.Axes[i].Size
	}
	return 0, false
}

// nest is a loop nest over the axes of a computation: sizes per level,
// outermost first, and the stride of each level in the output and in the
// two operands (0 where the array lacks the axis).
type nest struct {
	size         []int
	so, sa, sb   []int
	contractions int // product of the sizes of the axes the output lacks
}

// newNest orders the axes of out and ins (program order, sizes > 1): the
// largest output axis outermost (the workers split it), the others by
// decreasing combined stride, so the innermost loop walks the smallest
// strides.
func newNest(p *kernel.Program, out *Logical, a, b *Logical) nest {
	type level struct {
		size, so, sa, sb int
		par              bool
	}
	var lv []level
	n := nest{contractions: 1}
	for _, ax := range p.Axes.List() {
		so, inO := strideOf(out, ax.Name)
		sa, inA := strideOf(a, ax.Name)
		sb, inB := strideOf(b, ax.Name)
		if !inO && !inA && !inB {
			continue
		}
		if !inO {
			n.contractions *= ax.Size
		}
		if ax.Size > 1 {
			lv = append(lv, level{size: ax.Size, so: so, sa: sa, sb: sb})
		}
	}
	par := -1
	for i, l := range lv {
		if l.so != 0 && (par < 0 || l.size > lv[par].size) {
			par = i
		}
	}
	if par >= 0 {
		lv[par].par = true
	}
	sort.SliceStable(lv, func(i, j int) bool {
		if lv[i].par != lv[j].par {
			return lv[i].par
		}
		return lv[i].so+lv[i].sa+lv[i].sb > lv[j].so+lv[j].sa+lv[j].sb
	})
	for _, l := range lv {
		n.size = append(n.size, l.size)
		n.so = append(n.so, l.so)
		n.sa = append(n.sa, l.sa)
		n.sb = append(n.sb, l.sb)
	}
	return n
}

// one is the second operand of a one-input einsum: the constant 1.
var one = &Logical{Name: "1", Vals: []float64{1}}

func einsum(p *kernel.Program, out *Logical, ins []*Logical, isInt bool) *Expected {
	a, b := ins[0], one
	if len(ins) == 2 {
		b = ins[1]
	}
	n := newNest(p, out, a, b)
	e := &Expected{Out: out}
	if len(ins) == 2 {
		e.Depth = n.contractions
		e.Ops = 2*n.contractions - 1
	} else {
		e.Depth = n.contractions - 1
		e.Ops = n.contractions - 1
	}
	if isInt {
		ai, bi := toInt(a.Vals), toInt(b.Vals)
		acc := make([]int64, len(out.Vals))
		parallel(n, func(lo, hi int) { n.runInt(lo, hi, acc, ai, bi) })
		wrapInto(out, acc)
		return e
	}
	abs := &Logical{Name: "|" + out.Name + "|", DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
	e.Abs = abs
	parallel(n, func(lo, hi int) { n.runFloat(lo, hi, out.Vals, abs.Vals, a.Vals, b.Vals) })
	return e
}

// einsumAt is einsum at the output elements need marks: each element's
// sum over the contracted axes, from the element's coordinates. The sum's
// order differs from einsum's nest (Compare's bound holds for any order;
// integer sums wrap to the same value in any order).
func einsumAt(p *kernel.Program, out *Logical, ins []*Logical, isInt bool, need []bool) *Expected {
	a, b := ins[0], one
	if len(ins) == 2 {
		b = ins[1]
	}
	type level struct{ size, so, sa, sb int }
	var outer, inner []level
	contractions := 1
	for _, ax := range p.Axes.List() {
		so, inO := strideOf(out, ax.Name)
		sa, inA := strideOf(a, ax.Name)
		sb, inB := strideOf(b, ax.Name)
		if !inO && !inA && !inB || ax.Size == 1 {
			if !inO && (inA || inB) {
				contractions *= ax.Size
			}
			continue
		}
		l := level{ax.Size, so, sa, sb}
		if inO {
			outer = append(outer, l)
		} else {
			contractions *= ax.Size
			inner = append(inner, l)
		}
	}
	// The contracted axes with the smallest combined stride innermost.
	sort.SliceStable(inner, func(i, j int) bool { return inner[i].sa+inner[i].sb > inner[j].sa+inner[j].sb })
	e := &Expected{Out: out}
	if len(ins) == 2 {
		e.Depth, e.Ops = contractions, 2*contractions-1
	} else {
		e.Depth, e.Ops = contractions-1, contractions-1
	}
	var abs []float64
	if !isInt {
		e.Abs = &Logical{Name: "|" + out.Name + "|", DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
		abs = e.Abs.Vals
	}
	var ai, bi []int64
	if isInt {
		ai, bi = toInt(a.Vals), toInt(b.Vals)
	}
	one1 := func(o int, coord []int) {
		ia, ib := 0, 0
		for _, l := range outer {
			c := o / l.so % l.size
			ia, ib = ia+c*l.sa, ib+c*l.sb
		}
		clear(coord)
		var s, t float64
		var si int64
		for {
			if isInt {
				si += ai[ia] * bi[ib]
			} else {
				pr := a.Vals[ia] * b.Vals[ib]
				s += pr
				t += math.Abs(pr)
			}
			k := len(inner) - 1
			for ; k >= 0; k-- {
				l := inner[k]
				coord[k]++
				ia, ib = ia+l.sa, ib+l.sb
				if coord[k] < l.size {
					break
				}
				coord[k] = 0
				ia, ib = ia-l.size*l.sa, ib-l.size*l.sb
			}
			if k < 0 {
				break
			}
		}
		if isInt {
			out.Vals[o] = float64(wrap(si, uint(out.DType.Bits())))
		} else {
			out.Vals[o], abs[o] = s, t
		}
	}
	n := len(out.Vals)
	w := min(runtime.GOMAXPROCS(0), max(1, n))
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			coord := make([]int, len(inner))
			for o := n * k / w; o < n*(k+1)/w; o++ {
				if need[o] {
					one1(o, coord)
				}
			}
		})
	}
	wg.Wait()
	return e
}

// parallel runs f over disjoint ranges of the nest's outermost level when
// it is an output axis (distinct coordinates write distinct elements), on
// up to GOMAXPROCS goroutines.
func parallel(n nest, f func(lo, hi int)) {
	if len(n.size) == 0 {
		f(0, 1)
		return
	}
	total := n.size[0]
	w := runtime.GOMAXPROCS(0)
	if n.so[0] == 0 || w < 2 || total < 2 {
		f(0, total)
		return
	}
	if w > total {
		w = total
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		lo, hi := total*k/w, total*(k+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

func toInt(vs []float64) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = int64(v)
	}
	return out
}

// wrapInto stores acc, wrapped to out's integer dtype, into out.Vals.
func wrapInto(out *Logical, acc []int64) {
	bits := uint(out.DType.Bits())
	for i, v := range acc {
		out.Vals[i] = float64(wrap(v, bits))
	}
}

// wrap reduces v modulo 2^bits into the two's-complement range of a signed
// bits-wide integer.
func wrap(v int64, bits uint) int64 {
	if bits >= 64 {
		return v
	}
	sh := 64 - bits
	return v << sh >> sh
}

// runFloat runs the nest with the outermost level restricted to [lo, hi):
// out[o] += a·b and abs[o] += |a·b| over every point.
func (n *nest) runFloat(lo, hi int, out, abs, a, b []float64) {
	if len(n.size) == 0 {
		pr := a[0] * b[0]
		out[0] += pr
		abs[0] += math.Abs(pr)
		return
	}
	for x := lo; x < hi; x++ {
		n.floatLevel(1, x*n.so[0], x*n.sa[0], x*n.sb[0], out, abs, a, b)
	}
}

func (n *nest) floatLevel(l, io, ia, ib int, out, abs, a, b []float64) {
	if l == len(n.size) {
		pr := a[ia] * b[ib]
		out[io] += pr
		abs[io] += math.Abs(pr)
		return
	}
	size, so, sa, sb := n.size[l], n.so[l], n.sa[l], n.sb[l]
	if l < len(n.size)-1 {
		for x := 0; x < size; x++ {
			n.floatLevel(l+1, io, ia, ib, out, abs, a, b)
			io, ia, ib = io+so, ia+sa, ib+sb
		}
		return
	}
	if so == 0 {
		s, t := 0.0, 0.0
		for x := 0; x < size; x++ {
			pr := a[ia] * b[ib]
			s += pr
			t += math.Abs(pr)
			ia, ib = ia+sa, ib+sb
		}
		out[io] += s
		abs[io] += t
		return
	}
	for x := 0; x < size; x++ {
		pr := a[ia] * b[ib]
		out[io] += pr
		abs[io] += math.Abs(pr)
		io, ia, ib = io+so, ia+sa, ib+sb
	}
}

// runInt is runFloat in wrapping int64 arithmetic (Go's signed overflow
// wraps), without magnitudes.
func (n *nest) runInt(lo, hi int, out, a, b []int64) {
	if len(n.size) == 0 {
		out[0] += a[0] * b[0]
		return
	}
	for x := lo; x < hi; x++ {
		n.intLevel(1, x*n.so[0], x*n.sa[0], x*n.sb[0], out, a, b)
	}
}

func (n *nest) intLevel(l, io, ia, ib int, out, a, b []int64) {
	if l == len(n.size) {
		out[io] += a[ia] * b[ib]
		return
	}
	size, so, sa, sb := n.size[l], n.so[l], n.sa[l], n.sb[l]
	if l < len(n.size)-1 {
		for x := 0; x < size; x++ {
			n.intLevel(l+1, io, ia, ib, out, a, b)
			io, ia, ib = io+so, ia+sa, ib+sb
		}
		return
	}
	for x := 0; x < size; x++ {
		out[io] += a[ia] * b[ib]
		io, ia, ib = io+so, ia+sa, ib+sb
	}
}

// add computes Σ ins + scalar elementwise, broadcasting inputs along the
// output axes they lack.
func add(out *Logical, ins []*Logical, scalar float64, isInt bool) (*Expected, error) {
	addends := len(ins)
	if scalar != 0 {
		addends++
	}
	e := &Expected{Out: out, Depth: addends - 1, Ops: addends - 1}
	var si int64
	if isInt {
		if scalar != math.Trunc(scalar) || math.Abs(scalar) > 1<<62 {
			return nil, fmt.Errorf("reference: add: scalar %v is not an integer for the %s output", scalar, out.DType)
		}
		si = int64(scalar)
	} else {
		e.Abs = &Logical{Name: "|" + out.Name + "|", DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
	}
	// strides[j][k]: the stride of input j along output axis k.
	strides := make([][]int, len(ins))
	for j, in := range ins {
		for _, a := range out.Axes {
			s, _ := strideOf(in, a.Name)
			strides[j] = append(strides[j], s)
		}
	}
	ints := make([][]int64, len(ins))
	if isInt {
		for j, in := range ins {
			ints[j] = toInt(in.Vals)
		}
	}
	coords := make([]int, len(out.Axes))
	offs := make([]int, len(ins))
	for o := range out.Vals {
		if isInt {
			v := si
			for j := range ins {
				v += ints[j][offs[j]]
			}
			out.Vals[o] = float64(wrap(v, uint(out.DType.Bits())))
		} else {
			v, t := scalar, math.Abs(scalar)
			for j, in := range ins {
				x := in.Vals[offs[j]]
				v += x
				t += math.Abs(x)
			}
			out.Vals[o] = v
			e.Abs.Vals[o] = t
		}
		// Advance the odometer over the output axes, last fastest.
		for k := len(coords) - 1; k >= 0; k-- {
			coords[k]++
			for j := range ins {
				offs[j] += strides[j][k]
			}
			if coords[k] < out.Axes[k].Size {
				break
			}
			for j := range ins {
				offs[j] -= strides[j][k] * coords[k]
			}
			coords[k] = 0
		}
	}
	return e, nil
}

// gather is out = table at the rows index names (kernel.RefGather): the
// table's axes absent from out are the gathered ones (gatherRows). Copies,
// exact (Depth 0, Abs the values' magnitudes).
func gather(out, table, index *Logical, isInt bool) (*Expected, error) {
	outAt := axisPos(out)
	var axes []string
	for _, a := range table.Axes {
		if _, ok := outAt[a.Name]; !ok {
			axes = append(axes, a.Name)
		}
	}
	if err := gatherRows(out, table, index, axes); err != nil {
		return nil, err
	}
	return exact(out, isInt), nil
}

// scatter is out = data at the rows index names (kernel.RefScatter): out's
// axes absent from data are the scattered ones (scatterRows). A copy,
// exact where a row is written (Lo = Hi = the value); the rows no index
// names are unchecked (Lo −∞, Hi +∞: the kernel does not write them).
func scatter(out, data, index *Logical) (*Expected, error) {
	dataAt := axisPos(data)
	var axes []string
	for _, a := range out.Axes {
		if _, ok := dataAt[a.Name]; !ok {
			axes = append(axes, a.Name)
		}
	}
	written, err := scatterRows(out, data, index, axes)
	if err != nil {
		return nil, err
	}
	e := &Expected{Out: out, UncheckedWhy: "rows no index names: the scatter does not write them",
		Lo: &Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))},
		Hi: &Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}}
	for i, v := range out.Vals {
		e.Lo.Vals[i], e.Hi.Vals[i] = v, v
		if !written[i] {
			e.Lo.Vals[i], e.Hi.Vals[i] = math.Inf(-1), math.Inf(1)
		}
	}
	return e, nil
}

// exact is the expectation of a copy: out itself, exact (Depth 0), with
// Abs the values' magnitudes for floats.
func exact(out *Logical, isInt bool) *Expected {
	e := &Expected{Out: out}
	if !isInt {
		e.Abs = &Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
		for i, v := range out.Vals {
			e.Abs.Vals[i] = math.Abs(v)
		}
	}
	return e
}

// updateSlice is out = ins[0] with its last index of axis replaced by
// ins[1] (kernel.RefUpdateSlice): copies, exact (Depth 0, Abs the values'
// magnitudes).
func updateSlice(out *Logical, ins []*Logical, axis string, isInt bool) (*Expected, error) {
	if len(ins) != 2 {
		return nil, fmt.Errorf("want two inputs, the tensor and the slice, not %d", len(ins))
	}
	dest, src := ins[0], ins[1]
	if !sameAxes(dest.Axes, out.Axes) {
		return nil, fmt.Errorf("the tensor %s has axes %s, the output %s", dest.Name, axesString(dest.Axes), axesString(out.Axes))
	}
	p := slices.IndexFunc(out.Axes, func(a mapping.Axis) bool { return a.Name == axis })
	want := slices.Delete(slices.Clone(out.Axes), max(p, 0), max(p, 0)+1)
	if p < 0 {
		// An axis of size 1 is in no mapping: the slice is the whole tensor.
		want = out.Axes
	}
	// The slice's axes, in its own order, at their places in the output.
	at := make([]int, len(src.Axes))
	for j, a := range src.Axes {
		at[j] = slices.Index(want, a)
		if at[j] >= 0 && at[j] >= p && p >= 0 {
			at[j]++
		}
	}
	if len(src.Axes) != len(want) || slices.Contains(at, -1) {
		return nil, fmt.Errorf("the slice %s has axes %s, want the tensor's without %s: %s", src.Name, axesString(src.Axes), axis, axesString(want))
	}
	copy(out.Vals, dest.Vals)
	c := make([]int, len(out.Axes))
	for i := range out.Vals {
		out.Coords(i, c)
		if p >= 0 && c[p] != out.Axes[p].Size-1 {
			continue
		}
		so := 0
		for j, a := range src.Axes {
			so = so*a.Size + c[at[j]]
		}
		out.Vals[i] = src.Vals[so]
	}
	return exact(out, isInt), nil
}
