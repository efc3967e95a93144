package emit

import (
	"sort"
	"strconv"
	"strings"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Reading the loop form of a tiled kernel (loop.go): the loop's body is
// read with the statements of a straight-line kernel, each op taking the
// level of the `if` around it, into a kernel.TileLoop; finish unrolls it
// (kernel.TileLoop.Unroll) once the host program has given the HBM
// addresses the tile views offset.

// loopRead is the state of the loop being read.
type loopRead struct {
	off      int
	loopVar  string
	l        *kernel.TileLoop
	vars     map[string]int // index variable → axis
	level    int            // the level of the statements being read
	opsAt    int            // r.prog.Ops and r.interm before the body
	intermAt int
	// parity is the list of the last `[a, b][t / S % m]` address or
	// TrfAddress read, and its stride; nil when the last was plain.
	parity       []int64
	parityModes  []kernel.TrfAddress
	parityStride int
	parityOff    int
	// done is set at the loop's closing brace.
	done bool
}

// pendingDecl parses `let mut x: Type;` before a loop: x is assigned
// inside the loop's `if` blocks.
func (r *reader) pendingDecl(name token, ann *kernel.Tensor) {
	if r.pending == nil {
		r.pending = map[string]*kernel.Tensor{}
	}
	if _, dup := r.pending[name.text]; dup || r.vars[name.text] != nil {
		r.fail(name.off, "%s is declared twice", name.text)
		return
	}
	r.pending[name.text] = ann
}

// fromAddr parses `unsafe { HbmTensor::from_addr(ADDR) }` (002 L820) bound
// to the kernel's result.
func (r *reader) fromAddr(name token, ann *kernel.Tensor, annOff int) {
	r.expect("unsafe")
	r.expect("{")
	r.expect("HbmTensor")
	r.expect("::")
	r.expect("from_addr")
	r.expect("(")
	addr := r.constExpr()
	r.expect(")")
	r.expect("}")
	if r.err != nil {
		return
	}
	if r.output == nil || r.output.Name != "" || ann == nil || !sameType(ann, r.output) {
		r.fail(annOff, "HbmTensor::from_addr binds the kernel's result, annotated with the result type")
		return
	}
	if r.names[name.text] {
		r.fail(name.off, "%s is bound twice", name.text)
		return
	}
	r.output.Name = name.text
	r.output.Addr = addr
	r.names[name.text] = true
	r.vars[name.text] = r.output
}

// maxLoopSteps bounds the tiles of a loop the reader unrolls, so that a
// hostile count cannot make it allocate without limit; the planner tiles far
// less (search.DefaultMaxTiles).
const maxLoopSteps = 1 << 12

// forLoop parses `for t in 0..N { index lets; body }`.
func (r *reader) forLoop() {
	start := r.expect("for")
	if r.lp != nil {
		r.fail(start.off, "a kernel has one tile loop")
		return
	}
	v := r.ident()
	r.expect("in")
	zero := r.tok()
	if n, ok := r.intLit(zero); !ok || n != 0 {
		r.fail(zero.off, "a tile loop runs from 0")
		return
	}
	r.next()
	r.expect(".")
	r.expect(".")
	nt := r.tok()
	steps, ok := r.intLit(nt)
	if !ok || steps < 2 || steps > maxLoopSteps {
		r.fail(nt.off, "want the tile count (2 to %d), found %s", maxLoopSteps, describe(nt))
		return
	}
	r.next()
	r.expect("{")
	if r.err != nil {
		return
	}
	lp := &loopRead{off: start.off, loopVar: v.text, l: &kernel.TileLoop{}, vars: map[string]int{},
		opsAt: len(r.prog.Ops), intermAt: len(r.interm)}
	r.lp = lp
	// The index of each axis: let i = t / S % C; outermost first.
	type idx struct {
		stride, count int
		off           int
	}
	var ids []idx
	for r.err == nil && r.is("let") && r.peek(1).kind == tIdent && r.peek(2).text == "=" && r.peek(3).text == v.text {
		r.next()
		name := r.ident()
		r.expect("=")
		r.next() // t
		s, c := 1, 0
		if r.accept("/") {
			s = int(r.constAtom())
		}
		if r.accept("%") {
			c = int(r.constAtom())
		}
		r.expect(";")
		if r.err != nil {
			return
		}
		if _, dup := lp.vars[name.text]; dup || r.vars[name.text] != nil {
			r.fail(name.off, "index %s is declared twice", name.text)
			return
		}
		lp.vars[name.text] = len(ids)
		ids = append(ids, idx{s, c, name.off})
	}
	if len(ids) == 0 {
		r.fail(r.tok().off, "a tile loop starts with the index of each tiled axis (let i = %s / 4;)", v.text)
		return
	}
	// Counts: the outermost from the steps; each stride the product of the
	// counts inside it.
	prod := 1
	for k := len(ids) - 1; k >= 0; k-- {
		c := ids[k].count
		if k == 0 {
			if c != 0 || prod < 1 || int(steps)%prod != 0 {
				r.fail(ids[k].off, "the outermost index is %s / %d", v.text, prod)
				return
			}
			c = int(steps) / prod
		}
		if ids[k].stride != prod || c < 2 {
			r.fail(ids[k].off, "index %d: want %s / %d %% COUNT with COUNT ≥ 2 (the axes inside it take %d steps)", k, v.text, prod, prod)
			return
		}
		lp.l.Axes = append([]kernel.LoopAxis{{Count: c}}, lp.l.Axes...)
		prod *= c
	}
	if prod != int(steps) {
		r.fail(nt.off, "the indices take %d steps, the loop %d", prod, steps)
		return
	}
	n := len(lp.l.Axes)
	lp.level = n
	for r.err == nil && !r.is("}") {
		if r.tok().kind == tEOF {
			r.fail(start.off, "unclosed tile loop")
			return
		}
		if r.is("if") {
			r.loopIf()
			continue
		}
		r.loopStatement()
	}
	r.expect("}")
	for k, a := range lp.l.Axes {
		if a.Dim == nil {
			r.fail(ids[k].off, "no tile view takes index %d", k)
			return
		}
	}
	lp.done = true
}

// loopIf parses `if t % S == 0 { ... }` or `if t == 0 { ... }`: its ops
// fire when the indices of the axes from the level S names on are 0.
func (r *reader) loopIf() {
	lp := r.lp
	at := r.expect("if")
	r.expect(lp.loopVar)
	s := lp.l.Steps()
	if r.accept("%") {
		s = int(r.constAtom())
	}
	r.expect("=")
	r.expect("=")
	z := r.tok()
	if v, ok := r.intLit(z); !ok || v != 0 {
		r.fail(z.off, "want == 0")
		return
	}
	r.next()
	r.expect("{")
	if r.err != nil {
		return
	}
	level := -1
	for lv := 0; lv < len(lp.l.Axes); lv++ {
		if lp.l.Stride(lv) == s {
			level = lv
		}
	}
	if level < 0 {
		r.fail(at.off, "%s %% %d == 0 is no loop level: the levels fire every %s steps", lp.loopVar, s, strides(lp.l))
		return
	}
	lp.level = level
	for r.err == nil && !r.is("}") {
		if r.tok().kind == tEOF {
			r.fail(at.off, "unclosed if")
			return
		}
		r.loopStatement()
	}
	r.expect("}")
	lp.level = len(lp.l.Axes)
}

func strides(l *kernel.TileLoop) string {
	var s []string
	for lv := range len(l.Axes) {
		s = append(s, strconv.Itoa(l.Stride(lv)))
	}
	return strings.Join(s, ", ")
}

// loopStatement parses one statement of the body and records the op it
// adds at the current level.
func (r *reader) loopStatement() {
	lp := r.lp
	ops, interm := len(r.prog.Ops), len(r.interm)
	lp.parity, lp.parityModes = nil, nil
	t := r.tok()
	switch {
	case t.text == "let":
		r.next()
		r.accept("mut")
		name := r.ident()
		r.expect(":")
		if r.is("HbmTensorView") || r.is("HbmTensorViewMut") {
			r.tileView(name)
			return
		}
		annOff := r.tok().off
		ann := r.tensorType()
		r.expect("=")
		if r.err != nil {
			return
		}
		r.expression(name, ann, annOff, false)
		r.expect(";")
	case t.kind == tIdent && r.peek(1).text == "=":
		ann, ok := r.pending[t.text]
		if !ok {
			r.fail(t.off, "%s is assigned but not declared with let mut before the loop", t.text)
			return
		}
		delete(r.pending, t.text)
		r.next()
		r.next()
		r.expression(t, ann, t.off, false)
		r.expect(";")
	case t.kind == tIdent && r.peek(1).text == "." && r.peek(2).text == "to_hbm":
		r.storeTile()
	default:
		r.fail(t.off, "want a let, an assignment, a store or an if in the tile loop, found %s", describe(t))
		return
	}
	if r.err != nil {
		return
	}
	if len(r.prog.Ops) != ops+1 {
		r.fail(t.off, "a statement of the tile loop is one op")
		return
	}
	op := r.prog.Ops[ops]
	lp.l.Body = append(lp.l.Body, &kernel.LoopOp{Op: op, Level: lp.level})
	for _, x := range r.interm[interm:] {
		s := &kernel.LoopSlot{Name: x.Name}
		m := max(len(lp.parity), len(lp.parityModes))
		if m > 0 {
			if lp.parityStride != lp.l.Stride(lp.level) {
				r.fail(lp.parityOff, "the buffer index is %s / %d %% %d: its op fires every %d steps", lp.loopVar, lp.l.Stride(lp.level), m, lp.l.Stride(lp.level))
				return
			}
			for k := range m {
				c := *x
				c.Name = x.Name + strconv.Itoa(k)
				if lp.parity != nil {
					c.Addr = lp.parity[k]
				} else {
					c.TrfAddress = lp.parityModes[k]
				}
				s.Tensors = append(s.Tensors, &c)
			}
		} else {
			s.Tensors = []*kernel.Tensor{x}
		}
		lp.l.Slots = append(lp.l.Slots, s)
	}
}

// tileView parses the rest of `let x_t: HbmTensorView<'_, D, Chip, M> =
// x.view().tile::<m![I / 128], 1, M1>(i)...;` (002 L813-831).
func (r *reader) tileView(name token) {
	lp := r.lp
	typ := r.next()
	r.expect("<")
	if r.tok().kind != tLife {
		r.fail(r.tok().off, "want the view's lifetime '_")
		return
	}
	r.next()
	r.expect(",")
	dt := r.dtypeArg()
	r.expect(",")
	chip := r.mapArg(roleChip)
	r.expect(",")
	elem := r.mapArg(roleNone)
	r.accept(",")
	r.expect(">")
	r.expect("=")
	bt := r.ident()
	if r.err != nil {
		return
	}
	base, ok := r.vars[bt.text]
	if !ok || base.Mem != kernel.HBM || base.Role == kernel.Intermediate {
		r.fail(bt.off, "a tile view is a view of a kernel argument or result, not %s", bt.text)
		return
	}
	want := "view"
	if base.Role == kernel.Output {
		want = "view_mut"
	}
	if (typ.text == "HbmTensorViewMut") != (base.Role == kernel.Output) {
		r.fail(typ.off, "a tile of %s is a%s", bt.text, map[bool]string{true: " HbmTensorViewMut", false: "n HbmTensorView"}[base.Role == kernel.Output])
		return
	}
	r.expect(".")
	r.expect(want)
	r.expect("(")
	r.expect(")")
	v := &kernel.LoopView{Name: name.text, Base: bt.text}
	for r.err == nil && r.accept(".") {
		r.expect("tile")
		r.expect("::")
		r.expect("<")
		dimOff := r.tok().off
		dim := r.mapArg(roleNone)
		r.expect(",")
		one := r.tok()
		if x, ok := r.intLit(one); !ok || x != 1 {
			r.fail(one.off, "a tile loop takes tiles of 1")
			return
		}
		r.next()
		r.expect(",")
		m := r.mapArg(roleNone)
		r.expect(">")
		r.expect("(")
		iv := r.ident()
		r.expect(")")
		if r.err != nil {
			return
		}
		k, ok := lp.vars[iv.text]
		if !ok {
			r.fail(iv.off, "%s is no index of the loop", iv.text)
			return
		}
		if len(v.Axes) > 0 && k <= v.Axes[len(v.Axes)-1] {
			r.fail(iv.off, "the tiles of a view follow the loop's order of axes")
			return
		}
		ax := &lp.l.Axes[k]
		fs, err := mapping.Factorize(dim)
		if err != nil || len(fs) != 1 || fs[0].Kind != mapping.FactorTerm {
			r.fail(dimOff, "the tile dimension is one axis's digit")
			return
		}
		want := mapping.Sym(fs[0].Axis, fs[0].AxisSize)
		if fs[0].AxisSize/ax.Count > 1 {
			want = want.Div(fs[0].AxisSize / ax.Count)
		}
		if fs[0].AxisSize%ax.Count != 0 || !want.Equal(dim) {
			r.fail(dimOff, "index %s counts %d tiles: its dimension is %s", iv.text, ax.Count, want.Text())
			return
		}
		if ax.Dim != nil && !ax.Dim.Equal(want) {
			r.fail(dimOff, "index %s tiles %s elsewhere", iv.text, ax.Dim.Text())
			return
		}
		ax.Name, ax.Dim = fs[0].Axis, want
		v.Axes = append(v.Axes, k)
		v.Maps = append(v.Maps, m)
	}
	r.expect(";")
	if r.err != nil {
		return
	}
	if len(v.Maps) == 0 || !v.Maps[len(v.Maps)-1].Equal(elem) || dt != base.DType || !chip.Equal(base.Chip) {
		r.fail(name.off, "the view's type is its tensor's, with the last tile's mapping")
		return
	}
	if r.vars[name.text] != nil {
		r.fail(name.off, "%s is bound twice", name.text)
		return
	}
	lp.l.Views = append(lp.l.Views, v)
	r.vars[name.text] = &kernel.Tensor{Name: name.text, Mem: kernel.HBM, DType: base.DType, Role: kernel.Intermediate,
		Chip: base.Chip, Element: elem, View: base.Name}
}

// storeTile parses `x_dm.to_hbm(&mut ctx.tdma, &mut out_t);`.
func (r *reader) storeTile() {
	st := r.ident()
	r.expect(".")
	r.expect("to_hbm")
	r.expect("(")
	r.expect("&")
	r.expect("mut")
	r.expect(r.ctxName)
	r.expect(".")
	r.expect("tdma")
	r.expect(",")
	r.expect("&")
	r.expect("mut")
	vt := r.ident()
	r.expect(")")
	r.expect(";")
	if r.err != nil {
		return
	}
	src, ok := r.vars[st.text]
	if !ok || src.Mem != kernel.DM {
		r.fail(st.off, "to_hbm stores a DM tensor, not %s", st.text)
		return
	}
	if r.lp.l.View(vt.text) == nil {
		r.fail(vt.off, "%s is no tile view", vt.text)
		return
	}
	r.prog.Ops = append(r.prog.Ops, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToHBM, Src: src.Name, Dst: vt.text})
}

