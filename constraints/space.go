package constraints

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"tcpmap/model/dtype"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The mapspace of a binary contraction (issue §1).
//
// A candidate is a small value: which input is stationary in the TRF, and
// for every axis the factor placed at each level of the hardware, plus a
// handful of enumerated choices. It is built into a kernel program by Build
// after the manual's hand-written contractions (002 L307-525: the Hello dot
// product, GEMV and GEMM) and the batched matmul case study (002 L3710-3727):
//
//   - the stationary input W is loaded into the TRF in the sub context
//     (fetch → collect → to_trf, 002 L341-347), the other input X streams
//     in the main context (fetch → collect → align → contract → accumulate
//     → cast → commit, 002 L350-360); DMA moves both inputs HBM → DM and the
//     result DM → HBM (002 L338-339, L362), reading with broadcast where a DM
//     tensor is replicated over slices (docs/spec-decisions.md "DMA:
//     broadcast reads");
//   - output axes go to Slice (the slice mapping padded to 256, `1 # 256`,
//     `m![I / 32, J / 32]`, 002 L318, L483, its live slices spread over the
//     cluster's DMNs, build.go placeSlices), to Cluster (padded to 2,
//     002 L317), to Time, and the stationary operand's own axes also to Row
//     (`J % 8`, 002 L484);
//   - contracted axes go to Packet (64 bytes = mac_width: `K % 32` for bf16,
//     002 L4099) and Time (`K / 32`), reduced spatially by the tree and
//     temporally by the accumulator (002 L4384-4392, L4447-4448);
//   - tile loops over output axes repeat the whole chain when a tile's
//     tensors would not fit DM (512 KB per slice, 002 L138) or the TRF
//     (8 KB per Row, 002 L139).
//
// Within one axis the levels nest major to minor in the order Tile, Chip,
// Cluster, Slice, Time, Row, Packet: the Hello GEMM's J = 512 is
// Slice J / 32 (16), Time J / 8 % 4 (4), Row J % 8 (8) (002 L483-484,
// L503).

// Level is a level of the hardware an axis's factor can be placed at.
type Level uint8

// The levels, major to minor within an axis.
const (
	Tile    Level = iota // an outer tile loop of the whole program
	Chip                 // chips (002 L129)
	Cluster              // clusters of a chip (002 L130)
	Slice                // slices of a cluster (002 L131)
	Time                 // computation time steps of a slice (002 L147)
	Row                  // MAC rows of a slice (002 L132)
	Packet               // elements of one 64-byte computation packet (002 L147, L4099)
	NumLevels
)

var levelNames = [NumLevels]string{"tile", "chip", "cluster", "slice", "time", "row", "packet"}

// levelAbbrevs are the two-letter names Candidate.String prints.
var levelAbbrevs = [NumLevels]string{"tl", "ch", "cl", "sl", "tm", "ro", "pk"}

