package emit

import (
	"fmt"
	"strings"

	"tcpmap/emit/rustapi"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The loop form of a tiled kernel. A program that kernel.Recognize finds to
// be a loop over tiles (the planner's tiled candidates, search.Build) is
// printed as one `for` over the linear tile index t, as the manual walks
// tiles with one index (`for i in 0..15 { ... tile::<m![B / 32], 2, _>(i) }`,
// 002 L954-966):
//
//	let mut out: HbmTensor<bf16, Chip, m![I, J]> = unsafe { HbmTensor::from_addr(2 << 28) };
//	let mut in0_dm: DmTensor<...> = unsafe { DmTensor::from_addr(0) };  // every slot
//	for t in 0..8 {
//	    let i = t / 4;                           // each tiled axis's index
//	    let j = t % 4;
//	    if t % 4 == 0 {                          // when i changes
//	        let in0_t: HbmTensorView<'_, bf16, Chip, m![...]> = in0.view().tile::<m![I / 128], 1, m![...]>(i);
//	        in0_dm = in0_t.to_dm(&mut ctx.tdma, [0, 1 << 15][t / 4 % 2]);
//	    }
//	    ...
//	    let out_t: HbmTensorViewMut<'_, bf16, Chip, m![...]> = out.view_mut().tile::<m![J / 64], 1, m![...]>(j);
//	    out_dm.view().to_hbm_view(&mut ctx.tdma, out_t);
//	}
//	out
//
// One linear loop rather than one loop per axis keeps the program's order
// of ops: a step issues the loads of the tiles that change, then the TRF
// load, then the main chain and the store, and an operand whose tile changes
// with an outer axis is loaded in the same step as the inner operand's tile
// (nested loops would hoist it, and its TRF load, before the inner loop's
// loads). A double buffer alternates with its load count, `[a, b][t / S %
// 2]` (002 L4151-4158). Every tensor the body produces (a slot) is declared
// before the loop with an unplaced handle of its type, which the first step
// replaces, so that a tensor assigned under an `if` is initialized in any
// Rust. A software-pipelined loop (kernel.TileLoop.Pipelined) runs one step
// more, `for t in 0..=N`: its lead ops (the next tile's loads) work on tile
// t under `if t < N`, the others on tile t - 1 under `if t >= 1`, each block
// computing the indices of its tile.
//
// A K-chunked loop (the contracted axes' tiles innermost, docs/spec-
// decisions.md "K chunks: the split reduce's spelling and buffers") has
// ops that fire at a phase of their level's tiles (kernel.LoopOp.Phase):
// chunk 0's main chain under `if t % 4 == 0`, the other chunks' under `if
// t % 4 != 0`, the split reduce's passes into the running sum under `if t
// % 4 != 0 && t % 4 != 3` and its last pass and the store of the output
// tile under `if t % 4 == 3` (bounds on t at level 0: `t == 0`, `t >= 1`,
// ...). The running sum is one variable assigned by chunk 0's chain and by
// the passes, `begin_interleaved::<Kc, _, _, _, _, _>(out_ps0.view(),
// out_ps1.view())`, its two buffers indexed by the chunk (`[a, b][t % 2]`,
// `[a, b][t % 5 % 2]`). See docs/spec-decisions.md "Emitted Rust: tile
// loops".

// loopPrinter holds the loop being printed.
type loopPrinter struct {
	l *kernel.TileLoop
	// vars are the axes' index variables; level is the level of each
	// slot's first producing op in the body.
	vars  []string
	level map[string]int
	// tile is the expression of the tile the ops being printed work on:
	// "t", or "t - 1" for the non-lead ops of a pipelined loop.
	tile string
}

// loopForm returns the loop form of p and the program the writer prints
// its body from (the arguments, then one tensor per slot and view named as
// the slot or view), or nil when p has none.
func loopForm(p *kernel.Program) (*loopPrinter, *kernel.Program) {
	l, ok := kernel.Recognize(p)
	if !ok {
		return nil, nil
	}
	lp := &loopPrinter{l: l, level: map[string]int{}, tile: "t"}
	bp := &kernel.Program{Name: p.Name, Axes: p.Axes, Chips: p.Chips, Reference: p.Reference}
	taken := map[string]bool{"t": true, "ctx": true}
	for _, t := range p.Tensors {
		if t.Mem == kernel.HBM && t.Role != kernel.Intermediate {
			bp.Tensors = append(bp.Tensors, t)
			taken[t.Name] = true
		}
	}
	for _, s := range l.Slots {
		if taken[s.Name] {
			return nil, nil
		}
		taken[s.Name] = true
		c := *s.Tensors[0]
		c.Name = s.Name
		bp.Tensors = append(bp.Tensors, &c)
	}
	for _, v := range l.Views {
		if taken[v.Name] {
			return nil, nil
		}
		taken[v.Name] = true
		b, _ := p.Tensor(v.Base)
		bp.Tensors = append(bp.Tensors, &kernel.Tensor{Name: v.Name, Mem: kernel.HBM, DType: b.DType, Role: kernel.Intermediate,
			Chip: b.Chip, Element: v.Maps[len(v.Maps)-1], Addr: b.Addr, View: b.Name})
	}
	for _, a := range l.Axes {
		v := strings.ToLower(a.Name)
		for identOK(v) != nil || taken[v] {
			v += "_"
		}
		taken[v] = true
		lp.vars = append(lp.vars, v)
	}
	for _, lo := range l.Body {
		op := lo.Op
		bp.Ops = append(bp.Ops, op)
		out := op.Dst
		if op.Kind == kernel.OpChain {
			out = op.Stages[len(op.Stages)-1].Tensor
		}
		if op.Kind == kernel.OpToHBM && l.View(op.Dst) == nil && !isResult(bp, op.Dst) {
			return nil, nil // the loop stores tiles of the result, or the whole result
		}
		if _, seen := lp.level[out]; !seen {
			lp.level[out] = lo.Level
		}
	}
	return lp, bp
}

// isResult reports whether name is p's result.
func isResult(p *kernel.Program, name string) bool {
	t, ok := p.Tensor(name)
	return ok && t.Mem == kernel.HBM && t.Role == kernel.Output
}

// guard is when a body op fires: its level, phase and whether it is a lead
// op.
type guard struct {
	level int
	phase kernel.Phase
	lead  bool
}

// loopKernel prints the kernel's body as the loop.
func (w *rustWriter) loopKernel() error {
	lp, l := w.lp, w.lp.l
	out := w.k.output
	if out == nil {
		return fmt.Errorf("a tile loop stores tiles of the kernel's result, and the kernel has none")
	}
	// The result exists before the loop: an HbmTensor at an address
	// (002 L820), or one the 0.6.0 library allocates (HbmTensor::new,
	// tensor/memory.rs). Each step writes a tile of it through view_mut.
	if w.api == Opt06 {
		w.line("    let mut %s: %s = HbmTensor::new();", out.Name, w.typeText(out))
	} else {
		w.line("    let mut %s: %s = unsafe { HbmTensor::from_addr(%s) };", out.Name, w.typeText(out), addrText(out.Addr, true))
	}
	// Every slot is declared before the loop with a handle of its type,
	// which the first step that produces it replaces.
	if err := w.takeErr(); err != nil {
		return fmt.Errorf("the result %s: %w", out.Name, err)
	}
	for _, s := range l.Slots {
		t, _ := w.p.Tensor(s.Name)
		w.line("    let mut %s: %s = %s;", s.Name, w.typeText(t), w.handle(t))
		if err := w.takeErr(); err != nil {
			return fmt.Errorf("tensor %s: %w", s.Name, err)
		}
	}
	n := len(l.Axes)
	piped := l.Pipelined()
	steps := l.Steps()
	if piped {
		w.line("    for t in 0..=%d {", steps)
	} else {
		w.line("    for t in 0..%d {", steps)
		for k := range l.Axes {
			w.line("        let %s = %s;", lp.vars[k], rustapi.TileIndex("t", l.Stride(k+1), l.Axes[k].Count, k == 0))
		}
	}
	open := false
	var cur guard
	closeIf := func() {
		if open {
			w.line("        }")
			open = false
		}
	}
	for i, lo := range l.Body {
		g := guard{lo.Level, lo.Phase, lo.Lead}
		if !open || g != cur {
			closeIf()
			lp.tile = "t"
			if piped || lo.Level < n || lo.Phase != kernel.PhaseFirst {
				w.line("        if %s {", condText(l, g))
				open, cur = true, g
				if piped && !lo.Lead {
					lp.tile = "t - 1"
				}
				if piped {
					w.blockIndices(l.Body[i:], g)
				}
			}
		}
		w.ind = "        "
		if open {
			w.ind = "            "
		}
		err := w.loopOp(lo.Op)
		if err == nil {
			err = w.takeErr()
		}
		if err != nil {
			return fmt.Errorf("loop body[%d] (%s): %w", i, lo.Op.Kind, err)
		}
	}
	closeIf()
	w.ind = "    "
	w.line("    }")
	w.line("    %s", out.Name)
	w.line("}")
	return nil
}

// blockIndices prints, at the start of a block of a pipelined loop, the
// index of each tiled axis that the block's views take, of the block's tile.
func (w *rustWriter) blockIndices(rest []*kernel.LoopOp, g guard) {
	lp, l := w.lp, w.lp.l
	used := make([]bool, len(l.Axes))
	for _, lo := range rest {
		if (guard{lo.Level, lo.Phase, lo.Lead}) != g {
			break
		}
		for _, nm := range []string{lo.Op.Src, lo.Op.Dst} {
			if v := l.View(nm); v != nil {
				for _, a := range v.Axes {
					used[a] = true
				}
			}
		}
	}
	for k := range l.Axes {
		if used[k] {
			w.line("            let %s = %s;", lp.vars[k], rustapi.TileIndex(lp.tile, l.Stride(k+1), l.Axes[k].Count, k == 0))
		}
	}
}

// handle is an unplaced handle of t's type, the initial value of a tensor
// the loop assigns under an `if`: from_addr at its first buffer's address
// (furiosa-visa-std 0.1.0, memory_tensor.rs), or new() (0.6.0).
func (w *rustWriter) handle(t *kernel.Tensor) string {
	typ := map[kernel.Memory]string{kernel.HBM: "HbmTensor", kernel.DM: "DmTensor", kernel.TRF: "TrfTensor", kernel.VRF: "VrfTensor"}[t.Mem]
	if w.api == Opt06 {
		return typ + "::new()"
	}
	arg := addrText(t.Addr, t.Mem == kernel.HBM)
	if t.Mem == kernel.TRF {
		arg = "TrfAddress::" + string(t.TrfAddress)
	}
	if s := w.lp.l.Slot(t.Name); s != nil && len(s.Tensors) > 0 {
		x := s.Tensors[0]
		arg = addrText(x.Addr, t.Mem == kernel.HBM)
		if t.Mem == kernel.TRF {
			arg = "TrfAddress::" + string(x.TrfAddress)
		}
	}
	return "unsafe { " + typ + "::from_addr(" + arg + ") }"
}

// loopOp prints one body op, with the views it moves.
func (w *rustWriter) loopOp(op *kernel.Op) error {
	l := w.lp.l
	if v := l.View(op.Src); v != nil {
		w.viewLine(v)
	}
	if op.Kind == kernel.OpToHBM {
		// The tile of the result is written through its mutable view:
		// DmTensorView::to_hbm_view (memory_tensor.rs; tensor/memory.rs);
		// a loop that tiles no axis of the result (K chunks only) writes
		// the whole result through view_mut().
		dst := op.Dst + ".view_mut()"
		if v := l.View(op.Dst); v != nil {
			w.viewLine(v)
			dst = v.Name
		}
		w.line("%s%s.view().to_hbm_view(&mut ctx.tdma, %s);", w.ind, op.Src, dst)
		return nil
	}
	return w.op(op, false)
}

// viewLine binds a tile view: `let x_t: HbmTensorView<'_, D, Chip, M> =
// x.view().tile::<m![I / 128], 1, M>(i);` (002 L813-831), one `.tile` per
// tiled axis the tensor holds; the result's tiles are `view_mut` views,
// whose padding is Bottom (`#{!}`; written `#` under furiosa-visa-std
// 0.1.0, whose m! has no padding kinds).
func (w *rustWriter) viewLine(v *kernel.LoopView) {
	b, _ := w.p.Tensor(v.Base)
	typ, call := "HbmTensorView", "view"
	out := b.Role == kernel.Output
	if out {
		typ, call = "HbmTensorViewMut", "view_mut"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s.%s()", v.Base, call)
	for k, a := range v.Axes {
		ax := w.lp.l.Axes[a]
		fmt.Fprintf(&sb, ".tile::<%s, 1, %s>(%s)", w.mapText(ax.Dim, roleNone), w.mapTextOf(v.Maps[k], roleNone, out), w.lp.vars[a])
	}
	w.line("%slet %s: %s<'_, %s, %s, %s> = %s;", w.ind, v.Name, typ, b.DType, w.mapText(b.Chip, roleChip),
		w.mapTextOf(v.Maps[len(v.Maps)-1], roleNone, out), sb.String())
}

// straightView binds, in a kernel printed in straight line, a tile view of
// an argument or of the result as viewLine does in a loop, its tile index
// a number: `let x_t2: HbmTensorView<'_, D, Chip, M> =
// x.view().tile::<m![S / 512], 1, M>(2);`. The view must pin one tile
// digit of one axis, outermost in the tensor's bytes (`1 # n` in its
// element where the base holds the digit A / (|A| / n)), as the op
// kernels' tiles do (search/opspace.go).
func (w *rustWriter) straightView(v *kernel.Tensor) error {
	b, ok := w.p.Tensor(v.View)
	if !ok {
		return fmt.Errorf("view %s of unknown tensor %s", v.Name, v.View)
	}
	out := b.Role == kernel.Output
	kind, typ, call := mapping.Top, "HbmTensorView", "view"
	if out {
		kind, typ, call = mapping.Bottom, "HbmTensorViewMut", "view_mut"
	}
	n := 0
	parts := v.Element.Parts()
	if v.Element.Kind() != mapping.KindPair {
		parts = []*mapping.Expr{v.Element}
	}
	for _, e := range parts {
		if e.Kind() == mapping.KindPadding && e.Inner().IsIdentity() {
			if n != 0 {
				return fmt.Errorf("view %s of %s pins several digits: not printed outside a tile loop", v.Name, b.Name)
			}
			n = e.Size()
		}
	}
	ax, err := mapping.AxesOf(b.Element)
	if n < 2 || err != nil {
		return fmt.Errorf("view %s of %s pins no tile digit", v.Name, b.Name)
	}
	bytes, err := b.DType.BytesFor(b.Element.Size())
	if err != nil {
		return err
	}
	for _, a := range ax.List() {
		if a.Size%n != 0 {
			continue
		}
		dim, err := mapping.Parse(fmt.Sprintf("%s / %d", a.Name, a.Size/n), w.p.Axes, nil)
		if err != nil {
			continue
		}
		m, err := mapping.TileView(b.Element, dim, 1, kind)
		if err != nil || !m.Equal(v.Element) {
			continue
		}
		per := int64(bytes) / int64(n)
		off := v.Addr - b.Addr
		if per == 0 || off%per != 0 || off/per >= int64(n) {
			return fmt.Errorf("view %s of %s at byte %d: not a tile of %d bytes", v.Name, b.Name, off, per)
		}
		el := w.mapTextOf(v.Element, roleNone, out)
		w.line("%slet %s: %s<'_, %s, %s, %s> = %s.%s().tile::<%s, 1, %s>(%d);", w.ind, v.Name, typ, b.DType, w.mapText(b.Chip, roleChip),
			el, b.Name, call, w.mapText(dim, roleNone), el, off/per)
		return nil
	}
	return fmt.Errorf("view %s m![%s] of %s m![%s] is no tile of one axis", v.Name, v.Element, b.Name, b.Element)
}

// condText is when an op of guard g fires, over the loop's steps t: the
// steps of its tiles (a lead op's tile is its step, another op's in a
// pipelined loop the step before: t - 1). At level 0 the tiles are an
// interval (every tile, the first, the last, all but the first, all but
// the first and the last) written with bounds on t: `t == 0`, `t == 1`
// (the first tile, for the ops after the lead ops of a pipelined loop),
// `t >= 1`, `t < N`, `t >= 2 && t < N`. At an inner level the phase is a
// residue of the tile modulo the level's stride S: `t % S == 0` (the
// first), `t % S == S - 1` (the last), `t % S != 0` (the others), both
// `!=` (neither), after `t < N && ` for a lead op of a pipelined loop or
// `t >= 1 && ` with `(t - 1) % S` for the others (docs/spec-decisions.md
// "Emitted Rust: tile loops").
func condText(l *kernel.TileLoop, g guard) string {
	s, n := l.Stride(g.level), l.Steps()
	piped := l.Pipelined()
	shift, last := 0, n-1 // the step of tile 0, the last step
	if piped {
		last = n
		if !g.lead {
			shift = 1
		}
	}
	if s == n {
		// An interval of tiles [a, b].
		a, b := 0, n-1
		switch g.phase {
		case kernel.PhaseFirst:
			if g.level == 0 {
				b = 0
			}
		case kernel.PhaseLast:
			a = n - 1
		case kernel.PhaseRest:
			a = 1
		case kernel.PhaseMiddle:
			a, b = 1, n-2
		}
		a, b = a+shift, b+shift
		var atoms []string
		switch {
		case a == b:
			return fmt.Sprintf("t == %d", a)
		case a > 0:
			atoms = append(atoms, fmt.Sprintf("t >= %d", a))
		}
		if b < last {
			atoms = append(atoms, fmt.Sprintf("t < %d", b+1))
		}
		return strings.Join(atoms, " && ")
	}
	var atoms []string
	base := "t"
	if piped {
		if g.lead {
			atoms = append(atoms, fmt.Sprintf("t < %d", n))
		} else {
			atoms = append(atoms, "t >= 1")
			base = "(t - 1)"
		}
	}
	res := func(op string, k int) string { return fmt.Sprintf("%s %% %d %s %d", base, s, op, k) }
	switch g.phase {
	case kernel.PhaseFirst:
		if s > 1 {
			atoms = append(atoms, res("==", 0))
		}
	case kernel.PhaseLast:
		atoms = append(atoms, res("==", s-1))
	case kernel.PhaseRest:
		atoms = append(atoms, res("!=", 0))
	case kernel.PhaseMiddle:
		atoms = append(atoms, res("!=", 0), res("!=", s-1))
	}
	return strings.Join(atoms, " && ")
}

// slotIndex is the index of a slot's tensor for the tile base (`t` or `t
// - 1`): t / S % m (a double buffer alternating with its producer's fires)
// or t % P / S % m (a running sum alternating with the K chunk): the slot's
// formula (kernel.LoopSlot.Index).
func slotIndex(s *kernel.LoopSlot, base string) string {
	if s.Period == 0 {
		return rustapi.TileIndex(base, s.Stride, len(s.Tensors), false)
	}
	b := base
	if strings.Contains(base, " ") {
		b = "(" + base + ")"
	}
	b += fmt.Sprintf(" %% %d", s.Period)
	if s.Stride > 1 {
		b += fmt.Sprintf(" / %d", s.Stride)
	}
	return b + fmt.Sprintf(" %% %d", len(s.Tensors))
}

// bind is the start of a statement producing t: `let t: Type = `, or
// `t = ` for a slot of the tile loop, which is declared before it.
func (w *rustWriter) bind(t *kernel.Tensor) string {
	if w.lp != nil && w.lp.l.Slot(t.Name) != nil {
		return t.Name + " = "
	}
	return fmt.Sprintf("let %s: %s = ", t.Name, w.typeText(t))
}

// addr prints t's address: a slot's is `[a, b][parity]`.
func (w *rustWriter) addr(t *kernel.Tensor, hbm bool) string {
	if w.lp != nil {
		if s := w.lp.l.Slot(t.Name); s != nil && len(s.Tensors) > 1 {
			parts := make([]string, len(s.Tensors))
			for k, x := range s.Tensors {
				parts[k] = addrText(x.Addr, hbm)
			}
			return "[" + strings.Join(parts, ", ") + "][" + slotIndex(s, w.lp.tile) + "]"
		}
	}
	return addrText(t.Addr, hbm)
}

// trfMode prints t's TrfAddress: a slot's is `[TrfAddress::FirstHalf,
// TrfAddress::SecondHalf][parity].clone()` (TrfAddress is Clone, not Copy,
// memory_tensor.rs: an element cannot move out of the array).
func (w *rustWriter) trfMode(t *kernel.Tensor) string {
	if w.lp != nil {
		if s := w.lp.l.Slot(t.Name); s != nil && len(s.Tensors) > 1 {
			parts := make([]string, len(s.Tensors))
			for k, x := range s.Tensors {
				parts[k] = "TrfAddress::" + string(x.TrfAddress)
			}
			return "[" + strings.Join(parts, ", ") + "][" + slotIndex(s, w.lp.tile) + "].clone()"
		}
	}
	return "TrfAddress::" + string(t.TrfAddress)
}
