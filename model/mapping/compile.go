package mapping

import (
	"fmt"
	"sort"
)

// Program is an expression compiled for hot loops: [Program.Eval] computes
// the same function as [Expr.Map] into a caller-owned slice and never
// allocates. A Program is immutable and safe for concurrent use.
type Program struct {
	nodes  []pnode
	kids   []int32 // pair parts, indexed by pnode.first
	size   int
	coords int   // number of coordinate slots (the axes)
	sizes  []int // per coordinate slot: the axis size (0 when e does not use the slot)
	atoms  []patom
}

// patom is a composite atom: its accumulated position lives in
// dst[coords+index]; it is decoded by evaluating node root.
type patom struct {
	key  string
	root int32
	size int
}

type pnode struct {
	kind  Kind
	pad   PadKind
	slot  int32 // symbol slot, chain target slot or atom accumulator
	arg   int   // chain: position multiplier; padding: inner size
	size  int
	first int32 // pair: first part in Program.kids
	n     int32 // pair: number of parts; padding: child node
}

// node kinds beyond Kind used only in programs.
const (
	pChainSym  Kind = 100 + iota // a /,%,= chain on a symbol: dst[slot] += i·arg
	pChainNone                   // a chain on a broadcast: nothing
	pChainAtom                   // a chain on a composite atom: dst[slot] += i·arg (a position)
)

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
	p := &Program{size: e.size, coords: nslots, sizes: make([]int, nslots)}
	// Collect the composite atoms first so that accumulator slots follow
	// the decoding order (largest atom first, as in Expr.Map).
	var atoms []*Expr
	seen := map[string]bool{}
	e.walk(func(x *Expr) {
		switch x.kind {
		case KindStride, KindModulo, KindResize:
			a, _ := x.chain()
			if a.kind != KindSymbol && a.kind != KindBroadcast {
				if k := a.String(); !seen[k] {
					seen[k] = true
					atoms = append(atoms, a)
				}
			}
		}
	})
	sort.SliceStable(atoms, func(i, j int) bool { return atomBefore(atoms[i].String(), atoms[j].String()) })
	index := map[string]int{}
	for j, a := range atoms {
		index[a.String()] = j
		p.atoms = append(p.atoms, patom{key: a.String(), size: a.size})
	}
	c := &compiler{p: p, slot: slot, atomIndex: index, atomRoot: map[string]int32{}}
	if _, err := c.add(e); err != nil {
		return nil, err
	}
	for j, a := range atoms {
		r, ok := c.atomRoot[a.String()]
		if !ok {
			var err error
			if r, err = c.add(a); err != nil {
				return nil, err
			}
			c.atomRoot[a.String()] = r
		}
		p.atoms[j].root = r
	}
	return p, nil
}

type compiler struct {
	p         *Program
	slot      func(string, int) (int, error)
	atomIndex map[string]int
	atomRoot  map[string]int32
}

func (c *compiler) add(e *Expr) (int32, error) {
	p := c.p
	id := int32(len(p.nodes))
	p.nodes = append(p.nodes, pnode{kind: e.kind, pad: e.pad, size: e.size, arg: e.arg})
	switch e.kind {
	case KindSymbol:
		s, err := c.slot(e.name, e.size)
		if err != nil {
			return 0, err
		}
		p.nodes[id].slot = int32(s)
		p.sizes[s] = e.size
	case KindStride, KindModulo, KindResize:
		a, mul := e.chain()
		p.nodes[id].arg = mul
		switch a.kind {
		case KindSymbol:
			s, err := c.slot(a.name, a.size)
			if err != nil {
				return 0, err
			}
			p.sizes[s] = a.size
			p.nodes[id].kind, p.nodes[id].slot = pChainSym, int32(s)
		case KindBroadcast:
			p.nodes[id].kind = pChainNone
		default:
			p.nodes[id].kind = pChainAtom
			p.nodes[id].slot = int32(p.coords + c.atomIndex[a.String()])
		}
	case KindPadding:
		p.nodes[id].arg = e.kids[0].size
		k, err := c.add(e.kids[0])
		if err != nil {
			return 0, err
		}
		p.nodes[id].n = k
	case KindPair:
		kids := make([]int32, len(e.kids))
		for j, k := range e.kids {
			n, err := c.add(k)
			if err != nil {
				return 0, err
			}
			kids[j] = n
		}
		p.nodes[id].first = int32(len(p.kids))
		p.nodes[id].n = int32(len(kids))
		p.kids = append(p.kids, kids...)
	}
	return id, nil
}

// Size is the number of buffer positions.
func (p *Program) Size() int { return p.size }

// Coords is the number of coordinate slots: the axes passed to [Compile].
func (p *Program) Coords() int { return p.coords }

// Slots is the length dst must have in [Program.Eval]: [Program.Coords]
// coordinates followed by scratch space for composite atoms.
func (p *Program) Slots() int { return p.coords + len(p.atoms) }

// Eval writes the coordinates of position i into dst[:Coords()] (one per
// axis slot, zero for axes the cell does not touch; dst[Coords():Slots()]
// is scratch) and returns the cell kind and, for padding, its kind: the
// same answer as [Expr.Map], composite and overshoot rules included. dst
// must have at least [Program.Slots] elements, else Eval reports OOB; on a
// non-live result its contents are unspecified. Eval does not allocate.
func (p *Program) Eval(i int, dst []int) (CellKind, PadKind) {
	n := p.coords + len(p.atoms)
	if i < 0 || i >= p.size || len(dst) < n {
		return OOB, Top
	}
	clear(dst[:n])
	if k, pk := p.eval(0, i, dst); k != Live {
		return k, pk
	}
	for j, a := range p.atoms { // largest atom first (see finish in mapfn.go)
		q := dst[p.coords+j]
		if q == 0 {
			continue // position 0 of any mapping is live and empty
		}
		if q >= a.size {
			return Pad, Top // overshoot: docs/spec-decisions.md
		}
		if k, pk := p.eval(a.root, q, dst); k != Live {
			return k, pk
		}
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
		case KindBroadcast, pChainNone:
			return Live, Top
		case pChainSym, pChainAtom:
			dst[n.slot] += i * n.arg
			return Live, Top
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