func (l Level) String() string {
	if l < NumLevels {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// PacketMode is how the Stream Adapter forms the 64-byte computation packet
// from the collect stream (002 L3916-3927).
type PacketMode uint8

// The packet modes.
const (
	// Single: two 32-byte flits per packet, collect_flits = 2
	// (the Hello dot product and GEMM, 002 L354-356, L516-518).
	Single PacketMode = iota
	// Dual: one 64-byte dual-channel flit, collect_flits = 1 (the Hello
	// GEMV, 002 L455-457; docs/spec-decisions.md "Aligner input of 64 bytes").
	Dual
	// Half: one 32-byte flit, the second half zero-padded, collect_flits = 1
	// (002 L3925-3927): half the MAC width, for contracted extents that no
	// full packet divides.
	Half
	NumPacketModes
)

var packetModeNames = [NumPacketModes]string{"single", "dual", "half"}

func (m PacketMode) String() string {
	if m < NumPacketModes {
		return packetModeNames[m]
	}
	return fmt.Sprintf("PacketMode(%d)", uint8(m))
}

// PacketContent is what the 64-byte computation packet holds.
type PacketContent uint8

// The packet contents.
const (
	// PacketContracted: contracted axes, reduced by the tree
	// (`contract::<m![1]>()`, the Hello kernels, 002 L357, L518).
	PacketContracted PacketContent = iota
	// PacketColumns: output axes of the streamed operand (its free or batch
	// axes), one product per lane; the TRF reads one weight per Row and
	// broadcasts it over the window (002 L4100-4105), the tree keeps every
	// column (depth 0) and the contracted axes are all in Time, reduced by
	// the accumulator (the batched matmul's "V vectorized" and "N x M tiled"
	// mappings, 002 L3721-3734). When no full 64-byte packet divides the
	// contracted axes (Space.PartialReduce), the packet may also hold
	// contracted axes innermost: the tree sums those Packet % 2^n at depth
	// n and keeps the columns, Packet / 2^n (002 L4392; the partial
	// reduction `contract::<m![K % 16 / 4]>()`, 002 L4455-4476), the rest
	// of the contracted axes are in Time. An einsum that contracts a short
	// axis, like RoPE's f = 2 (002 L8279-L8283), gets full packets so.
	PacketColumns
	NumPacketContents
)

func (k PacketContent) String() string {
	switch k {
	case PacketContracted:
		return "contracted"
	case PacketColumns:
		return "columns"
	}
	return fmt.Sprintf("PacketContent(%d)", uint8(k))
}

// Broadcast says how the streamed operand is repeated along the stationary
// operand's own axes that sit in Time.
type Broadcast uint8

// The broadcast places.
const (
	// BcastFetch re-reads the streamed operand: the axes are in the fetch
	// Time (a stride-0 read, `J / 8 % 4` in the Hello GEMM's fetch,
	// 002 L515).
	BcastFetch Broadcast = iota
	// BcastAlign repeats each collected packet in the Stream Adapter: the
	// axes are the innermost tiling axes of the computation Time
	// (002 L3937-3946).
	BcastAlign
	NumBroadcasts
)

func (b Broadcast) String() string {
	switch b {
	case BcastFetch:
		return "fetch"
	case BcastAlign:
		return "align"
	}
	return fmt.Sprintf("Broadcast(%d)", uint8(b))
}

// Layout is the order of a DM tensor's element mapping.
type Layout uint8

// The DM layouts.
const (
	// LayoutHBM keeps the HBM layout's axis order, so the DMA moves long
	// contiguous runs (002 L2425-2427).
	LayoutHBM Layout = iota
	// LayoutCompute is the order the chain reads (fetch) or writes (commit).
	LayoutCompute
	// LayoutCopy (the output only) commits the accumulator's output in
	// compute order to a staging DM tensor, then a main-context chain
	// begin → fetch → collect → commit rewrites it in the HBM layout's
	// order, so that the DMA to HBM moves long runs. The fetch gathers
	// the output's 32-byte flits in that order with the main context's
	// small fetch sizes (1 to 32 bytes, 002 L1757-1758), the commit writes
	// them whole (002 L2238-2249): the manual's fetch-commit axis
	// permutation (002 L7612-7625; "committed data need not be contiguous
	// in flit time order", L7700). It is enumerated where the
	// accumulator cannot write the output's HBM order (Space.CopiesOutput).
	LayoutCopy
	NumLayouts
)

func (l Layout) String() string {
	switch l {
	case LayoutHBM:
		return "hbm"
	case LayoutCompute:
		return "compute"
	case LayoutCopy:
		return "copy"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// Accumulation is the Reducer's AccumulationKind (002 L4447-4492).
type Accumulation uint8

// The accumulation kinds.
const (
	AccInterleaved Accumulation = iota // AccumulationKind::Interleaved
	AccSequential                      // AccumulationKind::Sequential
	NumAccumulations
)

// Kind returns the kernel IR's spelling.
func (a Accumulation) Kind() kernel.AccumulationKind {
	if a == AccSequential {
		return kernel.Sequential
	}
	return kernel.Interleaved
}

// Tensor indices of Candidate.Layout.
const (
	TensorIn0 = iota
	TensorIn1
	TensorOut
	NumTensors
)

// NoAxis marks an unused entry of Candidate.Order and TileOrder.
const NoAxis = 0xFF

// Candidate is one point of the mapspace. It is a comparable value of
// small integers, cheap to enumerate, to hash and to encode as SAT literals:
// each field has a finite domain (Space.Domain).
type Candidate struct {
	// Stationary is the input (0 or 1) held in the TRF.
	Stationary uint8
	// Content is what the computation packet holds.
	Content PacketContent
	// Mode is the computation packet's form.
	Mode PacketMode
	// Bcast is where the streamed operand is repeated along the stationary
	// operand's free axes.
	Bcast Broadcast
	// Acc is the accumulation kind. With a contracted packet only
	// Interleaved is enumerated: the contract keeps one column, which
	// Sequential would pad to 8 output elements (002 L4490-4492).
	Acc Accumulation
	// Layout is the DM element order of in0, in1 and the output.
	Layout [NumTensors]Layout
	// DoubleBuffer alternates tiles between two DM buffers and the two TRF
	// halves (002 L4156-4158).
	DoubleBuffer bool
	// Switch distributes the streamed operand over the ring of slices that
	// share it — the slices the stationary operand's free axes split — and
	// broadcasts it to every slice of the ring through the Switch Engine
	// (Broadcast01, 002 L3139-3165; the Hello GEMV's vector, 002
	// L382-399): each slice's DM holds 1/ring of the streamed tile
	// instead of a whole copy, and HBM is read once per cluster instead
	// of once per slice (docs/spec-decisions.md "DMA: broadcast reads").
	// The ring's slices take a block of ring positions of the streamed
	// operand's fetch Time, the innermost above its innermost HBM axis
	// (Space.switchBlock), which the switch moves back into Time
	// (time0, 002 L3150-3157). The switch costs
	// ring × input time × flits per packet (002 L3524), as many packets
	// a slice computes.
	Switch bool
	// Split[a][l] is the factor of axis a placed at level l; the product
	// over the levels is the axis size.
	Split [MaxAxes][NumLevels]int32
	// Order lists axis indices in computation Time order, outermost first;
	// axes with one time step are left out; unused entries are noAxis.
	Order [MaxAxes]uint8
	// TileOrder lists the tiled axes, outermost loop first; unused entries
	// are noAxis.
	TileOrder [MaxAxes]uint8
	// Digits is each axis's digit order (DigitOrder): how its digits nest,
	// canonical for its factors (CanonicalOrder). The zero order nests
	// tile > chip > cluster > slice > time > row > packet. Three other
	// orders are named choices of their own, each with a use recorded in
	// docs/spec-decisions.md:
	//
	//   - a Row digit above its Time digit (RowAbove: `J / 4 % 8` on Row,
	//     `J % 4` in Time, as the vendor's projection kernels map Q),
	//     rather than below it (`J / 8 % 4` in Time, `J % 8` on Row, the
	//     Hello GEMM's, 002 L483-484, L503);
	//   - Cluster and Slice digits below the Time digit and above the Row
	//     and Packet digits (DealtOut): the clusters and slices are dealt
	//     the axis a chunk at a time (`I / 4 % 8` in Time, `I % 4` on
	//     Slice for I = 32 over 4 slices), so that neighbouring slices'
	//     DMAs, on every DMN of both clusters, read neighbouring HBM
	//     addresses at once, in the same DRAM rows, where blocks a share
	//     apart fall in different rows of the same banks (002 L2710-2716,
	//     L2989);
	//   - a Cluster digit below its Slice digit (ClusterBelow: `I % 2` on
	//     Cluster, `I / 2` on Slice for I = 16 over 2 clusters of 8
	//     slices): the two clusters' DMAs stream neighbouring blocks.
	//
	// Which orders an axis may take is the space's: the named choices
	// where each is open (Space.rowOrderOpen, dealOpen, clusterOrderOpen),
	// or with Space.AllOrders every order of the axis's levels
	// (Space.axisOrders).
	Digits [MaxAxes]DigitOrder
}

// ClusterBelow reports whether axis a's Cluster digit sits below its
// Slice digit, both factors above 1.
func (c *Candidate) ClusterBelow(a int) bool {
	return c.Factor(a, Cluster) > 1 && c.Factor(a, Slice) > 1 && c.below(a, Cluster, Slice)
}

// RowAbove reports whether axis a's Row digit sits above its Time digit,
// both factors above 1.
func (c *Candidate) RowAbove(a int) bool {
	return c.Factor(a, Row) > 1 && c.Factor(a, Time) > 1 && c.below(a, Time, Row)
}

// DealtOut reports whether axis a's Cluster or Slice digit sits below its
// Time digit, the factors above 1.
func (c *Candidate) DealtOut(a int) bool {
	return c.Factor(a, Time) > 1 && (c.Factor(a, Cluster) > 1 && c.below(a, Cluster, Time) ||
		c.Factor(a, Slice) > 1 && c.below(a, Slice, Time))
}

// SetNamedOrder sets axis a's order to the named choices' (Digits):
// its Row digit above its Time digit (row), its Cluster and Slice digits
// dealt out below it (dealt), its Cluster digit below its Slice digit
// (clusterInner); canonical for c's factors.
func (c *Candidate) SetNamedOrder(a int, row, dealt, clusterInner bool) {
	c.Digits[a] = c.CanonicalOrder(a, legacyOrder(row, dealt, clusterInner))
}

// PlainOrders sets every axis's order to the zero order.
func (c *Candidate) PlainOrders() { c.Digits = [MaxAxes]DigitOrder{} }

// order returns the used prefix of an order array.
func order(o [MaxAxes]uint8) []int {
	var out []int
	for _, a := range o {
		if a == NoAxis {
			break
		}
		out = append(out, int(a))
	}
	return out
}

// TimeOrder returns the axes of the computation Time, outermost first.
func (c *Candidate) TimeOrder() []int { return order(c.Order) }

// Tiles returns the tiled axes, outermost loop first.
func (c *Candidate) Tiles() []int { return order(c.TileOrder) }

// Factor returns Split[a][l].
func (c *Candidate) Factor(a int, l Level) int { return int(c.Split[a][l]) }

// Below returns the product of axis a's factors at levels minor to l in
// its digit order (Digits): the coordinate stride of its level-l digit.
func (c *Candidate) Below(a int, l Level) int {
	d := c.Digits[a]
	p := d.Pos(l)
	n := 1
	for k := Level(0); k < NumLevels; k++ {
		if d.Pos(k) > p {
			n *= c.Factor(a, k)
		}
	}
	return n
}

// String prints the candidate compactly: the stationary input, then each
// axis's non-unit factors, the time order and the choices.
func (c *Candidate) String(p *Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "trf=%s", p.In[c.Stationary].Name)
	for a, ax := range p.Axes {
		fmt.Fprintf(&b, " %s[", ax.Name)
		first := true
		for l := Level(0); l < NumLevels; l++ {
			if f := c.Factor(a, l); f != 1 {
				if !first {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%s%d", levelAbbrevs[l], f)
				first = false
			}
		}
		b.WriteByte(']')
	}
	b.WriteString(" order=")
	for i, a := range c.TimeOrder() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Axes[a].Name)
	}
	if t := c.Tiles(); len(t) > 0 {
		b.WriteString(" tiles=")
		for i, a := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.Axes[a].Name)
		}
		if c.DoubleBuffer {
			b.WriteString(" double")
		}
	}
	// The orders: the named choices' lists (an axis in several when its
	// order combines them), then any other order in full.
	var rows, dealt, inner, other []string
	for a, ax := range p.Axes {
		r, d, ci, ok := c.NamedOrder(a)
		switch {
		case !ok:
			other = append(other, ax.Name+":"+c.OrderText(a))
			continue
		case r:
			rows = append(rows, ax.Name)
		}
		if d {
			dealt = append(dealt, ax.Name)
		}
		if ci {
			inner = append(inner, ax.Name)
		}
	}
	if len(rows) > 0 {
		b.WriteString(" rows-outer=" + strings.Join(rows, ","))
	}
	if len(dealt) > 0 {
		b.WriteString(" dealt-out=" + strings.Join(dealt, ","))
	}
	fmt.Fprintf(&b, " %s bcast=%s layout=%s/%s/%s", c.Mode, c.Bcast, c.Layout[0], c.Layout[1], c.Layout[2])
	if c.Switch {
		b.WriteString(" switch")
	}
	// Last, so that a candidate's text is a prefix of (and sorts before)
	// its form with clusters inner or another order, which ties it in cost
	// where the streams price alike.
	if len(inner) > 0 {
		b.WriteString(" clusters-inner=" + strings.Join(inner, ","))
	}
	if len(other) > 0 {
		b.WriteString(" digits=" + strings.Join(other, ","))
	}
	return b.String()
}

