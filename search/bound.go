package search

import (
	"math"

	"tcpmap/model/mapping"
)

// Lower bounds of a candidate's price that hold for every candidate with
// the same spatial factors (Cluster, Slice, Row, Packet), whatever its
// tiling, time order, broadcast place and layouts. The SAT planner states
// the compute and input bounds in the log domain over its factor literals
// and checks the others on each skeleton it decodes (branch.go);
// bound_test.go checks them all against cost.Model on every legal
// candidate of small spaces.
//
//   - Compute: every computation packet takes at least one cycle of the
//     main context (one 64-byte packet per cycle, 002 L4099, shared by the
//     Rows, 002 L132), and a slice computes
//     Π sizes / Π (Cluster·Slice·Row·Packet) packets over all tiles.
//   - Input traffic: each slice's DM receives its own copy of the input
//     elements it needs, so input t moves at least
//     bytes(t) · Π_{a ∉ t} (Cluster·Slice)(a) bytes from HBM to DM (a
//     broadcast read re-reads HBM, docs/spec-decisions.md "DMA: broadcast
//     reads"), at no more than the HBM's read rate: the read bandwidth's
//     share (0.75 of 1.5 TB/s, 002 L2602, L2636) of the channels' rate,
//     channels × 256 bytes per CyclesPerRequest (002 L2744, L2980). A
//     request moves at most 256 bytes (002 L2469) of one contiguous run;
//     when the slices split the innermost axis of t's HBM layout, a
//     slice's run is that axis's share, and a run shorter than 256 bytes
//     takes a whole request.
//
//   - DMN traffic: every byte a DMA moves into or out of a slice's DM
//     passes its DMN at 128 bytes a cycle (002 L2884, L2934), at least one
//     cycle a request however short (cost.DMAModel), and all commands on
//     one DMN run on its DMA Engine port one after the other (002 L2565,
//     L2796-2807). Each slice's DM receives its share of both inputs and
//     sends its share of the output, Π over the tensor's axes of what
//     Cluster and Slice leave; the builder spreads a cluster's S slices
//     over d groups of 256 / d slices (dmnGroups, placeSlices), S / d at
//     the start of each, so the busiest DMN serves min(S / d, 32) of them
//     (002 L2868) and the busiest DMA Engine, whose two DMN ports share
//     its one request a cycle, those of its pair of DMNs (dmaCycles,
//     slicesServed).
//   - HBM requests: each tensor's requests, a read-modify-write for a short
//     output write, spread at best evenly over the channels its bytes can
//     touch (at most one per 256-byte unit it spans); the inputs'
//     at no more than the read bandwidth, the output's at no more than the
//     write bandwidth, 0.75 of 1.5 TB/s each (002 L2602, L2636)
//     (dmaCycles).
//   - An epilogue's tensor operands: their least load (operandDMA).
//   - Sub context: the stationary input's TRF loads (subCycles).
//
// All add two DMA startups (≈500 cycles a command, 002 L2467, L2827): the
// first chain waits for a to_dm, and the last to_hbm follows the last
// chain.

// bounds are a candidate's lower bounds in cycles.
type bounds struct {
	compute float64
	input   [2]float64
	dma     float64 // busiest DMN or DMA Engine
	hbm     float64
	sub     float64
}

// max returns the largest bound.
func (b bounds) max() float64 {
	return max(b.compute, b.dma, b.hbm, b.sub, b.input[0], b.input[1])
}

// hbmBytesPerCycle is the fastest the cost model moves HBM bytes: every
// channel serving one 256-byte request per CyclesPerRequest.
func (s *Space) hbmBytesPerCycle() float64 {
	h := &s.Spec.HBM
	channels := float64(h.Stacks.Value * h.ChannelsPerStack.Value)
	return channels * float64(h.AccessUnitBytes.Value) / h.CyclesPerRequest.Value
}

// hbmReadBytesPerCycle is the fastest the cost model reads HBM bytes: the
// read bandwidth's share of the channels' rate, 0.75 of 1.5 TB/s
// (002 L2602, L2636; cost's HBMStats.ReadCycles).
func (s *Space) hbmReadBytesPerCycle() float64 {
	h := &s.Spec.HBM
	return s.hbmBytesPerCycle() * h.ReadTBPerS.Value / h.PeakTBPerS.Value
}

