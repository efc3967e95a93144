package engines

// The Switch Engine (002 L3054-3542): redistribution of packets across the
// 256 slices of a cluster through a ring network. This file holds its
// derivation (output mappings from a SwitchConfig, or the SwitchConfig from
// the output mappings, and the snoop bitmaps either way), its rules, and its
// functional semantics on packets (SwitchApply).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Switch Engine's rules (computing.md §2.3; IDs SW-R1..SW-R9 are the
// catalog's).
var (
	ruleSwPacket = NewRule(Rule{ID: "SW-R1", Engine: "switch", Name: "packet unchanged",
		Cite: "002 L3064-3066, L3087-3088",
		Text: "the packet passes through the switch unchanged (no padding, no reshaping); only Slice and Time are permuted"})
	ruleSwFullCluster = NewRule(Rule{ID: "SW-R2", Engine: "switch", Name: "full cluster",
		Cite: "002 L3501-3502",
		Text: "InSlice::SIZE = OutSlice::SIZE = 256; partial cluster operations are not supported"})
	ruleSwPattern = NewRule(Rule{ID: "SW-R3", Engine: "switch", Name: "topology pattern",
		Cite: "002 L3499-3500, L3150-3157, L3224-3234, L3256-3263, L3289-3303",
		Text: "input/output mapping expressions must match the predefined topology pattern"})
	ruleSwOrder = NewRule(Rule{ID: "SW-R4", Engine: "switch", Name: "order preservation",
		Cite: "002 L3460, L3505-3510",
		Text: "axes moving from Slice to Time must preserve their relative order from the input Slice dimension"})
	ruleSwInnermost = NewRule(Rule{ID: "SW-R5", Engine: "switch", Name: "innermost time position",
		Cite: "002 L3472, L3511-3516",
		Text: "axes moving from Slice to Time must appear at the innermost positions of the output Time dimension"})
	ruleSwRing = NewRule(Rule{ID: "SW-R6", Engine: "switch", Name: "ring size",
		Cite: "002 L3364",
		Text: "the ring size must be a power of 2, at most 256"})
	ruleSwSource = NewRule(Rule{ID: "SW-R7", Engine: "switch", Name: "representation preserved",
		Cite: "002 L3086, L3340-3341",
		Text: "the switch preserves the tensor's representation: every output element is an input Slice element, and the output Slice and the axes moved to Time hold only input Slice axes or new broadcast axes"})
	ruleSwBroadcast = NewRule(Rule{ID: "SW-R8", Engine: "switch", Name: "broadcast axes",
		Cite: "002 L3192, L3245",
		Text: "an axis the input lacks is a newly introduced broadcast axis; it can only tile the output Slice"})
	ruleSwAligned = NewRule(Rule{ID: "SW-R9", Engine: "switch", Name: "packet alignment",
		Cite: "002 L3037, L1723, L2114",
		Text: "the packet entering the switch is a fetch packet: whole bytes, 8-byte aligned"})
	ruleSwParams = NewRule(Rule{ID: "SW-R10", Engine: "switch", Name: "topology parameters",
		Cite: "002 L3142, L3221, L3257, L3287, L3377",
		Text: "every parameter of the SwitchConfig variant is a positive integer"})
	ruleSwSliceSplit = NewRule(Rule{ID: "SW-R11", Engine: "switch", Name: "slice split",
		Cite: "002 L3143, L3222, L3288",
		Text: "the compiler infers slice2 = InSlice::SIZE / (slice1 * slice0), which must be a whole number"})
	ruleSwTimeSplit = NewRule(Rule{ID: "SW-R12", Engine: "switch", Name: "time split",
		Cite: "002 L3143, L3288-3290",
		Text: "time1 = InTime::SIZE / time0 must be a whole number; for InterTranspose time1 has the size of slice1, so InTime::SIZE must divide by slice1 * time0"})
	ruleSwSupported = NewRule(Rule{ID: "SW-R13", Engine: "switch", Name: "supported transformation",
		Cite: "002 L3092, L3499-3500",
		Text: "the Switch Engine only supports the slice and time transformations of its topologies"})
	ruleSwRingCover = NewRule(Rule{ID: "SW-R14", Engine: "switch", Name: "ring coverage",
		Cite: "002 L3364-3365, L3487",
		Text: "the ring must cover all cross-slice dependencies: every source slice of an output slice lies in the output slice's ring group of ring_size consecutive slices"})
	ruleSwTime = NewRule(Rule{ID: "SW-R15", Engine: "switch", Name: "input time carried",
		Cite: "002 L3087, L3472-3473",
		Text: "a custom topology carries the input Time unchanged as the outer part of the output Time; the axes moved from Slice follow it"})
	ruleSwPadOrder = NewRule(Rule{ID: "SW-R17", Engine: "switch", Name: "padding sources",
		Cite: "002 L3095, L3460, L3489-3491",
		Text: "every moved Time position, padding included, is one packet of a distinct source slice, delivered in ascending source order"})
	ruleSwSnoopOnce = NewRule(Rule{ID: "SW-R16", Engine: "switch", Name: "snoop once",
		Cite: "002 L3095, L3489",
		Text: "an output slice accepts each source slice's packet at most once per input time step (a snoop bitmap names each source once)"})
)

