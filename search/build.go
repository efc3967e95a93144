package search

import (
	"fmt"
	"slices"
	"sort"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The builder: a candidate becomes a kernel program the way the manual's
// Hello contractions are written (002 L307-525). For one tile:
//
//	to_dm(in0), to_dm(in1)                    HBM → DM, 002 L338-339
//	sub:  begin(W) fetch collect to_trf        002 L341-347
//	main: begin(X) fetch collect align contract accumulate [cast] commit
//	                                           002 L350-360
//	to_hbm(out)                                DM → HBM, 002 L362
//
// with the mappings:
//
//	Slice    the output axes' slice digits, spread over the cluster's DMNs
//	         and padded to its slices (`m![I / 32, J / 32]`, `m![1 # 256]`,
//	         002 L318, L483; `m![I / 2, I % 2 # 32]`, placeSlices)
//	Cluster  the cluster digit, or `1 # 2` (002 L317)
//	TRF      Row = the stationary operand's row digits (`J % 8`), Element =
//	         its time digits in computation order, then the packet
//	         (`J / 8 % 4, K`, 002 L503)
//	fetch    X's time digits in computation order; in Single mode the
//	         innermost contracted time digit joins the packet (`K`, 002 L515)
//	collect  32-byte flits: the packet splits at 32 bytes into Time
//	         (`K / 16`, `K % 16`, 002 L516)
//	align    computation Time = the time digits in order, Packet = the
//	         64-byte contracted packet (`K / 32`, `K % 32`, 002 L517)
//	contract `m![1]`: the tree reduces the whole packet (002 L518)
//	accumulate Interleaved: Time = the output axes' time digits, Packet =
//	         Row # 8 (002 L519, L4447-4448)
//	cast     to the output type, Packet = Row padded to 32 bytes
//	         (`J % 8 # 16`, 002 L520)
//	commit   the output DM tensor: its time digits, then Row # 8 innermost
//	         (`m![I % 32, J % 32]`, `m![1 # 8]`, 002 L359-360, L512)
//
// A tiled candidate repeats the group once per tile over HBM tile views
// (`tile::<dim, 1, _>(t)`, 002 L813-831): an operand whose tile does not
// change from one tile to the next is not moved again, and with double
// buffering consecutive loads alternate between two DM buffers and the two
// TRF halves (002 L4151-4158).

// rulePlanDM is the builder's own rule: the program's DM tensors get
// distinct addresses inside one slice's DM.
var rulePlanDM = engines.NewRule(engines.Rule{ID: "PLAN-DM", Engine: "memory", Name: "DM allocation",
	Cite: "002 L138, L154-156",
	Text: "DM tensors live at the same time must not overlap, and one slice's DM holds 512 KB"})

// hbmRegion is the spacing of the kernel's HBM tensors, as the manual's
// kernels place them (`0`, `1 << 28`, `2 << 28`, 002 L326-327, L362).
const hbmRegion = 1 << 28

// build holds one candidate's derived structure.
type build struct {
	s    *Space
	p    *Problem
	c    *Candidate
	x, w int // streamed and stationary input
	// outAxes, xAxes, wAxes are each tensor's axes in HBM order, major
	// first; packetAxes the axes with a packet factor: the output axes in
	// X's HBM order, then the contracted axes in X's HBM order (the tree
	// sums the innermost Packet % 2^n, 002 L4392).
	outAxes, xAxes, wAxes, packetAxes []int
	// rows are the stationary operand's free axes with a row factor, in
	// W's HBM order.
	rows []int
	// blk[a], for a switched candidate, is the innermost positions of
	// axis a's Time digit the ring carries (Space.switchBlock); 1 for
	// every axis otherwise. time0 is the fetch Time's positions inner to
	// the block (Broadcast01's time0).
	blk   [MaxAxes]int32
	time0 int
	// nGroups caches groups(): into how many groups the live slices
	// spread over the DMNs; 0 before it is computed.
	nGroups int
	// reduced caches splitOut() for a split candidate (SplitK).
	reduced *engines.SplitKOutput
	// vrf names the VRF tensor that holds the output tile's share of the
	// epilogue's tensor operand (Problem.Operands), while program builds.
	vrf string
}

func (s *Space) newBuild(c *Candidate) (*build, error) {
	if err := s.Check(c); err != nil {
		return nil, fmt.Errorf("search: malformed candidate: %w", err)
	}
	b := &build{s: s, p: s.P, c: c, w: int(c.Stationary), x: 1 - int(c.Stationary)}
	b.outAxes, b.xAxes, b.wAxes = s.HBMOrder(TensorOut), s.HBMOrder(b.x), s.HBMOrder(b.w)
	for _, contracted := range []bool{false, true} {
		for _, a := range b.xAxes {
			if c.Factor(a, Packet) > 1 && (s.P.Axes[a].Class == Contracted) == contracted {
				b.packetAxes = append(b.packetAxes, a)
			}
		}
	}
	for _, a := range b.wAxes {
		if c.Factor(a, Row) > 1 {
			b.rows = append(b.rows, a)
		}
	}
	for a := range b.blk {
		b.blk[a] = 1
	}
	if c.Switch {
		var ok bool
		if b.blk, b.time0, ok = s.SwitchBlock(c); !ok {
			return nil, fmt.Errorf("search: malformed candidate: the ring of %d slices takes no block of the streamed operand's fetch Time", s.Ring(c))
		}
	}
	return b, nil
}

// part is axis a's digits over the levels from..to (in the zero order's
// numbering, Level): each run of those levels that nest next to each
// other in the axis's digit order (Candidate.Digits; levels of factor 1
// aside) is one digit, its stride the product of the factors below the
// run, its extent the product of the run's; the digits are paired major
// first. It is nil for extent 1. In the zero order the levels from..to
// are one run: one digit. An axis dealt out (Candidate.DealtOut) nests its
// Cluster and Slice digits between its Time and Row digits: Time..Packet
// is then two digits, Time's and the digits below Slice.
func (b *build) part(a int, from, to Level) *mapping.Expr {
	c := b.c
	d := c.Digits[a]
	if d == 0 {
		n := 1
		for l := from; l <= to; l++ {
			n *= c.Factor(a, l)
		}
		if n == 1 {
			return nil
		}
		return b.digit(a, c.Below(a, to), n)
	}
	var ps [NumLevels]*mapping.Expr
	np := 0
	run, inner := 1, Level(0) // the current run's extent and innermost level
	for _, l := range d.Levels() {
		f := c.Factor(a, l)
		if f == 1 {
			continue
		}
		if l < from || l > to {
			if run > 1 {
				ps[np] = b.digit(a, c.Below(a, inner), run)
				np++
				run = 1
			}
			continue
		}
		run *= f
		inner = l
	}
	if run > 1 {
		ps[np] = b.digit(a, c.Below(a, inner), run)
		np++
	}
	switch np {
	case 0:
		return nil
	case 1:
		return ps[0]
	}
	return b.pair(ps[:np]...)
}

// pair pairs the non-nil parts, major first; the identity when none.
func (b *build) pair(parts ...*mapping.Expr) *mapping.Expr {
	var ps []*mapping.Expr
	for _, p := range parts {
		if p != nil {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return mapping.Identity()
	}
	return b.s.memo.normalize(mapping.Pair(ps...))
}

// padTo pads e to n positions (`1 # 256`), or returns it when it has n.
func padTo(e *mapping.Expr, n int) (*mapping.Expr, error) {
	if e.Size() == n {
		return e, nil
	}
	if e.Size() > n {
		return nil, fmt.Errorf("search: %s has %d positions, more than %d", e.Text(), e.Size(), n)
	}
	return mapping.NewPadding(e, n, mapping.Top)
}

// dmnGroups returns into how many groups the builder spreads a cluster's
// live slices: the largest power of two d that divides live, at most the
// cluster's DMNs (8, 002 L2867), such that each group's live slices,
// live / d, are whole rings of ring slices (1 without a switch). Group k
// is the k-th of d equal blocks of the cluster's slices (256 / d, whole
// DMNs of 32, 002 L2868) and holds its live slices at its start
// (placeSlices): with d = 8 every DMN holds live / 8 of them, so a
// tensor's DMA runs on all of the cluster's DMNs and DMA Engines (one per
// DMN pair, 002 L2404), each DMN moving live / 8 slices' bytes at its 128
// B/cycle (002 L2603, L2884).
func (s *Space) dmnGroups(live, ring int) int {
	d := 1
	for d*2 <= s.DMNs() && live%(d*2) == 0 && (live/(d*2))%ring == 0 {
		d *= 2
	}
	return d
}

// placeSlices places e, a cluster's live slice digits, in the cluster's
// slices: in d groups (b.groups), each the next live / d slice positions
// of e at the start of its block of slices / d, padding between
// (`m![I / 2, I % 2 # 32]` for I = 16: two slices on each of the 8 DMNs),
// rather than e padded at the top (`m![I # 256]`, all 16 under DMN 0,
// whose one DMN and DMA Engine would move every byte, 002 L2603, L2884).
// The engines take a live slice anywhere: fetch and commit run per slice,
// the commit's slice bitmap skips the padded ones (002 L2314-2319), the
// TRF and the switch keep the stream's Slice mapping (002 L4056-4065,
// L3087).
func (b *build) placeSlices(e *mapping.Expr) (*mapping.Expr, error) {
	d := b.groups()
	if d == 1 {
		return padTo(e, b.s.Slices())
	}
	outer, inner, err := spreadSplit(e, d)
	if err != nil {
		return nil, err
	}
	in, err := padTo(inner, b.s.Slices()/d)
	if err != nil {
		return nil, err
	}
	return b.s.memo.normalize(mapping.Pair(outer, in)), nil
}

// groups returns the number of groups placeSlices spreads the live slices
// over: the largest d up to dmnGroups at which both the compute Slice's
// digits and, for a switched candidate, the streamed operand's DM Slice
// digits split (spreadSplit), so that the two stay alike group for group
// (the switch maps one onto the other, 002 L3087); 1 (padding at the top)
// when none does.
func (b *build) groups() int {
	if b.nGroups > 0 {
		return b.nGroups
	}
	es := []*mapping.Expr{b.sliceDigits()}
	if b.c.Switch {
		es = append(es, b.xSliceDigits())
	}
	live := es[0].Size()
	d := b.s.dmnGroups(live, b.s.groupRing(b.c))
	if r := b.s.Split(b.c); r > 1 {
		// A group's live slices must not be the reduction group alone
		// with padding above it: placeSlices would pad the reduced digit
		// itself (`J / 128 # 64`), which the Inter-Slice Block does not
		// reduce (XSR-R6).
		for d > 1 && live/d == r && live < b.s.Slices() {
			d /= 2
		}
	}
	for ; d > 1; d /= 2 {
		ok := true
		for _, e := range es {
			if _, _, err := spreadSplit(e, d); err != nil {
				ok = false
			}
		}
		if ok {
			break
		}
	}
	b.nGroups = d
	return d
}

// spreadSplit splits e into d groups of e.Size() / d positions: canonical
// sides (mapping.SplitAt on whole or divided digits of e), so that a
// switched candidate's ring, innermost in e and dividing a group, stays
// whole in each group (Broadcast01's slice1, 002 L3143-3157; ring groups
// of consecutive slices, 002 L3364-3365).
func spreadSplit(e *mapping.Expr, d int) (outer, inner *mapping.Expr, err error) {
	if e.Size()%d != 0 {
		return nil, nil, fmt.Errorf("search: %d slices do not split into %d groups", e.Size(), d)
	}
	if outer, inner, err = mapping.SplitAt(e, e.Size()/d); err != nil {
		return nil, nil, err
	}
	if !factorizes(outer) || !factorizes(inner) {
		return nil, nil, fmt.Errorf("search: %s has no canonical split into %d groups", e.Text(), d)
	}
	return outer, inner, nil
}

// groupRing is the block of innermost slices that must stay whole
// within a DMN group: the ring of a switched candidate (Space.Ring), the
// reduction group of a split one (Space.Split: the Inter-Slice Block
// reduces live innermost slices, XSR-R6), 1 otherwise.
func (s *Space) groupRing(c *Candidate) int {
	if !c.Switch {
		return s.Split(c)
	}
	return s.Ring(c)
}

// factorizes reports whether e has a factorized form.
func factorizes(e *mapping.Expr) bool {
	_, err := mapping.FactorizeShared(e)
	return err == nil
}

// slice is the Slice mapping of every on-chip tensor: the output axes'
// slice digits in the output's HBM order, placed over the cluster's DMNs
// (placeSlices).
//
// A switched candidate puts the stationary operand's free axes minor, so
// that they are the ring (Broadcast01's slice1, the innermost slice
// positions, 002 L3143-3157), and the other axes major (slice2).
func (b *build) slice() (*mapping.Expr, error) { return b.placeSlices(b.sliceDigits()) }

// sliceDigits is the compute Slice's live digits, major first.
func (b *build) sliceDigits() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.outAxes {
		if !b.c.Switch || b.s.Role(a, b.c.Stationary) != RoleFW {
			ps = append(ps, b.part(a, Slice, Slice))
		}
	}
	if b.c.Switch {
		for _, a := range b.outAxes {
			if b.s.Role(a, b.c.Stationary) == RoleFW {
				ps = append(ps, b.part(a, Slice, Slice))
			}
		}
	}
	// A contracted axis split across slices is innermost: the Inter-Slice
	// Block reduces the innermost Slice digits (XSR-R6, splitOut).
	for a, ax := range b.p.Axes {
		if ax.Class == Contracted {
			ps = append(ps, b.part(a, Slice, Slice))
		}
	}
	return b.pair(ps...)
}

// splitOut returns, for a split candidate (SplitK), the Slice and Time of
// the stream after the Inter-Slice Block reduced its partial sums: the
// promotion of the innermost output Time digit the group size divides
// (each slice of a group then commits its share of the outputs, spreading
// the commit and the store over the group) or, without one, the dummy
// form (one slice of each group holds the sums; engines.SplitKOutputs).
// nil for a candidate that is not split.
func (b *build) splitOut() (*engines.SplitKOutput, error) {
	r := b.s.Split(b.c)
	if r == 1 || b.reduced != nil {
		return b.reduced, nil
	}
	slice, err := b.slice()
	if err != nil {
		return nil, err
	}
	acc, err := b.accumulate()
	if err != nil {
		return nil, err
	}
	outs, err := engines.SplitKOutputs(slice, acc.time, r)
	if err != nil {
		return nil, err
	}
	o := outs[0]
	if len(outs) > 1 {
		o = outs[1]
	}
	b.reduced = &o
	return b.reduced, nil
}

// xSlice is the Slice mapping of the streamed operand's DM tensor: the
// compute Slice, or for a switched candidate the slice digits of the other
// axes (slice2) and, in the ring's positions, the streamed operand's
// block of time digits (slice1, Space.switchBlock), outer first.
func (b *build) xSlice() (*mapping.Expr, error) {
	if !b.c.Switch {
		return b.slice()
	}
	return b.placeSlices(b.xSliceDigits())
}

// xSliceDigits is a switched candidate's streamed DM Slice's live digits,
// major first.
func (b *build) xSliceDigits() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.outAxes {
		if b.s.Role(a, b.c.Stationary) != RoleFW {
			ps = append(ps, b.part(a, Slice, Slice))
		}
	}
	for _, a := range b.xOrder() {
		ps = append(ps, b.blockDigit(a))
	}
	return b.pair(ps...)
}

