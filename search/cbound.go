package search

import (
	"math"

	"tcpmap/cost"
)

// A lower bound on one candidate's cycles from its fields alone, before its
// program is built: the path its ops must follow through the schedule
// (cost/schedule.go), each op at its own lower bound. The skeleton bounds
// (bound.go) hold for every tiling and buffering of a skeleton, so they
// can only add the work up; this one knows the tiles and how they are
// buffered, and adds up the ops that must run one after the other.
//
// The builder's program (build.go) runs, for each tile step s, the to_dm
// of each input whose tile changed, the sub-context TRF load when the
// stationary input W was loaded, the main chain and the to_hbm of the
// output tile (with K chunks, TileK, after the last chunk of the tile
// only). The scheduler starts an op no earlier than the end of an
// earlier op it conflicts with (SCH-R3..R6, 002 L7069-7070):
//
//   - the TRF load reads what W's to_dm wrote, the main chain what the
//     streamed input X's to_dm and the TRF load wrote, the to_hbm what the
//     main chain wrote (read after write);
//   - with one buffer of each tensor, the next tile's to_dm and TRF load
//     overwrite what the main chain read, and the next main chain
//     overwrites the output the to_hbm reads (write after read).
//
// So single-buffered, step s ≥ 1 takes at least
// max(out, W + sub, X, out ∪ loads) + main past the end of the main chain
// before it (each term only for the tensors loaded), where a DMA command
// takes at least its startup plus its share of the busiest DMN, DMA Engine,
// the HBM channels or the HBM read or write bandwidth (tensorDMA, per
// load), and commands in one batch
// share those (the union term). Step 0 loads both inputs, and the last
// to_hbm follows the last main chain. Double-buffered, the next tile's
// loads overlap the main chain, and only the main context's chains in
// order, the sub context's TRF loads in order (in Dual mode the chains and
// the TRF loads in one order: a chain collecting dual-channel flits holds
// the sub context's channel, 002 L2127, L2142), and the DMA traffic of all
// the commands remain. Every DMA command's duration includes its startup
// (cost.DMAModel, 002 L2467); a main chain takes a cycle per computation
// packet at least (002 L4099) and a TRF load subCycles per load.

// dmaLoad is a lower bound on DMA commands moving tiles of tensors: the
// busiest DMN's, DMA Engine's and HBM channels' time, and the time of
// their HBM reads and of their HBM writes at the read and write bandwidth.
// Loads in one batch add componentwise: each component is a resource the
// batch's commands share.
type dmaLoad struct{ dmn, engine, hbm, rd, wr float64 }

func (d dmaLoad) add(e dmaLoad) dmaLoad {
	return dmaLoad{d.dmn + e.dmn, d.engine + e.engine, d.hbm + e.hbm, d.rd + e.rd, d.wr + e.wr}
}

func (d dmaLoad) scale(k float64) dmaLoad {
	return dmaLoad{d.dmn * k, d.engine * k, d.hbm * k, d.rd * k, d.wr * k}
}

// cycles is the command's duration bound with its startup.
func (d dmaLoad) cycles(startup float64) float64 {
	return startup + max(d.dmn, d.engine, d.hbm, d.rd, d.wr)
}

// candidateBound returns a lower bound on c's cycles: the larger of its
// skeleton bounds and the serial path of its tiles.
func (s *Space) candidateBound(c *Candidate) float64 { return s.candidateBoundOf(c, true) }

// candidateBoundOf is the candidate bound with each tensor's DMA load
// taken with or without c's layouts (tensorDMA).
func (s *Space) candidateBoundOf(c *Candidate, layout bool) float64 {
	if s.vrfRefused(c) {
		return math.Inf(1)
	}
	var loads [NumTensors]dmaLoad
	for t := range NumTensors {
		if layout && s.runRefused(c, t) {
			return math.Inf(1)
		}
		loads[t] = s.tensorDMA(c, t, true, layout)
	}
	return s.loadsBound(c, &loads, max(s.fetchBound(c, layout), s.switchBound(c, layout)))
}