// fixedStartups is the DMA startups every candidate waits for: the first
// chain's to_dm and the last to_hbm after the last chain (bound.go's
// comment above), or one of them when a tensor is handed over in DM (a
// resident chain's einsum side, Space.hand: its store or its load
// left out).
func (s *Space) fixedStartups() float64 {
	if s.hand != nil {
		return float64(s.Spec.DMA.StartupCycles.Value)
	}
	return 2 * float64(s.Spec.DMA.StartupCycles.Value)
}

// handed reports whether tensor t is handed over in DM (Space.hand).
func (s *Space) handed(t int) bool { return s.hand != nil && s.hand.t == t }

// lowerBounds computes c's bounds from its Cluster, Slice, Row and Packet
// factors: the bounds of its skeleton, whatever its DM layouts.
func (s *Space) lowerBounds(c *Candidate) bounds { return s.boundsOf(c, false) }

// boundsOf is lowerBounds; with layout set it also uses c's DM layouts
// (layoutRun, computeRun).
func (s *Space) boundsOf(c *Candidate, layout bool) bounds {
	var loads [NumTensors]dmaLoad
	for t := range NumTensors {
		loads[t] = s.tensorDMA(c, t, true, layout)
	}
	return s.boundsWith(c, &loads)
}

// packets is the number of packets each slice's MACs take in over the
// kernel, at one a cycle at best: every axis's positions over its Cluster,
// Slice, Row and Packet factors.
func (s *Space) packets(c *Candidate) float64 {
	n := 1.0
	for a, ax := range s.P.Axes {
		n *= float64(ax.Size) / float64(c.Factor(a, Cluster)*c.Factor(a, Slice)*c.Factor(a, Row)*c.Factor(a, Packet))
	}
	return n
}

// boundsWith is boundsOf given each tensor's DMA load (tensorDMA).
func (s *Space) boundsWith(c *Candidate, loads *[NumTensors]dmaLoad) bounds {
	var b bounds
	packets := s.packets(c)
	fixed := s.fixedStartups()
	b.compute = fixed + packets
	if c.Switch {
		// The main chains' switches, one after the other on the main
		// context: at least the streamed operand's time positions over
		// all tiles, a packet's flits each (switchBound).
		b.compute = max(b.compute, fixed+s.switchTotal(c))
	}
	rate := s.hbmReadBytesPerCycle()
	for t := range 2 {
		o := &s.P.In[t]
		n, err := o.Bytes()
		if err != nil || s.handed(t) {
			continue // a handed-over input is not read from HBM
		}
		_, repl := s.share(c, o)
		bytes := float64(n) * repl
		// Slices splitting the input's innermost HBM axis shorten its
		// runs; but a contracted axis's slice digits are the innermost of
		// the Slice mapping (SplitK), so neighbouring slices hold
		// neighbouring runs, which a DMA reads as one.
		if in, short := s.ShortRun(t); short && s.P.Axes[in].Class != Contracted {
			spatial := c.Factor(in, Cluster) * c.Factor(in, Slice)
			run := float64(s.P.Axes[in].Size) * s.ElemBytes(t) / float64(spatial)
			if req := float64(s.Spec.DMA.RequestBytes.Value); spatial > 1 && run < req {
				bytes *= req / run
			}
		}
		b.input[t] = fixed + bytes/rate
	}
	var d dmaLoad
	for t := range loads {
		d = d.add(loads[t])
	}
	d = d.add(s.operandDMA(c)) // in dmaCycles' order: the same sums
	b.dma = fixed + max(d.dmn, d.engine)
	b.hbm = fixed + max(d.hbm, d.rd, d.wr)
	b.sub = fixed + s.subCycles(c)
	return b
}

// subCycles is a lower bound on the sub context's time: every slice loads
// its share of the stationary input into the TRF through the sub
// context's fetch, one fetch_size (8 bytes, 002 L1759, L2021) a cycle:
// the dual-channel halving (002 L2138-2141) is not the sub context's,
// whose channel a dual-channel chain takes (002 L2142; cost.Fetch refuses
// it); and the sub context runs one op at a time (002 L7063-7068).
func (s *Space) subCycles(c *Candidate) float64 {
	o := &s.P.In[c.Stationary]
	n, err := o.Bytes()
	if err != nil {
		return 0
	}
	share, _ := s.share(c, o)
	return float64(n) * share / float64(s.Spec.Fetch.SubFetchSize.Value)
}

