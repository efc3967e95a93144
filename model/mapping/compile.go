package mapping

import "fmt"

// Program is an expression compiled for hot loops: [Program.Eval] computes
// the same function as [Expr.Map] into a caller-owned coordinate slice and
// never allocates. A Program is immutable and safe for concurrent use.
type Program struct {
	nodes []pnode
	kids  []int32 // pair parts, indexed by pnode.first
	size  int
	slots int
	sizes []int // per slot: the axis size (0 when e does not use the slot)
}

type pnode struct {
	kind  Kind
	pad   PadKind
	slot  int32 // symbol
	arg   int   // stride / padding threshold (inner size) / unused
	size  int
	first int32 // pair: first part in Program.kids
	n     int32 // pair: number of parts; unary: child node index in n
}

// Compile compiles e against axes: symbol A writes its coordinate to
// dst[s] where s is A's declaration slot ([Axes.Slot]). Every symbol of e
// must be declared in axes with the same size. Linear combinations cannot be
// compiled (their positions hold several indices).
func Compile(e *Expr, axes Axes) (*Program, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	slot := func(name string, size int) (int, error) {
		s, ok := axes.Slot(name)
		if !ok {
			return 0, fmt.Errorf("axis %q of %s is not declared", name, e)
		}
		if axes.list[s].Size != size {
			return 0, fmt.Errorf("axis %s has size %d in %s but %d in the declaration", name, size, e, axes.list[s].Size)
		}
		return s, nil
	}
	return compileWith(e, axes.Len(), slot)
}

func compileWith(e *Expr, nslots int, slot func(string, int) (int, error)) (*Program, error) {
	if e.hasLinear() {
		return nil, fmt.Errorf("cannot compile %s: a linear combination maps a position to several indices (use MapAll)", e)
	}
	p := &Program{size: e.size, slots: nslots, sizes: make([]int, nslots)}
	if _, err := p.add(e, slot); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Program) add(e *Expr, slot func(string, int) (int, error)) (int32, error) {
	id := int32(len(p.nodes))
	p.nodes = append(p.nodes, pnode{kind: e.kind, pad: e.pad, size: e.size, arg: e.arg})
	switch e.kind {
	case KindSymbol:
		s, err := slot(e.name, e.size)
		if err != nil {
			return 0, err
		}
		p.nodes[id].slot = int32(s)
		p.sizes[s] = e.size
	case KindStride, KindModulo, KindResize, KindPadding:
		if e.kind == KindPadding {
			p.nodes[id].arg = e.kids[0].size
		}
		c, err := p.add(e.kids[0], slot)
		if err != nil {
			return 0, err
		}
		p.nodes[id].n = c
	case KindPair:
		kids := make([]int32, len(e.kids))
		for j, k := range e.kids {
			c, err := p.add(k, slot)
			if err != nil {
				return 0, err
			}
			kids[j] = c
		}
		p.nodes[id].first = int32(len(p.kids))
		p.nodes[id].n = int32(len(kids))
		p.kids = append(p.kids, kids...)
	}
	return id, nil
}

// Size is the number of buffer positions.
func (p *Program) Size() int { return p.size }

// Slots is the length dst must have in [Program.Eval].
func (p *Program) Slots() int { return p.slots }

// Eval writes the coordinates of position i into dst (one per axis slot,
// zero for axes the cell does not touch) and returns the cell kind and, for
// padding, its kind: the same answer as [Expr.Map], overshoot rule
// included. dst must have at least [Program.Slots] elements; on a
// non-live result its contents are unspecified. Eval does not allocate.
func (p *Program) Eval(i int, dst []int) (CellKind, PadKind) {
	if i < 0 || i >= p.size || len(dst) < p.slots {
		return OOB, Top
	}
	clear(dst[:p.slots])
	k, pk := p.eval(0, i, dst)
	if k != Live {
		return k, pk
	}
	for s, n := range p.sizes {
		if n != 0 && dst[s] >= n {
			return Pad, Top // overshoot: docs/spec-decisions.md
		}
	}
	return Live, Top
}

func (p *Program) eval(id int32, i int, dst []int) (CellKind, PadKind) {
	for {
		n := &p.nodes[id]
		switch n.kind {
		case KindSymbol:
			dst[n.slot] += i
			return Live, Top
		case KindBroadcast:
			return Live, Top
		case KindStride:
			i *= n.arg
			id = n.n
		case KindModulo, KindResize:
			id = n.n
		case KindPadding:
			if i >= n.arg {
				return Pad, n.pad
			}
			id = n.n
		case KindPair:
			suffix := n.size
			for _, c := range p.kids[n.first : n.first+n.n] {
				cs := p.nodes[c].size
				suffix /= cs
				if k, pk := p.eval(c, (i/suffix)%cs, dst); k != Live {
					return k, pk
				}
			}
			return Live, Top
		default:
			return OOB, Top
		}
	}
}