// SwitchRequest is what the Switch Engine derivation starts from
// (002 L3060-3076): the input stream tensor's Slice, Time and Packet
// mappings (a FetchTensor), and the output mappings of
// `switch::<Slice2, Time2>` or a SwitchConfig, or both. Chip and Cluster
// pass through unchanged (002 L3087) and are not part of the request.
type SwitchRequest struct {
	// Axes declares every axis the mappings use.
	Axes mapping.Axes
	// DType is the element type of the stream.
	DType dtype.DType
	// InSlice, InTime and InPacket are the input stream's mappings.
	InSlice, InTime, InPacket *mapping.Expr
	// OutSlice and OutTime are the output mappings, both or neither. Axes the
	// input lacks are broadcast axes (002 L3192).
	OutSlice, OutTime *mapping.Expr
	// OutPacket, when given, must equal InPacket (002 L3088).
	OutPacket *mapping.Expr
	// Config is the kernel's SwitchConfig; nil derives it from the output
	// mappings.
	Config *kernel.SwitchConfig
	// DualChannel selects the 64-byte dual channel mode (002 L2127); it only
	// changes the flit count per packet.
	DualChannel bool
}

// SwitchPlan is the result of DeriveSwitch: the lowered configuration and
// the output stream's mappings.
type SwitchPlan struct {
	Switch kernel.Switch
	// OutSlice, OutTime and OutPacket are the output mappings: the request's
	// when it gave them, else the topology's pattern, normalized.
	OutSlice, OutTime, OutPacket *mapping.Expr
	// Broadcast lists the output's broadcast axes, the axes the input lacks
	// (002 L3192), in first-use order.
	Broadcast []string
}

// DeriveSwitch lowers a switch. With a Config it builds the topology's
// output pattern from the input mappings (002 L3139-3303) and checks the
// request's output mappings against it, or, for CustomBroadcast, derives the
// snoop bitmaps from the output mappings (002 L3332-3380). Without a Config
// it finds the topology and parameters that produce the output mappings:
// Forwarding when nothing moves, else the regular topology with the smallest
// ring (ties: Broadcast01, Broadcast1, Transpose, InterTranspose, then the
// largest time0, slice1, slice0; see docs/spec-decisions.md "Switch topology
// derivation"), else a CustomBroadcast with the smallest ring that covers
// its dependencies. Every rule it checks returns a *Violation.
func DeriveSwitch(spec *Spec, req SwitchRequest) (*SwitchPlan, error) {
	if spec == nil {
		return nil, errors.New("switch: no hardware spec")
	}
	if err := req.check(); err != nil {
		return nil, err
	}
	slices := spec.Switch.SlicesInOut.Value // 002 L3502
	if slices < 1 || slices > kernel.SnoopSlices {
		return nil, fmt.Errorf("switch: the spec's %d slices do not fit a %d-slice snoop bitmap", slices, kernel.SnoopSlices)
	}
	S, T, P := req.InSlice, req.InTime, req.InPacket
	if S.Size() != slices {
		return nil, ruleSwFullCluster.Violate("input Slice m![%s] has %d positions, want %d", S, S.Size(), slices).With("in_slice", S.Size())
	}
	pbytes, err := req.DType.BytesFor(P.Size())
	align := spec.Fetch.PacketAlignBytes.Value // 002 L1723, L2114
	if err != nil || pbytes%align != 0 {
		v := ruleSwAligned.Violate("packet m![%s] of %d %s elements is not a multiple of %d bytes", P, P.Size(), req.DType, align)
		if err == nil {
			v = v.With("packet_bytes", pbytes)
		}
		return nil, v
	}
	if req.OutPacket != nil && !switchSame(req.OutPacket, P) {
		return nil, ruleSwPacket.Violate("output Packet m![%s] differs from input Packet m![%s]", req.OutPacket, P)
	}
	flit := spec.Stream.FlitBytes.Value // 002 L2126
	if req.DualChannel {
		flit = spec.Stream.DualChannelFlitBytes.Value // 002 L2127
	}
	plan := &SwitchPlan{OutPacket: P}
	sw := &plan.Switch
	sw.Slices, sw.InTime, sw.PacketBytes, sw.FlitBytes = slices, T.Size(), pbytes, flit
	sw.FlitsPerPacket = (pbytes + flit - 1) / flit // 002 L3526; see spec-decisions "Switch flits per packet"

	var O *mapping.Expr // the output Slice with broadcast axes as broadcasts
	if req.OutSlice != nil {
		if req.OutSlice.Size() != slices {
			return nil, ruleSwFullCluster.Violate("output Slice m![%s] has %d positions, want %d", req.OutSlice, req.OutSlice.Size(), slices).With("out_slice", req.OutSlice.Size())
		}
		in := map[string]bool{}
		for _, e := range []*mapping.Expr{S, T, P} {
			for _, s := range e.Symbols() {
				in[s] = true
			}
		}
		newAxes := map[string]bool{}
		for _, s := range req.OutSlice.Symbols() {
			if !in[s] && !newAxes[s] {
				newAxes[s] = true
				plan.Broadcast = append(plan.Broadcast, s)
			}
		}
		for _, s := range req.OutTime.Symbols() {
			if !in[s] {
				return nil, ruleSwBroadcast.Violate("output Time m![%s] uses axis %s, which the input lacks: a new axis can only tile the output Slice", req.OutTime, s)
			}
		}
		if O, err = switchReplaceAxes(req.OutSlice, newAxes); err != nil {
			return nil, fmt.Errorf("switch: output Slice: %w", err)
		}
		plan.OutSlice, plan.OutTime = req.OutSlice, req.OutTime
	}

	if req.Config == nil {
		if O == nil {
			return nil, errors.New("switch: give the output Slice and Time mappings, or a SwitchConfig")
		}
		if err := switchSearch(spec, req, O, plan); err != nil {
			return nil, err
		}
		return plan, nil
	}
	c := *req.Config
	if err := switchCheckParams(c); err != nil {
		return nil, err
	}
	sw.Config = c
	if c.Topology == kernel.SwitchCustomBroadcast {
		if O == nil {
			return nil, errors.New("switch: a CustomBroadcast routes by its output mappings: give the output Slice and Time")
		}
		if err := switchCustom(spec, req, O, c.RingSize, plan); err != nil {
			return nil, err
		}
		return plan, nil
	}
	exp, err := switchExpect(c, S, T)
	if err != nil {
		return nil, err
	}
	if O != nil {
		if !switchSamePair(O, req.OutTime, exp.slice, exp.time) {
			ns, nt := switchNormalizePair(exp.slice, exp.time)
			if !switchSame(O, exp.slice) {
				return nil, ruleSwPattern.Violate("%s makes the output Slice m![%s], not m![%s]", c.Variant(), ns, req.OutSlice)
			}
			return nil, ruleSwPattern.Violate("%s makes the output Time m![%s], not m![%s]", c.Variant(), nt, req.OutTime)
		}
	} else {
		plan.OutSlice, plan.OutTime = switchNormalizePair(exp.slice, exp.time)
	}
	switchRegular(sw, c, exp)
	return plan, nil
}

