package cost

import (
	"errors"
	"fmt"
	"math/bits"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// DMA cost: the 500-cycle startup of every descriptor, the 256-byte requests
// its packets split into, and what the request stream does to each memory:
// HBM channels (through the address bit mapping and channel XOR), row
// switches, tCCD and read-modify-write, DMN interleaving in DM, and PCIe
// between chips (002 L2465-2472, L2563-2605, L2609-2847, L2862-3009).
//
// The model walks the actual addresses. Each descriptor runs on the DMA
// Engine of its DM side's DMN pair (one engine per pair of DMNs, 002 L2404;
// the compiler uses the source DMN's engine, 002 L2548;
// docs/spec-decisions.md "DMA Engine of a descriptor"), on the network
// port of its executing DMN within the pair. A port runs its descriptors
// one after the other in Exec order (a DMN's segments, 002 L2796-2807),
// each paying the startup (002 L2566, L2806-2808); the engine's two ports
// run in parallel (002 L2565 "or potentially in parallel when resources
// permit", L2553, L2603: both DMNs give the engine its 256 B/cycle), sharing
// the engine's one request per cycle (docs/spec-decisions.md "DMA Engine
// ports run in parallel"). Engines run in parallel and share the HBM
// channels and DMNs; the ports' requests reach a channel in round-robin
// order.
// A descriptor's reads and writes overlap unless both sides are the same
// HBM or the same cluster's DM (docs/spec-decisions.md "DMA reads and
// writes: overlap or sequence"). Times are steady-state occupancies in core
// cycles: a pipeline fill of a cycle or two is not added
// (docs/spec-decisions.md "Cost model: steady-state cycles").

// DescriptorEstimate is the price of one descriptor.
type DescriptorEstimate struct {
	// Dmn and Exec identify the descriptor; Engine numbers the DMA Engine
	// that runs it, in order of first appearance, and Port is the network
	// port of the engine's DMN pair it runs on (its executing DMN's place
	// in the pair): a port runs its descriptors in Exec order, the ports
	// of an engine run in parallel.
	Dmn    kernel.DmnIndex
	Exec   int
	Engine int
	Port   int
	// Packets and Requests: Requests is Packets · ceil(stride0 / 256), the
	// 256-byte requests of each side (002 L2469).
	Packets, Requests int
	// Bytes is the data moved.
	Bytes int
	// ReadCycles and WriteCycles are each side's occupancy: the engine's
	// transfers at one 256-byte request per cycle (002 L2596), or the
	// busiest DMN at 128 B/cycle (002 L2657, L2884), whichever is longer.
	ReadCycles, WriteCycles float64
	// Sequential is true when reads and writes cannot overlap: both sides in
	// the same HBM (002 L2623) or the same cluster's DM (002 L2680).
	Sequential bool
	// PCIeCycles bounds an inter-chip descriptor: bytes at 30 B/cycle
	// (002 L2605, L2845); 0 on one chip.
	PCIeCycles float64
	// DataCycles combines the sides: their sum when Sequential, else their
	// maximum (002 L2658, L2749), and at least PCIeCycles.
	DataCycles float64
	// Cycles is startup + DataCycles (002 L2467, L2566).
	Cycles float64
	// Transfers is the engine's share the descriptor takes: its requests
	// at one a cycle per side (002 L2596), the two sides' sum when
	// Sequential, else their maximum. The descriptors of an engine's
	// ports share it.
	Transfers float64
}

// DMAEstimate is the price of one DMA command.
type DMAEstimate struct {
	// Cycles is the command's time: the slowest of EngineBound, HBMBound and
	// DMNBound.
	Cycles float64
	// Startup is the startup of one descriptor (002 L2467).
	Startup float64
	// EngineBound is the slowest engine: its busiest port, the sum of the
	// port's descriptors' Cycles (002 L2806-2807), or the startup plus the
	// Transfers of all its descriptors, whichever is longer.
	EngineBound float64
	// HBMBound is the startup plus the busiest HBM channel over all engines
	// (002 L2706-2711, L2740-2745), or the busiest chip's reads or writes
	// at 0.75 TB/s each (002 L2602, L2636) if longer.
	HBMBound float64
	// DMNBound is the startup plus the busiest DMN over all engines.
	DMNBound float64
	// Descriptors, Engines, Packets, Requests and Bytes count the command.
	Descriptors, Engines, Packets, Requests, Bytes int
	// HBM describes the HBM side (zero when no side is HBM).
	HBM HBMStats
	// MisalignedDMWrites counts DM write requests not aligned to 8 bytes,
	// each tripling its DMN time (002 L2414).
	MisalignedDMWrites int
}

// DMAModel prices DMA commands. It holds the decoded spec and scratch state
// so that Estimate does not allocate once warm. Not safe for concurrent use;
// create one per goroutine.
type DMAModel struct {
	spec *engines.Spec
	dec  *hbmDecoder
	hbm  *hbmChannels

	startup      float64
	reqBytes     int
	reqPerCycle  float64 // requests an engine moves per cycle
	dmnBytes     int
	spmBytes     int
	dmAlign      int
	dmWriteX     float64
	sliceStride  int
	sliceBytes   int
	slicesPerDMN int
	dmns         int
	clusters     int
	chips        int
	dmnsPerEng   int
	maxPacket    int
	pcie         int
	shiftMask    uint64 // address bits a cache translation may use (translate.go)

	// The divisions of side, by shifts where the sizes are powers of two.
	reqDiv, sliceDiv, perDMNDiv, dmnDiv, spmDiv, alignDiv divisor
	// perRequest walks every DM side request by request (tests compare
	// wholeDMSide with it).
	perRequest bool
	// descBound and descLane receive, while DMABoundEnds runs, each
	// descriptor's DMABound share and engine port (lane) index; descOrder
	// is its scratch order.
	descBound           []float64
	descLane, descOrder []int

	dmnBusy []float64 // chips × clusters × dmns, DM then SPM
	states  []descState
	order   []int // descriptor indices sorted by engine, port, exec
	engs    []engState
	lanes   []laneState
	out     []DescriptorEstimate
}

type descState struct {
	d          *kernel.DMADescriptor
	w          walker
	seq        bool
	srcHBM     bool
	dstHBM     bool
	readXfers  int
	writeXfers int
	readBusy   [2][]float64 // per DMN of the cluster (DM, SPM)
	writeBusy  [2][]float64
	engine     int
	port       int
	// srcDone and dstDone mark a DM or SPM side accounted whole by
	// prepare (wholeDMSide); request then walks the other side only.
	srcDone, dstDone bool
}

// engState is a DMA Engine of the command being priced.
type engState struct {
	key [3]int
	// busy is the busiest port's time, xfer the Transfers of all the
	// engine's descriptors.
	busy, xfer float64
}

// laneState is a port of a DMA Engine: the descriptors it runs, in order.
type laneState struct {
	engine, port int
	first        int // index into order
	n            int
	cur          int // descriptors done
}

// NewDMAModel builds a model for spec.
func NewDMAModel(spec *engines.Spec) (*DMAModel, error) {
	if spec == nil {
		return nil, errors.New("cost: NewDMAModel: nil spec")
	}
	dec, err := newHBMDecoder(spec)
	if err != nil {
		return nil, err
	}
	m := &DMAModel{
		spec:         spec,
		dec:          dec,
		startup:      float64(spec.DMA.StartupCycles.Value), // ≈500 cycles per command (002 L2467, L2566, L2827)
		reqBytes:     spec.DMA.RequestBytes.Value,           // 256-byte requests (002 L2469)
		dmnBytes:     spec.DM.DMNBytesPerCycle.Value,        // 128 B/cycle per DMN (002 L2884, L2934)
		spmBytes:     spec.SPM.BytesPerCyclePerDMN.Value,    // 128 B/cycle per DMN (002 L2945)
		dmAlign:      spec.DM.WriteAlignBytes.Value,         // 8 (002 L2414)
		dmWriteX:     float64(spec.DM.MisalignedWriteFactor.Value),
		sliceStride:  spec.DMA.SliceStrideBytes.Value, // 4 MB (002 L2541)
		sliceBytes:   spec.DM.BytesPerSlice.Value,
		slicesPerDMN: spec.Cluster.SlicesPerDMN.Value,
		dmns:         spec.Cluster.DMNs.Value,
		clusters:     spec.Chip.Clusters.Value,
		chips:        spec.Chip.MaxChipsPerDMACommand.Value,
		dmnsPerEng:   spec.DMA.DMNsPerEngine.Value,
		maxPacket:    spec.DMA.MaxPacketBytes.Value,
		pcie:         spec.PCIe.BytesPerCycle.Value, // 30 B/cycle (002 L2605, L2845)
	}
	if m.reqBytes <= 0 || m.dmnBytes <= 0 || m.spmBytes <= 0 || m.sliceStride <= 0 || m.slicesPerDMN <= 0 || m.dmnsPerEng <= 0 || m.pcie <= 0 || m.chips <= 0 || m.dmAlign <= 0 {
		return nil, errors.New("cost: NewDMAModel: DMA, DM, SPM and PCIe sizes must be positive")
	}
	m.reqDiv, m.sliceDiv, m.perDMNDiv = newDivisor(m.reqBytes), newDivisor(m.sliceStride), newDivisor(m.slicesPerDMN)
	m.dmnDiv, m.spmDiv, m.alignDiv = newDivisor(m.dmnBytes), newDivisor(m.spmBytes), newDivisor(m.dmAlign)
	m.reqPerCycle = float64(spec.DMA.BytesPerCycle.Value) / float64(m.reqBytes) // 256 B/cycle per engine (002 L2596)
	if m.hbm, err = newHBMChannels(spec, dec, m.chips); err != nil {
		return nil, err
	}
	m.dmnBusy = make([]float64, 2*m.chips*m.clusters*m.dmns)
	m.shiftMask = newShiftMask(dec, m.reqBytes)
	return m, nil
}

// Estimate prices a DMA command.
func (m *DMAModel) Estimate(cmd *kernel.DMACommand) (DMAEstimate, error) {
	if cmd == nil {
		return DMAEstimate{}, errors.New("cost: DMA estimate of a nil command")
	}
	return m.EstimateDescriptors(cmd.Descriptors)
}

// Descriptors returns the per-descriptor prices of the last Estimate, in the
// order the descriptors were given. The slice is reused by the next call.
func (m *DMAModel) Descriptors() []DescriptorEstimate { return m.out }

// EstimateDescriptors prices descriptors that run as one command: engines in
// parallel, each engine's descriptors in Exec order. It does not allocate
// once the model has seen as many descriptors.
func (m *DMAModel) EstimateDescriptors(ds []kernel.DMADescriptor) (DMAEstimate, error) {
	var est DMAEstimate
	est.Startup = m.startup
	if len(ds) == 0 {
		return est, errors.New("cost: DMA command without descriptors")
	}
	m.hbm.reset()
	clear(m.dmnBusy)
	if err := m.prepare(ds); err != nil {
		return est, err
	}
	// Round-robin over the engines' ports, one request each per turn, each
	// port walking its descriptors in Exec order.
	for active := len(m.lanes); active > 0; {
		active = 0
		for e := range m.lanes {
			g := &m.lanes[e]
			for g.cur < g.n && m.states[m.order[g.first+g.cur]].w.finished() {
				g.cur++
			}
			if g.cur == g.n {
				continue
			}
			active++
			s := &m.states[m.order[g.first+g.cur]]
			if err := m.request(s, &est); err != nil {
				return est, err
			}
		}
	}
	busiest := m.hbm.finish()
	est.HBM = m.hbm.stats
	if est.HBM.Units > 0 {
		est.HBMBound = m.startup + busiest
	}
	maxBusy := 0.0
	for _, b := range m.dmnBusy {
		maxBusy = max(maxBusy, b)
	}
	if maxBusy > 0 {
		est.DMNBound = m.startup + maxBusy
	}
	// Per descriptor and per engine.
	m.out = m.out[:0]
	engTime := est.EngineBound // 0
	for i := range ds {
		s := &m.states[i]
		d := s.d
		r := DescriptorEstimate{Dmn: d.Dmn, Exec: d.Exec, Engine: s.engine, Port: s.port, Packets: s.w.packets,
			Requests: s.w.packets * s.w.reqs, Bytes: s.w.packets * d.Stride0, Sequential: s.seq}
		r.ReadCycles = max(float64(s.readXfers)/m.reqPerCycle, maxOf(s.readBusy[0]), maxOf(s.readBusy[1]))
		r.WriteCycles = max(float64(s.writeXfers)/m.reqPerCycle, maxOf(s.writeBusy[0]), maxOf(s.writeBusy[1]))
		if s.seq {
			r.DataCycles = r.ReadCycles + r.WriteCycles
			r.Transfers = float64(s.readXfers+s.writeXfers) / m.reqPerCycle
		} else {
			r.DataCycles = max(r.ReadCycles, r.WriteCycles)
			r.Transfers = float64(max(s.readXfers, s.writeXfers)) / m.reqPerCycle
		}
		if d.Src.Dmn.Chip != d.Dst.Dmn.Chip {
			r.PCIeCycles = float64(ceilDiv(r.Bytes, m.pcie))
			r.DataCycles = max(r.DataCycles, r.PCIeCycles)
		}
		r.Cycles = m.startup + r.DataCycles
		m.out = append(m.out, r)
		est.Packets += r.Packets
		est.Requests += r.Requests
		est.Bytes += r.Bytes
	}
	for e := range m.lanes {
		g := &m.lanes[e]
		t := 0.0
		for k := 0; k < g.n; k++ {
			r := &m.out[m.order[g.first+k]]
			t += r.Cycles
			m.engs[g.engine].xfer += r.Transfers
		}
		m.engs[g.engine].busy = max(m.engs[g.engine].busy, t)
	}
	for e := range m.engs {
		g := &m.engs[e]
		engTime = max(engTime, g.busy, m.startup+g.xfer)
	}
	est.EngineBound = engTime
	est.Descriptors, est.Engines = len(ds), len(m.engs)
	est.Cycles = max(est.EngineBound, est.HBMBound, est.DMNBound)
	return est, nil
}

func maxOf(xs []float64) float64 {
	v := 0.0
	for _, x := range xs {
		v = max(v, x)
	}
	return v
}

// prepare validates the descriptors, sets up their walkers and groups them
// by engine.
func (m *DMAModel) prepare(ds []kernel.DMADescriptor) error {
	if cap(m.states) < len(ds) {
		m.states = make([]descState, len(ds))
		m.order = make([]int, len(ds))
	}
	m.states, m.order = m.states[:len(ds)], m.order[:len(ds)]
	m.engs, m.lanes = m.engs[:0], m.lanes[:0]
	for i := range ds {
		d := &ds[i]
		s := &m.states[i]
		s.d = d
		s.readXfers, s.writeXfers = 0, 0
		for k := 0; k < 2; k++ {
			if len(s.readBusy[k]) != m.dmns {
				s.readBusy[k] = make([]float64, m.dmns)
				s.writeBusy[k] = make([]float64, m.dmns)
			}
			clear(s.readBusy[k])
			clear(s.writeBusy[k])
		}
		if err := m.check(d); err != nil {
			return fmt.Errorf("cost: DMA descriptor %d (DMN %s #%d): %w", i, d.Dmn, d.Exec, err)
		}
		if err := s.w.init(d, m.reqBytes); err != nil {
			return fmt.Errorf("cost: DMA descriptor %d (DMN %s #%d): %w", i, d.Dmn, d.Exec, err)
		}
		s.srcHBM, s.dstHBM = d.Src.Kind == kernel.MediaHBM, d.Dst.Kind == kernel.MediaHBM
		s.srcDone = !s.srcHBM && !m.perRequest && m.wholeDMSide(s, &d.Src, s.w.src, s.w.sstride[:s.w.n], false)
		s.dstDone = !s.dstHBM && !m.perRequest && m.wholeDMSide(s, &d.Dst, s.w.dst, s.w.dstride[:s.w.n], true)
		s.seq = d.Src.Kind == d.Dst.Kind && d.Src.Dmn.Chip == d.Dst.Dmn.Chip &&
			(d.Src.Kind == kernel.MediaHBM || d.Src.Dmn.Cluster == d.Dst.Dmn.Cluster)
		key := m.engineKey(d)
		s.port = m.port(d)
		s.engine = -1
		for e := range m.engs {
			if m.engs[e].key == key {
				s.engine = e
				break
			}
		}
		if s.engine < 0 {
			s.engine = len(m.engs)
			m.engs = append(m.engs, engState{key: key})
		}
		m.order[i] = i
	}
	// Insertion sort by (engine, port, exec), stable, without allocating.
	for k := 1; k < len(m.order); k++ {
		for j := k; j > 0 && m.before(m.order[j], m.order[j-1]); j-- {
			m.order[j], m.order[j-1] = m.order[j-1], m.order[j]
		}
	}
	for k, i := range m.order {
		s := &m.states[i]
		if n := len(m.lanes); n == 0 || m.lanes[n-1].engine != s.engine || m.lanes[n-1].port != s.port {
			m.lanes = append(m.lanes, laneState{engine: s.engine, port: s.port, first: k})
		}
		m.lanes[len(m.lanes)-1].n++
	}
	return nil
}

func (m *DMAModel) before(a, b int) bool {
	sa, sb := &m.states[a], &m.states[b]
	if sa.engine != sb.engine {
		return sa.engine < sb.engine
	}
	if sa.port != sb.port {
		return sa.port < sb.port
	}
	return sa.d.Exec < sb.d.Exec
}

// engineKey names the DMA Engine that runs d: the engine of the DMN pair of
// its DM (or SPM) side, the source's if both are (002 L2548), else of the
// executing DMN.
func (m *DMAModel) engineKey(d *kernel.DMADescriptor) [3]int {
	x := d.Dmn
	switch {
	case d.Src.Kind != kernel.MediaHBM:
		x = d.Src.Dmn
	case d.Dst.Kind != kernel.MediaHBM:
		x = d.Dst.Dmn
	}
	return [3]int{x.Chip, x.Cluster, x.DMN / m.dmnsPerEng}
}

// port returns the network port of its engine's DMN pair that runs d: the
// place of its executing DMN in the pair.
func (m *DMAModel) port(d *kernel.DMADescriptor) int { return d.Dmn.DMN % m.dmnsPerEng }

// covers reports whether the descriptors ds[from:] run on every port of a
// DMA Engine that any descriptor of ds runs on.
func (m *DMAModel) covers(ds []kernel.DMADescriptor, from int) bool {
	for x := 0; x < from; x++ {
		k, p := m.engineKey(&ds[x]), m.port(&ds[x])
		found := false
		for y := from; y < len(ds) && !found; y++ {
			found = m.engineKey(&ds[y]) == k && m.port(&ds[y]) == p
		}
		if !found {
			return false
		}
	}
	return true
}

func (m *DMAModel) check(d *kernel.DMADescriptor) error {
	for _, md := range []kernel.DMAMedia{d.Src, d.Dst, {Kind: kernel.MediaDM, Dmn: d.Dmn}} {
		if !md.Kind.Valid() {
			return fmt.Errorf("media %q is not HBM, DM or SPM", md.Kind)
		}
		if md.Dmn.Chip < 0 || md.Dmn.Chip >= m.chips {
			return fmt.Errorf("chip %d outside the %d chips of a DMA command", md.Dmn.Chip, m.chips)
		}
		if md.Kind != kernel.MediaHBM && (md.Dmn.Cluster < 0 || md.Dmn.Cluster >= m.clusters || md.Dmn.DMN < 0 || md.Dmn.DMN >= m.dmns) {
			return fmt.Errorf("DMN %s outside %d clusters of %d DMNs", md.Dmn, m.clusters, m.dmns)
		}
	}
	if d.Stride0 <= 0 || d.Stride0 > m.maxPacket {
		return fmt.Errorf("stride0 %d bytes outside 1..%d", d.Stride0, m.maxPacket)
	}
	return nil
}

// request moves the next request of s: its read side, then its write side.
func (m *DMAModel) request(s *descState, est *DMAEstimate) error {
	w := &s.w
	off := w.req * m.reqBytes
	n := min(m.reqBytes, s.d.Stride0-off)
	src, dst := w.src+off, w.dst+off
	if !s.srcDone {
		x, err := m.side(s, &s.d.Src, s.srcHBM, src, n, false, est)
		if err != nil {
			return fmt.Errorf("cost: DMA descriptor (DMN %s #%d) read at %d: %w", s.d.Dmn, s.d.Exec, src, err)
		}
		s.readXfers += x
	}
	if !s.dstDone {
		x, err := m.side(s, &s.d.Dst, s.dstHBM, dst, n, true, est)
		if err != nil {
			return fmt.Errorf("cost: DMA descriptor (DMN %s #%d) write at %d: %w", s.d.Dmn, s.d.Exec, dst, err)
		}
		s.writeXfers += x
	}
	w.next()
	return nil
}

// wholeDMSide accounts a DM or SPM side of s at once, as side would
// request by request, when that is sure to give the same numbers: every
// request lies in one slice's DM and all in one DMN (so none fails), and a
// DM write side has every request aligned (no read-modify-write). Then
// each request is one engine transfer and keeps that DMN busy ⌈bytes /
// rate⌉ cycles (002 L2884): integers, whose float sums do not depend on
// their order. Loops whose stride is a whole number of slice strides walk
// slices; the others must keep every byte inside the slice's DM. It
// reports whether it did.
func (m *DMAModel) wholeDMSide(s *descState, md *kernel.DMAMedia, base int, strides []int, write bool) bool {
	w := &s.w
	d := s.d
	if base < 0 || w.packets <= 0 {
		return false
	}
	slo := m.sliceDiv.div(base) // slices
	shi := slo
	lo := m.sliceDiv.mod(base) // bytes within the slice
	hi := lo + d.Stride0
	for i, st := range strides {
		n := w.size[i] - 1
		switch {
		case n == 0 || st == 0:
		case m.sliceDiv.mod(abs(st)) == 0:
			if st > 0 {
				shi += n * m.sliceDiv.div(st)
			} else {
				slo -= n * m.sliceDiv.div(-st)
			}
		case st > 0:
			hi += n * st
		default:
			lo += n * st
		}
	}
	if lo < 0 || hi > m.sliceBytes || slo < 0 {
		return false
	}
	dmn := m.perDMNDiv.div(slo)
	if dmn != m.perDMNDiv.div(shi) || dmn >= m.dmns {
		return false
	}
	per, k := m.dmnDiv, 0
	if md.Kind == kernel.MediaSPM {
		per, k = m.spmDiv, 1
	}
	if write && k == 0 {
		a := m.alignDiv
		if a.mod(base) != 0 || a.mod(d.Stride0) != 0 || (w.reqs > 1 && a.mod(m.reqBytes) != 0) {
			return false
		}
		for i, st := range strides {
			if w.size[i] > 1 && a.mod(abs(st)) != 0 {
				return false
			}
		}
	}
	last := d.Stride0 - (w.reqs-1)*m.reqBytes
	each := (w.reqs-1)*per.div(m.reqBytes+per.d-1) + per.div(last+per.d-1)
	busy := float64(w.packets * each)
	xfers := w.packets * w.reqs
	if write {
		s.writeBusy[k][dmn] += busy
		s.writeXfers += xfers
	} else {
		s.readBusy[k][dmn] += busy
		s.readXfers += xfers
	}
	m.dmnBusy[((k*m.chips+md.Dmn.Chip)*m.clusters+md.Dmn.Cluster)*m.dmns+dmn] += busy
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// side accounts one side of a request of n bytes at addr and returns the
// engine transfers it takes.
func (m *DMAModel) side(s *descState, md *kernel.DMAMedia, hbm bool, addr, n int, write bool, est *DMAEstimate) (int, error) {
	if addr < 0 {
		return 0, errors.New("negative address")
	}
	if hbm {
		end := uint64(addr) + uint64(n)
		if end > m.dec.bytes {
			return 0, fmt.Errorf("beyond the %d bytes of HBM", m.dec.bytes)
		}
		u0, u1 := m.reqDiv.div(addr), m.reqDiv.div(addr+n-1)
		if u0 == u1 {
			// A partial write of a 256-byte unit is a read-modify-write
			// (002 L2985).
			m.hbm.access(md.Dmn.Chip, uint64(u0*m.reqBytes), write, write && n < m.reqBytes)
			return 1, nil
		}
		if !write {
			// A read crossing a 256-byte boundary takes two NoC
			// transfers (002 L2984).
			m.hbm.stats.UnalignedReads++
		}
		for u := u0; u <= u1; u++ {
			lo, hi := max(addr, u*m.reqBytes), min(addr+n, (u+1)*m.reqBytes)
			m.hbm.access(md.Dmn.Chip, uint64(u*m.reqBytes), write, write && hi-lo < m.reqBytes)
		}
		return u1 - u0 + 1, nil
	}
	slice, b := m.sliceDiv.div(addr), m.sliceDiv.mod(addr)
	if b+n > m.sliceBytes {
		return 0, fmt.Errorf("bytes %d..%d of slice %d lie outside its %d-byte DM", b, b+n, slice, m.sliceBytes)
	}
	dmn := m.perDMNDiv.div(slice)
	if dmn >= m.dmns {
		return 0, fmt.Errorf("slice %d is outside the cluster's %d DMNs", slice, m.dmns)
	}
	per := m.dmnDiv
	k := 0
	if md.Kind == kernel.MediaSPM {
		per, k = m.spmDiv, 1
	}
	busy := float64(per.div(n + per.d - 1))
	if write && k == 0 && (m.alignDiv.mod(addr) != 0 || m.alignDiv.mod(addr+n) != 0) {
		// A misaligned DM write is a read-modify-write that
		// triples its time (002 L2414).
		busy *= m.dmWriteX
		est.MisalignedDMWrites++
	}
	if write {
		s.writeBusy[k][dmn] += busy
	} else {
		s.readBusy[k][dmn] += busy
	}
	m.dmnBusy[((k*m.chips+md.Dmn.Chip)*m.clusters+md.Dmn.Cluster)*m.dmns+dmn] += busy
	return 1, nil
}

// divisor divides nonnegative integers by a positive constant d: by a
// shift when d is a power of two.
type divisor struct {
	d     int
	shift int // log2 d, or -1
}

func newDivisor(d int) divisor {
	v := divisor{d: d, shift: -1}
	if d > 0 && d&(d-1) == 0 {
		v.shift = bits.TrailingZeros(uint(d))
	}
	return v
}

func (v divisor) div(a int) int {
	if v.shift >= 0 {
		return a >> uint(v.shift)
	}
	return a / v.d
}

func (v divisor) mod(a int) int {
	if v.shift >= 0 {
		return a & (v.d - 1)
	}
	return a % v.d
}

// walker iterates the packets of a descriptor and the requests of each
// packet without allocating: the loops outside the packet as an odometer,
// addresses updated incrementally.
type walker struct {
	n        int
	size     [kernel.MaxIterDepth]int
	sstride  [kernel.MaxIterDepth]int
	dstride  [kernel.MaxIterDepth]int
	idx      [kernel.MaxIterDepth]int
	src, dst int // current packet's first byte on each side
	packets  int // packets of the descriptor
	done     int // packets finished
	req      int // request within the current packet
	reqs     int // requests per packet
}

// init splits d's loops into the packet (the innermost loops covering
// stride0 bytes, contiguous on both sides, 002 L2579, L2593) and the loops
// over packets. A packet is stride0 consecutive bytes of the loops' flat
// positions (engines.DMAPacket), so it may also cut across loops that
// continue each other on both sides (one contiguous run, 002 L2593: the
// packet size is inferred from the consecutive read/write volume): such
// loops are merged into one before the packet is cut from it
// (`[BLK=8:(1536, 1536), F=768:(2, 2)]` of bf16 in packets of 4096 bytes:
// one loop of 6144 positions, 3 packets).
func (w *walker) init(d *kernel.DMADescriptor, reqBytes int) error {
	*w = walker{src: d.SrcBase, dst: d.DstBase, reqs: ceilDiv(d.Stride0, reqBytes)}
	if d.ElemBits <= 0 || d.ElemBits%8 != 0 || d.Stride0*8%d.ElemBits != 0 {
		return fmt.Errorf("stride0 %d bytes is not a whole number of %d-bit loop positions", d.Stride0, d.ElemBits)
	}
	if len(d.Entries) > kernel.MaxIterDepth {
		return fmt.Errorf("%d loops, at most %d", len(d.Entries), kernel.MaxIterDepth)
	}
	eb := d.ElemBits / 8
	rem := d.Stride0 * 8 / d.ElemBits // positions per packet
	run := 1                          // positions inside the packet below the current loop
	n := len(d.Entries)
	for i := range d.Entries {
		e := d.Entries[i]
		if e.Size <= 0 {
			return fmt.Errorf("loop %d has size %d", i, e.Size)
		}
		w.size[i], w.sstride[i], w.dstride[i] = e.Size, e.SrcStride, e.DstStride
		if x := e.Index; x != nil {
			// An indirect loop is priced as if the index held its
			// positions (0, 1, 2, …: the values are not known when
			// planning): iteration j reads row Offset + j·Step, or a
			// scatter's writes it.
			if x.Write {
				w.dst += x.Offset * e.DstStride
				w.dstride[i] *= max(x.Step, 1)
			} else {
				w.src += x.Offset * e.SrcStride
				w.sstride[i] *= max(x.Step, 1)
			}
		}
	}
	for rem > 1 {
		if n == 0 {
			return fmt.Errorf("stride0 %d bytes exceeds the %d positions of the loops", d.Stride0, run)
		}
		i := n - 1
		if w.size[i] == 1 {
			n-- // no positions of its own
			continue
		}
		want := run * eb
		if w.sstride[i] != want || w.dstride[i] != want {
			return fmt.Errorf("the packet of %d bytes is not contiguous: loop %d strides (%d, %d), want %d on both sides", d.Stride0, i, w.sstride[i], w.dstride[i], want)
		}
		switch {
		case rem%w.size[i] == 0:
			rem /= w.size[i]
			run *= w.size[i]
			n--
		case w.size[i]%rem == 0:
			w.size[i] /= rem
			w.sstride[i] *= rem
			w.dstride[i] *= rem
			rem = 1
		case n >= 2 && (w.size[i-1] == 1 || w.sstride[i-1] == want*w.size[i] && w.dstride[i-1] == want*w.size[i]):
			// The next loop out continues this one on both sides: one
			// loop of their positions, cut on the next pass.
			w.size[i-1] *= w.size[i]
			w.sstride[i-1], w.dstride[i-1] = want, want
			n--
		default:
			return fmt.Errorf("stride0 %d bytes does not tile loop %d of size %d", d.Stride0, i, w.size[i])
		}
	}
	w.n = n
	w.packets = 1
	for i := 0; i < n; i++ {
		w.packets *= w.size[i]
	}
	return nil
}

func (w *walker) finished() bool { return w.done >= w.packets }

// next advances to the next request, and to the next packet after the last.
func (w *walker) next() {
	w.req++
	if w.req < w.reqs {
		return
	}
	w.req = 0
	w.done++
	for i := w.n - 1; i >= 0; i-- {
		w.idx[i]++
		w.src += w.sstride[i]
		w.dst += w.dstride[i]
		if w.idx[i] < w.size[i] {
			return
		}
		w.src -= w.size[i] * w.sstride[i]
		w.dst -= w.size[i] * w.dstride[i]
		w.idx[i] = 0
	}
}

// dmnBusyBound returns the cycles one DMN is kept busy by a DM or SPM side
// of d whose bytes all lie in one DMN's slices (0 otherwise, and for an
// HBM side): each request of n bytes takes ⌈n / rate⌉ cycles of it, as
// side counts them (misaligned DM writes only add).
func (m *DMAModel) dmnBusyBound(d *kernel.DMADescriptor, w *walker, md *kernel.DMAMedia, strides []int, base int) float64 {
	if md.Kind == kernel.MediaHBM || base < 0 {
		return 0
	}
	lo, hi := base, base+d.Stride0
	for i, st := range strides {
		if st >= 0 {
			hi += (w.size[i] - 1) * st
		} else {
			lo += (w.size[i] - 1) * st
		}
	}
	if lo < 0 || m.perDMNDiv.div(m.sliceDiv.div(lo)) != m.perDMNDiv.div(m.sliceDiv.div(hi-1)) {
		return 0
	}
	per := m.dmnDiv
	if md.Kind == kernel.MediaSPM {
		per = m.spmDiv
	}
	last := d.Stride0 - (w.reqs-1)*m.reqBytes
	each := (w.reqs-1)*per.div(m.reqBytes+per.d-1) + per.div(last+per.d-1)
	return float64(w.packets * each)
}

// maxBoundEngines bounds the engines DMABound tracks: 8 per chip, 4 chips
// (002 L2404, L2474); maxBoundLanes their ports, 2 each (002 L2831).
const (
	maxBoundEngines = 64
	maxBoundLanes   = 2 * maxBoundEngines
)

// DMABound returns a lower bound on the cycles EstimateDescriptors returns
// for ds, in time linear in the number of loops rather than requests, for a
// planner that prunes before it prices: every request takes at least one
// engine transfer per side (002 L2596), reads and writes add where they
// cannot overlap, an engine port runs its descriptors one after the other
// and an engine's ports share its transfers, and each chip's HBM units
// spread at best evenly over its channels (002 L2980), its reads and its
// writes each at no more than 0.75 TB/s (002 L2602, L2636). It does not
// allocate.
func (m *DMAModel) DMABound(ds []kernel.DMADescriptor) (float64, error) {
	if len(ds) == 0 {
		return 0, errors.New("cost: DMA bound of a command without descriptors")
	}
	var engs [maxBoundEngines]struct {
		key  [3]int
		xfer float64
	}
	var lanes [maxBoundLanes]struct {
		engine, port int
		t            float64
	}
	var hbmUnits, hbmReads, hbmWrites [maxBoundEngines]int // per chip
	var hbmCost [maxBoundEngines]float64
	ne, nl := 0, 0
	var w walker
	for i := range ds {
		d := &ds[i]
		if err := m.check(d); err != nil {
			return 0, fmt.Errorf("cost: DMA descriptor %d (DMN %s #%d): %w", i, d.Dmn, d.Exec, err)
		}
		if err := w.init(d, m.reqBytes); err != nil {
			return 0, fmt.Errorf("cost: DMA descriptor %d (DMN %s #%d): %w", i, d.Dmn, d.Exec, err)
		}
		r := float64(w.packets*w.reqs) / m.reqPerCycle
		// Each side's engine transfers, or its DMN's busy time when the
		// side lies in one DMN (side: every DM or SPM request keeps its
		// DMN busy ⌈bytes / rate⌉ cycles, 002 L2884).
		rd := max(r, m.dmnBusyBound(d, &w, &d.Src, w.sstride[:w.n], d.SrcBase))
		wr := max(r, m.dmnBusyBound(d, &w, &d.Dst, w.dstride[:w.n], d.DstBase))
		data, xfer := max(rd, wr), r
		if d.Src.Kind == d.Dst.Kind && d.Src.Dmn.Chip == d.Dst.Dmn.Chip &&
			(d.Src.Kind == kernel.MediaHBM || d.Src.Dmn.Cluster == d.Dst.Dmn.Cluster) {
			data, xfer = rd+wr, 2*r
		}
		if d.Src.Dmn.Chip != d.Dst.Dmn.Chip {
			data = max(data, float64(ceilDiv(w.packets*d.Stride0, m.pcie)))
		}
		for k, md := range [2]kernel.DMAMedia{d.Src, d.Dst} {
			if md.Kind == kernel.MediaHBM {
				units := w.packets * w.reqs
				hbmUnits[md.Dmn.Chip] += units
				if k == 0 {
					hbmReads[md.Dmn.Chip] += units
				} else {
					hbmWrites[md.Dmn.Chip] += units
				}
				// A written packet that is not a whole number of 256-byte
				// units writes at least one unit partly: a
				// read-modify-write (002 L2985), wherever it starts.
				partial := 0
				if k == 1 && d.Stride0%m.reqBytes != 0 {
					partial = w.packets
				}
				hbmCost[md.Dmn.Chip] += float64(partial)*m.hbm.rmw + float64(units-partial)*m.hbm.base
			}
		}
		key, port := m.engineKey(d), m.port(d)
		e := 0
		for e < ne && engs[e].key != key {
			e++
		}
		if e == ne {
			if ne == maxBoundEngines {
				return 0, fmt.Errorf("cost: DMA bound: more than %d engines", maxBoundEngines)
			}
			engs[e].key = key
			ne++
		}
		l := 0
		for l < nl && (lanes[l].engine != e || lanes[l].port != port) {
			l++
		}
		if l == nl {
			if nl == maxBoundLanes {
				return 0, fmt.Errorf("cost: DMA bound: more than %d engine ports", maxBoundLanes)
			}
			lanes[l].engine, lanes[l].port = e, port
			nl++
		}
		if i < len(m.descBound) {
			m.descBound[i], m.descLane[i] = m.startup+data, l
		}
		lanes[l].t += m.startup + data
		engs[e].xfer += xfer
	}
	b := 0.0
	for l := 0; l < nl; l++ {
		b = max(b, lanes[l].t)
	}
	for e := 0; e < ne; e++ {
		b = max(b, m.startup+engs[e].xfer)
	}
	for c, u := range hbmUnits {
		if u > 0 {
			b = max(b, m.startup+float64(ceilDiv(u, m.dec.channels))*m.hbm.base,
				m.startup+hbmCost[c]/float64(m.dec.channels),
				m.startup+float64(hbmReads[c])*m.hbm.readUnit,
				m.startup+float64(hbmWrites[c])*m.hbm.writeUnit)
		}
	}
	return b, nil
}

// DMABoundEnds fills ends[k], for a batch of commands whose descriptors ds
// are counts[k] per command in order, with a lower bound on when command k
// ends after the batch starts: each engine port runs the batch's
// descriptors in Exec order (the schedule's batch pricing), so a command
// ends no earlier than the descriptors its ports run up to its own (each
// at its DMABound share); and no earlier than its own DMABound. It returns
// the batch's DMABound.
func (m *DMAModel) DMABoundEnds(ds []kernel.DMADescriptor, counts []int, ends []float64) (float64, error) {
	n := len(ds)
	if cap(m.descBound) < n {
		m.descBound, m.descLane, m.descOrder = make([]float64, n), make([]int, n), make([]int, n)
	}
	m.descBound, m.descLane, m.descOrder = m.descBound[:n], m.descLane[:n], m.descOrder[:n]
	b, err := m.DMABound(ds)
	if err != nil {
		return 0, err
	}
	var laneT [maxBoundLanes]float64
	order := m.descOrder
	for x := range order {
		order[x] = x
	}
	for x := 1; x < n; x++ {
		for y := x; y > 0 && (m.descLane[order[y]] < m.descLane[order[y-1]] ||
			m.descLane[order[y]] == m.descLane[order[y-1]] && ds[order[y]].Exec < ds[order[y-1]].Exec); y-- {
			order[y], order[y-1] = order[y-1], order[y]
		}
	}
	cmd := func(x int) int {
		for k, c := range counts {
			if x < c {
				return k
			}
			x -= c
		}
		return len(counts) - 1
	}
	for _, x := range order {
		l := m.descLane[x]
		laneT[l] += m.descBound[x]
		if k := cmd(x); laneT[l] > ends[k] {
			ends[k] = laneT[l]
		}
	}
	m.descBound, m.descLane = m.descBound[:0], m.descLane[:0]
	return b, nil
}
