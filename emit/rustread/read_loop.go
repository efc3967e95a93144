package rustread

import (
	"sort"
	"strconv"
	"strings"

	"tcpmap/emit/rustapi"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Reading the loop form of a tiled kernel (loop.go): the loop's body is
// read with the statements of a straight-line kernel, each op taking the
// level, phase and lead of the `if` around it, into a kernel.TileLoop (a
// slot, which a K-chunked loop's running sum is, may be assigned by several
// statements); finish unrolls it (kernel.TileLoop.Unroll) once the host
// program has given the HBM addresses the tile views offset.

// loopRead is the state of the loop being read.
type loopRead struct {
	off     int
	loopVar string
	piped   bool // `0..=N`: a software-pipelined loop
	l       *kernel.TileLoop
	// index is each index variable's axis; scope the variables the
	// statements being read see.
	index map[string]int
	scope map[string]bool
	// The block being read: its ops' level, phase and lead, and the tile
	// they work on ("t", or "t - 1" for the non-lead ops of a pipelined
	// loop).
	level int
	phase kernel.Phase
	lead  bool
	tile  string
	// slots are the slots the body has assigned, by variable, and the
	// variables in the order of their first assignments.
	slots     map[string]*slotRead
	slotOrder []string
	// opsAt and intermAt are len(r.prog.Ops) and len(r.interm) before the
	// body.
	opsAt    int
	intermAt int
	// parity is the list of the last `[a, b][t / S % m]` (or `[t % P / S
	// % m]`) address or TrfAddress read (or place list), its stride,
	// period and tile; nil when the last was plain.
	parity       []int64
	parityModes  []kernel.TrfAddress
	parityStride int
	parityPeriod int
	parityTile   string
	parityOff    int
	// done is set at the loop's closing brace.
	done bool
}

// slotRead is a slot of the loop being read: its declared type, its first
// producing statement's level and tile and where its buffer index was read,
// and how many statements produce it.
type slotRead struct {
	slot      *kernel.LoopSlot
	ann       *kernel.Tensor
	level     int
	tile      string
	off       int
	producers int
}

// memType is the library's type of a tensor in each memory.
var memType = map[kernel.Memory]string{kernel.HBM: "HbmTensor", kernel.DM: "DmTensor", kernel.TRF: "TrfTensor", kernel.VRF: "VrfTensor"}

// handleDecl parses the value of `let mut x: Type = ...;`: a handle of the
// type, `unsafe { DmTensor::from_addr(ADDR) }` (furiosa-visa-std 0.1.0,
// 002 L820) or `DmTensor::new()` (furiosa-opt-std 0.6.0). The first
// HbmTensor of the result's type is the kernel's result, at the address
// given (0.6.0: its place line); any other declares a tensor the tile loop
// assigns, whose handle's address the loop's first assignment replaces and
// which is not read.
func (r *reader) handleDecl(name token, ann *kernel.Tensor, annOff int) {
	if ann == nil {
		r.fail(name.off, "let mut binds the result or declares a tensor the tile loop assigns, with its type")
		return
	}
	if r.lp != nil {
		r.fail(name.off, "let mut in the tile loop: a tensor the loop assigns is declared before it")
		return
	}
	typ := memType[ann.Mem]
	var addr int64
	if r.api == rustapi.Opt06 {
		r.expect(typ)
		r.expect("::")
		r.expect("new")
		r.noArgs()
	} else {
		r.expect("unsafe")
		r.expect("{")
		r.expect(typ)
		r.expect("::")
		r.expect("from_addr")
		r.expect("(")
		if ann.Mem == kernel.TRF {
			r.expect("TrfAddress")
			r.expect("::")
			m := r.ident()
			if _, err := kernel.ParseTrfAddress(m.text); r.err == nil && err != nil {
				r.fail(m.off, "%v", err)
			}
		} else {
			addr = r.constExpr()
		}
		r.expect(")")
		r.expect("}")
	}
	if r.err != nil {
		return
	}
	if ann.Mem == kernel.HBM && r.output != nil && r.output.Name == "" && sameType(ann, r.output) {
		if r.names[name.text] || r.vars[name.text] != nil {
			r.fail(name.off, "%s is bound twice", name.text)
			return
		}
		if r.api == rustapi.Opt06 {
			addr, _ = r.placeOf(name.text, name.off, false)
		}
		r.output.Name = name.text
		r.output.Addr = addr
		r.names[name.text] = true
		r.vars[name.text] = r.output
		return
	}
	if r.pending == nil {
		r.pending = map[string]*kernel.Tensor{}
	}
	if _, dup := r.pending[name.text]; dup || r.vars[name.text] != nil || r.names[name.text] {
		r.fail(name.off, "%s is declared twice", name.text)
		return
	}
	r.pending[name.text] = ann
	r.declared = append(r.declared, name.text)
}

// maxLoopSteps bounds the tiles of a loop the reader unrolls, so that a
// hostile count cannot make it allocate without limit; the planner tiles far
// less (search.DefaultMaxTiles).
const maxLoopSteps = 1 << 12

// indexDef is an index variable's definition `let i = BASE / S % C;`.
type indexDef struct {
	name          string
	base          string // "t" or "t - 1"
	stride, count int    // count 0 for the outermost (no `%`)
	off           int
}

// indexLet parses `let i = t / S % C;` or `let i = (t - 1) / S % C;`.
func (r *reader) indexLet(v string) indexDef {
	r.expect("let")
	name := r.ident()
	r.expect("=")
	d := indexDef{name: name.text, base: r.tileBase(v), stride: 1, off: name.off}
	if r.accept("/") {
		d.stride = int(r.constAtom())
	}
	if r.accept("%") {
		d.count = int(r.constAtom())
	}
	r.expect(";")
	return d
}

// tileBase parses `t`, `(t - 1)` or, alone, `t - 1` (rustapi.TileIndex).
func (r *reader) tileBase(v string) string {
	paren := r.accept("(")
	r.expect(v)
	if !paren && !r.is("-") {
		return v
	}
	r.expect("-")
	one := r.tok()
	if x, ok := r.intLit(one); !ok || x != 1 {
		r.fail(one.off, "want %s - 1", v)
		return ""
	}
	r.next()
	if paren {
		r.expect(")")
	}
	return v + " - 1"
}

// isIndexLet reports whether an index let starts at token k.
func (r *reader) isIndexLet(k int, v string) bool {
	at := func(n int) token {
		if k+n < len(r.toks) {
			return r.toks[k+n]
		}
		return token{kind: tEOF}
	}
	return at(0).text == "let" && at(1).kind == tIdent && at(2).text == "=" &&
		(at(3).text == v || at(3).text == "(" && at(4).text == v)
}

// forLoop parses `for t in 0..N { ... }` or the pipelined `for t in 0..=N
// { ... }` (loop.go).
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
	piped := r.accept("=")
	nt := r.tok()
	steps, ok := r.intLit(nt)
	if !ok || steps < 2 || steps > maxLoopSteps {
		r.fail(nt.off, "want the tile count (2 to %d), found %s", maxLoopSteps, describe(nt))
		return
	}
	r.next()
	if r.err != nil {
		return
	}
	lp := &loopRead{off: start.off, loopVar: v.text, piped: piped, l: &kernel.TileLoop{}, index: map[string]int{},
		scope: map[string]bool{}, opsAt: len(r.prog.Ops), intermAt: len(r.interm), tile: v.text, slots: map[string]*slotRead{}}
	// The axes, from the index lets anywhere in the body: each variable
	// is one axis's index, t / S % C, its stride S the product of the
	// counts of the axes inside it; the outermost has no count.
	open := r.i
	end := r.skipBalanced("{")
	if r.err != nil {
		return
	}
	defs := map[string]indexDef{}
	for k := open + 1; k < end && r.err == nil; k++ {
		if !r.isIndexLet(k, v.text) {
			continue
		}
		r.i = k
		d := r.indexLet(v.text)
		if r.err != nil {
			return
		}
		if old, ok := defs[d.name]; ok && (old.stride != d.stride || old.count != d.count) {
			r.fail(d.off, "index %s is %s / %d %% %d elsewhere", d.name, v.text, old.stride, old.count)
			return
		}
		defs[d.name] = d
	}
	r.i = open
	var ids []indexDef
	for _, d := range defs {
		ids = append(ids, d)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a].stride > ids[b].stride })
	if len(ids) == 0 {
		r.fail(r.tok().off, "a tile loop computes the index of each tiled axis (let i = %s / 4;)", v.text)
		return
	}
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
			r.fail(ids[k].off, "index %s: want %s / %d %% COUNT with COUNT ≥ 2 (the axes inside it take %d steps)", ids[k].name, v.text, prod, prod)
			return
		}
		lp.l.Axes = append([]kernel.LoopAxis{{Count: c}}, lp.l.Axes...)
		prod *= c
	}
	if prod != int(steps) {
		r.fail(nt.off, "the indices take %d steps, the loop %d", prod, steps)
		return
	}
	for k, d := range ids {
		lp.index[d.name] = k
	}
	r.expect("{")
	r.lp = lp
	n := len(lp.l.Axes)
	lp.level = n
	for r.err == nil && !r.is("}") {
		switch {
		case r.tok().kind == tEOF:
			r.fail(start.off, "unclosed tile loop")
			return
		case r.is("if"):
			r.loopIf()
		case piped:
			r.fail(r.tok().off, "a statement of a pipelined loop is in a block that names its tile (if %s < N, if %s >= 1, ...)", v.text, v.text)
			return
		case r.isIndexLet(r.i, v.text):
			r.scopeIndex()
		default:
			r.loopStatement()
		}
	}
	r.expect("}")
	for k, a := range lp.l.Axes {
		if a.Dim == nil {
			r.fail(ids[k].off, "no tile view takes index %s", ids[k].name)
			return
		}
	}
	r.checkSlots()
	lp.done = true
}

