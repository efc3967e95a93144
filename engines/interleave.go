package engines

import (
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Interleaved fetch (002 L1843-1867): begin_interleaved::<I, ...>(lhs.view(),
// rhs.view()) reads two DM tensors with identical mappings in one
// sequencer pass; the fetch's Time holds the interleave axis I of size 2,
// whose step moves from lhs to rhs: the sequencer's extra dimension of
// stride rhs − lhs in elements (ConfigFetch's FetchRequest.Interleave).
// The split reduce then combines the two instances with a Vector Engine
// binary op across I (002 L7164-7177).

// beginInterleave reads an interleaved begin stage's second tensor: the
// same element type and Chip, Cluster, Slice and Element mappings as the
// first (FE-R8), at a higher DM address. It returns the fetch's interleave
// request, nil for a plain begin.
func beginInterleave(p *kernel.Program, stage *kernel.Stage, lhs *kernel.Tensor) (*FetchInterleaveRequest, error) {
	b, err := kernel.ParseBeginInterleave(stage.Param)
	if err != nil || b == nil {
		return nil, err
	}
	rhs, ok := p.Tensor(b.Tensor)
	if !ok {
		return nil, fmt.Errorf("begin_interleaved: unknown tensor %q", b.Tensor)
	}
	if rhs.DType != lhs.DType {
		return nil, ruleFetchInterleave.Violate("%q is %s, %q is %s: interleaved tensors have one element type", lhs.Name, lhs.DType, rhs.Name, rhs.DType)
	}
	for _, d := range []struct {
		name string
		a, b *mapping.Expr
	}{{"Chip", lhs.Chip, rhs.Chip}, {"Cluster", lhs.Cluster, rhs.Cluster}, {"Slice", lhs.Slice, rhs.Slice}, {"Element", lhs.Element, rhs.Element}} {
		if ok, _ := mapping.Equiv(d.a, d.b); !ok {
			return nil, ruleFetchInterleave.Violate("%q has %s m![%s], %q has m![%s]: interleaved tensors have identical mappings", lhs.Name, d.name, d.a, rhs.Name, d.b)
		}
	}
	if rhs.Addr <= lhs.Addr {
		return nil, fmt.Errorf("begin_interleaved: the second tensor %q (DM address %d) must lie above the first %q (%d): the interleave step is the distance from the first to the second", rhs.Name, rhs.Addr, lhs.Name, lhs.Addr)
	}
	return &FetchInterleaveRequest{Axis: b.Axis, OffsetBytes: int(rhs.Addr - lhs.Addr)}, nil
}
