package engines

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Lowering: a kernel program's mappings → every engine's configuration, as
// the vendor's compiler derives them (002 L1224: "the compiler derives the
// register configuration and strides"). Lower walks each chain stage by
// stage, threading the stream tensor's type (Chip, Cluster, Slice, Time,
// Packet, element type) from one method to the next exactly as the Virtual
// ISA's typestate does, and calls each engine's derivation with it.

// Chain rules: the stream tensor's spatial mappings carry through the chain
// into the tensors it produces.
var (
	ruleChainCommit = NewRule(Rule{ID: "CHAIN-R1", Engine: "commit", Name: "commit keeps the stream's spatial mappings",
		Cite: "002 L2154",
		Text: "commit::<Element>(addr) returns DmTensor<D, Chip, Cluster, Slice, Element>: the DM tensor has the stream's Chip, Cluster and Slice mappings"})
	ruleChainTRF = NewRule(Rule{ID: "CHAIN-R2", Engine: "aligner", Name: "TRF tensor on the stream's slices",
		Cite: "002 L4056-4065, L3891",
		Text: "to_trf produces, and align reads, a TrfTensor with the stream's Chip, Cluster and Slice mappings"})
	ruleChainBegin = NewRule(Rule{ID: "CHAIN-R3", Engine: "fetch", Name: "begin reads a DM tensor",
		Cite: "002 L1704-1705",
		Text: "begin(view) starts a chain from a DM tensor, and fetch::<D2, Time2, Packet2> keeps its Chip, Cluster and Slice mappings"})
	ruleChainCollect = NewRule(Rule{ID: "CHAIN-R4", Engine: "collect", Name: "to_trf, to_vrf and align take the collect stream",
		Cite: "002 L4049-4065, L3888-3894, L3033",
		Text: "to_trf and align are methods of CollectTensor, and the Collect Engine loads TRF via .to_trf() and VRF via .to_vrf(): the stage before them is collect"})
	ruleChainStated = NewRule(Rule{ID: "CHAIN-R6", Engine: "lower", Name: "a stated configuration follows from the program",
		Cite: "002 L1224, L1809, L2238",
		Text: "the compiler derives every register configuration from the kernel's types and mappings (users do not specify sequencer configurations, fetch_size or commit_in_size): a configuration the kernel states may differ from the derived one only in its sequencers' loops and bases, which the simulator runs as written"})
	ruleChainTRFType = NewRule(Rule{ID: "CHAIN-R5", Engine: "trf", Name: "TRF tensor of the stream's type",
		Cite: "002 L4056-4059, L3891-3894",
		Text: "to_trf on a CollectTensor<D> returns a TrfTensor<D>, and align pairs a CollectTensor<D> with a TrfTensor<D>: the TRF tensor has the stream's element type"})
)

// chainState is the stream tensor's type between two stages.
type chainState struct {
	dt                   dtype.DType
	chip, cluster, slice *mapping.Expr
	element              *mapping.Expr // begin's DM element mapping
	time, packet         *mapping.Expr
	row                  *mapping.Expr // the computation Row, after align
	contract             *kernel.ContractConfig
	align                *kernel.AlignConfig // the chain's align, once lowered
	prev                 kernel.StageKind
	ve                   *vePass // the open Vector Engine pass, between vector_init and vector_final
	// inter is the interleaving of a begin_interleaved chain's fetch
	// (engines/interleave.go), nil otherwise.
	inter *FetchInterleaveRequest
	// dual is set when the chain runs in dual channel mode: its collect
	// forms 64-byte flits, so its switch (the main and sub Switch Engines
	// combined) moves 64-byte flits too (002 L2125-2127, L2140).
	dual bool
}

// LowerError locates a lowering failure in the program: the op, and the
// stage within a chain. It wraps the engine's error (often a *Violation).
type LowerError struct {
	Op    int
	Stage int // -1 for a DMA op
	Kind  string
	Err   error
}

func (e *LowerError) Error() string {
	if e.Stage < 0 {
		return fmt.Sprintf("ops[%d] (%s): %v", e.Op, e.Kind, e.Err)
	}
	return fmt.Sprintf("ops[%d].stages[%d] (%s): %v", e.Op, e.Stage, e.Kind, e.Err)
}

func (e *LowerError) Unwrap() error { return e.Err }

