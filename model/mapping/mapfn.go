package mapping

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Coord is one axis coordinate of an [Index].
type Coord struct {
	Axis  string
	Value int
}

// Index is a tensor index: axis → coordinate (002 L605-606). Coordinate 0
// is dropped (002 L671-673: `i![A: 0]` is `i![]`), and coordinates are kept
// in byte-wise axis-name order, so equal indices have equal Coords and
// String. The zero value is the empty index {}.
type Index struct{ c []Coord }

// IndexOf builds an index from coordinates: values of a repeated axis add
// up (index contributions are additive, reference-notes §2.4) and zero
// coordinates are dropped.
func IndexOf(coords ...Coord) Index {
	var x Index
	for _, c := range coords {
		x = x.with(c.Axis, x.Get(c.Axis)+c.Value)
	}
	return x
}

// Get returns the coordinate of the named axis (0 when absent).
func (x Index) Get(axis string) int {
	for _, c := range x.c {
		if c.Axis == axis {
			return c.Value
		}
	}
	return 0
}

// Coords returns the non-zero coordinates in axis-name order.
func (x Index) Coords() []Coord { return append([]Coord(nil), x.c...) }

// Len is the number of non-zero coordinates.
func (x Index) Len() int { return len(x.c) }

// Equal reports whether two indices hold the same coordinates.
func (x Index) Equal(y Index) bool {
	if len(x.c) != len(y.c) {
		return false
	}
	for i := range x.c {
		if x.c[i] != y.c[i] {
			return false
		}
	}
	return true
}

// String prints the index as `{A: 1, B: 7}`, axes in name order; the empty
// index is `{}`.
func (x Index) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range x.c {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Axis)
		b.WriteString(": ")
		b.WriteString(strconv.Itoa(c.Value))
	}
	b.WriteByte('}')
	return b.String()
}

func (x Index) clone() Index { return Index{c: append([]Coord(nil), x.c...)} }

// with returns a copy of x with axis set to v (removed when v is 0).
func (x Index) with(axis string, v int) Index {
	out := make([]Coord, 0, len(x.c)+1)
	for _, c := range x.c {
		if c.Axis != axis {
			out = append(out, c)
		}
	}
	if v != 0 {
		out = append(out, Coord{axis, v})
		sort.Slice(out, func(i, j int) bool { return out[i].Axis < out[j].Axis })
	}
	return Index{c: out}
}

// CellKind classifies what a buffer position holds.
type CellKind uint8

// Cell kinds (reference-notes §2.3 `enum Cell`).
const (
	Live  CellKind = iota // a tensor element: Cell.Index
	Pad                   // a padding cell of kind Cell.Pad
	OOB                   // the position is outside the buffer (i < 0 or i ≥ Size)
	Multi                 // several tensor elements (a linear combination, 002 L1014-1015): use MapAll
)

// String names the kind.
func (k CellKind) String() string {
	switch k {
	case Live:
		return "Live"
	case Pad:
		return "Pad"
	case OOB:
		return "OOB"
	case Multi:
		return "Multi"
	}
	return fmt.Sprintf("CellKind(%d)", k)
}

// Cell is what one buffer position holds.
type Cell struct {
	Kind  CellKind
	Pad   PadKind // for Kind == Pad
	Index Index   // for Kind == Live
}

// String prints a live cell as its index (`{B: 97}`), padding as
// `padding (Top)`, and `out of bounds` / `several indices`.
func (c Cell) String() string {
	switch c.Kind {
	case Live:
		return c.Index.String()
	case Pad:
		return "padding (" + c.Pad.String() + ")"
	case OOB:
		return "out of bounds"
	}
	return "several indices"
}

// Equal compares kinds, padding kinds and indices.
func (c Cell) Equal(d Cell) bool {
	if c.Kind != d.Kind {
		return false
	}
	switch c.Kind {
	case Live:
		return c.Index.Equal(d.Index)
	case Pad:
		return c.Pad == d.Pad
	}
	return true
}