// share returns the fraction of operand o one slice holds under c's
// Cluster and Slice factors (those of its own axes), and its replication
// (those of the axes it lacks: each of those slices holds its own copy).
// A switched candidate's streamed operand is shared by the ring instead
// of copied into each of its slices (Candidate.Switch).
func (s *Space) share(c *Candidate, o *Operand) (share, repl float64) {
	share, repl = 1, 1
	for a, ax := range s.P.Axes {
		f := float64(c.Factor(a, Cluster) * c.Factor(a, Slice))
		// The output is not copied over a contracted axis's slices: the
		// Inter-Slice Block reduces them, and at best spreads the result
		// over them (a promoted output digit, SplitK).
		if o.Has(ax.Name) || (o == &s.P.Out && ax.Class == Contracted) {
			share /= f
		} else {
			repl *= f
		}
	}
	if c.Switch && o == &s.P.In[1-c.Stationary] {
		r := float64(s.Ring(c))
		share, repl = share/r, repl/r
	}
	return share, repl
}

// placementBound is a lower bound on the cycles of every candidate with
// c's Cluster and Slice factors, whatever the rest: the input and DMA
// bounds without the output's accumulation-dependent run. It is at most
// lowerBounds(c).max().
//
// The streamed operand of a switched candidate is shared by its ring
// (Candidate.Switch), which depends on which input is stationary: the
// bound is the least over the unswitched candidates and the switched ones
// of either stationary input.
func (s *Space) placementBound(c *Candidate) float64 {
	d := *c
	d.Switch = false
	best := s.placementBoundOf(&d)
	for st := range uint8(2) {
		d.Stationary, d.Switch = st, true
		if r := s.Ring(&d); r >= 2 && r <= s.Spec.Switch.MaxRingSize.Value {
			best = min(best, s.placementBoundOf(&d))
		}
	}
	return best
}

// placementBoundOf is placementBound for c's stationary input and switch.
func (s *Space) placementBoundOf(c *Candidate) float64 {
	b := s.lowerBounds(c)
	fixed := s.fixedStartups()
	return max(b.input[0], b.input[1], s.dmaCycles(c, false, false).cycles(fixed))
}

// dmaCycles returns a lower bound on the busiest DMN's and the busiest
// DMA Engine's time for c. Each slice's DM receives its share of both
// inputs and sends its share of the output: the tensor's bytes over the
// Cluster and Slice factors of its axes. A DMA packet is contiguous on
// both sides (002 L2425-2427), so no request is longer than the tensor's
// run (runs); a DMN moves 128 bytes a cycle, at least a cycle a request
// (002 L2884, L2934), an engine one request of at most 256 bytes a cycle
// whichever of its two DMN ports issues it (002 L2469, L2596; the ports
// run in parallel, 002 L2565, so the engine is not bound by one DMN's
// rate: the busiest DMN's bound is dmn). The builder spreads a cluster's
// S slices over the DMNs (placeSlices): slicesServed counts the busiest
// DMN's and the busiest engine's (one per DMN pair, 002 L2404).
//
// The HBM channels serve at least bytes / min(run, 256) requests of every
// tensor, the inputs' times their replication over the slices that do not
// index them, each a channel's request time, or a read-modify-write
// (UnalignedWriteFactor request times, 002 L2985) for an output write
// shorter than 256 bytes; at best they spread evenly over the channels
// (002 L2980) that the tensor's bytes can touch: a tensor of n bytes lies
// in at most ⌈n / 256⌉ + 1 access units, each in one channel. The inputs'
// requests are reads and the output's writes, each direction at most at
// its share of the channels' rate, 0.75 of 1.5 TB/s
// (002 L2602, L2636; cost's HBMStats.ReadCycles, WriteCycles): rd and wr.
//
// With acc unset, the output's run ignores the accumulation (run), so the
// bound depends on the Cluster and Slice factors alone; with layout set,
// the runs also follow c's DM layouts (layoutRun, computeRun).
func (s *Space) dmaCycles(c *Candidate, acc, layout bool) dmaLoad {
	var d dmaLoad
	for t := range NumTensors {
		d = d.add(s.tensorDMA(c, t, acc, layout))
	}
	return d.add(s.operandDMA(c))
}