// Lower derives the engine configuration of every DMA op and chain stage of
// p that does not state one, and stores it in p (Op.DMA, Stage.Config).
// Configurations the program already states are kept as written: a
// hand-written kernel may carry its own, and the simulator runs what is
// there. The program must be valid (kernel.Program.Validate). Vector Engine
// stages beyond the ones engines/vector.go models report ErrNotModelled.
func Lower(spec *Spec, p *kernel.Program) error {
	if err := p.Validate(); err != nil {
		return err
	}
	for i, op := range p.Ops {
		var err error
		switch op.Kind {
		case kernel.OpChain:
			err = lowerChain(spec, p, op, i)
		default:
			if op.DMA == nil {
				op.DMA, err = lowerDMA(spec, p, op)
				if err == nil {
					err = gatherLoad(spec, p, op)
				}
			}
			if err == nil {
				err = checkDMAOp(spec, p, op)
			}
			if err == nil {
				err = checkGather(p, op)
			}
			if err != nil {
				err = &LowerError{Op: i, Stage: -1, Kind: string(op.Kind), Err: err}
			}
		}
		if err != nil {
			return err
		}
	}
	for i, op := range p.Handoff {
		var err error
		if op.DMA == nil {
			op.DMA, err = lowerDMA(spec, p, op)
		}
		if err == nil {
			err = checkDMAOp(spec, p, op)
		}
		if err != nil {
			return fmt.Errorf("handoff[%d] (%s): %w", i, op.Kind, err)
		}
	}
	return nil
}

// checkDMAOp checks op's DMA command against its tensors (CheckDMAOp).
func checkDMAOp(spec *Spec, p *kernel.Program, op *kernel.Op) error {
	src, _ := p.Tensor(op.Src)
	dst, _ := p.Tensor(op.Dst)
	side := func(t *kernel.Tensor) (DMASide, error) {
		s := DMASide{Name: t.Name, Media: kernel.MediaDM, Chip: t.Chip, Cluster: t.Cluster, Slice: t.Slice}
		// A tile view's extent is its own mapping's, from its address.
		n, err := t.DType.BytesFor(t.Element.Size())
		if err != nil {
			return s, err
		}
		s.Lo, s.Hi = t.Addr, t.Addr+int64(n)
		if t.Mem == kernel.HBM {
			s.Media = kernel.MediaHBM
		}
		return s, nil
	}
	if g := p.Gathered(src); g != nil {
		// A gathered load reads the table's rows (gatherLoad).
		if t, ok := p.Tensor(g.Table); ok {
			src = t
		}
	}
	s, err := side(src)
	if err != nil {
		return err
	}
	d, err := side(dst)
	if err != nil {
		return err
	}
	return CheckDMAOp(spec, op.DMA, DMAOp{Src: s, Dst: d, ElemBits: src.DType.SizeBits(), Chips: p.Chips})
}

// dmaTypes checks the element types of a DMA's two sides. A DMA moves
// bytes: the sides are of one type, or of one width with one side an
// integer type, the other's bits (the manual's top-k reads a bf16 score
// as its bits and writes bits "reinterpreted as bf16 type", 002 L8547,
// L8589; docs/spec-decisions.md "Top-k: the manual's branchless form").
func dmaTypes(src, dst *kernel.Tensor) error {
	if src.DType == dst.DType || src.DType.SizeBits() == dst.DType.SizeBits() && src.DType.IsInt() != dst.DType.IsInt() {
		return nil
	}
	return fmt.Errorf("a DMA moves bytes: %s %q to %s %q", src.DType, src.Name, dst.DType, dst.Name)
}

func dmaTensor(t *kernel.Tensor) DMATensor {
	d := DMATensor{Chip: t.Chip, Cluster: t.Cluster, Slice: t.Slice, Element: t.Element, Addr: int(t.Addr)}
	if t.Mem == kernel.HBM {
		d.Media = kernel.MediaHBM
	} else {
		d.Media = kernel.MediaDM
	}
	return d
}