func (req *SwitchRequest) check() error {
	for _, m := range []struct {
		name string
		e    *mapping.Expr
		need bool
	}{{"input Slice", req.InSlice, true}, {"input Time", req.InTime, true}, {"input Packet", req.InPacket, true},
		{"output Slice", req.OutSlice, false}, {"output Time", req.OutTime, false}, {"output Packet", req.OutPacket, false}} {
		if m.e == nil {
			if m.need {
				return fmt.Errorf("switch: missing %s mapping", m.name)
			}
			continue
		}
		if err := m.e.Err(); err != nil {
			return fmt.Errorf("switch: %s: %w", m.name, err)
		}
	}
	if (req.OutSlice == nil) != (req.OutTime == nil) {
		return errors.New("switch: give both output Slice and output Time, or neither")
	}
	if !req.DType.Valid() {
		return errors.New("switch: missing or invalid dtype")
	}
	return nil
}

// switchCheckParams checks that the config carries exactly its variant's
// parameters, each positive (SW-R10).
func switchCheckParams(c kernel.SwitchConfig) error {
	if !c.Topology.Valid() {
		return fmt.Errorf("switch: invalid topology %d", c.Topology)
	}
	want := map[string]bool{}
	for _, f := range c.Topology.Fields() {
		want[f] = true
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"slice1", c.Slice1}, {"slice0", c.Slice0}, {"time0", c.Time0}, {"ring_size", c.RingSize}} {
		if want[f.name] && f.v < 1 {
			return ruleSwParams.Violate("%s needs %s ≥ 1, got %d", c.Topology, f.name, f.v).With(f.name, f.v)
		}
		if !want[f.name] && f.v != 0 {
			return ruleSwParams.Violate("%s takes no %s (got %d)", c.Topology, f.name, f.v).With(f.name, f.v)
		}
	}
	return nil
}

// switchPattern is a regular topology's output pattern and inferred sizes.
type switchPattern struct {
	slice, time          *mapping.Expr
	slice2, time1, time2 int
}

// switchExpect builds a regular topology's output mappings from the input
// Slice S and Time T (computing.md §2.4 D1): with slice0 = S % s0,
// slice1 = S / s0 % s1, slice2 = S / (s1·s0),
//
//	Broadcast01:    Slice [slice2, tile, tile], Time [T / t0, slice1, T % t0, slice0] (002 L3150-3157)
//	Broadcast1:     Slice [slice2, tile, slice0], Time [T, slice1]                   (002 L3224-3234)
//	Transpose:      Slice [slice2, slice0, slice1], Time T                           (002 L3256-3263, L3276)
//	InterTranspose: Slice [slice2, time1, slice0], Time [time2, time0, slice1]      (002 L3289-3303)
//
// where a tile is a broadcast of the moved sub-dimension's size.
func switchExpect(c kernel.SwitchConfig, S, T *mapping.Expr) (*switchPattern, error) {
	if c.Topology == kernel.SwitchForwarding {
		return &switchPattern{slice: S, time: T}, nil // 002 L3120-3121
	}
	n, t := S.Size(), T.Size()
	s1, s0 := c.Slice1, c.Slice0
	if s1 > n || s0 > n || n%(s1*s0) != 0 {
		return nil, ruleSwSliceSplit.Violate("%s: InSlice::SIZE %d does not divide by slice1 * slice0 = %d * %d", c.Variant(), n, s1, s0).
			With("in_slice", n).With("slice1", s1).With("slice0", s0)
	}
	p := &switchPattern{slice2: n / (s1 * s0)}
	sl12, sl0 := switchSplit(S, s0)
	sl2, sl1 := switchSplit(sl12, s1)
	switch c.Topology {
	case kernel.SwitchBroadcast01:
		t0 := c.Time0
		if t0 > t || t%t0 != 0 {
			return nil, ruleSwTimeSplit.Violate("%s: InTime::SIZE %d does not divide by time0 = %d", c.Variant(), t, t0).With("in_time", t).With("time0", t0)
		}
		p.time1 = t / t0
		tm1, tm0 := switchSplit(T, t0)
		p.slice = mapping.Pair(sl2, mapping.Broadcast(s1), mapping.Broadcast(s0))
		p.time = mapping.Pair(tm1, sl1, tm0, sl0)
	case kernel.SwitchBroadcast1:
		p.slice = mapping.Pair(sl2, mapping.Broadcast(s1), sl0)
		p.time = mapping.Pair(T, sl1)
	case kernel.SwitchTranspose:
		p.slice = mapping.Pair(sl2, sl0, sl1)
		p.time = T
	case kernel.SwitchInterTranspose:
		t0 := c.Time0
		if t0 > t || s1*t0 > t || t%(s1*t0) != 0 {
			return nil, ruleSwTimeSplit.Violate("%s: InTime::SIZE %d does not divide by slice1 * time0 = %d * %d (time1 has the size of slice1)", c.Variant(), t, s1, t0).
				With("in_time", t).With("slice1", s1).With("time0", t0)
		}
		p.time1, p.time2 = s1, t/(s1*t0)
		tm12, tm0 := switchSplit(T, t0)
		tm2, tm1 := switchSplit(tm12, s1)
		p.slice = mapping.Pair(sl2, tm1, sl0)
		p.time = mapping.Pair(tm2, tm0, sl1)
	default:
		return nil, fmt.Errorf("switch: %s is not a regular topology", c.Topology)
	}
	for _, e := range []*mapping.Expr{p.slice, p.time} {
		if err := e.Err(); err != nil {
			return nil, fmt.Errorf("switch: %s: building the output pattern: %w", c.Variant(), err)
		}
	}
	return p, nil
}