// operandDMA is the least DMA load of an epilogue's tensor operands
// (Problem.Operands): each is read tile by tile beside the output and
// spread over the slices as the output is (its share), in whole 256-byte
// requests at best (002 L2469) — the fewest its bytes take, so whatever
// its runs, the load is no more than the kernel's. It is read whole once
// per pass over its tiles: the builder loads a tile when the output's
// tile loops reach new positions of its axes, so each tile loop outside
// its innermost one over the operand's axes that the operand lacks (a
// broadcast operand's) reads it all again (operandPasses; once for a
// candidate without tiles, a skeleton's).
func (s *Space) operandDMA(c *Candidate) dmaLoad {
	var d dmaLoad
	if len(s.P.Operands) == 0 {
		return d
	}
	slices := 1
	for a := range s.P.Axes {
		slices *= c.Factor(a, Slice)
	}
	req := float64(s.Spec.DMA.RequestBytes.Value)
	perDMN, perEngine := s.slicesServed(slices, s.groupRing(c))
	reqPerCycle := float64(s.Spec.DMA.BytesPerCycle.Value) / req
	h := &s.Spec.HBM
	channels := float64(h.Stacks.Value * h.ChannelsPerStack.Value)
	share, _ := s.share(c, &s.P.Out)
	for i := range s.P.Operands {
		n, err := s.P.Operands[i].Bytes()
		if err != nil {
			continue
		}
		// Each pass's loads take at least the requests of the whole.
		passes := s.operandPasses(c, &s.P.Operands[i])
		units := math.Ceil(float64(n)/req) * passes
		d.hbm += units * h.CyclesPerRequest.Value / math.Min(channels, math.Ceil(float64(n)/float64(h.AccessUnitBytes.Value))+1)
		d.rd += units * h.CyclesPerRequest.Value * h.PeakTBPerS.Value / h.ReadTBPerS.Value / channels
		d.dmn += passes * float64(perDMN) * float64(n) * share / float64(s.Spec.DM.DMNBytesPerCycle.Value)
		d.engine += passes * float64(perEngine) * float64(n) * share / req / reqPerCycle
	}
	return d
}

// operandPasses is how many times c's kernel reads epilogue operand o
// whole: its loads over the tile steps (loads: the counts down to its
// innermost tile loop over one of its axes) over its tiles.
func (s *Space) operandPasses(c *Candidate, o *Operand) float64 {
	var counts [MaxAxes]int
	var held [MaxAxes]bool
	n, tiles := 0, 1
	for _, a := range c.TileOrder {
		if a == NoAxis {
			break
		}
		counts[n] = c.Factor(int(a), Tile)
		if o.Has(s.P.Axes[a].Name) {
			held[n] = true
			tiles *= counts[n]
		}
		n++
	}
	return float64(s.loads(counts[:n], held[:n]) / tiles)
}

