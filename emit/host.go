package emit

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// hostDoc documents the host program's API choices in the emitted file.
// The manual's host programs (002 L187-198, L258-268, L321-331, L417-431)
// create inputs with HostTensor::rand, move them with to_hbm, launch the
// kernel and read the output back with to_host, but compare nothing.
var hostDoc = map[API]string{
	Visa01: `/// Runs the kernel once on random inputs drawn from seed and checks its output
/// against the host oracle.
///
/// Host API of furiosa-visa-std 0.1.0 beyond the manual's examples, which compare
/// nothing: HostTensor::to_buf(&self) -> Vec<Opt<D>> returns the elements in the
/// mapping's buffer order (position p of m![I, J] holds i = p / |J|, j = p % |J|);
/// the library's float types convert with f32::from, its integer types with
/// i32::from (memory_tensor.rs, scalar.rs).`,
	Opt06: `/// Runs the kernel once on random inputs drawn from seed and checks its output
/// against the host oracle.
///
/// Host API of furiosa-opt-std 0.6.0 beyond the manual's examples, which compare
/// nothing: HostTensor::into_vec(self) -> Vec<D> returns the elements in the
/// mapping's buffer order (position p of m![I, J] holds i = p / |J|, j = p % |J|);
/// the library's float types convert with f32::from, its integer types with
/// i32::from (tensor/memory.rs, scalar.rs).`,
}

// host writes the host program: run, main and the test, then the oracle and
// its checks.
func (w *rustWriter) host() error {
	p, k := w.p, w.k
	names := map[string]string{}
	claim := func(name, what string) error {
		if prev, ok := names[name]; ok {
			return fmt.Errorf("the host program names both %s and %s %q", prev, what, name)
		}
		names[name] = what
		return nil
	}
	for _, n := range []string{"ctx", "rng", "want", "seed"} {
		names[n] = "its own local"
	}
	for _, t := range k.inputs {
		if err := claim(t.Name, "input"); err != nil {
			return err
		}
		if err := claim(t.Name+"_hbm", "the device tensor of input "+t.Name); err != nil {
			return err
		}
		if err := w.hostType(t); err != nil {
			return err
		}
	}
	var o *oracle
	if p.Reference != nil && p.Reference.Op != kernel.RefExpr && p.Reference.Epilogue == "" {
		var err error
		if o, err = newOracle(p); err != nil {
			return fmt.Errorf("host oracle: %w", err)
		}
	}
	outName := ""
	if k.output != nil {
		outName = k.output.Name
		if o == nil {
			outName = "_" + outName
		}
		if err := claim(outName, "output"); err != nil {
			return err
		}
		if err := claim(k.output.Name+"_hbm", "the device tensor of output "+k.output.Name); err != nil {
			return err
		}
		if err := w.hostType(k.output); err != nil {
			return err
		}
	}

	for _, l := range strings.Split(hostDoc[w.api], "\n") {
		w.line("%s", l)
	}
	w.line("async fn run(seed: u64) {")
	if w.api == Opt06 {
		// context.rs: bind the kernel's device before any host I/O.
		w.line("    let mut ctx = Context::acquire().bind(kernel.device());")
	} else {
		w.line("    let mut ctx = Context::acquire();")
	}
	w.line("    let mut rng = SmallRng::seed_from_u64(seed);")
	for _, t := range k.inputs {
		w.line("    let %s = HostTensor::<%s, m![%s]>::rand(&mut rng);", t.Name, t.DType, w.mapSpelling(hostMap(t), false))
	}
	var args []string
	for _, t := range k.inputs {
		// The argument the kernel updates in place is lent mutably.
		mut, ref := "", "&"
		if t == k.inPlace {
			mut, ref = "mut ", "&mut "
		}
		if w.api == Opt06 {
			w.line("    let %s%s_hbm = %s.to_hbm(&mut ctx.pdma).await;", mut, t.Name, t.Name)
		} else {
			w.line("    let %s%s_hbm = %s.to_hbm(&mut ctx.pdma, %s).await;", mut, t.Name, t.Name, addrText(t.Addr, true))
		}
		args = append(args, ref+t.Name+"_hbm")
	}
	launch := fmt.Sprintf("launch(kernel, (&mut ctx%s)).await;", strings.Join(append([]string{""}, args...), ", "))
	switch {
	case k.output == nil:
		w.line("    %s", launch)
	case k.inPlace != nil:
		// The result is the argument's device tensor after the kernel.
		w.line("    %s", launch)
		w.line("    let %s = %s_hbm.to_host::<m![%s]>(&mut ctx.pdma).await;", outName, k.inPlace.Name, w.mapSpelling(hostMap(k.output), false))
	default:
		w.line("    let %s_hbm = %s", k.output.Name, launch)
		w.line("    let %s = %s_hbm.to_host::<m![%s]>(&mut ctx.pdma).await;", outName, k.output.Name, w.mapSpelling(hostMap(k.output), false))
	}
	if o != nil {
		o.call(w)
	} else {
		if p.Reference != nil {
			// An expression reference's bound, and an epilogue's, is
			// verify's interval arithmetic (verify/refexpr.go), which the
			// host has no oracle for.
			w.line("    // The reference %s is checked by `tcpmap verify`, not on the host.", referenceText(p.Reference))
		} else {
			w.line("    // The kernel program states no reference: nothing to compare with.")
		}
	}
	w.line("}")
	w.line("")
	w.line("#[tokio::main]")
	w.line("async fn main() {")
	w.line("    run(42).await;")
	w.line("}")
	w.line("")
	w.line("#[cfg(test)]")
	w.line("mod tests {")
	w.line("    /// The kernel agrees with the host oracle on inputs from several seeds.")
	w.line("    #[tokio::test]")
	w.line("    async fn kernel_matches_host_oracle() {")
	w.line("        for seed in [42, 7, 2024] {")
	w.line("            super::run(seed).await;")
	w.line("        }")
	w.line("    }")
	w.line("}")
	if o != nil {
		w.line("")
		o.write(w)
	}
	return nil
}