// term is a coordinate contribution of a symbol, with the axis size for
// the overshoot check.
type term struct {
	axis  string
	size  int
	value int
}

// Map returns what buffer position i holds, exactly per reference-notes
// §2.4 (002 L621-903):
//
//   - i < 0 or i ≥ Size → OOB;
//   - Symbol A: {A: i}; Broadcast: {} (every position);
//   - E / s: E.Map(i·s); E % m and E = r: E.Map(i);
//   - E # p: padding of its kind when i ≥ |E|, else E.Map(i);
//   - pair L, R: L.Map(i / |R|) + R.Map(i % |R|), coordinates added per axis;
//     a padding cell of the major side wins over the minor side.
//
// Two rules make this exact where the manual's laws need it:
//
//   - Composite atoms: the operand X of a chain of /, %, = that is not a
//     symbol or broadcast (e.g. `[C, D # 64] / 13`) contributes a position
//     inside X; the positions contributed to structurally equal atoms of one
//     expression add up and are decoded through X.Map once (reference-notes
//     §2.5 `Atom::Composite`, `Index::finalize`). With one contribution this
//     is the plain rule above; with several it makes `[E / n, E % n] ≡ E` hold
//     for every E (002 L1023-1024). Padding precedence stays "major wins":
//     a composite that decodes to padding ranks at its first contribution.
//     See docs/spec-decisions.md "Mapping: composite atoms decode summed
//     positions".
//   - Overshoot: a summed coordinate that reaches its axis size (or a summed
//     position beyond its composite atom) holds no tensor element and is Top
//     padding (docs/spec-decisions.md "Mapping: coordinate overshoot is Top
//     padding").
//
// For an expression with a linear combination, a position that holds
// several indices gives Multi; see [Expr.MapAll]. Map allocates; hot loops
// use [Compile].
func (e *Expr) Map(i int) Cell {
	if e.Err() != nil || i < 0 || i >= e.size {
		return Cell{Kind: OOB}
	}
	if e.hasLinear() {
		cells := e.MapAll(i)
		if len(cells) == 1 {
			return cells[0]
		}
		return Cell{Kind: Multi}
	}
	k, pk, terms := e.levelCell(i)
	if k != Live {
		return Cell{Kind: k, Pad: pk}
	}
	return liveCell(terms)
}

// liveCell sums coordinate contributions per axis and applies the
// overshoot rule.
func liveCell(terms []term) Cell {
	var x Index
	for _, t := range terms {
		v := x.Get(t.axis) + t.value
		if v >= t.size {
			return Cell{Kind: Pad, Pad: Top} // overshoot: docs/spec-decisions.md
		}
		x = x.with(t.axis, v)
	}
	return Cell{Kind: Live, Index: x}
}

// level is the state of mapping one expression (or one composite atom) at
// one position: the symbol contributions, the pooled composite
// contributions, a counter of leaves in major-to-minor order, and the first
// structural padding met.
type level struct {
	terms   []term
	pool    []pooled
	order   int
	padOrd  int // -1: none
	padKind PadKind
}

// pooled is the summed position contributed to one composite atom, ranked
// at its first contribution.
type pooled struct {
	atom *Expr
	key  string
	pos  int
	ord  int
}

func newLevel() level { return level{padOrd: -1} }

func (lv *level) leaf() int {
	o := lv.order
	lv.order++
	return o
}

// levelCell maps e at i with its composite atoms decoded: padding (the
// earliest in major order), or live with raw coordinate contributions.
func (e *Expr) levelCell(i int) (CellKind, PadKind, []term) {
	lv := newLevel()
	e.walkAt(i, &lv)
	padOrd, padKind, terms := lv.padOrd, lv.padKind, lv.terms
	for _, p := range lv.pool {
		if p.pos == 0 || padOrd >= 0 && p.ord > padOrd {
			continue // position 0 is live and empty; a later padding cannot win
		}
		k, pk := Pad, Top // a position beyond the atom: overshoot
		var sub []term
		if p.pos < p.atom.size {
			k, pk, sub = p.atom.levelCell(p.pos)
		}
		if k != Live {
			if padOrd < 0 || p.ord < padOrd {
				padOrd, padKind = p.ord, pk
			}
			continue
		}
		terms = append(terms, sub...)
	}
	if padOrd >= 0 {
		return Pad, padKind, nil
	}
	return Live, Top, terms
}