// Space is the mapspace of one Problem on one hardware spec.
type Space struct {
	P    *Problem
	Spec *engines.Spec
	// Library makes the space the vendor's libraries' rather than the
	// manual's hardware (`tcpmap plan --target visa-0.1|opt-0.6` sets it):
	// it leaves out the candidates whose collect packet is one 64-byte
	// dual-channel flit (PacketMode Dual), as the libraries collect
	// 32-byte flits only (docs/spec-decisions.md "Collect packet: 32-byte
	// flits in the libraries, 64-byte dual-channel flits in the manual"),
	// and a cluster reduce exchanges its partial sums through HBM, as the
	// libraries' DM-to-DM DMA keeps the Cluster mapping
	// (docs/spec-decisions.md "Cluster reduce").
	Library bool
	// ebits is the input element size in bits.
	ebits int
	// rows, slices, clusters are the hardware counts; dmns the DMNs of a
	// cluster (002 L2867).
	rows     []int
	slices   int
	clusters int
	dmns     int
	// maxTiles bounds the tiles of a tiled candidate.
	maxTiles int
	// hbm lists each tensor's axes in its HBM layout's order, major first.
	hbm [NumTensors][]int
	// plain[t] is set when tensor t's HBM layout holds each of its axes
	// whole, once (row-major in hbm[t]'s order): its contiguous runs are
	// then known from the axes' factors (bound.go).
	plain [NumTensors]bool
	// partial is set when a packet of columns may hold contracted axes
	// (PartialReduce).
	partial bool
	// splitK is set when contracted axes may be split across slices
	// (SplitK).
	splitK bool
	// tileK is set when contracted axes may be tiled (TileK).
	tileK bool
	// clusterK is set when contracted axes may be split across the
	// clusters (ClusterK).
	clusterK bool
	// rowsOuter is set when a Row digit may sit above its axis's Time
	// digit (RowsOuter).
	rowsOuter bool
	// clustersInner is set when a Cluster digit may sit below its axis's
	// Slice digit (Candidate.ClusterBelow).
	clustersInner bool
	// dealsOut is set when a Slice digit may sit below its axis's Time
	// digit (DealsOut).
	dealsOut bool
	// allOrders is set when every axis may take every order of its
	// digits (AllOrders).
	allOrders bool
	// posBytes[t][a] is the bytes one position of axis a spans in tensor
	// t's HBM layout (the axes inner to it whole; 0: t lacks a), and
	// innerAxes[t][a] those inner axes, for a plain layout
	// (dealOpen); unitBytes is the HBM access unit.
	posBytes  [NumTensors][MaxAxes]int
	innerAxes [NumTensors][MaxAxes]uint8
	unitBytes int
	// copyOut is set when the output may be rewritten in HBM order by a
	// copy chain (CopiesOutput).
	copyOut bool
	// layouts tells which layout choices make distinct programs (nil:
	// every choice is listed, none copied).
	layouts LayoutOracle
	// capped counts the skeletons that did not fit untiled and had no
	// fitting tiling within maxTiles though more tiles were possible.
	capped *atomic.Int64
}

// CopiesOutput reports whether the space holds candidates whose output
// goes through a DM copy in HBM order (LayoutCopy): only when the
// innermost axis of the output's HBM layout has fewer elements than the
// accumulator's output packet (8, 002 L4447-4448, L4490-4492), like
// RoPE's rotated pair (Two = 2, 002 L8283). The commit writes that packet
// innermost (002 L359-360), Row # 8 or the columns % 8, so such an axis
// runs contiguously in DM only where the packet also holds the HBM
// layout's next axes; otherwise every output DMA run is that axis alone,
// a few bytes, each a partial HBM write (002 L2983-2985). Elsewhere the
// output's DMA runs are at least a packet long and the space leaves the
// copy out.
func (s *Space) CopiesOutput() bool { return s.copyOut }

// PartialReduce reports whether the space's packets of columns may also
// hold contracted axes, summed by the tree at a depth below the full one
// (002 L4392, L4455-4470): only when no full 64-byte packet divides the
// contracted axes, so that at most a half-width contracted packet exists
// (Half). Elsewhere a full contracted packet multiplies as many elements a
// cycle and leaves the accumulator one column per Row instead of several,
// so the space leaves the mixed packets out (a canonical choice, as for
// Half).
func (s *Space) PartialReduce() bool { return s.partial }

// SplitK reports whether the space splits contracted axes across the
// slices of a cluster (split-K): each slice contracts its share into
// partial sums, and the Vector Engine's Inter-Slice Block adds those of
// the slices that share an output (002 L4580, L6583-6755, L7158-7161).
// Only with an f32 or i32 accumulator, the Inter-Slice Block's types
// (002 L6735). A split candidate does not switch its stream (the ring and
// the reduction group would both want the innermost slices) and does not
// copy its output (LayoutCopy).
func (s *Space) SplitK() bool { return s.splitK }

// WithSplitK returns a copy of s whose contracted axes split across
// slices or not (tests of properties that do not need split-K candidates
// keep their spaces small so).
func (s *Space) WithSplitK(on bool) *Space {
	t := *s
	t.splitK = on && s.splitK
	return &t
}

// TileK reports whether the space tiles contracted axes (K chunks): when
// a Row cannot hold the stationary operand's contracted axes whole (8 KB
// × 8 / Row::SIZE, 002 L4118, L4151-4155), a tile loop over K chunks
// reloads the TRF with each chunk; each chunk's main chain commits its
// partial sums (the f32 or i32 accumulator type, 002 L4391) to DM, and a
// split reduce adds them: an interleaved fetch of the running sum and the
// new partial sums, unzipped into a pair and added by the Vector Engine
// (002 L7151-7177, L1843-1867, L5154-5178), the last one cast to the
// output type and committed. The K chunks are the innermost tile loops (an
// output tile's sums complete before the next tile), at most MaxKTiles of
// them, not combined with split-K (SplitK) or a copied output
// (LayoutCopy).
func (s *Space) TileK() bool { return s.tileK }

// WithTileK returns a copy of s whose contracted axes are tiled or not.
func (s *Space) WithTileK(on bool) *Space {
	t := *s
	t.tileK = on && s.tileK
	return &t
}

// ClusterK reports whether the space splits contracted axes across the
// clusters of the chip: each cluster contracts its share of K into f32 or
// i32 partial sums for the whole output, and the cluster reduce adds them
// (002 L7382-7610: a DMA, then the partial sums added by the Vector
// Engine, as the split reduce does, 002 L7151-7177). The DMA gives each
// cluster both partial sums of half the output (the halves of its
// outermost Time digit), so that the two clusters add, cast and store one
// half each (a reduce-scatter, 002 L7400-7440): one DMA between the
// clusters' DMs on the manual's hardware (002 L2386-2389), through HBM
// for the libraries (Library). Only with an f32 or i32 accumulator (the Vector Engine's
// AddF / AddFxp), not combined with split-K (SplitK) or a copied output
// (LayoutCopy).
func (s *Space) ClusterK() bool { return s.clusterK }

// WithClusterK returns a copy of s whose contracted axes split across
// the clusters or not.
func (s *Space) WithClusterK(on bool) *Space {
	t := *s
	t.clusterK = on && s.clusterK
	return &t
}

// RowsOuter reports whether the space holds both orders of a stationary
// free axis's Row and Time digits (Candidate.RowAbove): with the Row digit
// above, each Row's weights are a contiguous run of the axis (the TRF load
// reads the DM tensor in order, and the vendor's projection kernels map Q
// so, `Q / 4 % 8` on Row and `Q % 4` in Time); below, neighbouring Rows
// hold neighbouring positions, so that the accumulator's Row # 8 packet
// (002 L4447-4448) is a contiguous run of the output.
func (s *Space) RowsOuter() bool { return s.rowsOuter }

// WithRowsOuter returns a copy of s with or without the candidates whose
// Row digits sit above their Time digits.
func (s *Space) WithRowsOuter(on bool) *Space {
	t := *s
	t.rowsOuter = on && s.rowsOuter
	return &t
}

// rowOrderOpen reports whether axis a of c may take either order of its
// Row and Time digits: a stationary operand's free axis with both factors
// above 1 (otherwise the two orders are one mapping).
func (s *Space) rowOrderOpen(c *Candidate, a int) bool {
	return s.rowsOuter && s.Role(a, c.Stationary) == RoleFW && c.Factor(a, Row) > 1 && c.Factor(a, Time) > 1
}

// DealsOut reports whether the space holds both orders of an output
// axis's Cluster and Slice digits and its Time digit (Candidate.DealtOut):
// above, each slice holds a contiguous block of the axis; below, the
// clusters and slices are dealt it a chunk at a time, so that the DMNs
// serving neighbouring slices stream neighbouring HBM addresses.
func (s *Space) DealsOut() bool { return s.dealsOut }

// WithDealsOut returns a copy of s with or without the candidates whose
// Cluster and Slice digits sit below their Time digits.
func (s *Space) WithDealsOut(on bool) *Space {
	t := *s
	t.dealsOut = on && s.dealsOut
	return &t
}

// ClustersInner reports whether the space holds both orders of an axis's
// Cluster and Slice digits (Candidate.ClusterBelow).
func (s *Space) ClustersInner() bool { return s.clustersInner }

// WithClustersInner returns a copy of s with or without the candidates
// whose Cluster digits sit below their Slice digits.
func (s *Space) WithClustersInner(on bool) *Space {
	t := *s
	t.clustersInner = on && s.clustersInner
	return &t
}

// AllOrders reports whether the space holds every order of each axis's
// digits (Candidate.Digits), its Tile digit's included, rather than the zero
// order and the named choices (RowsOuter, DealsOut, ClustersInner) where
// they are open. Off by default (docs/spec-decisions.md "Digit order:
// every order").
func (s *Space) AllOrders() bool { return s.allOrders }

