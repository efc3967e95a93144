package search

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/workload"
)

// subChain is the stationary operand's TRF load (002 L341-347, L503-508):
// begin → fetch → collect → to_trf.
type subChain struct {
	dt                         dtype.DType
	fetchTime, fetchPacket     *mapping.Expr
	collectTime, collectPacket *mapping.Expr
	// element is the TRF tensor's Element: the collect stream without its
	// Row part (002 L4053-4055), i.e. the stationary operand's time digits
	// in its DM element's order (trfOrder), then its packet.
	element *mapping.Expr
}

func (b *build) subChain() (*subChain, error) {
	t, pk := b.absorb(b.w, b.trfOrder(), b.wPacket())
	// Row is the outermost part of the collect stream (002 L4053-4055).
	ft := b.pair(b.rowMapping(), t)
	ct, cp, err := b.collect(ft, pk)
	if err != nil {
		return nil, err
	}
	et, ep, err := b.collect(t, pk)
	if err != nil {
		return nil, err
	}
	el := b.pair(et, ep)
	return &subChain{dt: b.p.In[b.w].DType, fetchTime: ft, fetchPacket: pk, collectTime: ct, collectPacket: cp, element: el}, nil
}

func (s *subChain) stages(dm, trf string) []*kernel.Stage {
	return []*kernel.Stage{
		{Kind: kernel.StBegin, Tensor: dm},
		{Kind: kernel.StFetch, DType: s.dt, Time: s.fetchTime, Packet: s.fetchPacket},
		{Kind: kernel.StCollect, Time: s.collectTime, Packet: s.collectPacket},
		{Kind: kernel.StToTRF, Tensor: trf},
	}
}

// mainChain is the streamed operand's contraction (002 L350-360,
// L512-521): begin → fetch → collect → align → contract → accumulate →
// [vector_init → vector_inter_slice_reduce → vector_final] → [cast] →
// commit.
type mainChain struct {
	dt, out                    dtype.DType
	fetchTime, fetchPacket     *mapping.Expr
	collectTime, collectPacket *mapping.Expr
	alignTime, alignPacket     *mapping.Expr
	// switchSlice and switchTime are the switch's output mappings, and
	// switchParam its SwitchConfig, for a switched candidate (nil
	// otherwise).
	switchSlice, switchTime *mapping.Expr
	switchParam             string
	acc                     *accumulation
	kind                    kernel.AccumulationKind
	// vector is the Vector Engine's pass after accumulate: the
	// Inter-Slice Block's reduction of a split candidate (SplitK), nil
	// otherwise.
	vector []*kernel.Stage
}