// hostMap is a tensor's host layout: its chip and element mappings as one
// buffer (the manual's `HostTensor::<i32, m![A]>` for
// `HbmTensor<i32, Chip, m![A]>` with Chip = m![1], 002 L192, L200).
func hostMap(t *kernel.Tensor) *mapping.Expr {
	return mapping.Pair(t.Chip, t.Element)
}

// oracle is the host oracle of a program's Reference: plain Rust loops over
// the axes, reading each tensor at the buffer position its host layout gives
// the index.
type oracle struct {
	ref    *kernel.Reference
	ins    []*kernel.Tensor
	out    *kernel.Tensor
	isInt  bool
	axes   []mapping.Axis // the loop nest, in declaration order
	vars   map[string]string
	pos    map[string]string // tensor name → position expression
	depth  int               // roundings per element before the output cast
	unit   float64           // the output type's unit roundoff
	scalar string
	// pinned is an update_slice's condition on the loop variables for the
	// slice's positions (`s == 7`).
	pinned string
}

func newOracle(p *kernel.Program) (*oracle, error) {
	r := p.Reference
	o := &oracle{ref: r, vars: map[string]string{}, pos: map[string]string{}}
	o.out, _ = p.Tensor(r.Output)
	for _, name := range r.Inputs {
		t, _ := p.Tensor(name)
		o.ins = append(o.ins, t)
	}
	o.isInt = o.out.DType.IsInt()
	for _, t := range append(append([]*kernel.Tensor(nil), o.ins...), o.out) {
		if t.DType.IsInt() != o.isInt || !t.DType.IsInt() && !t.DType.IsFloat() {
			return nil, fmt.Errorf("tensor %q is %s and output %q is %s: the inputs and the output must all be integers or all floats",
				t.Name, t.DType, o.out.Name, o.out.DType)
		}
	}
	switch r.Op {
	case kernel.RefEinsum, kernel.RefMul:
		if len(o.ins) > 2 {
			return nil, fmt.Errorf("%s of %d inputs: the Contraction Engine multiplies two operands (002 L4385-4391)", r.Op, len(o.ins))
		}
	}
	// The loop nest: every axis of a reference tensor, in declaration order.
	used := map[string]bool{}
	for _, t := range append(append([]*kernel.Tensor(nil), o.ins...), o.out) {
		for _, s := range hostMap(t).Symbols() {
			used[s] = true
		}
	}
	taken := map[string]bool{"out": true, "t": true, "e": true, "v": true, "abs": true}
	for _, k := range rustKeywords {
		taken[k] = true
	}
	for _, t := range o.ins {
		taken[t.Name] = true
	}
	outAxes := map[string]bool{}
	for _, s := range hostMap(o.out).Symbols() {
		outAxes[s] = true
	}
	contracted := 1
	for _, ax := range p.Axes.List() {
		if !used[ax.Name] {
			continue
		}
		for _, s := range p.Axes.Skews() {
			if s.Name == ax.Name {
				return nil, fmt.Errorf("axis %s is skewed: the host oracle handles plain axes only", ax.Name)
			}
		}
		if !outAxes[ax.Name] {
			if r.Op != kernel.RefEinsum {
				return nil, fmt.Errorf("%s: input axis %s is not an output axis (an elementwise op does not reduce)", r.Op, ax.Name)
			}
			contracted *= ax.Size
		}
		v := strings.ToLower(ax.Name)
		for taken[v] {
			v += "_"
		}
		taken[v] = true
		o.vars[ax.Name] = v
		o.axes = append(o.axes, ax)
	}
	for _, t := range append(append([]*kernel.Tensor(nil), o.ins...), o.out) {
		pe, err := o.position(t)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		o.pos[t.Name] = pe
	}
	// Roundings per element (the n of γ_n; verify.Expected.Depth).
	switch r.Op {
	case kernel.RefEinsum:
		o.depth = contracted
		if len(o.ins) == 1 {
			o.depth = contracted - 1
		}
	case kernel.RefMul:
		o.depth = len(o.ins) - 1
	case kernel.RefAdd:
		o.depth = len(o.ins) - 1
		if r.Scalar != 0 {
			o.depth++
		}
	case kernel.RefUpdateSlice:
		// Copies: no rounding. The pinned index of the axis.
		v, ok := o.vars[r.Axis]
		if len(o.ins) != 2 || !ok {
			return nil, fmt.Errorf("update_slice of %d inputs along %s: want the tensor and the slice, along one of the output's axes", len(o.ins), r.Axis)
		}
		n, _ := p.Axes.Size(r.Axis)
		o.pinned = fmt.Sprintf("%s == %d", v, n-1)
	}
	if r.Scalar != 0 {
		if math.IsNaN(r.Scalar) || math.IsInf(r.Scalar, 0) {
			return nil, fmt.Errorf("scalar %v is not a number the oracle can add", r.Scalar)
		}
		if o.isInt {
			if r.Scalar != math.Trunc(r.Scalar) || math.Abs(r.Scalar) > 1<<62 {
				return nil, fmt.Errorf("scalar %v added to integers is not an integer", r.Scalar)
			}
			o.scalar = strconv.FormatInt(int64(r.Scalar), 10)
		} else {
			o.scalar = floatLit(r.Scalar)
		}
	}
	if !o.isInt {
		o.unit = unitRoundoff(o.out.DType)
	}
	return o, nil
}