// WithAllOrders returns a copy of s with every order of each axis's
// digits, or with the named choices only.
func (s *Space) WithAllOrders(on bool) *Space {
	t := *s
	t.allOrders = on
	return &t
}

// orderOpen says why axis a of c may not take its digit order, nil when it
// may.
func (s *Space) orderOpen(c *Candidate, a int) error {
	d := c.Digits[a]
	if d == 0 {
		return nil
	}
	if s.allOrders {
		return nil
	}
	r, dl, ci, ok := c.NamedOrder(a)
	switch {
	case !ok:
		return fmt.Errorf("digit order %s is none of the named choices (every order is in the space with all digit orders)", c.OrderText(a))
	case r && !s.rowOrderOpen(c, a):
		return fmt.Errorf("its Row digit above its Time digit, but only a stationary operand's free axis with Row and Time factors has the choice")
	case ci && !s.clusterOrderOpen(c, a):
		return fmt.Errorf("its Cluster digit below its Slice digit, but only an axis that is not contracted, with Cluster and Slice factors, without the switch, has the choice")
	case dl && !s.dealOpen(c, a):
		return fmt.Errorf("its Cluster and Slice digits below its Time digit, but only an output axis other than the stationary operand's free axes, with Time and Cluster or Slice factors, without the switch, whose chunks move whole HBM units, has the choice")
	}
	return nil
}

// axisOrders returns the orders of axis a's digits the space holds with
// AllOrders: every order of its levels with factors above 1, the zero
// order first, then in lexicographic order of the levels.
func (s *Space) axisOrders(c *Candidate, a int) []DigitOrder {
	var lv []int
	for l := Level(0); l < NumLevels; l++ {
		if c.Factor(a, l) > 1 {
			lv = append(lv, int(l))
		}
	}
	var out []DigitOrder
	permute(lv, func(ord []int) bool {
		seq := make([]Level, len(ord))
		for i, l := range ord {
			seq[i] = Level(l)
		}
		out = append(out, OrderOf(seq...))
		return true
	})
	return out
}

// clusterOrderOpen reports whether axis a of c may take either order of
// its Cluster and Slice digits: an axis that is not contracted (a
// contracted axis's Cluster digit is the cluster reduce's, ClusterK),
// with Cluster and Slice factors above 1 (otherwise the two orders are
// one mapping), in a candidate without the switch (whose rings hold
// slice blocks of the streamed operand, Space.SwitchBlock). Each slice
// holds a block (or dealt chunks) of the same size either way, so the
// runs and HBM units are those of the other order.
func (s *Space) clusterOrderOpen(c *Candidate, a int) bool {
	return s.clustersInner && !c.Switch && c.Factor(a, Cluster) > 1 && c.Factor(a, Slice) > 1 &&
		s.Role(a, c.Stationary) != RoleC
}

// dealOpen reports whether axis a of c may take either order of its
// Cluster and Slice digits and its Time digit: an output axis other than
// the stationary operand's free axes (whose Slice digit is the switch's
// ring or sits beside their Row digit), with a Time factor and a Cluster
// or Slice factor above 1 (otherwise the two orders are one mapping), its
// Row digit below its Time digit, in a candidate without the switch
// (whose streamed operand's DM Slice holds a block of its Time digit,
// Space.SwitchBlock), and whose chunk — its positions below the Slice
// digit, with the axes inner to it in HBM — moves whole 256-byte HBM
// units in every tensor that holds it (002 L2980-2985): a shorter chunk
// splits units between slices, a partial read or write each (a
// read-modify-write at ×50, 002 L2985), where the blocks keep them whole.
// A tensor whose inner axes are split across slices or clusters already
// has such runs, whichever the order.
func (s *Space) dealOpen(c *Candidate, a int) bool {
	if !s.dealsOut || c.Switch || c.Factor(a, Cluster)*c.Factor(a, Slice) == 1 || c.Factor(a, Time) == 1 {
		return false
	}
	if r := s.Role(a, c.Stationary); r != RoleFX && r != RoleB {
		return false
	}
	chunk := c.Factor(a, Row) * c.Factor(a, Packet)
	for t := range NumTensors {
		n := s.posBytes[t][a]
		if n == 0 || !s.plain[t] {
			continue
		}
		split := false
		for b := range s.P.Axes {
			if s.innerAxes[t][a]&(1<<uint(b)) != 0 && c.Factor(b, Cluster)*c.Factor(b, Slice) > 1 {
				split = true
			}
		}
		if !split && (chunk*n)%s.unitBytes != 0 {
			return false
		}
	}
	return true
}

// ClusterSplit returns the clusters c's partial sums are spread over: the
// product of the contracted axes' Cluster factors (1: not split).
func (s *Space) ClusterSplit(c *Candidate) int { return s.contracted(c, Cluster) }

// MaxKTiles bounds a candidate's K chunks (the product of its contracted
// axes' Tile factors): each chunk past the first adds a split-reduce pass
// over the output tile, and eight chunks let a Row of 8 KB hold a
// contracted axis of 32768 bf16 (FFN widths such as 28672, 002 L7988).
const MaxKTiles = 8

// KTiles returns c's K chunks: the product of the contracted axes' Tile
// factors (1: K is not tiled).
func (s *Space) KTiles(c *Candidate) int { return s.contracted(c, Tile) }

// contracted is the product of the contracted axes' factors at level l.
func (s *Space) contracted(c *Candidate, l Level) int {
	r := 1
	for a, ax := range s.P.Axes {
		if ax.Class == Contracted {
			r *= c.Factor(a, l)
		}
	}
	return r
}

// Split returns the slices each output's partial sums are spread over:
// the product of the contracted axes' Slice factors (1: not split).
func (s *Space) Split(c *Candidate) int { return s.contracted(c, Slice) }

// MaxTiles is the bound on a tiled candidate's tiles the space enumerates
// with.
func (s *Space) MaxTiles() int { return s.maxTiles }

// DefaultMaxTiles is the default bound on a candidate's tiles: each tile
// repeats the program's DMA moves and chains. 512 lets every workload in
// workloads/ have candidates (workloads/gemm-4k.yaml's need 128 tiles and
// more: with K untiled, a slice holds one 8 KB K-row per TRF Row,
// 002 L139) while staying far below the reader's loop limit.
const DefaultMaxTiles = 512

// LayoutOracle is what the kernel builder tells the enumerator about a
// candidate's DM layouts: the layout choices that build the same program
// are one choice (Enumerate's canonical forms).
type LayoutOracle interface {
	// LayoutsDiffer reports whether tensor t's two DM layout orders
	// (LayoutHBM, LayoutCompute) build different DM tensors under c.
	LayoutsDiffer(c *Candidate, t int) bool
	// Copyable reports whether c's output may go through a DM copy in HBM
	// order (LayoutCopy) that differs from both other layouts.
	Copyable(c *Candidate) bool
}

// SetLayoutOracle makes o decide the enumerator's layout choices. It is
// set once, before the space is searched.
func (s *Space) SetLayoutOracle(o LayoutOracle) { s.layouts = o }

