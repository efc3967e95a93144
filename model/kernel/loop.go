package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"tcpmap/model/mapping"
)

// TileLoop is a program written as one loop over tiles: the form of a tiled
// kernel that walks the tiles of its HBM tensors with `tile::<dim, 1, _>(i)`
// views inside a `for` loop (002 L813-831; the loop of 002 L954-971). The
// loop runs over the linear tile index t in 0..Steps(); the index of axis k
// is t / Stride(k) % Axes[k].Count (the first axis outermost). One step runs
// the body ops that fire at it, in body order.
//
// A software-pipelined loop (Pipelined) loads ahead: its lead ops (LoopOp.Lead)
// work on the tile after the step's, so that the next tile's loads overlap
// this tile's compute (002 L4151-4158; search.Build's double-buffered chunk
// loops). Its flat program is a prologue, the lead ops for tile 0, then the
// steps; as a loop it runs Steps()+1 steps s, at which the lead ops work on
// tile s (s < Steps()) and the others on tile s-1 (s ≥ 1).
//
// A TileLoop is a description of a flat program, not a part of it: Recognize
// finds one in a program, and Unroll gives back exactly the program it was
// found in.
type TileLoop struct {
	// Axes are the tiled axes, outermost first.
	Axes []LoopAxis
	// Views are the tile views the body takes, one per body op that moves
	// a tile (its Src or Dst names the view's Name).
	Views []*LoopView
	// Slots are the body's on-chip tensors; a slot with two tensors
	// alternates between them (double buffering, 002 L4151-4158).
	Slots []*LoopSlot
	// Body are the ops of one step, with views and slots named by their
	// Name.
	Body []*LoopOp
}

// LoopAxis is one tiled axis: Count tiles of Dim (`m![I / 128]` for I = 256
// in 2 tiles), one tile at a time (`tile::<m![I / 128], 1, _>(i)`).
type LoopAxis struct {
	Name  string
	Count int
	Dim   *mapping.Expr
}

// LoopView is a tile view of an HBM argument or result: the tile of the
// loop axes the argument's layout holds (Axes, indices into TileLoop.Axes),
// one `.tile` per axis in loop order. Each use is a new view tensor named
// `<base>_t<lin>` (lin the tile's linear index over the held axes), then
// `_<n>` for its n-th reuse.
type LoopView struct {
	Name string
	Base string
	Axes []int
	// Maps are the mappings of the successive `.tile` calls; the last is the
	// view's Element.
	Maps []*mapping.Expr
}

// LoopSlot is an on-chip tensor of the body: the k-th time its producing op
// fires it produces Tensors[k % len(Tensors)].
type LoopSlot struct {
	Name    string
	Tensors []*Tensor
}

// LoopOp is one op of the body. It fires at the tiles whose indices of the
// axes Level.. are all 0: Level len(Axes) fires at every tile, Level 0 at
// the first only. A lead op fires for the tile after the step's (see
// TileLoop).
type LoopOp struct {
	Op    *Op
	Level int
	Lead  bool
}

// Pipelined reports whether the loop has lead ops.
func (l *TileLoop) Pipelined() bool {
	for _, b := range l.Body {
		if b.Lead {
			return true
		}
	}
	return false
}

// Steps is the number of tiles the loop runs over.
func (l *TileLoop) Steps() int {
	n := 1
	for _, a := range l.Axes {
		n *= a.Count
	}
	return n
}

// Stride is the number of steps between two fires of an op at level lv:
// the product of the counts of the axes lv.. (Steps() for level 0).
func (l *TileLoop) Stride(lv int) int {
	n := 1
	for _, a := range l.Axes[lv:] {
		n *= a.Count
	}
	return n
}