// lowerDMA derives a DMA op's command. The stream's packet is the live
// digits of the DM element mapping (padding is neither read nor written).
// Like the manual's examples (002 L2544: the DMA Engines of a cluster work
// in parallel, one per DMN pair, 002 L2404), the work is spread over every
// DMN that holds a live slice of the DM side: the stream's cluster part
// takes the live cluster digits, its slice part the DM slice mapping's
// positions above a DMN's 32 slices (a slice's DMN is slice / 32,
// 002 L2867-2868), so that stream slice position k is DMN k and a padded
// position leaves its DMN out; the live slice digits below walk in time
// with slice_stride steps (002 L2637-2658). A DMN's bytes stay on its own
// DMA Engine and DMN: the DM side moves at most 128 B/cycle per DMN
// whichever engine issues the requests (002 L2603, L2884), so splitting a
// DMN's share over other engines would only add startups (002 L2467); a
// command reaches all eight engines when its slices do (the planner places
// them so, search/build.go). When the spread form is not legal the command
// runs on one DMA Engine with every cluster and slice digit in time.
func lowerDMA(spec *Spec, p *kernel.Program, op *kernel.Op) (*kernel.DMACommand, error) {
	src, _ := p.Tensor(op.Src)
	dst, _ := p.Tensor(op.Dst)
	if err := dmaTypes(src, dst); err != nil {
		return nil, err
	}
	if op.Index != "" && op.Kind == kernel.OpHBMToHBM {
		idx, _ := p.Tensor(op.Index)
		if op.Scatter {
			return DeriveScatter(spec, src, idx, dst)
		}
		return DeriveGather(spec, src, idx, dst)
	}
	if op.Kind == kernel.OpHBMToHBM {
		// A relayout between two HBM tensors (002 L2608-2636).
		if src.Chip.Size() != 1 || dst.Chip.Size() != 1 {
			return nil, fmt.Errorf("an HBM-to-HBM copy of %q into %q is derived on one chip", src.Name, dst.Name)
		}
		return DeriveRelayout(spec, p.Axes, src.DType, src.Element, dst.Element, int(src.Addr), int(dst.Addr))
	}
	if src.Mem == kernel.DM && dst.Mem == kernel.DM {
		if cmd, ok, err := lowerClusterExchange(spec, p, src, dst); ok {
			return cmd, err
		}
	}
	dm := dst
	if dm.Mem != kernel.DM {
		dm = src
	}
	packet := liveDigits(dm.Element)
	cluster, slice := liveDigits(dm.Cluster), liveDigits(dm.Slice)
	if packet == nil || cluster == nil || slice == nil {
		return nil, fmt.Errorf("the mappings of %q are not factorizable", dm.Name)
	}
	// A packet moves at most max_packet_bytes (002 L2428-2429, L2512): a
	// longer element run is split, its outer part walking in time.
	outer, packet, err := capPacket(spec, src.DType, packet)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", dm.Name, err)
	}
	req := DMARequest{Axes: p.Axes, DType: src.DType, Src: dmaTensor(src), Dst: dmaTensor(dst)}
	if spread, ok := spreadOverDMNs(spec, dm.Slice); ok {
		req.Stream = DMAStream{Cluster: cluster, Slice: spread.dmn, Time: mapping.Pair(spread.time, outer), Packet: packet}
		if cmd, err := DeriveDMA(spec, req); err == nil {
			return cmd, nil
		}
	}
	// Cluster digits stay in the stream's cluster part: a DMN's time never
	// leaves its cluster (002 L2487-2491).
	req.Stream = DMAStream{Cluster: cluster, Time: mapping.Pair(slice, outer), Packet: packet}
	return DeriveDMA(spec, req)
}

// lowerClusterExchange derives a DM-to-DM DMA between the clusters that
// moves the source's cluster digits into the destination's element and
// the destination's cluster digits out of the source's element (the
// cluster reduce's exchange, 002 L7382-7610; DMA between clusters, 002
// L2386-2389): the destination's element is the source's cluster digits,
// outermost, over the rest. A DMN's time and packet stay in one cluster on
// each side (DMA-R3, 002 L2487-2491), so the stream's cluster part is the
// source's cluster digits (each DMA Engine reads its own cluster's DM,
// the source DMN's engine, 002 L2548) and its DMN part the destination's
// cluster digits over the source slices' DMN spread, the spread's inner
// digits walking in time with the slices inside a DMN. ok is false when
// the tensors are not of that form (the ordinary derivation applies).
func lowerClusterExchange(spec *Spec, p *kernel.Program, src, dst *kernel.Tensor) (cmd *kernel.DMACommand, ok bool, err error) {
	if same, _ := mapping.Equiv(src.Cluster, dst.Cluster); same {
		return nil, false, nil
	}
	from, to := liveDigits(src.Cluster), liveDigits(dst.Cluster)
	if from == nil || to == nil || from.Size() < 2 || to.Size() < 2 || dst.Element.Size()%from.Size() != 0 {
		return nil, false, nil
	}
	outer, rest, err := mapping.SplitAt(dst.Element, dst.Element.Size()/from.Size())
	if err != nil {
		return nil, false, nil
	}
	if eq, _ := mapping.Equiv(outer, from); !eq {
		return nil, false, nil
	}
	packet := liveDigits(rest)
	slice := liveDigits(src.Slice)
	if packet == nil || slice == nil {
		return nil, true, fmt.Errorf("the mappings of %q are not factorizable", src.Name)
	}
	time, packet, err := capPacket(spec, src.DType, packet)
	if err != nil {
		return nil, true, fmt.Errorf("%q: %w", dst.Name, err)
	}
	req := DMARequest{Axes: p.Axes, DType: src.DType, Src: dmaTensor(src), Dst: dmaTensor(dst)}
	dmns := spec.Cluster.DMNs.Value
	if spread, ok := spreadOverDMNs(spec, src.Slice); ok && dmns%to.Size() == 0 {
		// The destination clusters take the outer DMN digits.
		n := min(spread.dmn.Size(), dmns/to.Size())
		if dmn, inner, err := mapping.SplitAt(spread.dmn, spread.dmn.Size()/n); err == nil {
			req.Stream = DMAStream{Cluster: from, Slice: mapping.Pair(to, dmn), Time: mapping.Pair(inner, spread.time, time), Packet: packet}
			if cmd, err := DeriveDMA(spec, req); err == nil {
				return cmd, true, nil
			}
		}
	}
	req.Stream = DMAStream{Cluster: from, Slice: to, Time: mapping.Pair(slice, time), Packet: packet}
	cmd, err = DeriveDMA(spec, req)
	return cmd, true, err
}

