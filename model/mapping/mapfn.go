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

// term is one contribution to a cell: a coordinate of a symbol (atom nil),
// or a position inside a composite atom (atom non-nil, keyed by its text).
type term struct {
	axis  string
	size  int
	value int
	atom  *Expr
	key   string
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
//     inside X, not an index; contributions to structurally equal atoms add
//     up and the sum is decoded through X.Map once (reference-notes §2.5
//     `Atom::Composite`, `Index::finalize`). With one contribution this is
//     the plain rule above; with several it makes `[E / n, E % n] ≡ E` hold for
//     every E (002 L1023-1024). See docs/spec-decisions.md "Mapping:
//     composite atoms decode summed positions".
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
	var acc []term
	kind, pad := e.mapInto(i, &acc)
	if kind != Live {
		return Cell{Kind: kind, Pad: pad}
	}
	return finish(acc)
}

// finish decodes composite contributions (largest atom first: an atom can
// only contribute to atoms nested inside it, whose text is shorter), then
// sums the coordinates per axis and applies the overshoot rule.
func finish(acc []term) Cell {
	for {
		best := -1
		for j, t := range acc {
			if t.atom != nil && (best < 0 || atomBefore(t.key, acc[best].key)) {
				best = j
			}
		}
		if best < 0 {
			break
		}
		x, key, q := acc[best].atom, acc[best].key, 0
		rest := acc[:0:0]
		for _, t := range acc {
			if t.atom != nil && t.key == key {
				q += t.value
			} else {
				rest = append(rest, t)
			}
		}
		acc = rest
		if q >= x.size {
			return Cell{Kind: Pad, Pad: Top} // overshoot: docs/spec-decisions.md
		}
		if k, pk := x.mapInto(q, &acc); k != Live {
			return Cell{Kind: k, Pad: pk}
		}
	}
	var x Index
	for _, t := range acc {
		v := x.Get(t.axis) + t.value
		if v >= t.size {
			return Cell{Kind: Pad, Pad: Top} // overshoot: docs/spec-decisions.md
		}
		x = x.with(t.axis, v)
	}
	return Cell{Kind: Live, Index: x}
}

// atomBefore orders composite atoms for decoding: longer text first, then
// byte order.
func atomBefore(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a < b
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

// mapInto is Map without composite decoding and the overshoot check, for
// 0 ≤ i < e.size.
func (e *Expr) mapInto(i int, acc *[]term) (CellKind, PadKind) {
	switch e.kind {
	case KindSymbol:
		if i > 0 {
			*acc = append(*acc, term{axis: e.name, size: e.size, value: i})
		}
		return Live, Top
	case KindBroadcast:
		return Live, Top
	case KindStride, KindModulo, KindResize:
		x, mul := e.chain()
		switch x.kind {
		case KindSymbol, KindBroadcast:
			return x.mapInto(i*mul, acc)
		}
		if i > 0 {
			*acc = append(*acc, term{value: i * mul, atom: x, key: x.String()})
		}
		return Live, Top
	case KindPadding:
		if i >= e.kids[0].size {
			return Pad, e.pad
		}
		return e.kids[0].mapInto(i, acc)
	case KindPair:
		suffix := e.size
		for _, p := range e.kids {
			suffix /= p.size
			k, pk := p.mapInto((i/suffix)%p.size, acc)
			if k != Live {
				return k, pk // the major side's padding wins (reference-notes §2.4)
			}
		}
		return Live, Top
	}
	return OOB, Top
}

// MapAll returns every cell position i holds. For expressions without a
// linear combination it is []Cell{e.Map(i)}. For $(e1:n1, ..., ed:nd) it
// enumerates every (s_1..s_d) with Σ s_k·n_k = i and sums the indices of
// e_k.Map(s_k) (002 L1005 and the sliding example 002 L1011-1016: position 4
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
	e.mapAll(i, nil, func(acc []term, k CellKind, pk PadKind) {
		if k != Live {
			out = append(out, Cell{Kind: k, Pad: pk})
			return
		}
		finishAll(acc, func(c Cell) { out = append(out, c) })
	})
	return dedupCells(out)
}

// finishAll is finish for alternatives: decoding a composite atom that
// holds a linear combination may branch.
func finishAll(acc []term, emit func(Cell)) {
	best := -1
	for j, t := range acc {
		if t.atom != nil && (best < 0 || atomBefore(t.key, acc[best].key)) {
			best = j
		}
	}
	if best < 0 {
		emit(finish(acc))
		return
	}
	x, key, q := acc[best].atom, acc[best].key, 0
	var rest []term
	for _, t := range acc {
		if t.atom != nil && t.key == key {
			q += t.value
		} else {
			rest = append(rest, t)
		}
	}
	if q >= x.size {
		emit(Cell{Kind: Pad, Pad: Top})
		return
	}
	x.mapAll(q, rest, func(a []term, k CellKind, pk PadKind) {
		if k != Live {
			emit(Cell{Kind: k, Pad: pk})
			return
		}
		finishAll(a, emit)
	})
}

// mapAll calls emit for every alternative cell of position i, extending
// the contributions acc.
func (e *Expr) mapAll(i int, acc []term, emit func([]term, CellKind, PadKind)) {
	switch e.kind {
	case KindSymbol, KindBroadcast, KindStride, KindModulo, KindResize:
		a := append([]term(nil), acc...)
		k, pk := e.mapInto(i, &a)
		emit(a, k, pk)
	case KindPadding:
		if i >= e.kids[0].size {
			emit(acc, Pad, e.pad)
			return
		}
		e.kids[0].mapAll(i, acc, emit)
	case KindPair:
		e.pairAll(0, i, e.size, acc, emit)
	case KindLinear:
		e.linearAll(0, i, acc, emit)
	}
}

func (e *Expr) pairAll(j, i, suffix int, acc []term, emit func([]term, CellKind, PadKind)) {
	if j == len(e.kids) {
		emit(acc, Live, Top)
		return
	}
	p := e.kids[j]
	suffix /= p.size
	p.mapAll((i/suffix)%p.size, acc, func(a []term, k CellKind, pk PadKind) {
		if k != Live {
			emit(a, k, pk)
			return
		}
		e.pairAll(j+1, i, suffix, a, emit)
	})
}

func (e *Expr) linearAll(j, rest int, acc []term, emit func([]term, CellKind, PadKind)) {
	if j == len(e.kids) {
		if rest == 0 {
			emit(acc, Live, Top)
		}
		return
	}
	t, n := e.kids[j], e.coefs[j]
	for s := 0; s < t.size && s*n <= rest; s++ {
		t.mapAll(s, acc, func(a []term, k CellKind, pk PadKind) {
			if k != Live {
				// a padding term only matters if the rest of the sum is reachable
				if e.reachable(j+1, rest-s*n) {
					emit(a, k, pk)
				}
				return
			}
			e.linearAll(j+1, rest-s*n, a, emit)
		})
	}
}

// reachable reports whether rest = Σ_{k≥j} s_k·n_k has a solution.
func (e *Expr) reachable(j, rest int) bool {
	if j == len(e.kids) {
		return rest == 0
	}
	for s := 0; s < e.kids[j].size && s*e.coefs[j] <= rest; s++ {
		if e.reachable(j+1, rest-s*e.coefs[j]) {
			return true
		}
	}
	return false
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
