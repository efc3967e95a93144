package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// Reducer cost: the Contraction Engine's spatial tree and temporal
// accumulator (002 L4297-4548, L3784-3788).

// ReducerCost is the price of one contraction's Reducer.
type ReducerCost struct {
	// Cycles is the Reducer's occupancy: one computation packet per cycle
	// ("Each accumulation cycle processes one packet", 002 L4543), at least
	// the output beats of the 32-byte output bus (002 L4436, L4484).
	Cycles int
	// Steps is the computation Time::SIZE; OutBeats the output packets.
	Steps, OutBeats int
	// SpatialLatency is the tree's latency: one cycle per level, 5 (bf16)
	// to 7 (i4) for a full tree (002 L4542-4543, L3787).
	SpatialLatency int
	// TemporalLatency is the packets accumulated before the first block is
	// complete: about N cycles for a reduction axis of size N (002
	// L4543-4544), times the surviving axes inside it (002 L4410-4431).
	TemporalLatency int
	// Latency is SpatialLatency + TemporalLatency: "latency proportional to
	// tree depth plus time dimension size" (002 L4548).
	Latency int
	// Utilization is the fraction of the 8 Rows in use (002 L3785, L4544);
	// reduce-max runs on Row 0 only, 1/8 (002 L4533, L4546).
	Utilization float64
}

// spatialLatencyPerLevel returns the cycles per tree level of an input type:
// spatial_latency_cycles / tree_depth (002 L4543).
func spatialLatencyPerLevel(spec *engines.Spec, in dtype.DType) (float64, error) {
	r := &spec.Reducer
	var lat, depth int
	switch in {
	case dtype.I4:
		lat, depth = r.SpatialLatencyCycles.I4.Value, r.TreeDepth.I4.Value
	case dtype.I8:
		lat, depth = r.SpatialLatencyCycles.I8.Value, r.TreeDepth.I8.Value
	case dtype.F8E4M3, dtype.F8E5M2:
		lat, depth = r.SpatialLatencyCycles.F8.Value, r.TreeDepth.F8.Value
	case dtype.BF16:
		lat, depth = r.SpatialLatencyCycles.BF16.Value, r.TreeDepth.BF16.Value
	default:
		return 0, fmt.Errorf("cost: Reducer: input type %v is not i4, i8, f8 or bf16 (002 L3782)", in)
	}
	if depth <= 0 {
		return 0, fmt.Errorf("cost: Reducer: tree depth %d for %v", depth, in)
	}
	return float64(lat) / float64(depth), nil
}

// ReducerCycles prices a Reducer from its sizes: input type, configured tree
// depth, rows, computation steps, the packets per output block
// (iterations × inner time) and the output beats per block.
func ReducerCycles(spec *engines.Spec, in dtype.DType, depth, rows, steps, blockSteps, beatsPerBlock int) (ReducerCost, error) {
	var c ReducerCost
	if spec == nil {
		return c, errors.New("cost: Reducer: nil spec")
	}
	per, err := spatialLatencyPerLevel(spec, in)
	if err != nil {
		return c, err
	}
	if depth < 0 || rows <= 0 || rows > spec.Reducer.Rows.Value || steps < 0 || blockSteps <= 0 || beatsPerBlock < 0 || steps%blockSteps != 0 {
		return c, fmt.Errorf("cost: Reducer: depth %d, %d rows, %d steps in blocks of %d, %d beats per block", depth, rows, steps, blockSteps, beatsPerBlock)
	}
	c.Steps = steps
	c.OutBeats = steps / blockSteps * beatsPerBlock
	c.Cycles = max(steps, c.OutBeats)
	c.SpatialLatency = int(float64(depth)*per + 0.5)
	c.TemporalLatency = blockSteps
	c.Latency = c.SpatialLatency + c.TemporalLatency
	c.Utilization = float64(rows) / float64(spec.Reducer.Rows.Value)
	return c, nil
}

// Reducer prices a lowered Reducer configuration.
func Reducer(spec *engines.Spec, c *kernel.ReducerConfig) (ReducerCost, error) {
	if c == nil {
		return ReducerCost{}, errors.New("cost: Reducer: nil configuration")
	}
	a := &c.Accumulate
	steps := 1
	for _, l := range a.Loops {
		if l.Size <= 0 {
			return ReducerCost{}, fmt.Errorf("cost: Reducer: accumulator loop %q of size %d", l.Term, l.Size)
		}
		steps *= l.Size
	}
	return ReducerCycles(spec, c.Contract.In, c.Contract.Depth, c.Contract.Rows, steps, a.Iterations*a.InnerTime, a.Beats)
}