// chain peels a chain of /, %, = off e: it returns the operand and the
// factor that turns a position of e into a position of the operand.
func (e *Expr) chain() (*Expr, int) {
	mul := 1
	x := e
	for {
		switch x.kind {
		case KindStride:
			mul *= x.arg // 002 L883: E / s maps i to E(i·s)
		case KindModulo, KindResize: // reference-notes §2.4: E % m and E = r keep the first cells
		default:
			return x, mul
		}
		x = x.kids[0]
	}
}

// walkAt visits e at 0 ≤ i < e.size, recording contributions and
// structural padding in lv. It visits every part of a pair (the composite
// pools need all contributions); padding precedence is decided by order.
func (e *Expr) walkAt(i int, lv *level) {
	switch e.kind {
	case KindSymbol:
		lv.leaf()
		if i > 0 {
			lv.terms = append(lv.terms, term{axis: e.name, size: e.size, value: i})
		}
	case KindBroadcast:
		lv.leaf()
	case KindStride, KindModulo, KindResize:
		o := lv.leaf()
		x, mul := e.chain()
		switch x.kind {
		case KindSymbol:
			if i*mul > 0 {
				lv.terms = append(lv.terms, term{axis: x.name, size: x.size, value: i * mul})
			}
		case KindBroadcast:
		default:
			lv.add(x, i*mul, o)
		}
	case KindPadding:
		if i >= e.kids[0].size {
			if o := lv.leaf(); lv.padOrd < 0 {
				lv.padOrd, lv.padKind = o, e.pad
			}
			return
		}
		e.kids[0].walkAt(i, lv)
	case KindPair:
		suffix := e.size
		for _, p := range e.kids {
			suffix /= p.size
			p.walkAt((i/suffix)%p.size, lv)
		}
	}
}

func (lv *level) add(x *Expr, pos, ord int) {
	key := x.String()
	for j := range lv.pool {
		if lv.pool[j].key == key {
			lv.pool[j].pos += pos
			return
		}
	}
	lv.pool = append(lv.pool, pooled{atom: x, key: key, pos: pos, ord: ord})
}

func (lv level) clone() level {
	lv.terms = append([]term(nil), lv.terms...)
	lv.pool = append([]pooled(nil), lv.pool...)
	return lv
}

// MapAll returns every cell position i holds. For expressions without a
// linear combination it is []Cell{e.Map(i)}. For $(e1:n1, ..., ed:nd) it
// enumerates every (s_1..s_d) with Σ s_k·n_k = i and sums the indices of
// e_k.Map(s_k) (002 L1009 and the sliding example 002 L1011-1016: position 4
// of $(N:1, F:2) holds {N: 4}, {F: 1, N: 2} and {F: 2}). The result lists the
// distinct live indices in String order; a position reached only through
// padding cells gives those padding cells; a position no combination reaches
// holds no element and gives Top padding. Pairs and the postfix operators
// combine MapAll results as Map combines cells.
func (e *Expr) MapAll(i int) []Cell {
	if e.Err() != nil || i < 0 || i >= e.size {
		return []Cell{{Kind: OOB}}
	}
	if !e.hasLinear() {
		return []Cell{e.Map(i)}
	}
	var out []Cell
	e.levelAll(i, func(k CellKind, pk PadKind, terms []term) {
		if k != Live {
			out = append(out, Cell{Kind: k, Pad: pk})
			return
		}
		out = append(out, liveCell(terms))
	})
	return dedupCells(out)
}