// vrfRefused reports whether an epilogue operand's tile cannot fit the
// VRF: the kernel moves each tile of the operand into one VRF tensor in
// the accumulator's order restricted to the operand's axes (build.go,
// epilogueOperand), which holds every position of those axes a slice's
// output tile has, their Time, Row and Packet factors' product at least,
// and a VRF holds 8 KB a slice (002 L140; VRF-R3). The factors are known
// at a tiling (StageTiles), so the tiling bound is +Inf too, and the
// search lists none of its candidates (the prefill layer's qk with its
// mask fused refused 441,596 so in 900 s).
func (s *Space) vrfRefused(c *Candidate) bool {
	for i := range s.P.Operands {
		o := &s.P.Operands[i]
		n := 1
		for a := range s.P.Axes {
			if o.Has(s.P.Axes[a].Name) {
				n *= c.Factor(a, Time) * c.Factor(a, Row) * c.Factor(a, Packet)
			}
		}
		b, err := o.DType.BytesFor(n)
		if err == nil && b > s.Spec.VRF.BytesPerSlice.Value {
			return true
		}
	}
	return false
}

// runRefused reports whether input t of c is loaded from HBM into DM in
// runs too short for any packet the DMA may move there: an HBM-to-DM
// packet is a multiple of 8 bytes (002 L2425-2427, L2836-2837; DMA-R1),
// and a packet is contiguous on both sides (002 L2593), so a run bounded
// under 8 bytes (run, layoutRun, computeRun: each an upper bound) leaves
// none. Such a candidate is illegal whatever else it holds: its candidate
// bound is +Inf, and the search never builds it (the prefill layer's qk
// built a million in 900 s only to refuse them so). The output's runs are
// not checked: a DM-to-HBM packet may be 1 byte.
func (s *Space) runRefused(c *Candidate, t int) bool {
	if t >= 2 || s.handed(t) {
		return false
	}
	o := &s.P.In[t]
	n, err := o.Bytes()
	if err != nil {
		return false
	}
	align := float64(max(s.Spec.DMA.HBMToDMAlignBytes.Value, s.Spec.DMA.DMPacketAlignBytes.Value))
	run := min(s.run(c, t, float64(n), true), s.layoutRun(c, t), s.computeRun(c, t))
	return run < align
}

// loadsBound is the candidate bound given each tensor's DMA load and a
// lower bound on each main chain's stream (fetchBound, switchBound; 0 for
// none): the larger of the skeleton bounds and the serial path of the
// tiles.
func (s *Space) loadsBound(c *Candidate, loads *[NumTensors]dmaLoad, chain float64) float64 {
	return max(s.boundsWith(c, loads).max(), s.serialBound(c, loads, chain))
}

// tilingBound returns a lower bound on the candidate bound of every
// candidate of c's tiling: c as the enumerator shows it at StageTiles, its
// factors, tile order and buffering set, its Time order, row and deal
// orders and DM layouts not yet. Each tensor's DMA load is taken at the
// runs its factors allow whatever the layout (tensorDMA without layout):
// a layout only shortens runs (candidateBound takes the least), a shorter
// run only adds to each of the load's terms, and candidateBound's terms
// only grow with the loads (TestTilingBoundAdmissible).
func (s *Space) tilingBound(c *Candidate) float64 { return s.candidateBoundOf(c, false) }

// dmaCache remembers each tensor's DMA load (tensorDMA) for the last
// candidate it was computed for, keyed by the candidate with the other
// tensors' layouts cleared: a tensor's load reads its own layout only,
// and the enumerator lists a candidate's layout choices one after another.
type dmaCache struct {
	key     [NumTensors]Candidate
	ok      [NumTensors]bool
	load    [NumTensors]dmaLoad
	refused [NumTensors]bool // runRefused
}

// candidateBoundCached is candidateBound with the tensors' DMA loads
// taken from m where they are known.
func (s *Space) candidateBoundCached(c *Candidate, m *dmaCache) float64 {
	if s.vrfRefused(c) {
		return math.Inf(1)
	}
	var loads [NumTensors]dmaLoad
	for t := range NumTensors {
		k := *c
		for u := range NumTensors {
			if u != t {
				k.Layout[u] = 0
			}
		}
		if !m.ok[t] || m.key[t] != k {
			m.key[t], m.ok[t], m.load[t], m.refused[t] = k, true, s.tensorDMA(c, t, true, true), s.runRefused(c, t)
		}
		if m.refused[t] {
			return math.Inf(1)
		}
		loads[t] = m.load[t]
	}
	return s.loadsBound(c, &loads, max(s.fetchBound(c, true), s.switchBound(c, true)))
}