// floatLit prints v as a Rust f64 literal.
func floatLit(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// unitRoundoff is the largest relative error of rounding a real to d: the
// distance from 1 to the next value of d (derived from dtype.Round, not
// tabulated), a conservative bound for round-to-nearest.
func unitRoundoff(d dtype.DType) float64 {
	for k := 1; k < 60; k++ {
		x := 1 + math.Ldexp(1, -k)
		if dtype.Round(x, d) != x {
			return math.Ldexp(1, -(k - 1))
		}
	}
	return math.Ldexp(1, -52)
}

// position is the Rust expression of the buffer position of an index in a
// tensor's host layout: for each factor of the factorized mapping
// (mapping.Factorize) that steps an axis, the digit of the axis' loop
// variable times the factor's cumulative extent. The layout must hold every
// coordinate of each of its axes exactly once (a mixed radix per axis);
// broadcast digits read digit 0 and padding adds extent only.
func (o *oracle) position(t *kernel.Tensor) (string, error) {
	e := hostMap(t)
	fs, err := mapping.Factorize(e)
	if err != nil {
		return "", fmt.Errorf("host layout m![%s]: %w", e, err)
	}
	ext := fs.Extents()
	type term struct {
		f     mapping.Factor
		below int
	}
	byAxis := map[string][]term{}
	var order []string
	below := 1
	for i, f := range fs {
		if f.Kind == mapping.FactorTerm {
			if _, ok := byAxis[f.Axis]; !ok {
				order = append(order, f.Axis)
			}
			byAxis[f.Axis] = append(byAxis[f.Axis], term{f, below})
		}
		below = ext[i]
	}
	var parts []string
	for j := len(order) - 1; j >= 0; j-- {
		ax := order[j]
		ts := byAxis[ax]
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].f.Stride < ts[j].f.Stride })
		stride := 1
		for _, x := range ts {
			if x.f.Stride != stride {
				return "", fmt.Errorf("host layout m![%s] does not hold every coordinate of %s once", e, ax)
			}
			stride *= x.f.Extent
		}
		if stride < ts[0].f.AxisSize {
			return "", fmt.Errorf("host layout m![%s] holds %d of the %d coordinates of %s", e, stride, ts[0].f.AxisSize, ax)
		}
		v, ok := o.vars[ax]
		if !ok {
			return "", fmt.Errorf("axis %s is not in the loop nest", ax)
		}
		for i := len(ts) - 1; i >= 0; i-- {
			x := ts[i]
			d := v
			if x.f.Stride > 1 {
				d += " / " + strconv.Itoa(x.f.Stride)
			}
			if x.f.Stride*x.f.Extent < x.f.AxisSize {
				d += " % " + strconv.Itoa(x.f.Extent)
			}
			if x.below > 1 {
				if strings.Contains(d, " ") {
					d = "(" + d + ")"
				}
				d += " * " + strconv.Itoa(x.below)
			}
			parts = append(parts, d)
		}
	}
	if len(parts) == 0 {
		return "0", nil
	}
	return strings.Join(parts, " + "), nil
}

