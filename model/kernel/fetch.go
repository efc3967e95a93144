package kernel

import (
	"fmt"
	"strings"

	"tcpmap/model/dtype"
)

// FetchConfig is the configuration of `fetch::<D2, Time, Packet>()` (002
// L1689-2144): the Fetch Sequencer's loops over DM and the Fetch Adapter's
// stages.
type FetchConfig struct {
	// Context is the context the fetch runs in, main or sub (002 L1757-1759).
	Context Context `json:"context"`
	// InType is the element type in DM (D); OutType the type the fetch
	// produces (D2, after the adapter's cast, 002 L1724).
	InType  dtype.DType `json:"in_dtype"`
	OutType dtype.DType `json:"out_dtype"`
	// Seq is the Fetch Sequencer's configuration over DM, strides in
	// elements of InType (002 L1746-1762).
	Seq SeqConfig `json:"sequencer"`
	// Steps is the number of packets, Time::SIZE of the output stream (or
	// fewer when merging grew the hardware packet, 002 L1619).
	Steps int `json:"steps"`
	// PacketElems and PacketBytes are the output packet (Packet2::SIZE, in
	// elements, and its size in OutType, 002 L1711).
	PacketElems int `json:"packet_elems"`
	PacketBytes int `json:"packet_bytes"`
	// ContiguousRun is the sequencer's physically contiguous run in
	// elements; ContiguousBytes is contiguous_sram_access_size (002 L1762).
	ContiguousRun   int `json:"contiguous_run"`
	ContiguousBytes int `json:"contiguous_sram_access_size"`
	// FetchSize is the bytes of one DM read (002 L1757-1761);
	// FetchElems the same in elements of InType.
	FetchSize  int `json:"fetch_size"`
	FetchElems int `json:"fetch_elems"`
	// FetchesPerPacket is the number of reads that make one hardware packet,
	// ceil(Seq.PacketSize / FetchElems): the batching factor (002 L2053,
	// L2060, L2071).
	FetchesPerPacket int `json:"fetches_per_packet"`
	// Interleave is set for begin_interleaved (002 L1843-1850).
	Interleave *FetchInterleave `json:"interleave,omitempty"`
	// Adapter holds the Fetch Adapter's stages (002 L1869-2118).
	Adapter FetchAdapterConfig `json:"adapter"`
}

// FetchInterleave is the interleaving of two DM tensors with identical
// mappings in one fetch (002 L1843-1850): the stream's Axis (size Tensors)
// selects the tensor; tensor i starts Stride·i elements after tensor 0.
type FetchInterleave struct {
	Axis    string `json:"axis"`
	Tensors int    `json:"tensors"`
	Stride  int    `json:"stride"`
}

// FetchAdapterConfig is the Fetch Adapter's five stages, applied in this
// order: masking, table indexing, type casting, zero-point subtraction,
// batching (002 L1870).
type FetchAdapterConfig struct {
	// Mask forces padded elements to PadValue (002 L1877-1935); nil when
	// the stream has no padding to mask.
	Mask *MaskConfig `json:"mask,omitempty"`
	// Table is true for fetch_with_table: every value indexes a
	// pre-configured table (002 L1936-1954).
	Table bool `json:"table,omitempty"`
	// Cast is true when InType and OutType differ (002 L1960-1994).
	Cast bool `json:"cast,omitempty"`
	// ZeroPoints are subtracted after the cast: one value, or one per
	// interleaved tensor (002 L2022-2049).
	ZeroPoints []int `json:"zero_points,omitempty"`
	// FetchesPerPacket is the batching factor (002 L2050-2057).
	FetchesPerPacket int `json:"fetches_per_packet"`
}

// MaskConfig is the masking configuration of the Fetch Adapter (002
// L1898-1935), over the sequencer's entries.
type MaskConfig struct {
	// LastDim is the entry whose index selects the packets to mask: the
	// entry iterating the outer part of the padded axis (002 L1902, L1906);
	// when the padded axis lies wholly inside the packet it is the
	// innermost entry and every packet is both first and last.
	LastDim int `json:"last_dim"`
	// LeftPad elements are masked at the start of the packet when the
	// LastDim index is 0 (002 L1902).
	LeftPad int `json:"left_pad"`
	// ValidCountDim is the entry whose index selects a per-index valid
	// count (case 3, 002 L1924-1934); -1 when one count applies.
	ValidCountDim int `json:"last_dim_rightmost_valid_count_dim"`
	// ValidCounts are last_dim_rightmost_valid_count: the number of
	// elements kept from the left of the packet (the rest are masked) when
	// the LastDim index is the last (one value), or for each index of
	// ValidCountDim (case 3) (002 L1902, L1934).
	ValidCounts []int `json:"last_dim_rightmost_valid_count"`
	// Dim0 is the innermost entry's size: the elements per masked packet.
	Dim0 int `json:"dim0"`
	// PadValue is what masked elements become (002 L1906).
	PadValue int `json:"pad_value"`
}

// String prints the masking parameters as the manual lists them (002 L1906).
func (m MaskConfig) String() string {
	var b strings.Builder
	if m.ValidCountDim >= 0 {
		fmt.Fprintf(&b, "last_dim_rightmost_valid_count_dim = %d, ", m.ValidCountDim)
	}
	fmt.Fprintf(&b, "last_dim = %d, lpad = %d, last_dim_rightmost_valid_count", m.LastDim, m.LeftPad)
	if len(m.ValidCounts) == 1 {
		fmt.Fprintf(&b, "[0] = %d", m.ValidCounts[0])
	} else {
		fmt.Fprintf(&b, "[0..%d] = %v", len(m.ValidCounts), m.ValidCounts)
	}
	fmt.Fprintf(&b, ", pad_value = %d", m.PadValue)
	return b.String()
}

// String prints the sequencer in the manual's notation followed by the
// derived sizes: `[8:32, 8:256, 16:1] : 16 (fetch_size 16 B, 1 fetch per
// packet)`.
func (c FetchConfig) String() string {
	return fmt.Sprintf("%s (fetch_size %d B, %d fetches per packet)", c.Seq, c.FetchSize, c.FetchesPerPacket)
}
