package verify

import (
	"fmt"
	"math"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The reference of an expression kernel (kernel.RefExpr): the expression
// is evaluated over the inputs in interval arithmetic, so that each output
// element gets the range [Lo, Hi] every computation the hardware may do
// lands in, and a point value Out (the float64 evaluation) to report
// errors against. The bound is honest about what the manual leaves open
// (docs/spec-decisions.md "Vector Engine transcendental functions",
// "Expression references"):
//
//   - every f32 operation (+, −, ×, ÷, a conversion to f32, a constant)
//     rounds to nearest: its result lies within u = 2^-24 relative of the
//     exact one, plus one smallest normal f32 (2^-126) in case it
//     underflows, with or without gradual underflow (Higham §2.2);
//   - exp, sqrt, tanh, sigmoid, erf, log, sin, cos are within 1 ulp of f32
//     (2^-23 relative) of the exact function, plus 2^-126 — the simulator's
//     are within half an ulp (engines/vector_alu.go);
//   - a sum of n terms, in whatever order the hardware's tree and
//     accumulators take, errs by at most γ_{n−1} Σ|t_i| plus n − 1 times
//     2^-126 (Higham §4.2);
//   - max, min, negation and abs are exact; bf16() rounds to nearest,
//     which is monotone (the interval's ends rounded); integer arithmetic wraps in i32
//     (AddFxp, SubFxp, MulInt, 002 L4826-4833), sat_add and sat_sub clamp,
//     round() rounds half away from zero and saturates (FpToFxp);
//   - the bit ops (the branchless top-k's packing, 002 L8543-8590) are
//     exact on exact operands: an element whose interval is one value (a
//     point: its ends and its point evaluation the same float64, a zero's
//     sign included). bits() of a point is the f32's bit pattern; of a
//     wider interval, or of NaN (whose bits the manual leaves open), it is
//     unchecked. from_bits() of a point is the f32 with those bits (a
//     subnormal kept, not flushed); of a wider interval, or a NaN pattern,
//     unchecked. bit_and, bit_or, bit_xor and shr of two points are the
//     i32 result; of wider intervals the bound is what the operands' signs
//     give — bit_and: [0, hi] of a nonnegative operand, [minI32, min(hi)]
//     of two negative ones; bit_or: [max(lo), 2^k − 1] of two nonnegative
//     ones below 2^k, [max(lo), −1] when one is negative; bit_xor: [0,
//     2^k − 1] of two nonnegative ones; shr, monotone in its operand, its
//     ends shifted — and otherwise the whole i32 range; an unchecked
//     operand makes the result unchecked. shr takes its shift unsigned: b
//     < 0 or b ≥ 32 shifts by 31.
//
// An interval that crosses a pole or a domain edge (a division by an
// interval holding 0, sqrt or log of one holding negative values) makes
// the element unchecked (Lo = −∞, Hi = +∞: any value, NaN included).

const (
	// uOp is f32's unit roundoff, with slack for the float64 arithmetic
	// that evaluates the bound.
	uOp = 0x1p-24 + 0x1p-50
	// uFn is the transcendental functions' relative bound: 1 ulp of f32.
	uFn = 0x1p-23 + 0x1p-50
	// eta is the absolute error an underflowing f32 operation may add.
	eta = 0x1p-126
)

// itv is a tensor of intervals over axes (in the program's declaration
// order): at position i the value lies in [lo[i], hi[i]], mid[i] is the
// float64 point evaluation. isInt marks i32 values (exact integers).
type itv struct {
	axes        []mapping.Axis
	isInt       bool
	mid, lo, hi []float64
}

func newItv(axes []mapping.Axis, isInt bool) *itv {
	n := 1
	for _, a := range axes {
		n *= a.Size
	}
	return &itv{axes: axes, isInt: isInt, mid: make([]float64, n), lo: make([]float64, n), hi: make([]float64, n)}
}

// exprEval evaluates a reference expression.
type exprEval struct {
	p      *kernel.Program
	inputs map[string]*Logical
	// given are inputs known as intervals (an epilogue's acc).
	given map[string]*itv
	order map[string]int // axis → declaration index
}

// refExpr computes the Expected output of an expr reference.
func refExpr(p *kernel.Program, r *kernel.Reference, inputs map[string]*Logical) (*Expected, error) {
	outT, _ := p.Tensor(r.Output)
	out, err := NewLogical(p, outT)
	if err != nil {
		return nil, err
	}
	n, err := kernel.ParseRefExpr(r.Expr)
	if err != nil {
		return nil, err
	}
	e := &exprEval{p: p, inputs: map[string]*Logical{}, order: map[string]int{}}
	for i, a := range p.Axes.List() {
		e.order[a.Name] = i
	}
	for _, name := range r.Inputs {
		t, ok := p.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("unknown input tensor %q", name)
		}
		in, err := checkInput(p, name, inputs[name], t.DType.IsInt())
		if err != nil {
			return nil, err
		}
		e.inputs[name] = in
	}
	v, err := e.eval(n)
	if err != nil {
		return nil, err
	}
	if v.isInt != outT.DType.IsInt() {
		return nil, fmt.Errorf("the expression is %s, the output %q is %s", kindName(v.isInt), outT.Name, outT.DType)
	}
	for _, a := range v.axes {
		if _, ok := strideOf(out, a.Name); !ok {
			return nil, fmt.Errorf("the expression keeps axis %s, which the output %q lacks: reduce it", a.Name, outT.Name)
		}
	}
	idx := bcastIndex(out.Axes, v.axes)
	lo, hi := &Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))},
		&Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
	for i, j := range idx {
		out.Vals[i], lo.Vals[i], hi.Vals[i] = v.mid[j], v.lo[j], v.hi[j]
	}
	return &Expected{Out: out, Lo: lo, Hi: hi}, nil
}