// capPacket splits a packet mapping whose bytes exceed the DMA's largest
// packet (max_packet_bytes, 002 L2428-2429, L2512) into an outer part (to
// walk in time) and an inner part of n elements that fits; a packet that
// fits comes back whole with the identity outside.
//
// n is the largest count that fits and falls on a digit boundary of the
// packet's factorized form: the digits inner to the cut whole, and n over
// their product dividing the digit it cuts (mapping.SplitAt's canonical
// case). Any other split leaves the outer part without a factorized form,
// and the sequencer derives entries only from factorizable terms (002
// L1660-1683, SEQ-R6): `[BLK, F]` with F = 768 in bf16 splits at 1536
// elements (`[BLK % 2, F]`), not at 2048, the largest divisor that fits.
// The candidates are the products of whole inner digits times a divisor
// of the next digit, at most the elements that fit max_packet_bytes: no
// split is tried, the extents decide.
func capPacket(spec *Spec, dt dtype.DType, packet *mapping.Expr) (outer, inner *mapping.Expr, err error) {
	max := spec.DMA.MaxPacketBytes.Value
	size := packet.Size()
	if b, err := dt.BytesFor(size); err == nil && b <= max {
		return mapping.Identity(), packet, nil
	}
	bits := dt.SizeBits()
	if bits <= 0 {
		return nil, nil, fmt.Errorf("cannot split the packet %s: element type %s has no size", packet, dt)
	}
	fs, err := mapping.Factorize(packet)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot split the packet %s: %w", packet, err)
	}
	// No more elements than fit max bytes (an element wider than a packet
	// leaves one element a packet, which DeriveDMA rejects).
	limit := max * 8 / bits
	n, below := 1, 1 // the best count so far; the product of the whole digits
	for _, f := range fs {
		if f.Kind != mapping.FactorTerm {
			break // a padding or broadcast level: cut only inside the digits below it
		}
		// The largest divisor d of this digit with below·d elements within
		// the limit, in whole bytes.
		for d := min(f.Extent, limit/below); d > 1; d-- {
			if f.Extent%d != 0 {
				continue
			}
			if _, err := dt.BytesFor(below * d); err == nil {
				n = below * d
				break
			}
		}
		if below*f.Extent > limit {
			break
		}
		below *= f.Extent
	}
	outer, inner, err = mapping.SplitAt(packet, n)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot split the packet %s at %d elements: %w", packet, n, err)
	}
	return outer, inner, nil
}

// dmnSplit is a slice mapping split into the part that picks a DMN and
// the live digits that walk the DMN's slices.
type dmnSplit struct{ dmn, time *mapping.Expr }

// spreadOverDMNs splits a DM tensor's slice mapping at a DMN's slices
// (slices_per_dmn = 32, 002 L2867-2868): the outer part, one position per
// DMN of the cluster, padding where a DMN holds no live slice
// (`m![A / 2, A % 2 # 32]` → `A / 2` and `A % 2`; `m![A # 256]` with A = 16
// → `1 # 8` and `A`: DMN 0 alone), and the live digits of the inner part,
// which a DMN walks in time. It needs a slice mapping over whole DMNs, at
// most the cluster's, with a factorized split, and a live slice outside
// DMN 0 (otherwise the single-DMN form is the same command).
func spreadOverDMNs(spec *Spec, full *mapping.Expr) (dmnSplit, bool) {
	per := spec.Cluster.SlicesPerDMN.Value
	n := full.Size()
	if per <= 0 || n%per != 0 || n > spec.Cluster.Slices.Value || n == per {
		return dmnSplit{}, false
	}
	outer, inner, err := mapping.SplitAt(full, per)
	if err != nil {
		return dmnSplit{}, false
	}
	time := liveDigits(inner)
	if time == nil || liveDigits(outer) == nil || liveDigits(outer).Size() == 1 {
		return dmnSplit{}, false
	}
	return dmnSplit{dmn: outer, time: time}, true
}

