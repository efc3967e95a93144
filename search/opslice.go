package search

import (
	"fmt"
	"slices"
	"strings"

	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// An update_slice (the decode layer's KV-cache write, 002 L8286-8297:
// `kv_cache_l_K[s-1] = K_rope`) writes its slice into the last index of
// its axis — the row of the step the graph is planned for, whose context
// length is that axis's size — of its destination, in place: the result
// is the destination argument itself (a whole view of it, kernel.Tensor
// InPlace), and the one op is an HBM-to-HBM DMA (`to_hbm_view`, 002
// L2608-2636: "Concat on HBM using DMA is also possible", L8297) of the
// slice into a tile view of the destination, the axis's last index
// pinned (`1 # n` at that index's byte offset, as a tile view pins its
// tile digits). engines.DeriveRelayout derives the command (its spread
// over the DMA engines); no slice computes. The space has that one
// candidate, so its plan is optimal by enumeration. The rest of the
// destination is never read nor written (docs/spec-decisions.md
// "update_slice: in place, one DMA").

// sliceSpace fills s for an update_slice op o, or says why it has none.
func (s *opSpace) sliceSpace(at string) (*opSpace, error) {
	o, w := s.o, s.w
	dest, src := s.ins[0], s.ins[1]
	s.family = "slice"
	s.order = map[string][]string{}
	for _, t := range []*workload.Tensor{dest, src, s.out} {
		ord, err := layoutOrder(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		s.order[t.Name] = ord
		if t.DType != dest.DType {
			return nil, fmt.Errorf("%s: tensor %s is %s, the destination %s: the slice is copied as it is", at, t.Name, t.DType, dest.DType)
		}
	}
	if !slices.Equal(s.order[s.out.Name], s.order[dest.Name]) {
		return nil, fmt.Errorf("%s: the result %s is the destination %s updated in place: it needs its layout", at, s.out.Name, dest.Name)
	}
	for _, q := range w.Ops {
		if q != o && slices.Contains(q.Inputs, dest.Name) {
			return nil, fmt.Errorf("%s: the destination %s is also read by op %s: the update writes it in place (002 L8295-8296), so %s would read the update", at, dest.Name, q.Name, q.Name)
		}
	}
	if !slices.Contains(dest.Axes, o.Axis) {
		return nil, fmt.Errorf("%s: the destination %s has no axis %s", at, dest.Name, o.Axis)
	}
	s.axes = axesDecl(w, s.order[dest.Name])
	s.cands = []opCand{{Tiles: 1, Form: string(workload.KindUpdateSlice)}}
	return s, nil
}

// buildSlice writes the update_slice's program: the destination and the
// slice as arguments, the result as the destination updated in place,
// and the slice's DMA into the tile view of the destination's last index
// of the axis.
func (s *opSpace) buildSlice() (*kernel.Program, error) {
	dest, src := s.ins[0], s.ins[1]
	b := &opBuilder{s: s, k: kProg{Name: s.o.Name, Axes: s.axes, Chips: 1}}
	dt := dest.DType.String()
	el := b.hbmElement(dest)
	// The view: the axis pinned to its last index, at that index's byte
	// offset (the axis's stride: the bytes of the axes inside it).
	n, _ := s.w.AxisSize(s.o.Axis)
	stride := int64(dest.DType.SizeBits()) / 8
	var vd []string
	inside := false
	for _, a := range s.order[dest.Name] {
		size, _ := s.w.AxisSize(a)
		switch {
		case a == s.o.Axis:
			inside = true
			if size > 1 {
				vd = append(vd, fmt.Sprintf("1 # %d", size))
			}
		case size > 1:
			vd = append(vd, a)
			if inside {
				stride *= size
			}
		}
	}
	view := "1"
	if len(vd) > 0 {
		view = strings.Join(vd, ", ")
	}
	srcAddr := alignUp(dest.Elems*int64(dest.DType.SizeBits())/8, 256<<20)
	b.k.Tensors = []kTensor{
		{Name: dest.Name, Mem: "hbm", DType: dt, Role: "input", Chip: "1", Element: el},
		{Name: src.Name, Mem: "hbm", DType: dt, Role: "input", Chip: "1", Element: b.hbmElement(src), Addr: srcAddr},
		{Name: s.out.Name, Mem: "hbm", DType: dt, Role: "output", Chip: "1", Element: el, View: dest.Name},
		{Name: s.out.Name + "_row", Mem: "hbm", DType: dt, Role: "intermediate", Chip: "1", Element: view,
			Addr: (n - 1) * stride, View: dest.Name},
	}
	b.k.Ops = []kOp{{Context: "dma", Kind: "hbm_to_hbm", Src: src.Name, Dst: s.out.Name + "_row"}}
	b.k.Reference = kReference{Op: "update_slice", Inputs: []string{dest.Name, src.Name}, Output: s.out.Name, Axis: s.o.Axis}
	return b.k.program()
}