func (b *build) mainChain() (*mainChain, error) {
	c := b.c
	m := &mainChain{dt: b.p.In[b.x].DType, out: b.p.Out.DType, kind: c.Acc.Kind()}
	xo := b.xOrder()
	pk := b.packet()
	var err error
	if c.Switch {
		return b.switchedChain(m, xo, pk)
	}
	switch c.Mode {
	case Single:
		m.fetchTime, m.fetchPacket = b.absorb(b.x, xo, pk)
		if m.collectTime, m.collectPacket, err = b.collect(m.fetchTime, m.fetchPacket); err != nil {
			return nil, err
		}
		m.alignPacket = pk
	case Dual:
		// One 64-byte dual-channel flit per packet (002 L1997, L2127, L3928).
		m.fetchTime, m.fetchPacket = b.pair(b.digits(xo)...), pk
		m.collectTime, m.collectPacket = m.fetchTime, pk
		m.alignPacket = pk
	case Half:
		// One 32-byte flit, zero-padded to mac_width (002 L3925-3927).
		m.fetchTime, m.fetchPacket = b.pair(b.digits(xo)...), pk
		m.collectTime, m.collectPacket = m.fetchTime, pk
		if m.alignPacket, err = padTo(pk, b.s.PacketElems(Single)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("search: packet mode %d", c.Mode)
	}
	// The computation Time is every time digit in order; the stationary
	// operand's free axes are innermost when the Stream Adapter broadcasts
	// them (002 L3937-3946).
	m.alignTime = b.pair(b.digits(c.TimeOrder())...)
	if m.acc, err = b.accumulate(); err != nil {
		return nil, err
	}
	return m, nil
}

// switchedChain is the main chain of a switched candidate: each slice
// fetches its share of the streamed operand (its time digits without the
// ring's block, the packet whole), the Broadcast01 switch streams the
// ring's shares to every slice of the ring with the block back in its
// place in Time (slice1 = ring, slice0 = 1, time0 the positions inner to
// the block, 002 L3150-3157, L389-399), and
// the collect cuts the packet into flits (one 64-byte flit in dual
// channel mode, 002 L2127).
func (b *build) switchedChain(m *mainChain, xo []int, pk *mapping.Expr) (*mainChain, error) {
	var kept []*mapping.Expr
	for _, a := range xo {
		kept = append(kept, b.keptDigit(a))
	}
	m.fetchTime, m.fetchPacket = b.pair(kept...), pk
	full := b.pair(b.digits(xo)...)
	slice, err := b.slice()
	if err != nil {
		return nil, err
	}
	m.switchSlice, m.switchTime = slice, full
	m.switchParam = kernel.SwitchConfig{Topology: kernel.SwitchBroadcast01, Slice1: b.s.Ring(b.c), Slice0: 1, Time0: b.time0}.Variant()
	switch b.c.Mode {
	case Single:
		if m.collectTime, m.collectPacket, err = b.collect(full, pk); err != nil {
			return nil, err
		}
		m.alignPacket = pk
	case Dual:
		m.collectTime, m.collectPacket, m.alignPacket = full, pk, pk
	case Half:
		m.collectTime, m.collectPacket = full, pk
		if m.alignPacket, err = padTo(pk, b.s.PacketElems(Single)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("search: packet mode %d", b.c.Mode)
	}
	m.alignTime = b.pair(b.digits(b.c.TimeOrder())...)
	if m.acc, err = b.accumulate(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *mainChain) stages(dm, trf, out string) []*kernel.Stage {
	return m.stagesTo(dm, trf, out, true)
}

// stagesTo is stages; without cast, the chain commits the accumulator's
// type (a K chunk's partial sums, TileK).
func (m *mainChain) stagesTo(dm, trf, out string, cast bool) []*kernel.Stage {
	st := []*kernel.Stage{
		{Kind: kernel.StBegin, Tensor: dm},
		{Kind: kernel.StFetch, DType: m.dt, Time: m.fetchTime, Packet: m.fetchPacket},
	}
	if m.switchSlice != nil {
		st = append(st, &kernel.Stage{Kind: kernel.StSwitch, Slice: m.switchSlice, Time: m.switchTime, Param: m.switchParam})
	}
	st = append(st, []*kernel.Stage{
		{Kind: kernel.StCollect, Time: m.collectTime, Packet: m.collectPacket},
		{Kind: kernel.StAlign, Tensor: trf, Time: m.alignTime, Packet: m.alignPacket},
		{Kind: kernel.StContract, Packet: m.acc.contract},
		{Kind: kernel.StAccumulate, Time: m.acc.time, Packet: m.acc.packet, Param: string(m.kind)},
	}...)
	st = append(st, m.vector...)
	if cast && m.acc.cast != nil {
		st = append(st, &kernel.Stage{Kind: kernel.StCast, DType: m.out, Packet: m.acc.cast})
	}
	return append(st, &kernel.Stage{Kind: kernel.StCommit, Tensor: out})
}

// subFetchKey identifies a sub-context fetch request: the DM Element it
// reads and the stream it produces (the other fields of the request are
// the space's: types, context, cluster and slice sizes).
type subFetchKey struct{ element, time, packet string }

// build builds c's program as Space.Build does, but first derives the
// configuration of the stationary operand's TRF-load fetch alone (memoized
// by its request): a fetch that breaks a rule (most often FE-R5, a run
// too short for the sub context's 8-byte fetches, 002 L1757-1761) makes
// the candidate illegal before the rest of its program is built and
// lowered. The verdict is the lowering's: the same request reaches the
// same engines.ConfigFetch there.
func (e *evaluator) build(c *Candidate) (*kernel.Program, error) {
	b, err := e.s.newBuild(c)
	if err != nil {
		return nil, err
	}
	sc, err := b.subChain()
	if err != nil {
		return nil, err
	}
	el := b.wElement()
	k := subFetchKey{el.Text(), sc.fetchTime.Text(), sc.fetchPacket.Text()}
	ferr, ok := e.subFetch[k]
	if !ok {
		_, ferr = engines.ConfigFetch(e.s.Spec, engines.FetchRequest{
			InType: sc.dt, OutType: sc.dt, Element: el, Time: sc.fetchTime, Packet: sc.fetchPacket,
			Context: kernel.CtxSub, ClusterSize: e.s.Clusters(), SliceSize: e.s.Slices(),
		})
		if ferr != nil {
			ferr = fmt.Errorf("the stationary operand's TRF load (sub context): %w", ferr)
		}
		if e.subFetch == nil || len(e.subFetch) >= maxMemoEntries {
			e.subFetch = map[subFetchKey]error{}
		}
		e.subFetch[k] = ferr
	}
	if ferr != nil {
		return nil, ferr
	}
	return b.program()
}

// splitReduce is the split reduce of a K-chunked candidate (TileK,
// 002 L7151-7177): begin_interleaved over the new chunk's partial sums
// and the running sum (002 L1843-1867), whose fetch Time holds the
// interleave axis innermost; the pair's two groups unzipped
// (vector_intra_slice_unzip, 002 L5154-5165) and added by the Clip
// cluster's Add (f32) or AddFxp (i32) in pair mode (vector_clip_zip,
// 002 L4963, L4972, L5178; the Way8 stage takes the 8-lane packet whole,
// as the manual's pair example adds i32, 002 L5176-5178); the last pass
// casts to the output type (002 L6782) and commits the output tile.
type splitReduce struct {
	acc, out dtype.DType
	// axis is the interleave axis (a name the program declares, size 2);
	// time the partial-sum tensor's element without its packet, packet
	// the packet (the accumulator's output packet); cast the cast's packet
	// (nil when the output is the accumulator's type).
	axis         string
	time, packet *mapping.Expr
	cast         *mapping.Expr
	// group, when set, is the Time digit of axis that holds the two
	// partial sums in one tensor (a cluster reduce's contracted cluster
	// digit, clusterReduce): the pass fetches that tensor alone. Unset,
	// the group is the interleave axis of size 2.
	group *mapping.Expr
}

// stages is the pass over first and second interleaved (or over first
// alone, whose group digit holds both partial sums, when second is "").
func (r *splitReduce) stages(first, second, out string, last bool) []*kernel.Stage {
	i := r.group
	begin := &kernel.Stage{Kind: kernel.StBegin, Tensor: first}
	if second != "" {
		i = mapping.Sym(r.axis, 2)
		begin.Param = kernel.BeginInterleave{Axis: r.axis, Tensor: second}.String()
	}
	ft := mapping.Pair(r.time, i)
	zip := "Add"
	if r.acc != dtype.F32 {
		zip = "AddFxp"
	}
	st := []*kernel.Stage{
		begin,
		{Kind: kernel.StFetch, DType: r.acc, Time: ft, Packet: r.packet},
		{Kind: kernel.StCollect, Time: ft, Packet: r.packet},
		{Kind: kernel.StVectorInit},
		{Kind: kernel.StVectorUnzip, Time: r.time, Axis: r.axis, Param: mapping.Pair(r.time, mapping.Broadcast(1).Pad(2, mapping.Top)).String()},
		{Kind: kernel.StVectorClipZip, Param: zip},
		{Kind: kernel.StVectorFinal},
	}
	if last && r.cast != nil {
		st = append(st, &kernel.Stage{Kind: kernel.StCast, DType: r.out, Packet: r.cast})
	}
	return append(st, &kernel.Stage{Kind: kernel.StCommit, Tensor: out})
}

// epilogue returns the main chain's Vector Engine pass of a contraction
// with an epilogue (workload.Fuse, issue 15 §2): the accumulator's output
// stream (time, packet: 8 f32 lanes, Way8) enters the intra-slice block,
// which splits it to Way4 for the Float cluster (002 L4842-4863,
// L4878-4899), does the fused ops in order and concatenates the lanes back
// (002 L4919-4937) before the cast and the commit; ref is the reference's
// epilogue over acc (kernel.EpilogueInput). An op kernel's stream does the
// same (opspace.go stream, tail).
func (b *build) epilogue(time, packet *mapping.Expr) (st []*kernel.Stage, ref string, err error) {
	ops := b.p.Epilogue
	if !b.p.EpilogueVector() {
		// A cast alone is the chain's own cast of the accumulator to the
		// output type (002 L306): no Vector Engine pass.
		return nil, kernel.EpilogueInput, nil
	}
	if packet.Size()%4 != 0 {
		return nil, "", fmt.Errorf("search: epilogue: the accumulator's packet %s is not whole Way4 halves", packet.Text())
	}
	t4 := b.pair(time, b.s.memo.normalize(packet.Div(4)))
	p4 := b.s.memo.normalize(packet.Mod(4))
	st = []*kernel.Stage{
		{Kind: kernel.StVectorInit},
		{Kind: kernel.StVectorBranch, Param: "Unconditional"},
		{Kind: kernel.StVectorSplit, Time: t4, Packet: p4},
	}
	ref = kernel.EpilogueInput
	for _, o := range ops {
		if y := workload.EpilogueOperand(o); y != "" {
			// The tensor operand, from the VRF per position (build.vrf).
			op, sym, ok := binaryFloatOp(o.Kind)
			if !ok || b.vrf == "" {
				return nil, "", fmt.Errorf("search: epilogue %s: a %s of two tensors is not built", o.Name, o.Kind)
			}
			st = append(st, &kernel.Stage{Kind: kernel.StVectorFpBinary, Tensor: b.vrf, Param: op})
			ref = fmt.Sprintf("(%s) %s %s", ref, sym, y)
			continue
		}
		mid, expr, _, err := floatMid(o, "("+ref+")")
		if err != nil {
			return nil, "", fmt.Errorf("search: epilogue %s: %w", o.Name, err)
		}
		for _, m := range mid {
			st = append(st, &kernel.Stage{Kind: kernel.StageKind(m.Kind), Param: m.Param})
		}
		ref = expr
	}
	st = append(st,
		&kernel.Stage{Kind: kernel.StVectorConcat, Time: time, Packet: packet},
		&kernel.Stage{Kind: kernel.StVectorFinal})
	return st, ref, nil
}