// switchSplit splits e into e / n and e % n, canonical where e factorizes
// and n falls on a digit boundary (mapping.SplitAt), so that the topology
// patterns compare structurally; n must divide e's size.
func switchSplit(e *mapping.Expr, n int) (outer, inner *mapping.Expr) {
	if o, i, err := mapping.SplitAt(e, n); err == nil {
		return o, i
	}
	return e.Div(n), e.Mod(n)
}

// switchRegular fills the sizes, ring and route of a regular topology from
// its parameters (computing.md §2.5, D2).
func switchRegular(sw *kernel.Switch, c kernel.SwitchConfig, p *switchPattern) {
	n, t := sw.Slices, sw.InTime
	sw.Config = c
	sw.Slice2, sw.Time1, sw.Time2 = p.slice2, p.time1, p.time2
	r := &sw.Route
	r.Bitmaps = make([]kernel.SnoopBitmap, n)
	r.TimeBase = nil
	if c.Topology == kernel.SwitchForwarding {
		// Every router outputs its own input: ring_size 1 (002 L3123, L3138).
		sw.RingSize = 1
		*r = kernel.SwitchRoute{OuterTime: 1, OuterMoved: 1, InnerTime: t, InnerMoved: 1, OuterTimeStride: t, Bitmaps: r.Bitmaps}
		for o := range r.Bitmaps {
			r.Bitmaps[o].Set(o)
		}
		sw.Rings = n
		return
	}
	s1, s0 := c.Slice1, c.Slice0
	ring := s1 * s0 // 002 L3526; see spec-decisions "Switch ring size of the regular topologies"
	sw.RingSize, sw.Rings = ring, n/ring
	for o := 0; o < n; o++ {
		base := o / ring * ring // slice2 · slice1 · slice0
		in := o % ring
		switch c.Topology {
		case kernel.SwitchBroadcast01:
			// out[(s2, x1, x0)][(t1, s1, t0, s0)] = in[(s2, s1, s0)][(t1, t0)]
			for k := 0; k < ring; k++ {
				r.Bitmaps[o].Set(base + k)
			}
		case kernel.SwitchBroadcast1:
			// out[(s2, x, s0)][(t, s1)] = in[(s2, s1, s0)][t]
			for k := 0; k < s1; k++ {
				r.Bitmaps[o].Set(base + k*s0 + in%s0)
			}
		case kernel.SwitchTranspose:
			// out[(s2, a, b)][t] = in[(s2, b, a)][t], a < slice0, b < slice1
			a, b := in/s1, in%s1
			r.Bitmaps[o].Set(base + b*s0 + a)
		case kernel.SwitchInterTranspose:
			// out[(s2, t1, s0)][(t2, t0, s1)] = in[(s2, s1, s0)][(t2, t1, t0)]
			for k := 0; k < s1; k++ {
				r.Bitmaps[o].Set(base + k*s0 + in%s0)
			}
		}
	}
	switch c.Topology {
	case kernel.SwitchBroadcast01:
		t0 := c.Time0
		r.OuterTime, r.OuterMoved, r.InnerTime, r.InnerMoved, r.OuterTimeStride = t/t0, s1, t0, s0, t0
	case kernel.SwitchBroadcast1:
		r.OuterTime, r.OuterMoved, r.InnerTime, r.InnerMoved, r.OuterTimeStride = 1, 1, t, s1, t
	case kernel.SwitchTranspose:
		r.OuterTime, r.OuterMoved, r.InnerTime, r.InnerMoved, r.OuterTimeStride = 1, 1, t, 1, t
	case kernel.SwitchInterTranspose:
		t0 := c.Time0
		r.OuterTime, r.OuterMoved, r.InnerTime, r.InnerMoved, r.OuterTimeStride = t/(s1*t0), 1, t0, s1, s1*t0
		r.TimeBase = make([]int, n)
		for o := range r.TimeBase {
			r.TimeBase[o] = (o % ring) / s0 * t0 // the output slice's time1 digit
		}
	}
}

// switchCandidate is a regular topology that reproduces the requested
// output mappings.
type switchCandidate struct {
	cfg kernel.SwitchConfig
	pat *switchPattern
}

// switchOrder is the preference among regular topologies with the same
// ring size.
var switchOrder = map[kernel.SwitchTopology]int{
	kernel.SwitchBroadcast01: 0, kernel.SwitchBroadcast1: 1, kernel.SwitchTranspose: 2, kernel.SwitchInterTranspose: 3,
}