// epilogue applies an einsum reference's Epilogue to its Expected value:
// the einsum lies, before any rounding, within Compare's bound of each
// element (the interval [r − E, r + E]); the epilogue is evaluated over
// that interval as an expression reference is, so the result carries the
// einsum's error and the epilogue's own (each f32 op and function within
// the bounds above); ops holds its tensor operands' values, exact.
func epilogue(p *kernel.Program, r *kernel.Reference, x *Expected, ops map[string]*Logical) (*Expected, error) {
	if x.Abs == nil {
		return nil, fmt.Errorf("an epilogue of an integer einsum")
	}
	n, err := kernel.ParseRefExpr(r.Epilogue)
	if err != nil {
		return nil, fmt.Errorf("epilogue: %w", err)
	}
	acc := newItv(x.Out.Axes, false)
	g := (gamma(x.Depth, uF32) + gamma(x.Depth, uF64)) / (1 - gamma(x.Depth, uF64))
	under := float64(x.Ops) * etaF32
	for i, v := range x.Out.Vals {
		acc.mid[i], acc.lo[i], acc.hi[i] = v, v, v
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		d := (g*x.Abs.Vals[i] + under) * (1 + 0x1p-50)
		acc.lo[i], acc.hi[i] = math.Nextafter(v-d, math.Inf(-1)), math.Nextafter(v+d, math.Inf(1))
	}
	e := &exprEval{p: p, inputs: ops, given: map[string]*itv{kernel.EpilogueInput: acc}, order: map[string]int{}}
	for i, a := range p.Axes.List() {
		e.order[a.Name] = i
	}
	v, err := e.eval(n)
	if err != nil {
		return nil, fmt.Errorf("epilogue: %w", err)
	}
	if v.isInt {
		return nil, fmt.Errorf("epilogue: an integer expression")
	}
	out := x.Out
	idx := bcastIndex(out.Axes, v.axes)
	res := &Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
	lo, hi := &Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))},
		&Logical{Name: out.Name, DType: out.DType, Axes: out.Axes, Vals: make([]float64, len(out.Vals))}
	for i, j := range idx {
		res.Vals[i], lo.Vals[i], hi.Vals[i] = v.mid[j], v.lo[j], v.hi[j]
	}
	return &Expected{Out: res, Lo: lo, Hi: hi}, nil
}

func kindName(isInt bool) string {
	if isInt {
		return "an integer"
	}
	return "a real"
}

// union is the axes of a and b, in declaration order.
func (e *exprEval) union(a, b []mapping.Axis) []mapping.Axis {
	seen := map[string]bool{}
	var all []mapping.Axis
	for _, x := range append(append([]mapping.Axis(nil), a...), b...) {
		if !seen[x.Name] {
			seen[x.Name] = true
			all = append(all, x)
		}
	}
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && e.order[all[j].Name] < e.order[all[j-1].Name]; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	return all
}