// hostTypes are the element types a host program can draw at random
// (rand's StandardUniform samples i8, i16, i32 and f32; furiosa-visa-std
// adds bf16 and f8e4m3, furiosa-opt-std 0.6.0 also f8e5m2; scalar.rs) and
// read back as f64 or i64 through the library's conversions (f32::from,
// i32::from).
var hostTypes = map[API][]dtype.DType{
	Visa01: {dtype.I8, dtype.I16, dtype.I32, dtype.F32, dtype.BF16, dtype.F8E4M3},
	Opt06:  {dtype.I8, dtype.I16, dtype.I32, dtype.F32, dtype.BF16, dtype.F8E4M3, dtype.F8E5M2},
}

// hostType refuses a kernel argument or result the host program cannot
// create with HostTensor::rand or compare.
func (w *rustWriter) hostType(t *kernel.Tensor) error {
	if !slices.Contains(hostTypes[w.api], t.DType) {
		return fmt.Errorf("host tensor %q: %s has no random %s host tensors (HostTensor::rand needs StandardUniform: Distribution<%s>)",
			t.Name, w.api.Library(), t.DType, t.DType)
	}
	return nil
}

// hostVec is the call that reads a host tensor's elements: to_buf() (a
// Vec<Opt<D>>, furiosa-visa-std 0.1.0) or into_vec() (a Vec<D>, 0.6.0).
func (w *rustWriter) hostVec() string {
	if w.api == Opt06 {
		return "into_vec()"
	}
	return "to_buf()"
}

// call writes the oracle's use in run.
func (o *oracle) call(w *rustWriter) {
	conv := "floats"
	if o.isInt {
		conv = "ints"
	}
	var args []string
	for _, t := range o.ins {
		args = append(args, fmt.Sprintf("&%s(&%s.%s)", conv, t.Name, w.hostVec()))
	}
	w.line("    let want = oracle(%s);", strings.Join(args, ", "))
	if o.isInt {
		w.line("    check_ints(&ints(&%s.%s), &want);", o.out.Name, w.hostVec())
	} else {
		w.line("    check_floats(&floats(&%s.%s), &want, %d.0, %s);", o.out.Name, w.hostVec(), o.depth, floatLit(o.unit))
	}
}

