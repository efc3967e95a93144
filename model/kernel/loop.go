package kernel

import (
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

// LoopSlot is an on-chip tensor of the body: an op that produces it for
// tile t produces Tensors[Index(t)], t % Period / Stride % len(Tensors)
// (no `% Period` for Period 0). A double buffer alternates with its
// producer's fires: Stride is the stride of the producer's level, Period 0
// (002 L4151-4158). A K-chunked loop's running sum alternates with the
// chunk: Stride 1, Period the chunk count (docs/spec-decisions.md "K
// chunks: the split reduce's spelling and buffers").
type LoopSlot struct {
	Name    string
	Tensors []*Tensor
	Stride  int
	Period  int
}

// Index is the position in Tensors of the tensor produced for tile t.
func (s *LoopSlot) Index(t int) int {
	if len(s.Tensors) < 2 || s.Stride < 1 {
		return 0
	}
	if s.Period > 0 {
		t %= s.Period
	}
	return t / s.Stride % len(s.Tensors)
}

// Phase is when, among the tiles of its level, a body op fires: by the
// index c of the tile over the axes Level.. (t % Stride(Level)), of
// Stride(Level) values. The phases other than PhaseFirst spell a
// K-chunked loop (constraints.Space.TileK): its contracted axes are the
// innermost, their tiles the K chunks of one output tile, and chunk 0's
// main chain, the other chunks' main chains, the split reduce's passes and
// its last pass with the store of the output tile fire at different chunks
// (docs/spec-decisions.md "K chunks: the split reduce's spelling and
// buffers").
type Phase uint8

const (
	// PhaseFirst fires at c = 0: the indices of the axes Level.. are all
	// 0. At Level len(Axes) (no axes inside) it fires at every tile.
	PhaseFirst Phase = iota
	// PhaseRest fires at c ≠ 0: every chunk but the first.
	PhaseRest
	// PhaseMiddle fires at 0 < c < Stride(Level) - 1: every chunk but the
	// first and the last.
	PhaseMiddle
	// PhaseLast fires at c = Stride(Level) - 1: the indices of the axes
	// Level.. are all their last.
	PhaseLast
)

// String names the phase.
func (ph Phase) String() string {
	switch ph {
	case PhaseFirst:
		return "first"
	case PhaseRest:
		return "rest"
	case PhaseMiddle:
		return "middle"
	case PhaseLast:
		return "last"
	}
	return fmt.Sprintf("phase(%d)", uint8(ph))
}

// MinStride is the least stride of a level at which the phase is neither
// every tile nor none or another phase's: 1 for PhaseFirst, 2 for
// PhaseLast, 3 for PhaseRest (at 2 it is PhaseLast) and PhaseMiddle.
func (ph Phase) MinStride() int {
	switch ph {
	case PhaseFirst:
		return 1
	case PhaseLast:
		return 2
	case PhaseRest, PhaseMiddle:
		return 3
	}
	return -1
}

// LoopOp is one op of the body. It fires at the tiles of its Level's Phase:
// by default (PhaseFirst) at the tiles whose indices of the axes Level..
// are all 0, so Level len(Axes) fires at every tile, Level 0 at the first
// only. A lead op fires for the tile after the step's (see TileLoop).
type LoopOp struct {
	Op    *Op
	Level int
	Lead  bool
	Phase Phase
}

// Fires reports whether body op lo fires for tile t.
func (l *TileLoop) Fires(lo *LoopOp, t int) bool {
	s := l.Stride(lo.Level)
	c := t % s
	switch lo.Phase {
	case PhaseFirst:
		return c == 0
	case PhaseRest:
		return c != 0
	case PhaseMiddle:
		return c != 0 && c != s-1
	case PhaseLast:
		return c == s-1
	}
	return false
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
	produce := func(name string, tile int) (string, error) {
		if _, ok := base[name]; ok {
			return name, nil
		}
		s := l.Slot(name)
		if s == nil || len(s.Tensors) == 0 {
			return "", fmt.Errorf("%q is no slot of the loop", name)
		}
		c := s.Tensors[s.Index(tile)].Name
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
				op.Dst, err = produce(op.Dst, tile)
			}
		case OpToHBM:
			op.Src, err = use(op.Src, tile)
			if err == nil {
				if v := l.View(op.Dst); v != nil {
					op.Dst, err = viewTensor(v)
				} else {
					op.Dst, err = produce(op.Dst, tile)
				}
			}
		case OpChain:
			op.Stages = make([]*Stage, len(lo.Op.Stages))
			for i, st := range lo.Op.Stages {
				s := *st
				if s.Tensor != "" {
					if i == len(lo.Op.Stages)-1 {
						s.Tensor, err = produce(s.Tensor, tile)
					} else {
						s.Tensor, err = use(s.Tensor, tile)
					}
				}
				// An interleaved begin's second tensor (002 L1866).
				if bi, perr := ParseBeginInterleave(s.Param); err == nil && perr == nil && bi != nil && s.Kind == StBegin {
					bi.Tensor, err = use(bi.Tensor, tile)
					s.Param = bi.String()
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
		ops = append(ops, &op)
		return nil
	}
	for b, lo := range l.Body {
		if lo.Level < 0 || lo.Level > n {
			return nil, nil, fmt.Errorf("body[%d]: level %d outside 0..%d", b, lo.Level, n)
		}
		if ms := lo.Phase.MinStride(); ms < 0 || l.Stride(lo.Level) < ms {
			return nil, nil, fmt.Errorf("body[%d]: phase %s at level %d, whose tiles are %d (want %d or more)", b, lo.Phase, lo.Level, l.Stride(lo.Level), max(ms, 1))
		}
	}
	for _, s := range l.Slots {
		if len(s.Tensors) > 1 && (s.Stride < 1 || s.Period < 0) {
			return nil, nil, fmt.Errorf("slot %s: buffer index t %% %d / %d: want a stride of 1 or more and a period of 0 or more", s.Name, s.Period, s.Stride)
		}
	}
	// The prologue: the lead ops for tile 0.
	for b, lo := range l.Body {
		if lo.Lead && l.Fires(lo, 0) {
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
			if tile >= steps || !l.Fires(lo, tile) {
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
				// The tile digit: the axis's top digit (`B / 256` for 2
				// tiles of B = 512) first, then the lower ones, each tile a
				// strided share of the axis (`B / 32 % 2`, `B % 2`: a
				// digit order with the tile digit below others).
				for stride := a.Size / c; stride >= 1; stride-- {
					if (a.Size/c)%stride != 0 {
						continue
					}
					dim := mapping.Sym(a.Name, a.Size)
					if stride > 1 {
						dim = dim.Div(stride)
					}
					if stride*c < a.Size {
						dim = dim.Mod(c)
					}
					used[a.Name] = true
					rec(append(cur, LoopAxis{Name: a.Name, Count: c, Dim: dim}), rem/c, used)
					used[a.Name] = false
				}
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
		param := st.Param
		// An interleaved begin's second tensor changes with the step as
		// its first does (a running sum, K chunks): its axis is the sig.
		if bi, err := ParseBeginInterleave(param); st.Kind == StBegin && err == nil && bi != nil {
			param = "interleave " + bi.Axis
		}
		fmt.Fprintf(&b, "|%s %s %s %s %s %s", st.Kind, dtypeText(st.DType), text(st.Time), text(st.Packet),
			text(st.Slice), param)
	}
	return b.String()
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