// scopeIndex reads an index let of the block being read: its base is the
// block's tile.
func (r *reader) scopeIndex() {
	lp := r.lp
	d := r.indexLet(lp.loopVar)
	if r.err != nil {
		return
	}
	if d.base != lp.tile {
		r.fail(d.off, "the ops of this block work on tile %s: index %s is %s", lp.tile, d.name, rustapi.TileIndex(lp.tile, d.stride, d.count, d.count == 0))
		return
	}
	lp.scope[d.name] = true
}

// condAtom is one comparison of a loop block's condition: BASE [% S] OP K.
type condAtom struct {
	base string
	mod  int // 0 without `%`
	op   string
	k    int64
	off  int
}

// eval is the atom's value at step t; false for ok when its base t - 1
// would underflow at t = 0 (Rust's usize).
func (a condAtom) eval(t int64) (v, ok bool) {
	x := t
	if a.base != "t" {
		if t == 0 {
			return false, false
		}
		x = t - 1
	}
	if a.mod > 0 {
		x %= int64(a.mod)
	}
	switch a.op {
	case "==":
		return x == a.k, true
	case "!=":
		return x != a.k, true
	case "<":
		return x < a.k, true
	case ">=":
		return x >= a.k, true
	}
	return false, false
}

// loopIf parses a block `if COND { ... }` (condText): a conjunction of
// comparisons of the step t (or t - 1) [% S] with ==, !=, < or >= and an
// integer, which must fire at the steps of one level's phase (a lead op's
// at its tiles, another's in a pipelined loop at the steps after them):
// `t == 0` (once), `t % S == 0` (when the indices of the axes of stride
// < S are 0), `t % S == S - 1` (when they are all last), `t % S != 0`,
// `t >= 1 && t < N - 1`; pipelined, a lead block `t == 0`, `t < N` or `t <
// N && t % S == 0`, and a block of tile t - 1 `t == 1`, `t >= 1` or `t >=
// 1 && (t - 1) % S == 0` (and the other phases so). A residue's base is
// the block's tile.
func (r *reader) loopIf() {
	lp := r.lp
	at := r.expect("if")
	var atoms []condAtom
	for r.err == nil {
		a := condAtom{off: r.tok().off}
		a.base = r.tileBase(lp.loopVar)
		if r.accept("%") {
			a.mod = int(r.constAtom())
			if r.err == nil && a.mod < 1 {
				r.fail(a.off, "a residue modulo %d", a.mod)
				return
			}
		}
		switch {
		case r.is("=") && r.peek(1).text == "=":
			a.op = "=="
		case r.is("!") && r.peek(1).text == "=":
			a.op = "!="
		case r.is("<"):
			a.op = "<"
		case r.is(">") && r.peek(1).text == "=":
			a.op = ">="
		default:
			r.fail(r.tok().off, "want ==, !=, < or >=, found %s", describe(r.tok()))
			return
		}
		r.next()
		if a.op != "<" {
			r.next()
		}
		k := r.tok()
		v, ok := r.intLit(k)
		if !ok {
			r.fail(k.off, "want an integer, found %s", describe(k))
			return
		}
		r.next()
		a.k = v
		atoms = append(atoms, a)
		if !(r.is("&") && r.peek(1).text == "&") {
			break
		}
		r.next()
		r.next()
	}
	if r.err != nil {
		return
	}
	level, phase, lead, ok := r.blockOf(atoms)
	if r.err != nil {
		return
	}
	if !ok {
		forms := "t == 0, t % S == 0, t % S == S - 1, t % S != 0 or t >= 1 && t < N"
		if lp.piped {
			forms = "t == 0, t < N, t < N && t % S == 0, t == 1, t >= 1, t >= 1 && (t - 1) % S == 0 or t >= 1 && (t - 1) % S != 0"
		}
		r.fail(at.off, "want the condition of a loop level's phase (%s, S a level's stride: %s)", strings.ReplaceAll(forms, "t", lp.loopVar), strides(lp.l))
		return
	}
	r.expect("{")
	if r.err != nil {
		return
	}
	lp.level, lp.phase, lp.lead = level, phase, lead
	lp.tile = lp.loopVar
	if lp.piped && !lead {
		lp.tile = lp.loopVar + " - 1"
	}
	for _, a := range atoms {
		if a.mod > 0 && a.base != lp.tile {
			r.fail(a.off, "the ops of this block work on tile %s: its residue is %s %% %d", lp.tile, rustapi.TileIndex(lp.tile, 1, 2, true), a.mod)
			return
		}
	}
	outer := lp.scope
	lp.scope = map[string]bool{}
	for k := range outer {
		lp.scope[k] = true
	}
	for r.err == nil && !r.is("}") {
		switch {
		case r.tok().kind == tEOF:
			r.fail(at.off, "unclosed if")
			return
		case r.isIndexLet(r.i, lp.loopVar):
			r.scopeIndex()
		default:
			r.loopStatement()
		}
	}
	r.expect("}")
	lp.level, lp.phase, lp.lead, lp.tile, lp.scope = len(lp.l.Axes), kernel.PhaseFirst, false, lp.loopVar, outer
}