// tileShape is a candidate's tile loops: their counts, outermost first,
// which of them each tensor holds, the tile steps and each tensor's tiles.
type tileShape struct {
	counts    [MaxAxes]int
	nt, steps int
	held      [NumTensors][MaxAxes]bool
	tiles     [NumTensors]int
}

// tileShapeOf returns c's tile loops.
func (s *Space) tileShapeOf(c *Candidate) tileShape {
	sh := tileShape{steps: 1}
	for t := range NumTensors {
		sh.tiles[t] = 1
	}
	ops := [NumTensors]*Operand{&s.P.In[0], &s.P.In[1], &s.P.Out}
	for _, a := range c.TileOrder {
		if a == NoAxis {
			break
		}
		sh.counts[sh.nt] = c.Factor(int(a), Tile)
		sh.steps *= sh.counts[sh.nt]
		for t, o := range ops {
			if o.Has(s.P.Axes[a].Name) {
				sh.held[t][sh.nt] = true
				sh.tiles[t] *= sh.counts[sh.nt]
			}
		}
		sh.nt++
	}
	return sh
}

// perTile is each tensor's DMA load per tile, given its load whole.
func (sh *tileShape) perTile(whole *[NumTensors]dmaLoad) [NumTensors]dmaLoad {
	var load [NumTensors]dmaLoad
	for t := range NumTensors {
		d, k := whole[t], float64(sh.tiles[t])
		load[t] = dmaLoad{d.dmn / k, d.engine / k, d.hbm / k, d.rd / k, d.wr / k}
	}
	return load
}

// allLoads is the DMA load of every command over the tile steps: each
// input's loads (Space.loads) and the output's stores, one per nk steps.
func (s *Space) allLoads(sh *tileShape, load *[NumTensors]dmaLoad, nk int) dmaLoad {
	all := load[TensorOut].scale(float64(sh.steps / nk))
	for t := range 2 {
		all = all.add(load[t].scale(float64(s.loads(sh.counts[:sh.nt], sh.held[t][:sh.nt]))))
	}
	return all
}