// bcastIndex maps each position of a tensor over res to the position of a
// tensor over sub (sub's axes a subset of res's, both in declaration
// order) holding the same coordinates on sub's axes.
func bcastIndex(res, sub []mapping.Axis) []int {
	n := 1
	for _, a := range res {
		n *= a.Size
	}
	stride := make([]int, len(res))
	s := 1
	for i := len(sub) - 1; i >= 0; i-- {
		for k, a := range res {
			if a.Name == sub[i].Name {
				stride[k] = s
			}
		}
		s *= sub[i].Size
	}
	out := make([]int, n)
	coord := make([]int, len(res))
	off := 0
	for i := 0; i < n; i++ {
		out[i] = off
		for k := len(res) - 1; k >= 0; k-- {
			coord[k]++
			off += stride[k]
			if coord[k] < res[k].Size {
				break
			}
			off -= coord[k] * stride[k]
			coord[k] = 0
		}
	}
	return out
}

// widen widens a real interval by one f32 rounding (relative u) and an
// underflow. An infinite end stays: an f32 operation on −∞ (a causal
// mask's, workload.Values) gives −∞ exactly, and widening it by
// u·|−∞| would make it NaN.
func widen(lo, hi, u float64) (float64, float64) {
	if !math.IsInf(lo, 0) {
		lo = lo - u*math.Abs(lo) - eta
	}
	if !math.IsInf(hi, 0) {
		hi = hi + u*math.Abs(hi) + eta
	}
	return lo, hi
}

func (e *exprEval) errAt(n *kernel.RefNode, format string, args ...any) error {
	return fmt.Errorf("reference expression: column %d: %s", n.Pos+1, fmt.Sprintf(format, args...))
}

func (e *exprEval) eval(n *kernel.RefNode) (*itv, error) {
	switch n.Op {
	case "num":
		v := newItv(nil, n.Int)
		v.mid[0], v.lo[0], v.hi[0] = n.Num, n.Num, n.Num
		if !n.Int {
			// The kernel's constant is the f32 nearest the literal.
			v.mid[0] = float64(float32(n.Num))
			v.lo[0], v.hi[0] = widen(n.Num, n.Num, uOp)
		}
		return v, nil
	case "input":
		if v, ok := e.given[n.Name]; ok {
			return v, nil
		}
		in, ok := e.inputs[n.Name]
		if !ok {
			return nil, e.errAt(n, "%q is not an input", n.Name)
		}
		v := newItv(in.Axes, in.DType.IsInt())
		copy(v.mid, in.Vals)
		copy(v.lo, in.Vals)
		copy(v.hi, in.Vals)
		return v, nil
	}
	if kernel.IsRefReduce(n.Op) {
		return e.reduce(n)
	}
	if n.Op == "at" {
		return e.at(n)
	}
	var args []*itv
	for _, a := range n.Args {
		v, err := e.eval(a)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	if len(args) == 1 {
		return e.unary(n, args[0])
	}
	return e.binary(n, args[0], args[1])
}

// i32 range.
const (
	minI32 = -1 << 31
	maxI32 = 1<<31 - 1
)

// wrapItv wraps an integer interval into i32: the whole range when its
// ends wrap differently.
func wrapItv(lo, hi float64) (float64, float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) || hi-lo >= 1<<32 {
		return minI32, maxI32
	}
	w := func(v float64) float64 {
		m := math.Mod(v-minI32, 1<<32)
		if m < 0 {
			m += 1 << 32
		}
		return m + minI32
	}
	a, b := w(lo), w(hi)
	if a > b {
		return minI32, maxI32
	}
	return a, b
}

func wrap1(v float64) float64 { a, _ := wrapItv(v, v); return a }

func clampI32(v float64) float64 { return math.Max(minI32, math.Min(maxI32, v)) }