// switchSearch finds the configuration that produces the requested output
// mappings (see DeriveSwitch).
func switchSearch(spec *Spec, req SwitchRequest, O *mapping.Expr, plan *SwitchPlan) error {
	S, T, U := req.InSlice, req.InTime, req.OutTime
	sw := &plan.Switch
	if switchSamePair(O, U, S, T) {
		c := kernel.SwitchConfig{Topology: kernel.SwitchForwarding}
		switchRegular(sw, c, &switchPattern{slice: S, time: T})
		return nil
	}
	n, t, u := S.Size(), T.Size(), U.Size()
	var cands []switchCandidate
	try := func(c kernel.SwitchConfig) bool {
		p, err := switchExpect(c, S, T)
		if err != nil || !switchSamePair(O, U, p.slice, p.time) {
			return false
		}
		cands = append(cands, switchCandidate{c, p})
		return true
	}
	divs := switchDivisors(n, n)
	// time0 candidates: the divisors of InTime::SIZE, largest first, below
	// the longest run where output Time position c·(inner slice size) holds
	// input Time position c (true of every valid time0).
	tdivs := switchDivisors(t, t)
	if u%t == 0 && u/t <= n && n%(u/t) == 0 {
		k := u / t // slice1 · slice0 of Broadcast01, slice1 of Broadcast1
		for _, s0 := range divs {
			if k%s0 != 0 {
				continue
			}
			// The output Slice [slice2, tile, tile] does not depend on time0:
			// check it before searching time0.
			sl2, _ := switchSplit(S, k)
			if !switchSame(O, mapping.Pair(sl2, mapping.Broadcast(k))) {
				break // the same for every split of k
			}
			t0max := switchScan(req.Axes, U, T, s0, t)
			for _, t0 := range tdivs {
				if t0 <= t0max && try(kernel.SwitchConfig{Topology: kernel.SwitchBroadcast01, Slice1: k / s0, Slice0: s0, Time0: t0}) {
					break // the largest time0 for this split
				}
			}
		}
		for _, s0 := range divs {
			if (n/k)%s0 == 0 {
				try(kernel.SwitchConfig{Topology: kernel.SwitchBroadcast1, Slice1: k, Slice0: s0})
			}
		}
	}
	if u == t {
		for _, s1 := range divs {
			for _, s0 := range divs {
				if s1*s0 > n || n%(s1*s0) != 0 {
					continue
				}
				try(kernel.SwitchConfig{Topology: kernel.SwitchTranspose, Slice1: s1, Slice0: s0})
				if s1 == 1 {
					continue
				}
				// The output Slice [slice2, time1, slice0] keeps slice2 and
				// slice0 whatever time0 is: check them before searching time0.
				sl12, sl0 := switchSplit(S, s0)
				sl2, _ := switchSplit(sl12, s1)
				o12, o0 := switchSplit(O, s0)
				o2, _ := switchSplit(o12, s1)
				if !switchSame(o0, sl0) || !switchSame(o2, sl2) {
					continue
				}
				t0max := switchScan(req.Axes, U, T, s1, t)
				for _, t0 := range tdivs {
					if t0 <= t0max && t%(s1*t0) == 0 && try(kernel.SwitchConfig{Topology: kernel.SwitchInterTranspose, Slice1: s1, Slice0: s0, Time0: t0}) {
						break
					}
				}
			}
		}
	}
	if len(cands) > 0 {
		sort.SliceStable(cands, func(i, j int) bool {
			a, b := cands[i].cfg, cands[j].cfg
			if ra, rb := a.Slice1*a.Slice0, b.Slice1*b.Slice0; ra != rb {
				return ra < rb
			}
			if a.Topology != b.Topology {
				return switchOrder[a.Topology] < switchOrder[b.Topology]
			}
			if a.Time0 != b.Time0 {
				return a.Time0 > b.Time0
			}
			if a.Slice1 != b.Slice1 {
				return a.Slice1 > b.Slice1
			}
			return a.Slice0 > b.Slice0
		})
		switchRegular(sw, cands[0].cfg, cands[0].pat)
		return nil
	}
	sw.Config = kernel.SwitchConfig{Topology: kernel.SwitchCustomBroadcast}
	if err := switchCustom(spec, req, O, 0, plan); err != nil {
		var v *Violation
		if errors.As(err, &v) && (v.Rule == ruleSwSource || v.Rule == ruleSwTime) {
			return ruleSwSupported.Violate("no topology maps Slice m![%s], Time m![%s] to Slice m![%s], Time m![%s]: %s", S, T, req.OutSlice, U, v.Detail)
		}
		return err
	}
	sw.Config.RingSize = sw.RingSize
	return nil
}