// serialBound is the bound of the path through c's tile steps, given
// each tensor's DMA load moving it whole (tensorDMA) and a lower bound on
// each main chain's stream (fetchBound, switchBound).
func (s *Space) serialBound(c *Candidate, whole *[NumTensors]dmaLoad, chain float64) float64 {
	sh := s.tileShapeOf(c)
	counts, nt, steps, held, tiles := sh.counts, sh.nt, sh.steps, sh.held, sh.tiles
	startup := float64(s.Spec.DMA.StartupCycles.Value)
	load := sh.perTile(whole)
	w, x := int(c.Stationary), 1-int(c.Stationary)
	packets := s.packets(c)
	main := max(packets/float64(steps), chain)
	vec := s.vectorPasses(c, steps)
	if r := s.Split(c); r > 1 {
		// The Vector Engine's pass of a split candidate streams each
		// chain's partial sums at eight 32-bit lanes a cycle (002 L5272)
		// and adds the Inter-Slice Block's ring tail (002 L6739-6749):
		// cost.InterSliceReduceCycles of that stream.
		outs := s.sliceOutputs(c)
		lanes := s.Spec.Vector.Way8ElementsPerCycle.Value
		if n, err := cost.InterSliceReduceCycles(s.Spec, (outs+lanes-1)/lanes, r); err == nil {
			main = max(main, float64(n))
		}
	}
	sub := s.subCycles(c) / float64(tiles[w])
	out := load[TensorOut].cycles(startup)
	if s.handed(TensorOut) {
		out = 0 // the output stays in DM: no store (einsumres.go)
	}
	dw, dx := load[w].cycles(startup), load[x].cycles(startup)
	// A handed-over input is in DM when the kernel starts: no to_dm.
	if s.handed(w) {
		dw = 0
	}
	if s.handed(x) {
		dx = 0
	}
	first := max(dw+sub, dx, load[w].add(load[x]).cycles(startup)) + main
	// The sub context loads W each time the tile loops change its tile
	// (loads: a tile left and taken again is loaded again), each after
	// W's to_dm, and the last main chain follows the last load. A main
	// chain collecting 64-byte dual-channel flits holds the sub context's
	// channel too (002 L2127, L2142; cost's schedule), so in Dual mode
	// every main chain and every TRF load after the first run one after
	// the other, from the first main chain's start.
	lw := float64(s.loads(counts[:nt], held[w][:nt]))
	subPath := dw + lw*sub + main + out
	if c.Mode == Dual {
		subPath = first + (lw-1)*sub + float64(steps-1)*main + out
	}
	// With K chunks (TileK) an output tile is stored once, after its
	// last chunk: every nk-th step.
	nk := s.KTiles(c)
	if c.DoubleBuffer || steps == 1 {
		all := s.allLoads(&sh, &load, nk)
		// Every command pays its startup on its engine; count one.
		dma := all.cycles(startup)
		if c.DoubleBuffer && steps > 1 {
			dma = max(dma, s.storeTail(c, &sh, nk, load, all, startup))
		}
		dma = max(dma, s.exchanges(c, steps/nk, all, startup))
		return max(first+float64(steps-1)*main+vec+out, subPath, dma)
	}
	// Single-buffered: each step after the first waits for the main chain
	// before it, loads what changed, and computes.
	total := first
	for st := 1; st < steps; st++ {
		lw, lx := s.reloads(counts[:nt], held[w][:nt], st), s.reloads(counts[:nt], held[x][:nt], st)
		p, batch := 0.0, dmaLoad{}
		if st%nk == 0 {
			// The step before stored its output tile.
			p, batch = out, load[TensorOut]
		}
		if lw {
			p = max(p, dw+sub)
			batch = batch.add(load[w])
		}
		if lx {
			p = max(p, dx)
			batch = batch.add(load[x])
		}
		if batch == (dmaLoad{}) {
			total += main // nothing moves between the two chains
			continue
		}
		total += max(p, batch.cycles(startup)) + main
	}
	return max(total+out, subPath)
}

// storeTail is a lower bound on a double-buffered candidate's DMA
// context from the order in which its commands issue, 0 where it does not
// hold; sh is its tile loops, all the DMA load of every command (allLoads),
// load each tensor's per tile.
//
// The builder issues step k+1's loads before step k's main chain and
// step k's store after it (build.go). A store reads what its main chain
// wrote (SCH-R3, 002 L7069-7070), and that chain starts no earlier than
// the loads issued before it (SCH-R1, 002 L7044-7054) and takes a cycle at
// least, so no store issued after the last load joins that load's batch:
// the stores of the steps from the one before the last load on run in
// batches of their own (cost's schedule: a command joins the open batch
// only when ready at its start). Where every DMA command has a descriptor
// on one DMA Engine, each batch waits for the one before it on that
// engine, so the batches run one after another, each at least its
// startup and its commands' load (002 L2404, L2549, L2467). The loads of
// two steps after the first never share a batch: the store between them
// in issue order opens one of its own after the first. Every command
// has a descriptor on the engine of slice 0 of cluster 0 (002 L2404,
// L2868): each load moves a tile to every live slice (the live slices
// start at slice 0, build.placeSlices), and each
// store leaves every live slice, or with the contracted axis split across
// slices every slice of each reduced group (a promoted Time digit) or the
// first (the dummy form `1 # r`, engines.SplitKOutputs), slice 0 either
// way — without the cluster reduce's DMA between the clusters' DMs and
// with each step storing its tile (no K chunks). Then the DMA context
// takes at least the loads and the stores before the last load, then the
// stores after it, each load's batch and the stores' with its startup.
func (s *Space) storeTail(c *Candidate, sh *tileShape, nk int, load [NumTensors]dmaLoad, all dmaLoad, startup float64) float64 {
	if nk != 1 || s.ClusterSplit(c) != 1 || s.handed(TensorOut) {
		return 0
	}
	counts := sh.counts[:sh.nt]
	last, loads := 0, 0 // the last step after the first that loads an input tile; how many do
	for st := 1; st < sh.steps; st++ {
		if s.reloads(counts, sh.held[0][:sh.nt], st) || s.reloads(counts, sh.held[1][:sh.nt], st) {
			last, loads = st, loads+1
		}
	}
	n := sh.steps // stores after the last load: every step's from max(last-1, 0)
	if last > 0 {
		n = sh.steps - last + 1
	}
	tail := load[TensorOut].scale(float64(n))
	pre := all.add(tail.scale(-1))
	return pre.cycles(float64(max(loads, 1))*startup) + tail.cycles(startup)
}