// parityAddr parses `[a, b, ...][t / S % m]` in the loop: it returns the
// first address and records the list.
func (r *reader) parityAddr() int64 {
	lp := r.lp
	r.expect("[")
	var vals []int64
	for r.err == nil {
		vals = append(vals, r.constExpr())
		if !r.accept(",") {
			break
		}
	}
	r.expect("]")
	r.parityIndex(len(vals))
	if r.err != nil || len(vals) == 0 {
		return 0
	}
	lp.parity = vals
	return vals[0]
}

// parityIndex parses `[t / S % m]`, m the list's length.
func (r *reader) parityIndex(m int) {
	lp := r.lp
	lp.parityOff = r.tok().off
	r.expect("[")
	r.expect(lp.loopVar)
	lp.parityStride = 1
	if r.accept("/") {
		lp.parityStride = int(r.constAtom())
	}
	r.expect("%")
	at := r.tok()
	if v := r.constAtom(); r.err == nil && int(v) != m {
		r.fail(at.off, "the index takes %d buffers modulo %d", m, v)
	}
	r.expect("]")
}

// parityModes parses the text of `[TrfAddress::FirstHalf,
// TrfAddress::SecondHalf][t / S % 2]` as rawArgs gave it.
func (r *reader) parityTrf(text string, off int) (kernel.TrfAddress, bool) {
	lp := r.lp
	list, idx, ok := strings.Cut(strings.TrimPrefix(text, "["), "]")
	if !ok {
		r.fail(off, "want [TrfAddress::..., ...][%s / S %% 2]", lp.loopVar)
		return "", false
	}
	var modes []kernel.TrfAddress
	for _, s := range strings.Split(list, ",") {
		m, err := kernel.ParseTrfAddress(strings.TrimSpace(s))
		if err != nil {
			r.fail(off, "%v", err)
			return "", false
		}
		modes = append(modes, m)
	}
	idx = strings.TrimSpace(idx)
	in, ok := strings.CutPrefix(idx, "[")
	in, ok2 := strings.CutSuffix(in, "]")
	if !ok || !ok2 {
		r.fail(off, "want the buffer index [%s / S %% %d]", lp.loopVar, len(modes))
		return "", false
	}
	f := strings.Fields(in)
	stride := 1
	switch {
	case len(f) == 3 && f[0] == lp.loopVar && f[1] == "%":
	case len(f) == 5 && f[0] == lp.loopVar && f[1] == "/" && f[3] == "%":
		s, err := strconv.Atoi(f[2])
		if err != nil {
			r.fail(off, "bad stride %q", f[2])
			return "", false
		}
		stride = s
	default:
		r.fail(off, "want the buffer index [%s / S %% %d]", lp.loopVar, len(modes))
		return "", false
	}
	if m, err := strconv.Atoi(f[len(f)-1]); err != nil || m != len(modes) {
		r.fail(off, "the index takes %d TRF halves modulo %s", len(modes), f[len(f)-1])
		return "", false
	}
	lp.parityModes, lp.parityStride, lp.parityOff = modes, stride, off
	return modes[0], true
}