// NewSpace returns the mapspace of p.
func NewSpace(p *Problem, spec *engines.Spec) (*Space, error) {
	if p == nil || spec == nil {
		return nil, fmt.Errorf("search: nil problem or spec")
	}
	if p.Chips != 1 {
		return nil, fmt.Errorf("%s: chips: %d; the mapspace maps one chip (Chip factors other than 1 are not enumerated yet)", p.File, p.Chips)
	}
	s := &Space{P: p, Spec: spec, ebits: p.In[0].DType.SizeBits(), maxTiles: DefaultMaxTiles, capped: new(atomic.Int64),
		rows: spec.Contraction.Rows.Value, slices: spec.Cluster.Slices.Value, clusters: spec.Chip.Clusters.Value,
		dmns: spec.Cluster.DMNs.Value}
	if s.ebits <= 0 {
		return nil, fmt.Errorf("%s: input type %s has no size", p.File, p.In[0].DType)
	}
	for t, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		var err error
		if s.hbm[t], err = hbmOrder(p, o); err != nil {
			return nil, err
		}
		s.plain[t] = plainLayout(p, o)
		// The bytes of one position of each axis of a plain layout with
		// the axes inner to it whole, and those axes (dealOpen).
		bytes := o.DType.SizeBits() / 8
		var inner uint8
		for _, a := range slices.Backward(s.hbm[t]) {
			s.posBytes[t][a], s.innerAxes[t][a] = bytes, inner
			bytes *= p.Axes[a].Size
			inner |= 1 << uint(a)
		}
	}
	s.unitBytes = spec.HBM.AccessUnitBytes.Value // 256 (002 L2980, L2983)
	var contracted []int
	for a, ax := range p.Axes {
		if ax.Class == Contracted {
			contracted = append(contracted, a)
		}
	}
	whole := func(a int) int { return p.Axes[a].Size }
	s.partial = len(contracted) > 0 && len(packetSplits(contracted, whole, s.PacketElems(Single))) == 0
	// The Inter-Slice Block adds f32 and i32 partial sums (XSR-R1,
	// 002 L6735), the accumulator types (002 L4391).
	s.splitK = len(contracted) > 0 && (p.Acc == dtype.F32 || p.Acc == dtype.I32)
	// The split reduce adds f32 and i32 partial sums (the Vector Engine's
	// AddF / AddFxp, 002 L4826, L4893, in pair mode, L5154-5178).
	s.tileK = s.splitK
	// The cluster reduce adds them too, with a DMA between the clusters
	// (ClusterK), when each cluster can take a share of the output.
	outSize := 1
	for _, name := range p.Out.Axes {
		outSize *= p.Axes[p.axis(name)].Size
	}
	s.clusterK = s.splitK && s.clusters > 1 && outSize%s.clusters == 0
	s.rowsOuter = true
	s.dealsOut = true
	s.clustersInner = true
	if p.EpilogueVector() {
		// The epilogue takes the main chain's Vector Engine pass, which
		// split-K's Inter-Slice reduce and the K chunks' split reduce
		// need too: not combined yet (the candidates are left out, not
		// built wrong).
		s.splitK, s.tileK, s.clusterK = false, false, false
	}
	// The innermost axis with more than one coordinate (a size-1 axis has
	// no digit in the layout and sorts last in hbm).
	for _, a := range slices.Backward(s.hbm[TensorOut]) {
		if n := p.Axes[a].Size; n > 1 {
			s.copyOut = n < spec.Reducer.OutputBusElements.Value
			break
		}
	}
	return s, nil
}

// Role is an axis's class relative to the stationary choice.
type Role uint8

const (
	RoleC  Role = iota // contracted
	RoleB              // batch
	RoleFX             // free axis of the streamed operand X
	RoleFW             // free axis of the stationary operand W
	NumRoles
)

// Role returns axis a's role when input s is stationary.
func (s *Space) Role(a int, stationary uint8) Role {
	switch s.P.Axes[a].Class {
	case Contracted:
		return RoleC
	case Batch:
		return RoleB
	case Free0:
		if stationary == 0 {
			return RoleFW
		}
		return RoleFX
	}
	if stationary == 1 {
		return RoleFW
	}
	return RoleFX
}

// PacketElems returns the contracted elements of one computation packet
// in mode m: 64 bytes (mac_width, 002 L4099) or, in Half mode, one 32-byte
// flit (002 L3011).
func (s *Space) PacketElems(m PacketMode) int {
	bytes := s.Spec.Stream.MACWidthBytes.Value
	if m == Half {
		bytes = s.Spec.Stream.FlitBytes.Value
	}
	return bytes * 8 / s.ebits
}

// divisors returns the divisors of n in increasing order.
func divisors(n int) []int {
	var lo, hi []int
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			lo = append(lo, d)
			if d != n/d {
				hi = append(hi, n/d)
			}
		}
	}
	for i := len(hi) - 1; i >= 0; i-- {
		lo = append(lo, hi[i])
	}
	return lo
}

// Check reports whether c is a well-formed point of the space: factors
// multiply to the axis sizes, each class uses only its levels, the counts
// fit the hardware, orders are permutations of the right axes. It does not
// decide legality (engines.Lower does) and does not price anything.
func (s *Space) Check(c *Candidate) error {
	p := s.P
	if c.Stationary > 1 {
		return fmt.Errorf("stationary input %d, want 0 or 1", c.Stationary)
	}
	if c.Mode >= NumPacketModes || c.Bcast >= NumBroadcasts || c.Content >= NumPacketContents {
		return fmt.Errorf("packet mode %d, content %d or broadcast %d out of range", c.Mode, c.Content, c.Bcast)
	}
	if c.Acc >= NumAccumulations {
		return fmt.Errorf("accumulation kind %d out of range", c.Acc)
	}
	for a, d := range c.Digits {
		if a >= len(p.Axes) && d != 0 {
			return fmt.Errorf("unused axis slot %d has digit order %#x", a, uint32(d))
		}
		if !d.valid() {
			return fmt.Errorf("digit order %#x of axis slot %d is not an order of the levels", uint32(d), a)
		}
	}
	for t, l := range c.Layout {
		if l >= NumLayouts {
			return fmt.Errorf("layout %d out of range", l)
		}
		if l == LayoutCopy && t != TensorOut {
			return fmt.Errorf("layout copy of input %d: only the output is copied", t)
		}
	}
	slice, cluster, row, packet := 1, 1, 1, 1
	for a := range MaxAxes {
		for l := Level(0); l < NumLevels; l++ {
			f := c.Factor(a, l)
			if a >= len(p.Axes) {
				if f != 0 && f != 1 {
					return fmt.Errorf("unused axis slot %d has factor %d", a, f)
				}
				continue
			}
			if f < 1 {
				return fmt.Errorf("axis %s: %s factor %d", p.Axes[a].Name, l, f)
			}
		}
		if a >= len(p.Axes) {
			continue
		}
		ax := p.Axes[a]
		prod := 1
		for l := Level(0); l < NumLevels; l++ {
			prod *= c.Factor(a, l)
		}
		if prod != ax.Size {
			return fmt.Errorf("axis %s: factors multiply to %d, size %d", ax.Name, prod, ax.Size)
		}
		r := s.Role(a, c.Stationary)
		for l := Level(0); l < NumLevels; l++ {
			if f := c.Factor(a, l); f != 1 && !s.opens(r, l, c.Content) {
				return fmt.Errorf("axis %s (%s): a %s axis takes no %s factor (%d)", ax.Name, ax.Class, RoleName(r), l, f)
			}
		}
		if c.Factor(a, Chip) != 1 {
			return fmt.Errorf("axis %s: chip factor %d; one chip is mapped", ax.Name, c.Factor(a, Chip))
		}
		if d := c.Digits[a]; c.CanonicalOrder(a, d) != d {
			return fmt.Errorf("axis %s: digit order %#x is not canonical for its factors (%s)", ax.Name, uint32(d), c.OrderText(a))
		}
		if err := s.orderOpen(c, a); err != nil {
			return fmt.Errorf("axis %s: %w", ax.Name, err)
		}
		slice *= c.Factor(a, Slice)
		cluster *= c.Factor(a, Cluster)
		row *= c.Factor(a, Row)
		packet *= c.Factor(a, Packet)
	}
	if slice > s.slices || cluster > s.clusters {
		return fmt.Errorf("%d slices on %d clusters, the chip has %d × %d", slice, cluster, s.clusters, s.slices)
	}
	if !slices.Contains(s.rows, row) {
		return fmt.Errorf("%d rows, want one of %v", row, s.rows)
	}
	if packet != s.PacketElems(c.Mode) {
		return fmt.Errorf("packet of %d contracted elements, %s mode takes %d", packet, c.Mode, s.PacketElems(c.Mode))
	}
	// The time order: exactly the axes with more than one time step, FW
	// axes innermost when broadcast in the Stream Adapter.
	seen := map[int]bool{}
	ord := c.TimeOrder()
	inner := false
	for _, a := range ord {
		if a >= len(p.Axes) || seen[a] {
			return fmt.Errorf("time order %v repeats or names no axis", ord)
		}
		seen[a] = true
		if c.Factor(a, Time) == 1 {
			return fmt.Errorf("time order names %s, which has one time step", p.Axes[a].Name)
		}
		fw := s.Role(a, c.Stationary) == RoleFW
		if c.Bcast == BcastAlign {
			if inner && !fw {
				return fmt.Errorf("time order %v: with broadcast in the Stream Adapter the stationary operand's axes are innermost", ord)
			}
			inner = inner || fw
		}
	}
	for a := range p.Axes {
		if c.Factor(a, Time) > 1 && !seen[a] {
			return fmt.Errorf("time order misses %s", p.Axes[a].Name)
		}
	}
	seen = map[int]bool{}
	for _, a := range c.Tiles() {
		if a >= len(p.Axes) || seen[a] || c.Factor(a, Tile) == 1 {
			return fmt.Errorf("tile order %v repeats or names an untiled axis", c.Tiles())
		}
		seen[a] = true
	}
	for a := range p.Axes {
		if c.Factor(a, Tile) > 1 && !seen[a] {
			return fmt.Errorf("tile order misses %s", p.Axes[a].Name)
		}
	}
	if c.DoubleBuffer && len(seen) == 0 {
		return fmt.Errorf("double buffering without tiles")
	}
	if k := s.KTiles(c); k > 1 {
		// K chunks: innermost tile loops, within MaxKTiles, alone (TileK).
		out := false
		for _, a := range slices.Backward(c.Tiles()) {
			if p.Axes[a].Class != Contracted {
				out = true
			} else if out {
				return fmt.Errorf("tile order %v: the contracted tile loops are innermost (TileK)", c.Tiles())
			}
		}
		if k > MaxKTiles {
			return fmt.Errorf("%d K chunks, at most %d (TileK)", k, MaxKTiles)
		}
		if s.Split(c) > 1 || c.Layout[TensorOut] == LayoutCopy {
			return fmt.Errorf("K chunks with a contracted axis split across slices or a copied output (TileK)")
		}
	}
	if c.Switch {
		if r := s.Ring(c); r < 2 || r > s.Spec.Switch.MaxRingSize.Value {
			return fmt.Errorf("switch over a ring of %d slices: the stationary operand's free axes must split 2 to %d slices (002 L3364)", r, s.Spec.Switch.MaxRingSize.Value)
		}
	}
	if s.Split(c) > 1 && (c.Switch || c.Layout[TensorOut] == LayoutCopy) {
		return fmt.Errorf("a contracted axis split across slices with a switched stream or a copied output (SplitK)")
	}
	if s.ClusterSplit(c) > 1 {
		if s.Split(c) > 1 || c.Layout[TensorOut] == LayoutCopy {
			return fmt.Errorf("a contracted axis split across clusters with one split across slices or a copied output (ClusterK)")
		}
		if s.OutTime(c)%s.ClusterSplit(c) != 0 {
			return fmt.Errorf("a contracted axis split across %d clusters with %d output time steps: each cluster adds and stores a share of the outermost (ClusterK)", s.ClusterSplit(c), s.OutTime(c))
		}
	}
	return nil
}

