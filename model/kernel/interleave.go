package kernel

import (
	"fmt"
	"strings"
)

// Interleaved fetch (002 L1843-1867): `ctx.main.begin_interleaved::<I, _,
// _, _, _, _>(lhs.view(), rhs.view()).fetch()` reads two DM tensors with
// identical mappings in one sequencer pass, the axis I = 2 of the fetch's
// Time alternating between them. In the IR it is a begin stage whose Tensor
// is lhs and whose Param is `I, rhs`.

// BeginInterleave is the interleaving of a begin stage.
type BeginInterleave struct {
	// Axis is the Time axis that alternates between the tensors
	// (002 L1846-1850).
	Axis string
	// Tensor names the second tensor (rhs); the stage's Tensor is the first.
	Tensor string
}

// String prints `I, rhs`, the Param it is read from.
func (b BeginInterleave) String() string { return b.Axis + ", " + b.Tensor }

// ParseBeginInterleave reads a begin stage's Param: nil for "" (a plain
// begin(view)), or `I, rhs` for begin_interleaved::<I, ...>(lhs.view(),
// rhs.view()). Errors give the column (1-based) of the offending text.
func ParseBeginInterleave(s string) (*BeginInterleave, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	axis, tensor, ok := strings.Cut(s, ",")
	if !ok {
		return nil, fmt.Errorf("begin %q: column 1: want `AXIS, TENSOR` (begin_interleaved::<AXIS, ...>(first.view(), TENSOR.view()), 002 L1866)", s)
	}
	b := &BeginInterleave{Axis: strings.TrimSpace(axis), Tensor: strings.TrimSpace(tensor)}
	if !isName(b.Axis) {
		return nil, fmt.Errorf("begin %q: column %d: interleave axis %q is not a name", s, len(axis)-len(strings.TrimLeft(axis, " \t"))+1, b.Axis)
	}
	if !isTensorName(b.Tensor) {
		return nil, fmt.Errorf("begin %q: column %d: second tensor %q is not a name", s, len(axis)+2+len(tensor)-len(strings.TrimLeft(tensor, " \t")), b.Tensor)
	}
	return b, nil
}

// isTensorName reports whether s names a tensor: identifiers joined by
// dots (a graph's merged program prefixes each kernel's tensors with its
// op's name, `pv.o_ps1`).
func isTensorName(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !isName(part) {
			return false
		}
	}
	return true
}

// isName reports whether s is an identifier: a letter or '_', then
// letters, digits or '_'.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// InterleavedTensor returns the second tensor of an interleaved begin
// stage, "" for any other stage or a malformed Param (Validate reports it).
func (st *Stage) InterleavedTensor() string {
	if st == nil || st.Kind != StBegin {
		return ""
	}
	b, err := ParseBeginInterleave(st.Param)
	if err != nil || b == nil {
		return ""
	}
	return b.Tensor
}

// validateInterleave checks an interleaved begin's second tensor: declared,
// in DM, not the first.
func (p *Program) validateInterleave(st *Stage) error {
	b, err := ParseBeginInterleave(st.Param)
	if err != nil || b == nil {
		return err
	}
	t, ok := p.Tensor(b.Tensor)
	switch {
	case !ok:
		return fmt.Errorf("begin_interleaved: unknown tensor %q", b.Tensor)
	case t.Mem != DM:
		return fmt.Errorf("begin_interleaved: tensor %q is in %s, want dm", b.Tensor, t.Mem)
	case b.Tensor == st.Tensor:
		return fmt.Errorf("begin_interleaved: tensor %q interleaved with itself", b.Tensor)
	}
	return nil
}