func (e *exprEval) unary(n *kernel.RefNode, a *itv) (*itv, error) {
	switch n.Op {
	case "neg":
		v := newItv(a.axes, a.isInt)
		for i := range a.mid {
			if a.isInt {
				v.mid[i] = wrap1(-a.mid[i])
				v.lo[i], v.hi[i] = wrapItv(-a.hi[i], -a.lo[i])
			} else {
				v.mid[i], v.lo[i], v.hi[i] = -a.mid[i], -a.hi[i], -a.lo[i]
			}
		}
		return v, nil
	case "float":
		if !a.isInt {
			return nil, e.errAt(n, "float() takes an integer")
		}
		v := newItv(a.axes, false)
		for i := range a.mid {
			// FxpToFp rounds the integer to f32 (002 L4838).
			v.mid[i] = float64(float32(a.mid[i]))
			v.lo[i], v.hi[i] = widen(a.lo[i], a.hi[i], uOp)
		}
		return v, nil
	case "round":
		if a.isInt {
			return nil, e.errAt(n, "round() takes a real")
		}
		v := newItv(a.axes, true)
		r := func(x float64) float64 {
			if math.IsNaN(x) {
				return maxI32
			}
			return clampI32(math.Round(x))
		}
		for i := range a.mid {
			v.mid[i] = r(a.mid[i])
			if math.IsNaN(a.lo[i]) || math.IsNaN(a.hi[i]) || math.IsInf(a.lo[i], -1) && math.IsInf(a.hi[i], 1) {
				v.lo[i], v.hi[i] = minI32, maxI32
				continue
			}
			v.lo[i], v.hi[i] = r(a.lo[i]), r(a.hi[i])
		}
		return v, nil
	case "bf16":
		if a.isInt {
			return nil, e.errAt(n, "bf16() takes a real")
		}
		// Rounding to nearest is monotone: the stored value of x in
		// [lo, hi] lies in [round(lo), round(hi)].
		v := newItv(a.axes, false)
		for i := range a.mid {
			v.mid[i] = dtype.Round(a.mid[i], dtype.BF16)
			v.lo[i], v.hi[i] = dtype.Round(a.lo[i], dtype.BF16), dtype.Round(a.hi[i], dtype.BF16)
		}
		return v, nil
	case "bits":
		if a.isInt {
			return nil, e.errAt(n, "bits() takes a real")
		}
		v := newItv(a.axes, true)
		for i := range a.mid {
			f := float32(dtype.Round(a.mid[i], dtype.F32))
			v.mid[i] = float64(int32(math.Float32bits(f)))
			v.lo[i], v.hi[i] = v.mid[i], v.mid[i]
			if !realPoint(a, i) || math.IsNaN(a.mid[i]) || float64(f) != a.mid[i] {
				v.lo[i], v.hi[i] = math.Inf(-1), math.Inf(1) // unchecked
			}
		}
		return v, nil
	case "from_bits":
		if !a.isInt {
			return nil, e.errAt(n, "from_bits() takes an integer")
		}
		v := newItv(a.axes, false)
		for i := range a.mid {
			f := float64(math.Float32frombits(uint32(i32Of(a.mid[i]))))
			v.mid[i], v.lo[i], v.hi[i] = f, f, f
			if !intPoint(a, i) || math.IsNaN(f) {
				v.lo[i], v.hi[i] = math.Inf(-1), math.Inf(1) // unchecked
			}
		}
		return v, nil
	case "abs":
		v := newItv(a.axes, a.isInt)
		for i := range a.mid {
			lo, hi := a.lo[i], a.hi[i]
			switch {
			case lo >= 0:
			case hi <= 0:
				lo, hi = -hi, -lo
			default:
				lo, hi = 0, math.Max(-lo, hi)
			}
			v.mid[i], v.lo[i], v.hi[i] = math.Abs(a.mid[i]), lo, hi
			if a.isInt {
				v.mid[i] = wrap1(v.mid[i])
				v.lo[i], v.hi[i] = wrapItv(lo, hi)
			}
		}
		return v, nil
	}
	if a.isInt {
		return nil, e.errAt(n, "%s takes a real: convert with float()", n.Op)
	}
	v := newItv(a.axes, false)
	var f func(float64) float64
	domain := math.Inf(-1) // the function's domain starts here (inclusive)
	switch n.Op {
	case "exp":
		f = math.Exp
	case "tanh":
		f = math.Tanh
	case "erf":
		f = math.Erf
	case "sigmoid":
		f = func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case "sqrt":
		f, domain = math.Sqrt, 0
	case "log":
		f, domain = math.Log, 0
	case "sin", "cos":
		for i := range a.mid {
			v.mid[i] = fnOf(n.Op)(a.mid[i])
			lo, hi := trigRange(n.Op, a.lo[i], a.hi[i])
			v.lo[i], v.hi[i] = widen(lo, hi, uFn)
		}
		return v, nil
	default:
		return nil, e.errAt(n, "%s takes two arguments", n.Op)
	}
	for i := range a.mid {
		v.mid[i] = f(a.mid[i])
		lo, hi := a.lo[i], a.hi[i]
		switch {
		case math.IsNaN(lo) || math.IsNaN(hi):
			v.lo[i], v.hi[i] = math.NaN(), math.NaN()
		case hi < domain:
			v.mid[i], v.lo[i], v.hi[i] = math.NaN(), math.NaN(), math.NaN() // exactly NaN
		case lo < domain:
			v.lo[i], v.hi[i] = math.Inf(-1), math.Inf(1) // unchecked
		default:
			v.lo[i], v.hi[i] = widen(f(lo), f(hi), uFn)
		}
	}
	return v, nil
}