// unrollLoop replaces the loop's body ops and tensors by its unrolling,
// once the arguments' addresses are known.
func (r *reader) unrollLoop() {
	lp := r.lp
	if lp == nil {
		if names := sortedKeys(r.pending); len(names) > 0 {
			r.fail(0, "%s is declared with let mut and no tile loop assigns it", names[0])
		}
		return
	}
	if !lp.done {
		r.fail(lp.off, "unfinished tile loop")
		return
	}
	if names := sortedKeys(r.pending); len(names) > 0 {
		r.fail(lp.off, "%s is declared before the loop and assigned by none of its statements", names[0])
		return
	}
	args := append([]*kernel.Tensor(nil), r.inputs...)
	if r.output != nil {
		args = append(args, r.output)
	}
	ts, ops, err := lp.l.Unroll(args)
	if err != nil {
		r.fail(lp.off, "tile loop: %v", err)
		return
	}
	for _, s := range lp.l.Slots {
		r.names[s.Name] = false
	}
	tail := append([]*kernel.Op(nil), r.prog.Ops[lp.opsAt+len(lp.l.Body):]...)
	r.prog.Ops = append(append(r.prog.Ops[:lp.opsAt], ops...), tail...)
	itail := append([]*kernel.Tensor(nil), r.interm[lp.intermAt+len(lp.l.Slots):]...)
	r.interm = append(append(r.interm[:lp.intermAt], ts[len(args):]...), itail...)
}

// sortedKeys returns the names of m in order, for deterministic errors.
func sortedKeys(m map[string]*kernel.Tensor) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