// OutTime returns the Time steps of c's output in one tile: the product
// of the output axes' Time factors.
func (s *Space) OutTime(c *Candidate) int {
	n := 1
	for a := range s.P.Axes {
		if s.Role(a, c.Stationary) != RoleC {
			n *= c.Factor(a, Time)
		}
	}
	return n
}

// Ring returns the slices that share c's streamed operand: the Slice
// factors of the stationary operand's free axes (the ring a switched
// candidate broadcasts over, Candidate.Switch).
func (s *Space) Ring(c *Candidate) int {
	r := 1
	for a := range s.P.Axes {
		if s.Role(a, c.Stationary) == RoleFW {
			r *= c.Factor(a, Slice)
		}
	}
	return r
}

// SwitchBlock returns, for a switched candidate, how many positions of
// each axis's Time digit the ring carries, and time0, the fetch Time's
// positions inner to them. The streamed operand's fetch Time (its time
// digits in computation order, build.go xOrder) gives ring positions to
// the Slice of its DM tensor, and the Broadcast01 switch puts them back
// into Time above its innermost time0 positions (002 L3150-3157), so the
// stream keeps computation order. The block is the innermost ring
// positions above the digits of the operand's innermost HBM axis, which
// stay whole in each slice so that its DMA runs stay contiguous (a block
// cut from that axis would leave runs of one element, too short for a
// DMA packet, 002 L2425-2427, L2836-2837). When no such block exists and
// that axis has a Packet digit, the block may take its Time digit: the
// packet stays whole in each slice, so the runs are the packet's (the
// decode layer's qk, Q_g's Slice `Hkv, G, Dk / 32` over the element
// `Dk % 32`: 64-byte runs). ok is false when the block does not fall on
// whole factors of the digits, or takes a stationary operand's axis
// re-fetched in the fetch Time (a broadcast axis cannot be distributed).
func (s *Space) SwitchBlock(c *Candidate) (blk [MaxAxes]int32, time0 int, ok bool) {
	x := 1 - int(c.Stationary)
	inner := -1 // X's innermost HBM axis with more than one coordinate
	for _, a := range slices.Backward(s.hbm[x]) {
		if s.P.Axes[a].Size > 1 {
			inner = a
			break
		}
	}
	if blk, time0, ok = s.SwitchBlockAbove(c, inner); !ok && inner >= 0 && c.Factor(inner, Packet) > 1 {
		return s.SwitchBlockAbove(c, -1)
	}
	return blk, time0, ok
}

// SwitchBlockAbove is switchBlock with the block above the innermost
// digits of axis keep.
func (s *Space) SwitchBlockAbove(c *Candidate, keep int) (blk [MaxAxes]int32, time0 int, ok bool) {
	for a := range blk {
		blk[a] = 1
	}
	time0 = 1
	left := int32(s.Ring(c))
	ord := c.TimeOrder()
	skipping := true
	for i := len(ord) - 1; i >= 0 && left > 1; i-- {
		a := ord[i]
		fw := s.Role(a, c.Stationary) == RoleFW
		if fw && c.Bcast == BcastAlign {
			continue // not in the fetch Time (xOrder)
		}
		if skipping && a == keep {
			time0 *= int(c.Split[a][Time])
			continue
		}
		skipping = false
		if fw || !s.P.In[1-c.Stationary].Has(s.P.Axes[a].Name) {
			return blk, 0, false
		}
		f := c.Split[a][Time]
		switch {
		case f <= left && left%f == 0:
			blk[a], left = f, left/f
		case f > left && f%left == 0:
			blk[a], left = left, 1
		default:
			return blk, 0, false
		}
	}
	return blk, time0, left == 1
}

// RoleName names role r as messages print it.
func RoleName(r Role) string {
	return [...]string{"contracted", "batch", "streamed free", "stationary free"}[r]
}

// Enumerate calls yield with every candidate of the space in a fixed order,
// until yield returns false. The order is deterministic, with the spatial
// choices outermost so that a search stopped early has seen every kind of
// candidate at the largest parallelism first: the cluster and slice
// factors of the output axes (most slices first), then the stationary
// input, the packet's content, mode and factors, the accumulation kind,
// the row factors (most rows first), the tilings, the time orders and
// broadcast places, and the DM layouts. This runs twice: first for the
// candidates that fit untiled, then for the tilings of those that do not.
//
// Some choices are canonicalized so that no two candidates build the same
// program: the position of an axis with one time step is irrelevant (it is
// left out of Order), the broadcast place only matters when the stationary
// operand has axes in Time, and a DM layout choice only when the two
// orders differ. Tile loops are enumerated only where the untiled tensors
// do not fit (see tilings).
func (s *Space) Enumerate(yield func(Candidate) bool) {
	s.EnumerateWhere(nil, yield)
}

// Stage names a step of the enumeration: the fields of a partial candidate
// chosen so far.
type Stage uint8

// The enumeration stages, in order. At each, the fields of the earlier
// stages and its own are set.
const (
	// StageSlices: Cluster and Slice factors.
	StageSlices Stage = iota
	// StageStationary: Stationary and Switch.
	StageStationary
	// StagePacket: Content, Mode, Packet factors and Acc.
	StagePacket
	// StageRows: Row factors, and Time factors (the rest of each axis).
	StageRows
	// StageTiles: Tile factors (Time reduced by them), TileOrder,
	// DoubleBuffer.
	StageTiles
	// StageOrder: Order and Bcast.
	StageOrder
	// StageDigits: with AllOrders, each time an axis's digit order is
	// set (Candidate.Digits), the axes before it already set and those
	// after it still in the zero order; before StageOrder is shown, with
	// Order and Bcast set and the DM layouts not yet.
	StageDigits
)

// EnumerateWhere is Enumerate restricted to the branches where keeps: at
// each stage the partial candidate is passed to where, and a false prunes
// every candidate below it. A nil where keeps everything. It serves
// searches that fix part of a mapping (a tested hand-written kernel, a
// partial assignment of the SAT layer).
func (s *Space) EnumerateWhere(Where func(Stage, *Candidate) bool, yield func(Candidate) bool) {
	e := enumerator{s: s, yield: yield, Where: Where}
	var base Candidate
	base.Acc = AccInterleaved
	for a := range MaxAxes {
		base.Order[a], base.TileOrder[a] = NoAxis, NoAxis
		if a < len(s.P.Axes) {
			for l := range NumLevels {
				base.Split[a][l] = 1
			}
		}
	}
	// The axes the table opens Cluster and Slice to.
	var clustered, sliced []int
	for a := range s.P.Axes {
		if s.mayTake(a, Cluster) {
			clustered = append(clustered, a)
		}
		if s.mayTake(a, Slice) {
			sliced = append(sliced, a)
		}
	}
	// Two passes: the candidates that fit untiled, then the tilings of
	// those that do not, so that a search stopped early has seen every
	// untiled candidate (each tile repeats the program's transfers).
	for e.tiled = range 2 {
		e.clusters(base, clustered, sliced)
	}
}

