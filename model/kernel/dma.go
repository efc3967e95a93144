package kernel

import (
	"fmt"
	"strconv"
	"strings"
)

// MediaKind is a memory tier a DMA descriptor reads or writes (002 L2514,
// L2525): HBM, DM or SPM.
type MediaKind string

// The DMA media (002 L2386-2387: all nine source/destination pairs).
const (
	MediaHBM MediaKind = "HBM"
	MediaDM  MediaKind = "DM"
	MediaSPM MediaKind = "SPM"
)

// Valid reports whether m is one of the three media.
func (m MediaKind) Valid() bool { return m == MediaHBM || m == MediaDM || m == MediaSPM }

// DmnIndex names one DMN: `(<ChipIndex>, <ClusterInChipIndex>,
// <SliceInClusterIndex>)` (002 L2515-2518). The third number is the DMN
// within the cluster (0..7), which the grammar calls the slice index.
type DmnIndex struct {
	Chip    int `json:"chip"`
	Cluster int `json:"cluster"`
	DMN     int `json:"dmn"`
}

// String prints (chip, cluster, dmn).
func (d DmnIndex) String() string { return fmt.Sprintf("(%d, %d, %d)", d.Chip, d.Cluster, d.DMN) }

// DMAMedia is one side of a descriptor: `"HBM"(<ChipIndex>) | "DM"(DmnIndex)
// | "SPM"(DmnIndex)` (002 L2514). For HBM only Chip is meaningful.
type DMAMedia struct {
	Kind MediaKind `json:"kind"`
	Dmn  DmnIndex  `json:"dmn"`
}

// String prints the media as the grammar does: HBM(0), DM(0, 1, 3).
func (m DMAMedia) String() string {
	if m.Kind == MediaHBM {
		return fmt.Sprintf("HBM(%d)", m.Dmn.Chip)
	}
	return string(m.Kind) + m.Dmn.String()
}

// DMAEntry is one loop of a DmaSequencer: `(<limit>, <source_stride>,
// <dest_stride>)` (002 L2511): shared loop limit, paired strides (002
// L2545). Strides are in bytes.
type DMAEntry struct {
	// Size is the shared loop limit.
	Size int `json:"size"`
	// SrcStride and DstStride are the byte distances between consecutive
	// iterations on the read and the write side.
	SrcStride int `json:"src_stride"`
	DstStride int `json:"dst_stride"`
	// Term names the stream term the entry iterates (`A%4`), as the manual
	// labels entries (002 L2629); documentation only.
	Term string `json:"term,omitempty"`
	// Index makes the entry an IndirectLoop (002 L1684-1688): on the
	// read side, iteration i moves by the index tensor's value at
	// position Index.Offset + i·Index.Step times SrcStride instead of by i
	// times it (a gather); the write side keeps its stride. With
	// Index.Write the sides swap: the write side moves by the value times
	// DstStride, the read side by i times SrcStride (a scatter).
	Index *DMAIndex `json:"index,omitempty"`
}

// DMAIndex is the offset sequence of an IndirectLoop entry: the values of
// an integer HBM tensor, the row numbers a gather reads, at positions
// Offset, Offset + Step, Offset + 2·Step, … (Step 0 is 1: every position).
// Rows bounds them: a value outside [0, Rows) names no row of the table.
// Write makes the values the rows a scatter writes, Rows the destination's.
type DMAIndex struct {
	Tensor string `json:"tensor"`
	Offset int    `json:"offset"`
	Step   int    `json:"step,omitempty"`
	Rows   int    `json:"rows"`
	Write  bool   `json:"write,omitempty"`
}

// Position is the index position iteration i of the entry reads.
func (x *DMAIndex) Position(i int) int { return x.Offset + i*max(x.Step, 1) }

// DMADescriptor is `(<DmaSequencer>, <source_media>, <dest_media>)` (002
// L2510-2512) for one DMN, one execution unit (002 L2563): the hardware runs
// the loops outermost first and each innermost iteration moves Stride0 bytes
// from SrcBase + Σ idx·SrcStride to DstBase + Σ idx·DstStride (002 L2567-2579).
type DMADescriptor struct {
	// Dmn is the DMN whose DMA Engine executes the descriptor.
	Dmn DmnIndex `json:"dmn"`
	// Exec numbers the descriptors of one DMN (segmentation, 002 L2796-2800).
	Exec int `json:"exec"`
	// Src and Dst are the source and destination media.
	Src DMAMedia `json:"src"`
	Dst DMAMedia `json:"dst"`
	// Entries are the loops, outermost first, the innermost ones covering
	// the packet (`[.., C=256:1]:256`, 002 L2629).
	Entries []DMAEntry `json:"entries"`
	// SrcBase and DstBase are byte addresses: the HBM address for HBM, the
	// cluster's DM (or SPM) virtual address slice·slice_stride + byte for DM
	// (002 L2541).
	SrcBase int `json:"src_base"`
	DstBase int `json:"dst_base"`
	// Stride0 is the packet size in bytes, 1..4096 (002 L2512).
	Stride0 int `json:"stride0"`
	// ElemBits is the width of one loop position: the element's, except for
	// sub-byte types, whose contiguous run is one loop over its bytes (8).
	ElemBits int `json:"elem_bits"`
	// Bytes is the volume the descriptor moves.
	Bytes int `json:"bytes"`
	// Packets is Bytes / Stride0: the innermost hardware iterations.
	Packets int `json:"packets"`
	// RequestsPerPacket is ceil(Stride0 / 256) (002 L2469).
	RequestsPerPacket int `json:"requests_per_packet"`
	// Requests is Packets · RequestsPerPacket, the 256-byte DMA requests the
	// descriptor issues on each side (002 L2647, L2672).
	Requests int `json:"requests"`
}