// switchCustom derives a CustomBroadcast (002 L3332-3380): the output Time
// must be [input Time, moved], and output slice o at moved position j
// snoops the input slice that holds the index OutSlice(o) + moved(j)
// (broadcast axes dropped). Positions that are padding take any free source
// slice of the ring group, in order. ring 0 derives the smallest ring; a
// given ring must be a power of two that covers the dependencies.
func switchCustom(spec *Spec, req SwitchRequest, O *mapping.Expr, ring int, plan *SwitchPlan) error {
	S, T, U := req.InSlice, req.InTime, req.OutTime
	n, t := S.Size(), T.Size()
	sw := &plan.Switch
	maxRing := spec.Switch.MaxRingSize.Value // 002 L3364
	pow2 := spec.Switch.RingSizePowerOfTwo.Value
	if ring != 0 && (pow2 && ring&(ring-1) != 0 || ring > maxRing) {
		return ruleSwRing.Violate("ring_size %d is not a power of 2 up to %d", ring, maxRing).With("ring_size", ring)
	}
	if U.Size()%t != 0 {
		return ruleSwTime.Violate("output Time m![%s] (%d steps) does not carry input Time m![%s] (%d steps) with moved axes inside it", U, U.Size(), T, t).
			With("out_time", U.Size()).With("in_time", t)
	}
	m := U.Size() / t
	if m > n {
		return ruleSwSnoopOnce.Violate("output Time m![%s] needs %d packets per input time step, but a slice can snoop each of the %d slices once", U, m, n).With("moved", m)
	}
	outer, M, err := mapping.SplitAt(U, m)
	if err != nil {
		return fmt.Errorf("switch: output Time: %w", err)
	}
	if !switchSame(outer, T) {
		return switchDiagnoseTime(S, T, U, m)
	}
	axes := req.Axes
	pS, err := mapping.Compile(S, axes)
	if err != nil {
		return fmt.Errorf("switch: input Slice: %w", err)
	}
	// Output slice o at moved position j is position o·m + j of the pair
	// [OutSlice, moved]: one expression, so that a composite atom split
	// between the two decodes its summed position (002 L1023-1024).
	OM := mapping.Pair(O, M)
	pOM, err := mapping.Compile(OM, axes)
	if err != nil {
		return fmt.Errorf("switch: output Slice and Time: %w", err)
	}
	nc := pS.Coords()
	bufS := make([]int, max(pS.Slots(), nc))
	bufOM := make([]int, max(pOM.Slots(), nc))
	key := make([]byte, 0, nc*binary.MaxVarintLen64)
	encode := func(c []int) []byte {
		key = key[:0]
		for _, v := range c[:nc] {
			key = binary.AppendUvarint(key, uint64(v))
		}
		return key
	}
	holder := map[string]int{} // live input Slice index → lowest slice holding it
	for s := 0; s < n; s++ {
		if k, _ := pS.Eval(s, bufS); k == mapping.Live {
			if _, dup := holder[string(encode(bufS))]; !dup {
				holder[string(key)] = s
			}
		}
	}
	known := make([]int, n*m) // source of each (o, j); -1 for padding
	for o := 0; o < n; o++ {
		for j := 0; j < m; j++ {
			known[o*m+j] = -1
			if k, _ := pOM.Eval(o*m+j, bufOM); k != mapping.Live {
				continue // padding, or a summed coordinate past its axis
			}
			src, ok := holder[string(encode(bufOM))]
			if !ok {
				return ruleSwSource.Violate("output slice %d at moved Time position %d holds %s, which no input slice of m![%s] holds", o, j, switchIndex(axes, bufOM[:nc]), S).
					With("out_slice", o).With("moved", j)
			}
			known[o*m+j] = src
		}
	}
	// Moved axes keep their input Slice order: an output slice receives its
	// sources in ascending slice order (002 L3460, L3489-3491).
	for o := 0; o < n; o++ {
		last, lastJ := -1, -1
		for j := 0; j < m; j++ {
			k := known[o*m+j]
			if k < 0 {
				continue
			}
			if k == last {
				return ruleSwSnoopOnce.Violate("output slice %d takes the packet of source slice %d twice (moved Time positions %d and %d of m![%s])", o, k, lastJ, j, M).
					With("out_slice", o).With("source", k)
			}
			if k < last {
				return ruleSwOrder.Violate("moved Time axes m![%s] reorder input Slice m![%s]: output slice %d receives source slice %d before source slice %d", M, S, o, last, k).
					With("out_slice", o).With("source", k).With("before", last)
			}
			last, lastJ = k, j
		}
	}
	srcs := make([]int, n*m)
	// fill assigns every (o, j) a source in o's ring group of r slices,
	// ascending in j, padding positions taking the lowest free slice; it
	// returns the first output slice and moved position it cannot serve.
	fill := func(r int) (int, int, bool) {
		for o := 0; o < n; o++ {
			lo := o / r * r
			hi := min(lo+r, n)
			next := lo
			for j := 0; j < m; j++ {
				k := known[o*m+j]
				if k < 0 {
					if next >= hi {
						return o, j, false
					}
					k = next
				} else if k < next || k >= hi {
					return o, j, false
				}
				srcs[o*m+j] = k
				next = k + 1
			}
		}
		return 0, 0, true
	}
	minRing, top := 0, 1
	for r := 1; r <= n && r <= maxRing; r *= 2 {
		top = r
		if _, _, ok := fill(r); ok {
			minRing = r
			break
		}
	}
	if minRing == 0 {
		o, j, _ := fill(top)
		if known[o*m+j] < 0 {
			return ruleSwPadOrder.Violate("output slice %d: moved Time position %d of m![%s] is padding with no source slice left to fill it (a slice receives one packet per source, in ascending source order)", o, j, M).
				With("out_slice", o).With("moved", j)
		}
		return ruleSwRingCover.Violate("output slice %d needs source slice %d, outside every ring of at most %d slices", o, known[o*m+j], top).
			With("out_slice", o).With("source", known[o*m+j])
	}
	if ring == 0 {
		ring = minRing
	} else if ring < minRing {
		return ruleSwRingCover.Violate("ring_size %d does not cover the dependencies: the output mappings need a ring of %d", ring, minRing).
			With("ring_size", ring).With("needed", minRing)
	}
	fill(ring)
	sw.RingSize, sw.Rings = ring, (n+ring-1)/ring
	r := &sw.Route
	*r = kernel.SwitchRoute{OuterTime: 1, OuterMoved: 1, InnerTime: t, InnerMoved: m, OuterTimeStride: t,
		Bitmaps: make([]kernel.SnoopBitmap, n)}
	for o := 0; o < n; o++ {
		for j := 0; j < m; j++ {
			r.Bitmaps[o].Set(srcs[o*m+j])
		}
	}
	return nil
}

// switchDiagnoseTime explains why the outer part of the output Time U is
// not the input Time T: a moved Slice axis outside an input Time axis
// (SW-R5), or otherwise the input Time not carried (SW-R15).
func switchDiagnoseTime(S, T, U *mapping.Expr, m int) error {
	timeAx := map[string]bool{}
	for _, a := range T.Symbols() {
		timeAx[a] = true
	}
	sliceAx := map[string]bool{}
	for _, a := range S.Symbols() {
		sliceAx[a] = !timeAx[a]
	}
	if fu, err := mapping.Factorize(U); err == nil {
		// Factors are innermost first: a Slice axis at i with a Time axis at
		// some j < i sits outside that Time axis.
		for i := len(fu) - 1; i >= 0; i-- {
			if fu[i].Kind != mapping.FactorTerm || !sliceAx[fu[i].Axis] {
				continue
			}
			for j := 0; j < i; j++ {
				if fu[j].Kind == mapping.FactorTerm && timeAx[fu[j].Axis] {
					return ruleSwInnermost.Violate("output Time m![%s]: moved axis %s sits outside input Time axis %s", U, mapping.Factors{fu[i]}.Expr(), mapping.Factors{fu[j]}.Expr())
				}
			}
			break
		}
	}
	outer, inner, _ := mapping.SplitAt(U, m)
	return ruleSwTime.Violate("output Time m![%s] splits into m![%s] outside m![%s]; the outer part must be the input Time m![%s]", U, outer, inner, T)
}