// tensorDMA is dmaCycles for tensor t alone: the busiest DMN's and DMA
// Engine's time, the HBM channels' time and the read or write bandwidth's
// time moving all of t once.
func (s *Space) tensorDMA(c *Candidate, t int, acc, layout bool) dmaLoad {
	if s.handed(t) {
		return dmaLoad{} // handed over in DM: no DMA (einsumres.go)
	}
	slices := 1
	for a := range s.P.Axes {
		slices *= c.Factor(a, Slice)
	}
	o := &s.P.Out
	if t < 2 {
		o = &s.P.In[t]
	}
	n, err := o.Bytes()
	if err != nil {
		return dmaLoad{}
	}
	dmnBytes := float64(s.Spec.DM.DMNBytesPerCycle.Value)
	req := float64(s.Spec.DMA.RequestBytes.Value)
	perDMN, perEngine := s.slicesServed(slices, s.groupRing(c))
	reqPerCycle := float64(s.Spec.DMA.BytesPerCycle.Value) / req
	h := &s.Spec.HBM
	channels := float64(h.Stacks.Value * h.ChannelsPerStack.Value)
	share, repl := s.share(c, o)
	bytes := float64(n) * share
	run := s.run(c, t, float64(n), acc)
	if layout {
		run = math.Min(run, math.Min(s.layoutRun(c, t), s.computeRun(c, t)))
	}
	each := h.CyclesPerRequest.Value
	if t == TensorOut && run < req {
		each *= float64(h.UnalignedWriteFactor.Value)
	}
	var d dmaLoad
	units := float64(n) * repl / math.Min(req, run)
	// The busiest channel serves at least its share of the units: the
	// tensor's n bytes lie in at most ⌈n / 256⌉ + 1 access units (bits
	// 0-7 address a unit, 002 L2983), each in one channel, so a small
	// tensor's requests (a GEMV's output: 512 bytes, 16 read-modify-writes)
	// queue on a few channels whatever the address mapping.
	d.hbm = units * each / math.Min(channels, math.Ceil(float64(n)/float64(h.AccessUnitBytes.Value))+1)
	if t == TensorOut {
		d.wr = units * h.CyclesPerRequest.Value * h.PeakTBPerS.Value / h.WriteTBPerS.Value / channels
	} else {
		d.rd = units * h.CyclesPerRequest.Value * h.PeakTBPerS.Value / h.ReadTBPerS.Value / channels
	}
	d.dmn = float64(perDMN) * bytes / math.Min(dmnBytes, run)
	// An engine's two DMN ports run in parallel and share its one request
	// a cycle (cost.DMAModel: the engine's time is its busiest port, or
	// its startup plus all its requests).
	d.engine = float64(perEngine) * bytes / math.Min(req, run) / reqPerCycle
	return d
}

// slicesServed returns, for a cluster's live slices placed by the builder
// (placeSlices: dmnGroups(live, ring) = d groups of g = slices / d, each
// with live / d at its start), at most how many the busiest DMN (32
// slices, 002 L2868) and the busiest DMA Engine (a pair of DMNs, 002
// L2404) serve: the first DMN of a group min(live / d, 32), the first
// engine min(live / d, 64) when a group spans its pair, else the live
// slices of the 64 / g groups in the pair. placeSlices spreads over d
// groups or fewer (where the digits do not split), and fewer groups only
// load a DMN or an engine more, so these are lower bounds either way.
func (s *Space) slicesServed(live, Ring int) (dmn, engine int) {
	perDMN := s.Spec.Cluster.SlicesPerDMN.Value
	pair := perDMN * s.Spec.DMA.DMNsPerEngine.Value
	d := s.dmnGroups(live, Ring)
	q, g := live/d, s.Slices()/d
	dmn = min(q, perDMN)
	if g >= pair {
		return dmn, min(q, pair)
	}
	return dmn, pair / g * q
}