// blockOf classifies a block's condition by the steps it holds at: the
// level, phase and lead whose op fires at exactly those (a lead op at the
// first of its level's tiles only, kernel.Recognize's). No two differ in
// their steps.
func (r *reader) blockOf(atoms []condAtom) (level int, phase kernel.Phase, lead, ok bool) {
	lp := r.lp
	n, steps := len(lp.l.Axes), lp.l.Steps()
	last := steps - 1
	if lp.piped {
		last = steps
	}
	holds := make([]bool, last+1)
	for t := range holds {
		holds[t] = true
		for _, a := range atoms {
			v, ok := a.eval(int64(t))
			if !ok {
				r.fail(a.off, "%s - 1 underflows at %s = 0: guard the block with %s >= 1 first", lp.loopVar, lp.loopVar, lp.loopVar)
				return 0, 0, false, false
			}
			if !v {
				holds[t] = false
				break
			}
		}
	}
	for lv := n; lv >= 0; lv-- {
		for _, ph := range []kernel.Phase{kernel.PhaseFirst, kernel.PhaseLast, kernel.PhaseRest, kernel.PhaseMiddle} {
			for _, ld := range []bool{true, false} {
				if ld && (!lp.piped || ph != kernel.PhaseFirst) {
					continue
				}
				lo := &kernel.LoopOp{Level: lv, Phase: ph, Lead: ld}
				if lp.l.Stride(lv) < ph.MinStride() || !lp.piped && lv == n && ph == kernel.PhaseFirst {
					continue // not a phase of the level; no block
				}
				shift := 0
				if lp.piped && !ld {
					shift = 1
				}
				same := true
				for t := 0; t <= last && same; t++ {
					tile := t - shift
					fires := tile >= 0 && tile < steps && lp.l.Fires(lo, tile)
					same = fires == holds[t]
				}
				if same {
					return lv, ph, ld, true
				}
			}
		}
	}
	return 0, 0, false, false
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
		name := r.ident()
		r.expect(":")
		if r.is("HbmTensorView") || r.is("HbmTensorViewMut") {
			r.tileView(name)
			return
		}
		r.fail(t.off, "a let in the tile loop binds a tile view or an index; the tensors the loop produces are declared before it")
		return
	case t.kind == tIdent && r.peek(1).text == "=" && r.peek(2).text != "=":
		if sr, again := lp.slots[t.text]; again {
			// Another statement producing the slot (a running sum: chunk
			// 0's main chain and the split reduce's passes).
			r.next()
			r.next()
			r.names[t.text] = false
			first := r.vars[t.text]
			r.expression(t, sr.ann, t.off, false)
			r.expect(";")
			if r.err != nil {
				return
			}
			r.reassigned(t, sr, first, ops, interm)
			return
		}
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
	case t.kind == tIdent && r.peek(1).text == "." && r.peek(2).text == "view" && r.peek(5).text == "." && r.peek(6).text == "to_hbm_view":
		r.storeTile()
	default:
		r.fail(t.off, "want an assignment, a store, a tile view, an index or an if in the tile loop, found %s", describe(t))
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
	lp.l.Body = append(lp.l.Body, &kernel.LoopOp{Op: op, Level: lp.level, Lead: lp.lead, Phase: lp.phase})
	for _, x := range r.interm[interm:] {
		s := &kernel.LoopSlot{Name: x.Name}
		m := max(len(lp.parity), len(lp.parityModes))
		if m > 0 {
			if lp.parityTile != lp.tile {
				r.fail(lp.parityOff, "the buffer index is %s: its op works on tile %s", rustapi.TileIndex(lp.tile, lp.l.Stride(lp.level), m, false), lp.tile)
				return
			}
			s.Stride, s.Period = lp.parityStride, lp.parityPeriod
			for k := range m {
				c := *x
				c.Name = kernel.SlotTensorName(x.Name, k, m)
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
		if t.kind == tIdent {
			lp.slots[t.text] = &slotRead{slot: s, ann: x, level: lp.level, tile: lp.tile, off: lp.parityOff, producers: 1}
			lp.slotOrder = append(lp.slotOrder, t.text)
		}
	}
}

// reassigned finishes a statement that produces a slot again: its tensor
// is the slot's (the same type and placement, the same buffers and index),
// and the op names the slot.
func (r *reader) reassigned(v token, sr *slotRead, first *kernel.Tensor, ops, interm int) {
	lp := r.lp
	if len(r.prog.Ops) != ops+1 || len(r.interm) != interm+1 {
		r.fail(v.off, "a statement of the tile loop is one op")
		return
	}
	x := r.interm[interm]
	s := sr.slot
	m := max(len(lp.parity), len(lp.parityModes))
	same := sameType(x, s.Tensors[0]) && m == len(s.Tensors)
	if same && m == 0 {
		same = x.Addr == s.Tensors[0].Addr && x.TrfAddress == s.Tensors[0].TrfAddress
	}
	for k := 0; same && k < m; k++ {
		if lp.parity != nil {
			same = lp.parity[k] == s.Tensors[k].Addr
		} else {
			same = lp.parityModes[k] == s.Tensors[k].TrfAddress
		}
	}
	if same && m > 0 {
		same = lp.parityStride == s.Stride && lp.parityPeriod == s.Period && lp.parityTile == lp.tile
	}
	if !same {
		r.fail(v.off, "%s is produced again with another type, placement or buffer index than its first statement's", v.text)
		return
	}
	r.interm = r.interm[:interm]
	r.vars[v.text] = first
	r.names[v.text] = true
	sr.producers++
	lp.l.Body = append(lp.l.Body, &kernel.LoopOp{Op: r.prog.Ops[ops], Level: lp.level, Lead: lp.lead, Phase: lp.phase})
}

// checkSlots checks each slot's buffer index once the body is read: a
// slot one op produces alternates with its fires (t / S % m, S the stride
// of its level); one that several produce (a running sum), t [% P] / S %
// m with S and P strides of levels.
func (r *reader) checkSlots() {
	lp := r.lp
	for _, v := range lp.slotOrder {
		sr := lp.slots[v]
		s := sr.slot
		m := len(s.Tensors)
		if m < 2 {
			continue
		}
		if sr.producers == 1 {
			if st := lp.l.Stride(sr.level); s.Stride != st || s.Period != 0 {
				r.fail(sr.off, "the buffer index is %s: its op fires every %d steps for tile %s", rustapi.TileIndex(sr.tile, st, m, false), st, sr.tile)
				return
			}
			continue
		}
		isStride := func(x int) bool {
			for lv := range len(lp.l.Axes) + 1 {
				if lp.l.Stride(lv) == x {
					return true
				}
			}
			return false
		}
		if !isStride(s.Stride) || s.Period != 0 && (!isStride(s.Period) || s.Period <= s.Stride) {
			r.fail(sr.off, "the buffer index of %s takes strides of the loop's levels (%s), the period above the stride", s.Name, strides(lp.l))
			return
		}
	}
}

// viewHead parses the rest of a view's type after its name and the
// variable it views: `<'_, D, Chip, M> = x`.
func (r *reader) viewHead() (dt dtype.DType, chip, elem *mapping.Expr, elemOff int, base token) {
	r.expect("<")
	if r.tok().kind != tLife {
		r.fail(r.tok().off, "want the view's lifetime '_")
		return
	}
	r.next()
	r.expect(",")
	dt = r.dtypeArg()
	r.expect(",")
	chip = r.mapArg()
	r.expect(",")
	elemOff = r.tok().off
	elem = r.mapArg()
	r.accept(",")
	r.expect(">")
	r.expect("=")
	base = r.ident()
	return
}

// tileHead parses `tile::<DIM, 1, M>(` up to the tile's index; a LEN
// other than 1 fails with why.
func (r *reader) tileHead(why string) (dim, m *mapping.Expr, dimOff, mOff int) {
	r.expect("tile")
	r.expect("::")
	r.expect("<")
	dimOff = r.tok().off
	dim = r.mapArg()
	r.expect(",")
	if one := r.tok(); r.err == nil {
		if x, ok := r.intLit(one); !ok || x != 1 {
			r.fail(one.off, "%s", why)
			return
		}
	}
	r.next()
	r.expect(",")
	mOff = r.tok().off
	m = r.mapArg()
	r.expect(">")
	r.expect("(")
	return
}

// tileView parses the rest of `let x_t: HbmTensorView<'_, D, Chip, M> =
// x.view().tile::<m![I / 128], 1, M1>(i)...;` (002 L813-831). Each tile's
// mapping is mapping.TileView's, Bottom-padded for the result's view_mut;
// furiosa-visa-std 0.1.0's m! writes Bottom padding `#` (loop.go).
func (r *reader) tileView(name token) {
	lp := r.lp
	typ := r.next()
	dt, chip, elem, elemOff, bt := r.viewHead()
	if r.err != nil {
		return
	}
	base, ok := r.vars[bt.text]
	if !ok || base.Mem != kernel.HBM || base.Role == kernel.Intermediate {
		r.fail(bt.off, "a tile view is a view of a kernel argument or result, not %s", bt.text)
		return
	}
	out := base.Role == kernel.Output
	want, kind := "view", mapping.Top
	if out {
		want, kind = "view_mut", mapping.Bottom
	}
	if (typ.text == "HbmTensorViewMut") != out {
		r.fail(typ.off, "a tile of %s is a%s", bt.text, map[bool]string{true: " HbmTensorViewMut", false: "n HbmTensorView"}[out])
		return
	}
	r.expect(".")
	r.expect(want)
	r.expect("(")
	r.expect(")")
	v := &kernel.LoopView{Name: name.text, Base: bt.text}
	cur := base.Element
	for r.err == nil && r.accept(".") {
		dim, m, dimOff, mOff := r.tileHead("a tile loop takes tiles of 1")
		iv := r.ident()
		r.expect(")")
		if r.err != nil {
			return
		}
		k, ok := lp.index[iv.text]
		if !ok || !lp.scope[iv.text] {
			r.fail(iv.off, "%s is no index of the loop in scope", iv.text)
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
		// The tile digit: the axis's top digit (`m![J / 640]` for 4 tiles
		// of J = 2560), or a lower one (`m![J / 64 % 4]`: each tile a
		// strided share of the axis, a digit order with the tile digit
		// below others).
		f := fs[0]
		if f.Extent != ax.Count || f.AxisSize%(f.Stride*f.Extent) != 0 {
			r.fail(dimOff, "index %s counts %d tiles: its dimension %s has %d", iv.text, ax.Count, dim.Text(), f.Extent)
			return
		}
		d := mapping.Sym(f.Axis, f.AxisSize)
		if f.Stride > 1 {
			d = d.Div(f.Stride)
		}
		if f.Stride*f.Extent < f.AxisSize {
			d = d.Mod(f.Extent)
		}
		if ax.Dim != nil && !ax.Dim.Equal(d) {
			r.fail(dimOff, "index %s tiles %s elsewhere", iv.text, ax.Dim.Text())
			return
		}
		ax.Name, ax.Dim = fs[0].Axis, d
		next, err := mapping.TileView(cur, d, 1, kind)
		if err != nil {
			r.fail(mOff, "%v", err)
			return
		}
		if !r.sameView(m, next) {
			r.fail(mOff, "the tile of %s over %s is m![%s]", cur.Text(), d.Text(), r.viewText(next))
			return
		}
		cur = next
		v.Axes = append(v.Axes, k)
		v.Maps = append(v.Maps, next)
	}
	r.expect(";")
	if r.err != nil {
		return
	}
	if len(v.Maps) == 0 {
		r.fail(name.off, "a tile view takes one tile or more")
		return
	}
	if !r.sameView(elem, cur) || dt != base.DType || !chip.Equal(base.Chip) {
		r.fail(elemOff, "the view's type is its tensor's, with the last tile's mapping")
		return
	}
	if r.vars[name.text] != nil {
		r.fail(name.off, "%s is bound twice", name.text)
		return
	}
	lp.l.Views = append(lp.l.Views, v)
	r.vars[name.text] = &kernel.Tensor{Name: name.text, Mem: kernel.HBM, DType: base.DType, Role: kernel.Intermediate,
		Chip: base.Chip, Element: cur, View: base.Name}
}

// viewText is how the file's API writes a view's mapping.
func (r *reader) viewText(e *mapping.Expr) string {
	s := e.String()
	if r.api == rustapi.Visa01 {
		s = strings.ReplaceAll(s, "#{!}", "#")
	}
	return s
}

// sameView reports whether the mapping read is the view's, as the file's
// API writes it.
func (r *reader) sameView(read, view *mapping.Expr) bool {
	if r.api == rustapi.Visa01 {
		return read.String() == r.viewText(view)
	}
	return read.Equal(view)
}

// viewToHBM parses `x.view().to_hbm_view(&mut ctx.tdma, y` up to the
// destination's name: the source and the destination.
func (r *reader) viewToHBM() (src, dst token) {
	src = r.ident()
	r.expect(".")
	r.expect("view")
	r.noArgs()
	r.expect(".")
	r.expect("to_hbm_view")
	r.expect("(")
	r.expect("&")
	r.expect("mut")
	r.expect(r.ctxName)
	r.expect(".")
	r.expect("tdma")
	r.expect(",")
	return src, r.ident()
}

// storeTile parses `x_dm.view().to_hbm_view(&mut ctx.tdma, out_t);`
// (DmTensorView::to_hbm_view, memory_tensor.rs; tensor/memory.rs).
func (r *reader) storeTile() {
	st, vt := r.viewToHBM()
	whole := r.accept(".")
	if whole {
		// The whole result of a loop that tiles none of its axes (K
		// chunks only): out.view_mut().
		r.expect("view_mut")
		r.noArgs()
	}
	r.expect(")")
	r.expect(";")
	if r.err != nil {
		return
	}
	src, ok := r.variable(st.text)
	if !ok || src.Mem != kernel.DM {
		r.fail(st.off, "to_hbm_view stores a DM tensor, not %s", st.text)
		return
	}
	if whole {
		if r.output == nil || r.output.Name != vt.text {
			r.fail(vt.off, "%s.view_mut() is no view of the result: the loop stores tiles of the result, or the result", vt.text)
			return
		}
		r.prog.Ops = append(r.prog.Ops, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToHBM, Src: src.Name, Dst: vt.text})
		return
	}
	v := r.lp.l.View(vt.text)
	if v == nil {
		r.fail(vt.off, "%s is no tile view", vt.text)
		return
	}
	if b, _ := r.vars[v.Base]; b == nil || b.Role != kernel.Output {
		r.fail(vt.off, "%s is a view of %s: the loop stores tiles of the result", vt.text, v.Base)
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

// parityIndex parses `[t / S % m]`, `[t % P / S % m]` or either with
// base (t - 1), m the list's length (slotIndex; kernel.LoopSlot.Index).
func (r *reader) parityIndex(m int) {
	lp := r.lp
	lp.parityOff = r.tok().off
	r.expect("[")
	lp.parityTile, lp.parityStride, lp.parityPeriod = r.slotIndex(m)
	r.expect("]")
}

// slotIndex parses a slot's buffer index `t [% P] [/ S] % m` (base t or
// t - 1) and returns its tile base, stride and period.
func (r *reader) slotIndex(m int) (base string, stride, period int) {
	lp := r.lp
	base = r.tileBase(lp.loopVar)
	var ops []string
	var vals []int64
	var offs []int
	for r.err == nil && (r.is("%") || r.is("/")) {
		ops = append(ops, r.next().text)
		offs = append(offs, r.tok().off)
		vals = append(vals, r.constAtom())
	}
	if r.err != nil {
		return
	}
	form := strings.Join(ops, " ")
	stride = 1
	switch form {
	case "%":
	case "/ %":
		stride = int(vals[0])
	case "% %":
		period = int(vals[0])
	case "% / %":
		period, stride = int(vals[0]), int(vals[1])
	default:
		r.fail(r.tok().off, "want the buffer index %s [%% P] [/ S] %% %d", lp.loopVar, m)
		return
	}
	k := len(vals) - 1
	if int(vals[k]) != m {
		r.fail(offs[k], "the index takes %d buffers modulo %d", m, vals[k])
		return
	}
	if stride < 1 || stride > maxLoopSteps || period < 0 || period > maxLoopSteps {
		r.fail(offs[0], "want a stride of 1 to %d and a period of 0 to %d", maxLoopSteps, maxLoopSteps)
	}
	return
}

// parityTrf parses `[TrfAddress::FirstHalf, TrfAddress::SecondHalf][t / S
// % 2].clone()` (TrfAddress is Clone, not Copy: loop.go).
func (r *reader) parityTrf() kernel.TrfAddress {
	lp := r.lp
	r.expect("[")
	var modes []kernel.TrfAddress
	for r.err == nil {
		r.expect("TrfAddress")
		r.expect("::")
		m := r.ident()
		if r.err != nil {
			return ""
		}
		mode, err := kernel.ParseTrfAddress(m.text)
		if err != nil {
			r.fail(m.off, "%v", err)
			return ""
		}
		modes = append(modes, mode)
		if !r.accept(",") {
			break
		}
	}
	r.expect("]")
	r.parityIndex(len(modes))
	r.expect(".")
	r.expect("clone")
	r.noArgs()
	if r.err != nil {
		return ""
	}
	lp.parityModes = modes
	return modes[0]
}

// unrollLoop replaces the loop's body ops and tensors by its unrolling,
// once the arguments' addresses are known. The slots take the order they
// are declared in before the loop.
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
	rank := map[string]int{}
	for k, n := range r.declared {
		rank[n] = k
	}
	sort.SliceStable(lp.l.Slots, func(a, b int) bool { return rank[lp.l.Slots[a].Name] < rank[lp.l.Slots[b].Name] })
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

// variable is the tensor variable name holds. In the tile loop, a tensor
// declared before it that the body assigns later in its text (a pipelined
// loop's lead ops fill the next tile's buffers after the ops that read this
// tile's) is that tensor, which Unroll resolves per tile.
func (r *reader) variable(name string) (*kernel.Tensor, bool) {
	if t, ok := r.vars[name]; ok {
		return t, true
	}
	if ann, ok := r.pending[name]; ok && r.lp != nil && !r.lp.done {
		c := *ann
		c.Name = name
		return &c, true
	}
	return nil, false
}
