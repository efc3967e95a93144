package engines

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The DMA Engine (002 L2354-2847): it moves a tensor between HBM, DM and SPM
// with a pair of sequencers, a read sequencer over the source and a write
// sequencer over the destination, that share their loop limits (002 L1223,
// L2545). DeriveDMA is the compiler's derivation (002 L2585-2593): each side's
// sequencer comes from DeriveSequencer (the source or destination layout
// projected onto the stream), the two are refined into one loop nest with
// paired strides, stride0 is the common contiguous run, and the work is
// distributed over the DMNs the stream's chip/cluster/slice parts name, each
// DMN segmenting its loops where the stream would write outside the tensor
// (002 L2752-2808).
//
// Addresses are bytes. An HBM address is the chip's HBM byte address. A DM
// (or SPM) address is the cluster's virtual address slice·slice_stride +
// byte, slice_stride = 4 MB (002 L2541); DMN_stride, the distance between
// DMNs, is 32 slices (docs/spec-decisions.md "DMA: DM addresses,
// slice_stride and DMN_stride").

// DMA rules (moving.md §7.3 IDs).
var (
	ruleDMAAlign = NewRule(Rule{ID: "DMA-R1", Engine: "dma", Name: "alignment",
		Cite: "002 L2425-2427, L2836-2837",
		Text: "read address 1 B (HBM, DM); write address 1 B (HBM), 8 B (DM); packet size 1 B (HBM), 8 B (DM); HBM-to-DM transfers need 8-byte aligned read address, write address and packet size"})
	ruleDMAPacket = NewRule(Rule{ID: "DMA-R2", Engine: "dma", Name: "packet size",
		Cite: "002 L2428-2429, L2512, L2838",
		Text: "the packet (stride0) is 1 to 4096 bytes (AXI: 256 beats of 16 bytes)"})
	ruleDMAForm = NewRule(Rule{ID: "DMA-R3", Engine: "dma", Name: "structural form",
		Cite: "002 L2415-2421, L2478-2491, L2515-2518",
		Text: "Stream = { chip, cluster, slice, time, packet }, In/Out = { chip, element } for HBM/SPM and { chip, cluster, slice, element } for DM; each DMN's time and packet move within one chip and cluster; DMN indices are chip 0..3, cluster 0..1, DMN 0..7"})
	ruleDMAMedia = NewRule(Rule{ID: "DMA-R4", Engine: "dma", Name: "uniform media",
		Cite: "002 L2494-2496",
		Text: "all participating DMA Engines use the same input and output media types"})
	ruleDMATensor = NewRule(Rule{ID: "DMA-R5", Engine: "dma", Name: "tensor to tensor",
		Cite: "002 L2550, L2478-2479",
		Text: "a DMA moves one tensor to another (<shape, In> --id--> <shape, Out>): the source holds every element the destination receives"})
	ruleDMAWrite = NewRule(Rule{ID: "DMA-R6", Engine: "dma", Name: "no write outside the tensor",
		Cite: "002 L2793-2800, L7775, L7896",
		Text: "every live destination element is written exactly once and no write falls outside the destination tensor; the compiler segments a DMN's work into several commands when its stream would"})
	ruleDMARun = NewRule(Rule{ID: "DMA-R7", Engine: "dma", Name: "packet divides the run",
		Cite: "002 L2448, L2469-2472, L2593",
		Text: "stride0 divides the consecutive read/write run of the innermost entries (a prime run above 4096 moves 1 byte at a time)"})
	ruleDMASPM = NewRule(Rule{ID: "DMA-R8", Engine: "dma", Name: "SPM same chip",
		Cite: "002 L2825",
		Text: "SPM transfers are restricted to the same chip"})
	ruleDMASeq = NewRule(Rule{ID: "DMA-R9", Engine: "dma", Name: "sequencer limits",
		Cite: "002 L2423, L1630-1632",
		Text: "the DMA sequencer obeys the sequencer limits: at most 8 entries, each of size <= 65,536"})
	ruleDMACapacity = NewRule(Rule{ID: "DMA-R10", Engine: "dma", Name: "address space",
		Cite: "002 L2874, L2541, L2949",
		Text: "a DM tensor's element part fits one slice's 512 KB, its slice part one cluster's slices; an HBM tensor fits the chip's 48 GB"})
	ruleDMAWholeBytes = NewRule(Rule{ID: "DMA-R11", Engine: "dma", Name: "whole bytes",
		Cite: "002 L2414, L2512",
		Text: "DMA strides, bases and packets are whole bytes (an odd count of 4-bit elements cannot be addressed)"})
)

// DMATensor is one side of a DMA, a tensor in HBM, DM or SPM with its
// mapping parts and base (002 L2407-2421, L2478-2485). A nil part is m![1].
type DMATensor struct {
	// Media is HBM, DM or SPM.
	Media kernel.MediaKind
	// Chip, Cluster, Slice and Element are the mapping parts; HBM and SPM
	// tensors have no Cluster or Slice part (002 L2417-2418).
	Chip, Cluster, Slice, Element *mapping.Expr
	// BaseChip, BaseCluster and BaseSlice are b_chip, b_cluster and b_slice
	// (002 L2419-2421): the tensor's chip/cluster/slice part position 0 lies
	// there.
	BaseChip, BaseCluster, BaseSlice int
	// Addr is b_element in bytes: the address of element position 0 (in
	// HBM, or inside each slice).
	Addr int
}

// DMAStream is the stream environment: the DMN-selecting parts Chip,
// Cluster and Slice (homogeneous form, 002 L2487-2491) and each DMN's Time
// and Packet (002 L2415-2416). A nil part is m![1]; Packet is required.
type DMAStream struct {
	Chip, Cluster, Slice, Time, Packet *mapping.Expr
}

// DMARequest is the input of DeriveDMA: `dma(shape, dtype, media_in,
// media_out, b_in, b_out, In, Stream, Out)` (002 L2476).
type DMARequest struct {
	// Axes declares the shape (sizes bound validity: a stream position
	// whose coordinate reaches its axis size holds no element).
	Axes mapping.Axes
	// DType is the element type.
	DType dtype.DType
	// Src and Dst are the input and output tensors.
	Src, Dst DMATensor
	// Stream is the stream environment. With StreamFn set, only its Chip,
	// Cluster and Slice parts are used (to enumerate the DMNs).
	Stream DMAStream
	// StreamFn, if set, gives each DMN its own Time and Packet: the
	// heterogeneous form `dma(..., In, StreamFn, Out)` (002 L2492-2504). A nil
	// packet leaves the DMN out. All DMNs share the media and the In/Out
	// mappings (002 L2494-2496).
	StreamFn func(kernel.DmnIndex) (time, packet *mapping.Expr) `json:"-"`
}

// dmaSide is one side of the transfer, prepared for the derivation.
type dmaSide struct {
	name      string
	t         DMATensor
	buf       *mapping.Expr   // [Chip, Cluster#, Slice#, Element#]: one position per address
	fs        mapping.Factors // its factorization
	elemLevel int             // positions per slice (padded element part)
	slices    int             // padded slice part size (1 without slice part)
	clusters  int             // padded cluster part size (1 without)
	live      int             // live positions (cells written once by a write)
	held      map[string]int  // per axis, the coordinates 0..held-1 the layout holds
}