// run returns an upper bound on the bytes of one contiguous run of one
// slice's share of tensor t (of n bytes) in both HBM and DM.
//
// In HBM, with a plain layout, the innermost axes multiply up to and
// including the first one tiles, Cluster or Slice split, that one by the
// positions below its lowest Tile, Cluster or Slice digit (the axis's
// digit order, Candidate.Digits; a tile's DMA moves that tile alone), a contracted axis split across slices (SplitK) included: the DMA
// reads each slice's share as its own runs, even where neighbouring
// slices' shares continue one another in HBM (cost.DMAModel prices the
// 32-byte shares of gemm.yaml's in0 split 128 ways at 92 B/cycle). In DM, the output's packet is innermost and the commit writes it
// whole (outElement): with Interleaved accumulation it is Row # 8
// (002 L4447-4448), so with fewer than 8 rows its live part ends after the
// row digits — a run no longer than the innermost HBM axis's Row factor
// (of the axes of more than one position: a decode GEMV's output `[Q, B]`
// at B = 1 runs along Q), whose coordinates are consecutive, or one
// element when that axis has no Row factor (only with acc set). With 8
// rows the packet is full and the run may go on past it, but only where
// the packet steps the innermost HBM axis all through: where another
// axis holds some of the Row factors and the innermost axis is not whole
// in the packet, the packet's first step off that axis's Row digit (at
// best innermost) ends the run, so the same bound holds (the prefill
// layer's qk with Sq in Row and Sk innermost in HBM writes its scores 4
// bytes at a time, every layout: 2.2 G cycles where the tiling bound said
// 1.4 M). Otherwise no bound is claimed (+Inf).
func (s *Space) run(c *Candidate, t int, n float64, acc bool) float64 {
	if !s.PlainLayout(t) {
		return math.Inf(1)
	}
	o := &s.P.Out
	if t < 2 {
		o = &s.P.In[t]
	}
	elem := n / float64(o.Layout.Size())
	run := elem
	order := s.HBMOrder(t)
	for i := len(order) - 1; i >= 0; i-- {
		a := order[i]
		// A slice's consecutive positions of the axis in one tile: those
		// below its lowest Tile, Cluster or Slice digit (Candidate.Digits;
		// in the zero order its Time, Row and Packet digits), the whole
		// axis without such digits.
		lo, d := Level(NumLevels), c.Digits[a]
		for _, l := range [...]Level{Tile, Cluster, Slice} {
			if c.Factor(a, l) > 1 && (lo == NumLevels || d.Pos(l) > d.Pos(lo)) {
				lo = l
			}
		}
		if lo == NumLevels {
			run *= float64(s.P.Axes[a].Size)
			continue
		}
		run *= float64(c.Below(a, lo))
		break
	}
	// The innermost HBM axis of more than one position (an axis of one
	// position breaks no run).
	in := -1
	for i := len(order) - 1; i >= 0 && in < 0; i-- {
		if s.P.Axes[order[i]].Size > 1 {
			in = order[i]
		}
	}
	if acc && t == TensorOut && c.Acc == AccInterleaved && in >= 0 {
		rows := 1
		for a := range s.P.Axes {
			rows *= c.Factor(a, Row)
		}
		r := c.Factor(in, Row)
		if rows < s.Spec.Reducer.OutputBusElements.Value || r < rows && r < s.P.Axes[in].Size {
			run = math.Min(run, elem*float64(r))
		}
	}
	return run
}

// layoutRun returns an upper bound on the bytes of one contiguous run of
// tensor t's DMA under c's DM layout: one element when the innermost live
// digit of its DM element mapping (build.go: xElement, wElement,
// outElement) does not step its HBM address by one element — it steps
// another axis than the innermost of a plain HBM layout, or that axis's
// digit above a Row or Packet factor. A DMA packet is contiguous on both
// sides (002 L2593), and the lowering streams the DM side's live digits
// innermost. +Inf (no claim) otherwise, for a layout that is not plain,
// and for the output's copy in HBM order (LayoutCopy).
func (s *Space) layoutRun(c *Candidate, t int) float64 {
	if !s.PlainLayout(t) {
		return math.Inf(1)
	}
	in := -1
	order := s.HBMOrder(t)
	for i := len(order) - 1; i >= 0; i-- {
		if s.P.Axes[order[i]].Size > 1 {
			in = order[i]
			break
		}
	}
	a, l, ok := s.innermostDM(c, t)
	if in < 0 || !ok || a == in && c.Below(a, l) == 1 {
		return math.Inf(1)
	}
	if c.Switch && t == 1-int(c.Stationary) {
		return math.Inf(1) // the ring's block leaves other digits innermost
	}
	o := &s.P.Out
	if t < 2 {
		o = &s.P.In[t]
	}
	return float64(o.DType.SizeBits()) / 8
}

// computeRun returns the bytes of the longest contiguous run of tensor t's
// DMA under a computation-order DM layout (LayoutCompute): the DM element
// as Build writes it (build.element), walked innermost
// first while each digit steps the plain HBM layout by the run so far (a
// DMA packet is contiguous on both sides, 002 L2593). The output of
// GEMM 4096³ in computation order, `m![J / 32 % 8, I % 32, J % 32]` over
// HBM `m![I, J]`, writes 64-byte runs: read-modify-writes the skeleton
// bounds did not see, so the planner built such candidates only to prune
// them (544 built before, 232 with this). +Inf (no claim) for another
// layout, a layout that is not plain, the switched streamed operand (its
// ring's block is not in its element) or an element the builder refuses.
// Memoized by elementKey.
func (s *Space) computeRun(c *Candidate, t int) float64 {
	if c.Layout[t] != LayoutCompute || !s.PlainLayout(t) || c.Switch && t == 1-int(c.Stationary) {
		return math.Inf(1)
	}
	return s.memo.run(s.elementKey(c, t), t, func() float64 { return s.computeRunOf(c, t) })
}

