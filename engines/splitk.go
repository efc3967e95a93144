package engines

import (
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Split-K: a contraction whose contracted axis is split across slices. Each
// slice contracts its chunk of the axis into partial f32 (bf16, f8 inputs)
// or i32 (i4, i8 inputs) sums, and the Vector Engine's Inter-Slice Block
// adds the partial sums of the slices that share an output (002 L4580:
// vector_init takes the Contraction Engine's output; L4360-4376: the full
// tensor reduction reduces its Slice axis A / 256 in the Inter-Slice
// Block; L7158-7161: "Slice reduce: Across slices within a cluster
// (Inter-Slice Block)"). The chain is
//
//	begin → fetch → [switch →] collect → align → contract → accumulate →
//	vector_init → vector_inter_slice_reduce::<SliceOut, TimeOut>(Add) →
//	vector_final → [cast →] commit
//
// (workloads/kernels/splitk-gemv.json is one, verified and priced).
//
// What a kernel builder (search/build.go, search/chain.go) produces for a
// candidate with a contracted axis at the Slice level:
//
//  1. The chain's Slice mapping (the DM tensors', the TRF tensor's, and the
//     stream's after a switch) has the contracted axis's Slice digits
//     innermost, live (no padding among them): `m![I, J / 512]` with J
//     contracted, r = 4 slices per group. Any padding the DMN placement
//     adds must sit outside them (XSR-R6). Every slice of a group holds the
//     same output positions (the same digits outside the group).
//  2. The main chain is the usual one up to accumulate (each slice
//     contracts its chunk: the contracted axis's Time/Row/Packet digits as
//     for any contraction), then the stages SplitKStages returns, then the
//     cast (its packet unchanged) and the commit.
//  3. The output DM tensor's Slice is SliceOut (not the chain's Slice) and
//     its Element is the accumulate's output Element with TimeOut in place
//     of OutTime: [TimeOut digits, OutPacket]. The to_hbm DMA reads the
//     live slices of SliceOut only (lowerDMA already skips padding).
//  4. The cost of the Vector Engine stage grows by the ring tail of r
//     cycles (cost.InterSliceReduceCycles); a bound on such candidates adds
//     it to the compute path's fill and drain.
//
// SplitKOutputs lists the legal SliceOut/TimeOut pairs: the dummy form
// (`m![A, 1 # r]`, TimeOut = OutTime; only one slice of each group
// commits) and the promotions of an output Time digit of r positions
// (`m![A, C % r]`, TimeOut without it; every slice commits 1/r of the
// outputs, which spreads the commit and the to_hbm DMA over r times more
// slices).

// SplitKOutput is one layout of a split-K result: the type parameters of
// vector_inter_slice_reduce.
type SplitKOutput struct {
	// SliceOut and TimeOut are the stream's Slice and Time after the
	// reduction (and the output DM tensor's Slice and the Time part of its
	// Element).
	SliceOut, TimeOut *mapping.Expr
	// Promoted is the Time digit moved into SliceOut, nil for the dummy
	// form.
	Promoted *mapping.Expr
}

// SplitKOutputs lists the layouts of reducing the innermost r slices of
// slice, for a stream of Time time: the dummy form first, then one
// promotion for each Time digit of at least r positions that r divides,
// innermost digit first (its innermost r positions move into SliceOut).
// The result is deterministic.
func SplitKOutputs(slice, time *mapping.Expr, r int) ([]SplitKOutput, error) {
	if err := ceCheckExprs("vector", []string{"slice", "time"}, slice, time); err != nil {
		return nil, err
	}
	if r < 2 {
		return nil, fmt.Errorf("vector: split-K over %d slices: a reduction group has at least 2", r)
	}
	outer, inner, err := ceSplit(slice, r)
	if err != nil {
		return nil, ruleXSRInner.Violate("Slice %s has no innermost block of %d slices: %v", slice.Text(), r, err)
	}
	rd, err := ceDigits(inner)
	if err != nil {
		return nil, ruleXSRInner.Violate("Slice %s: %v", slice.Text(), err)
	}
	for _, d := range rd {
		if d.kind != ceTerm || d.size != d.live {
			return nil, ruleXSRInner.Violate("the innermost %d slices of Slice %s are %s, not live digits of the split axis", r, slice.Text(), inner.Text())
		}
	}
	dummy := mapping.Identity().Pad(r, mapping.Top)
	outs := []SplitKOutput{{SliceOut: mapping.Pair(outer, dummy), TimeOut: time}}
	td, err := ceDigits(time)
	if err != nil {
		return outs, nil // no factorized Time: only the dummy form
	}
	for k, d := range td {
		if d.kind != ceTerm || d.size != d.live || d.size%r != 0 {
			continue
		}
		lo := ceDigit{kind: ceTerm, axis: d.axis, axisSize: d.axisSize, stride: d.stride, live: r, size: r}
		var rest []ceDigit // Time without the promoted positions, outermost first
		for j := len(td) - 1; j >= 0; j-- {
			x := td[j]
			if j == k {
				if d.size == r {
					continue
				}
				x = ceDigit{kind: ceTerm, axis: d.axis, axisSize: d.axisSize, stride: d.stride * r, live: d.live / r, size: d.size / r}
			}
			rest = append(rest, x)
		}
		to, err := xsrExpr(rest)
		if err != nil {
			continue
		}
		pe, err := xsrExpr([]ceDigit{lo})
		if err != nil {
			continue
		}
		outs = append(outs, SplitKOutput{SliceOut: mapping.Pair(outer, pe), TimeOut: to, Promoted: pe})
	}
	return outs, nil
}

// xsrExpr builds the mapping of digits, outermost first.
func xsrExpr(ds []ceDigit) (*mapping.Expr, error) {
	parts := make([]*mapping.Expr, 0, len(ds))
	for _, d := range ds {
		var e *mapping.Expr
		switch d.kind {
		case ceTerm:
			e = mapping.Sym(d.axis, d.axisSize)
			if d.stride > 1 {
				e = e.Div(d.stride)
			}
			if d.live < e.Size() {
				e = e.Mod(d.live)
			}
			if d.size > d.live {
				e = e.Pad(d.size, mapping.Top)
			}
		case ceBcast:
			e = mapping.Broadcast(d.size)
		default:
			e = mapping.Identity().Pad(d.size, mapping.Top)
		}
		if err := e.Err(); err != nil {
			return nil, err
		}
		parts = append(parts, e)
	}
	if len(parts) == 0 {
		return mapping.Identity(), nil
	}
	return mapping.Normalize(mapping.Pair(parts...)), nil
}

// SplitKStages returns the Vector Engine stages that end a split-K
// contraction after accumulate: vector_init, vector_inter_slice_reduce
// with out's mappings and the accumulator type's Add (f32 addition, i32
// wrapping addition, which is the contraction's own integer arithmetic,
// docs/spec-decisions.md "Reducer arithmetic"), and vector_final
// (002 L4580, L6599-6602). acc is the accumulator type, f32 or i32.
func SplitKStages(acc dtype.DType, out SplitKOutput) ([]*kernel.Stage, error) {
	if acc != dtype.F32 && acc != dtype.I32 {
		return nil, ruleXSRType.Violate("split-K partial sums of %s; the Contraction Engine accumulates f32 or i32 (002 L4391)", acc)
	}
	if out.SliceOut == nil || out.TimeOut == nil {
		return nil, fmt.Errorf("vector: split-K output without SliceOut or TimeOut")
	}
	return []*kernel.Stage{
		{Kind: kernel.StVectorInit},
		{Kind: kernel.StVectorInterSlice, Slice: out.SliceOut, Time: out.TimeOut,
			Param: kernel.InterSliceEnum(acc) + "::" + string(kernel.InterSliceAdd)},
		{Kind: kernel.StVectorFinal},
	}, nil
}
