package emit

import (
	"fmt"
	"strconv"
	"strings"

	"tcpmap/model/kernel"
)

// The loop form of a tiled kernel. A program that kernel.Recognize finds to
// be a loop over tiles (the planner's tiled candidates, search.Build) is
// printed as one `for` over the linear tile index t, as the manual walks
// tiles with one index (`for i in 0..15 { ... tile::<m![B / 32], 2, _>(i) }`,
// 002 L954-966):
//
//	let out: HbmTensor<bf16, Chip, m![I, J]> = unsafe { HbmTensor::from_addr(2 << 28) };
//	let mut in0_dm: DmTensor<...>;               // a tensor an `if` assigns
//	for t in 0..8 {
//	    let i = t / 4;                           // each tiled axis's index
//	    let j = t % 4;
//	    if t % 4 == 0 {                          // when i changes
//	        let in0_t: HbmTensorView<'_, bf16, Chip, m![...]> = in0.view().tile::<m![I / 128], 1, m![...]>(i);
//	        in0_dm = in0_t.to_dm(&mut ctx.tdma, [0, 1 << 15][t / 4 % 2]);
//	    }
//	    ...
//	    out_dm.to_hbm(&mut ctx.tdma, &mut out_t);
//	}
//	out
//
// One linear loop rather than one loop per axis keeps the program's order
// of ops: a step issues the loads of the tiles that change, then the TRF
// load, then the main chain and the store, and an operand whose tile changes
// with an outer axis is loaded in the same step as the inner operand's tile
// (nested loops would hoist it, and its TRF load, before the inner loop's
// loads). A double buffer alternates with its load count, `[a, b][t / S %
// 2]` (002 L4151-4158). See docs/spec-decisions.md "Emitted Rust: tile
// loops".

// loopPrinter holds the loop being printed.
type loopPrinter struct {
	l *kernel.TileLoop
	// vars are the axes' index variables; level is each slot's producing
	// op's level; pre the slots assigned inside an `if`.
	vars  []string
	level map[string]int
	pre   map[string]bool
	inIf  bool
}

// loopForm returns the loop form of p and the program the writer prints
// its body from (the arguments, then one tensor per slot and view named as
// the slot or view), or nil when p has none.
func loopForm(p *kernel.Program) (*loopPrinter, *kernel.Program) {
	l, ok := kernel.Recognize(p)
	if !ok {
		return nil, nil
	}
	lp := &loopPrinter{l: l, level: map[string]int{}, pre: map[string]bool{}}
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
		if identOK(v) != nil || taken[v] {
			return nil, nil
		}
		taken[v] = true
		lp.vars = append(lp.vars, v)
	}
	n := len(l.Axes)
	for _, lo := range l.Body {
		op := lo.Op
		bp.Ops = append(bp.Ops, op)
		out := op.Dst
		if op.Kind == kernel.OpChain {
			out = op.Stages[len(op.Stages)-1].Tensor
		}
		if op.Kind == kernel.OpToHBM && l.View(op.Dst) == nil {
			return nil, nil // the loop stores tiles of the result only
		}
		lp.level[out] = lo.Level
		if lo.Level < n && l.Slot(out) != nil {
			lp.pre[out] = true
		}
	}
	return lp, bp
}