func fnOf(op string) func(float64) float64 {
	if op == "sin" {
		return math.Sin
	}
	return math.Cos
}

// trigRange is the range of sin or cos over [lo, hi].
func trigRange(op string, lo, hi float64) (float64, float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || hi-lo >= 2*math.Pi {
		return -1, 1
	}
	f := fnOf(op)
	a, b := math.Min(f(lo), f(hi)), math.Max(f(lo), f(hi))
	// Extremes at the critical points kπ/2 (sin: π/2 + kπ; cos: kπ).
	off := 0.0
	if op == "sin" {
		off = math.Pi / 2
	}
	for k := math.Ceil((lo - off) / math.Pi); off+k*math.Pi <= hi; k++ {
		x := f(off + k*math.Pi)
		a, b = math.Min(a, x), math.Max(b, x)
	}
	return math.Max(a-1e-15, -1), math.Min(b+1e-15, 1)
}

func (e *exprEval) binary(n *kernel.RefNode, a, b *itv) (*itv, error) {
	if a.isInt != b.isInt {
		return nil, e.errAt(n, "%s of an integer and a real: convert with float() or round()", n.Op)
	}
	bitOp := n.Op == "bit_and" || n.Op == "bit_or" || n.Op == "bit_xor" || n.Op == "shr"
	if bitOp && !a.isInt {
		return nil, e.errAt(n, "%s takes integers", n.Op)
	}
	axes := e.union(a.axes, b.axes)
	ia, ib := bcastIndex(axes, a.axes), bcastIndex(axes, b.axes)
	v := newItv(axes, a.isInt)
	for i := range v.mid {
		x, y := ia[i], ib[i]
		al, ah, bl, bh := a.lo[x], a.hi[x], b.lo[y], b.hi[y]
		var m, lo, hi float64
		if bitOp {
			m = bitOf(n.Op, a.mid[x], b.mid[y])
			switch {
			case intPoint(a, x) && intPoint(b, y):
				lo, hi = m, m
			case !finite(al, ah, bl, bh):
				lo, hi = math.Inf(-1), math.Inf(1) // unchecked
			default:
				lo, hi = bitRange(n.Op, al, ah, bl, bh)
			}
			v.mid[i], v.lo[i], v.hi[i] = m, lo, hi
			continue
		}
		switch n.Op {
		case "+", "sat_add":
			m, lo, hi = a.mid[x]+b.mid[y], al+bl, ah+bh
		case "-", "sat_sub":
			m, lo, hi = a.mid[x]-b.mid[y], al-bh, ah-bl
		case "*":
			m = a.mid[x] * b.mid[y]
			if a.isInt {
				// Exact: a float64 holds no product past 2^53, and the
				// wrapped low 32 bits are what MulInt keeps.
				m = float64(int32(int64(a.mid[x]) * int64(b.mid[y])))
			}
			lo, hi = prodRange(al, ah, bl, bh)
			if a.isInt && al == ah && bl == bh {
				lo, hi = m, m // exact operands, an exact product
			}
		case "/":
			if a.isInt {
				return nil, e.errAt(n, "integer division is no Vector Engine op")
			}
			m = a.mid[x] / b.mid[y]
			if bl <= 0 && bh >= 0 {
				lo, hi = math.Inf(-1), math.Inf(1)
			} else {
				lo, hi = prodRange(al, ah, 1/bh, 1/bl)
				lo, hi = lo-math.Abs(lo)*0x1p-50, hi+math.Abs(hi)*0x1p-50 // 1/b rounds in float64
			}
		case "max":
			m, lo, hi = math.Max(a.mid[x], b.mid[y]), math.Max(al, bl), math.Max(ah, bh)
		case "min":
			m, lo, hi = math.Min(a.mid[x], b.mid[y]), math.Min(al, bl), math.Min(ah, bh)
		default:
			return nil, e.errAt(n, "%s takes one argument", n.Op)
		}
		switch {
		case !a.isInt && (n.Op == "max" || n.Op == "min"):
		case !a.isInt && (n.Op == "sat_add" || n.Op == "sat_sub"):
			return nil, e.errAt(n, "%s takes integers", n.Op)
		case !a.isInt:
			m = float64(float32(m))
			if !(math.IsInf(lo, -1) && math.IsInf(hi, 1)) {
				lo, hi = widen(lo, hi, uOp)
			}
		case n.Op == "sat_add" || n.Op == "sat_sub":
			m, lo, hi = clampI32(m), clampI32(lo), clampI32(hi)
		case n.Op == "max" || n.Op == "min":
		default:
			m = wrap1(m)
			lo, hi = wrapItv(lo, hi)
		}
		v.mid[i], v.lo[i], v.hi[i] = m, lo, hi
	}
	return v, nil
}