// liveDigits is e without its padding and broadcast factors: the digits
// that name data (`1 # 2, A / 8 # 256` → `A / 8`), or nil when e has no
// factorized form.
func liveDigits(e *mapping.Expr) *mapping.Expr {
	fs, err := mapping.FactorizeShared(e)
	if err != nil {
		return nil
	}
	live := fs[:0:0]
	for _, f := range fs {
		if f.Kind == mapping.FactorTerm {
			live = append(live, f)
		}
	}
	return live.Expr()
}

func lowerChain(spec *Spec, p *kernel.Program, op *kernel.Op, i int) error {
	derived := deriveChain(spec, p, op)
	st := chainState{dual: chainDual(spec, p, op.Stages)}
	for k, stage := range op.Stages {
		stated := stage.Config != nil
		if err := lowerStage(spec, p, op.Context, &st, stage); err != nil {
			return &LowerError{Op: i, Stage: k, Kind: string(stage.Kind), Err: err}
		}
		if stated && derived != nil {
			if err := sameDerived(stage.Config, derived[k]); err != nil {
				return &LowerError{Op: i, Stage: k, Kind: string(stage.Kind), Err: err}
			}
		}
		st.prev = stage.Kind
	}
	return nil
}

// deriveChain derives every stage configuration of a chain that states
// some, on a copy: the configurations CHAIN-R6 compares the stated ones
// with. It returns nil when the chain states none, or when the derivation
// fails (the stated configurations are then checked only by the rules of
// their engines).
func deriveChain(spec *Spec, p *kernel.Program, op *kernel.Op) []*kernel.StageConfig {
	stated := false
	cp := make([]*kernel.Stage, len(op.Stages))
	for k, s := range op.Stages {
		if s == nil {
			return nil
		}
		stated = stated || s.Config != nil
		c := *s
		c.Config = nil
		cp[k] = &c
	}
	if !stated {
		return nil
	}
	st := chainState{dual: chainDual(spec, p, cp)}
	out := make([]*kernel.StageConfig, len(cp))
	for k, s := range cp {
		if err := lowerStage(spec, p, op.Context, &st, s); err != nil {
			return nil
		}
		st.prev = s.Kind
		out[k] = s.Config
	}
	return out
}

// statedFree are the JSON keys of the configuration fields a stated
// configuration may choose (CHAIN-R6): the sequencers' loops (but not the
// number of positions they walk, configTree) and bases, the
// fields that follow from them (which their engines' rules check), the
// accumulator's loops (RED-R16) and the switch's snoop bitmaps (its
// routing table, 002 L3086-3088).
var statedFree = map[string]bool{
	"sequencer": true, "entries": true, "base": true, "loops": true, "bitmaps": true,
	"steps": true, "contiguous_run": true, "contiguous_sram_access_size": true,
	"fetch_size": true, "fetch_elems": true, "fetches_per_packet": true,
	"commit_size": true, "writes_per_step": true,
}

// sameDerived checks CHAIN-R6: the stated configuration equals the derived
// one outside the fields statedFree names.
func sameDerived(stated, derived *kernel.StageConfig) error {
	if stated == nil && derived == nil {
		return nil
	}
	a, b := configTree(stated), configTree(derived)
	if path, ok := firstDiff(a, b, ""); !ok {
		return ruleChainStated.Violate("the stated configuration's %s differs from the derived one", strings.TrimPrefix(path, "."))
	}
	return nil
}

