package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Vector Engine costs that the kernel-level examples state: binary
// operations across an interleave axis, split reduce and the inter-slice
// reduction tail (002 L7151-7381, L6738-6754, L4360-4376).

// VectorBinaryCycles prices a Vector Engine binary operation over packets
// packets: "1 cycle per packet" (002 L7247), eight 32-bit lanes per cycle
// (002 L5272).
func VectorBinaryCycles(packets int) (int, error) {
	if packets < 0 {
		return 0, fmt.Errorf("cost: vector binary op over %d packets", packets)
	}
	return packets, nil
}

// SplitReduceCycles is the split-reduce total: N_splits × fetch_cycles +
// max(0, VE_cycles − pipeline_overlap) (002 L7349-7354), with fetch the
// fetch cycles of one tensor instance and overlap the VE cycles hidden
// behind the fetch.
func SplitReduceCycles(splits, fetch, ve, overlap int) (int, error) {
	if splits <= 0 || fetch < 0 || ve < 0 || overlap < 0 {
		return 0, fmt.Errorf("cost: split reduce of %d splits, fetch %d, VE %d, overlap %d", splits, fetch, ve, overlap)
	}
	return splits*fetch + max(0, ve-overlap), nil
}

// InterSliceReduceCycles prices an inter-slice reduction of group size r
// after stream cycles of input: "input streaming time + that ring-sized
// tail", O(r) (002 L6739-6749), one cycle per slice as in the manual's
// example of 256 cycles for 256 slices (002 L4369, L4375).
func InterSliceReduceCycles(spec *engines.Spec, stream, r int) (int, error) {
	if spec == nil {
		return 0, errors.New("cost: InterSliceReduceCycles: nil spec")
	}
	v := &spec.Vector
	if stream < 0 || r <= 0 || r > v.InterSliceSlices.Value {
		return 0, fmt.Errorf("cost: inter-slice reduce of %d slices (at most %d) after %d cycles", r, v.InterSliceSlices.Value, stream)
	}
	return stream + ceilDiv(r*v.InterSliceCycles256Slices.Value, v.InterSliceSlices.Value), nil
}

// isVectorStage reports whether a stage runs inside a Vector Engine pass
// (vector_init and vector_final included).
func isVectorStage(k kernel.StageKind) bool {
	if k == kernel.StVectorInit || k == kernel.StVectorFinal || k == kernel.StVectorInterSlice {
		return true
	}
	for _, v := range kernel.VectorStageKinds {
		if v == k {
			return true
		}
	}
	return false
}

// VectorStageCost is what one stage of a Vector Engine pass costs: the
// packets it processes at one packet per cycle (8 lanes in Way8, 4 in
// Way4: "Full 8-way throughput", "4-way throughput", 002 L5272-5273; a
// Narrow doubles the packets of the same data, 002 L4847), the latency it
// adds to the pipeline (one cycle per ALU, 002 L5274-5277), and the delay
// of its first output beyond that (an intra-slice reduce over n time steps
// holds its first output n flit cycles, 002 L5569-5571).
type VectorStageCost struct {
	Packets int
	Latency int
	Delay   int
	// Out is the packets the stage passes on (0: unchanged; −1: half, a
	// zip op's merge of the two groups).
	Out int
}

// VectorStage prices one stage of a Vector Engine pass from its
// configuration. Stages the manual gives no latency (the conversions,
// Narrow, Widen, Filter, the stash) add none (docs/spec-decisions.md "Chain
// op time"); FpDiv's dedicated divider and the reduce tree each add one
// pipeline stage, as an ALU does (002 L4915, L5566-5568).
func VectorStage(spec *engines.Spec, k kernel.StageKind, c *kernel.StageConfig) (VectorStageCost, error) {
	if spec == nil {
		return VectorStageCost{}, errors.New("cost: VectorStage: nil spec")
	}
	if c == nil {
		return VectorStageCost{}, errNotLowered
	}
	alu := spec.Vector.ALULatencyCycles.Value
	switch {
	case k == kernel.StVectorInit:
		if c.VectorInit == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Packets: c.VectorInit.Packets}, nil
	case k == kernel.StVectorFinal:
		if c.VectorFinal == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Packets: c.VectorFinal.Packets, Out: c.VectorFinal.Packets}, nil
	case k.IsVectorOp():
		if c.VectorOp == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Latency: alu}, nil
	case k == kernel.StVectorSplit || k == kernel.StVectorTrim || k == kernel.StVectorConcat || k == kernel.StVectorPad:
		if c.VectorWay == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Packets: max(c.VectorWay.InPackets, c.VectorWay.OutPackets), Out: c.VectorWay.OutPackets}, nil
	case k == kernel.StVectorReduce:
		r := c.VectorReduce
		if r == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Packets: r.InPackets, Latency: alu, Delay: r.Span, Out: r.OutPackets}, nil
	case k == kernel.StVectorFilter:
		if c.VectorFilter == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Packets: c.VectorFilter.InPackets, Out: c.VectorFilter.OutPackets}, nil
	case k == kernel.StVectorBranch || k == kernel.StVectorStash || k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		return VectorStageCost{}, nil
	case k == kernel.StVectorUnzip:
		// The pair's groups stream one after the other at one packet per
		// cycle (002 L5157-5159).
		if c.VectorUnzip == nil {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Packets: c.VectorUnzip.InPackets}, nil
	case kernel.ZipCluster(k) != "":
		// A zip op takes its cluster's ALU; it halves the packets (the
		// caller's steps).
		if c.VectorOp == nil || !c.VectorOp.Zip {
			return VectorStageCost{}, errNotLowered
		}
		return VectorStageCost{Latency: alu, Out: -1}, nil
	}
	return VectorStageCost{}, fmt.Errorf("cost: %s is not a Vector Engine stage", k)
}

// vectorStage adds one stage to the pass's cost v: its packets bound the
// pass's cycles (every region streams at one packet per cycle, so the
// busiest sets the rate), its latency adds to the fill and the drain, its
// delay to the fill; steps becomes the packets it passes on.
func (m *Model) vectorStage(v *StageCost, st *kernel.Stage, steps *int) error {
	c, err := VectorStage(m.spec, st.Kind, st.Config)
	if err != nil {
		return err
	}
	if st.Kind == kernel.StVectorInit && c.Packets != *steps && *steps > 0 {
		return fmt.Errorf("vector_init takes %d packets, the stream brings %d", c.Packets, *steps)
	}
	v.Cycles = max(v.Cycles, float64(c.Packets))
	v.Fill += float64(c.Latency + c.Delay)
	v.Drain += float64(c.Latency)
	v.Span = v.Cycles + v.Drain
	switch {
	case c.Out > 0:
		*steps = c.Out
	case c.Out < 0: // a zip merges the pair's two groups
		*steps /= 2
	}
	return nil
}