// realPoint reports whether element i of a real interval is one value:
// its ends and its point evaluation the same float64, a zero's sign
// included.
func realPoint(v *itv, i int) bool {
	b := math.Float64bits(v.mid[i])
	return math.Float64bits(v.lo[i]) == b && math.Float64bits(v.hi[i]) == b
}

// intPoint reports whether element i of an integer interval is one value.
func intPoint(v *itv, i int) bool { return v.lo[i] == v.mid[i] && v.hi[i] == v.mid[i] }

// finite reports whether every value is finite (an unchecked interval's
// ends are not).
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// shrAmount is shr's shift of b bits: b taken unsigned, 31 at most.
func shrAmount(b int64) uint {
	if b < 0 || b > 31 {
		return 31
	}
	return uint(b)
}

// bitOf is bit_and, bit_or, bit_xor or shr of two i32 values.
func bitOf(op string, a, b float64) float64 {
	x, y := i32Of(a), i32Of(b)
	switch op {
	case "bit_and":
		return float64(x & y)
	case "bit_or":
		return float64(x | y)
	case "bit_xor":
		return float64(x ^ y)
	}
	return float64(x >> shrAmount(int64(y)))
}

// below2k is 2^k − 1 for the least k with v < 2^k (v ≥ 0): every value
// of at most v's bits.
func below2k(v float64) float64 {
	m := 1.0
	for m <= v {
		m *= 2
	}
	return m - 1
}

// bitRange bounds a bit op over a in [al, ah] and b in [bl, bh] (finite
// i32 intervals) by the operands' signs; the whole i32 range otherwise.
func bitRange(op string, al, ah, bl, bh float64) (float64, float64) {
	switch op {
	case "bit_and":
		switch {
		case al >= 0 && bl >= 0:
			return 0, math.Min(ah, bh) // a & b ≤ a, b
		case al >= 0:
			return 0, ah
		case bl >= 0:
			return 0, bh
		case ah < 0 && bh < 0:
			return minI32, math.Min(ah, bh) // negative, and below both
		}
	case "bit_or":
		switch {
		case al >= 0 && bl >= 0:
			return math.Max(al, bl), below2k(math.Max(ah, bh))
		case ah < 0 && bh < 0:
			return math.Max(al, bl), -1
		case ah < 0:
			return al, -1 // negative, and at least a
		case bh < 0:
			return bl, -1
		}
	case "bit_xor":
		if al >= 0 && bl >= 0 {
			return 0, below2k(math.Max(ah, bh))
		}
	case "shr":
		// a >> s grows with a; with s it falls for a ≥ 0 and grows for
		// a < 0: the extremes lie at the corners.
		var s0, s1 uint
		switch {
		case bh < 0:
			s0, s1 = 31, 31
		case bl < 0:
			s0, s1 = 0, 31
		default:
			s0, s1 = shrAmount(int64(bl)), shrAmount(int64(bh))
		}
		lo, hi := int32(al), int32(ah)
		return float64(min(lo>>s0, lo>>s1)), float64(max(hi>>s0, hi>>s1))
	}
	return minI32, maxI32
}