// write writes the oracle and the checks.
func (o *oracle) write(w *rustWriter) {
	r := o.ref
	elem, zero, in := "(f64, f64)", "(0.0, 0.0)", "f64"
	if o.isInt {
		elem, zero, in = "i64", "0i64", "i64"
	}
	var params []string
	for _, t := range o.ins {
		params = append(params, fmt.Sprintf("%s: &[%s]", t.Name, in))
	}
	// The doc comment states the computation.
	var what string
	switch r.Op {
	case kernel.RefEinsum:
		what = fmt.Sprintf("the einsum %s: the sum, over the axes %s lacks, of the product of the inputs", o.signature(), r.Output)
	case kernel.RefMul:
		what = fmt.Sprintf("the elementwise product %s", o.signature())
	case kernel.RefAdd:
		what = fmt.Sprintf("the elementwise sum %s", o.signature())
		if o.scalar != "" {
			what += " plus " + o.scalar
		}
	case kernel.RefUpdateSlice:
		what = fmt.Sprintf("%s with its last %s replaced by %s (an update_slice, in place)", o.ins[0].Name, r.Axis, o.ins[1].Name)
	}
	w.line("/// The host oracle: %s.", what)
	if o.isInt {
		w.line("/// Integer arithmetic wraps to the output's %d bits, as the hardware's does.", o.out.DType.Bits())
		w.line("/// None marks positions of the output that hold padding.")
	} else {
		w.line("/// Computed in f64; each element holds (value, sum of |term|) for the error bound.")
		w.line("/// None marks positions of the output that hold padding.")
	}
	w.line("fn oracle(%s) -> Vec<Option<%s>> {", strings.Join(params, ", "), elem)
	w.line("    let mut out = vec![None; %d];", hostMap(o.out).Size())
	indent := "    "
	for _, ax := range o.axes {
		w.line("%sfor %s in 0..%d {", indent, o.vars[ax.Name], ax.Size)
		indent += "    "
	}
	var operands []string
	for _, t := range o.ins {
		operands = append(operands, fmt.Sprintf("%s[%s]", t.Name, o.pos[t.Name]))
	}
	var expr string
	switch {
	case r.Op == kernel.RefUpdateSlice:
		expr = fmt.Sprintf("if %s { %s } else { %s }", o.pinned, operands[1], operands[0])
	case r.Op == kernel.RefAdd && o.isInt:
		expr = operands[0]
		for _, x := range operands[1:] {
			expr += ".wrapping_add(" + x + ")"
		}
		if o.scalar != "" {
			expr += ".wrapping_add(" + o.scalar + ")"
		}
	case r.Op == kernel.RefAdd:
		expr = strings.Join(operands, " + ")
		if o.scalar != "" {
			expr += " + " + o.scalar
		}
	case o.isInt:
		expr = operands[0]
		for _, x := range operands[1:] {
			expr += ".wrapping_mul(" + x + ")"
		}
	default:
		expr = strings.Join(operands, " * ")
	}
	w.line("%slet t = %s;", indent, expr)
	if !o.isInt {
		abs := "t.abs()"
		if r.Op == kernel.RefAdd {
			var as []string
			for _, x := range operands {
				as = append(as, x+".abs()")
			}
			if o.scalar != "" {
				as = append(as, floatLit(math.Abs(r.Scalar)))
			}
			abs = strings.Join(as, " + ")
		}
		w.line("%slet e = out[%s].get_or_insert(%s);", indent, o.pos[o.out.Name], zero)
		w.line("%se.0 += t;", indent)
		w.line("%se.1 += %s;", indent, abs)
	} else {
		w.line("%slet e = out[%s].get_or_insert(%s);", indent, o.pos[o.out.Name], zero)
		w.line("%s*e = (*e).wrapping_add(t);", indent)
	}
	for i := len(o.axes) - 1; i >= 0; i-- {
		indent = indent[4:]
		w.line("%s}", indent)
	}
	if o.isInt {
		w.line("    out.into_iter().map(|e| e.map(wrap)).collect()")
	} else {
		w.line("    out")
	}
	w.line("}")
	w.line("")
	if o.isInt {
		bits := o.out.DType.Bits()
		w.line("/// Wraps v to the output type's %d bits (two's complement).", bits)
		w.line("fn wrap(v: i64) -> i64 {")
		if o.out.DType.Signed() {
			w.line("    (v << %d) >> %d", 64-bits, 64-bits)
		} else {
			w.line("    v & ((1i64 << %d) - 1)", bits)
		}
		w.line("}")
		w.line("")
		if w.api == Opt06 {
			w.line("/// The elements of a host tensor as i64.")
			w.line("fn ints<T: Copy>(v: &[T]) -> Vec<i64>")
			w.line("where")
			w.line("    i32: From<T>,")
			w.line("{")
			w.line("    v.iter().map(|&x| i64::from(i32::from(x))).collect()")
			w.line("}")
		} else {
			w.line("/// The elements of a host tensor as i64; an uninitialized element reads i64::MIN,")
			w.line("/// which no wrapped value equals.")
			w.line("fn ints<T: Copy>(v: &[Opt<T>]) -> Vec<i64>")
			w.line("where")
			w.line("    i32: From<T>,")
			w.line("{")
			w.line("    v.iter()")
			w.line("        .map(|x| match *x {")
			w.line("            Opt::Init(x) => i64::from(i32::from(x)),")
			w.line("            Opt::Uninit => i64::MIN,")
			w.line("        })")
			w.line("        .collect()")
			w.line("}")
		}
		w.line("")
		w.line("/// Checks an integer output against the oracle: exact equality.")
		w.line("fn check_ints(got: &[i64], want: &[Option<i64>]) {")
		w.line("    assert_eq!(got.len(), want.len(), \"output length\");")
		w.line("    for (p, w) in want.iter().enumerate() {")
		w.line("        if let Some(v) = *w {")
		w.line("            assert_eq!(got[p], v, \"element {p}\");")
		w.line("        }")
		w.line("    }")
		w.line("}")
		return
	}
	if w.api == Opt06 {
		w.line("/// The elements of a host tensor as f64.")
		w.line("fn floats<T: Copy>(v: &[T]) -> Vec<f64>")
		w.line("where")
		w.line("    f32: From<T>,")
		w.line("{")
		w.line("    v.iter().map(|&x| f64::from(f32::from(x))).collect()")
		w.line("}")
	} else {
		w.line("/// The elements of a host tensor as f64; an uninitialized element reads NaN,")
		w.line("/// which no check accepts.")
		w.line("fn floats<T: Copy>(v: &[Opt<T>]) -> Vec<f64>")
		w.line("where")
		w.line("    f32: From<T>,")
		w.line("{")
		w.line("    v.iter()")
		w.line("        .map(|x| match *x {")
		w.line("            Opt::Init(x) => f64::from(f32::from(x)),")
		w.line("            Opt::Uninit => f64::NAN,")
		w.line("        })")
		w.line("        .collect()")
		w.line("}")
	}
	w.line("")
	w.line("/// Checks a float output against the oracle. An element may differ by the")
	w.line("/// rounding of depth f32 operations (gamma_depth times the sum of |term|,")
	w.line("/// u = 2^-24), one smallest normal f32 per operation for underflow, and the")
	w.line("/// rounding to the output type (unit times |value|).")
	w.line("fn check_floats(got: &[f64], want: &[Option<(f64, f64)>], depth: f64, unit: f64) {")
	w.line("    assert_eq!(got.len(), want.len(), \"output length\");")
	w.line("    let u = f64::from(f32::EPSILON) / 2.0;")
	w.line("    let gamma = depth * u / (1.0 - depth * u);")
	w.line("    for (p, w) in want.iter().enumerate() {")
	w.line("        if let Some((v, abs)) = *w {")
	w.line("            let tol = gamma * abs + depth * f64::from(f32::MIN_POSITIVE) + unit * v.abs();")
	w.line("            let err = (got[p] - v).abs();")
	w.line("            assert!(err <= tol, \"element {p}: got {}, want {v} within {tol}\", got[p]);")
	w.line("        }")
	w.line("    }")
	w.line("}")
}

// signature prints the reference as `lhs[A], rhs[A] -> out[]`.
func (o *oracle) signature() string {
	var ins []string
	for _, t := range o.ins {
		ins = append(ins, fmt.Sprintf("%s[%s]", t.Name, strings.Join(hostMap(t).Symbols(), ", ")))
	}
	return fmt.Sprintf("%s -> %s[%s]", strings.Join(ins, ", "), o.out.Name, strings.Join(hostMap(o.out).Symbols(), ", "))
}