// switchIndex prints the coordinates c (by axis slot) as an index.
func switchIndex(axes mapping.Axes, c []int) string {
	var cs []mapping.Coord
	for i, a := range axes.List() {
		if i < len(c) && c[i] != 0 {
			cs = append(cs, mapping.Coord{Axis: a.Name, Value: c[i]})
		}
	}
	return mapping.IndexOf(cs...).String()
}

// SwitchApply runs a lowered switch on packets (002 L3086-3088): src holds
// the input stream, slice-major ([Slice][Time][Packet], 004 "Tensor Unit
// Stream"), sw.Slices · sw.InTime packets of sw.PacketBytes bytes; dst
// receives sw.Slices · sw.Route.OutTime() packets. Packets are copied bit for
// bit (002 L3064-3066). It does not allocate.
func SwitchApply(sw *kernel.Switch, dst, src []byte) error {
	if err := switchCheckApply(sw, src); err != nil {
		return err
	}
	n, p, u := sw.Slices, sw.PacketBytes, sw.Route.OutTime()
	if hi, lo := bits.Mul64(uint64(n*u), uint64(p)); hi != 0 || lo != uint64(len(dst)) {
		return fmt.Errorf("switch: output holds %d bytes, want %d slices × %d time steps × %d bytes", len(dst), n, u, p)
	}
	for o := 0; o < n; o++ {
		if err := switchRoute(sw, dst[o*u*p:(o+1)*u*p], src, o); err != nil {
			return err
		}
	}
	return nil
}

// SwitchApplySlice is SwitchApply for output slice o alone: dst receives
// its OutTime packets (a simulator that runs some slices of a ring needs
// only theirs).
func SwitchApplySlice(sw *kernel.Switch, dst, src []byte, o int) error {
	if err := switchCheckApply(sw, src); err != nil {
		return err
	}
	if o < 0 || o >= sw.Slices {
		return fmt.Errorf("switch: output slice %d of %d", o, sw.Slices)
	}
	if hi, lo := bits.Mul64(uint64(sw.Route.OutTime()), uint64(sw.PacketBytes)); hi != 0 || lo != uint64(len(dst)) {
		return fmt.Errorf("switch: output holds %d bytes, want %d time steps × %d bytes", len(dst), sw.Route.OutTime(), sw.PacketBytes)
	}
	return switchRoute(sw, dst, src, o)
}

// switchCheckApply checks a configuration and its input before routing.
func switchCheckApply(sw *kernel.Switch, src []byte) error {
	if sw == nil {
		return errors.New("switch: nil configuration")
	}
	n, t, p := sw.Slices, sw.InTime, sw.PacketBytes
	r := &sw.Route
	u := r.OutTime()
	if n < 1 || t < 1 || p < 1 || u < 1 || len(r.Bitmaps) != n || r.TimeBase != nil && len(r.TimeBase) != n {
		return fmt.Errorf("switch: malformed configuration (%d slices, %d time steps, %d-byte packets, %d output steps, %d bitmaps)", n, t, p, u, len(r.Bitmaps))
	}
	if hi, lo := bits.Mul64(uint64(n*t), uint64(p)); hi != 0 || lo != uint64(len(src)) {
		return fmt.Errorf("switch: input holds %d bytes, want %d slices × %d time steps × %d bytes", len(src), n, t, p)
	}
	return nil
}

// switchRoute fills output slice o's packets (dst) from the input.
func switchRoute(sw *kernel.Switch, dst, src []byte, o int) error {
	n, t, p := sw.Slices, sw.InTime, sw.PacketBytes
	r := &sw.Route
	u := r.OutTime()
	if got, want := r.Bitmaps[o].Len(), r.OuterMoved*r.InnerMoved; got != want {
		return fmt.Errorf("switch: output slice %d snoops %d slices, its route needs %d", o, got, want)
	}
	for tp := 0; tp < u; tp++ {
		s, ti, ok := r.Source(o, tp)
		if !ok || s >= n || ti < 0 || ti >= t {
			return fmt.Errorf("switch: output slice %d time %d has no source (slice %d, time %d)", o, tp, s, ti)
		}
		copy(dst[tp*p:(tp+1)*p], src[(s*t+ti)*p:(s*t+ti+1)*p])
	}
	return nil
}

// switchSame reports whether two mappings hold the same element at every
// position, padding kinds aside (the manual's own equivalence, 002
// L1017-1021, L753-758): by their factorized forms, or by enumeration when
// a side is not factorizable and small enough.
func switchSame(a, b *mapping.Expr) bool {
	if a.Size() != b.Size() || a.Size() == 0 {
		return false
	}
	fa, ea := mapping.FactorizeShared(a)
	fb, eb := mapping.FactorizeShared(b)
	if ea == nil && eb == nil {
		return switchLoose(fa).Equal(switchLoose(fb))
	}
	if a.Size() > 1<<20 {
		return false
	}
	ok, _ := mapping.EquivLoose(a, b)
	return ok
}