// EnumerateSkeleton is EnumerateWhere(nil, yield) restricted to the
// candidates of c's skeleton: c holds the stationary input, the packet's
// content, mode and accumulation and every axis's factors up to Time (as
// the enumerator has them at StageRows, tile factors 1), and its Time and
// tile orders are empty. The candidates come in EnumerateWhere's order,
// without walking the stages above.
func (s *Space) EnumerateSkeleton(c Candidate, yield func(Candidate) bool) {
	s.EnumerateSkeletonWhere(c, nil, yield)
}

// EnumerateSkeletonWhere is EnumerateSkeleton with Where shown the stages
// below the skeleton's (StageTiles, once a tiling's factors, tile order and
// buffering are set, and StageOrder), as EnumerateWhere shows them.
func (s *Space) EnumerateSkeletonWhere(c Candidate, Where func(Stage, *Candidate) bool, yield func(Candidate) bool) {
	e := enumerator{s: s, yield: yield, Where: Where}
	for e.tiled = range 2 {
		if e.stop {
			return
		}
		e.tilings(c)
	}
}

// enumerator carries the enumeration's state.
type enumerator struct {
	s     *Space
	yield func(Candidate) bool
	Where func(Stage, *Candidate) bool
	stop  bool
	// tiled selects the pass: 0 untiled candidates, 1 tiled ones.
	tiled int
	// probe is the copy of a partial candidate Where is shown.
	probe Candidate
}

// keep reports whether the branch at stage st goes on. Where is shown a
// copy the enumerator owns: a pointer to the recursion's own candidate,
// passed to a function value, would move every one of them to the heap
// (GEMM 4096³ enumerates 194 k).
func (e *enumerator) keep(st Stage, c *Candidate) bool {
	if e.s.Library && st == StagePacket && c.Mode == Dual {
		return false
	}
	if e.stop {
		return false
	}
	if e.Where == nil {
		return true
	}
	e.probe = *c
	return e.Where(st, &e.probe)
}

func (e *enumerator) emit(c Candidate) {
	if !e.stop && !e.yield(c) {
		e.stop = true
	}
}

// clusters places the cluster factor: on no axis (one cluster, `1 # 2`,
// 002 L317) or all clusters on one output axis, or on one contracted axis
// where the space splits them across clusters (ClusterK).
func (e *enumerator) clusters(c Candidate, clustered, sliced []int) {
	e.slices(c, sliced, 0, 1)
	for _, a := range clustered {
		if e.stop {
			return
		}
		if n := e.s.clusters; n > 1 && e.s.P.Axes[a].Size%n == 0 {
			d := c
			d.Split[a][Cluster] = int32(n)
			e.slices(d, sliced, 0, 1)
		}
	}
}

// slices places slice factors on the output axes, i from outputs[i], with
// used slices so far; most slices first.
func (e *enumerator) slices(c Candidate, outputs []int, i, used int) {
	if e.stop {
		return
	}
	if i == len(outputs) {
		if e.s.ClusterSplit(&c) > 1 && e.s.Split(&c) > 1 {
			return // not both (ClusterK)
		}
		if !e.keep(StageSlices, &c) {
			return
		}
		for st := uint8(0); st < 2 && !e.stop; st++ {
			d := c
			d.Stationary = st
			for _, sw := range []bool{false, true} {
				d.Switch = sw
				if sw && (e.s.Ring(&d) < 2 || e.s.Ring(&d) > e.s.Spec.Switch.MaxRingSize.Value || e.s.Split(&d) > 1) {
					continue
				}
				if !e.s.RunsFit(&d) {
					continue // DMA-R1 rejects every candidate below (RunsFit)
				}
				if e.keep(StageStationary, &d) {
					e.packets(d)
				}
				if e.stop {
					return
				}
			}
		}
		return
	}
	a := outputs[i]
	ds := divisors(e.s.P.Axes[a].Size / c.Factor(a, Cluster))
	for k := len(ds) - 1; k >= 0 && !e.stop; k-- {
		if d := ds[k]; used*d <= e.s.slices {
			n := c
			n.Split[a][Slice] = int32(d)
			e.slices(n, outputs, i+1, used*d)
		}
	}
}

// packets chooses the packet: its content, mode, factors and the
// accumulation kind.
func (e *enumerator) packets(c Candidate) {
	s, p := e.s, e.s.P
	// The table sorts the axes: contracted-packet axes, column axes, and
	// the axes that take Rows.
	var contracted, cols, fw []int
	for a := range p.Axes {
		r := s.Role(a, c.Stationary)
		switch roleLevels[r][Packet] {
		case withContracted:
			contracted = append(contracted, a)
		case withColumns:
			cols = append(cols, a)
		}
		if roleLevels[r][Row] == always {
			fw = append(fw, a)
		}
	}
	// rest is what an axis has left for the packet.
	rest := func(a int) int {
		return p.Axes[a].Size / (c.Factor(a, Cluster) * c.Factor(a, Slice))
	}
	// A contracted packet: Single and Dual when a full 64-byte packet
	// divides the contracted axes; Half only when none does (it computes the
	// same at half the MAC width, so it never beats a full packet).
	modes := []PacketMode{Single, Dual}
	if len(packetSplits(contracted, rest, s.PacketElems(Single))) == 0 {
		modes = []PacketMode{Half}
	}
	for _, m := range modes {
		for _, ps := range packetSplits(contracted, rest, s.PacketElems(m)) {
			d := c
			d.Content, d.Mode, d.Acc = PacketContracted, m, AccInterleaved
			for i, a := range contracted {
				d.Split[a][Packet] = int32(ps[i])
			}
			if e.keep(StagePacket, &d) {
				e.rowsOf(d, fw, 0, 1)
			}
			if e.stop {
				return
			}
		}
	}
	// A packet of columns: the streamed operand's output axes in a full
	// 64-byte packet, accumulated Interleaved or Sequential; where no full
	// contracted packet exists, with contracted axes innermost too
	// (PartialReduce).
	if s.partial {
		cols = append(cols, contracted...)
	}
	for _, m := range []PacketMode{Single, Dual} {
		for _, ps := range packetSplits(cols, rest, s.PacketElems(m)) {
			for acc := AccInterleaved; acc < NumAccumulations; acc++ {
				d := c
				d.Content, d.Mode, d.Acc = PacketColumns, m, acc
				for i, a := range cols {
					d.Split[a][Packet] = int32(ps[i])
				}
				if e.keep(StagePacket, &d) {
					e.rowsOf(d, fw, 0, 1)
				}
				if e.stop {
					return
				}
			}
		}
	}
}

// packetSplits returns the ways to take n packet elements from the axes
// (each factor divides what the axis has left), in increasing
// lexicographic order.
func packetSplits(axes []int, rest func(int) int, n int) [][]int {
	var out [][]int
	var rec func(i, left int, cur []int)
	rec = func(i, left int, cur []int) {
		if i == len(axes) {
			if left == 1 {
				out = append(out, append([]int(nil), cur...))
			}
			return
		}
		for _, d := range divisors(rest(axes[i])) {
			if left%d == 0 {
				rec(i+1, left/d, append(cur, d))
			}
		}
	}
	rec(0, n, nil)
	return out
}

// rowsOf places row factors on the stationary operand's free axes, most
// rows first.
func (e *enumerator) rowsOf(c Candidate, fw []int, i, used int) {
	if e.stop {
		return
	}
	if i == len(fw) {
		if slices.Contains(e.s.rows, used) {
			e.times(c)
		}
		return
	}
	a := fw[i]
	rest := e.s.P.Axes[a].Size / (c.Factor(a, Cluster) * c.Factor(a, Slice))
	MaxRows := e.s.rows[len(e.s.rows)-1]
	ds := divisors(rest)
	for k := len(ds) - 1; k >= 0 && !e.stop; k-- {
		if d := ds[k]; used*d <= MaxRows {
			n := c
			n.Split[a][Row] = int32(d)
			e.rowsOf(n, fw, i+1, used*d)
		}
	}
}

// times sets every axis's Time factor to the rest of its size, then
// enumerates the tilings.
func (e *enumerator) times(c Candidate) {
	for a, ax := range e.s.P.Axes {
		f := 1
		for l := Level(0); l < NumLevels; l++ {
			if l != Time {
				f *= c.Factor(a, l)
			}
		}
		c.Split[a][Time] = int32(ax.Size / f)
	}
	if e.keep(StageRows, &c) {
		e.tilings(c)
	}
}