// computeRunOf is computeRun without the memo.
func (s *Space) computeRunOf(c *Candidate, t int) float64 {
	b, err := s.newBuild(c)
	if err != nil {
		return math.Inf(1)
	}
	e, err := b.element(t)
	if err != nil {
		return math.Inf(1)
	}
	fs, err := s.memo.factorize(e)
	if err != nil {
		return math.Inf(1)
	}
	o := &s.P.Out
	if t < 2 {
		o = &s.P.In[t]
	}
	// The plain HBM layout's stride of each axis, in elements.
	var stride [MaxAxes]int
	n := 1
	order := s.HBMOrder(t)
	for i := len(order) - 1; i >= 0; i-- {
		stride[order[i]] = n
		n *= s.P.Axes[order[i]].Size
	}
	run := 1
	for _, f := range fs {
		if f.Kind != mapping.FactorTerm {
			break
		}
		a := s.P.AxisIndex(f.Axis)
		if a < 0 || f.Stride*stride[a] != run {
			break
		}
		run *= f.Extent
	}
	return float64(run) * float64(o.DType.SizeBits()) / 8
}

// innermostDM returns the axis and level of the innermost live digit of
// tensor t's DM element mapping under c, as Build lays it out; ok is false
// when it has none or the layout is a copy.
func (s *Space) innermostDM(c *Candidate, t int) (axis int, level Level, ok bool) {
	w, x := int(c.Stationary), 1-int(c.Stationary)
	last := func(axes []int, l Level, keep func(a int) bool) (int, bool) {
		for i := len(axes) - 1; i >= 0; i-- {
			if a := axes[i]; c.Factor(a, l) > 1 && (keep == nil || keep(a)) {
				return a, true
			}
		}
		return -1, false
	}
	// packetAxes: the output axes, then the contracted ones, in X's HBM
	// order (newBuild).
	var packetAxes []int
	for _, contracted := range []bool{false, true} {
		for _, a := range s.HBMOrder(x) {
			if c.Factor(a, Packet) > 1 && (s.P.Axes[a].Class == Contracted) == contracted {
				packetAxes = append(packetAxes, a)
			}
		}
	}
	holds := func(i int) func(a int) bool {
		return func(a int) bool { return s.P.In[i].Has(s.P.Axes[a].Name) }
	}
	hbmInner := func() (int, Level, bool) {
		// part(a, Time, Packet) of each axis in HBM order: the last axis
		// with a digit, at its lowest level with a factor.
		for i := len(s.HBMOrder(t)) - 1; i >= 0; i-- {
			a := s.HBMOrder(t)[i]
			order := c.Digits[a].Levels()
			for i := len(order) - 1; i >= 0; i-- {
				if l := order[i]; l >= Time && c.Factor(a, l) > 1 {
					return a, l, true
				}
			}
		}
		return -1, 0, false
	}
	switch {
	case t == TensorOut:
		switch {
		case c.Layout[TensorOut] == LayoutCopy:
			return -1, 0, false
		case c.Acc == AccInterleaved:
			// Row # 8: the rows, W's free axes in W's HBM order.
			a, ok := last(s.HBMOrder(w), Row, nil)
			return a, Row, ok
		case c.Acc == AccSequential:
			// The columns % 8: the packet's output axes.
			a, ok := last(packetAxes, Packet, func(a int) bool { return s.P.Axes[a].Class != Contracted })
			return a, Packet, ok
		}
		return -1, 0, false
	case c.Layout[t] != LayoutCompute:
		return hbmInner()
	case t == x:
		// The time digits of X's axes in computation order, then the
		// packet.
		if a, ok := last(packetAxes, Packet, nil); ok {
			return a, Packet, true
		}
		a, ok := last(c.TimeOrder(), Time, holds(x))
		return a, Time, ok
	default:
		// The rows, the time digits of W's axes, then W's part of the
		// packet.
		if a, ok := last(packetAxes, Packet, holds(w)); ok {
			return a, Packet, true
		}
		if a, ok := last(c.TimeOrder(), Time, holds(w)); ok {
			return a, Time, true
		}
		a, ok := last(s.HBMOrder(w), Row, nil)
		return a, Row, ok
	}
}