// digit is axis a's coordinate digit of extent n and stride stride, nil
// for extent 1.
func (b *build) digit(a, stride, n int) *mapping.Expr {
	if n == 1 {
		return nil
	}
	ax := b.p.Axes[a]
	e := mapping.Sym(ax.Name, ax.Size)
	if stride > 1 {
		e = e.Div(stride)
	}
	if stride*n < ax.Size {
		e = e.Mod(n)
	}
	return e
}

// blockDigit is the part of axis a's Time digit the ring carries: its
// innermost blk[a] positions; nil when none.
func (b *build) blockDigit(a int) *mapping.Expr {
	return b.digit(a, b.c.Below(a, Time), int(b.blk[a]))
}

// keptDigit is the part of axis a's Time digit a slice's stream keeps:
// all of it, or above the ring's block.
func (b *build) keptDigit(a int) *mapping.Expr {
	k := int(b.blk[a])
	return b.digit(a, b.c.Below(a, Time)*k, b.c.Factor(a, Time)/k)
}

// cluster is the Cluster mapping, padded to the chip's clusters: an
// output axis's cluster digit, or a contracted axis's (ClusterK).
func (b *build) cluster() (*mapping.Expr, error) {
	var ps []*mapping.Expr
	for _, a := range b.outAxes {
		ps = append(ps, b.part(a, Cluster, Cluster))
	}
	for a, ax := range b.p.Axes {
		if ax.Class == Contracted {
			ps = append(ps, b.part(a, Cluster, Cluster))
		}
	}
	return padTo(b.pair(ps...), b.s.Clusters())
}