// Slot returns the slot named name.
func (l *TileLoop) Slot(name string) *LoopSlot {
	for _, s := range l.Slots {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// View returns the view named name.
func (l *TileLoop) View(name string) *LoopView {
	for _, v := range l.Views {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Unroll builds the flat program of the loop: args (the kernel's HBM
// arguments and result, in declaration order), then the view tensors in the
// order the steps take them, then the slots' tensors in slot order; the ops
// of every step in order.
func (l *TileLoop) Unroll(args []*Tensor) ([]*Tensor, []*Op, error) {
	base := map[string]*Tensor{}
	for _, t := range args {
		base[t.Name] = t
	}
	n := len(l.Axes)
	idx := make([]int, n)
	var views []*Tensor
	var viewTiles []int
	curTile := 0
	uses := map[string]int{}
	fired := make([]int, len(l.Body))
	var ops []*Op
	viewTensor := func(v *LoopView) (string, error) {
		b, ok := base[v.Base]
		if !ok {
			return "", fmt.Errorf("view %s: unknown tensor %q", v.Name, v.Base)
		}
		lin := 0
		off := 0
		for _, k := range v.Axes {
			lin = lin*l.Axes[k].Count + idx[k]
			o, err := mapping.TileOffset(b.Element, l.Axes[k].Dim, 1, idx[k])
			if err != nil {
				return "", fmt.Errorf("view %s: %w", v.Name, err)
			}
			off += o
		}
		nb, err := b.DType.BytesFor(off)
		if err != nil {
			return "", fmt.Errorf("view %s: %w", v.Name, err)
		}
		key := fmt.Sprintf("%s_t%d", v.Base, lin)
		nm := key
		if u := uses[key]; u > 0 {
			nm = fmt.Sprintf("%s_%d", key, u)
		}
		uses[key]++
		elem := b.Element
		if len(v.Maps) > 0 {
			elem = v.Maps[len(v.Maps)-1]
		}
		viewTiles = append(viewTiles, curTile)
		views = append(views, &Tensor{Name: nm, Mem: HBM, DType: b.DType, Role: Intermediate, Chip: b.Chip,
			Element: elem, Addr: b.Addr + int64(nb), View: b.Name})
		return nm, nil
	}
	// A slot's products, in the order its producer fires, with the tile
	// each is for; a read at tile t takes the latest product for a tile up
	// to t (a lead op may have produced the next tile's already).
	type product struct {
		tile int
		name string
	}
	prods := map[string][]product{}
	use := func(name string, tile int) (string, error) {
		if _, ok := base[name]; ok {
			return name, nil
		}
		ps := prods[name]
		for k := len(ps) - 1; k >= 0; k-- {
			if ps[k].tile <= tile {
				return ps[k].name, nil
			}
		}
		return "", fmt.Errorf("%q is used before the loop produces it", name)
	}
	produce := func(b int, name string, tile int) (string, error) {
		if _, ok := base[name]; ok {
			return name, nil
		}
		s := l.Slot(name)
		if s == nil || len(s.Tensors) == 0 {
			return "", fmt.Errorf("%q is no slot of the loop", name)
		}
		c := s.Tensors[fired[b]%len(s.Tensors)].Name
		prods[name] = append(prods[name], product{tile, c})
		return c, nil
	}
	steps := l.Steps()
	fire := func(b int, lo *LoopOp, tile int) error {
		curTile = tile
		for k := range n {
			idx[k] = tile / l.Stride(k+1) % l.Axes[k].Count
		}
		op := *lo.Op
		var err error
		switch op.Kind {
		case OpToDM, OpDMToDM:
			if v := l.View(op.Src); v != nil {
				op.Src, err = viewTensor(v)
			} else {
				op.Src, err = use(op.Src, tile)
			}
			if err == nil {
				op.Dst, err = produce(b, op.Dst, tile)
			}
		case OpToHBM:
			op.Src, err = use(op.Src, tile)
			if err == nil {
				if v := l.View(op.Dst); v != nil {
					op.Dst, err = viewTensor(v)
				} else {
					op.Dst, err = produce(b, op.Dst, tile)
				}
			}
		case OpChain:
			op.Stages = make([]*Stage, len(lo.Op.Stages))
			for i, st := range lo.Op.Stages {
				s := *st
				if s.Tensor != "" {
					if i == len(lo.Op.Stages)-1 {
						s.Tensor, err = produce(b, s.Tensor, tile)
					} else {
						s.Tensor, err = use(s.Tensor, tile)
					}
				}
				op.Stages[i] = &s
				if err != nil {
					break
				}
			}
		default:
			err = fmt.Errorf("unknown op kind %q", op.Kind)
		}
		if err != nil {
			return fmt.Errorf("body[%d] at tile %d: %w", b, tile, err)
		}
		fired[b]++
		ops = append(ops, &op)
		return nil
	}
	for b, lo := range l.Body {
		if lo.Level < 0 || lo.Level > n {
			return nil, nil, fmt.Errorf("body[%d]: level %d outside 0..%d", b, lo.Level, n)
		}
	}
	// The prologue: the lead ops for tile 0.
	for b, lo := range l.Body {
		if lo.Lead {
			if err := fire(b, lo, 0); err != nil {
				return nil, nil, err
			}
		}
	}
	for t := range steps {
		for b, lo := range l.Body {
			tile := t
			if lo.Lead {
				tile = t + 1
			}
			if tile >= steps || tile%l.Stride(lo.Level) != 0 {
				continue
			}
			if err := fire(b, lo, tile); err != nil {
				return nil, nil, err
			}
		}
	}
	// The views in the order of their tiles (a lead op takes the next
	// tile's before this tile's store takes its own), each tile's in the
	// order its ops fire.
	order := make([]int, len(views))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return viewTiles[order[a]] < viewTiles[order[b]] })
	tensors := append([]*Tensor(nil), args...)
	for _, i := range order {
		tensors = append(tensors, views[i])
	}
	for _, s := range l.Slots {
		tensors = append(tensors, s.Tensors...)
	}
	return tensors, ops, nil
}

// Recognize finds the tile loop a program is the unrolling of: a program
// with tile views (Tensor.View) whose tensors are its HBM arguments and
// result, then its views in the order its ops take them, then its on-chip
// tensors; whose ops are steps of one body, each step ending with the
// to_hbm of a tile of the result; and which Unroll gives back exactly
// (lowered configurations aside, which the steps do not share). It reports
// false for any other program, which then has no loop form.
func Recognize(p *Program) (*TileLoop, bool) {
	if p == nil {
		return nil, false
	}
	var args []*Tensor
	nviews := 0
	for _, t := range p.Tensors {
		if t.View != "" {
			nviews++
		}
		if t.Mem == HBM && t.Role != Intermediate {
			args = append(args, t)
		}
	}
	if nviews == 0 {
		return nil, false
	}
	// Steps: one to_hbm into a view each.
	steps := 0
	first := -1
	for i, op := range p.Ops {
		if op.Kind == OpToHBM {
			steps++
			if first < 0 {
				first = i
			}
		}
	}
	if steps < 2 {
		return nil, false
	}
	want, err := flatJSON(p.Tensors, p.Ops)
	if err != nil {
		return nil, false
	}
	for _, axes := range axisChoices(p.Axes, steps) {
		bodies := append([][]bodyOp{stepBody(p.Ops[:first+1])}, pipelinedBodies(p, args, first)...)
		for _, ops := range bodies {
			l, ok := guess(p, args, axes, ops)
			if !ok {
				continue
			}
			ts, flat, err := l.Unroll(args)
			if err != nil {
				continue
			}
			got, err := flatJSON(ts, flat)
			if err == nil && bytes.Equal(got, want) {
				return l, true
			}
		}
	}
	return nil, false
}

// bodyOp is an op of the body as the first step shows it, and whether it is
// a lead op.
type bodyOp struct {
	op   *Op
	lead bool
}

// stepBody is the body of a loop without lead ops: the first step's ops.
func stepBody(ops []*Op) []bodyOp {
	out := make([]bodyOp, len(ops))
	for i, op := range ops {
		out[i] = bodyOp{op: op}
	}
	return out
}

// pipelinedBodies reads the body of a software-pipelined loop from the ops
// up to its first store, the prologue P (the lead ops for tile 0) then the
// first step S (the lead ops for tile 1, which are those of the innermost
// level, and the other ops for tile 0). An op kind that fires twice there is
// an innermost lead op; P ends after the first firing of the last of them.
// The body interleaves P and S on their common ops; within a gap between
// two common ops either P's ops or S's come first, and both orders are
// candidates (Unroll decides). It returns none when no op kind fires twice
// (no lead op reads ahead) or the two orders of the common ops disagree.
func pipelinedBodies(p *Program, args []*Tensor, first int) [][]bodyOp {
	ops := p.Ops[:first+1]
	sigs := make([]string, len(ops))
	count := map[string]int{}
	firstAt := map[string]int{}
	for i, op := range ops {
		sigs[i] = opSig(p, args, op)
		if count[sigs[i]] == 0 {
			firstAt[sigs[i]] = i
		}
		count[sigs[i]]++
	}
	split := -1
	for sig, c := range count {
		switch {
		case c > 2:
			return nil
		case c == 2 && firstAt[sig]+1 > split:
			split = firstAt[sig] + 1
		}
	}
	if split < 0 {
		return nil
	}
	inP := map[string]bool{}
	for _, sg := range sigs[:split] {
		inP[sg] = true
	}
	var out [][]bodyOp
	for _, pFirst := range []bool{true, false} {
		var body, gap []bodyOp
		i := 0 // into P
		ok := true
		for j := split; j < len(ops) && ok; j++ {
			if !inP[sigs[j]] {
				gap = append(gap, bodyOp{op: ops[j]})
				continue
			}
			var pGap []bodyOp
			for ; i < split && sigs[i] != sigs[j]; i++ {
				pGap = append(pGap, bodyOp{op: ops[i], lead: true})
			}
			if i == split {
				ok = false // the orders disagree
				break
			}
			if pFirst {
				body = append(append(body, pGap...), gap...)
			} else {
				body = append(append(body, gap...), pGap...)
			}
			body = append(body, bodyOp{op: ops[i], lead: true})
			gap = nil
			i++
		}
		if !ok {
			return nil
		}
		var pGap []bodyOp
		for ; i < split; i++ {
			pGap = append(pGap, bodyOp{op: ops[i], lead: true})
		}
		if pFirst {
			body = append(append(body, pGap...), gap...)
		} else {
			body = append(append(body, gap...), pGap...)
		}
		out = append(out, body)
	}
	return out
}

// maxLoopAxes bounds the tiled axes Recognize tries.
const maxLoopAxes = 3

// axisChoices lists the ordered choices of distinct axes, each split into a
// count > 1 of equal tiles, whose counts multiply to steps.
func axisChoices(ax mapping.Axes, steps int) [][]LoopAxis {
	var out [][]LoopAxis
	list := ax.List()
	var rec func(cur []LoopAxis, rem int, used map[string]bool)
	rec = func(cur []LoopAxis, rem int, used map[string]bool) {
		if rem == 1 {
			out = append(out, append([]LoopAxis(nil), cur...))
			return
		}
		if len(cur) == maxLoopAxes {
			return
		}
		for _, a := range list {
			if used[a.Name] || a.Size < 2 {
				continue
			}
			for c := 2; c <= a.Size && c <= rem; c++ {
				if a.Size%c != 0 || rem%c != 0 {
					continue
				}
				dim := mapping.Sym(a.Name, a.Size)
				if a.Size/c > 1 {
					dim = dim.Div(a.Size / c)
				}
				used[a.Name] = true
				rec(append(cur, LoopAxis{Name: a.Name, Count: c, Dim: dim}), rem/c, used)
				used[a.Name] = false
			}
		}
	}
	rec(nil, steps, map[string]bool{})
	return out
}

// opSig is the signature of an op: what its firings share (context, kind,
// the views or arguments it moves, its stages' parameters).
func opSig(p *Program, args []*Tensor, op *Op) string {
	var b strings.Builder
	b.WriteString(string(op.Context) + "/" + string(op.Kind))
	for _, nm := range []string{op.Src, op.Dst} {
		t, _ := p.Tensor(nm)
		isArg := false
		for _, a := range args {
			if a.Name == nm {
				isArg = true
			}
		}
		switch {
		case t != nil && t.View != "":
			b.WriteString("/view:" + t.View)
		case t != nil && isArg:
			b.WriteString("/arg:" + nm)
		default:
			b.WriteString("/-")
		}
	}
	for _, st := range op.Stages {
		fmt.Fprintf(&b, "|%s %s %s %s %s %s", st.Kind, dtypeText(st.DType), text(st.Time), text(st.Packet),
			text(st.Slice), st.Param)
	}
	return b.String()
}

// guess builds the loop of a choice of axes from its body ops (in order,
// lead or not): each op's level from how often an op of its kind fires,
// its slots from the tensors its firings produce.
func guess(p *Program, args []*Tensor, axes []LoopAxis, body []bodyOp) (*TileLoop, bool) {
	l := &TileLoop{Axes: axes}
	isArg := map[string]*Tensor{}
	for _, t := range args {
		isArg[t.Name] = t
	}
	tensor := func(name string) *Tensor { t, _ := p.Tensor(name); return t }
	sig := func(op *Op) string { return opSig(p, args, op) }
	sigs := map[string]int{}
	for _, bo := range body {
		sigs[sig(bo.op)]++
	}
	firings := map[string][]*Op{}
	for _, op := range p.Ops {
		s := sig(op)
		firings[s] = append(firings[s], op)
	}
	slotNames := map[string]string{} // tensor → slot
	levels := make([]int, len(body))
	// First every op's level and slot, then the body ops, whose reads name
	// slots that a later op of the body may produce (a lead load).
	for i, bo := range body {
		op := bo.op
		s := sig(op)
		if sigs[s] != 1 {
			return nil, false // two ops of one kind in a step: ambiguous
		}
		n := len(firings[s])
		level := -1
		for lv := 0; lv <= len(axes); lv++ {
			if l.Steps()/l.Stride(lv) == n {
				level = lv
			}
		}
		if level < 0 {
			return nil, false
		}
		levels[i] = level
		// The tensor it produces: a slot over its firings' products.
		produced := func(o *Op) string {
			if o.Kind == OpChain {
				return o.Stages[len(o.Stages)-1].Tensor
			}
			return o.Dst
		}
		out := produced(op)
		if t := tensor(out); t != nil && t.View == "" && isArg[out] == nil {
			var names []string
			seen := map[string]bool{}
			for _, f := range firings[s] {
				nm := produced(f)
				if !seen[nm] {
					seen[nm] = true
					names = append(names, nm)
				}
			}
			// Double buffers the loop declares but does not reach (a
			// tensor loaded once of a double-buffered loop): x0 with x1,
			// x2, ... declared.
			if pre, ok := strings.CutSuffix(names[len(names)-1], strconv.Itoa(len(names)-1)); ok && pre != "" {
				for k := len(names); tensor(pre+strconv.Itoa(k)) != nil; k++ {
					names = append(names, pre+strconv.Itoa(k))
				}
			}
			slot := slotName(names)
			if slot == "" || tensor(slot) != nil && len(names) > 1 {
				return nil, false
			}
			ls := &LoopSlot{Name: slot}
			for _, nm := range names {
				ls.Tensors = append(ls.Tensors, tensor(nm))
				slotNames[nm] = slot
			}
			l.Slots = append(l.Slots, ls)
		}
	}
	// The slots in the program's order of their tensors (the builder's, which
	// Unroll keeps).
	pos := map[string]int{}
	for i, t := range p.Tensors {
		pos[t.Name] = i
	}
	sort.SliceStable(l.Slots, func(a, b int) bool { return pos[l.Slots[a].Tensors[0].Name] < pos[l.Slots[b].Tensors[0].Name] })
	rename := func(nm string) string {
		if s, ok := slotNames[nm]; ok {
			return s
		}
		return nm
	}
	for i, bo := range body {
		op := bo.op
		bodyCopy := *op
		// Views.
		for _, nm := range []*string{&bodyCopy.Src, &bodyCopy.Dst} {
			t := tensor(*nm)
			if t == nil || t.View == "" {
				continue
			}
			same := 0
			for _, w := range l.Views {
				if w.Base == t.View {
					same++
				}
			}
			v, ok := loopView(l, isArg[t.View], same)
			if !ok {
				return nil, false
			}
			l.Views = append(l.Views, v)
			*nm = v.Name
		}
		// Slot names.
		if bodyCopy.Kind != OpChain {
			if t := tensor(bodyCopy.Src); t != nil && t.View == "" {
				bodyCopy.Src = rename(bodyCopy.Src)
			}
			if t := tensor(bodyCopy.Dst); t != nil && t.View == "" {
				bodyCopy.Dst = rename(bodyCopy.Dst)
			}
		}
		bodyCopy.DMA = nil
		if bodyCopy.Kind == OpChain {
			bodyCopy.Stages = nil
			for _, st := range op.Stages {
				s := *st
				s.Config = nil
				s.Tensor = rename(s.Tensor)
				bodyCopy.Stages = append(bodyCopy.Stages, &s)
			}
		}
		l.Body = append(l.Body, &LoopOp{Op: &bodyCopy, Level: levels[i], Lead: bo.lead})
	}
	return l, true
}

// loopView is the tile view of base over the loop axes its layout holds.
func loopView(l *TileLoop, base *Tensor, n int) (*LoopView, bool) {
	if base == nil {
		return nil, false
	}
	// The n-th view of one tensor in the body is `<base>_t<n>` after the
	// first, `<base>_t`.
	v := &LoopView{Name: base.Name + "_t", Base: base.Name}
	if n > 0 {
		v.Name += strconv.Itoa(n + 1)
	}
	kind := mapping.Top
	if base.Role == Output {
		kind = mapping.Bottom // view_mut (reference-notes §2.8)
	}
	m := base.Element
	for k, a := range l.Axes {
		if !holds(base.Element, a.Name) {
			continue
		}
		var err error
		if m, err = mapping.TileView(m, a.Dim, 1, kind); err != nil {
			return nil, false
		}
		v.Axes = append(v.Axes, k)
		v.Maps = append(v.Maps, m)
	}
	if len(v.Axes) == 0 {
		return nil, false
	}
	return v, true
}

// holds reports whether mapping e names axis a.
func holds(e *mapping.Expr, a string) bool {
	ax, err := mapping.AxesOf(e)
	if err != nil {
		return false
	}
	for _, x := range ax.List() {
		if x.Name == a {
			return true
		}
	}
	return false
}

// slotName is the common name of a slot's tensors: the name of a single
// tensor, or the prefix of `<prefix>0`, `<prefix>1`, ... (the builder's
// double buffers in0_dm0, in0_dm1); "" when the names are not so.
func slotName(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	prefix := strings.TrimSuffix(names[0], "0")
	if prefix == names[0] || prefix == "" {
		return ""
	}
	for k, nm := range names {
		if nm != prefix+strconv.Itoa(k) {
			return ""
		}
	}
	return prefix
}

// flatJSON is the JSON of tensors and ops without lowered configurations.
func flatJSON(ts []*Tensor, ops []*Op) ([]byte, error) {
	q := &Program{Name: "x", Chips: 1, Tensors: ts}
	for _, op := range ops {
		o := *op
		o.DMA = nil
		o.Stages = nil
		for _, st := range op.Stages {
			s := *st
			s.Config = nil
			o.Stages = append(o.Stages, &s)
		}
		q.Ops = append(q.Ops, &o)
	}
	return json.Marshal(q)
}
