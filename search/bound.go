package search

import "math"

// Lower bounds of a candidate's price that hold for every candidate with
// the same spatial factors (Cluster, Slice, Row, Packet), whatever its
// tiling, time order, broadcast place and layouts. The SAT planner states
// them in the log domain over its factor literals; bound_test.go checks
// them against cost.Model on every legal candidate of small spaces.
//
//   - Compute: every computation packet takes at least one cycle of the
//     main context (one 64-byte packet per cycle, 002 L4099, shared by the
//     Rows, 002 L132), and a slice computes
//     Π sizes / Π (Cluster·Slice·Row·Packet) packets over all tiles.
//   - Input traffic: each slice's DM receives its own copy of the input
//     elements it needs, so input t moves at least
//     bytes(t) · Π_{a ∉ t} (Cluster·Slice)(a) bytes from HBM to DM (a
//     broadcast read re-reads HBM, docs/spec-decisions.md "DMA: broadcast
//     reads"), at no more than the HBM channels' rate: channels × 256 bytes
//     per CyclesPerRequest (002 L2744, L2980). A request moves at most
//     256 bytes (002 L2469) of one contiguous run; when the slices split
//     the innermost axis of t's HBM layout, a slice's run is that axis's
//     share, and a run shorter than 256 bytes takes a whole request.
//
// Both add two DMA startups (≈500 cycles a command, 002 L2467, L2827): the
// first chain waits for a to_dm, and the last to_hbm follows the last
// chain.

// bounds are a candidate's lower bounds in cycles.
type bounds struct {
	compute float64
	input   [2]float64
}

// max returns the largest bound.
func (b bounds) max() float64 { return math.Max(b.compute, math.Max(b.input[0], b.input[1])) }

// hbmBytesPerCycle is the fastest the cost model moves HBM bytes: every
// channel serving one 256-byte request per CyclesPerRequest.
func (s *Space) hbmBytesPerCycle() float64 {
	h := &s.Spec.HBM
	channels := float64(h.Stacks.Value * h.ChannelsPerStack.Value)
	return channels * float64(h.AccessUnitBytes.Value) / h.CyclesPerRequest.Value
}

// lowerBounds computes c's bounds from its Cluster, Slice, Row and Packet
// factors.
func (s *Space) lowerBounds(c *Candidate) bounds {
	var b bounds
	packets := 1.0
	for a, ax := range s.P.Axes {
		packets *= float64(ax.Size) / float64(c.factor(a, Cluster)*c.factor(a, Slice)*c.factor(a, Row)*c.factor(a, Packet))
	}
	fixed := 2 * float64(s.Spec.DMA.StartupCycles.Value)
	b.compute = fixed + packets
	rate := s.hbmBytesPerCycle()
	for t := range 2 {
		o := &s.P.In[t]
		n, err := o.Bytes()
		if err != nil {
			continue
		}
		bytes := float64(n)
		for a, ax := range s.P.Axes {
			if !o.has(ax.Name) {
				bytes *= float64(c.factor(a, Cluster) * c.factor(a, Slice))
			}
		}
		if in, short := s.shortRun(t); short {
			spatial := c.factor(in, Cluster) * c.factor(in, Slice)
			run := float64(s.P.Axes[in].Size) * s.elemBytes(t) / float64(spatial)
			if req := float64(s.Spec.DMA.RequestBytes.Value); spatial > 1 && run < req {
				bytes *= req / run
			}
		}
		b.input[t] = fixed + bytes/rate
	}
	return b
}

// elemBytes returns input t's element size in bytes.
func (s *Space) elemBytes(t int) float64 { return float64(s.P.In[t].DType.SizeBits()) / 8 }

// shortRun returns the innermost axis of input t's HBM layout, and whether
// the slices splitting it can shorten a run below one request: only when
// the whole axis spans more than a request (else the run may go on into the
// next axis, and no bound is claimed).
func (s *Space) shortRun(t int) (int, bool) {
	order := s.hbm[t]
	if len(order) == 0 {
		return 0, false
	}
	in := order[len(order)-1]
	return in, float64(s.P.Axes[in].Size)*s.elemBytes(t) > float64(s.Spec.DMA.RequestBytes.Value)
}