// timeDigit is axis a's computation Time digit.
func (b *build) timeDigit(a int) *mapping.Expr { return b.part(a, Time, Time) }

// rowMapping is the computation Row: the row digits of the stationary
// operand's free axes.
func (b *build) rowMapping() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.rows {
		ps = append(ps, b.part(a, Row, Row))
	}
	return b.pair(ps...)
}

// packet is the computation packet: the packet digits of the axes that
// have one, in the streamed operand's HBM order.
func (b *build) packet() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.packetAxes {
		ps = append(ps, b.part(a, Packet, Packet))
	}
	return b.pair(ps...)
}

// columns is the part of the packet the tree keeps: the packet digits of
// the output axes, without the contracted digits it sums (contract's
// OutPacket = Packet / 2^n, 002 L4392, L4455-4470); the identity for a
// contracted packet.
func (b *build) columns() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.packetAxes {
		if b.p.Axes[a].Class != Contracted {
			ps = append(ps, b.part(a, Packet, Packet))
		}
	}
	return b.pair(ps...)
}

// wPacket is the part of the packet the stationary operand holds: the
// contracted packet, or the batch and contracted axes of a packet of
// columns; the TRF reads it whole (reg_read_size, 002 L4104-4108).
func (b *build) wPacket() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.packetAxes {
		if b.holds(b.w, a) {
			ps = append(ps, b.part(a, Packet, Packet))
		}
	}
	return b.pair(ps...)
}

// holds reports whether input i holds axis a.
func (b *build) holds(i, a int) bool { return b.p.In[i].Has(b.p.Axes[a].Name) }

// xOrder is the computation time order restricted to what the streamed
// operand's fetch iterates: its own axes, and the stationary operand's
// free axes when they are broadcast by re-fetching.
func (b *build) xOrder() []int {
	var out []int
	for _, a := range b.c.TimeOrder() {
		if b.s.Role(a, b.c.Stationary) == RoleFW && b.c.Bcast == BcastAlign {
			continue
		}
		out = append(out, a)
	}
	return out
}

// wOrder is the computation time order restricted to the stationary
// operand's axes: the TRF Element's time digits.
func (b *build) wOrder() []int {
	var out []int
	for _, a := range b.c.TimeOrder() {
		if b.holds(b.w, a) {
			out = append(out, a)
		}
	}
	return out
}

// trfOrder is the order of the stationary operand's time digits in its TRF
// Element: its DM element's order, so that the sub context's fetch reads
// the DM tensor's runs whole (a run cut to one element leaves no 8-byte
// sub-context fetch, FE-R5, 002 L1757-1761): computation order for a DM
// tensor in computation layout (wElement), else W's HBM order. The main
// context's TRF Sequencer reads the Element in computation order whatever
// its digits' order (TRF-R12, 002 L4083-4085, L4177).
func (b *build) trfOrder() []int {
	if b.c.Layout[b.w] == LayoutCompute {
		return b.wOrder()
	}
	var out []int
	for _, a := range b.wAxes {
		if b.c.Factor(a, Time) > 1 {
			out = append(out, a)
		}
	}
	return out
}

// digits returns the time digits of the axes.
func (b *build) digits(axes []int) []*mapping.Expr {
	out := make([]*mapping.Expr, 0, len(axes))
	for _, a := range axes {
		out = append(out, b.timeDigit(a))
	}
	return out
}

// absorb splits a fetch's time axes into the fetch Time and the fetch
// Packet of tensor i: the innermost axis joins the packet when the packet
// continues it (its packet digit is the packet's outermost; the Hello
// kernels fetch `m![K]` whole, 002 L345, L515), or when the tensor's packet
// is empty, as long as the joined packet is whole flits.
func (b *build) absorb(i int, axes []int, packet *mapping.Expr) (time, pk *mapping.Expr) {
	n := len(axes)
	if n > 0 {
		last := axes[n-1]
		join := packet.IsIdentity()
		for _, a := range b.packetAxes {
			if b.holds(i, a) {
				join = join || a == last
				break
			}
		}
		// The joined packet must still split into whole flits.
		if join && (b.c.Factor(last, Time)*packet.Size())%b.flitElems() == 0 {
			return b.pair(b.digits(axes[:n-1])...), b.pair(b.timeDigit(last), packet)
		}
	}
	return b.pair(b.digits(axes)...), packet
}

// flitElems is the elements of one 32-byte flit (002 L3011).
func (b *build) flitElems() int { return b.s.Spec.Stream.FlitBytes.Value * 8 / b.s.ElemBits() }

// collect splits a fetch packet into 32-byte flits: Time gains the flit
// count innermost (002 L3544-3549).
func (b *build) collect(time, packet *mapping.Expr) (*mapping.Expr, *mapping.Expr, error) {
	f := b.flitElems()
	if packet.Size() <= f {
		// A short packet is padded to the flit (002 L3549: COL-R2).
		p, err := padTo(packet, f)
		return time, p, err
	}
	outer, inner, err := mapping.SplitAt(packet, f)
	if err != nil {
		return nil, nil, fmt.Errorf("search: packet %s into %d-element flits: %w", packet.Text(), f, err)
	}
	return b.pair(time, outer), b.s.memo.normalize(inner), nil
}

// inElems is the elements of the X DM tensor: its within-slice digits.
//
// A switched candidate's element leaves out the ring's block of time
// digits, which its Slice holds (xSlice).
func (b *build) xElement() *mapping.Expr {
	if b.c.Layout[b.x] == LayoutCompute {
		var ps []*mapping.Expr
		for _, a := range b.xTimeAxes() {
			ps = append(ps, b.keptDigit(a))
		}
		return b.pair(append(ps, b.packet())...)
	}
	var ps []*mapping.Expr
	for _, a := range b.xAxes {
		if b.blk[a] > 1 {
			ps = append(ps, b.keptDigit(a), b.part(a, Row, Packet))
			continue
		}
		ps = append(ps, b.part(a, Time, Packet))
	}
	return b.pair(ps...)
}

// xTimeAxes are the streamed operand's own axes in computation order.
func (b *build) xTimeAxes() []int {
	var out []int
	for _, a := range b.c.TimeOrder() {
		if b.holds(b.x, a) {
			out = append(out, a)
		}
	}
	return out
}

// wElement is the stationary operand's DM element mapping.
func (b *build) wElement() *mapping.Expr {
	if b.c.Layout[b.w] == LayoutCompute {
		return b.pair(append(append([]*mapping.Expr{b.rowMapping()}, b.digits(b.wOrder())...), b.wPacket())...)
	}
	var ps []*mapping.Expr
	for _, a := range b.wAxes {
		ps = append(ps, b.part(a, Time, Packet))
	}
	return b.pair(ps...)
}

// rowPacket is Row # 8, the Interleaved accumulator's output packet
// (002 L4447-4448).
func (b *build) rowPacket() (*mapping.Expr, error) {
	return padTo(b.rowMapping(), b.s.Spec.Reducer.OutputBusElements.Value)
}

// outTimeAxes are the output axes of the computation Time, in order.
func (b *build) outTimeAxes() []int {
	var out []int
	for _, a := range b.c.TimeOrder() {
		if b.s.Role(a, b.c.Stationary) != RoleC {
			out = append(out, a)
		}
	}
	return out
}

// accumulation is the Reducer's output: contract::<Packet>() and
// accumulate::<Time, Packet>(kind), and the cast's packet.
type accumulation struct {
	contract     *mapping.Expr // contract's OutPacket
	time, packet *mapping.Expr // accumulate's OutTime and OutPacket
	rest         *mapping.Expr // the output digits written in Time: OutTime
	cast         *mapping.Expr // the cast's packet, 32 bytes
}

