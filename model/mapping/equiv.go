package mapping

import (
	"errors"
	"fmt"
	"slices"
)

// Equiv decides semantic equivalence (002 L1017-1021): a ≡ b iff
// a.Size() == b.Size() and a.Map(i) equals b.Map(i) for every i. Padding
// cells compare with their kinds (Top, Bottom, Zero are different cells; see
// docs/spec-decisions.md "Mapping: equivalence compares padding kinds"); use
// [EquivLoose] to ignore kinds. It returns the first buffer index where the
// two differ, -1 when equivalent. With different sizes the first difference
// is at min(a.Size(), b.Size()), where one side is out of bounds.
//
// Equiv enumerates every position with compiled programs (no allocation per
// position): about 10 ns per position and node, fine for sizes up to a few
// million. Expressions with linear combinations compare [Expr.MapAll] sets.
func Equiv(a, b *Expr) (bool, int) { return equiv(a, b, false) }

// EquivLoose is [Equiv] with all padding kinds treated as one: the
// manual's own definition, whose map returns None for every padding cell
// (002 L753-758).
func EquivLoose(a, b *Expr) (bool, int) { return equiv(a, b, true) }

func equiv(a, b *Expr, loose bool) (bool, int) {
	eq, at, _ := equivLimit(a, b, loose, -1)
	return eq, at
}

// EquivLimit is [Equiv] (loose: [EquivLoose]) that enumerates at most
// limit positions. When the canonical factorizations decide the question
// it answers without enumerating; otherwise beyond limit positions it
// returns ErrEnumerationLimit, unless the factorizations already proved
// the expressions different (then it returns false and at = -1 when the
// first difference lies beyond limit).
func EquivLimit(a, b *Expr, loose bool, limit int) (eq bool, at int, err error) {
	return equivLimit(a, b, loose, limit)
}

// ErrEnumerationLimit is EquivLimit's answer when only enumerating more
// positions than its limit would decide.
var ErrEnumerationLimit = errors.New("deciding needs enumerating more positions than the limit")

func equivLimit(a, b *Expr, loose bool, limit int) (bool, int, error) {
	if a.Err() != nil || b.Err() != nil {
		return false, 0, nil
	}
	if a.size != b.size {
		return false, min(a.size, b.size), nil
	}
	if a == b || a.Text() == b.Text() {
		return true, -1, nil // one spelling, one map
	}
	if limit >= 0 && (a.hasLinear() || b.hasLinear()) {
		limit >>= 10 // MapAll allocates: about a thousand times the cost of Eval
	}
	differ := false
	if (a.size > 4096 || limit >= 0 && a.size > limit) && !a.hasLinear() && !b.hasLinear() {
		// Fast path: canonical factors are unique per Map (see Factorize),
		// so equal factor lists prove equivalence without enumeration, and
		// different ones prove a difference (found by enumeration, which
		// stops at it). Loosely, every padding cell is one cell: compare
		// the expressions with every padding made Top.
		fa, fb := a, b
		if loose {
			fa, fb = topPads(a), topPads(b)
		}
		if xa, err := Factorize(fa); err == nil {
			if xb, err := Factorize(fb); err == nil {
				if xa.Equal(xb) {
					return true, -1, nil
				}
				differ = true
			}
		}
	}
	if limit < 0 || a.size <= limit {
		eq, at := equivEnum(a, b, loose, a.size)
		return eq, at, nil
	}
	eq, at := equivEnum(a, b, loose, limit)
	switch {
	case !eq:
		return false, at, nil
	case differ:
		return false, -1, nil
	}
	return false, -1, fmt.Errorf("%d positions: %w (%d)", a.size, ErrEnumerationLimit, limit)
}

// topPads returns e with every padding of kind Top (e itself when it has
// none of another kind): the expression EquivLoose compares.
func topPads(e *Expr) *Expr {
	if e == nil || e.kind == KindInvalid {
		return e
	}
	var kids []*Expr
	for i, k := range e.kids {
		if t := topPads(k); t != k {
			if kids == nil {
				kids = slices.Clone(e.kids)
			}
			kids[i] = t
		}
	}
	if kids == nil && (e.kind != KindPadding || e.pad == Top) {
		return e
	}
	c := *e
	if kids != nil {
		c.kids = kids
	}
	if c.kind == KindPadding {
		c.pad = Top
	}
	return &c
}

// equivEnum is equiv by enumeration of the first n positions (n ≤ the
// sizes, which are equal).
func equivEnum(a, b *Expr, loose bool, n int) (bool, int) {
	if a.hasLinear() || b.hasLinear() {
		for i := range n {
			if !cellsEqual(a.MapAll(i), b.MapAll(i), loose) {
				return false, i
			}
		}
		return true, -1
	}
	pa, pb, err := compilePair(a, b)
	if err != nil { // cannot happen for valid expressions; fall back to Map
		for i := range n {
			if !cellsEqual([]Cell{a.Map(i)}, []Cell{b.Map(i)}, loose) {
				return false, i
			}
		}
		return true, -1
	}
	da, db := make([]int, pa.Slots()), make([]int, pb.Slots())
	for i := range n {
		ka, pka := pa.Eval(i, da)
		kb, pkb := pb.Eval(i, db)
		if ka != kb {
			return false, i
		}
		switch ka {
		case Live:
			if !slices.Equal(da[:pa.coords], db[:pb.coords]) {
				return false, i
			}
		case Pad:
			if pka != pkb && !loose {
				return false, i
			}
		}
	}
	return true, -1
}

// compilePair compiles a and b over one shared slot table: the union of
// their axis names (as in Map, an index names axes only).
func compilePair(a, b *Expr) (*Program, *Program, error) {
	slots := map[string]int{}
	for _, e := range []*Expr{a, b} {
		e.walk(func(x *Expr) {
			if _, ok := slots[x.name]; x.kind == KindSymbol && !ok {
				slots[x.name] = len(slots)
			}
		})
	}
	slot := func(name string, _ int) (int, error) {
		s, ok := slots[name]
		if !ok {
			return 0, fmt.Errorf("internal: no slot for %s", name)
		}
		return s, nil
	}
	pa, err := compileWith(a, len(slots), slot)
	if err != nil {
		return nil, nil, err
	}
	pb, err := compileWith(b, len(slots), slot)
	if err != nil {
		return nil, nil, err
	}
	return pa, pb, nil
}

func cellsEqual(x, y []Cell, loose bool) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if loose && x[i].Kind == Pad && y[i].Kind == Pad {
			continue
		}
		if !x[i].Equal(y[i]) {
			return false
		}
	}
	return true
}