// configTree is the JSON tree of a configuration without the free fields.
func configTree(c *kernel.StageConfig) any {
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var t any
	if json.Unmarshal(b, &t) != nil {
		return nil
	}
	var strip func(x any)
	strip = func(x any) {
		switch v := x.(type) {
		case map[string]any:
			for k, e := range v {
				if l, ok := e.([]any); ok && (k == "entries" || k == "loops") {
					// A sequencer's loops are free, the positions they
					// walk are not.
					v[k] = positions(l)
					continue
				}
				if statedFree[k] {
					delete(v, k)
					continue
				}
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(t)
	return t
}

// positions is the product of the sizes of a JSON list of loops.
func positions(l []any) float64 {
	n := 1.0
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			if s, ok := m["size"].(float64); ok {
				n *= s
			}
		}
	}
	return n
}

// firstDiff returns the path of the first difference of two JSON trees,
// and whether they are equal.
func firstDiff(a, b any, path string) (string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path, false
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := firstDiff(x[k], y[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for i := range x {
			if p, ok := firstDiff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	if a != b {
		return path, false
	}
	return "", true
}

// chainDual reports whether a chain runs in dual channel mode: its collect
// packet is one 64-byte dual-channel flit (002 L1997, L2127;
// docs/spec-decisions.md "Hello GEMV's 64-byte packet"). The channel is the
// chain's: a switch before that collect combines the two 32-byte Switch
// Engines into 64-byte flits as well (002 L2125-2127, L2140;
// docs/spec-decisions.md "Switch in a dual channel chain").
func chainDual(spec *Spec, p *kernel.Program, stages []*kernel.Stage) bool {
	var dt dtype.DType
	for _, stage := range stages {
		if stage == nil {
			return false
		}
		switch stage.Kind {
		case kernel.StBegin:
			if t, ok := p.Tensor(stage.Tensor); ok {
				dt = t.DType
			}
		case kernel.StFetch:
			if stage.DType != 0 {
				dt = stage.DType
			}
		case kernel.StCollect:
			if stage.Packet == nil {
				return false
			}
			pb, err := packetBytes(dt, stage.Packet)
			return err == nil && pb == spec.Stream.DualChannelFlitBytes.Value
		}
	}
	return false
}

// sameSpatial checks that a tensor has the stream's Chip, Cluster and Slice
// mappings.
func sameSpatial(r *Rule, st *chainState, t *kernel.Tensor) error {
	for _, d := range []struct {
		name      string
		have, got *mapping.Expr
	}{{"Chip", st.chip, t.Chip}, {"Cluster", st.cluster, t.Cluster}, {"Slice", st.slice, t.Slice}} {
		if ok, _ := mapping.Equiv(d.have, d.got); !ok {
			return r.Violate("tensor %q has %s m![%s], the stream has m![%s]", t.Name, d.name, d.got, d.have)
		}
	}
	return nil
}

// vectorStage lists the stages that run inside a Vector Engine pass.
var vectorStage = func() map[kernel.StageKind]bool {
	m := map[kernel.StageKind]bool{kernel.StVectorFinal: true, kernel.StVectorInterSlice: true}
	for _, k := range kernel.VectorStageKinds {
		m[k] = true
	}
	return m
}()

func lowerStage(spec *Spec, p *kernel.Program, ctx kernel.Context, st *chainState, stage *kernel.Stage) error {
	tensor, _ := p.Tensor(stage.Tensor)
	switch {
	case st.ve != nil && !vectorStage[stage.Kind]:
		return ruleVEExit.Violate("%s inside a Vector Engine pass: vector_final first", stage.Kind)
	case st.ve == nil && vectorStage[stage.Kind]:
		return ruleVEEntry.Violate("%s outside a Vector Engine pass: vector_init first", stage.Kind)
	}
	if stage.Kind == kernel.StVectorInit || vectorStage[stage.Kind] || stage.Kind == kernel.StToVRF {
		return lowerVectorStage(spec, p, st, stage, tensor)
	}
	keep := stage.Config != nil
	if !keep {
		stage.Config = &kernel.StageConfig{}
	}
	cfg := stage.Config
	switch stage.Kind {
	case kernel.StBegin:
		*st = chainState{dt: tensor.DType, chip: tensor.Chip, cluster: tensor.Cluster, slice: tensor.Slice, element: tensor.Element, dual: st.dual}
		stage.Config = nil // begin configures nothing
		var err error
		st.inter, err = beginInterleave(p, stage, tensor)
		return err

	case kernel.StFetch:
		out := stage.DType
		if out == 0 {
			out = st.dt
		}
		if !keep {
			c, err := ConfigFetch(spec, FetchRequest{
				InType: st.dt, OutType: out, Element: st.element, Time: stage.Time, Packet: stage.Packet,
				Context: ctx, ClusterSize: st.cluster.Size(), SliceSize: st.slice.Size(), Interleave: st.inter,
			})
			if err != nil {
				return err
			}
			cfg.Fetch = c
		} else if cfg.Fetch == nil {
			return fmt.Errorf("the stated configuration has no fetch part")
		}
		if err := CheckFetchConfig(spec, cfg.Fetch, FetchStated{Context: ctx, InType: st.dt, OutType: out, Time: stage.Time, Packet: stage.Packet}); err != nil {
			return err
		}
		st.dt, st.time, st.packet = out, stage.Time, stage.Packet
		return nil

	case kernel.StSwitch:
		req := SwitchRequest{Axes: p.Axes, DType: st.dt, InSlice: st.slice, InTime: st.time, InPacket: st.packet,
			OutSlice: stage.Slice, OutTime: stage.Time, DualChannel: st.dual}
		if stage.Param != "" {
			sc, err := kernel.ParseSwitchConfig(stage.Param)
			if err != nil {
				return err
			}
			req.Config = &sc
		}
		plan, err := DeriveSwitch(spec, req)
		if err != nil {
			return err
		}
		if !keep {
			cfg.Switch = &plan.Switch
		}
		st.slice, st.time = plan.OutSlice, plan.OutTime
		return nil

	case kernel.StCollect:
		req := CollectRequest{DType: st.dt, Time: st.time, Packet: st.packet, OutTime: stage.Time, OutPacket: stage.Packet}
		// A 64-byte collect packet is one dual-channel flit (002 L1997,
		// L2127; docs/spec-decisions.md "Hello GEMV's 64-byte packet").
		req.DualChannel = st.dual
		plan, err := DeriveCollect(spec, req)
		if err != nil {
			return err
		}
		if !keep {
			cfg.Collect = &plan.Collect
		} else if cfg.Collect == nil || *cfg.Collect != plan.Collect {
			return ruleColStated.Violate("stated %v, the stream's type and mappings give %s", cfg.Collect, &plan.Collect)
		}
		st.time, st.packet = stage.Time, stage.Packet
		return nil

	case kernel.StToTRF:
		if err := sameSpatial(ruleChainTRF, st, tensor); err != nil {
			return err
		}
		if st.prev != kernel.StCollect {
			return ruleChainCollect.Violate("to_trf after %s", st.prev)
		}
		if tensor.DType != st.dt {
			return ruleChainTRFType.Violate("TRF tensor %q is %s, the stream is %s", tensor.Name, tensor.DType, st.dt)
		}
		c, err := DeriveToTRF(spec, ToTRFInput{DType: st.dt, Time: st.time, Packet: st.packet,
			Row: tensor.Row, Element: tensor.Element, Address: tensor.TrfAddress})
		if err != nil {
			return err
		}
		if !keep {
			cfg.ToTRF = &c
		} else if cfg.ToTRF == nil || *cfg.ToTRF != c {
			return ruleTRFStated.Violate("stated %v, the stream and TRF tensor %q give %s", cfg.ToTRF, tensor.Name, c)
		}
		return nil

	case kernel.StAlign:
		if err := sameSpatial(ruleChainTRF, st, tensor); err != nil {
			return err
		}
		if st.prev != kernel.StCollect {
			return ruleChainCollect.Violate("align after %s", st.prev)
		}
		if tensor.DType != st.dt {
			return ruleChainTRFType.Violate("TRF tensor %q is %s, the stream is %s", tensor.Name, tensor.DType, st.dt)
		}
		if !keep {
			c, err := DeriveAlign(spec, AlignInput{DType: st.dt, Time: st.time, Packet: st.packet,
				Row: tensor.Row, Element: tensor.Element, OutTime: stage.Time, OutPacket: stage.Packet})
			if err != nil {
				return err
			}
			cfg.Align = &c
		} else if cfg.Align == nil {
			return fmt.Errorf("the stated configuration has no align part")
		}
		if err := CheckAlignConfig(spec, cfg.Align, AlignStated{InSteps: st.time.Size(), Rows: tensor.Row.Size(), OutTime: stage.Time}); err != nil {
			return err
		}
		st.row, st.time, st.packet = tensor.Row, stage.Time, stage.Packet
		st.align = cfg.Align
		return nil

	case kernel.StContract:
		c, err := DeriveContract(spec, ContractInput{DType: st.dt, Op: kernel.ReduceOp(stage.Param), Row: st.row,
			Packet: st.packet, OutPacket: stage.Packet})
		if err != nil {
			return err
		}
		if !keep {
			cfg.Contract = &c
		} else if cfg.Contract == nil || *cfg.Contract != c {
			return ruleRedStated.Violate("stated %v, the stream's type and mappings give %s", cfg.Contract, c)
		}
		if st.align != nil && st.align.StreamAdapter.Rows != c.Rows {
			return ruleCEAlignment.Violate("the Aligner broadcasts to %d Rows, the contraction has %d", st.align.StreamAdapter.Rows, c.Rows)
		}
		st.contract = &c
		st.packet, st.dt = stage.Packet, c.Out
		return nil

	case kernel.StAccumulate:
		if st.contract == nil {
			return fmt.Errorf("accumulate needs a contract before it")
		}
		kind, err := kernel.ParseAccumulationKind(stage.Param)
		if err != nil {
			return err
		}
		c, err := DeriveAccumulate(spec, AccumulateInput{Contract: *st.contract, Row: st.row, Time: st.time,
			Packet: st.packet, OutTime: stage.Time, OutPacket: stage.Packet, Kind: kind})
		if err != nil {
			return err
		}
		if !keep {
			cfg.Accumulate = &c
		} else if cfg.Accumulate == nil {
			return fmt.Errorf("the stated configuration has no accumulate part")
		}
		if err := CheckAccumulateConfig(cfg.Accumulate, c); err != nil {
			return err
		}
		st.time, st.packet = stage.Time, stage.Packet
		return nil

	case kernel.StCast:
		c, err := DeriveCast(spec, CastInput{From: st.dt, To: stage.DType, Packet: st.packet, OutPacket: stage.Packet})
		if err != nil {
			return err
		}
		if !keep {
			cfg.Cast = &c
		} else if cfg.Cast == nil || *cfg.Cast != c {
			return ruleCastStated.Violate("stated %v, the stream's type and mappings give %s", cfg.Cast, c)
		}
		st.dt, st.packet = stage.DType, stage.Packet
		return nil

	case kernel.StTranspose:
		c, err := DeriveTranspose(spec, TransposeInput{DType: st.dt, Time: st.time, Packet: st.packet,
			OutTime: stage.Time, OutPacket: stage.Packet})
		if err != nil {
			return err
		}
		if !keep {
			cfg.Transpose = &c
		} else if cfg.Transpose == nil || *cfg.Transpose != c {
			return ruleTrStated.Violate("stated %v, the stream's type and mappings give %v", cfg.Transpose, c)
		}
		st.time, st.packet = stage.Time, stage.Packet
		return nil

	case kernel.StCommit:
		if err := sameSpatial(ruleChainCommit, st, tensor); err != nil {
			return err
		}
		if tensor.DType != st.dt {
			return ruleChainCommit.Violate("tensor %q is %s, the stream is %s", tensor.Name, tensor.DType, st.dt)
		}
		if !keep {
			c, err := ConfigCommit(spec, CommitRequest{DType: st.dt, Time: st.time, Packet: st.packet,
				Element: tensor.Element, Context: ctx, FromFetch: st.prev == kernel.StFetch, Slice: tensor.Slice})
			if err != nil {
				return err
			}
			cfg.Commit = c
		} else if cfg.Commit == nil {
			return fmt.Errorf("the stated configuration has no commit part")
		}
		return CheckCommitConfig(spec, cfg.Commit, CommitStated{Context: ctx, DType: st.dt, Time: st.time, Slice: tensor.Slice})
	}
	stage.Config = nil
	return fmt.Errorf("unknown stage kind %q", stage.Kind)
}

// lowerVectorStage lowers the Vector Engine's stages and to_vrf
// (engines/vector.go), keeping a configuration the stage states but still
// checking the pass's structure (entry, stage order, ALUs).
func lowerVectorStage(spec *Spec, p *kernel.Program, st *chainState, stage *kernel.Stage, tensor *kernel.Tensor) error {
	keep := stage.Config != nil
	if !keep {
		stage.Config = &kernel.StageConfig{}
	}
	cfg := stage.Config
	switch stage.Kind {
	case kernel.StVectorInit:
		switch st.prev {
		case kernel.StCollect, kernel.StContract, kernel.StAccumulate:
		default:
			return ruleVEEntry.Violate("vector_init after %s; it takes the Collect or Contraction Engine's output", st.prev)
		}
		c, err := DeriveVectorInit(spec, VectorInitInput{DType: st.dt, Time: st.time, Packet: st.packet})
		if err != nil {
			return err
		}
		st.ve = &vePass{stage: veStageInit, way: c.Lanes, input: VectorStream{DType: st.dt, Slice: st.slice, Time: st.time, Packet: st.packet}}
		if !keep {
			cfg.VectorInit = &c
			st.ve.init = cfg.VectorInit
		}
		return nil

	case kernel.StVectorFinal:
		if err := st.ve.enter(veStageOutput, stage.Kind, st.prev); err != nil {
			return err
		}
		if !keep {
			cfg.VectorFinal = &kernel.VectorFinalConfig{DType: st.dt, Lanes: st.packet.Size(), Packets: st.time.Size()}
		}
		st.ve = nil
		return nil

	case kernel.StVectorInterSlice:
		return lowerInterSlice(spec, st, stage)

	case kernel.StToVRF:
		if err := sameSpatial(ruleVRFSlices, st, tensor); err != nil {
			return err
		}
		if st.prev != kernel.StCollect {
			return ruleChainCollect.Violate("to_vrf after %s", st.prev)
		}
		if tensor.DType != st.dt {
			return ruleVRFSlices.Violate("tensor %q is %s, the stream is %s", tensor.Name, tensor.DType, st.dt)
		}
		c, err := DeriveToVRF(spec, ToVRFInput{DType: st.dt, Time: st.time, Packet: st.packet, Element: tensor.Element, Base: int(tensor.Addr)})
		if err != nil {
			return err
		}
		if !keep {
			cfg.ToVRF = &c
		} else if cfg.ToVRF == nil || int64(cfg.ToVRF.Base) != tensor.Addr {
			return ruleVRFAddr.Violate("stated %v; VRF tensor %q is at address %d", cfg.ToVRF, tensor.Name, tensor.Addr)
		}
		return nil
	}
	if vectorStage[stage.Kind] {
		return lowerVectorIntra(spec, p.Axes, st, stage, tensor, cfg, keep)
	}
	return fmt.Errorf("unknown stage kind %q", stage.Kind)
}

// packetBytes is the size in bytes of a packet of mapping e in type dt.
func packetBytes(dt dtype.DType, e *mapping.Expr) (int, error) {
	return dt.BytesFor(e.Size())
}