// accumulate derives the Reducer's mappings (002 L4392, L4447-4448,
// L4490-4492):
//
//   - contract keeps the columns: `m![1]` for a contracted packet (the tree
//     reduces it whole), the packet's output digits for a packet of
//     columns (the tree sums its contracted digits, innermost, at depth
//     log2 of their count, and keeps the packet whole without any,
//     002 L4392, L4455-4470);
//   - Interleaved: OutTime = [Time', columns], OutPacket = Row # 8;
//   - Sequential: OutTime = [Time', Row, columns / 8], OutPacket =
//     columns % 8 (the columns padded to a multiple of 8).
func (b *build) accumulate() (*accumulation, error) {
	var r accumulation
	r.contract = b.columns()
	tp := b.digits(b.outTimeAxes())
	bus := b.s.Spec.Reducer.OutputBusElements.Value
	var err error
	var live *mapping.Expr // the output packet without its padding
	switch b.c.Acc {
	case AccInterleaved:
		r.rest = b.pair(append(tp, r.contract)...)
		if r.packet, err = b.rowPacket(); err != nil {
			return nil, err
		}
		live = b.rowMapping()
	case AccSequential:
		m := r.contract.Size()
		padded, err := padTo(r.contract, (m+bus-1)/bus*bus)
		if err != nil {
			return nil, err
		}
		outer, inner, err := mapping.SplitAt(padded, bus)
		if err != nil {
			return nil, fmt.Errorf("search: columns %s into %d: %w", padded.Text(), bus, err)
		}
		r.rest = b.pair(append(tp, b.rowMapping(), outer)...)
		r.packet = b.s.memo.normalize(inner)
		live = b.columns()
		if live.Size() > bus {
			_, live, _ = mapping.SplitAt(live, bus)
		}
	default:
		return nil, fmt.Errorf("search: accumulation kind %d", b.c.Acc)
	}
	r.time = r.rest
	if b.p.Out.DType != b.p.Acc {
		// The Cast Engine's output packet is 32 bytes (002 L6782).
		n := b.s.Spec.Cast.OutputPacketBytes.Value * 8 / b.p.Out.DType.SizeBits()
		if n < 1 {
			return nil, fmt.Errorf("search: output type %s", b.p.Out.DType)
		}
		if r.cast, err = padTo(b.s.memo.normalize(live), n); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// outElement is the output DM tensor's element mapping: the digits the
// accumulator writes in Time, in computation order or in the output's HBM
// order, then its output packet innermost, which the commit writes whole
// (002 L359-360, L512).
func (b *build) outElement() (*mapping.Expr, error) {
	rest, packet, err := b.outParts()
	if err != nil {
		return nil, err
	}
	return b.pair(rest, packet), nil
}

// element is tensor t's DM element mapping under b's candidate: outElement,
// xElement or wElement.
func (b *build) element(t int) (*mapping.Expr, error) {
	switch t {
	case TensorOut:
		return b.outElement()
	case b.x:
		return b.xElement(), nil
	default:
		return b.wElement(), nil
	}
}

// outParts returns the output DM tensor's element mapping (outElement) in
// its two parts: the digits the accumulator writes in Time, and its
// output packet.
func (b *build) outParts() (rest, packet *mapping.Expr, err error) {
	acc, err := b.accumulate()
	if err != nil {
		return nil, nil, err
	}
	rest = acc.rest
	red, err := b.splitOut()
	if err != nil {
		return nil, nil, err
	}
	if red != nil {
		// The reduced stream's Time (a promoted digit went to the Slice).
		rest = red.TimeOut
	}
	if b.c.Layout[TensorOut] == LayoutHBM {
		if rest, err = b.hbmSorted(rest); err != nil {
			return nil, nil, err
		}
	}
	return rest, acc.packet, nil
}

// splitReduce returns the split reduce of a K-chunked candidate (TileK)
// and the program's axes with its interleave axis declared; nil for a
// candidate whose K is not chunked.
func (b *build) splitReduce() (*splitReduce, mapping.Axes, error) {
	if b.s.KTiles(b.c) == 1 {
		return nil, b.p.Decl, nil
	}
	rest, packet, err := b.outParts()
	if err != nil {
		return nil, mapping.Axes{}, err
	}
	acc, err := b.accumulate()
	if err != nil {
		return nil, mapping.Axes{}, err
	}
	// The interleave axis: a name the contraction does not use.
	name := "Kc"
	for n := 2; ; n++ {
		if _, taken := b.p.Decl.Size(name); !taken {
			break
		}
		name = fmt.Sprintf("Kc%d", n)
	}
	decl, err := mapping.NewAxes(append(b.p.Decl.List(), mapping.Axis{Name: name, Size: 2})...)
	if err != nil {
		return nil, mapping.Axes{}, err
	}
	for _, sk := range b.p.Decl.Skews() {
		if decl, err = decl.WithSkew(sk); err != nil {
			return nil, mapping.Axes{}, err
		}
	}
	return &splitReduce{acc: b.p.Acc, out: b.p.Out.DType, axis: name, time: rest, packet: packet, cast: acc.cast}, decl, nil
}

// clusterReduce is the cluster reduce of a candidate whose contracted axis
// is split across the clusters (ClusterK, 002 L7382-7610). Each cluster's
// main chain commits its partial sums of the whole output tile (the
// accumulator's type) to P, whose Cluster is the contracted axis's
// cluster digit kd and whose element is the output's, half · rest: half
// is the outermost two positions of the output's time digits. P moves into
// Q, whose Cluster is half and whose element is kd · rest: every cluster
// then holds the two partial sums of its half (a reduce-scatter, 002
// L7400-7440), by one DMA between the clusters' DMs (002 L2386-2389) or,
// for the libraries (Space.Library), whose DM-to-DM DMA keeps the Cluster
// mapping, through an HBM tensor (002 L7608).
// A main chain fetches Q with kd the innermost Time digit, unzips the two
// partial sums into a pair and adds them (the split reduce's pass, 002
// L7151-7177, L5154-5178), casts to the output type and commits the
// cluster's half of the output, whose Cluster is half; the store writes
// each half from its cluster.
type clusterReduce struct {
	// add is the pass that adds the two partial sums (its time is rest,
	// its group the digit kd).
	add splitReduce
	// half is the Cluster of Q and of the output DM tensor; q and out
	// their elements (kd, the contracted axis's cluster digit, is the
	// pass's group).
	half, q, out *mapping.Expr
}

// clusterReduce returns the cluster reduce of a candidate whose
// contracted axis is split across the clusters, nil for any other.
func (b *build) clusterReduce() (*clusterReduce, error) {
	if b.s.ClusterSplit(b.c) == 1 {
		return nil, nil
	}
	var kd *mapping.Expr
	axis := ""
	for a, ax := range b.p.Axes {
		if ax.Class == Contracted && b.c.Factor(a, Cluster) > 1 {
			kd, axis = b.part(a, Cluster, Cluster), ax.Name
		}
	}
	if kd.Size() != 2 {
		return nil, fmt.Errorf("search: a cluster reduce over %d clusters: the pass adds two partial sums", kd.Size())
	}
	rest, packet, err := b.outParts()
	if err != nil {
		return nil, err
	}
	acc, err := b.accumulate()
	if err != nil {
		return nil, err
	}
	if rest.Size()%2 != 0 {
		return nil, fmt.Errorf("search: a cluster reduce needs an even number of output positions in Time, not %s", rest.Text())
	}
	half, inner, err := mapping.SplitAt(rest, rest.Size()/2)
	if err != nil {
		return nil, fmt.Errorf("search: the cluster reduce's halves of %s: %w", rest.Text(), err)
	}
	half, inner = b.s.memo.normalize(half), b.s.memo.normalize(inner)
	if fs, err := mapping.FactorizeShared(half); err != nil || len(fs) != 1 || fs[0].Kind != mapping.FactorTerm {
		return nil, fmt.Errorf("search: the cluster reduce's halves of %s: the outermost two positions %s are not one digit of an axis", rest.Text(), half.Text())
	}
	return &clusterReduce{
		add:  splitReduce{acc: b.p.Acc, out: b.p.Out.DType, axis: axis, group: kd, time: inner, packet: packet, cast: acc.cast},
		half: half,
		q:    b.pair(kd, inner, packet),
		out:  b.pair(inner, packet),
	}, nil
}

// copyElement is the output DM tensor's element mapping under LayoutCopy:
// each output axis's digits within a slice (its Time, Row and Packet
// factors) in the output's HBM order, major first, so that a slice's
// share is laid out as HBM lays it out.
func (b *build) copyElement() *mapping.Expr {
	var ps []*mapping.Expr
	for _, a := range b.outAxes {
		ps = append(ps, b.part(a, Time, Packet))
	}
	return b.pair(ps...)
}

// copyChain is the output's rewrite in HBM order (LayoutCopy): begin →
// fetch → collect → commit in the main context, the manual's fetch-commit
// axis permutation (002 L7612-7625, L7700). The fetch gathers the
// staging tensor's elements in the destination's order, 32-byte flits of
// its innermost digits (002 L3011), with the main context's fetch sizes
// down to one element (002 L1757-1758); the collect passes whole flits,
// padding a short one (002 L3549); the commit writes each flit's live
// elements contiguously (commit_in_size, 002 L2189-2200, L2238-2249).
type copyChain struct {
	dt                         dtype.DType
	fetchTime, fetchPacket     *mapping.Expr
	collectTime, collectPacket *mapping.Expr
}

func (b *build) copyChain() (*copyChain, error) {
	dt := b.p.Out.DType
	bits := dt.SizeBits()
	if bits <= 0 {
		return nil, fmt.Errorf("search: output type %s has no size", dt)
	}
	flit := b.s.Spec.Stream.FlitBytes.Value * 8 / bits
	dest := b.copyElement()
	ch := &copyChain{dt: dt, fetchTime: mapping.Identity(), fetchPacket: dest}
	if dest.Size() > flit {
		outer, inner, err := mapping.SplitAt(dest, flit)
		if err != nil {
			return nil, fmt.Errorf("search: output %s into %d-element flits: %w", dest.Text(), flit, err)
		}
		ch.fetchTime, ch.fetchPacket = outer, b.s.memo.normalize(inner)
	}
	ch.collectTime, ch.collectPacket = ch.fetchTime, ch.fetchPacket
	if ch.fetchPacket.Size() < flit {
		p, err := padTo(ch.fetchPacket, flit)
		if err != nil {
			return nil, err
		}
		ch.collectPacket = p
	}
	return ch, nil
}

func (ch *copyChain) stages(src, dst string) []*kernel.Stage {
	return []*kernel.Stage{
		{Kind: kernel.StBegin, Tensor: src},
		{Kind: kernel.StFetch, DType: ch.dt, Time: ch.fetchTime, Packet: ch.fetchPacket},
		{Kind: kernel.StCollect, Time: ch.collectTime, Packet: ch.collectPacket},
		{Kind: kernel.StCommit, Tensor: dst},
	}
}

// Copyable reports whether c's output may be copied (LayoutCopy): the
// space copies outputs (Space.CopiesOutput), the copy chain can be formed,
// and its order differs from what the accumulator writes in either layout.
//
// Not with Interleaved accumulation on fewer than 8 Rows: bound.go's run
// bounds the output's DM run by the innermost HBM axis's Row factor there
// (the Row # 8 packet innermost, 002 L4447-4448), for every layout of a
// skeleton, which a copy in HBM order would exceed; those candidates wait
// for that bound to know the copy.
func (s *Space) Copyable(c *Candidate) bool {
	if !s.CopiesOutput() {
		return false
	}
	if c.Acc == AccInterleaved {
		rows := 1
		for a := range s.P.Axes {
			rows *= c.Factor(a, Row)
		}
		if rows < s.Spec.Reducer.OutputBusElements.Value {
			return false
		}
	}
	d := *c
	d.Layout[TensorOut] = LayoutCopy
	b, err := s.newBuild(&d)
	if err != nil {
		return false
	}
	if _, err := b.copyChain(); err != nil {
		return false
	}
	dest, err := s.memo.factorize(b.copyElement())
	if err != nil {
		return false
	}
	for _, l := range []Layout{LayoutHBM, LayoutCompute} {
		d.Layout[TensorOut] = l
		e, err := b.outElement()
		if err != nil {
			return false
		}
		if f, err := s.memo.factorize(e); err == nil && f.Equal(dest) {
			return false
		}
	}
	return true
}

// hbmSorted reorders the digits of e as the output's HBM layout orders
// its axes (major first), each axis's digits major first.
func (b *build) hbmSorted(e *mapping.Expr) (*mapping.Expr, error) {
	fs, err := b.s.memo.factorize(e)
	if err != nil {
		return nil, fmt.Errorf("search: %s: %w", e.Text(), err)
	}
	rank := map[string]int{}
	for i, a := range b.outAxes {
		rank[b.p.Axes[a].Name] = i
	}
	var terms []mapping.Factor
	for _, f := range fs {
		switch f.Kind {
		case mapping.FactorTerm:
			terms = append(terms, f)
		default:
			return e, nil // padding or broadcast digits: keep the stream order
		}
	}
	sort.SliceStable(terms, func(i, j int) bool {
		ri, rj := rank[terms[i].Axis], rank[terms[j].Axis]
		if ri != rj {
			return ri < rj
		}
		return terms[i].Stride > terms[j].Stride
	})
	ps := make([]*mapping.Expr, 0, len(terms))
	for _, f := range terms {
		x := mapping.Sym(f.Axis, f.AxisSize)
		if f.Stride > 1 {
			x = x.Div(f.Stride)
		}
		if f.Stride*f.Extent < f.AxisSize {
			x = x.Mod(f.Extent)
		}
		ps = append(ps, x)
	}
	return b.pair(ps...), nil
}

// LayoutsDiffer reports whether the two DM layouts of tensor t differ, so
// that the choice between them matters.
//
// Whether they differ does not depend on the axes dealt out
// (Candidate.DealtOut, as the named choice nests them): dealing an axis
// out scales its Time digit's stride in both element orders alike, and
// two orders of the same digits are one mapping only where they are one
// sequence (TestDealtOutLayoutsAlike). The memo's key leaves the dealt-out
// axes out, so a dealt-out form asks what its plain form asked just before
// (GEMM 4096³'s 98 k dealt-out candidates).
func (s *Space) LayoutsDiffer(c *Candidate, t int) bool {
	k := s.elementKey(c, t)
	for a := range s.P.Axes {
		if r, dealt, ci, ok := k.NamedOrder(a); ok && dealt {
			k.SetNamedOrder(a, r, false, ci)
		}
	}
	return s.memo.differ(k, t, func() bool { return s.layoutsDifferOf(c, t) })
}

// elementKey is what of c tensor t's DM element mappings (both layouts)
// depend on: the key of the memos of LayoutsDiffer and computeRun.
func (s *Space) elementKey(c *Candidate, t int) Candidate {
	// The element mappings do not depend on the layouts, the tile order
	// or the buffering: the rest of c keys the memo.
	k := *c
	k.Layout, k.TileOrder, k.DoubleBuffer = [NumTensors]Layout{}, [MaxAxes]uint8{}, false
	// Nor on the digit orders of the axes the tensor lacks (the
	// streamed operand's on the stationary operand's free axes').
	if k.Digits != ([MaxAxes]DigitOrder{}) {
		for a, ax := range s.P.Axes {
			if !s.OperandOf(t).Has(ax.Name) {
				k.Digits[a] = 0
			}
		}
	}
	// No element reads the broadcast (the fetch's order, xOrder, does),
	// and each reads the time order of its own axes only (xTimeAxes,
	// wOrder, outTimeAxes): GEMM 4096³ asks 103 k times over 53 k keys
	// without these two, 15 k with them (TestLayoutsDifferKey).
	k.Bcast = 0
	k.Order = s.elementOrder(c, t)
	return k
}

// elementOrder is c's time order restricted to the axes whose order tensor
// t's DM element reads: the output's free axes (outTimeAxes), an input's
// own axes (xTimeAxes, wOrder).
func (s *Space) elementOrder(c *Candidate, t int) [MaxAxes]uint8 {
	var o [MaxAxes]uint8
	for i := range o {
		o[i] = NoAxis
	}
	n := 0
	for _, a := range c.TimeOrder() {
		var reads bool
		if t == TensorOut {
			reads = s.Role(a, c.Stationary) != RoleC
		} else {
			reads = s.P.In[t].Has(s.P.Axes[a].Name)
		}
		if reads {
			o[n] = uint8(a)
			n++
		}
	}
	return o
}

// layoutsDifferOf is layoutsDiffer without the memo.
func (s *Space) layoutsDifferOf(c *Candidate, t int) bool {
	d1, d2 := *c, *c
	d1.Layout[t], d2.Layout[t] = LayoutHBM, LayoutCompute
	b1, err1 := s.newBuild(&d1)
	b2, err2 := s.newBuild(&d2)
	if err1 != nil || err2 != nil {
		return false
	}
	var e1, e2 *mapping.Expr
	switch {
	case t == TensorOut:
		// The compute layout's element (b2), and the same digits in HBM
		// order (outParts under LayoutHBM), without building it twice.
		rest, packet, err := b2.outParts()
		if err != nil {
			return false
		}
		sorted, err := b2.hbmSorted(rest)
		if err != nil {
			return false
		}
		e1, e2 = b2.pair(sorted, packet), b2.pair(rest, packet)
	default: // an input's element has no error
		e1, _ = b1.element(t)
		e2, _ = b2.element(t)
	}
	f1, err1 := s.memo.factorize(e1)
	f2, err2 := s.memo.factorize(e2)
	if err1 != nil || err2 != nil {
		return !e1.Equal(e2)
	}
	return !f1.Equal(f2)
}

// Build builds the candidate's kernel program (not lowered). It fails with
// an error for a malformed candidate, and with a *engines.Violation of
// PLAN-DM when the tensors do not fit one slice's DM.
func (s *Space) Build(c *Candidate) (*kernel.Program, error) {
	b, err := s.newBuild(c)
	if err != nil {
		return nil, err
	}
	return b.program()
}

// tileGroup is one operand's tile bookkeeping during the loop.
type tileGroup struct {
	op    *Operand
	axes  []int // the tiled axes the operand holds
	last  int   // linear index of the tile held, -1 before the first
	loads int
	views map[int]int // uses of each tile's view so far
	bufs  []string
	trf   []string
	isOut bool
	// view is the tile view's mapping, unit the element offset of one tile
	// step along each tiled axis, hbmAddr the operand's HBM address.
	view    *mapping.Expr
	unit    []int64
	hbmAddr int64
}

func (b *build) program() (*kernel.Program, error) {
	p, c := b.p, b.c
	prog := &kernel.Program{Name: p.Workload, Axes: p.Decl, Chips: 1,
		Reference: &kernel.Reference{Op: kernel.RefEinsum, Inputs: []string{p.In[0].Name, p.In[1].Name}, Output: p.Out.Name, Valid: p.Valid()}}
	if p.Op != "" {
		prog.Name += "-" + p.Op
	}
	one := mapping.Identity()
	addr := int64(0)
	for i, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		Role := kernel.Input
		if i == 2 {
			Role = kernel.Output
		}
		n, err := o.Bytes()
		if err != nil {
			return nil, err
		}
		prog.Tensors = append(prog.Tensors, &kernel.Tensor{Name: o.Name, Mem: kernel.HBM, DType: o.DType, Role: Role,
			Chip: one, Element: o.Layout, Addr: addr})
		addr += constraints.AlignUp(max(n, 1), hbmRegion)
	}
	// The epilogue's tensor operand: an argument after the output, loaded
	// tile by tile as the output is stored (epilogueOperand).
	var ep *epilogueOperand
	if len(p.Operands) > 1 {
		return nil, fmt.Errorf("search: an epilogue of %d tensor operands is not built (one VRF tensor)", len(p.Operands))
	}
	if len(p.Operands) == 1 {
		o := &p.Operands[0]
		n, err := o.Bytes()
		if err != nil {
			return nil, err
		}
		ep = &epilogueOperand{g: &tileGroup{op: o, last: -1, views: map[int]int{}, hbmAddr: addr}}
		prog.Tensors = append(prog.Tensors, &kernel.Tensor{Name: o.Name, Mem: kernel.HBM, DType: o.DType, Role: kernel.Input,
			Chip: one, Element: o.Layout, Addr: addr})
		prog.Reference.Inputs = append(prog.Reference.Inputs, o.Name)
		addr += constraints.AlignUp(max(n, 1), hbmRegion)
	}

	slice, err := b.slice()
	if err != nil {
		return nil, err
	}
	cluster, err := b.cluster()
	if err != nil {
		return nil, err
	}
	xe, we := b.xElement(), b.wElement()
	oe, err := b.outElement()
	if err != nil {
		return nil, err
	}
	row := b.rowMapping()

	// Tiles.
	tiled := c.Tiles()
	counts := make([]int, len(tiled))
	total := 1
	for i, a := range tiled {
		counts[i] = c.Factor(a, Tile)
		total *= counts[i]
	}
	nbuf := 1
	if c.DoubleBuffer {
		nbuf = 2
	}
	name := func(base, suffix string, k, n int) string {
		if n == 1 {
			return base + suffix
		}
		return fmt.Sprintf("%s%s%d", base, suffix, k)
	}
	groups := [NumTensors]*tileGroup{}
	for t, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		g := &tileGroup{op: o, last: -1, views: map[int]int{}, isOut: t == TensorOut, hbmAddr: prog.Tensors[t].Addr}
		for _, a := range tiled {
			if o.Has(p.Axes[a].Name) {
				g.axes = append(g.axes, a)
			}
		}
		groups[t] = g
	}
	if ep != nil {
		for _, a := range groups[TensorOut].axes { // the output's that it holds
			if ep.g.op.Has(p.Axes[a].Name) {
				ep.g.axes = append(ep.g.axes, a)
			}
		}
	}
	// DM buffers, in the manual's order: in0, in1, then the TRF, then out
	// (002 L338-339, L341-347, L359-360).
	var dm []*kernel.Tensor
	dmTensor := func(o *Operand, nm string, elem *mapping.Expr) (*kernel.Tensor, error) {
		t := &kernel.Tensor{Name: nm, Mem: kernel.DM, DType: o.DType, Role: kernel.Intermediate,
			Chip: one, Cluster: cluster, Slice: slice, Element: elem}
		dm = append(dm, t)
		return t, nil
	}
	outType := p.Out.DType
	xslice, err := b.xSlice()
	if err != nil {
		return nil, err
	}
	// With double buffering only the tensors a tile loop moves get two
	// buffers; the others stay resident in one.
	bufsOf := func(g *tileGroup) int {
		if len(g.axes) == 0 && !g.isOut {
			return 1
		}
		return nbuf
	}
	// A tensor handed over in DM (Space.hand: left for the kernels after,
	// or taken from those before) keeps each of its tiles in a buffer of
	// its own, where the other side's kernel leaves or finds it.
	dmBufs := func(t int) int {
		g := groups[t]
		if !b.s.handed(t) || len(g.axes) == 0 {
			return bufsOf(g)
		}
		n := 1
		for i, a := range tiled {
			if g.op.Has(p.Axes[a].Name) {
				n *= counts[i]
			}
		}
		return n
	}
	for t := 0; t < 2; t++ {
		elem := xe
		if t == b.w {
			elem = we
		}
		nb := dmBufs(t)
		for k := range nb {
			tt, _ := dmTensor(&p.In[t], name(p.In[t].Name, "_dm", k, nb), elem)
			if t == b.x {
				tt.Slice = xslice
			}
			groups[t].bufs = append(groups[t].bufs, tt.Name)
		}
	}
	// The chains' mappings.
	sub, err := b.subChain()
	if err != nil {
		return nil, err
	}
	main, err := b.mainChain()
	if err != nil {
		return nil, err
	}
	trfe := sub.element
	var trfs []*kernel.Tensor
	ntrf := bufsOf(groups[b.w])
	for k := range ntrf {
		mode := kernel.TrfFull
		if ntrf == 2 {
			mode = []kernel.TrfAddress{kernel.TrfFirstHalf, kernel.TrfSecondHalf}[k]
		}
		t := &kernel.Tensor{Name: name(p.In[b.w].Name, "_trf", k, ntrf), Mem: kernel.TRF, DType: p.In[b.w].DType,
			Role: kernel.Intermediate, Chip: one, Cluster: cluster, Slice: slice, Row: row, Element: trfe, TrfAddress: mode}
		trfs = append(trfs, t)
		groups[b.w].trf = append(groups[b.w].trf, t.Name)
	}
	// With LayoutCopy the chain commits to a staging tensor in compute
	// order and the copy chain rewrites it into the output buffer in HBM
	// order; the main context runs the two one after the other
	// (002 L7063-7068), so one staging tensor serves every tile.
	var cp *copyChain
	staging := ""
	if c.Layout[TensorOut] == LayoutCopy {
		if cp, err = b.copyChain(); err != nil {
			return nil, err
		}
		staging = p.Out.Name + "_acc"
	}
	red, err := b.splitOut()
	if err != nil {
		return nil, err
	}
	if red != nil {
		// The Inter-Slice Block adds the partial sums (SplitK).
		if main.vector, err = engines.SplitKStages(p.Acc, *red); err != nil {
			return nil, err
		}
	}
	if len(p.Epilogue) > 0 {
		if p.EpilogueVector() && (red != nil || b.s.KTiles(c) > 1) {
			return nil, fmt.Errorf("search: an epilogue with split or chunked K is not built")
		}
		if ep != nil {
			// The operand's share of an output tile in the VRF, in the
			// accumulator's stream order: the Float stage reads it per
			// Time and Packet position (002 L5066-5079), as an op
			// kernel's second input (opBuilder.elementwise).
			// A broadcast operand (over some of the output's axes) holds
			// its own axes' Time positions only, read again along the
			// others; the packet's lanes must be its own (a VRF operand
			// does not broadcast over lanes, VE-R15).
			ax := p.Operands[0].Axes
			t, ok1 := restrictTo(main.acc.time, ax)
			pk, ok2 := restrictTo(main.acc.packet, ax)
			if !ok1 || !ok2 || pk.Text() != main.acc.packet.Text() {
				return nil, fmt.Errorf("search: the epilogue's tensor %s lacks an axis of the accumulator's packet %s", p.Operands[0].Name, main.acc.packet.Text())
			}
			b.vrf = p.Operands[0].Name + "_vrf"
			ep.vrf = &kernel.Tensor{Name: b.vrf, Mem: kernel.VRF, DType: dtype.F32, Role: kernel.Intermediate,
				Chip: one, Cluster: cluster, Slice: slice, Element: b.pair(t, pk)}
			ep.time, ep.packet = t, pk
		}
		vec, ref, err := b.epilogue(main.acc.time, main.acc.packet)
		if err != nil {
			return nil, err
		}
		prog.Reference.Epilogue = ref
		if vec != nil {
			main.vector = vec
		}
	}
	cr, err := b.clusterReduce()
	if err != nil {
		return nil, err
	}
	if cr != nil && (cp != nil || red != nil) {
		return nil, fmt.Errorf("search: a cluster reduce with a copied output or a split across slices is not built")
	}
	nout := dmBufs(TensorOut)
	for k := range nout {
		elem := oe
		if cp != nil {
			elem = b.copyElement()
		}
		tt, _ := dmTensor(&p.Out, name(p.Out.Name, "_dm", k, nout), elem)
		tt.DType = outType
		if red != nil {
			tt.Slice = red.SliceOut
		}
		if cr != nil {
			tt.Cluster, tt.Element = cr.half, cr.out
		}
		groups[TensorOut].bufs = append(groups[TensorOut].bufs, tt.Name)
	}
	if cp != nil {
		tt, _ := dmTensor(&p.Out, staging, oe)
		tt.DType = outType
	}
	if ep != nil {
		// The operand's DM buffers, one per output buffer, each holding
		// an output tile's positions as the accumulator's stream writes
		// them (oe, the compute order).
		elem, ok := restrictTo(oe, ep.g.op.Axes)
		if !ok {
			return nil, fmt.Errorf("search: the output's DM element %s does not restrict to %s's axes", oe.Text(), ep.g.op.Name)
		}
		nb := nbuf
		if len(ep.g.axes) == 0 {
			nb = 1 // one tile: resident
		}
		for k := range nb {
			tt, _ := dmTensor(ep.g.op, name(ep.g.op.Name, "_dm", k, nb), elem)
			ep.g.bufs = append(ep.g.bufs, tt.Name)
		}
	}
	// K chunks (TileK): the partial-sum buffers in the accumulator's type,
	// ps0 the new chunk's and ps1 (ps2) the running sums, in address order
	// (an interleaved fetch's second tensor lies above its first, FE-R8).
	sr, decl, err := b.splitReduce()
	if err != nil {
		return nil, err
	}
	prog.Axes = decl
	nk := b.s.KTiles(c)
	var partials []string
	for k := range constraints.PartialBuffers(nk) {
		tt, _ := dmTensor(&p.Out, fmt.Sprintf("%s_ps%d", p.Out.Name, k), oe)
		tt.DType = p.Acc
		if red != nil {
			tt.Slice = red.SliceOut
		}
		partials = append(partials, tt.Name)
	}
	// The cluster reduce's partial sums: the cluster's (P) and, after the
	// DMA between the clusters, the two of its half (Q).
	// With K chunks P is the running sum the last chunk's split reduce
	// writes.
	var clusterP, clusterQ, clusterX string
	if cr != nil {
		if nk > 1 {
			sums := partials[1:]
			clusterP = sums[(nk-1)%len(sums)]
		} else {
			tp, _ := dmTensor(&p.Out, p.Out.Name+"_cp", oe)
			tp.DType = p.Acc
			clusterP = tp.Name
		}
		tq, _ := dmTensor(&p.Out, p.Out.Name+"_cq", cr.q)
		tq.DType, tq.Cluster = p.Acc, cr.half
		clusterQ = tq.Name
		if b.s.Library {
			// For the libraries the exchange goes through HBM: the
			// cluster's partial sums out (kd, then each slice's share in
			// DM order), then each half's two back under the other
			// Cluster mapping.
			n, err := p.Acc.BytesFor(2 * cr.q.Size() * b.sliceDigits().Size())
			if err != nil {
				return nil, err
			}
			clusterX = p.Out.Name + "_cx"
			prog.Tensors = append(prog.Tensors, &kernel.Tensor{Name: clusterX, Mem: kernel.HBM, DType: p.Acc, Role: kernel.Intermediate,
				Chip: one, Element: b.pair(cr.add.group, b.sliceDigits(), oe), Addr: addr})
			addr += constraints.AlignUp(int64(n), hbmRegion)
		}
	}
	// Addresses: consecutive, aligned, inside one slice's DM.
	limit := int64(b.s.Spec.DM.BytesPerSlice.Value)
	at := int64(0)
	for _, t := range dm {
		n, err := t.DType.BytesFor(t.Element.Size())
		if err != nil {
			return nil, err
		}
		at = constraints.AlignUp(at, DMAlign)
		t.Addr = at
		at += int64(n)
	}
	if at > limit {
		return nil, rulePlanDM.Violate("the DM tensors need %d bytes per slice, one slice's DM holds %d", at, limit).
			With("bytes", int(at)).With("limit", int(limit))
	}

	// HBM tile views: `tile::<dim, 1, _>(t)` of each tiled axis the operand
	// holds (002 L813-831, L954-971). The view's mapping is the same for
	// every tile; its address moves by the tile offset. Every use gets its
	// own view tensor, as every `tile` call returns a new view, so a view
	// lives for one DMA only; it is a view of its operand (Tensor.View), so
	// it shares the operand's bytes without colliding with it.
	var views []*kernel.Tensor
	all := groups[:]
	if ep != nil {
		all = append(slices.Clone(all), ep.g)
	}
	for _, g := range all {
		if len(tiled) == 0 {
			break
		}
		kind := mapping.Top
		if g.isOut {
			kind = mapping.Bottom
		}
		g.view = g.op.Layout
		g.unit = make([]int64, len(tiled))
		for i, a := range tiled {
			if !g.op.Has(p.Axes[a].Name) {
				continue
			}
			// The tile digit: the axis's top digit in the zero order
			// (`I / 256` for 4 tiles of I = 1024), a strided one where the
			// axis's digit order puts it lower (Candidate.Digits).
			dim := b.digit(a, c.Below(a, Tile), counts[i])
			o, err := mapping.TileOffset(g.op.Layout, dim, 1, 1)
			if err != nil {
				return nil, fmt.Errorf("search: tile of %s along %s: %w", g.op.Name, p.Axes[a].Name, err)
			}
			g.unit[i] = int64(o)
			if g.view, err = mapping.TileView(g.view, dim, 1, kind); err != nil {
				return nil, fmt.Errorf("search: tile view of %s along %s: %w", g.op.Name, dim.Text(), err)
			}
		}
	}
	viewName := func(g *tileGroup, idx []int) (string, error) {
		if len(g.axes) == 0 {
			return g.op.Name, nil // the whole tensor
		}
		lin := 0
		var off int64
		for i, a := range tiled {
			if g.op.Has(p.Axes[a].Name) {
				lin = lin*counts[i] + idx[i]
				off += int64(idx[i]) * g.unit[i]
			}
		}
		offBytes, err := g.op.DType.BytesFor(int(off))
		if err != nil {
			return "", err
		}
		nm := fmt.Sprintf("%s_t%d", g.op.Name, lin)
		if n := g.views[lin]; n > 0 {
			nm = fmt.Sprintf("%s_%d", nm, n)
		}
		g.views[lin]++
		views = append(views, &kernel.Tensor{Name: nm, Mem: kernel.HBM, DType: g.op.DType, Role: kernel.Intermediate,
			Chip: one, Element: g.view, Addr: g.hbmAddr + int64(offBytes), View: g.op.Name})
		return nm, nil
	}
	tileKey := func(g *tileGroup, idx []int) int {
		lin := 0
		for i, a := range tiled {
			if g.op.Has(p.Axes[a].Name) {
				lin = lin*counts[i] + idx[i]
			}
		}
		return lin
	}

	// Each step's ops, with the buffers and views of the step, in the
	// order the views are named (loads, then the output), whatever the
	// order the ops are issued in.
	type stepOps struct {
		loads []*kernel.Op
		sub   *kernel.Op
		vrf   *kernel.Op // the epilogue operand's tile into the VRF
		main  []*kernel.Op
		store *kernel.Op
	}
	idx := make([]int, len(tiled))
	cur := func(g *tileGroup, list []string) string { return list[(g.loads-1)%len(list)] }
	steps := make([]stepOps, total)
	for step := range total {
		so := &steps[step]
		rem := step
		for i := len(tiled) - 1; i >= 0; i-- {
			idx[i] = rem % counts[i]
			rem /= counts[i]
		}
		loadedW := false
		for t := range 2 {
			g := groups[t]
			key := tileKey(g, idx)
			if key == g.last {
				continue
			}
			src, err := viewName(g, idx)
			if err != nil {
				return nil, err
			}
			g.last = key
			g.loads++
			loadedW = loadedW || t == b.w
			so.loads = append(so.loads, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToDM, Src: src, Dst: cur(g, g.bufs)})
		}
		gw, gx, gout := groups[b.w], groups[b.x], groups[TensorOut]
		if loadedW {
			so.sub = &kernel.Op{Context: kernel.CtxSub, Kind: kernel.OpChain, Stages: sub.stages(cur(gw, gw.bufs), cur(gw, gw.trf))}
		}
		// The K chunk of the step: the contracted tile loops are the
		// innermost (TileK).
		chunk := step % nk
		if chunk == 0 {
			gout.loads++
		}
		if ep != nil && chunk == 0 {
			// The operand's tile beside the output's: loaded with the
			// step's inputs, into the VRF by the sub context before the
			// main chain (one VRF tensor: the scheduler holds each load
			// until the chain before has read it, 002 L7069).
			// A broadcast operand's tile that the last output tile
			// used already is in the VRF.
			g := ep.g
			if key := tileKey(g, idx); key != g.last {
				src, err := viewName(g, idx)
				if err != nil {
					return nil, err
				}
				g.last = key
				g.loads++
				so.loads = append(so.loads, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToDM, Src: src, Dst: cur(g, g.bufs)})
				so.vrf = &kernel.Op{Context: kernel.CtxSub, Kind: kernel.OpChain, Stages: ep.stages(cur(g, g.bufs))}
			}
		}
		commit := cur(gout, gout.bufs)
		if cp != nil {
			commit = staging
		}
		if cr != nil && nk == 1 {
			// The tile's sums go to P; the cluster reduce finishes it.
			commit = clusterP
		}
		if nk == 1 {
			so.main = append(so.main, &kernel.Op{Context: kernel.CtxMain, Kind: kernel.OpChain,
				Stages: main.stagesTo(cur(gx, gx.bufs), cur(gw, gw.trf), commit, cr == nil)})
		} else {
			// Chunk 0 commits the running sum ps1; chunk k ≥ 1 commits ps0,
			// and the split reduce adds it to the running sum into the
			// other running sum, or, for the last chunk, casts and commits
			// the output tile.
			sums := partials[1:]
			if chunk == 0 {
				so.main = append(so.main, &kernel.Op{Context: kernel.CtxMain, Kind: kernel.OpChain,
					Stages: main.stagesTo(cur(gx, gx.bufs), cur(gw, gw.trf), sums[0], false)})
			} else {
				so.main = append(so.main, &kernel.Op{Context: kernel.CtxMain, Kind: kernel.OpChain,
					Stages: main.stagesTo(cur(gx, gx.bufs), cur(gw, gw.trf), partials[0], false)})
				last := chunk == nk-1
				dst := commit
				if !last || cr != nil {
					dst = sums[chunk%len(sums)]
				}
				so.main = append(so.main, &kernel.Op{Context: kernel.CtxMain, Kind: kernel.OpChain,
					Stages: sr.stages(partials[0], sums[(chunk-1)%len(sums)], dst, last && cr == nil)})
			}
		}
		if cr != nil && chunk == nk-1 {
			if clusterX == "" {
				// One DMA between the clusters' DMs (002 L2386-2389).
				so.main = append(so.main, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpDMToDM, Src: clusterP, Dst: clusterQ})
			} else {
				so.main = append(so.main,
					&kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToHBM, Src: clusterP, Dst: clusterX},
					&kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToDM, Src: clusterX, Dst: clusterQ})
			}
			so.main = append(so.main,
				&kernel.Op{Context: kernel.CtxMain, Kind: kernel.OpChain, Stages: cr.add.stages(clusterQ, "", cur(gout, gout.bufs), true)})
		}
		if cp != nil {
			so.main = append(so.main, &kernel.Op{Context: kernel.CtxMain, Kind: kernel.OpChain,
				Stages: cp.stages(staging, cur(gout, gout.bufs))})
		}
		if chunk != nk-1 {
			continue
		}
		dst, err := viewName(gout, idx)
		if err != nil {
			return nil, err
		}
		so.store = &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToHBM, Src: cur(gout, gout.bufs), Dst: dst}
	}
	// Issue order. One buffer: each step loads, computes and stores in
	// turn. Two buffers, software-pipelined (002 L7058-7068, L7087): the
	// loads of step k+1 are issued before the main chain of step k and
	// its TRF load after it, the store of step k after them, so that
	// the DMA and sub contexts work on the neighbouring steps while the
	// main context computes (the scheduler keeps program order, 002
	// L7044-7054, and the buffers alternate, so no hazard holds them).
	var ops []*kernel.Op
	add := func(o ...*kernel.Op) {
		for _, op := range o {
			if op != nil {
				ops = append(ops, op)
			}
		}
	}
	if !c.DoubleBuffer {
		for _, so := range steps {
			add(so.loads...)
			add(so.sub)
			add(so.vrf)
			add(so.main...)
			add(so.store)
		}
	} else {
		add(steps[0].loads...)
		add(steps[0].sub)
		for k, so := range steps {
			if k+1 < total {
				add(steps[k+1].loads...)
			}
			add(so.vrf)
			add(so.main...)
			if k+1 < total {
				add(steps[k+1].sub)
			}
			add(so.store)
		}
	}
	prog.Tensors = append(prog.Tensors, views...)
	// Declaration order: the input DM buffers, the TRF tensors, the output
	// DM buffers (as the Hello kernels declare them), the staging tensor of
	// a copied output.
	nIn := dmBufs(0) + dmBufs(1)
	prog.Tensors = append(prog.Tensors, dm[:nIn]...)
	prog.Tensors = append(prog.Tensors, trfs...)
	prog.Tensors = append(prog.Tensors, dm[nIn:]...)
	if ep != nil {
		prog.Tensors = append(prog.Tensors, ep.vrf)
	}
	prog.Ops = ops
	return prog, nil
}