// DeriveDMA derives the DMA command of a tensor move (002 L2585-2593, L2544;
// moving.md DMA-D1, DMA-D2):
//
//  1. Each side's sequencer is DeriveSequencer over that side's address
//     layout (chip, cluster, slice and element parts, the slice and element
//     parts padded to the slice and slice_stride address spaces) with the
//     stream's Time and Packet, in Read mode: per DMN a write covers only
//     part of the destination, so write coverage is checked for the whole
//     command instead.
//  2. The two entry lists are refined into one list with shared limits and
//     paired strides (002 L2545), merging contiguous pairs when more than 8.
//  3. Every combination of the stream's chip/cluster/slice positions is a
//     DMN (i, j, k); its fixed tensor coordinates give both bases.
//  4. Where a DMN's loops would reach coordinates outside the tensor (an
//     uneven split, 002 L2793-2796), its loops are segmented into several
//     descriptors, splitting the most significant offending entry first
//     (002 L2796-2800).
//  5. stride0 is the largest divisor of the common contiguous run (in bytes)
//     that is at most 4096 and meets the alignment (002 L2593, L2469-2472,
//     L2425-2429).
//
// Failures are *Violation of the DMA rules (and of the sequencer rules the
// sides break); invalid arguments are plain errors.
func DeriveDMA(spec *Spec, req DMARequest) (*kernel.DMACommand, error) {
	if spec == nil {
		return nil, errors.New("dma: no hardware spec")
	}
	bits := req.DType.Bits()
	if bits <= 0 {
		return nil, fmt.Errorf("dma: invalid element type %d", req.DType)
	}
	st := req.Stream
	if st.Packet == nil && req.StreamFn == nil {
		return nil, errors.New("dma: no stream packet mapping")
	}
	for _, x := range []struct {
		name string
		e    **mapping.Expr
	}{{"stream chip", &st.Chip}, {"stream cluster", &st.Cluster}, {"stream slice", &st.Slice}, {"stream time", &st.Time}, {"stream packet", &st.Packet}} {
		if *x.e == nil {
			*x.e = mapping.Identity()
		}
		if err := (*x.e).Err(); err != nil {
			return nil, fmt.Errorf("dma: invalid %s mapping: %w", x.name, err)
		}
	}
	src, err := newDMASide(spec, "source", req.Src, bits)
	if err != nil {
		return nil, err
	}
	dst, err := newDMASide(spec, "destination", req.Dst, bits)
	if err != nil {
		return nil, err
	}
	if dst.hasBroadcast() {
		return nil, ruleDMAWrite.Violate("destination %s holds copies of its elements (broadcast); a DMA writes each element once", dst.buf.String())
	}

	for _, a := range sortedKeys(dst.held) {
		// An axis the source lacks altogether is broadcast: the read walks it
		// with stride 0 (docs/spec-decisions.md "DMA: broadcast reads").
		if h := dst.held[a]; src.held[a] > 0 && src.held[a] < h {
			return nil, ruleDMATensor.Violate("the destination holds %s coordinates 0..%d, the source only %d of them", a, h-1, src.held[a]).
				With("destination", h).With("source", src.held[a])
		}
	}
	var entries []dmaEntry
	var contrib []dmaContrib
	if req.StreamFn == nil {
		var err error
		if entries, contrib, err = dmaLoops(spec, src, dst, st.Time, st.Packet); err != nil {
			return nil, err
		}
	}
	type loops struct {
		es []dmaEntry
		cs []dmaContrib
	}
	cache := map[string]loops{}

	// 3. DMNs.
	sizes := [3]int{st.Chip.Size(), st.Cluster.Size(), st.Slice.Size()}
	lims := [3]int{spec.Chip.MaxChipsPerDMACommand.Value, spec.Chip.Clusters.Value, spec.Cluster.DMNs.Value}
	names := [3]string{"chip", "cluster", "slice (DMN)"}
	for i := range sizes {
		if sizes[i] > lims[i] {
			return nil, ruleDMAForm.Violate("stream %s part has %d positions, but a DMA command names %s indices 0..%d", names[i], sizes[i], names[i], lims[i]-1).
				With("positions", sizes[i]).With("limit", lims[i])
		}
	}
	cmd := &kernel.DMACommand{SliceStride: spec.DMA.SliceStrideBytes.Value,
		DMNStride: spec.DMA.SliceStrideBytes.Value * spec.Cluster.SlicesPerDMN.Value}
	segmented := false
	for ci := 0; ci < sizes[0]; ci++ {
		for cj := 0; cj < sizes[1]; cj++ {
			for ck := 0; ck < sizes[2]; ck++ {
				fixed, ok := dmnFixed(st, ci, cj, ck)
				if !ok {
					continue
				}
				dmn := kernel.DmnIndex{Chip: ci, Cluster: cj, DMN: ck}
				if req.StreamFn != nil {
					tm, pk := req.StreamFn(dmn)
					if pk == nil {
						continue // the DMN takes no part
					}
					if tm == nil {
						tm = mapping.Identity()
					}
					key := tm.String() + " | " + pk.String()
					l, ok := cache[key]
					if !ok {
						es, cs, err := dmaLoops(spec, src, dst, tm, pk)
						if err != nil {
							return nil, fmt.Errorf("DMN %s: %w", dmn, err)
						}
						l = loops{es, cs}
						cache[key] = l
					}
					entries, contrib = l.es, l.cs
					segmented = true // no single stream to check coverage with
				}
				trimmed, err := deriveDMN(spec, &req, src, dst, entries, contrib, fixed, dmn, bits, cmd)
				if err != nil {
					return nil, err
				}
				segmented = segmented || trimmed
			}
		}
	}
	if len(cmd.Descriptors) == 0 {
		return nil, ruleDMAWrite.Violate("the stream holds no element of the tensor")
	}

	// Whole-command write coverage. A padded position of the stream's
	// chip, cluster or slice part names no DMN (dmnFixed skips it), so the
	// parts are checked by their DMNs that run.
	if !segmented {
		t := mapping.Pair(dmnParts(st.Chip), dmnParts(st.Cluster), dmnParts(st.Slice), st.Time)
		if _, err := DeriveSequencer(spec, SeqRequest{Buf: dst.buf, Time: t, Packet: st.Packet, Mode: SeqWrite}); err != nil {
			var v *Violation
			if !errors.As(err, &v) || (v.Rule != ruleSeqEntries && v.Rule != ruleSeqEntrySize) {
				return nil, fmt.Errorf("dma: write coverage: %w", err)
			}
		}
	}
	total := 0
	for _, d := range cmd.Descriptors {
		total += d.Bytes * 8 / bits
	}
	if segmented && total == dst.live {
		if err := checkDistinctWrites(cmd); err != nil {
			return nil, err
		}
	}
	if total != dst.live {
		return nil, ruleDMAWrite.Violate("the descriptors write %d elements, the destination holds %d", total, dst.live).
			With("written", total).With("elements", dst.live)
	}
	cmd.Homogeneous = homogeneous(cmd.Descriptors)
	if err := CheckDMACommand(spec, cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// dmaLoops derives the paired loops of one per-DMN stream (Time, Packet):
// both sides' sequencers, their common refinement, merging and limits, and
// each entry's contribution to the tensor index.
func dmaLoops(spec *Spec, src, dst *dmaSide, time, packet *mapping.Expr) ([]dmaEntry, []dmaContrib, error) {
	// 1. One sequencer per side, over the per-DMN stream.
	rd, err := DeriveSequencer(spec, SeqRequest{Buf: src.buf, Time: time, Packet: packet, Mode: SeqRead})
	if err != nil {
		return nil, nil, fmt.Errorf("dma: read sequencer: %w", err)
	}
	wr, err := DeriveSequencer(spec, SeqRequest{Buf: dst.buf, Time: time, Packet: packet, Mode: SeqRead})
	if err != nil {
		return nil, nil, fmt.Errorf("dma: write sequencer: %w", err)
	}
	for _, s := range []struct {
		side *dmaSide
		es   []kernel.SeqEntry
	}{{src, rd.Initial}, {dst, wr.Initial}} {
		lim := s.side.elemLevel * s.side.slices
		for _, e := range s.es {
			if e.Stride >= lim || e.Stride <= -lim {
				return nil, nil, ruleDMAForm.Violate("stream term %s moves the %s across chips or clusters; a DMN's time and packet stay in one chip and cluster (the stream's chip/cluster/slice parts select DMNs)", e.Term, s.side.name)
			}
		}
	}
	// A read entry of stride 0 walks an axis the source lacks: a broadcast
	// read (docs/spec-decisions.md "DMA: broadcast reads"). The write side
	// never broadcasts.
	for _, e := range wr.Initial {
		if e.Stride == 0 {
			return nil, nil, ruleDMAWrite.Violate("stream term %s (%d:0) writes one destination address %d times (no broadcast write)", e.Term, e.Size, e.Size).With("size", e.Size)
		}
	}

	// 2. Shared limits, paired strides.
	entries, err := refineDMA(rd.Initial, wr.Initial)
	if err != nil {
		return nil, nil, err
	}
	if len(entries) > spec.Sequencer.MaxEntries.Value {
		entries = mergeDMA(entries)
	}
	if err := checkDMASeqLimits(spec, entries); err != nil {
		return nil, nil, err
	}

	// Each entry's contribution to the tensor index (stream position of one
	// step of the entry), for segmentation.
	stream := mapping.Pair(time, packet)
	if err := stream.Err(); err != nil {
		return nil, nil, fmt.Errorf("dma: stream: %w", err)
	}
	contrib := make([]dmaContrib, len(entries))
	cum := 1
	for k := len(entries) - 1; k >= 0; k-- {
		contrib[k] = entryContrib(stream, cum, entries[k].size)
		cum *= entries[k].size
	}

	return entries, contrib, nil
}

// newDMASide checks a tensor's form and builds its address layout.
func newDMASide(spec *Spec, name string, t DMATensor, bits int) (*dmaSide, error) {
	if !t.Media.Valid() {
		return nil, fmt.Errorf("dma: %s: invalid media %q (HBM, DM or SPM)", name, t.Media)
	}
	if t.Element == nil {
		return nil, fmt.Errorf("dma: %s: no element mapping", name)
	}
	parts := []struct {
		what string
		e    **mapping.Expr
	}{{"chip", &t.Chip}, {"cluster", &t.Cluster}, {"slice", &t.Slice}, {"element", &t.Element}}
	for _, p := range parts {
		if *p.e == nil {
			*p.e = mapping.Identity()
		}
		if err := (*p.e).Err(); err != nil {
			return nil, fmt.Errorf("dma: %s %s mapping: %w", name, p.what, err)
		}
	}
	if t.Media != kernel.MediaDM && (t.Cluster.Size() != 1 || t.Slice.Size() != 1) {
		// 002 L2417-2418: HBM and SPM tensors are { chip, element }.
		return nil, ruleDMAForm.Violate("%s in %s has a cluster or slice part; %s tensors are { chip, element }", name, t.Media, t.Media)
	}
	if t.Addr < 0 || t.BaseChip < 0 || t.BaseCluster < 0 || t.BaseSlice < 0 {
		return nil, fmt.Errorf("dma: %s: negative base address", name)
	}
	s := &dmaSide{name: name, t: t, slices: 1, clusters: 1}
	var space int // the element part's address space in bytes
	switch t.Media {
	case kernel.MediaHBM:
		space = int(spec.HBM.Bytes.Value)
	default:
		// A slice's DM, and (unmodelled capacity, 002 L2943-2944) SPM, are
		// addressed inside the slice_stride window (002 L2541).
		space = spec.DMA.SliceStrideBytes.Value
	}
	capacity := space
	if t.Media == kernel.MediaDM {
		capacity = spec.DM.BytesPerSlice.Value // 002 L2874
	}
	eb, err := bytesOf(t.Element.Size(), bits)
	if err != nil {
		return nil, ruleDMAWholeBytes.Violate("%s element part holds %d elements of %d bits: not whole bytes", name, t.Element.Size(), bits)
	}
	if t.Addr > capacity || eb > capacity-t.Addr {
		return nil, ruleDMACapacity.Violate("%s element part spans bytes %d..%d, beyond the %d bytes of %s", name, t.Addr, t.Addr+eb, capacity, t.Media).
			With("end", t.Addr+eb).With("capacity", capacity)
	}
	s.elemLevel = space * 8 / bits
	elem := t.Element
	if elem.Size() < s.elemLevel {
		elem = elem.Pad(s.elemLevel, mapping.Top)
	}
	levels := []*mapping.Expr{t.Chip}
	if t.Media == kernel.MediaDM {
		cl, sl := spec.Chip.Clusters.Value, spec.Cluster.Slices.Value
		if t.BaseCluster+t.Cluster.Size() > cl {
			return nil, ruleDMACapacity.Violate("%s cluster part covers clusters %d..%d of %d", name, t.BaseCluster, t.BaseCluster+t.Cluster.Size()-1, cl)
		}
		if t.BaseSlice+t.Slice.Size() > sl {
			return nil, ruleDMACapacity.Violate("%s slice part covers slices %d..%d of %d per cluster", name, t.BaseSlice, t.BaseSlice+t.Slice.Size()-1, sl)
		}
		c, sp := t.Cluster, t.Slice
		if c.Size() < cl {
			c = c.Pad(cl, mapping.Top)
		}
		if sp.Size() < sl {
			sp = sp.Pad(sl, mapping.Top)
		}
		levels = append(levels, c, sp)
		s.clusters, s.slices = cl, sl
	}
	levels = append(levels, elem)
	s.buf = mapping.Pair(levels...)
	if err := s.buf.Err(); err != nil {
		return nil, fmt.Errorf("dma: %s layout: %w", name, err)
	}
	if s.fs, err = mapping.Factorize(s.buf); err != nil {
		return nil, ruleSeqIncompatible.Violate("%s layout %s has no factorized form: %v", name, s.buf.String(), err)
	}
	s.live = 1
	s.held = map[string]int{}
	for _, f := range s.fs {
		if f.Kind == mapping.FactorTerm {
			s.live *= f.Extent
			if _, ok := s.held[f.Axis]; !ok {
				s.held[f.Axis] = 1
			}
			s.held[f.Axis] += f.Stride * (f.Extent - 1)
		}
	}
	return s, nil
}

func (s *dmaSide) hasBroadcast() bool {
	for _, f := range s.fs {
		if f.Kind == mapping.FactorBroadcast && f.Extent > 1 {
			return true
		}
	}
	return false
}

// locate returns the layout position holding the tensor index idx (axis →
// coordinate), or false if the layout does not hold it. With absentOK an
// axis the layout does not hold at all is ignored (a read broadcasts it,
// 002 L1557).
func (s *dmaSide) locate(idx map[string]int, absentOK bool) (int, bool) {
	pos, cum := 0, 1
	covered := map[string]int{}
	for _, f := range s.fs {
		switch f.Kind {
		case mapping.FactorTerm:
			d := idx[f.Axis] / f.Stride % f.Extent
			pos += d * cum
			covered[f.Axis] += d * f.Stride
			cum *= f.Extent
		case mapping.FactorBroadcast:
			cum *= f.Extent
		case mapping.FactorPad:
			cum = f.Extent
		}
	}
	for a, v := range idx {
		if c, held := covered[a]; (held || !absentOK) && c != v {
			return 0, false
		}
	}
	return pos, true
}

// base returns the media and byte address of layout position pos.
func (s *dmaSide) base(spec *Spec, pos, bits int, engine kernel.DmnIndex) (kernel.DMAMedia, int, error) {
	elem := pos % s.elemLevel
	rest := pos / s.elemLevel
	slice := rest % s.slices
	rest /= s.slices
	cluster := rest % s.clusters
	chip := rest / s.clusters
	eb, err := bytesOf(elem, bits)
	if err != nil {
		return kernel.DMAMedia{}, 0, ruleDMAWholeBytes.Violate("%s base element %d of %d bits is not a whole byte", s.name, elem, bits)
	}
	m := kernel.DMAMedia{Kind: s.t.Media}
	m.Dmn.Chip = s.t.BaseChip + chip
	switch s.t.Media {
	case kernel.MediaHBM:
		return m, s.t.Addr + eb, nil
	case kernel.MediaSPM:
		// SPM(DmnIndex): the executing DMN's scratchpad (002 L2514).
		m.Dmn.Cluster, m.Dmn.DMN = engine.Cluster, engine.DMN
		return m, s.t.Addr + eb, nil
	}
	sl := s.t.BaseSlice + slice
	m.Dmn.Cluster = s.t.BaseCluster + cluster
	m.Dmn.DMN = sl / spec.Cluster.SlicesPerDMN.Value
	return m, sl*spec.DMA.SliceStrideBytes.Value + s.t.Addr + eb, nil
}

// bytesOf converts n elements of the given width to bytes.
func bytesOf(n, bits int) (int, error) {
	if n*bits%8 != 0 {
		return 0, fmt.Errorf("%d elements of %d bits are not whole bytes", n, bits)
	}
	return n * bits / 8, nil
}

// dmaEntry is an entry in elements (strides in layout positions).
type dmaEntry struct {
	size, rs, ws int
	term         string
}

// refineDMA refines the read and write entry lists (outermost first) into
// one list with shared limits (002 L2545): innermost first, the smaller
// remaining entry cuts the larger one, which must divide.
func refineDMA(r, w []kernel.SeqEntry) ([]dmaEntry, error) {
	var out []dmaEntry // innermost first
	i, j := len(r)-1, len(w)-1
	var rn, wn, rm, wm int // remaining size and stride multiplier of the current entries
	load := func() {
		if rn <= 1 {
			for i >= 0 && r[i].Size <= 1 {
				i--
			}
			if i >= 0 {
				rn, rm = r[i].Size, 1
			}
		}
		if wn <= 1 {
			for j >= 0 && w[j].Size <= 1 {
				j--
			}
			if j >= 0 {
				wn, wm = w[j].Size, 1
			}
		}
	}
	load()
	for i >= 0 && j >= 0 {
		n := rn
		if wn < n {
			n = wn
		}
		if rn%n != 0 || wn%n != 0 {
			return nil, ruleDMASeq.Violate("read entry %s (%d) and write entry %s (%d) have no common loop refinement", r[i].Term, rn, w[j].Term, wn)
		}
		out = append(out, dmaEntry{size: n, rs: r[i].Stride * rm, ws: w[j].Stride * wm, term: r[i].Term})
		rn /= n
		rm *= n
		wn /= n
		wm *= n
		if rn == 1 {
			i--
		}
		if wn == 1 {
			j--
		}
		load()
	}
	if i >= 0 || j >= 0 {
		return nil, ruleDMASeq.Violate("read and write sequencers iterate different volumes")
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out, nil
}

// mergeDMA merges adjacent entries contiguous on both sides (002
// L1569-1570), innermost first.
func mergeDMA(es []dmaEntry) []dmaEntry {
	var out []dmaEntry // innermost first
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if n := len(out); n > 0 && e.rs == out[n-1].size*out[n-1].rs && e.ws == out[n-1].size*out[n-1].ws {
			out[n-1].size *= e.size
			out[n-1].term = e.term + ", " + out[n-1].term
			continue
		}
		out = append(out, e)
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out
}

func checkDMASeqLimits(spec *Spec, es []dmaEntry) error {
	if max := spec.Sequencer.MaxEntries.Value; len(es) > max {
		return ruleDMASeq.Violate("needs %d entries after merging, limit %d", len(es), max).With("entries", len(es)).With("limit", max)
	}
	for _, e := range es {
		if max := spec.Sequencer.MaxEntrySize.Value; e.size > max {
			return ruleDMASeq.Violate("entry %s has size %d, limit %d", e.term, e.size, max).With("size", e.size).With("limit", max)
		}
	}
	return nil
}

// dmaContrib is what one step of an entry adds to the tensor index: axis
// coordinate step, or ok == false when the entry is not a digit of one axis.
type dmaContrib struct {
	axis string
	step int
	ok   bool
}

func entryContrib(stream *mapping.Expr, cum, size int) dmaContrib {
	if size <= 1 {
		return dmaContrib{ok: true}
	}
	c := stream.Map(cum)
	if c.Kind != mapping.Live || c.Index.Len() != 1 {
		return dmaContrib{}
	}
	co := c.Index.Coords()[0]
	last := stream.Map(cum * (size - 1))
	if last.Kind == mapping.Live && (last.Index.Len() != 1 || last.Index.Get(co.Axis) != co.Value*(size-1)) {
		return dmaContrib{}
	}
	return dmaContrib{axis: co.Axis, step: co.Value, ok: true}
}

// dmnFixed returns the tensor coordinates the stream's chip/cluster/slice
// parts fix for DMN (i, j, k), or false when a part holds no element there.
func dmnFixed(st DMAStream, i, j, k int) (map[string]int, bool) {
	fixed := map[string]int{}
	for _, p := range []struct {
		e   *mapping.Expr
		pos int
	}{{st.Chip, i}, {st.Cluster, j}, {st.Slice, k}} {
		c := p.e.Map(p.pos)
		if c.Kind != mapping.Live {
			return nil, false
		}
		for _, co := range c.Index.Coords() {
			fixed[co.Axis] += co.Value
		}
	}
	return fixed, true
}

// dmnParts is a DMN-selecting stream part without its padding: the
// positions that name a DMN, in order (`m![A, 1 # 2]` → `m![A]`, DMNs 0, 2,
// 4, 6 of A = 4). Broadcast digits stay (DMNs that write the same elements
// twice must fail the coverage check); a part without a factorized form is
// returned as it is.
func dmnParts(e *mapping.Expr) *mapping.Expr {
	fs, err := mapping.Factorize(e)
	if err != nil {
		return e
	}
	live := fs[:0:0]
	for _, f := range fs {
		if f.Kind != mapping.FactorPad {
			live = append(live, f)
		}
	}
	return live.Expr()
}

// dmaSeg is one segment of a DMN's loops: per entry the first value and
// the count.
type dmaSeg struct{ lo, n []int }

// deriveDMN appends the descriptors of one DMN and reports whether its
// loops were trimmed (segmented, shortened or dropped).
func deriveDMN(spec *Spec, req *DMARequest, src, dst *dmaSide, es []dmaEntry, contrib []dmaContrib, fixed map[string]int, dmn kernel.DmnIndex, bits int, cmd *kernel.DMACommand) (bool, error) {
	segs, err := segmentDMN(req.Axes, dst.held, es, contrib, fixed)
	if err != nil {
		return false, err
	}
	if len(segs) != 1 {
		return true, deriveSegs(spec, src, dst, es, segs, fixed, dmn, bits, cmd)
	}
	trimmed := false
	for k, e := range es {
		if segs[0].n[k] != e.size {
			trimmed = true
		}
	}
	return trimmed, deriveSegs(spec, src, dst, es, segs, fixed, dmn, bits, cmd)
}

// deriveSegs appends one descriptor per segment of a DMN.
func deriveSegs(spec *Spec, src, dst *dmaSide, es []dmaEntry, segs []dmaSeg, fixed map[string]int, dmn kernel.DmnIndex, bits int, cmd *kernel.DMACommand) error {
	if len(segs) == 0 {
		return nil
	}
	sp, ok := src.locate(fixed, true)
	if !ok {
		return ruleDMAForm.Violate("DMN %s: the source does not hold the stream's DMN coordinates %s", dmn, fixedString(fixed))
	}
	dp, ok := dst.locate(fixed, false)
	if !ok {
		return ruleDMAWrite.Violate("DMN %s: the destination does not hold the stream's DMN coordinates %s", dmn, fixedString(fixed))
	}
	for x, sg := range segs {
		d := kernel.DMADescriptor{Dmn: dmn, Exec: x, ElemBits: bits}
		srcPos, dstPos := sp, dp
		for k, e := range es {
			srcPos += sg.lo[k] * e.rs
			dstPos += sg.lo[k] * e.ws
		}
		var err error
		if d.Src, d.SrcBase, err = src.base(spec, srcPos, bits, dmn); err != nil {
			return err
		}
		if d.Dst, d.DstBase, err = dst.base(spec, dstPos, bits, dmn); err != nil {
			return err
		}
		elems := make([]dmaEntry, len(es))
		for k, e := range es {
			elems[k] = e
			elems[k].size = sg.n[k]
		}
		if err := finishDescriptor(spec, &d, elems, bits); err != nil {
			return fmt.Errorf("DMN %s exec #%d: %w", dmn, x, err)
		}
		cmd.Descriptors = append(cmd.Descriptors, d)
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fixedString(m map[string]int) string {
	keys := sortedKeys(m)
	s := "{"
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d", k, m[k])
	}
	return s + "}"
}

// segmentDMN splits a DMN's loops into segments that reach only valid
// coordinates (002 L2793-2800): below the axis size and inside the range the
// destination holds. Entries moving an axis that the DMN could overrun are
// split most significant first; consecutive valid values of an entry form
// one segment.
func segmentDMN(axes mapping.Axes, held map[string]int, es []dmaEntry, contrib []dmaContrib, fixed map[string]int) ([]dmaSeg, error) {
	limit := func(a string) (int, bool) {
		sz, ok := axes.Size(a)
		if h, in := held[a]; in && h < sz {
			sz = h
		}
		return sz, ok
	}
	full := dmaSeg{lo: make([]int, len(es)), n: make([]int, len(es))}
	for k, e := range es {
		full.n[k] = e.size
	}
	reach := map[string]int{}
	for a, v := range fixed {
		reach[a] = v
	}
	for k, c := range contrib {
		if c.ok && c.axis != "" {
			reach[c.axis] += c.step * (es[k].size - 1)
		}
	}
	risky := map[string]bool{}
	for _, a := range sortedKeys(reach) {
		v := reach[a]
		sz, ok := limit(a)
		if !ok {
			return nil, fmt.Errorf("dma: axis %s is not declared", a)
		}
		if fixed[a] >= sz {
			return nil, nil // the DMN holds nothing
		}
		if v >= sz {
			risky[a] = true
		}
	}
	if len(risky) == 0 {
		return []dmaSeg{full}, nil
	}
	var order []int
	for k, c := range contrib {
		if !c.ok {
			return nil, ruleDMAWrite.Violate("entry %s mixes several axes; cannot segment a DMN whose stream leaves the tensor", es[k].term)
		}
		if c.axis != "" && risky[c.axis] && es[k].size > 1 {
			order = append(order, k)
		}
	}
	sort.SliceStable(order, func(x, y int) bool {
		cx, cy := contrib[order[x]], contrib[order[y]]
		if cx.axis != cy.axis {
			return cx.axis < cy.axis
		}
		return cx.step > cy.step
	})
	// state: 1 valid, -1 invalid, 0 mixed.
	state := func(s dmaSeg) int {
		res := 1
		for a := range risky {
			sz, _ := limit(a)
			lo, hi := fixed[a], fixed[a]
			for k, c := range contrib {
				if c.axis == a {
					lo += c.step * s.lo[k]
					hi += c.step * (s.lo[k] + s.n[k] - 1)
				}
			}
			if lo >= sz {
				return -1
			}
			if hi >= sz {
				res = 0
			}
		}
		return res
	}
	var out []dmaSeg
	var rec func(s dmaSeg, l int)
	rec = func(s dmaSeg, l int) {
		k := order[l]
		start := -1
		flush := func(end int) {
			if start >= 0 {
				t := dmaSeg{lo: append([]int(nil), s.lo...), n: append([]int(nil), s.n...)}
				t.lo[k], t.n[k] = start, end-start
				out = append(out, t)
				start = -1
			}
		}
		for v := 0; v < es[k].size; v++ {
			t := dmaSeg{lo: append([]int(nil), s.lo...), n: append([]int(nil), s.n...)}
			t.lo[k], t.n[k] = v, 1
			switch state(t) {
			case 1:
				if start < 0 {
					start = v
				}
			case -1:
				flush(v)
			default:
				flush(v)
				if l+1 < len(order) {
					rec(t, l+1)
				}
			}
		}
		flush(es[k].size)
	}
	rec(full, 0)
	return out, nil
}

// finishDescriptor converts element entries to bytes, chooses stride0 and
// checks the descriptor's alignment.
func finishDescriptor(spec *Spec, d *kernel.DMADescriptor, es []dmaEntry, bits int) error {
	n := 1
	for _, e := range es {
		n *= e.size
	}
	// Common contiguous run, in elements (002 L2593): the innermost entries
	// (size-1 entries skipped) that continue each other on both sides.
	run, cut := 1, len(es)
	for k := len(es) - 1; k >= 0; k-- {
		e := es[k]
		if e.size == 1 {
			continue
		}
		if e.rs != run || e.ws != run {
			break
		}
		run *= e.size
		cut = k
	}
	runBytes, err := bytesOf(run, bits)
	if err != nil {
		return ruleDMAWholeBytes.Violate("the contiguous run of %d elements of %d bits is not whole bytes", run, bits)
	}
	total, err := bytesOf(n, bits)
	if err != nil {
		return ruleDMAWholeBytes.Violate("%d elements of %d bits are not whole bytes", n, bits)
	}
	if bits < 8 && run > 1 {
		// Sub-byte elements: the run is one loop over its bytes, so that
		// every stride is whole bytes (the loop positions become bytes).
		terms := make([]string, 0, len(es)-cut)
		for _, e := range es[cut:] {
			if e.size > 1 {
				terms = append(terms, e.term)
			}
		}
		es = append(append([]dmaEntry(nil), es[:cut]...), dmaEntry{size: runBytes, rs: 1, ws: 1, term: strings.Join(terms, ", ")})
		for k := range es[:cut] {
			if es[k].rs*bits%8 != 0 || es[k].ws*bits%8 != 0 {
				return ruleDMAWholeBytes.Violate("entry %s strides (%d, %d) elements of %d bits are not whole bytes", es[k].term, es[k].rs, es[k].ws, bits)
			}
			es[k].rs, es[k].ws = es[k].rs*bits/8, es[k].ws*bits/8
		}
		bits = 8
	}
	d.ElemBits = bits
	d.Entries = make([]kernel.DMAEntry, len(es))
	for k, e := range es {
		rs, err1 := bytesOf(e.rs, bits)
		ws, err2 := bytesOf(e.ws, bits)
		if err1 != nil || err2 != nil {
			return ruleDMAWholeBytes.Violate("entry %s strides (%d, %d) elements of %d bits are not whole bytes", e.term, e.rs, e.ws, bits)
		}
		d.Entries[k] = kernel.DMAEntry{Size: e.size, SrcStride: rs, DstStride: ws, Term: e.term}
	}
	ra, wa, pa := dmaAlign(spec, d.Src.Kind, d.Dst.Kind)
	max := spec.DMA.MaxPacketBytes.Value
	stride0 := 0
	for p := 1; p <= max && p <= runBytes; p++ {
		if runBytes%p == 0 && p%pa == 0 {
			stride0 = p
		}
	}
	if stride0 == 0 {
		return ruleDMAAlign.Violate("%s to %s: the contiguous run of %d bytes has no packet size that is a multiple of %d bytes (and at most %d)", d.Src.Kind, d.Dst.Kind, runBytes, pa, max).
			With("run", runBytes).With("align", pa)
	}
	d.Stride0 = stride0
	d.Bytes = total
	d.Packets = total / stride0
	req := spec.DMA.RequestBytes.Value
	d.RequestsPerPacket = (stride0 + req - 1) / req // 002 L2469
	d.Requests = d.Packets * d.RequestsPerPacket
	return checkDescriptorAlign(d, ra, wa, pa)
}

// dmaAlign returns the read-address, write-address and packet alignment of
// a transfer (002 L2425-2427): the read side by the source media, the write
// side and the packet by the destination media, all 8 bytes for HBM to DM.
// SPM, an SRAM, follows the DM column (docs/spec-decisions.md "DMA: packet
// alignment follows the write side").
func dmaAlign(spec *Spec, src, dst kernel.MediaKind) (ra, wa, pa int) {
	ra, wa, pa = spec.DMA.HBMReadAlignBytes.Value, spec.DMA.HBMWriteAlignBytes.Value, spec.DMA.HBMPacketAlignBytes.Value
	if src != kernel.MediaHBM {
		ra = spec.DMA.DMReadAlignBytes.Value
	}
	if dst != kernel.MediaHBM {
		wa, pa = spec.DMA.DMWriteAlignBytes.Value, spec.DMA.DMPacketAlignBytes.Value
	}
	if src == kernel.MediaHBM && dst == kernel.MediaDM {
		a := spec.DMA.HBMToDMAlignBytes.Value // 002 L2427, L2837
		ra, wa, pa = lcm(ra, a), lcm(wa, a), lcm(pa, a)
	}
	return ra, wa, pa
}

func lcm(a, b int) int {
	if a <= 0 || b <= 0 {
		return 1
	}
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// checkDescriptorAlign checks every packet's read and write address and
// the packet size: the bases, and the strides of every entry that steps
// from packet to packet.
func checkDescriptorAlign(d *kernel.DMADescriptor, ra, wa, pa int) error {
	if d.Stride0%pa != 0 {
		return ruleDMAAlign.Violate("%s to %s packet of %d bytes is not a multiple of %d", d.Src.Kind, d.Dst.Kind, d.Stride0, pa).With("packet", d.Stride0).With("align", pa)
	}
	if d.SrcBase%ra != 0 {
		return ruleDMAAlign.Violate("%s read address %d is not a multiple of %d", d.Src.Kind, d.SrcBase, ra).With("address", d.SrcBase).With("align", ra)
	}
	if d.DstBase%wa != 0 {
		return ruleDMAAlign.Violate("%s write address %d is not a multiple of %d", d.Dst.Kind, d.DstBase, wa).With("address", d.DstBase).With("align", wa)
	}
	inner := 1 // elements covered inside one packet, innermost first
	bits := d.ElemBits
	if bits <= 0 {
		bits = 8
	}
	for k := len(d.Entries) - 1; k >= 0; k-- {
		e := d.Entries[k]
		if e.Size == 1 {
			continue
		}
		if (inner*e.Size*bits+7)/8 <= d.Stride0 {
			inner *= e.Size
			continue
		}
		if e.SrcStride%ra != 0 {
			return ruleDMAAlign.Violate("entry %s steps the %s read address by %d bytes, not a multiple of %d", e.Term, d.Src.Kind, e.SrcStride, ra).With("stride", e.SrcStride).With("align", ra)
		}
		if e.DstStride%wa != 0 {
			return ruleDMAAlign.Violate("entry %s steps the %s write address by %d bytes, not a multiple of %d", e.Term, d.Dst.Kind, e.DstStride, wa).With("stride", e.DstStride).With("align", wa)
		}
	}
	return nil
}

// maxDistinctCheck bounds the packets checkDistinctWrites enumerates.
const maxDistinctCheck = 1 << 20

// checkDistinctWrites verifies, for commands of at most maxDistinctCheck
// packets, that no two packets write overlapping bytes; with the volume
// equal to the destination's live elements this makes every element
// written exactly once. Larger commands rely on the segmentation's
// construction.
func checkDistinctWrites(cmd *kernel.DMACommand) error {
	n := 0
	for _, d := range cmd.Descriptors {
		n += d.Packets
	}
	if n > maxDistinctCheck {
		return nil
	}
	type span struct{ chip, cluster, lo, hi, desc int }
	spans := make([]span, 0, n)
	for x, d := range cmd.Descriptors {
		unit := d.ElemBits / 8
		if unit < 1 || d.Stride0 < 1 {
			return fmt.Errorf("dma: descriptor %d: loop unit %d bits, stride0 %d", x, d.ElemBits, d.Stride0)
		}
		for q := 0; q < d.Packets; q++ {
			o := q * d.Stride0
			w, p := d.DstBase+o%unit, o/unit
			for k := len(d.Entries) - 1; k >= 0; k-- {
				e := d.Entries[k]
				w += p % e.Size * e.DstStride
				p /= e.Size
			}
			spans = append(spans, span{d.Dst.Dmn.Chip, d.Dst.Dmn.Cluster, w, w + d.Stride0, x})
		}
	}
	sort.Slice(spans, func(a, b int) bool {
		if spans[a].chip != spans[b].chip {
			return spans[a].chip < spans[b].chip
		}
		if spans[a].cluster != spans[b].cluster {
			return spans[a].cluster < spans[b].cluster
		}
		return spans[a].lo < spans[b].lo
	})
	for k := 1; k < len(spans); k++ {
		a, b := spans[k-1], spans[k]
		if a.chip == b.chip && a.cluster == b.cluster && b.lo < a.hi {
			d := cmd.Descriptors[b.desc]
			return ruleDMAWrite.Violate("DMN %s exec #%d writes address %d of %s a second time", d.Dmn, d.Exec, b.lo, d.Dst).With("address", b.lo)
		}
	}
	return nil
}

func homogeneous(ds []kernel.DMADescriptor) bool {
	seen := map[kernel.DmnIndex]bool{}
	for _, d := range ds {
		if seen[d.Dmn] {
			return false
		}
		seen[d.Dmn] = true
		if len(d.Entries) != len(ds[0].Entries) || d.Stride0 != ds[0].Stride0 {
			return false
		}
		for k, e := range d.Entries {
			f := ds[0].Entries[k]
			if e.Size != f.Size || e.SrcStride != f.SrcStride || e.DstStride != f.DstStride {
				return false
			}
		}
	}
	return true
}

// CheckDMACommand checks the rules a DMA command's descriptors must obey
// on their own, hand-written or derived: DMN index ranges (002 L2515-2518),
// uniform media (002 L2494-2496), sequencer limits (002 L2423), packet size
// and alignment (002 L2425-2429) and SPM staying on its chip (002 L2825).
func CheckDMACommand(spec *Spec, cmd *kernel.DMACommand) error {
	if spec == nil || cmd == nil {
		return errors.New("dma: no spec or command")
	}
	for x := range cmd.Descriptors {
		d := &cmd.Descriptors[x]
		if !d.Src.Kind.Valid() || !d.Dst.Kind.Valid() {
			return fmt.Errorf("dma: descriptor %d: invalid media %q -> %q", x, d.Src.Kind, d.Dst.Kind)
		}
		for _, m := range []kernel.DmnIndex{d.Dmn, d.Src.Dmn, d.Dst.Dmn} {
			if m.Chip < 0 || m.Chip >= spec.Chip.MaxChipsPerDMACommand.Value || m.Cluster < 0 || m.Cluster >= spec.Chip.Clusters.Value || m.DMN < 0 || m.DMN >= spec.Cluster.DMNs.Value {
				return ruleDMAForm.Violate("descriptor %d: DMN index %s outside chip 0..%d, cluster 0..%d, DMN 0..%d", x, m,
					spec.Chip.MaxChipsPerDMACommand.Value-1, spec.Chip.Clusters.Value-1, spec.Cluster.DMNs.Value-1)
			}
		}
		f := &cmd.Descriptors[0]
		if d.Src.Kind != f.Src.Kind || d.Dst.Kind != f.Dst.Kind {
			return ruleDMAMedia.Violate("descriptor %d moves %s to %s, descriptor 0 %s to %s", x, d.Src.Kind, d.Dst.Kind, f.Src.Kind, f.Dst.Kind)
		}
		if (d.Src.Kind == kernel.MediaSPM || d.Dst.Kind == kernel.MediaSPM) && (d.Src.Dmn.Chip != d.Dmn.Chip || d.Dst.Dmn.Chip != d.Dmn.Chip) {
			return ruleDMASPM.Violate("descriptor %d on chip %d moves %s(chip %d) to %s(chip %d)", x, d.Dmn.Chip, d.Src.Kind, d.Src.Dmn.Chip, d.Dst.Kind, d.Dst.Dmn.Chip)
		}
		if max := spec.Sequencer.MaxEntries.Value; len(d.Entries) > max {
			return ruleDMASeq.Violate("descriptor %d has %d entries, limit %d", x, len(d.Entries), max).With("entries", len(d.Entries)).With("limit", max)
		}
		for _, e := range d.Entries {
			if e.Size < 1 || e.Size > spec.Sequencer.MaxEntrySize.Value {
				return ruleDMASeq.Violate("descriptor %d entry %s has size %d, limits 1..%d", x, e.Term, e.Size, spec.Sequencer.MaxEntrySize.Value).With("size", e.Size)
			}
		}
		if d.Stride0 < 1 || d.Stride0 > spec.DMA.MaxPacketBytes.Value {
			return ruleDMAPacket.Violate("descriptor %d stride0 is %d bytes, allowed 1..%d", x, d.Stride0, spec.DMA.MaxPacketBytes.Value).With("stride0", d.Stride0)
		}
		ra, wa, pa := dmaAlign(spec, d.Src.Kind, d.Dst.Kind)
		if err := checkDescriptorAlign(d, ra, wa, pa); err != nil {
			return err
		}
		if b := d.ElemBits; b > 0 && d.Bytes > 0 && d.Bytes%d.Stride0 != 0 {
			return ruleDMARun.Violate("descriptor %d moves %d bytes, not a multiple of stride0 %d", x, d.Bytes, d.Stride0).With("bytes", d.Bytes).With("stride0", d.Stride0)
		}
	}
	return nil
}

// DMAPacket is a descriptor's execution semantics for the simulator (002
// L2567-2582): packet q (0 ≤ q < d.Packets) moves d.Stride0 consecutive bytes
// from the returned source byte address to the returned destination byte
// address. Byte q·Stride0 of the descriptor's stream is loop position
// (q·Stride0) / (ElemBits/8), whose address is Base + Σ digit_k·Stride_k with
// the digits of the position in the mixed radix of the entry sizes, the
// innermost entry fastest (the table of 002 L2570-2577), plus the byte
// within the position. It does not allocate.
func DMAPacket(d *kernel.DMADescriptor, q int) (src, dst int, err error) {
	return DMAPacketIndexed(d, q, nil)
}

// IndexLookup returns the value at position pos of an IndirectLoop
// entry's index tensor (kernel.DMAIndex): the row it reads.
type IndexLookup func(x *kernel.DMAIndex, pos int) (int, error)

// DMAPacketIndexed is DMAPacket for a descriptor with an IndirectLoop entry
// (DMA-R16, 002 L1684-1688): at that entry the source moves by the row the
// index tensor names at position Index.Position(i), times the stride; a
// row outside [0, Index.Rows) is an error.
func DMAPacketIndexed(d *kernel.DMADescriptor, q int, index IndexLookup) (src, dst int, err error) {
	if d.ElemBits < 8 || d.ElemBits%8 != 0 || d.Stride0 < 1 {
		return 0, 0, fmt.Errorf("dma: descriptor with %d-bit loop positions and stride0 %d", d.ElemBits, d.Stride0)
	}
	if q < 0 || q >= d.Packets {
		return 0, 0, fmt.Errorf("dma: packet %d outside [0, %d)", q, d.Packets)
	}
	eb := d.ElemBits / 8
	o := q * d.Stride0
	i := o / eb
	src, dst = d.SrcBase+o%eb, d.DstBase+o%eb
	for k := len(d.Entries) - 1; k >= 0; k-- {
		e := &d.Entries[k]
		if e.Size < 1 {
			return 0, 0, fmt.Errorf("dma: entry %d has size %d", k, e.Size)
		}
		pos := i % e.Size
		i /= e.Size
		row := pos
		if x := e.Index; x != nil {
			if index == nil {
				return 0, 0, ruleDMAIndirect.Violate("entry %d is an indirect loop over %q, and no index values are given", k, x.Tensor)
			}
			r, err := index(x, x.Position(pos))
			if err != nil {
				return 0, 0, err
			}
			if r < 0 || r >= x.Rows {
				what := "the table's"
				if x.Write {
					what = "the destination's"
				}
				return 0, 0, ruleDMAIndirect.Violate("index %q position %d holds %d, outside %s %d rows", x.Tensor, x.Position(pos), r, what, x.Rows).With("row", r)
			}
			row = r
		}
		if e.Index != nil && e.Index.Write {
			src += pos * e.SrcStride
			dst += row * e.DstStride
		} else {
			src += row * e.SrcStride
			dst += pos * e.DstStride
		}
	}
	if i != 0 {
		return 0, 0, fmt.Errorf("dma: packet %d lies beyond the descriptor's %d loop positions", q, d.Size())
	}
	return src, dst, nil
}

// HBMToDMPacketBytes is the multiple every packet of an HBM → DM transfer
// is (002 L2425-2427, L2836-2837): a run of an HBM tensor that reaches a
// slice's DM alone must be a multiple of it (DMA-R1).
func HBMToDMPacketBytes(spec *Spec) int {
	_, _, pa := dmaAlign(spec, kernel.MediaHBM, kernel.MediaDM)
	return pa
}

// Rules that tie a DMA command to the op that states it.
var (
	ruleDMAOpMedia = NewRule(Rule{ID: "DMA-R12", Engine: "dma", Name: "media of the op's tensors",
		Cite: "002 L2514, L2550",
		Text: "a DMA moves one tensor to another: each descriptor reads the source tensor's medium (HBM or DM) and writes the destination's"})
	ruleDMACounts = NewRule(Rule{ID: "DMA-R13", Engine: "dma", Name: "the loops are the transfer",
		Cite: "002 L2510-2512, L2567-2582, L2469",
		Text: "a descriptor moves every position of its loops, stride0 bytes per packet: bytes = Π sizes × the position's bytes, packets = bytes / stride0, ceil(stride0 / 256) requests per packet"})
	ruleDMAPacketRun = NewRule(Rule{ID: "DMA-R14", Engine: "dma", Name: "a packet is contiguous",
		Cite: "002 L2512, L2579",
		Text: "each innermost hardware iteration moves stride0 consecutive bytes on both sides (`cycle 0 processes all values for (A, B, C) = (0, 0, 0..255) as a single packet`): the entries a packet covers step one position's bytes times the positions inside them"})
	ruleDMADMN = NewRule(Rule{ID: "DMA-R15", Engine: "dma", Name: "DM media names its DMN",
		Cite: "002 L2514-2518, L2541, L2867-2868",
		Text: "DM(chip, cluster, dmn) names the DMN of the descriptor's DM base: slice (base / slice_stride) / 32 of that chip's cluster (docs/spec-decisions.md \"DMA: DM addresses, slice_stride and DMN_stride\")"})
)

// DMAOp is what a program says about one DMA op: its source and
// destination tensors (HBM or DM), their element type, the program's chip
// count and the bytes of the tensors' memories each side may touch.
type DMAOp struct {
	Src, Dst DMASide
	// ElemBits is the element type's width.
	ElemBits int
	// Chips is the program's chip count.
	Chips int
}

// DMASide is one tensor of a DMA op.
type DMASide struct {
	Name string
	// Media is the tensor's medium.
	Media kernel.MediaKind
	// Lo and Hi bound the bytes the tensor occupies: HBM bytes [Lo, Hi) of
	// each chip, or DM bytes [Lo, Hi) of each slice.
	Lo, Hi int64
	// Chip, Cluster and Slice are the tensor's mappings (Cluster and Slice
	// nil for HBM): a side reaches only their live positions.
	Chip, Cluster, Slice *mapping.Expr
}

// livePos reports whether position k of e holds data.
func livePos(e *mapping.Expr, k int64) bool {
	return e != nil && k >= 0 && k < int64(e.Size()) && e.Map(int(k)).Kind == mapping.Live
}

// CheckDMAOp checks a DMA command against the op that states it: the
// command's own rules (CheckDMACommand), then per descriptor the media of
// the op's tensors (DMA-R12), the counts its loops give (DMA-R13), packets
// of consecutive bytes (DMA-R14), the DMN its DM media names (DMA-R15), and
// that every byte it reads lies in the source tensor and every byte it
// writes in the destination (DMA-R5, DMA-R6).
func CheckDMAOp(spec *Spec, cmd *kernel.DMACommand, op DMAOp) error {
	if err := CheckDMACommand(spec, cmd); err != nil {
		return err
	}
	if len(cmd.Descriptors) == 0 {
		return ruleDMACounts.Violate("a command without descriptors moves nothing")
	}
	stride := int64(spec.DMA.SliceStrideBytes.Value)
	per := int64(spec.Cluster.SlicesPerDMN.Value)
	if s := int64(cmd.SliceStride); s != stride {
		return ruleDMADMN.Violate("slice_stride %d, the DM virtual address space of a slice is %d bytes", s, stride).With("slice_stride", cmd.SliceStride)
	}
	if s := int64(cmd.DMNStride); s != per*stride {
		return ruleDMADMN.Violate("DMN_stride %d, %d slices of %d bytes are %d", s, per, stride, per*stride).With("dmn_stride", cmd.DMNStride)
	}
	if h := homogeneous(cmd.Descriptors); cmd.Homogeneous != h {
		return ruleDMAForm.Violate("the command states homogeneous = %v; its descriptors are %s", cmd.Homogeneous, map[bool]string{true: "homogeneous", false: "heterogeneous"}[h])
	}
	eb := max(op.ElemBits, 8)
	req := spec.DMA.RequestBytes.Value
	execs := map[kernel.DmnIndex]int{}
	for x := range cmd.Descriptors {
		d := &cmd.Descriptors[x]
		// A DMN's engine runs its descriptors in sequence (002 L2565):
		// Exec numbers them 0, 1, ... in command order.
		if d.Exec != execs[d.Dmn] {
			return ruleDMAForm.Violate("descriptor %d is execution #%d of DMN %s, which runs #%d next", x, d.Exec, d.Dmn, execs[d.Dmn]).With("exec", d.Exec)
		}
		execs[d.Dmn]++
		if d.Src.Kind != op.Src.Media || d.Dst.Kind != op.Dst.Media {
			return ruleDMAOpMedia.Violate("descriptor %d moves %s to %s; %q is in %s, %q in %s", x, d.Src.Kind, d.Dst.Kind, op.Src.Name, op.Src.Media, op.Dst.Name, op.Dst.Media)
		}
		if d.ElemBits != eb {
			return ruleDMACounts.Violate("descriptor %d walks %d-bit positions, the tensors' are %d bits", x, d.ElemBits, eb).With("elem_bits", d.ElemBits)
		}
		bytes := int64(d.Size()) * int64(eb/8)
		if int64(d.Bytes) != bytes || d.Stride0 < 1 || int64(d.Packets)*int64(d.Stride0) != bytes {
			return ruleDMACounts.Violate("descriptor %d states %d bytes in %d packets of %d; its loops %v move %d bytes", x, d.Bytes, d.Packets, d.Stride0, d.Entries, bytes).
				With("bytes", d.Bytes).With("packets", d.Packets)
		}
		if rpp := (d.Stride0 + req - 1) / req; d.RequestsPerPacket != rpp || d.Requests != d.Packets*rpp {
			return ruleDMACounts.Violate("descriptor %d states %d requests (%d per packet); %d packets of %d bytes are %d requests", x, d.Requests, d.RequestsPerPacket, d.Packets, d.Stride0, d.Packets*rpp).
				With("requests", d.Requests)
		}
		if err := checkPacketRun(d, eb/8); err != nil {
			return ruleDMAPacketRun.Violate("descriptor %d: %v", x, err)
		}
		for side, m := range []kernel.DMAMedia{d.Src, d.Dst} {
			t, base, rule := op.Src, d.SrcBase, ruleDMATensor
			if side == 1 {
				t, base, rule = op.Dst, d.DstBase, ruleDMAWrite
			}
			strideOf := func(e kernel.DMAEntry) int64 {
				if side == 0 {
					return int64(e.SrcStride)
				}
				return int64(e.DstStride)
			}
			if m.Dmn.Chip >= op.Chips || !livePos(t.Chip, int64(m.Dmn.Chip)) {
				return rule.Violate("descriptor %d: %s, but %q holds no data on chip %d (Chip m![%s]; the kernel runs on %d chips)", x, m, t.Name, m.Dmn.Chip, t.Chip, op.Chips).With("chip", m.Dmn.Chip)
			}
			if m.Kind == kernel.MediaHBM && (m.Dmn.Cluster != 0 || m.Dmn.DMN != 0) {
				return ruleDMAForm.Violate("descriptor %d: HBM media name a chip only (\"HBM\"(<ChipIndex>), 002 L2514), not cluster %d DMN %d", x, m.Dmn.Cluster, m.Dmn.DMN)
			}
			// The range of bytes the side touches: the slice part (DM
			// strides that are multiples of slice_stride) apart from the
			// byte part.
			var sLo, sHi, bLo, bHi int64
			b := int64(base)
			if m.Kind == kernel.MediaDM {
				sLo, sHi = b/stride, b/stride
				b %= stride
			}
			bLo, bHi = b, b+int64(eb/8)-1
			for _, e := range d.Entries {
				s, n := strideOf(e), int64(e.Size-1)
				if e.Index != nil && (side == 1) == e.Index.Write {
					n = int64(e.Index.Rows - 1) // any row of the table or the destination (DMA-R16)
				}
				lo, hi := &bLo, &bHi
				if m.Kind == kernel.MediaDM && s != 0 && s%stride == 0 {
					lo, hi, s = &sLo, &sHi, s/stride
				}
				if s < 0 {
					*lo += n * s
				} else {
					*hi += n * s
				}
			}
			if bLo < t.Lo || bHi >= t.Hi {
				return rule.Violate("descriptor %d %s bytes [%d, %d] of %s, %q holds [%d, %d)", x, map[int]string{0: "reads", 1: "writes"}[side], bLo, bHi, m, t.Name, t.Lo, t.Hi).
					With("address", int(bLo))
			}
			if m.Kind != kernel.MediaDM {
				continue
			}
			if !livePos(t.Cluster, int64(m.Dmn.Cluster)) || !livePos(t.Slice, sLo) || !livePos(t.Slice, sHi) {
				return rule.Violate("descriptor %d reaches slices %d-%d of %s; %q lives on Cluster m![%s], Slice m![%s]", x, sLo, sHi, m, t.Name, t.Cluster, t.Slice).
					With("slice", int(sHi))
			}
			if int64(m.Dmn.DMN) != sLo/per {
				return ruleDMADMN.Violate("descriptor %d: %s, but its DM base is slice %d, of DMN %d", x, m, sLo, sLo/per).With("dmn", m.Dmn.DMN)
			}
		}
	}
	return nil
}

// checkPacketRun checks DMA-R14: the positions one packet covers are
// consecutive on both sides. The innermost entries that step exactly the
// bytes of the positions inside them form one consecutive run; stride0
// must divide it, so that no packet straddles the run's end.
func checkPacketRun(d *kernel.DMADescriptor, eb int) error {
	if eb < 1 || d.Stride0%eb != 0 {
		return fmt.Errorf("stride0 %d is not whole %d-byte positions", d.Stride0, eb)
	}
	n := d.Stride0 / eb // positions per packet
	run := 1
	for k := len(d.Entries) - 1; k >= 0; k-- {
		e := d.Entries[k]
		if e.Size != 1 && (e.SrcStride != run*eb || e.DstStride != run*eb) {
			break
		}
		run *= e.Size
	}
	if run%n != 0 {
		return fmt.Errorf("the innermost entries %v step a consecutive run of %d positions, which %d-byte packets (%d positions) do not divide", d.Entries, run, d.Stride0, n)
	}
	return nil
}