// exchanges is a lower bound on the DMA context of a candidate with the
// cluster reduce, 0 for another: each of its n output tiles' partial sums
// move between the clusters' DMs by one DMA (build.clusterReduce, 002
// L2386-2389), issued after the tile's main chain and read by the pass
// that adds them before the tile's store (SCH-R3, 002 L7069-7070). The
// loads issued before it (step k+1's, build.go's issue order) started
// before that chain (SCH-R1, 002 L7044-7054) and the store after it waits
// for the pass, so the exchange runs in a batch of its own. Every DMA
// command has a descriptor on the engine of slice 0 of cluster 0 (the
// exchange moves every live slice's partial sums; storeTail says why the
// loads and stores do), so the batches run one after another: the loads
// and stores, then the n exchanges, each at least its startup and the
// busiest DMN's share of the partial sums at the DMN's bandwidth (002
// L2884). The libraries' exchange through HBM (Space.Library) is left out.
func (s *Space) exchanges(c *Candidate, n int, all dmaLoad, startup float64) float64 {
	if s.ClusterSplit(c) == 1 || s.Library {
		return 0
	}
	slices := 1
	for a := range s.P.Axes {
		slices *= c.Factor(a, Slice)
	}
	outs := s.sliceOutputs(c)
	perDMN, _ := s.slicesServed(slices, s.groupRing(c))
	bytes := float64(outs * s.P.Acc.SizeBits() / 8)
	x := dmaLoad{dmn: float64(perDMN) * bytes / float64(s.Spec.DM.DMNBytesPerCycle.Value)}
	return all.cycles(startup) + float64(n)*x.cycles(startup)
}

// sliceOutputs is how many outputs one slice computes per tile step: the
// output axes' Time, Row and Packet factors.
func (s *Space) sliceOutputs(c *Candidate) int {
	outs := 1
	for a, ax := range s.P.Axes {
		if ax.Class != Contracted {
			outs *= c.Factor(a, Time) * c.Factor(a, Row) * c.Factor(a, Packet)
		}
	}
	return outs
}

// reloads reports whether a tensor holding the tile axes marked in held
// is loaded again at step st > 0 of the tile loops with counts (outermost
// first): when the index of one of its axes changes (build.go's tile key).
func (s *Space) reloads(counts []int, held []bool, st int) bool {
	stride := 1
	for i := len(counts) - 1; i >= 0; i-- {
		if held[i] && st%stride == 0 {
			return true
		}
		stride *= counts[i]
	}
	return false
}

// loads returns how many times a tensor holding the tile axes marked in
// held is loaded over all the steps: the product of the counts down to its
// innermost held axis.
func (s *Space) loads(counts []int, held []bool) int {
	last := -1
	for i, h := range held {
		if h {
			last = i
		}
	}
	n := 1
	for i := 0; i <= last; i++ {
		n *= counts[i]
	}
	return n
}

// vectorPasses is a lower bound on the main context's time in the Vector
// Engine's passes over c's output tiles (of steps tile steps): the split
// reduce over the output tile after each K chunk past the first (TileK,
// 002 L7151-7177) and the add over each cluster's share of it (the cluster
// reduce, 002 L7382-7610), each streaming both partial sums of each of a
// slice's outputs (the interleaved fetch's pairs, 002 L5154-5178,
// L7151-7177) at eight 32-bit lanes a cycle at best (002 L5272), one op at
// a time on the main context (SCH-R2, 002 L7063-7068). 0 without K chunks
// or the cluster reduce.
func (s *Space) vectorPasses(c *Candidate, steps int) float64 {
	nk, nc := s.KTiles(c), s.ClusterSplit(c)
	if nk == 1 && nc == 1 {
		return 0
	}
	outs := s.sliceOutputs(c)
	lanes := float64(s.Spec.Vector.Way8ElementsPerCycle.Value)
	pass := float64(nk-1) * 2 * float64(outs) / lanes
	if nc > 1 {
		pass += 2 * float64(outs) / float64(nc) / lanes
	}
	return float64(steps/nk) * pass
}