// orders enumerates the computation Time orders and broadcast places.
func (e *enumerator) orders(c Candidate) {
	s := e.s
	if n := s.ClusterSplit(&c); n > 1 && s.OutTime(&c)%n != 0 {
		return // no output time step to share out (ClusterK)
	}
	if !e.keep(StageTiles, &c) {
		return
	}
	var timed, inner []int // timed: the streamed side's axes; inner: FW axes
	for a := range s.P.Axes {
		if c.Factor(a, Time) == 1 {
			continue
		}
		if s.Role(a, c.Stationary) == RoleFW {
			inner = append(inner, a)
		} else {
			timed = append(timed, a)
		}
	}
	if c.Switch && len(inner) > 0 {
		// A fetch broadcast puts the stationary operand's free axes in
		// the streamed operand's fetch Time, the switch's input; the
		// ring's slices split those axes too, and a digit of an axis
		// the input holds cannot come out of the ring as a broadcast
		// (SW-R3, 002 L3499-3500), or the axes sit inside the ring's
		// block of the fetch Time (Space.SwitchBlock): the engines
		// refuse every such candidate (search
		// TestSwitchFetchBroadcastIllegal; docs/spec-decisions.md
		// "Switch: the broadcast in the Stream Adapter"). Only the
		// Stream Adapter repeats the packets (below).
	} else {
		all := append(append([]int(nil), timed...), inner...)
		permute(all, func(ord []int) bool {
			d := c
			d.Bcast = BcastFetch
			SetOrder(&d.Order, ord)
			e.rowOrders(d)
			return !e.stop
		})
	}
	if len(inner) == 0 || e.stop {
		return
	}
	permute(timed, func(outer []int) bool {
		permute(inner, func(in []int) bool {
			d := c
			d.Bcast = BcastAlign
			SetOrder(&d.Order, append(append([]int(nil), outer...), in...))
			e.rowOrders(d)
			return !e.stop
		})
		return !e.stop
	})
}

// SetOrder writes the axes ord into an order array (Candidate.Order or
// TileOrder), NoAxis after them.
func SetOrder(o *[MaxAxes]uint8, ord []int) {
	for i := range o {
		o[i] = NoAxis
	}
	for i, a := range ord {
		o[i] = uint8(a)
	}
}

// permute calls f with every permutation of xs in lexicographic order of
// positions (xs sorted gives lexicographic order), until f returns false.
func permute(xs []int, f func([]int) bool) {
	cur := append([]int(nil), xs...)
	sort.Ints(cur)
	for {
		if !f(append([]int(nil), cur...)) {
			return
		}
		// next permutation
		i := len(cur) - 2
		for i >= 0 && cur[i] >= cur[i+1] {
			i--
		}
		if i < 0 {
			return
		}
		j := len(cur) - 1
		for cur[j] <= cur[i] {
			j--
		}
		cur[i], cur[j] = cur[j], cur[i]
		for l, r := i+1, len(cur)-1; l < r; l, r = l+1, r-1 {
			cur[l], cur[r] = cur[r], cur[l]
		}
	}
}

// rowOrders enumerates, for each stationary free axis with Row and Time
// factors, its Row digit below and above its Time digit
// (Candidate.RowAbove), then the Slice orders; with AllOrders, every
// order of every axis's digits instead (digitOrders).
func (e *enumerator) rowOrders(c Candidate) {
	if e.s.allOrders {
		e.digitOrders(c, 0)
		return
	}
	open, n := e.openAxes(&c, (*Space).rowOrderOpen)
	for mask := 0; mask < 1<<n && !e.stop; mask++ {
		e.dealOrders(c, axisBits(open[:n], mask))
	}
}

// digitOrders enumerates the orders of axis a's digits and of the axes
// after it (Space.axisOrders), then the layouts.
func (e *enumerator) digitOrders(c Candidate, a int) {
	if a == len(e.s.P.Axes) {
		e.layouts(c)
		return
	}
	for _, d := range e.s.axisOrders(&c, a) {
		if e.stop {
			return
		}
		c.Digits[a] = d
		if e.keep(StageDigits, &c) {
			e.digitOrders(c, a+1)
		}
	}
}

// openAxes returns the axes that open says have the choice under c, and
// how many.
func (e *enumerator) openAxes(c *Candidate, open func(*Space, *Candidate, int) bool) (axes [MaxAxes]int, n int) {
	for a := range e.s.P.Axes {
		if open(e.s, c, a) {
			axes[n] = a
			n++
		}
	}
	return axes, n
}

// axisBits is the axis bit set of the axes open[i] whose bit i mask has.
func axisBits(open []int, mask int) uint8 {
	var bits uint8
	for i, a := range open {
		if mask&(1<<i) != 0 {
			bits |= 1 << uint(a)
		}
	}
	return bits
}

// dealOrders enumerates, for each output axis that has the choice
// (Space.dealOpen), its Cluster and Slice digits above and below its Time
// digit (Candidate.DealtOut), then the Cluster orders; rows holds the
// axes whose Row digits sit above their Time digits.
func (e *enumerator) dealOrders(c Candidate, rows uint8) {
	open, n := e.openAxes(&c, (*Space).dealOpen)
	for mask := 0; mask < 1<<n && !e.stop; mask++ {
		e.clusterOrders(c, rows, axisBits(open[:n], mask))
	}
}

// clusterOrders enumerates, for each axis that has the choice
// (Space.clusterOrderOpen), its Cluster digit above and below its Slice
// digit (Candidate.ClusterBelow), then the layouts; rows and dealt hold
// the axes of the other two named orders.
func (e *enumerator) clusterOrders(c Candidate, rows, dealt uint8) {
	open, n := e.openAxes(&c, (*Space).clusterOrderOpen)
	for mask := 0; mask < 1<<n && !e.stop; mask++ {
		d := c
		inner := axisBits(open[:n], mask)
		for a := range e.s.P.Axes {
			bit := uint8(1) << uint(a)
			d.SetNamedOrder(a, rows&bit != 0, dealt&bit != 0, inner&bit != 0)
		}
		e.layouts(d)
	}
}

// layouts enumerates the DM layouts of the three tensors where the two
// orders differ, then the tilings.
func (e *enumerator) layouts(c Candidate) {
	if !e.keep(StageOrder, &c) {
		return
	}
	if c.Switch {
		if _, _, ok := e.s.SwitchBlock(&c); !ok {
			return
		}
	}
	// The layouts of each tensor (at most HBM, compute and copy), asked
	// of the enumerator's copy of c (see keep).
	var choices [NumTensors][3]Layout
	var n [NumTensors]int
	e.probe = c
	for t := range NumTensors {
		choices[t][0], n[t] = LayoutHBM, 1
		if e.s.layouts == nil || e.s.layouts.LayoutsDiffer(&e.probe, t) {
			choices[t][n[t]] = LayoutCompute
			n[t]++
		}
	}
	if e.s.layouts != nil && e.s.Split(&c) == 1 && e.s.ClusterSplit(&c) == 1 && e.s.layouts.Copyable(&e.probe) {
		choices[TensorOut][n[TensorOut]] = LayoutCopy
		n[TensorOut]++
	}
	for _, l0 := range choices[0][:n[0]] {
		for _, l1 := range choices[1][:n[1]] {
			for _, l2 := range choices[2][:n[2]] {
				if e.stop {
					return
				}
				d := c
				d.Layout = [NumTensors]Layout{l0, l1, l2}
				e.emit(d)
			}
		}
	}
}

// HBMOrder returns tensor t's axes in its HBM layout's order, major first
// (TensorIn0, TensorIn1, TensorOut).
func (s *Space) HBMOrder(t int) []int { return s.hbm[t] }

// PlainLayout reports whether tensor t's HBM layout holds each of its axes
// whole, once (row-major in HBMOrder(t)): its contiguous runs are then
// known from the axes' factors.
func (s *Space) PlainLayout(t int) bool { return s.plain[t] }

// Slices and Clusters are the slices of a cluster and the clusters of the
// chip; DMNs the DMNs of a cluster (002 L2867).
func (s *Space) Slices() int { return s.slices }

// Clusters is the chip's clusters.
func (s *Space) Clusters() int { return s.clusters }

// DMNs is a cluster's DMNs (002 L2867).
func (s *Space) DMNs() int { return s.dmns }

// ElemBits is the input element size in bits.
func (s *Space) ElemBits() int { return s.ebits }

// Capped counts the skeletons that did not fit untiled and had no fitting
// tiling within MaxTiles though more tiles were possible (a planner widens
// the bound when it grew during a search that found nothing).
func (s *Space) Capped() int64 { return s.capped.Load() }

// WithMaxTiles returns a copy of s whose tiled candidates have at most n
// tiles (s keeps its own bound).
func (s *Space) WithMaxTiles(n int) *Space {
	t := *s
	t.maxTiles = n
	return &t
}

// AxisIndex returns the index of the axis named name, -1 when p has none.
func (p *Problem) AxisIndex(name string) int { return p.axis(name) }

// SkeletonOf returns the skeleton of c: its stationary input, switch,
// packet content and mode, accumulation and factors.
func SkeletonOf(c *Candidate) Skeleton {
	return Skeleton{stationary: c.Stationary, sw: c.Switch, content: c.Content, mode: c.Mode, acc: c.Acc, split: c.Split}
}

// Formula returns the encoding's SAT formula.
func (e *Encoding) Formula() *Formula { return e.p }
