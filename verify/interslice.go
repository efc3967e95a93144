package verify

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The Inter-Slice Block (002 L6583-6755) is the simulator's second
// cross-slice step after the switch: the chain's segment before
// vector_inter_slice_reduce runs on every slice that feeds it, the streams
// of each cluster are gathered into reduction groups of Ratio consecutive
// slices, folded lane by lane in ascending slice order
// (engines.InterSliceFold; docs/spec-decisions.md "Inter-slice reduction
// order"), and each slice of SliceOut receives its packets
// (engines.InterSliceOutput): the same for a broadcast, the promoted Time
// digit's for a promotion, nothing for a dummy's padding slices, which the
// rest of the chain does not run on.

// planInterSlice checks a vector_inter_slice_reduce configuration, derived
// or stated.
func (x *Executor) planInterSlice(c *kernel.InterSliceReduceConfig) error {
	if err := engines.CheckInterSliceConfig(x.spec, c); err != nil {
		return err
	}
	if c.Slices > x.dev.slices {
		return fmt.Errorf("the reduction spans %d slices, a cluster has %d", c.Slices, x.dev.slices)
	}
	if _, err := streamSize(c.InPackets, c.Lanes, 4); err != nil {
		return err
	}
	_, err := streamSize(c.OutPackets, c.Lanes, 4)
	return err
}

// runInterSlice reduces the streams of each cluster the segment ran on
// and returns the streams of the slices in next (those the following
// segment runs), per global slice.
func (x *Executor) runInterSlice(seg *segment, in [][]byte, next []int) ([][]byte, error) {
	c := seg.xsr
	out := make([][]byte, x.dev.TotalSlices())
	want := make(map[int]bool, len(next))
	for _, g := range next {
		want[g] = true
	}
	pb := c.Lanes * 4 // 32-bit lanes (002 L4551)
	acc := make([]byte, c.InPackets*pb)
	group := make([][]byte, c.Ratio)
	for _, r := range seg.groups {
		for g0 := r; g0 < r+c.Slices; g0 += c.Ratio {
			fed := 0
			for j := range group {
				group[j] = in[g0+j]
				if group[j] != nil {
					fed++
				}
			}
			if fed == 0 {
				continue // a group of slices holding no data: nothing to reduce
			}
			if fed < c.Ratio {
				for j, b := range group {
					if b == nil {
						return nil, fmt.Errorf("%s of the reduction group from %s holds no stream", x.dev.SliceName(g0+j), x.dev.SliceName(g0))
					}
				}
			}
			if err := engines.InterSliceFold(c, group, acc); err != nil {
				return nil, fmt.Errorf("group from %s: %w", x.dev.SliceName(g0), err)
			}
			for j := range group {
				if !want[g0+j] {
					continue
				}
				o := make([]byte, c.OutPackets*pb)
				ok, err := engines.InterSliceOutput(c, acc, j, o)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", x.dev.SliceName(g0+j), err)
				}
				if !ok {
					return nil, fmt.Errorf("%s holds data in SliceOut, but the configuration leaves slot %d of its group padding", x.dev.SliceName(g0+j), j)
				}
				out[g0+j] = o
			}
		}
	}
	return out, nil
}

// runEverywhere marks the chains that must run on every slice whatever the
// run set (ExecOptions.Run): a chain's stages before a cross-slice step (a
// switch, an inter-slice reduction) run on every slice of the rings they
// feed, so the tensors they read (the begin tensor, a TRF or VRF operand)
// must hold data on every slice, and so must the chains that write them,
// transitively, and the DM sources of DMAs into them. A backward pass over
// the ops; a tensor once needed stays needed (conservative for a tensor
// rewritten in between).
func runEverywhere(p *kernel.Program) []bool {
	all := make([]bool, len(p.Ops))
	need := map[string]bool{}
	for i := len(p.Ops) - 1; i >= 0; i-- {
		op := p.Ops[i]
		if op.Kind != kernel.OpChain {
			if need[op.Dst] {
				need[op.Src] = true
			}
			continue
		}
		if n := len(op.Stages); n > 0 && op.Stages[n-1] != nil {
			all[i] = need[op.Stages[n-1].Tensor]
		}
		cross := false // a cross-slice step follows the stage
		for k := len(op.Stages) - 1; k >= 0; k-- {
			st := op.Stages[k]
			if st == nil {
				continue
			}
			switch st.Kind {
			case kernel.StSwitch, kernel.StVectorInterSlice:
				cross = true
			case kernel.StBegin, kernel.StAlign, kernel.StVectorFxp:
				if st.Tensor != "" && (cross || all[i]) {
					need[st.Tensor] = true
				}
				if rhs := st.InterleavedTensor(); rhs != "" && (cross || all[i]) {
					need[rhs] = true
				}
			}
		}
	}
	return all
}