// switchSamePair reports whether the two-dimension mappings [a1, a2] and
// [b1, b2] (Slice and Time, or Time and Packet, of one stream) hold the same
// elements: each dimension the same size, and the pairs equivalent. The
// pairs are compared as one expression so that a composite atom split
// between the dimensions decodes its summed position (002 L1023-1024).
func switchSamePair(a1, a2, b1, b2 *mapping.Expr) bool {
	// Each dimension on its own is a necessary condition (position 0 of the
	// other adds nothing) and cheap to decide: check it first.
	return a1.Size() == b1.Size() && a2.Size() == b2.Size() && switchSame(a1, b1) && switchSame(a2, b2) &&
		switchSame(mapping.Pair(a1, a2), mapping.Pair(b1, b2))
}

// switchNormalizePair normalizes the two dimensions of a derived stream for
// printing, keeping the derived forms when normalizing each on its own would
// change what the pair holds (a composite atom split between them).
func switchNormalizePair(a, b *mapping.Expr) (*mapping.Expr, *mapping.Expr) {
	na, nb := mapping.Normalize(a), mapping.Normalize(b)
	if switchSamePair(na, nb, a, b) {
		return na, nb
	}
	return a, b
}

// switchLoose returns the factors with every padding kind made Top, and
// adjacent paddings merged (the larger wins).
func switchLoose(fs mapping.Factors) mapping.Factors {
	out := make(mapping.Factors, 0, len(fs))
	for _, f := range fs {
		if f.Kind == mapping.FactorPad {
			f.Pad = mapping.Top
			if n := len(out); n > 0 && out[n-1].Kind == mapping.FactorPad {
				out[n-1].Extent = max(out[n-1].Extent, f.Extent)
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// switchScanCap bounds switchScan's walk over huge Time dimensions.
const switchScanCap = 1 << 16

// switchScan returns the largest L ≤ limit such that U's position
// c·stride holds the same cell as T's position c for every c < L (padding
// kinds aside). The time0 of a Broadcast01 (stride slice0) or
// InterTranspose (stride slice1) is at most L: output Time positions inside
// time0 with every slice digit 0 walk the input Time (002 L3154, L3300).
func switchScan(axes mapping.Axes, U, T *mapping.Expr, stride, limit int) int {
	pu, err1 := mapping.Compile(U, axes)
	pt, err2 := mapping.Compile(T, axes)
	if err1 != nil || err2 != nil {
		return limit
	}
	bu, bt := make([]int, pu.Slots()), make([]int, pt.Slots())
	nc := min(pu.Coords(), pt.Coords())
	for c := 0; c < limit; c++ {
		if c == switchScanCap {
			return limit // long agreement: leave the candidates to the full check
		}
		if c*stride >= U.Size() {
			return c
		}
		ku, _ := pu.Eval(c*stride, bu)
		kt, _ := pt.Eval(c, bt)
		if ku != kt || ku == mapping.Live && !slices.Equal(bu[:nc], bt[:nc]) {
			return c
		}
	}
	return limit
}

// switchDivisors returns the divisors of n that are at most limit, largest
// first. Prime factors above 2^16 are found only when n has at most one of
// them, which bounds the work for huge sizes; missing a divisor only hides a
// candidate time0 from the topology search.
func switchDivisors(n, limit int) []int {
	if n < 1 {
		return nil
	}
	type pf struct{ p, e int }
	var fs []pf
	m := n
	for p := 2; p <= 1<<16 && p*p <= m; p++ {
		if m%p != 0 {
			continue
		}
		e := 0
		for m%p == 0 {
			m /= p
			e++
		}
		fs = append(fs, pf{p, e})
	}
	if m > 1 {
		fs = append(fs, pf{m, 1})
	}
	ds := []int{1}
	for _, f := range fs {
		cur := len(ds)
		q := 1
		for e := 1; e <= f.e; e++ {
			q *= f.p
			for _, d := range ds[:cur] {
				ds = append(ds, d*q)
			}
		}
	}
	out := ds[:0]
	for _, d := range ds {
		if d <= limit {
			out = append(out, d)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// switchReplaceAxes rebuilds e with every symbol in repl replaced by a
// broadcast of its size: a new axis of the output Slice is a broadcast tile
// (002 L3192).
func switchReplaceAxes(e *mapping.Expr, repl map[string]bool) (*mapping.Expr, error) {
	if len(repl) == 0 {
		return e, nil
	}
	rec := func(x *mapping.Expr) (*mapping.Expr, error) { return switchReplaceAxes(x, repl) }
	switch e.Kind() {
	case mapping.KindSymbol:
		if repl[e.Name()] {
			return mapping.NewBroadcast(e.Size())
		}
		return e, nil
	case mapping.KindBroadcast:
		return e, nil
	case mapping.KindPair:
		parts := e.Parts()
		out := make([]*mapping.Expr, len(parts))
		for i, p := range parts {
			var err error
			if out[i], err = rec(p); err != nil {
				return nil, err
			}
		}
		return mapping.NewPair(out...)
	case mapping.KindStride, mapping.KindModulo, mapping.KindResize, mapping.KindPadding:
		in, err := rec(e.Inner())
		if err != nil {
			return nil, err
		}
		switch e.Kind() {
		case mapping.KindStride:
			return mapping.NewStride(in, e.Arg())
		case mapping.KindModulo:
			return mapping.NewModulo(in, e.Arg())
		case mapping.KindResize:
			return mapping.NewResize(in, e.Arg())
		default:
			return mapping.NewPadding(in, e.Arg(), e.PadKind())
		}
	case mapping.KindLinear:
		terms, strides := e.Terms()
		out := make([]*mapping.Expr, len(terms))
		for i, p := range terms {
			var err error
			if out[i], err = rec(p); err != nil {
				return nil, err
			}
		}
		return mapping.NewLinear(out, strides)
	}
	return nil, fmt.Errorf("cannot rewrite %s expression %s", e.Kind(), e)
}