// prodRange is the range of x·y over x in [al, ah], y in [bl, bh].
func prodRange(al, ah, bl, bh float64) (float64, float64) {
	ps := [4]float64{al * bl, al * bh, ah * bl, ah * bh}
	lo, hi := ps[0], ps[0]
	for _, p := range ps[1:] {
		if math.IsNaN(p) {
			return math.Inf(-1), math.Inf(1) // 0 × ∞
		}
		lo, hi = math.Min(lo, p), math.Max(hi, p)
	}
	return lo, hi
}

// reduce evaluates reduce_sum/max/min over an axis.
func (e *exprEval) reduce(n *kernel.RefNode) (*itv, error) {
	a, err := e.eval(n.Args[0])
	if err != nil {
		return nil, err
	}
	k := -1
	var keep []mapping.Axis
	for i, ax := range a.axes {
		if ax.Name == n.Name {
			k = i
			continue
		}
		keep = append(keep, ax)
	}
	if k < 0 {
		return nil, e.errAt(n, "%s over %s: the operand has no axis %s", n.Op, n.Name, n.Name)
	}
	size := a.axes[k].Size
	inner := 1
	for _, ax := range a.axes[k+1:] {
		inner *= ax.Size
	}
	v := newItv(keep, a.isInt)
	g := gamma(size-1, uOp)
	for o := range v.mid {
		outer, in := o/inner, o%inner
		base := outer*size*inner + in
		var m, lo, hi, mag float64
		switch n.Op {
		case "reduce_max":
			m, lo, hi = math.Inf(-1), math.Inf(-1), math.Inf(-1)
		case "reduce_min":
			m, lo, hi = math.Inf(1), math.Inf(1), math.Inf(1)
		}
		for r := 0; r < size; r++ {
			j := base + r*inner
			switch n.Op {
			case "reduce_sum":
				m += a.mid[j]
				lo += a.lo[j]
				hi += a.hi[j]
				mag += math.Max(math.Abs(a.lo[j]), math.Abs(a.hi[j]))
			case "reduce_max":
				m, lo, hi = math.Max(m, a.mid[j]), math.Max(lo, a.lo[j]), math.Max(hi, a.hi[j])
			case "reduce_min":
				m, lo, hi = math.Min(m, a.mid[j]), math.Min(lo, a.lo[j]), math.Min(hi, a.hi[j])
			default:
				return nil, e.errAt(n, "unknown reduction %s", n.Op)
			}
		}
		if n.Op == "reduce_sum" {
			switch {
			case a.isInt && mag <= maxI32:
				// No partial sum leaves i32: AddSat (002 L5394) adds exactly.
			case a.isInt:
				lo, hi = minI32, maxI32 // saturation depends on the order
				m = clampI32(m)
			case !(math.IsInf(lo, -1) && math.IsInf(hi, 1)):
				m = float64(float32(m))
				d := g*mag + float64(size-1)*eta
				lo, hi = lo-d, hi+d
			}
		}
		v.mid[o], v.lo[o], v.hi[o] = m, lo, hi
	}
	return v, nil
}

// roundOut rounds a bound to the output dtype outward.
func roundOut(v float64, d dtype.DType, up bool) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	dir := math.Inf(-1)
	if up {
		dir = math.Inf(1)
	}
	return dtype.Round(math.Nextafter(v, dir), d)
}

// at evaluates at(e, AXIS, k): e's values at coordinate k of the axis.
func (e *exprEval) at(n *kernel.RefNode) (*itv, error) {
	a, err := e.eval(n.Args[0])
	if err != nil {
		return nil, err
	}
	k := -1
	var keep []mapping.Axis
	for i, ax := range a.axes {
		if ax.Name == n.Name {
			k = i
			continue
		}
		keep = append(keep, ax)
	}
	if k < 0 {
		return nil, e.errAt(n, "at over %s: the operand has no axis %s", n.Name, n.Name)
	}
	c := int(n.Num)
	if c < 0 || c >= a.axes[k].Size {
		return nil, e.errAt(n, "coordinate %d of %s, which has %d", c, n.Name, a.axes[k].Size)
	}
	inner := 1
	for _, ax := range a.axes[k+1:] {
		inner *= ax.Size
	}
	size := a.axes[k].Size
	v := newItv(keep, a.isInt)
	for o := range v.mid {
		j := (o/inner)*size*inner + c*inner + o%inner
		v.mid[o], v.lo[o], v.hi[o] = a.mid[j], a.lo[j], a.hi[j]
	}
	return v, nil
}