// DMACommand is a derived DMA command: one or more descriptors per DMN
// (`HashMap(<DmnIndex>, <DmaDescriptor>)`, 002 L2509), in DMN order.
type DMACommand struct {
	// Descriptors, sorted by DMN then Exec.
	Descriptors []DMADescriptor `json:"descriptors"`
	// Homogeneous reports that every DMN runs one descriptor with the same
	// loops and strides, only the bases differing (002 L2473-2491); otherwise
	// the command is heterogeneous (002 L2492-2504).
	Homogeneous bool `json:"homogeneous"`
	// SliceStride is the DM virtual address distance between slices (4 MB,
	// 002 L2541) and DMNStride between DMNs (32 slices); String prints DM
	// strides with them.
	SliceStride int `json:"slice_stride"`
	DMNStride   int `json:"dmn_stride"`
}

// Size is the number of loop positions (elements, or bytes for a
// sub-byte type's run): the product of the entry sizes; 1 with no entries,
// 0 if a size is not positive.
func (d DMADescriptor) Size() int {
	n := 1
	for _, e := range d.Entries {
		if e.Size <= 0 {
			return 0
		}
		n *= e.Size
	}
	return n
}

// String prints the descriptor in the grammar's form (002 L2510-2512):
// `DMN(0, 0, 0) #0: [A=256:(65536, 256), ...], base=(0, 16777216),
// stride0=256, HBM(0) -> HBM(0)`.
func (d DMADescriptor) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "DMN%s #%d: [", d.Dmn, d.Exec)
	for i, e := range d.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		if e.Term != "" {
			b.WriteString(e.Term)
			b.WriteByte('=')
		}
		fmt.Fprintf(&b, "%d:(%d, %d)", e.Size, e.SrcStride, e.DstStride)
	}
	fmt.Fprintf(&b, "], base=(%d, %d), stride0=%d, %s -> %s", d.SrcBase, d.DstBase, d.Stride0, d.Src, d.Dst)
	return b.String()
}

// Side prints one side's sequencer in the manual's per-side notation
// `[A=8:2048, B=8:256, C=256:1]:256 HBM@0` (002 L2629-2630): read side for
// src, write side otherwise. DM strides that are multiples of the slice or
// DMN stride print symbolically (`slice_stride`, `DMN_stride`, 002 L2646),
// and a DM base prints as (dmn, slice, byte).
func (c DMACommand) Side(d DMADescriptor, src bool) string {
	m, base := d.Dst, d.DstBase
	if src {
		m, base = d.Src, d.SrcBase
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range d.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		if e.Term != "" {
			b.WriteString(e.Term)
			b.WriteByte('=')
		}
		s := e.DstStride
		if src {
			s = e.SrcStride
		}
		b.WriteString(strconv.Itoa(e.Size))
		b.WriteByte(':')
		b.WriteString(c.stride(m.Kind, s))
	}
	fmt.Fprintf(&b, "]:%d %s@%s", d.Stride0, m.Kind, c.addr(m.Kind, base))
	return b.String()
}

func (c DMACommand) stride(k MediaKind, s int) string {
	if k != MediaDM || s == 0 {
		return strconv.Itoa(s)
	}
	if c.DMNStride > 0 && s%c.DMNStride == 0 {
		if s == c.DMNStride {
			return "DMN_stride"
		}
		return strconv.Itoa(s/c.DMNStride) + "*DMN_stride"
	}
	if c.SliceStride > 0 && s%c.SliceStride == 0 {
		if s == c.SliceStride {
			return "slice_stride"
		}
		return strconv.Itoa(s/c.SliceStride) + "*slice_stride"
	}
	return strconv.Itoa(s)
}

func (c DMACommand) addr(k MediaKind, a int) string {
	if k != MediaDM || c.SliceStride <= 0 || c.DMNStride <= 0 {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("(%d, %d, %d)", a/c.DMNStride, a%c.DMNStride/c.SliceStride, a%c.SliceStride)
}

// String prints every descriptor, one per line, each followed by its read
// and write sides in the manual's notation.
func (c DMACommand) String() string {
	var b strings.Builder
	form := "heterogeneous"
	if c.Homogeneous {
		form = "homogeneous"
	}
	fmt.Fprintf(&b, "DMA command (%s, %d descriptors)\n", form, len(c.Descriptors))
	for _, d := range c.Descriptors {
		b.WriteString(d.String())
		b.WriteString("\n  read:  ")
		b.WriteString(c.Side(d, true))
		b.WriteString("\n  write: ")
		b.WriteString(c.Side(d, false))
		fmt.Fprintf(&b, "\n  %d bytes, %d packets, %d requests\n", d.Bytes, d.Packets, d.Requests)
	}
	return b.String()
}

// ScatterRows is the destination's row count of a scatter op (Op.Scatter):
// its indirect entries' (engines.DeriveScatter gives them all one); 0 for
// another op or one not yet lowered.
func (op *Op) ScatterRows() int {
	if !op.Scatter || op.DMA == nil {
		return 0
	}
	for _, d := range op.DMA.Descriptors {
		for _, e := range d.Entries {
			if e.Index != nil && e.Index.Write {
				return e.Index.Rows
			}
		}
	}
	return 0
}