// fetchBound returns a lower bound on the cycles of each main chain's
// fetch of the streamed operand X, 0 for a packet of one element (the
// chain's cycle a packet counts it). The Fetch Engine reads a packet
// fetch_size bytes at a time, at most the largest main-context size
// (32 bytes), and fetch_size divides gcd(packet, contiguous run) (002
// L1757-1761): #cycles = Time::SIZE × ceil(Packet::SIZE / fetch_size)
// (002 L2060), halved for multi-read packets in dual channel mode (002
// L2140-2141; cost.Fetch). So a 64-byte packet takes two reads at least.
// With layout, c's DM layouts are known: under the HBM-order DM layout
// (build.xElement) the DM element's innermost digit is the lowest-nested
// Time, Row or Packet digit of X's innermost HBM axis that has one (a
// switched candidate's ring block leaves its axis's Row and Packet digits
// innermost, and its kept Time digit only without them). When that is not
// the packet's innermost digit (build.packet: the last packet axis's
// Packet digit), the packet's innermost digit steps DM by more than one
// element, so the contiguous run is one element and every element of the
// packet is a read. The computation-order layout puts the packet
// innermost, and a layout that is not plain is not claimed. The fetch
// Time is X's time digits, with the stationary operand's free axes when
// the fetch repeats them (BcastFetch, counted with layout: the broadcast
// place is set by then), each slice of a switch's ring fetching its share
// (Space.SwitchBlock, 002 L3150-3157).
func (s *Space) fetchBound(c *Candidate, layout bool) float64 {
	x := 1 - int(c.Stationary)
	in := &s.P.In[x]
	// The packet's innermost digit: its output axes, then its contracted
	// ones, each in X's HBM order (newBuild), the last.
	order := s.HBMOrder(x)
	pk := 1
	var packetAxes []int
	for _, contracted := range []bool{false, true} {
		for _, a := range order {
			if f := c.Factor(a, Packet); f > 1 && (s.P.Axes[a].Class == Contracted) == contracted {
				pk *= f
				packetAxes = append(packetAxes, a)
			}
		}
	}
	if pk <= 1 {
		return 0
	}
	maxFetch := 0
	for _, f := range s.Spec.Fetch.MainFetchSizes.Value {
		maxFetch = max(maxFetch, f)
	}
	elem := s.ElemBytes(x)
	fetchElems := int(float64(maxFetch) / elem) // at most 32 bytes a read
	if fetchElems <= 0 {
		return 0
	}
	if layout {
		if run := s.packetRun(c, order, packetAxes); run > 0 {
			fetchElems = min(fetchElems, run)
		}
	}
	per := (pk + fetchElems - 1) / fetchElems
	steps := 1
	for a, ax := range s.P.Axes {
		if in.Has(ax.Name) || layout && c.Bcast == BcastFetch && s.Role(a, c.Stationary) == RoleFW {
			steps *= c.Factor(a, Time)
		}
	}
	if c.Switch {
		steps /= s.Ring(c)
	}
	if c.Mode == Dual {
		per = (per + 1) / 2
	}
	return float64(steps * per)
}