// loopKernel prints the kernel's body as the loop.
func (w *rustWriter) loopKernel() error {
	lp, l := w.lp, w.lp.l
	out := w.k.output
	if out == nil {
		return fmt.Errorf("a tile loop stores tiles of the kernel's result, and the kernel has none")
	}
	// 002 L820: an HbmTensor at an address.
	w.line("    let %s: %s = unsafe { HbmTensor::from_addr(%s) };", out.Name, w.typeText(out), addrText(out.Addr, true))
	for _, s := range l.Slots {
		if lp.pre[s.Name] {
			t, _ := w.p.Tensor(s.Name)
			w.line("    let mut %s: %s;", s.Name, w.typeText(t))
		}
	}
	w.line("    for t in 0..%d {", l.Steps())
	for k := range l.Axes {
		w.line("        let %s = %s;", lp.vars[k], indexText(l.Stride(k+1), l.Axes[k].Count, k == 0))
	}
	n := len(l.Axes)
	open := -1 // the level of the open `if`, -1 for none
	closeIf := func() {
		if open >= 0 {
			w.line("        }")
			open = -1
		}
	}
	for i, lo := range l.Body {
		if lo.Level != open {
			closeIf()
			if lo.Level < n {
				w.line("        if %s {", condText(l, lo.Level))
				open = lo.Level
			}
		}
		w.ind = "        "
		lp.inIf = open >= 0
		if open >= 0 {
			w.ind = "            "
		}
		if err := w.loopOp(lo.Op); err != nil {
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

// loopOp prints one body op, with the views it moves.
func (w *rustWriter) loopOp(op *kernel.Op) error {
	l := w.lp.l
	if v := l.View(op.Src); v != nil {
		w.viewLine(v)
	}
	if op.Kind == kernel.OpToHBM {
		v := l.View(op.Dst)
		w.viewLine(v)
		// The tile of the result is written through its mutable view
		// (docs/spec-decisions.md "Emitted Rust: tile loops").
		w.line("%s%s.to_hbm(&mut ctx.tdma, &mut %s);", w.ind, op.Src, v.Name)
		return nil
	}
	return w.op(op, false)
}

// viewLine binds a tile view: `let x_t: HbmTensorView<'_, D, Chip, M> =
// x.view().tile::<m![I / 128], 1, M>(i);` (002 L813-831), one `.tile` per
// tiled axis the tensor holds; the result's tiles are `view_mut` views.
func (w *rustWriter) viewLine(v *kernel.LoopView) {
	b, _ := w.p.Tensor(v.Base)
	typ, call := "HbmTensorView", "view"
	if b.Role == kernel.Output {
		typ, call = "HbmTensorViewMut", "view_mut"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s.%s()", v.Base, call)
	for k, a := range v.Axes {
		ax := w.lp.l.Axes[a]
		fmt.Fprintf(&sb, ".tile::<%s, 1, %s>(%s)", w.mapText(ax.Dim, roleNone), w.mapText(v.Maps[k], roleNone), w.lp.vars[a])
	}
	mut := ""
	if b.Role == kernel.Output {
		mut = "mut "
	}
	w.line("%slet %s%s: %s<'_, %s, %s, %s> = %s;", w.ind, mut, v.Name, typ, b.DType, w.mapText(b.Chip, roleChip),
		w.mapText(v.Maps[len(v.Maps)-1], roleNone), sb.String())
}

// indexText is axis k's index: t / stride % count, without the parts that
// do nothing.
func indexText(stride, count int, outermost bool) string {
	s := "t"
	if stride > 1 {
		s += " / " + strconv.Itoa(stride)
	}
	if !outermost {
		s += " % " + strconv.Itoa(count)
	}
	return s
}

// condText is when an op of the level fires: at the steps where the
// indices of the axes from level on are 0.
func condText(l *kernel.TileLoop, level int) string {
	s := l.Stride(level)
	if s == l.Steps() {
		return "t == 0"
	}
	return fmt.Sprintf("t %% %d == 0", s)
}

// parityText is the index of a slot's tensor: its producer's fire count
// modulo the slot's tensors.
func parityText(l *kernel.TileLoop, level, m int) string {
	s := "t"
	if st := l.Stride(level); st > 1 {
		s += " / " + strconv.Itoa(st)
	}
	return s + " % " + strconv.Itoa(m)
}

// bind is the start of a statement producing t: `let t: Type = `, or
// `t = ` for a slot declared before the loop.
func (w *rustWriter) bind(t *kernel.Tensor) string {
	if w.lp != nil && w.lp.pre[t.Name] {
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
			return "[" + strings.Join(parts, ", ") + "][" + parityText(w.lp.l, w.lp.level[t.Name], len(s.Tensors)) + "]"
		}
	}
	return addrText(t.Addr, hbm)
}

// trfMode prints t's TrfAddress: a slot's is `[TrfAddress::FirstHalf,
// TrfAddress::SecondHalf][parity]`.
func (w *rustWriter) trfMode(t *kernel.Tensor) string {
	if w.lp != nil {
		if s := w.lp.l.Slot(t.Name); s != nil && len(s.Tensors) > 1 {
			parts := make([]string, len(s.Tensors))
			for k, x := range s.Tensors {
				parts[k] = "TrfAddress::" + string(x.TrfAddress)
			}
			return "[" + strings.Join(parts, ", ") + "][" + parityText(w.lp.l, w.lp.level[t.Name], len(s.Tensors)) + "]"
		}
	}
	return "TrfAddress::" + string(t.TrfAddress)
}