// levelAll is levelCell for expressions with linear combinations: it
// emits every alternative.
func (e *Expr) levelAll(i int, emit func(CellKind, PadKind, []term)) {
	e.walkAll(i, newLevel(), func(lv level) {
		resolvePool(lv, 0, lv.padOrd, lv.padKind, lv.terms, emit)
	})
}

func resolvePool(lv level, j, padOrd int, padKind PadKind, terms []term, emit func(CellKind, PadKind, []term)) {
	for ; j < len(lv.pool); j++ {
		p := lv.pool[j]
		if p.pos == 0 || padOrd >= 0 && p.ord > padOrd {
			continue
		}
		if p.pos >= p.atom.size {
			if padOrd < 0 || p.ord < padOrd {
				padOrd, padKind = p.ord, Top
			}
			continue
		}
		p.atom.levelAll(p.pos, func(k CellKind, pk PadKind, sub []term) {
			po, pkk, ts := padOrd, padKind, terms
			if k != Live {
				if po < 0 || p.ord < po {
					po, pkk = p.ord, pk
				}
			} else {
				ts = append(append([]term(nil), terms...), sub...)
			}
			resolvePool(lv, j+1, po, pkk, ts, emit)
		})
		return
	}
	if padOrd >= 0 {
		emit(Pad, padKind, nil)
		return
	}
	emit(Live, Top, terms)
}

// walkAll is walkAt with alternatives: k receives every resulting level.
func (e *Expr) walkAll(i int, lv level, k func(level)) {
	switch e.kind {
	case KindPadding:
		if i >= e.kids[0].size {
			lv = lv.clone()
			e.walkAt(i, &lv)
			k(lv)
			return
		}
		e.kids[0].walkAll(i, lv, k)
	case KindPair:
		e.pairWalk(0, i, e.size, lv, k)
	case KindLinear:
		e.linWalk(0, i, lv, k)
	default:
		lv = lv.clone()
		e.walkAt(i, &lv)
		k(lv)
	}
}

func (e *Expr) pairWalk(j, i, suffix int, lv level, k func(level)) {
	if j == len(e.kids) {
		k(lv)
		return
	}
	p := e.kids[j]
	suffix /= p.size
	p.walkAll((i/suffix)%p.size, lv, func(l2 level) { e.pairWalk(j+1, i, suffix, l2, k) })
}

// linWalk enumerates the solutions of rest = Σ_{k≥j} s_k·n_k.
func (e *Expr) linWalk(j, rest int, lv level, k func(level)) {
	if j == len(e.kids) {
		if rest == 0 {
			k(lv)
		}
		return
	}
	t, n := e.kids[j], e.coefs[j]
	reach := 0 // the largest sum the later terms can make
	for q := j + 1; q < len(e.kids); q++ {
		reach += (e.kids[q].size - 1) * e.coefs[q]
	}
	lo := 0
	if rest > reach {
		lo = (rest - reach + n - 1) / n
	}
	for s := lo; s < t.size && s*n <= rest; s++ {
		t.walkAll(s, lv, func(l2 level) { e.linWalk(j+1, rest-s*n, l2, k) })
	}
}

// dedupCells sorts cells (live by index text, then padding by kind) and
// removes duplicates; live indices hide padding alternatives, and an empty
// result (no combination reaches the position) becomes Top padding.
func dedupCells(cells []Cell) []Cell {
	var live, pads []Cell
	for _, c := range cells {
		if c.Kind == Live {
			live = append(live, c)
		} else {
			pads = append(pads, c)
		}
	}
	if len(live) == 0 {
		live = pads
	}
	if len(live) == 0 {
		return []Cell{{Kind: Pad, Pad: Top}}
	}
	sort.SliceStable(live, func(a, b int) bool { return cellKey(live[a]) < cellKey(live[b]) })
	out := live[:1]
	for _, c := range live[1:] {
		if !c.Equal(out[len(out)-1]) {
			out = append(out, c)
		}
	}
	return out
}

func cellKey(c Cell) string { return strconv.Itoa(int(c.Kind)) + strconv.Itoa(int(c.Pad)) + c.String() }
