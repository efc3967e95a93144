package mapping

import "fmt"

// Program is an expression compiled for hot loops: [Program.Eval] computes
// the same function as [Expr.Map] into a caller-owned slice and never
// allocates. A Program is immutable and safe for concurrent use.
type Program struct {
	nodes   []pnode
	kids    []int32 // pair parts, indexed by pnode.first
	size    int
	coords  int   // number of coordinate slots (the axes)
	sizes   []int // per coordinate slot: the axis size (0 when e does not use the slot)
	levels  []plevel
	scratch int // dst slots after the coordinates: composite positions and orders
}

// plevel is the expression or one composite atom: its root node and the
// composite atoms whose positions it pools (see Expr.Map).
type plevel struct {
	root  int32
	atoms []patom
}

// patom is a pooled composite atom: its summed position lives in dst[pos],
// its first-contribution order + 1 in dst[ord]; it decodes through level.
type patom struct {
	size  int
	level int32
	pos   int
	ord   int
}

type pnode struct {
	kind  Kind
	pad   PadKind
	slot  int32 // symbol / chain: coordinate slot or atom position slot
	arg   int   // chain: position multiplier; padding: inner size
	size  int
	first int32 // pair: first part in Program.kids; chain on an atom: its order slot
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
	c := &compiler{p: p, slot: slot}
	if _, err := c.level(e); err != nil {
		return nil, err
	}
	return p, nil
}

type compiler struct {
	p     *Program
	slot  func(string, int) (int, error)
	atoms map[string]int // composite atoms of the level being compiled
	lv    int32
}

// level compiles e as a new level and its atoms as sub-levels.
func (c *compiler) level(e *Expr) (int32, error) {
	p := c.p
	id := int32(len(p.levels))
	p.levels = append(p.levels, plevel{})
	saveAtoms, saveLv := c.atoms, c.lv
	c.atoms, c.lv = map[string]int{}, id
	var keys []*Expr
	root, err := c.add(e, &keys)
	c.atoms, c.lv = saveAtoms, saveLv
	if err != nil {
		return 0, err
	}
	p.levels[id].root = root
	for j, a := range keys {
		sub, err := c.level(a)
		if err != nil {
			return 0, err
		}
		p.levels[id].atoms[j].level = sub
	}
	return id, nil
}

func (c *compiler) add(e *Expr, keys *[]*Expr) (int32, error) {
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
			key := a.String()
			j, ok := c.atoms[key]
			if !ok {
				j = len(*keys)
				c.atoms[key] = j
				*keys = append(*keys, a)
				lv := &p.levels[c.lv]
				lv.atoms = append(lv.atoms, patom{size: a.size, pos: p.coords + p.scratch, ord: p.coords + p.scratch + 1})
				p.scratch += 2
			}
			at := p.levels[c.lv].atoms[j]
			p.nodes[id].kind = pChainAtom
			p.nodes[id].slot, p.nodes[id].first = int32(at.pos), int32(at.ord)
		}
	case KindPadding:
		p.nodes[id].arg = e.kids[0].size
		k, err := c.add(e.kids[0], keys)
		if err != nil {
			return 0, err
		}
		p.nodes[id].n = k
	case KindPair:
		kids := make([]int32, len(e.kids))
		for j, k := range e.kids {
			n, err := c.add(k, keys)
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
func (p *Program) Slots() int { return p.coords + p.scratch }

// Eval writes the coordinates of position i into dst[:Coords()] (one per
// axis slot, zero for axes the cell does not touch; dst[Coords():Slots()]
// is scratch) and returns the cell kind and, for padding, its kind: the
// same answer as [Expr.Map], composite and overshoot rules included. dst
// must have at least [Program.Slots] elements, else Eval reports OOB; on a
// non-live result its contents are unspecified. Eval does not allocate.
func (p *Program) Eval(i int, dst []int) (CellKind, PadKind) {
	if i < 0 || i >= p.size || len(dst) < p.coords+p.scratch {
		return OOB, Top
	}
	clear(dst[:p.coords])
	if k, pk := p.evalLevel(0, i, dst); k != Live {
		return k, pk
	}
	for s, n := range p.sizes {
		if n != 0 && dst[s] >= n {
			return Pad, Top // overshoot: docs/spec-decisions.md
		}
	}
	return Live, Top
}

// evalState ranks padding in major-to-minor order within one level.
type evalState struct {
	order   int
	padOrd  int
	padKind PadKind
}

// evalLevel is Expr.levelCell over the program.
func (p *Program) evalLevel(lv int32, i int, dst []int) (CellKind, PadKind) {
	L := &p.levels[lv]
	for _, a := range L.atoms {
		dst[a.pos], dst[a.ord] = 0, 0
	}
	st := evalState{padOrd: -1}
	p.eval(L.root, i, dst, &st)
	for _, a := range L.atoms {
		q, o := dst[a.pos], dst[a.ord]-1
		if q == 0 || st.padOrd >= 0 && o > st.padOrd {
			continue // position 0 is live and empty; a later padding cannot win
		}
		k, pk := Pad, Top // a position beyond the atom: overshoot
		if q < a.size {
			k, pk = p.evalLevel(a.level, q, dst)
		}
		if k != Live && (st.padOrd < 0 || o < st.padOrd) {
			st.padOrd, st.padKind = o, pk
		}
	}
	if st.padOrd >= 0 {
		return Pad, st.padKind
	}
	return Live, Top
}

func (p *Program) eval(id int32, i int, dst []int, st *evalState) {
	for {
		n := &p.nodes[id]
		switch n.kind {
		case KindSymbol:
			st.order++
			dst[n.slot] += i
			return
		case KindBroadcast, pChainNone:
			st.order++
			return
		case pChainSym:
			st.order++
			dst[n.slot] += i * n.arg
			return
		case pChainAtom:
			if dst[n.first] == 0 {
				dst[n.first] = st.order + 1
			}
			st.order++
			dst[n.slot] += i * n.arg
			return
		case KindPadding:
			if i >= n.arg {
				if st.padOrd < 0 {
					st.padOrd, st.padKind = st.order, n.pad
				}
				st.order++
				return
			}
			id = n.n
		case KindPair:
			suffix := n.size
			for _, c := range p.kids[n.first : n.first+n.n] {
				cs := p.nodes[c].size
				suffix /= cs
				p.eval(c, (i/suffix)%cs, dst, st)
			}
			return
		default:
			return
		}
	}
}

// AxesOf declares the plain axes the expressions name, in first-use order,
// with the sizes their symbols carry, so that expressions built in code can
// be compiled without the program's declaration. It fails for a skewed axis
// (its base axes are not named by the expression) and for two symbols of
// one name with different sizes.
func AxesOf(es ...*Expr) (Axes, error) {
	var list []Axis
	sizes := map[string]int{}
	var err error
	for _, e := range es {
		if e == nil {
			continue
		}
		if e.Err() != nil {
			return Axes{}, e.Err()
		}
		e.walk(func(x *Expr) {
			if x.kind != KindSymbol || err != nil {
				return
			}
			if x.skew != nil {
				err = fmt.Errorf("skewed axis %s: declare its base axes", x.name)
				return
			}
			if s, ok := sizes[x.name]; ok {
				if s != x.size {
					err = fmt.Errorf("axis %s has sizes %d and %d", x.name, s, x.size)
				}
				return
			}
			sizes[x.name] = x.size
			list = append(list, Axis{Name: x.name, Size: x.size})
		})
	}
	if err != nil {
		return Axes{}, err
	}
	return NewAxes(list...)
}