// restrictTo returns e with the digits of the axes in ax only: the
// digits of other axes, and with them the padding, dropped (e itself when
// it has none). ok is false when e has a digit that steps no axis.
func restrictTo(e *mapping.Expr, ax []string) (r *mapping.Expr, ok bool) {
	fs, err := mapping.Factorize(e)
	if err != nil {
		return nil, false
	}
	var keep mapping.Factors
	dropped := false
	for _, f := range fs {
		switch {
		case f.Kind == mapping.FactorTerm && slices.Contains(ax, f.Axis):
			keep = append(keep, f)
		case f.Kind == mapping.FactorTerm:
			dropped = true
		case f.Kind != mapping.FactorPad:
			return nil, false
		}
	}
	if !dropped {
		return e, true
	}
	if len(keep) == 0 {
		return mapping.Identity(), true
	}
	return keep.Expr(), true
}

// epilogueOperand is the build of an epilogue's tensor operand
// (Problem.Operands): its tile group (views and DM buffers, one tile per
// output tile), and its VRF tensor, which the sub context fills from the
// tile's DM buffer in the accumulator's stream order (time, packet: 8 f32
// lanes) for the Float stage to read per position.
type epilogueOperand struct {
	g            *tileGroup
	vrf          *kernel.Tensor
	time, packet *mapping.Expr
}

// stages is the sub chain that moves DM buffer buf into the VRF: a fetch
// in f32 (the Float stage's type, 002 L4893-4900) along the accumulator's
// stream, collected and written to the VRF (002 L5066-5079).
func (e *epilogueOperand) stages(buf string) []*kernel.Stage {
	return []*kernel.Stage{
		{Kind: kernel.StBegin, Tensor: buf},
		{Kind: kernel.StFetch, DType: dtype.F32, Time: e.time, Packet: e.packet},
		{Kind: kernel.StCollect, Time: e.time, Packet: e.packet},
		{Kind: kernel.StToVRF, Tensor: e.vrf.Name},
	}
}