// packetRun returns an upper bound on the contiguous run, in elements, of
// the streamed operand's packet under c's DM layout (fetchBound), 0 for no
// claim: under the HBM-order layout of a plain tensor (build.xElement),
// the DM element's digits innermost first are each axis's Time, Row and
// Packet digits in X's HBM order, innermost axis first, each axis's
// lowest-nested first (a switched candidate's ring block leaves its axis's
// Row and Packet digits innermost, and its kept Time digit above them).
// The packet's digits innermost first are the Packet digits of
// packetAxes, the last first (build.packet). The run is one element when
// the packet's innermost digit is not the element's innermost, and that
// digit's extent when the packet's next digit is not the element's next.
func (s *Space) packetRun(c *Candidate, order, packetAxes []int) int {
	x := 1 - int(c.Stationary)
	if c.Layout[x] != LayoutHBM || !s.PlainLayout(x) || len(packetAxes) == 0 {
		return 0
	}
	var blk [MaxAxes]int32
	if c.Switch {
		var ok bool
		if blk, _, ok = s.SwitchBlock(c); !ok {
			return 0 // the builder refuses it
		}
	}
	// The element's two innermost digits (axis, level).
	type digit struct {
		a int
		l Level
	}
	var inner []digit
	for i := len(order) - 1; i >= 0 && len(inner) < 2; i-- {
		a := order[i]
		levels := c.Digits[a].Levels()
		kept := c.Factor(a, Time)
		keptLast := false // the kept Time digit above the Row and Packet part
		if c.Switch && blk[a] > 1 {
			kept /= int(blk[a])
			keptLast = true
		}
		var ds []digit
		for j := len(levels) - 1; j >= 0; j-- {
			l := levels[j]
			f := c.Factor(a, l)
			if l == Time {
				if keptLast {
					continue
				}
				f = kept
			}
			if l >= Time && f > 1 {
				ds = append(ds, digit{a, l})
			}
		}
		if keptLast && kept > 1 {
			ds = append(ds, digit{a, Time})
		}
		inner = append(inner, ds...)
	}
	last := packetAxes[len(packetAxes)-1]
	if len(inner) == 0 || inner[0] != (digit{last, Packet}) {
		return 1
	}
	if len(packetAxes) == 1 {
		return 0 // the run may go on past the packet
	}
	if len(inner) < 2 || inner[1] != (digit{packetAxes[len(packetAxes)-2], Packet}) {
		return c.Factor(last, Packet)
	}
	return 0
}

// switchBound returns a lower bound on the cycles of each main chain's
// switch of a switched candidate, 0 for another: ring_size × input_time ×
// cycles_per_packet, a packet's flits, 32 bytes each or 64 in dual channel
// mode (002 L3523-3526, L2125-2127; cost.SwitchCycles). Each slice of the
// ring feeds the switch its share of the streamed operand's fetch Time
// (Space.SwitchBlock), so ring × input time is that fetch Time: X's time
// digits, with the stationary operand's free axes when the fetch repeats
// them (BcastFetch, counted only when bcast says the candidate's Bcast is
// set: a tiling's candidates take either place). Two 32-byte flits a
// 64-byte packet make the switch, not the MACs, the main chain's pace.
func (s *Space) switchBound(c *Candidate, bcast bool) float64 {
	if !c.Switch {
		return 0
	}
	x := 1 - int(c.Stationary)
	in := &s.P.In[x]
	steps, pk := 1, 1
	for a, ax := range s.P.Axes {
		switch {
		case in.Has(ax.Name):
			steps *= c.Factor(a, Time)
			pk *= c.Factor(a, Packet)
		case bcast && c.Bcast == BcastFetch && s.Role(a, c.Stationary) == RoleFW:
			steps *= c.Factor(a, Time)
		}
	}
	return float64(steps * s.flits(c, pk))
}

// flits returns the switch flits of one packet of pk elements of c's
// streamed operand: 32 bytes each, 64 in dual channel mode (002
// L2125-2127, L3526).
func (s *Space) flits(c *Candidate, pk int) int {
	flit := s.Spec.Stream.FlitBytes.Value // 002 L2126
	if c.Mode == Dual {
		flit = s.Spec.Stream.DualChannelFlitBytes.Value // 002 L2127
	}
	bytes := int(math.Ceil(float64(pk) * s.ElemBytes(1-int(c.Stationary))))
	return (bytes + flit - 1) / flit
}

// switchTotal is switchBound summed over a switched candidate's tile
// steps, from its Cluster, Slice, Row, Packet and mode alone: every
// position of the streamed operand's axes above its packet and below its
// slices passes the switch once at least, in each tile step that holds it,
// at a packet's flits each (002 L3523-3526).
func (s *Space) switchTotal(c *Candidate) float64 {
	x := 1 - int(c.Stationary)
	in := &s.P.In[x]
	steps, pk := 1, 1
	for a, ax := range s.P.Axes {
		if in.Has(ax.Name) {
			steps *= ax.Size / (c.Factor(a, Cluster) * c.Factor(a, Slice) * c.Factor(a, Row) * c.Factor(a, Packet))
			pk *= c.Factor(a, Packet)
		}
	}
	return float64(steps * s.flits(c, pk))
}
