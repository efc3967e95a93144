package mapping

import (
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
	if a.Err() != nil || b.Err() != nil {
		return false, 0
	}
	if a.size != b.size {
		return false, min(a.size, b.size)
	}
	if !loose && a.size > 4096 && !a.hasLinear() && !b.hasLinear() {
		// Fast path: canonical factors are unique per Map (see Factorize),
		// so equal factor lists prove equivalence without enumeration.
		if fa, err := Factorize(a); err == nil {
			if fb, err := Factorize(b); err == nil && fa.Equal(fb) {
				return true, -1
			}
		}
	}
	return equivEnum(a, b, loose)
}

// equivEnum is equiv by enumeration of every position.
func equivEnum(a, b *Expr, loose bool) (bool, int) {
	if a.size != b.size {
		return false, min(a.size, b.size)
	}
	if a.hasLinear() || b.hasLinear() {
		for i := 0; i < a.size; i++ {
			if !cellsEqual(a.MapAll(i), b.MapAll(i), loose) {
				return false, i
			}
		}
		return true, -1
	}
	pa, pb, err := compilePair(a, b)
	if err != nil { // cannot happen for valid expressions; fall back to Map
		for i := 0; i < a.size; i++ {
			if !cellsEqual([]Cell{a.Map(i)}, []Cell{b.Map(i)}, loose) {
				return false, i
			}
		}
		return true, -1
	}
	da, db := make([]int, pa.Slots()), make([]int, pb.Slots())
	for i := 0; i < a.size; i++ {
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
