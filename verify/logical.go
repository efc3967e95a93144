package verify

import (
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Logical is a tensor's values by tensor index, independent of any layout:
// the values a kernel's HBM inputs start with, the reference computes and the
// simulation leaves in the HBM outputs. Axes are the axes the tensor's
// mappings name, in the program's declaration order; Vals is row-major over
// them (the last axis fastest). A tensor with no axis (a scalar) has one
// value.
type Logical struct {
	Name  string
	DType dtype.DType
	Axes  []mapping.Axis
	Vals  []float64
}

// NewLogical returns the zero-valued logical form of tensor t of program p.
func NewLogical(p *kernel.Program, t *kernel.Tensor) (*Logical, error) {
	named := map[string]bool{}
	for _, e := range t.Dims() {
		for _, s := range e.Symbols() {
			named[s] = true
		}
	}
	l := &Logical{Name: t.Name, DType: t.DType}
	n := 1
	for _, a := range p.Axes.List() {
		if named[a.Name] {
			l.Axes = append(l.Axes, a)
			if n > (1<<31)/a.Size {
				return nil, fmt.Errorf("tensor %q has more than 2^31 elements", t.Name)
			}
			n *= a.Size
			delete(named, a.Name)
		}
	}
	if len(named) != 0 {
		return nil, fmt.Errorf("tensor %q names undeclared axes", t.Name)
	}
	l.Vals = make([]float64, n)
	return l, nil
}

// Len is the number of elements.
func (l *Logical) Len() int { return len(l.Vals) }

// Offset returns the position in Vals of the tensor index idx; axes of idx
// that the tensor does not have are ignored (a broadcast), axes it has but
// idx lacks are at coordinate 0. It reports false for a coordinate outside
// its axis.
func (l *Logical) Offset(idx mapping.Index) (int, bool) {
	off := 0
	for _, a := range l.Axes {
		c := idx.Get(a.Name)
		if c < 0 || c >= a.Size {
			return 0, false
		}
		off = off*a.Size + c
	}
	return off, true
}

// Coords writes the coordinates of position off into dst (one per axis, in
// Axes order) and returns it.
func (l *Logical) Coords(off int, dst []int) []int {
	dst = dst[:0]
	for range l.Axes {
		dst = append(dst, 0)
	}
	for i := len(l.Axes) - 1; i >= 0; i-- {
		dst[i] = off % l.Axes[i].Size
		off /= l.Axes[i].Size
	}
	return dst
}

// IndexString prints the tensor index of position off, e.g. `{I: 3, J: 7}`.
func (l *Logical) IndexString(off int) string {
	cs := l.Coords(off, nil)
	s := "{"
	for i, a := range l.Axes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d", a.Name, cs[i])
	}
	return s + "}"
}
